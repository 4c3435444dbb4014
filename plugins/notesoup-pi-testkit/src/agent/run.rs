//! The run loop: a run (`before_agent_start`, the starting messages, the
//! turns of `agent_loop`, post-run handling, `agent_before_settle`,
//! `agent_settled`), `agent.continue()`, and one turn's start.

use crate::host::HostEvent;
use notesoup_pi::host::{
    AgentSettledEvent, AgentStartInput, BeforeAgentStartEvent, BoundaryOutcome, PiExtension,
    TurnStartEvent,
};
use notesoup_pi::session::{AgentMessage, Content, ContentBlock, Extra, StopReason, UserMessage};

use super::{Harness, Trigger};

impl<E: PiExtension> Harness<E> {
    pub(super) fn run(&mut self, trigger: Trigger) {
        self.host.streaming = true;
        self.host.abort_requested = false;
        self.turn_index = 0;
        let (by, start, input) = match trigger {
            Trigger::User(text) => {
                let message = AgentMessage::User(UserMessage {
                    content: Content::Blocks(vec![ContentBlock::text(text.clone())]),
                    timestamp: self.host.session.now_ms(),
                    extra: Extra::new(),
                });
                (
                    "user".to_owned(),
                    message,
                    AgentStartInput::User {
                        prompt: text,
                        images: None,
                    },
                )
            }
            Trigger::Custom(custom) => (
                custom.custom_type.clone(),
                AgentMessage::Custom(custom.clone()),
                AgentStartInput::Custom { message: custom },
            ),
        };
        self.host.log.push(HostEvent::RunStart { by });
        let result = self.extension.before_agent_start(
            &mut self.host,
            &BeforeAgentStartEvent {
                system_prompt: self.system_prompt.clone(),
                input,
            },
        );
        // Messages held while the run was starting go before its start.
        self.flush_held();
        let mut initial: Vec<AgentMessage> = self.system_patch().into_iter().collect();
        initial.push(start);
        initial.append(&mut self.host.next_turn);
        if let Some(draft) = result.message {
            initial.push(AgentMessage::Custom(self.host.custom_message(draft)));
        }
        self.agent_loop(initial);
        while !self.host.abort_requested {
            if self.post_run() {
                if self.host.abort_requested {
                    break;
                }
                self.agent_continue();
                continue;
            }
            if self.host.abort_requested || !self.before_settle() {
                break;
            }
            self.agent_continue();
        }
        self.flush_held();
        self.host.streaming = false;
        let aborted = self.host.abort_requested;
        self.host.log.push(HostEvent::Settled { aborted });
        self.without_usage("agent_settled", |extension, host| {
            extension.agent_settled(host, &AgentSettledEvent { aborted });
        });
        self.host.abort_requested = false;
        // A run requested from a settled handler starts now.
        if let Some(custom) = self.host.triggered.take() {
            self.run(Trigger::Custom(custom));
        }
    }

    /// `agent.continue()`: from a non-assistant last message, or with the
    /// queued messages when the last one is an assistant's.
    pub(super) fn agent_continue(&mut self) {
        let last_is_assistant = matches!(
            self.host
                .session
                .projection()
                .messages
                .last()
                .map(AsRef::as_ref),
            Some(AgentMessage::Assistant(_))
        );
        if !last_is_assistant {
            self.agent_loop(Vec::new());
            return;
        }
        let queued = self
            .host
            .steering
            .pop_front()
            .or_else(|| self.host.follow_up.pop_front());
        match queued {
            Some(message) => self.agent_loop(vec![message]),
            None => self.host.log.push(HostEvent::ExtensionError {
                event: "continue".to_owned(),
                error: "Cannot continue from message role: assistant".to_owned(),
            }),
        }
    }

    pub(super) fn flush_held(&mut self) {
        for custom in std::mem::take(&mut self.host.held) {
            self.host.append_message(AgentMessage::Custom(custom));
        }
    }

    pub(super) fn turn_start(&mut self) {
        self.host.log.push(HostEvent::TurnStart {
            index: self.turn_index,
        });
        let timestamp = self.host.session.now_ms();
        let event = TurnStartEvent {
            turn_index: self.turn_index,
            timestamp,
        };
        self.without_usage("turn_start", |extension, host| {
            extension.turn_start(host, &event);
        });
    }

    /// `runLoop` of agent-core.
    pub(super) fn agent_loop(&mut self, initial: Vec<AgentMessage>) {
        self.turn_start();
        for message in initial {
            self.host.append_message(message);
        }
        let mut pending: Vec<AgentMessage> = self.host.steering.pop_front().into_iter().collect();
        let mut first_turn = true;
        let mut explicit = false;
        loop {
            let mut more_tool_calls = true;
            while more_tool_calls || !pending.is_empty() {
                if !first_turn {
                    if pending.is_empty() {
                        pending.extend(self.host.steering.pop_front());
                    }
                    self.turn_index += 1;
                    self.turn_start();
                }
                first_turn = false;
                for message in pending.drain(..) {
                    self.host.append_message(message);
                }
                let assistant = self.request();
                let message = AgentMessage::Assistant(assistant.clone());
                self.host.append_message(message.clone());
                if matches!(
                    assistant.stop_reason,
                    StopReason::Error | StopReason::Aborted
                ) {
                    let outcome = if assistant.stop_reason == StopReason::Aborted {
                        BoundaryOutcome::Aborted
                    } else {
                        BoundaryOutcome::Error
                    };
                    self.finish_turn(message, Vec::new(), outcome);
                    self.flush_held();
                    return;
                }
                let (results, terminate) = self.execute_tools(&assistant);
                let had_calls = !results.is_empty();
                more_tool_calls = had_calls && !terminate;
                explicit = self.finish_turn(message, results, BoundaryOutcome::Completed);
                self.flush_held();
                if self.host.abort_requested {
                    return;
                }
                pending.extend(self.host.steering.pop_front());
                if more_tool_calls || !pending.is_empty() {
                    explicit = false;
                }
            }
            if let Some(follow_up) = self.host.follow_up.pop_front() {
                explicit = false;
                pending.push(follow_up);
                continue;
            }
            if explicit {
                explicit = false;
                continue;
            }
            break;
        }
    }
}
