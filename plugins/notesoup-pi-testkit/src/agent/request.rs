//! One provider request: the projection through `context` (system messages
//! hidden) and `context_with_system`, `convertToLlm`, the scripted model's
//! step with the user's actions during the stream, and the assistant message
//! it becomes; the system patch and the tool declarations a run starts with.

use std::collections::HashSet;

use crate::host::{HostEvent, ProviderRequest};
use crate::model::{ModelRequest, ScriptedReply, Step, UserAction, reply_chars};
use notesoup_pi::estimate::coding_agent::estimate_tokens;
use notesoup_pi::host::{MessageSummary, PiExtension};
use notesoup_pi::projection::{convert_to_llm, current_system_message};
use notesoup_pi::session::{
    AgentMessage, AssistantMessage, Content, ContentBlock, Cost, Extra, StopReason, SystemLayout,
    SystemMessage, ToolDeclaration, ToolReference, Usage, UserMessage,
};

use super::Harness;

impl<E: PiExtension> Harness<E> {
    /// Tool declarations: the extension's, then the host's.
    pub(super) fn declarations(&self) -> Vec<ToolDeclaration> {
        let mut tools: Vec<ToolDeclaration> = self
            .extension
            .tools()
            .into_iter()
            .map(|tool| ToolDeclaration {
                name: tool.name,
                description: tool.description,
                parameters: tool.parameters,
                constrained_sampling: None,
                extra: Extra::new(),
            })
            .collect();
        tools.extend(self.host_tools.iter().map(|tool| tool.declaration.clone()));
        tools
    }

    /// The system message a run starts with when the transcript's prompt and
    /// tools differ from the current ones (always on the first run).
    pub(super) fn system_patch(&mut self) -> Option<AgentMessage> {
        let tools = self.declarations();
        let current = current_system_message(self.host.session.projection().message_refs());
        let timestamp = self.host.session.now_ms();
        let patch = |content: String, added: Vec<ToolDeclaration>, removed: Vec<ToolReference>| {
            AgentMessage::System(SystemMessage {
                content: Content::Text(content),
                sections: None,
                tools_added: (!added.is_empty()).then_some(added),
                tools_removed: (!removed.is_empty()).then_some(removed),
                timestamp,
                layout: SystemLayout::ToolsAfterTimestamp,
                extra: Extra::new(),
            })
        };
        let Some(current) = current else {
            return Some(patch(self.system_prompt.clone(), tools, Vec::new()));
        };
        let known = current.tools_added.unwrap_or_default();
        let known_names: HashSet<&str> = known.iter().map(|t| t.name.as_str()).collect();
        let names: HashSet<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        let added: Vec<ToolDeclaration> = tools
            .iter()
            .filter(|t| !known_names.contains(t.name.as_str()))
            .cloned()
            .collect();
        let removed: Vec<ToolReference> = known
            .iter()
            .filter(|t| !names.contains(t.name.as_str()))
            .map(|t| ToolReference {
                name: t.name.clone(),
                extra: Extra::new(),
            })
            .collect();
        (!added.is_empty() || !removed.is_empty()).then(|| patch(String::new(), added, removed))
    }

    /// One provider request: the canonical projection through `context`
    /// (system messages hidden) and `context_with_system`, `convertToLlm`,
    /// then the scripted model, with user actions during the stream.
    pub(super) fn request(&mut self) -> AssistantMessage {
        let started = self.host.session.now_ms();
        let messages: Vec<AgentMessage> = self
            .host
            .session
            .projection()
            .messages
            .into_iter()
            .map(std::borrow::Cow::into_owned)
            .collect();
        let visible: Vec<AgentMessage> = messages
            .iter()
            .filter(|m| !matches!(m, AgentMessage::System(_)))
            .cloned()
            .collect();
        // The hook answers what to append; the Pi package returns Pi's
        // visible messages followed by those, as Pi's handler result.
        let append = self.extension.context(&mut self.host);
        let mut messages = if append.is_empty() {
            messages
        } else {
            let mut returned = visible.clone();
            returned.extend(append);
            restore_system(&messages, &visible, returned)
        };
        // The hook reads each message's summary, as the Pi package sends
        // it, and answers an edit the Pi package applies to Pi's messages.
        if self.host.api_level.has_context_with_system() {
            let summaries: Vec<MessageSummary> = messages.iter().map(MessageSummary::of).collect();
            if let Some(edit) = self.without_usage("context_with_system", |extension, host| {
                extension.context_with_system(host, &summaries)
            }) {
                messages = edit.apply(&messages);
            }
        }
        let llm: Vec<AgentMessage> = convert_to_llm(&messages)
            .into_iter()
            .map(std::borrow::Cow::into_owned)
            .collect();
        let cancelled = self.host.abort_requested;
        self.host.requests.push(ProviderRequest {
            messages: llm.clone(),
            cancelled,
        });
        self.host.log.push(HostEvent::Request {
            index: self.host.requests.len() - 1,
            leaf: self.host.session.leaf_id().map(str::to_owned),
        });
        if cancelled {
            return self.aborted(0, started);
        }
        let tools = self.declarations();
        let step = self.model.respond(&ModelRequest {
            messages: &llm,
            tools: &tools,
        });
        let input = step
            .input_tokens
            .unwrap_or_else(|| llm.iter().map(estimate_tokens).sum());
        self.during_stream(&step);
        if self.host.abort_requested {
            return self.aborted(input, started);
        }
        let output = reply_chars(&step.reply).div_ceil(4) as u64;
        // A reply with content is answered after the match; the others here.
        let (content, stop_reason) = match step.reply {
            ScriptedReply::Text(text) => (vec![ContentBlock::text(text)], StopReason::Stop),
            ScriptedReply::Length(text) => (vec![ContentBlock::text(text)], StopReason::Length),
            ScriptedReply::Tools { text, calls } => {
                let mut content: Vec<ContentBlock> =
                    text.map(ContentBlock::text).into_iter().collect();
                for (name, arguments) in calls {
                    self.tool_call_counter += 1;
                    content.push(ContentBlock::tool_call(
                        format!("call_{}", self.tool_call_counter),
                        name,
                        arguments,
                    ));
                }
                (content, StopReason::ToolUse)
            }
            ScriptedReply::Error(error) => {
                return self.assistant(
                    Vec::new(),
                    StopReason::Error,
                    Some(&error),
                    input,
                    0,
                    started,
                );
            }
            ScriptedReply::SyntheticAbort => return self.aborted(input, started),
            ScriptedReply::UserAbort => {
                self.host.abort_requested = true;
                return self.aborted(input, started);
            }
        };
        self.assistant(content, stop_reason, None, input, output, started)
    }

    pub(super) fn during_stream(&mut self, step: &Step) {
        for action in &step.actions {
            match action {
                UserAction::Steer(text) => {
                    let message = self.user_message(text);
                    self.host.steering.push_back(message);
                }
                UserAction::FollowUp(text) => {
                    let message = self.user_message(text);
                    self.host.follow_up.push_back(message);
                }
                UserAction::Command(line) => {
                    if let Err(error) = self.run_command_line(line) {
                        self.host.log.push(HostEvent::ExtensionError {
                            event: "command".to_owned(),
                            error: error.to_string(),
                        });
                    }
                }
            }
        }
    }

    pub(super) fn user_message(&mut self, text: &str) -> AgentMessage {
        AgentMessage::User(UserMessage {
            content: Content::Blocks(vec![ContentBlock::text(text)]),
            timestamp: self.host.session.now_ms(),
            extra: Extra::new(),
        })
    }

    /// An aborted reply after `input` tokens: no content, Pi's abort text.
    fn aborted(&self, input: u64, timestamp: i64) -> AssistantMessage {
        self.assistant(
            Vec::new(),
            StopReason::Aborted,
            Some("Request was aborted."),
            input,
            0,
            timestamp,
        )
    }

    pub(super) fn assistant(
        &self,
        content: Vec<ContentBlock>,
        stop_reason: StopReason,
        error: Option<&str>,
        input: u64,
        output: u64,
        timestamp: i64,
    ) -> AssistantMessage {
        AssistantMessage {
            content,
            api: "scripted".to_owned(),
            provider: self.model.info.provider.clone(),
            model: self.model.info.id.clone(),
            usage: Usage {
                input,
                output,
                cache_read: 0,
                cache_write: 0,
                cache_write_1h: None,
                reasoning: None,
                total_tokens: input + output,
                cost: Cost::default(),
                extra: Extra::new(),
            },
            stop_reason,
            deferred: None,
            error_message: error.map(str::to_owned),
            response_id: None,
            timestamp,
            duration_ms: None,
            thinking_level: Some("off".to_owned()),
            extra: Extra::new(),
        }
    }
}

/// Pi's `restoreSystemMessages` for the common case: handlers that append
/// keep every system message in place; other edits put the system messages
/// first.
fn restore_system(
    all: &[AgentMessage],
    visible: &[AgentMessage],
    returned: Vec<AgentMessage>,
) -> Vec<AgentMessage> {
    if returned.len() >= visible.len() && returned[..visible.len()] == *visible {
        let mut restored = all.to_vec();
        restored.extend_from_slice(&returned[visible.len()..]);
        return restored;
    }
    let mut restored: Vec<AgentMessage> = all
        .iter()
        .filter(|m| matches!(m, AgentMessage::System(_)))
        .cloned()
        .collect();
    restored.extend(returned);
    restored
}
