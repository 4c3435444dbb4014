//! `BridgeHost`: a [`PiHost`] that mirrors the session the shim reports and
//! relays every action to the shim as a nested request.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::BridgeError;
use super::protocol::{
    AbortArgs, Action, ActionRequest, AppendEntryArgs, NotifyArgs, SendMessageArgs, SessionState,
    ShimMessage, SidecarMessage,
};
use crate::host::{
    CompactionSettings, ContextUsage, CustomMessageDraft, HostError, HostSettings, ModelInfo,
    NotifyLevel, PiApiLevel, PiHost, SendOptions,
};
use crate::session::{Entry, SessionHeader};

/// The two ends of the shim's pipe.
pub(crate) struct Channel<'io> {
    reader: &'io mut dyn BufRead,
    writer: &'io mut dyn Write,
    line: String,
}

impl std::fmt::Debug for Channel<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Channel").finish_non_exhaustive()
    }
}

impl<'io> Channel<'io> {
    pub(crate) fn new(reader: &'io mut dyn BufRead, writer: &'io mut dyn Write) -> Self {
        Self {
            reader,
            writer,
            line: String::new(),
        }
    }

    /// Writes one line and flushes it: the shim waits for it.
    pub(crate) fn send(&mut self, message: &SidecarMessage) -> Result<(), BridgeError> {
        let mut text = serde_json::to_string(message).map_err(BridgeError::Encode)?;
        text.push('\n');
        self.writer
            .write_all(text.as_bytes())
            .and_then(|()| self.writer.flush())
            .map_err(BridgeError::Io)
    }

    /// The next message; `None` when the shim closed the pipe. Blank lines
    /// are skipped.
    pub(crate) fn receive(&mut self) -> Result<Option<ShimMessage>, BridgeError> {
        loop {
            self.line.clear();
            if self
                .reader
                .read_line(&mut self.line)
                .map_err(BridgeError::Io)?
                == 0
            {
                return Ok(None);
            }
            let line = self.line.trim();
            if line.is_empty() {
                continue;
            }
            return serde_json::from_str(line)
                .map(Some)
                .map_err(|error| BridgeError::Decode(error.to_string()));
        }
    }
}

/// The session as the shim last reported it, and the way back to the shim.
#[derive(Debug)]
pub struct BridgeHost<'io> {
    channel: Channel<'io>,
    api_level: PiApiLevel,
    pi_version: String,
    session_id: String,
    header: Option<SessionHeader>,
    entries: Vec<Entry>,
    leaf_id: Option<String>,
    cwd: PathBuf,
    session_file: Option<PathBuf>,
    idle: bool,
    pending_messages: bool,
    signal_aborted: bool,
    context_usage: Option<ContextUsage>,
    model: Option<ModelInfo>,
    settings: Result<HostSettings, String>,
    project_trusted: bool,
    next_action: u32,
    /// Set when the pipe broke during an action: the serve loop stops.
    broken: Option<String>,
}

impl<'io> BridgeHost<'io> {
    pub(crate) fn new(channel: Channel<'io>, api_level: PiApiLevel, pi_version: String) -> Self {
        Self {
            channel,
            api_level,
            pi_version,
            session_id: String::new(),
            header: None,
            entries: Vec::new(),
            leaf_id: None,
            cwd: PathBuf::new(),
            session_file: None,
            idle: true,
            pending_messages: false,
            signal_aborted: false,
            context_usage: None,
            model: None,
            settings: Ok(HostSettings::default()),
            project_trusted: false,
            next_action: 0,
            broken: None,
        }
    }

    pub(crate) fn channel(&mut self) -> &mut Channel<'io> {
        &mut self.channel
    }

    pub(crate) fn broken(&self) -> Option<&str> {
        self.broken.as_deref()
    }

    /// Updates the mirror from the shim's report. Entries are appended from
    /// `entriesFrom`; a new session id or `entriesFrom: 0` starts over.
    pub(crate) fn apply_state(&mut self, state: SessionState) -> Result<(), BridgeError> {
        let from = state.entries_from as usize;
        if state.session_id != self.session_id || from == 0 {
            self.entries.clear();
        }
        if from > self.entries.len() {
            return Err(BridgeError::Decode(format!(
                "the shim sent entries from {from} but the mirror holds {}",
                self.entries.len()
            )));
        }
        self.entries.truncate(from);
        for value in state.entries {
            let entry: Entry = serde_json::from_value(value)
                .map_err(|error| BridgeError::Decode(format!("an entry: {error}")))?;
            self.entries.push(entry);
        }
        self.session_id = state.session_id;
        self.header = serde_json::from_value(state.header).ok();
        self.leaf_id = state.leaf_id;
        self.cwd = PathBuf::from(state.cwd);
        self.session_file = state.session_file.map(PathBuf::from);
        self.idle = state.idle;
        self.pending_messages = state.pending_messages;
        self.signal_aborted = state.signal_aborted;
        self.context_usage = state
            .context_usage
            .and_then(|value| serde_json::from_value(value).ok());
        self.model = state
            .model
            .and_then(|value| serde_json::from_value(value).ok());
        self.settings = match state.settings.error {
            Some(error) => Err(error),
            None => Ok(HostSettings {
                global: state.settings.global,
                project: state.settings.project,
                compaction: state
                    .settings
                    .compaction
                    .and_then(|value| serde_json::from_value::<CompactionSettings>(value).ok())
                    .unwrap_or_default(),
            }),
        };
        self.project_trusted = state.project_trusted;
        Ok(())
    }

    /// Sends `action` and waits for its answer, whose state replaces the
    /// mirror. Nothing else may arrive in between: the shim answers an action
    /// before it does anything else for this handler.
    fn perform(&mut self, action: Action) -> Result<(), HostError> {
        if let Some(why) = &self.broken {
            return Err(HostError::Rejected {
                message: why.clone(),
            });
        }
        self.next_action = self.next_action.wrapping_add(1);
        let id = self.next_action;
        match self.round_trip(id, action) {
            Ok(None) => Ok(()),
            Ok(Some(error)) => Err(HostError::Rejected { message: error }),
            Err(error) => {
                let message = error.to_string();
                self.broken = Some(message.clone());
                Err(HostError::Rejected { message })
            }
        }
    }

    fn round_trip(&mut self, id: u32, action: Action) -> Result<Option<String>, BridgeError> {
        self.channel
            .send(&SidecarMessage::Action(ActionRequest { id, action }))?;
        match self.channel.receive()? {
            Some(ShimMessage::ActionResult(result)) if result.id == id => {
                self.apply_state(result.state)?;
                Ok(result.error)
            }
            Some(other) => Err(BridgeError::Decode(format!(
                "expected actionResult {id}, got {other:?}"
            ))),
            None => Err(BridgeError::Closed),
        }
    }
}

fn to_value<T: serde::Serialize>(value: &T) -> Result<Value, HostError> {
    serde_json::to_value(value).map_err(|error| HostError::Rejected {
        message: error.to_string(),
    })
}

impl PiHost for BridgeHost<'_> {
    fn api_level(&self) -> PiApiLevel {
        self.api_level
    }

    fn pi_version(&self) -> &str {
        &self.pi_version
    }

    fn append_entry(
        &mut self,
        custom_type: &str,
        data: Option<Value>,
    ) -> Result<String, HostError> {
        self.perform(Action::AppendEntry(AppendEntryArgs {
            custom_type: custom_type.to_owned(),
            data,
        }))?;
        // Pi's appendEntry returns nothing; the new entry becomes the leaf.
        self.leaf_id.clone().ok_or_else(|| HostError::Rejected {
            message: "appendEntry left no leaf".to_owned(),
        })
    }

    fn send_message(
        &mut self,
        message: CustomMessageDraft,
        options: SendOptions,
    ) -> Result<(), HostError> {
        let message = to_value(&message)?;
        let options = to_value(&options)?;
        self.perform(Action::SendMessage(SendMessageArgs { message, options }))
    }

    fn notify(&mut self, message: &str, level: NotifyLevel) {
        let level = match level {
            NotifyLevel::Info => "info",
            NotifyLevel::Warning => "warning",
            NotifyLevel::Error => "error",
        };
        // A notice that cannot be shown is lost with the pipe; the serve loop
        // reports the broken pipe itself.
        let _ = self.perform(Action::Notify(NotifyArgs {
            message: message.to_owned(),
            level: level.to_owned(),
        }));
    }

    fn abort(&mut self) {
        let _ = self.perform(Action::Abort(AbortArgs {}));
    }

    fn is_idle(&self) -> bool {
        self.idle
    }

    fn signal_aborted(&self) -> bool {
        self.signal_aborted
    }

    fn has_pending_messages(&self) -> bool {
        self.pending_messages
    }

    fn context_usage(&self) -> Option<ContextUsage> {
        self.context_usage
    }

    fn model(&self) -> Option<ModelInfo> {
        self.model.clone()
    }

    fn settings(&self) -> Result<HostSettings, HostError> {
        self.settings
            .clone()
            .map_err(|message| HostError::Rejected { message })
    }

    fn is_project_trusted(&self) -> bool {
        self.project_trusted
    }

    fn session_id(&self) -> &str {
        &self.session_id
    }

    fn header(&self) -> Option<&SessionHeader> {
        self.header.as_ref()
    }

    fn cwd(&self) -> &Path {
        &self.cwd
    }

    fn session_file(&self) -> Option<&Path> {
        self.session_file.as_deref()
    }

    fn entries(&self) -> &[Entry] {
        &self.entries
    }

    fn leaf_id(&self) -> Option<&str> {
        self.leaf_id.as_deref()
    }
}
