//! The reference host's dreamer: core's [`DreamRunner`] as an in-memory Pi
//! agent loop over the scripted model. No extension, no session file; the
//! tools are core's dream tool table, every call routed through core's
//! `call_dream_tool`.

use serde::Deserialize;
use serde_json::Value;

use super::model::{ModelRequest, ScriptedModel, ScriptedReply, Step, message_text};
use notesoup_core::dream::{
    DreamRequest, DreamResult, DreamRunner, DreamWrite, call_dream_tool, dream_tool_table,
};
use notesoup_pi::host::ModelInfo;
use notesoup_pi::session::{
    AgentMessage, AssistantMessage, Content, ContentBlock, Extra, StopReason, ToolCall,
    ToolDeclaration, ToolResultMessage, UserMessage,
};

/// The dreamer runs without thinking.
const THINKING_LEVEL: &str = "off";

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

    /// Matches `provider/id`, the id, or a case-insensitive part of either;
    /// `None` asks for the scripted model itself.
    fn resolve_model(&self, pattern: Option<&str>) -> Option<ModelInfo> {
        let info = &self.model.info;
        let Some(pattern) = pattern else {
            return Some(info.clone());
        };
        let full = format!("{}/{}", info.provider, info.id).to_lowercase();
        full.contains(&pattern.to_lowercase()).then(|| info.clone())
    }
}

impl DreamRunner for ReferenceDreamHost {
    /// One in-memory session: cwd the notes home, thinking off, exactly
    /// core's dream tools, the playbook as its single prompt. Every write,
    /// edit and delete call is recorded, whether or not it succeeded; a
    /// provider error fails the run and keeps the writes made so far.
    fn run(&mut self, request: DreamRequest<'_>) -> DreamResult {
        let Some(model) = self.resolve_model(request.model_pattern) else {
            let pattern = request.model_pattern.unwrap_or_default();
            return DreamResult::failed(format!(
                "dreamer model pattern \"{pattern}\" did not resolve to an available model"
            ));
        };
        let tools: Vec<ToolDeclaration> = dream_tool_table()
            .into_iter()
            .map(|tool| ToolDeclaration {
                name: tool.name.to_owned(),
                description: tool.description.to_owned(),
                parameters: tool.input_schema,
                constrained_sampling: None,
                extra: Extra::new(),
            })
            .collect();
        self.session = Some(DreamSessionRecord {
            cwd: request.home.to_owned(),
            model: model.clone(),
            thinking_level: THINKING_LEVEL.to_owned(),
            tools: tools.iter().map(|tool| tool.name.clone()).collect(),
            prompt: request.prompt.to_owned(),
        });
        let mut messages = vec![AgentMessage::User(UserMessage {
            content: Content::Blocks(vec![ContentBlock::text(request.prompt)]),
            timestamp: 0,
            extra: Extra::new(),
        })];
        let mut writes = Vec::new();
        let mut call_counter = 0u64;
        let assistant = loop {
            let step = self.model.respond(&ModelRequest {
                messages: &messages,
                tools: &tools,
            });
            let assistant = assistant_message(step.reply, &model, &mut call_counter);
            let calls: Vec<ToolCall> = assistant
                .content
                .iter()
                .filter_map(|block| match block {
                    ContentBlock::ToolCall(call) => Some(call.clone()),
                    _ => None,
                })
                .collect();
            messages.push(AgentMessage::Assistant(assistant.clone()));
            if assistant.stop_reason != StopReason::ToolUse {
                break assistant;
            }
            for tool_call in calls {
                writes.extend(DreamWrite::from_tool_event(
                    &tool_call.name,
                    &tool_call.arguments,
                ));
                let result =
                    call_dream_tool(request.tools, &tool_call.name, tool_call.arguments.clone())
                        .unwrap_or_else(|| Err(format!("Tool {} not found", tool_call.name)));
                messages.push(tool_result(tool_call, result));
            }
        };
        let error = (assistant.stop_reason == StopReason::Error).then(|| {
            format!(
                "dreamer failed: {}",
                assistant.error_message.clone().unwrap_or_default()
            )
        });
        let report = message_text(&AgentMessage::Assistant(assistant));
        self.messages = messages;
        DreamResult {
            report,
            writes,
            error,
        }
    }
}

/// The assistant message of one scripted reply; tool calls get ids
/// `call_<n>`.
fn assistant_message(
    reply: ScriptedReply,
    model: &ModelInfo,
    call_counter: &mut u64,
) -> AssistantMessage {
    let (mut content, calls, stop_reason, error) = match reply {
        ScriptedReply::Text(text) => (
            vec![ContentBlock::text(text)],
            vec![],
            StopReason::Stop,
            None,
        ),
        ScriptedReply::Tools { text, calls } => (
            text.map(ContentBlock::text).into_iter().collect(),
            calls,
            StopReason::ToolUse,
            None,
        ),
        ScriptedReply::Error(message) => (vec![], vec![], StopReason::Error, Some(message)),
        ScriptedReply::Length(text) => (
            vec![ContentBlock::text(text)],
            vec![],
            StopReason::Length,
            None,
        ),
        ScriptedReply::SyntheticAbort | ScriptedReply::UserAbort => (
            vec![],
            vec![],
            StopReason::Aborted,
            Some("Request was aborted".to_owned()),
        ),
    };
    for (name, arguments) in calls {
        *call_counter += 1;
        content.push(ContentBlock::tool_call(
            format!("call_{call_counter}"),
            name,
            arguments,
        ));
    }
    AssistantMessage {
        content,
        api: "scripted".to_owned(),
        provider: model.provider.clone(),
        model: model.id.clone(),
        usage: Default::default(),
        stop_reason,
        deferred: None,
        error_message: error,
        response_id: None,
        timestamp: 0,
        duration_ms: None,
        thinking_level: Some(THINKING_LEVEL.to_owned()),
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
            } if !tools.is_empty() => Ok(Step::reply(ScriptedReply::Tools {
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
