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

use std::collections::HashSet;

use serde_json::Value;

use super::clock::{Clock, IdSource};
use super::host::{HostEvent, HostState, ProviderRequest, entry_kind};
use super::model::{ModelRequest, Reply, ScriptedModel, Step, UserAction, reply_chars};
use super::session::SessionManager;
use notesoup_pi::estimate::coding_agent::estimate_tokens;
use notesoup_pi::host::{
    AgentSettledEvent, AgentStartInput, AgentToolResult, BeforeAgentStartEvent,
    BoundaryContextPreview, BoundaryOutcome, BoundaryState, CompactionReason, HostError,
    PiApiLevel, PiExtension, PiHost, ProjectedSessionEntry, SessionBeforeCompactEvent,
    SessionBeforeTreeEvent, SessionBoundaryDraft, SessionStartEvent, SessionStartReason,
    SessionTreeEvent, ToolInvocation, ToolResultEvent, TreePreparation, TurnEndEvent,
    TurnStartEvent,
};
use notesoup_pi::overflow::{is_context_overflow, is_recoverable_length};
use notesoup_pi::projection::{convert_to_llm, current_system_message};
use notesoup_pi::session::{
    AgentMessage, AssistantMessage, Content, ContentBlock, Cost, Entry, Extra, SessionError,
    StopReason, SystemLayout, SystemMessage, ToolCall, ToolDeclaration, ToolReference,
    ToolResultMessage, Usage, UserMessage,
};

/// Runs a host tool: the result text, or an error text.
pub type HostToolFn = Box<dyn FnMut(&Value) -> Result<String, String> + Send>;

/// A tool the host itself provides (Pi's built-in tools, in miniature).
pub struct HostTool {
    /// How the model sees it.
    pub declaration: ToolDeclaration,
    /// Runs it: the result text, or an error text.
    pub run: HostToolFn,
}

impl std::fmt::Debug for HostTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostTool")
            .field("name", &self.declaration.name)
            .finish_non_exhaustive()
    }
}

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
        self.extension.session_start(
            &mut self.host,
            &SessionStartEvent {
                reason: Some(reason),
                previous_session_file: None,
            },
        );
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

    /// `/tree` navigation to `target`, with or without a summary of the
    /// abandoned branch. The reference host cannot generate summaries: a
    /// requested summary the extension does not supply is a fixed text.
    pub fn navigate(&mut self, target: &str, summarize: bool) {
        let old_leaf = self.host.session.leaf_id().map(str::to_owned);
        let abandoned: Vec<Entry> = self.host.session.branch().into_iter().cloned().collect();
        let event = SessionBeforeTreeEvent {
            preparation: TreePreparation {
                target_id: target.to_owned(),
                old_leaf_id: old_leaf.clone(),
                common_ancestor_id: None,
                entries_to_summarize: abandoned,
                user_wants_summary: summarize,
                custom_instructions: None,
                replace_instructions: None,
                label: None,
            },
        };
        let result = self.extension.session_before_tree(&mut self.host, &event);
        let supplied = result.summary.is_some();
        if result.cancel == Some(true) {
            return;
        }
        self.host.session.set_leaf(Some(target));
        let summary = match (summarize, result.summary) {
            (false, _) => None,
            (true, Some(summary)) => Some(summary.summary),
            (true, None) => Some("Summary of the abandoned branch (reference host).".to_owned()),
        };
        let mut summary_entry = None;
        if let Some(text) = summary.filter(|text| !text.is_empty()) {
            let from = old_leaf.clone().unwrap_or_else(|| "root".to_owned());
            let id = self.append_branch_summary(&from, &text);
            summary_entry = id;
        }
        let summary_entry = summary_entry.and_then(|id| {
            self.host
                .session
                .entries()
                .iter()
                .find_map(|entry| match entry {
                    Entry::BranchSummary(summary) if summary.id == id => Some(summary.clone()),
                    _ => None,
                })
        });
        let event = SessionTreeEvent {
            new_leaf_id: self.host.session.leaf_id().map(str::to_owned),
            old_leaf_id: old_leaf,
            from_extension: summary_entry.as_ref().map(|_| supplied),
            summary_entry,
        };
        self.extension.session_tree(&mut self.host, &event);
    }

    fn append_branch_summary(&mut self, from: &str, text: &str) -> Option<String> {
        let id = self.host.session.append_branch_summary(from, text);
        let ok = id.as_ref().ok().cloned();
        self.host.record(id);
        ok
    }

    /// A manual `/compact`: the extension may cancel it; the reference host
    /// cannot summarize, so an uncancelled compaction is reported, not run.
    pub fn compact(&mut self) {
        self.before_compact(CompactionReason::Manual, false);
    }

    fn before_compact(&mut self, reason: CompactionReason, will_retry: bool) -> bool {
        let branch_entries: Vec<Entry> = self.host.session.branch().into_iter().cloned().collect();
        let result = self.extension.session_before_compact(
            &mut self.host,
            &SessionBeforeCompactEvent {
                preparation: Value::Object(serde_json::Map::new()),
                branch_entries,
                custom_instructions: None,
                reason: Some(reason),
                will_retry: Some(will_retry),
            },
        );
        let cancelled = result.cancel == Some(true);
        let reason = serde_json::to_value(reason)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        self.host
            .log
            .push(HostEvent::Compaction { reason, cancelled });
        cancelled
    }

    /// Tool declarations: the extension's, then the host's.
    fn declarations(&self) -> Vec<ToolDeclaration> {
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
    fn system_patch(&mut self) -> Option<AgentMessage> {
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

    fn run(&mut self, trigger: Trigger) {
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
        self.extension
            .agent_settled(&mut self.host, &AgentSettledEvent { aborted });
        self.host.abort_requested = false;
        // A run requested from a settled handler starts now.
        if let Some(custom) = self.host.triggered.take() {
            self.run(Trigger::Custom(custom));
        }
    }

    /// `agent.continue()`: from a non-assistant last message, or with the
    /// queued messages when the last one is an assistant's.
    fn agent_continue(&mut self) {
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

    fn flush_held(&mut self) {
        for custom in std::mem::take(&mut self.host.held) {
            self.host.append_message(AgentMessage::Custom(custom));
        }
    }

    fn turn_start(&mut self) {
        self.host.log.push(HostEvent::TurnStart {
            index: self.turn_index,
        });
        let timestamp = self.host.session.now_ms();
        self.extension.turn_start(
            &mut self.host,
            &TurnStartEvent {
                turn_index: self.turn_index,
                timestamp,
            },
        );
    }

    /// `runLoop` of agent-core.
    fn agent_loop(&mut self, initial: Vec<AgentMessage>) {
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

    /// One provider request: the canonical projection through `context`
    /// (system messages hidden) and `context_with_system`, `convertToLlm`,
    /// then the scripted model, with user actions during the stream.
    fn request(&mut self) -> AssistantMessage {
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
        let mut messages = match self.extension.context(&mut self.host, &visible) {
            Some(returned) => restore_system(&messages, &visible, returned),
            None => messages,
        };
        if self.host.api_level.has_context_with_system()
            && let Some(returned) = self
                .extension
                .context_with_system(&mut self.host, &messages)
        {
            messages = returned;
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
            return self.assistant(
                Vec::new(),
                StopReason::Aborted,
                Some("Request was aborted."),
                0,
                0,
                started,
            );
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
            return self.assistant(
                Vec::new(),
                StopReason::Aborted,
                Some("Request was aborted."),
                input,
                0,
                started,
            );
        }
        let output = reply_chars(&step.reply).div_ceil(4) as u64;
        match step.reply {
            Reply::Text(text) => self.assistant(
                vec![ContentBlock::text(text)],
                StopReason::Stop,
                None,
                input,
                output,
                started,
            ),
            Reply::Length(text) => self.assistant(
                vec![ContentBlock::text(text)],
                StopReason::Length,
                None,
                input,
                output,
                started,
            ),
            Reply::Tools { text, calls } => {
                let mut content: Vec<ContentBlock> =
                    text.map(ContentBlock::text).into_iter().collect();
                for (name, arguments) in calls {
                    self.tool_call_counter += 1;
                    content.push(ContentBlock::ToolCall(ToolCall {
                        id: format!("call_{}", self.tool_call_counter),
                        name,
                        arguments,
                        thought_signature: None,
                        namespace: None,
                        arguments_error: None,
                        extra: Extra::new(),
                    }));
                }
                self.assistant(content, StopReason::ToolUse, None, input, output, started)
            }
            Reply::Error(error) => self.assistant(
                Vec::new(),
                StopReason::Error,
                Some(&error),
                input,
                0,
                started,
            ),
            Reply::SyntheticAbort => self.assistant(
                Vec::new(),
                StopReason::Aborted,
                Some("Request was aborted."),
                input,
                0,
                started,
            ),
            Reply::UserAbort => {
                self.host.abort_requested = true;
                self.assistant(
                    Vec::new(),
                    StopReason::Aborted,
                    Some("Request was aborted."),
                    input,
                    0,
                    started,
                )
            }
        }
    }

    fn during_stream(&mut self, step: &Step) {
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

    fn user_message(&mut self, text: &str) -> AgentMessage {
        AgentMessage::User(UserMessage {
            content: Content::Blocks(vec![ContentBlock::text(text)]),
            timestamp: self.host.session.now_ms(),
            extra: Extra::new(),
        })
    }

    fn assistant(
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

    /// The tool batch in call order; the run stops after it only when every
    /// result sets `terminate`.
    fn execute_tools(&mut self, assistant: &AssistantMessage) -> (Vec<ToolResultMessage>, bool) {
        let calls: Vec<&ToolCall> = assistant
            .content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::ToolCall(call) => Some(call),
                _ => None,
            })
            .collect();
        let mut results = Vec::with_capacity(calls.len());
        let mut terminate = !calls.is_empty();
        for call in calls {
            let result = self.execute_tool(call);
            terminate &= result.terminate == Some(true);
            let patch = self.extension.tool_result(
                &mut self.host,
                &ToolResultEvent {
                    tool_call_id: call.id.clone(),
                    tool_name: call.name.clone(),
                    input: call.arguments.clone(),
                    content: result.content.clone(),
                    details: result.details.clone(),
                    is_error: result.is_error == Some(true),
                    usage: None,
                },
            );
            let message = ToolResultMessage {
                tool_call_id: call.id.clone(),
                tool_name: call.name.clone(),
                content: patch.content.unwrap_or(result.content),
                details: Some(patch.details.unwrap_or(result.details)),
                usage: None,
                is_error: patch.is_error.unwrap_or(result.is_error == Some(true)),
                duration_ms: Some(0),
                timestamp: self.host.session.now_ms(),
                nested_calls: None,
                extra: Extra::new(),
            };
            self.host
                .append_message(AgentMessage::ToolResult(message.clone()));
            results.push(message);
        }
        (results, terminate)
    }

    fn execute_tool(&mut self, call: &ToolCall) -> AgentToolResult {
        if self
            .extension
            .tools()
            .iter()
            .any(|tool| tool.name == call.name)
        {
            return self.extension.execute_tool(
                &mut self.host,
                &ToolInvocation {
                    tool_call_id: call.id.clone(),
                    name: call.name.clone(),
                    params: call.arguments.clone(),
                },
            );
        }
        match self
            .host_tools
            .iter_mut()
            .find(|tool| tool.declaration.name == call.name)
        {
            Some(tool) => match (tool.run)(&call.arguments) {
                Ok(text) => AgentToolResult {
                    content: vec![ContentBlock::text(text)],
                    details: Value::Object(serde_json::Map::new()),
                    usage: None,
                    terminate: None,
                    is_error: None,
                    structured_content: None,
                },
                Err(error) => AgentToolResult::error(error),
            },
            None => AgentToolResult::error(format!("Tool {} not found", call.name)),
        }
    }

    /// `finishTurn`: the `turn_end` boundary. Drafts are saved whatever the
    /// outcome; `continue` counts only for a completed turn with a runnable
    /// context.
    fn finish_turn(
        &mut self,
        message: AgentMessage,
        tool_results: Vec<ToolResultMessage>,
        outcome: BoundaryOutcome,
    ) -> bool {
        self.last_outcome = outcome;
        let branch_ids = |host: &HostState, wanted: &AgentMessage| {
            host.session
                .branch()
                .iter()
                .rev()
                .find(|entry| entry.message() == Some(wanted))
                .map(|entry| entry.id().to_owned())
        };
        let message_entry_id = branch_ids(&self.host, &message);
        let tool_result_entry_ids = tool_results
            .iter()
            .filter_map(|result| branch_ids(&self.host, &AgentMessage::ToolResult(result.clone())))
            .collect();
        let boundary = self
            .host
            .api_level
            .has_boundary_events()
            .then(|| BoundaryState {
                entries: Vec::new(),
                continue_run: false,
                context: self.preview(&[], true),
                outcome,
            });
        let event = TurnEndEvent {
            turn_index: self.turn_index,
            message,
            tool_results,
            message_entry_id,
            tool_result_entry_ids: Some(tool_result_entry_ids),
            boundary,
        };
        let result = self.extension.turn_end(&mut self.host, &event);
        if self.host.api_level < PiApiLevel::V0_87 {
            self.host.log.push(HostEvent::TurnEnd {
                outcome: outcome_name(outcome),
                drafts: 0,
                continued: false,
            });
            return false;
        }
        let drafts = result.entries.unwrap_or_default();
        let saved = self.commit_drafts(&drafts, "turn_end");
        let wants = result.continue_run == Some(true);
        let runnable = self.preview(&[], true).can_continue;
        if wants && !runnable {
            self.host.log.push(HostEvent::ExtensionError {
                event: "turn_end".to_owned(),
                error: "turn_end requested continuation without runnable model context".to_owned(),
            });
        }
        let continued = wants && runnable && outcome == BoundaryOutcome::Completed;
        self.host.log.push(HostEvent::TurnEnd {
            outcome: outcome_name(outcome),
            drafts: saved,
            continued,
        });
        continued
    }

    /// `_handlePostAgentRun`: overflow recovery (omit the failed response,
    /// offer the compaction; cancelled means no retry) and the threshold
    /// check. True when queued work needs another loop.
    fn post_run(&mut self) -> bool {
        let last = self
            .host
            .session
            .branch()
            .last()
            .and_then(|entry| match entry.message() {
                Some(AgentMessage::Assistant(assistant)) => {
                    Some((entry.id().to_owned(), assistant.clone()))
                }
                _ => None,
            });
        if let (Some((id, assistant)), Some(model)) = (last, self.host.model.clone()) {
            let overflow = (assistant.stop_reason == StopReason::Error
                && is_context_overflow(&assistant, model.context_window))
                || is_recoverable_length(&assistant, model.max_tokens);
            if overflow {
                let edit = self.host.session.append_context_edit(&id, None);
                self.host.record(edit);
                // Cancelled or not: the reference host has no summarizer, so
                // nothing is retried.
                self.before_compact(CompactionReason::Overflow, true);
                return false;
            }
            let silent = assistant.stop_reason == StopReason::Stop
                && is_context_overflow(&assistant, model.context_window);
            if silent || self.over_threshold(model.context_window) {
                let reason = if silent {
                    CompactionReason::Overflow
                } else {
                    CompactionReason::Threshold
                };
                self.before_compact(reason, false);
            }
        }
        self.host.has_queued()
    }

    fn over_threshold(&self, context_window: u64) -> bool {
        let Ok(settings) = &self.host.settings else {
            return false;
        };
        if !settings.compaction.enabled {
            return false;
        }
        self.host
            .context_usage()
            .and_then(|usage| usage.tokens)
            .is_some_and(|tokens| {
                tokens > context_window.saturating_sub(settings.compaction.reserve_tokens)
            })
    }

    /// `agent_before_settle`: drafts saved, then the run continues when asked
    /// (or when work is queued) and the context can continue.
    fn before_settle(&mut self) -> bool {
        if !self.host.api_level.has_boundary_events() {
            return self.host.has_queued();
        }
        let state = BoundaryState {
            entries: Vec::new(),
            continue_run: false,
            context: self.preview(&[], false),
            outcome: self.last_outcome,
        };
        let result = self.extension.agent_before_settle(&mut self.host, &state);
        let drafts = result.entries.unwrap_or_default();
        let saved = self.commit_drafts(&drafts, "agent_before_settle");
        self.flush_held();
        let runnable = self.preview(&[], false).can_continue;
        let asked = result.continue_run == Some(true);
        let should = asked || self.host.has_queued();
        let continued = !self.host.abort_requested && should && runnable;
        if should && !runnable && asked {
            self.host.log.push(HostEvent::ExtensionError {
                event: "agent_before_settle".to_owned(),
                error: "agent_before_settle requested continuation without runnable model context"
                    .to_owned(),
            });
        }
        self.host.log.push(HostEvent::BeforeSettle {
            drafts: saved,
            continued,
        });
        continued
    }

    /// The context as it would be after `drafts` (Pi's preview manager).
    fn preview(
        &mut self,
        drafts: &[SessionBoundaryDraft],
        turn_end: bool,
    ) -> BoundaryContextPreview {
        let mut manager = self.host.session.preview();
        // A preview cannot fail to apply its drafts to memory.
        let _ = manager.apply_drafts(drafts);
        let projection = manager.projection();
        let llm: Vec<AgentMessage> = convert_to_llm(projection.message_refs())
            .into_iter()
            .map(std::borrow::Cow::into_owned)
            .collect();
        let final_assistant = matches!(llm.last(), Some(AgentMessage::Assistant(_)));
        let has_context = llm.iter().any(|m| !matches!(m, AgentMessage::System(_)));
        let queued = self.host.has_queued();
        let can_continue = (has_context && !final_assistant)
            || !self.host.held.is_empty()
            || if turn_end {
                queued
            } else {
                final_assistant && queued
            };
        BoundaryContextPreview {
            context_entries: projection
                .entries
                .iter()
                .map(|entry| ProjectedSessionEntry {
                    source_entry: entry.source.clone(),
                    messages: projection
                        .messages_of(entry)
                        .iter()
                        .map(|m| m.as_ref().clone())
                        .collect(),
                })
                .collect(),
            context_messages: projection.message_refs().cloned().collect(),
            llm_messages: llm,
            pending_messages: self
                .host
                .steering
                .iter()
                .chain(&self.host.follow_up)
                .cloned()
                .chain(self.host.held.iter().cloned().map(AgentMessage::Custom))
                .collect(),
            can_continue,
        }
    }

    /// Saves drafts in order; a draft that cannot apply (a context edit of an
    /// unknown entry) saves nothing, as in Pi.
    fn commit_drafts(&mut self, drafts: &[SessionBoundaryDraft], event: &str) -> usize {
        if drafts.is_empty() {
            return 0;
        }
        let known: HashSet<String> = self
            .host
            .session
            .branch()
            .iter()
            .map(|e| e.id().to_owned())
            .collect();
        let applicable = drafts.iter().all(|draft| match draft {
            SessionBoundaryDraft::ContextEdit { target_id, .. } => known.contains(target_id),
            _ => true,
        });
        if !applicable {
            self.host.log.push(HostEvent::ExtensionError {
                event: event.to_owned(),
                error: "boundary drafts cannot be applied to the context".to_owned(),
            });
            return 0;
        }
        let before = self.host.session.entries().len();
        let result = self.host.session.apply_drafts(drafts);
        let appended: Vec<(String, String)> = self.host.session.entries()[before..]
            .iter()
            .map(|entry| (entry.id().to_owned(), entry_kind(entry)))
            .collect();
        for (id, kind) in appended {
            self.host.log.push(HostEvent::Entry { id, kind });
        }
        if let Err(error) = result {
            self.host.log.push(HostEvent::ExtensionError {
                event: event.to_owned(),
                error: error.to_string(),
            });
        }
        self.host.session.entries().len() - before
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

fn outcome_name(outcome: BoundaryOutcome) -> String {
    match outcome {
        BoundaryOutcome::Completed => "completed",
        BoundaryOutcome::Aborted => "aborted",
        BoundaryOutcome::Error => "error",
    }
    .to_owned()
}
