//! The reference host's side of the boundary: what an extension may ask of
//! it (`PiHost`), its queues, notices and event log.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::session::SessionManager;
use notesoup_pi::estimate::calculate_context_tokens;
use notesoup_pi::estimate::coding_agent::estimate_projected_context_tokens;
use notesoup_pi::host::{
    ContextUsage, CustomMessageDraft, DeliverAs, HeldEntries, HostError, HostSettings, ModelInfo,
    NotifyLevel, PiApiLevel, PiHost, SendOptions,
};
use notesoup_pi::projection::Projection;
use notesoup_pi::session::{AgentMessage, CustomMessage, Entry, Extra, SessionHeader, StopReason};

/// A notice shown through `ctx.ui.notify`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    /// The text.
    pub text: String,
    /// Its level.
    pub level: NotifyLevel,
}

/// What happened in the host, in order: what tests assert and the demo
/// narrates.
#[derive(Debug, Clone, PartialEq)]
pub enum HostEvent {
    /// `session_start`.
    SessionStart,
    /// A run began, started by a prompt or a triggering custom message.
    RunStart {
        /// `user` or the custom type.
        by: String,
    },
    /// `turn_start`.
    TurnStart {
        /// The turn index within the run.
        index: u64,
    },
    /// A provider request; its messages are `requests[index]`.
    Request {
        /// Index into [`HostState::requests`].
        index: usize,
        /// The session leaf when it was made.
        leaf: Option<String>,
    },
    /// An entry was appended to the session.
    Entry {
        /// The entry id.
        id: String,
        /// `message:<role>`, `custom:<type>`, `custom_message:<type>`,
        /// `compaction`, `context_edit`, …
        kind: String,
    },
    /// `turn_end` returned.
    TurnEnd {
        /// How the turn ended.
        outcome: String,
        /// The drafts saved.
        drafts: usize,
        /// Whether one more request was asked for.
        continued: bool,
    },
    /// `agent_before_settle` returned.
    BeforeSettle {
        /// The drafts saved.
        drafts: usize,
        /// Whether the run continues.
        continued: bool,
    },
    /// `agent_settled`.
    Settled {
        /// The run ended through an actual abort.
        aborted: bool,
    },
    /// A notice.
    Notice(Notice),
    /// `session_before_compact` and what became of it.
    Compaction {
        /// `manual`, `threshold` or `overflow`.
        reason: String,
        /// The extension cancelled it.
        cancelled: bool,
    },
    /// An error Pi would report as `extension_error`.
    ExtensionError {
        /// The event.
        event: String,
        /// The error.
        error: String,
    },
}

/// One provider request as the model received it.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderRequest {
    /// The messages after `convertToLlm`.
    pub messages: Vec<AgentMessage>,
    /// An extension aborted the request before it was sent.
    pub cancelled: bool,
}

/// The reference host's state behind `PiHost`.
#[derive(Debug)]
pub struct HostState {
    /// The session.
    pub session: SessionManager,
    /// The current model; `None` for a host without one.
    pub model: Option<ModelInfo>,
    /// What `settings()` answers; `Err` simulates unreadable settings.
    pub settings: Result<HostSettings, String>,
    /// `ctx.isProjectTrusted()`.
    pub trusted: bool,
    /// The API generation.
    pub api_level: PiApiLevel,
    /// Pi's `VERSION`.
    pub pi_version: String,
    /// The working directory.
    pub cwd: PathBuf,
    /// Every notice, in order.
    pub notices: Vec<Notice>,
    /// Every event, in order.
    pub log: Vec<HostEvent>,
    /// Every provider request, in order.
    pub requests: Vec<ProviderRequest>,
    pub(crate) steering: VecDeque<AgentMessage>,
    pub(crate) follow_up: VecDeque<AgentMessage>,
    pub(crate) next_turn: Vec<AgentMessage>,
    /// Custom messages sent with `triggerTurn: false` while streaming.
    pub(crate) held: Vec<CustomMessage>,
    /// A custom message sent with `triggerTurn: true` while idle.
    pub(crate) triggered: Option<CustomMessage>,
    pub(crate) streaming: bool,
    pub(crate) abort_requested: bool,
    /// How many times the extension read `ctx.getContextUsage()`.
    pub(crate) usage_reads: std::cell::Cell<usize>,
}

impl HostState {
    /// A host over `session` with Pi 1.6.0's API, default settings and a
    /// trusted project.
    pub fn new(session: SessionManager, model: Option<ModelInfo>, cwd: &Path) -> Self {
        Self {
            session,
            model,
            settings: Ok(HostSettings::default()),
            trusted: true,
            api_level: PiApiLevel::V0_87,
            pi_version: "1.6.0".to_owned(),
            cwd: cwd.to_owned(),
            notices: Vec::new(),
            log: Vec::new(),
            requests: Vec::new(),
            steering: VecDeque::new(),
            follow_up: VecDeque::new(),
            next_turn: Vec::new(),
            held: Vec::new(),
            triggered: None,
            streaming: false,
            abort_requested: false,
            usage_reads: std::cell::Cell::new(0),
        }
    }

    pub(crate) fn custom_message(&mut self, draft: CustomMessageDraft) -> CustomMessage {
        CustomMessage {
            custom_type: draft.custom_type,
            content: draft.content,
            display: draft.display,
            details: draft.details,
            timestamp: self.session.now_ms(),
            extra: Extra::new(),
        }
    }

    /// Appends an entry built by `append` and logs it.
    pub(crate) fn record(&mut self, id: Result<String, notesoup_pi::session::SessionError>) {
        match id {
            Ok(id) => {
                let kind = self
                    .session
                    .entries()
                    .iter()
                    .rev()
                    .find(|entry| entry.id() == id)
                    .map(entry_kind)
                    .unwrap_or_default();
                self.log.push(HostEvent::Entry { id, kind });
            }
            Err(error) => self.log.push(HostEvent::ExtensionError {
                event: "session".to_owned(),
                error: error.to_string(),
            }),
        }
    }

    /// Persists a message the loop produced (`message_end`).
    pub(crate) fn append_message(&mut self, message: AgentMessage) {
        let id = match message {
            AgentMessage::Custom(custom) => self.session.append_custom_message(
                &custom.custom_type,
                custom.content,
                custom.display,
                custom.details,
            ),
            other => self.session.append_message(other),
        };
        self.record(id);
    }

    /// Whether user prompts are queued (Pi counts only those).
    pub(crate) fn has_queued(&self) -> bool {
        !self.steering.is_empty() || !self.follow_up.is_empty()
    }
}

/// A short label of an entry for logs: `message:user`, `custom:<type>`, …
pub fn entry_kind(entry: &Entry) -> String {
    match entry {
        Entry::Message(message) => format!("message:{}", message.message.role()),
        Entry::Custom(custom) => format!("custom:{}", custom.custom_type),
        Entry::CustomMessage(custom) => format!("custom_message:{}", custom.custom_type),
        other => other.entry_type().to_owned(),
    }
}

impl PiHost for HostState {
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
        let id = self.session.append_custom(custom_type, data)?;
        self.record(Ok(id.clone()));
        Ok(id)
    }

    /// Pi 1.6.0's `sendMessage`: while streaming, `followUp` queues a
    /// follow-up, `triggerTurn: false` holds the message until the turn
    /// ends, anything else steers; while idle, `triggerTurn` starts a run
    /// and otherwise the message is appended at once; `nextTurn` waits for
    /// the next prompt.
    fn send_message(
        &mut self,
        message: CustomMessageDraft,
        options: SendOptions,
    ) -> Result<(), HostError> {
        let custom = self.custom_message(message);
        if options.deliver_as == Some(DeliverAs::NextTurn) {
            self.next_turn.push(AgentMessage::Custom(custom));
            return Ok(());
        }
        if self.streaming {
            if options.deliver_as == Some(DeliverAs::FollowUp) {
                self.follow_up.push_back(AgentMessage::Custom(custom));
            } else if !options.trigger_turn {
                self.held.push(custom);
            } else {
                self.steering.push_back(AgentMessage::Custom(custom));
            }
            return Ok(());
        }
        if options.trigger_turn {
            if self.triggered.is_some() {
                return Err(HostError::Rejected {
                    message: "a triggered run is already waiting to start".to_owned(),
                });
            }
            self.triggered = Some(custom);
        } else {
            self.append_message(AgentMessage::Custom(custom));
        }
        Ok(())
    }

    fn notify(&mut self, message: &str, level: NotifyLevel) {
        let notice = Notice {
            text: message.to_owned(),
            level,
        };
        self.notices.push(notice.clone());
        self.log.push(HostEvent::Notice(notice));
    }

    fn abort(&mut self) {
        if self.streaming {
            self.abort_requested = true;
        }
    }

    fn is_idle(&self) -> bool {
        !self.streaming
    }

    fn signal_aborted(&self) -> bool {
        self.abort_requested
    }

    fn has_pending_messages(&self) -> bool {
        self.steering
            .iter()
            .chain(&self.follow_up)
            .any(|message| matches!(message, AgentMessage::User(_)))
    }

    /// Pi 1.6.0's `getContextUsage()`.
    fn context_usage(&self) -> Option<ContextUsage> {
        self.usage_reads.set(self.usage_reads.get() + 1);
        let context_window = self.model.as_ref()?.context_window;
        if context_window == 0 {
            return None;
        }
        let branch = self.session.branch();
        let projection = self.session.projection();
        if let Some(compaction) = branch
            .iter()
            .rposition(|entry| matches!(entry, Entry::Compaction(_)))
        {
            let projected: std::collections::HashSet<&str> =
                projection.entries.iter().map(|e| e.source.id()).collect();
            let trusted_after = branch[compaction + 1..].iter().any(|entry| {
                projected.contains(entry.id())
                    && matches!(entry.message(), Some(AgentMessage::Assistant(a))
                        if !matches!(a.stop_reason, StopReason::Aborted | StopReason::Error)
                            && calculate_context_tokens(&a.usage) > 0)
            });
            if !trusted_after {
                return Some(ContextUsage {
                    tokens: None,
                    context_window,
                    percent: None,
                });
            }
        }
        let tokens = estimate_projected_context_tokens(&projection, &branch).tokens;
        // Token counts are far below 2^53.
        #[allow(clippy::cast_precision_loss)]
        let percent = tokens as f64 / context_window as f64 * 100.0;
        Some(ContextUsage {
            tokens: Some(tokens),
            context_window,
            percent: Some(percent),
        })
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
        self.trusted
    }

    fn session_id(&self) -> &str {
        self.session.session_id()
    }

    fn header(&self) -> Option<&SessionHeader> {
        Some(self.session.header())
    }

    fn cwd(&self) -> &Path {
        &self.cwd
    }

    fn session_file(&self) -> Option<&Path> {
        self.session.file()
    }

    fn entries(&self) -> Vec<&Entry> {
        self.held().all()
    }

    fn leaf_id(&self) -> Option<&str> {
        self.session.leaf_id()
    }

    fn entry(&self, id: &str) -> Option<&Entry> {
        self.held().entry(id)
    }

    fn branch(&self, from: Option<&str>) -> Vec<&Entry> {
        self.held().branch(from)
    }

    fn build_projection(&self) -> Projection<'_> {
        self.held().projection()
    }
}

impl HostState {
    /// The session's entries and leaf, for the session accessors.
    fn held(&self) -> HeldEntries<'_> {
        HeldEntries {
            entries: self.session.entries(),
            leaf: self.session.leaf_id(),
        }
    }
}
