//! The reference host's dreamer: a [`DreamSessionHost`] whose session is
//! an in-memory Pi agent loop over the scripted model. No extension, no
//! session file; tools are exactly the ones given.

use serde::Deserialize;
use serde_json::Value;

use super::model::{ModelRequest, Reply, ScriptedModel, Step, message_text};
use notesoup_pi::dream::{
    DreamSessionError, DreamSessionHost, DreamSessionOutcome, DreamSessionSpec, DreamToolCall,
};
use notesoup_pi::host::ModelInfo;
use notesoup_pi::session::{
    AgentMessage, AssistantMessage, Content, ContentBlock, Extra, StopReason, ToolCall,
    ToolResultMessage, UserMessage,
};

/// What the host was asked for, kept so tests can check the session shape.
#[derive(Debug, Clone, PartialEq)]
pub struct DreamSessionRecord {
    /// The session's cwd.
    pub cwd: std::path::PathBuf,
    /// The model it ran on.
    pub model: ModelInfo,
    /// The thinking level.
    pub thinking_level: String,
    /// The offered tool names, in order.
    pub tools: Vec<String>,
    /// The prompt.
    pub prompt: String,
}

/// The reference dream host: one scripted model.
#[derive(Debug)]
pub struct ReferenceDreamHost {
    /// The model; its steps are the dreamer's turns.
    pub model: ScriptedModel,
    /// The transcript of the last session.
    pub messages: Vec<AgentMessage>,
    /// The last session's shape.
    pub session: Option<DreamSessionRecord>,
}

impl ReferenceDreamHost {
    /// A host over `model`.
    pub fn new(model: ScriptedModel) -> Self {
        ReferenceDreamHost {
            model,
            messages: Vec::new(),
            session: None,
        }
    }
}

impl DreamSessionHost for ReferenceDreamHost {
    /// Matches `provider/id`, the id, or a case-insensitive part of either.
    fn resolve_model(&mut self, pattern: Option<&str>) -> Option<ModelInfo> {
        let info = &self.model.info;
        let Some(pattern) = pattern else {
            return Some(info.clone());
        };
        let full = format!("{}/{}", info.provider, info.id).to_lowercase();
        full.contains(&pattern.to_lowercase()).then(|| info.clone())
    }

    fn run_session(
        &mut self,
        spec: DreamSessionSpec<'_>,
        call: &mut DreamToolCall<'_>,
    ) -> Result<DreamSessionOutcome, DreamSessionError> {
        self.session = Some(DreamSessionRecord {
            cwd: spec.cwd.to_owned(),
            model: spec.model.clone(),
            thinking_level: spec.thinking_level.to_owned(),
            tools: spec.tools.iter().map(|tool| tool.name.clone()).collect(),
            prompt: spec.prompt.to_owned(),
        });
        let mut messages = vec![AgentMessage::User(UserMessage {
            content: Content::Blocks(vec![ContentBlock::text(spec.prompt)]),
            timestamp: 0,
            extra: Extra::new(),
        })];
        let mut call_counter = 0u64;
        let outcome = loop {
            let step = self.model.respond(&ModelRequest {
                messages: &messages,
                tools: spec.tools,
            });
            let assistant = assistant_message(step.reply, &spec, &mut call_counter);
            let calls: Vec<ToolCall> = assistant
                .content
                .iter()
                .filter_map(|block| match block {
                    ContentBlock::ToolCall(call) => Some(call.clone()),
                    _ => None,
                })
                .collect();
            let stop_reason = assistant.stop_reason.clone();
            let outcome = DreamSessionOutcome {
                final_text: message_text(&AgentMessage::Assistant(assistant.clone())),
                stop_reason: stop_reason.clone(),
                error_message: assistant.error_message.clone(),
            };
            messages.push(AgentMessage::Assistant(assistant));
            if stop_reason != StopReason::ToolUse {
                break outcome;
            }
            for tool_call in calls {
                let offered = spec.tools.iter().any(|tool| tool.name == tool_call.name);
                let result = if offered {
                    call(&tool_call.name, &tool_call.arguments)
                } else {
                    Err(format!("Tool {} not found", tool_call.name))
                };
                messages.push(tool_result(tool_call, result));
            }
        };
        self.messages = messages;
        Ok(outcome)
    }
}

/// The assistant message of one scripted reply; tool calls get ids
/// `call_<n>`.
fn assistant_message(
    reply: Reply,
    spec: &DreamSessionSpec<'_>,
    call_counter: &mut u64,
) -> AssistantMessage {
    let (mut content, calls, stop_reason, error) = match reply {
        Reply::Text(text) => (
            vec![ContentBlock::text(text)],
            vec![],
            StopReason::Stop,
            None,
        ),
        Reply::Tools { text, calls } => (
            text.map(ContentBlock::text).into_iter().collect(),
            calls,
            StopReason::ToolUse,
            None,
        ),
        Reply::Error(message) => (vec![], vec![], StopReason::Error, Some(message)),
        Reply::Length(text) => (
            vec![ContentBlock::text(text)],
            vec![],
            StopReason::Length,
            None,
        ),
        Reply::SyntheticAbort | Reply::UserAbort => (
            vec![],
            vec![],
            StopReason::Aborted,
            Some("Request was aborted".to_owned()),
        ),
    };
    for (name, arguments) in calls {
        *call_counter += 1;
        content.push(ContentBlock::ToolCall(ToolCall {
            id: format!("call_{call_counter}"),
            name,
            arguments,
            thought_signature: None,
            namespace: None,
            arguments_error: None,
            extra: Extra::new(),
        }));
    }
    AssistantMessage {
        content,
        api: "scripted".to_owned(),
        provider: spec.model.provider.clone(),
        model: spec.model.id.clone(),
        usage: Default::default(),
        stop_reason,
        deferred: None,
        error_message: error,
        response_id: None,
        timestamp: 0,
        duration_ms: None,
        thinking_level: Some(spec.thinking_level.to_owned()),
        extra: Extra::new(),
    }
}

/// The tool result message of one call; an error text sets `isError`.
fn tool_result(call: ToolCall, result: Result<String, String>) -> AgentMessage {
    let is_error = result.is_err();
    let text = result.unwrap_or_else(|error| error);
    AgentMessage::ToolResult(ToolResultMessage {
        tool_call_id: call.id,
        tool_name: call.name,
        content: vec![ContentBlock::text(text)],
        details: None,
        usage: None,
        is_error,
        duration_ms: None,
        timestamp: 0,
        nested_calls: None,
        extra: Extra::new(),
    })
}

/// One step of a `--script` file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptStep {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    tools: Vec<ScriptCall>,
    #[serde(default)]
    error: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptCall {
    name: String,
    #[serde(default)]
    arguments: Value,
}

/// Parses a dreamer script: a JSON array of steps, each
/// `{"text": "..."}` (a final answer), `{"tools": [{"name", "arguments"}],
/// "text"?: "..."}` (tool calls) or `{"error": "..."}` (a provider error).
pub fn parse_dream_script(json: &str) -> Result<Vec<Step>, String> {
    let steps: Vec<ScriptStep> =
        serde_json::from_str(json).map_err(|err| format!("invalid dreamer script: {err}"))?;
    steps
        .into_iter()
        .enumerate()
        .map(|(index, step)| match step {
            ScriptStep {
                error: Some(message),
                text: None,
                tools,
            } if tools.is_empty() => Ok(Step::error(message)),
            ScriptStep {
                error: None,
                text: Some(text),
                tools,
            } if tools.is_empty() => Ok(Step::text(text)),
            ScriptStep {
                error: None,
                text,
                tools,
            } if !tools.is_empty() => Ok(Step::reply(Reply::Tools {
                text,
                calls: tools
                    .into_iter()
                    .map(|call| (call.name, call.arguments))
                    .collect(),
            })),
            _ => Err(format!(
                "invalid dreamer script: step {index} needs exactly one of text, tools (with optional text) or error"
            )),
        })
        .collect()
}
