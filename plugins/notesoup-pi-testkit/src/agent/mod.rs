//! The reference host's agent loop: Pi 1.6.0's event order and boundary
//! rules around one extension.
//!
//! A run: `before_agent_start`, the starting messages, then turns. A turn:
//! `turn_start`, steering delivered, `context` and `context_with_system`, the
//! provider request, the assistant message, the tool batch (`tool_result`
//! per result), then `turn_end` through the boundary emitter (drafts saved
//! even for failed turns; `continue` honoured only for completed ones and
//! only with a runnable context). Tool calls, steering, follow-ups and a
//! `continue` each cause one more turn. After the loop: overflow handling
//! (`context_edit` omissions, `session_before_compact`), then
//! `agent_before_settle` (skipped after an actual abort), then
//! `agent_settled`.
//!
//! - `run`: the run loop (runs, turns, `agent.continue()`).
//! - `request`: the provider request and the assistant message.
//! - `tools`: host tools and the tool batch.
//! - `boundary`: `turn_end`, `agent_before_settle`, previews, compaction hooks.
//! - `navigation`: `/tree` navigation.

mod boundary;
mod navigation;
mod request;
mod run;
mod tools;

pub use tools::{HostTool, HostToolFn};

use super::clock::{Clock, IdSource};
use super::host::{HostEvent, HostState};
use super::model::ScriptedModel;
use super::session::SessionManager;
use notesoup_pi::bridge::{ON_DEMAND_EVENTS, usage_omitted};
use notesoup_pi::host::{
    BoundaryOutcome, HostError, PiExtension, SessionStartEvent, SessionStartReason,
};
use notesoup_pi::session::SessionError;

/// What started a run.
enum Trigger {
    User(String),
    Custom(notesoup_pi::session::CustomMessage),
}

/// The reference host: session, model, loop and one extension.
#[derive(Debug)]
pub struct Harness<E: PiExtension> {
    /// The host side (session, queues, notices, log).
    pub host: HostState,
    /// The extension under test.
    pub extension: E,
    /// The scripted model.
    pub model: ScriptedModel,
    /// The system prompt of every run.
    pub system_prompt: String,
    host_tools: Vec<HostTool>,
    turn_index: u64,
    last_outcome: BoundaryOutcome,
    tool_call_counter: u64,
}

impl<E: PiExtension> Harness<E> {
    /// A harness; the model's identity becomes the host's model.
    pub fn new(mut host: HostState, extension: E, model: ScriptedModel) -> Self {
        host.model = Some(model.info.clone());
        Self {
            host,
            extension,
            model,
            system_prompt: "You are a coding agent running in the notesoup reference host."
                .to_owned(),
            host_tools: Vec::new(),
            turn_index: 0,
            last_outcome: BoundaryOutcome::Completed,
            tool_call_counter: 0,
        }
    }

    /// Adds a host tool.
    pub fn with_tool(mut self, tool: HostTool) -> Self {
        self.host_tools.push(tool);
        self
    }

    /// `session_start` with a reason.
    pub fn start(&mut self, reason: SessionStartReason) {
        self.host.log.push(HostEvent::SessionStart);
        let event = SessionStartEvent {
            reason: Some(reason),
            previous_session_file: None,
        };
        self.without_usage("session_start", |extension, host| {
            extension.session_start(host, &event);
        });
    }

    /// Runs the handler of `event`, one whose state notesoup's sidecar
    /// leaves Pi's context usage out of (`bridge::usage_omitted`): the
    /// handler must not read it. An event of `bridge::ON_DEMAND_EVENTS`
    /// that the extension does not need now never reaches it in Pi (the
    /// shim holds no handler for it), so there the handler must change
    /// nothing: no notice, no entry, no message held, and the same events
    /// needed after it.
    pub(crate) fn without_usage<R>(
        &mut self,
        event: &str,
        run: impl FnOnce(&mut E, &mut HostState) -> R,
    ) -> R {
        assert!(
            usage_omitted(event),
            "{event} is not an event whose state leaves the usage out"
        );
        let undelivered = ON_DEMAND_EVENTS.contains(&event) && !self.extension.needs(event);
        let seen = |harness: &Self| {
            (
                harness.host.notices.len(),
                harness.host.session.entries().len(),
                harness.host.held.len(),
                ON_DEMAND_EVENTS
                    .iter()
                    .map(|event| harness.extension.needs(event))
                    .collect::<Vec<_>>(),
            )
        };
        let unseen = undelivered.then(|| seen(self));
        let before = self.host.usage_reads.get();
        let result = run(&mut self.extension, &mut self.host);
        assert_eq!(
            self.host.usage_reads.get(),
            before,
            "the {event} handler read the context usage, which its state leaves out"
        );
        if let Some(unseen) = unseen {
            assert_eq!(
                seen(self),
                unseen,
                "the {event} handler changed what a host sees, though the extension did not need the event"
            );
        }
        result
    }

    /// Reloads the session from its file, as a restarted Pi resumes it, and
    /// starts it. Queues and transient host state are gone.
    pub fn reopen(&mut self, clock: Clock, ids: IdSource) -> Result<(), SessionError> {
        let Some(path) = self.host.session.file().map(std::path::Path::to_owned) else {
            return Ok(());
        };
        self.host.session = SessionManager::open(&path, clock, ids)?;
        self.host.steering.clear();
        self.host.follow_up.clear();
        self.host.held.clear();
        self.host.triggered = None;
        self.start(SessionStartReason::Resume);
        Ok(())
    }

    /// A user prompt while idle: one run.
    pub fn prompt(&mut self, text: &str) {
        self.run(Trigger::User(text.to_owned()));
    }

    /// A slash command (`/name args`); a run it triggers starts afterwards.
    pub fn command(&mut self, line: &str) -> Result<(), HostError> {
        self.run_command_line(line)?;
        if !self.host.streaming
            && let Some(custom) = self.host.triggered.take()
        {
            self.run(Trigger::Custom(custom));
        }
        Ok(())
    }

    fn run_command_line(&mut self, line: &str) -> Result<(), HostError> {
        let text = line.strip_prefix('/').unwrap_or(line);
        let (name, args) = text.split_once(' ').unwrap_or((text, ""));
        if !self.extension.commands().iter().any(|c| c.name == name) {
            return Err(HostError::Rejected {
                message: format!("unknown command /{name}"),
            });
        }
        self.extension.run_command(&mut self.host, name, args)
    }
}
