//! The reference host's dreamer: a [`DreamSessionHost`] whose session is
//! an in-memory Pi agent loop over the scripted model. No extension, no
//! session file; tools are exactly the ones given.

use serde::Deserialize;
use serde_json::Value;

use super::model::{ModelRequest, Reply, ScriptedModel, Step};
use crate::dream::{
    DreamSessionError, DreamSessionHost, DreamSessionOutcome, DreamSessionSpec, DreamToolCall,
};
use crate::host::ModelInfo;
use crate::session::{
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
            let (content, calls, stop_reason, error) = match step.reply {
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
            let mut content = content;
            let mut calls_made = Vec::new();
            for (name, arguments) in calls {
                call_counter += 1;
                let id = format!("call_{call_counter}");
                content.push(ContentBlock::ToolCall(ToolCall {
                    id: id.clone(),
                    name: name.clone(),
                    arguments: arguments.clone(),
                    thought_signature: None,
                    namespace: None,
                    arguments_error: None,
                    extra: Extra::new(),
                }));
                calls_made.push((id, name, arguments));
            }
            let assistant = AssistantMessage {
                content,
                api: "scripted".to_owned(),
                provider: spec.model.provider.clone(),
                model: spec.model.id.clone(),
                usage: Default::default(),
                stop_reason: stop_reason.clone(),
                deferred: None,
                error_message: error.clone(),
                response_id: None,
                timestamp: 0,
                duration_ms: None,
                thinking_level: Some(spec.thinking_level.to_owned()),
                extra: Extra::new(),
            };
            let final_text =
                crate::testkit::message_text(&AgentMessage::Assistant(assistant.clone()));
            messages.push(AgentMessage::Assistant(assistant));
            if stop_reason != StopReason::ToolUse {
                break DreamSessionOutcome {
                    final_text,
                    stop_reason,
                    error_message: error,
                };
            }
            for (id, name, arguments) in calls_made {
                let offered = spec.tools.iter().any(|tool| tool.name == name);
                let result = if offered {
                    call(&name, &arguments)
                } else {
                    Err(format!("Tool {name} not found"))
                };
                let is_error = result.is_err();
                let text = result.unwrap_or_else(|error| error);
                messages.push(AgentMessage::ToolResult(ToolResultMessage {
                    tool_call_id: id,
                    tool_name: name,
                    content: vec![ContentBlock::text(text)],
                    details: None,
                    usage: None,
                    is_error,
                    duration_ms: None,
                    timestamp: 0,
                    nested_calls: None,
                    extra: Extra::new(),
                }));
            }
        };
        self.messages = messages;
        Ok(outcome)
    }
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
