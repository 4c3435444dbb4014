//! A scripted model in the manner of pi-ai's faux provider: a queue of
//! steps, each a fixed reply or a function of the request. Usage is
//! estimated at four characters per token, so budgets and thresholds move
//! as the context grows.

use std::collections::VecDeque;
use std::fmt;

use serde_json::Value;

use notesoup_pi::host::ModelInfo;
use notesoup_pi::session::{AgentMessage, ContentBlock, ToolDeclaration};

/// What the model receives: the messages after `convertToLlm` (system,
/// user, assistant, toolResult) and the registered tools.
#[derive(Debug, Clone, Copy)]
pub struct ModelRequest<'a> {
    /// The provider context.
    pub messages: &'a [AgentMessage],
    /// The tools.
    pub tools: &'a [ToolDeclaration],
}

impl ModelRequest<'_> {
    /// Whether the text of any message of the request contains `needle`.
    pub fn contains(&self, needle: &str) -> bool {
        self.messages
            .iter()
            .any(|message| message_text(message).contains(needle))
    }

    /// The text of the last message.
    pub fn last_text(&self) -> String {
        self.messages.last().map(message_text).unwrap_or_default()
    }
}

/// The text blocks of a message, joined.
pub fn message_text(message: &AgentMessage) -> String {
    let blocks = |blocks: &[ContentBlock]| {
        blocks
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Text(text) => Some(text.text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    match message {
        AgentMessage::User(user) => user.content.text("\n"),
        AgentMessage::Assistant(assistant) => blocks(&assistant.content),
        AgentMessage::ToolResult(result) => blocks(&result.content),
        AgentMessage::System(system) => system.content.text("\n"),
        AgentMessage::Custom(custom) => custom.content.text("\n"),
        _ => String::new(),
    }
}

/// How a step ends.
#[derive(Debug, Clone, PartialEq)]
pub enum ScriptedReply {
    /// Text, `stopReason: "stop"`.
    Text(String),
    /// Optional text and tool calls, `stopReason: "toolUse"`.
    Tools {
        /// Text before the calls.
        text: Option<String>,
        /// `(tool name, arguments)`.
        calls: Vec<(String, Value)>,
    },
    /// A provider error (`stopReason: "error"` with this message); use an
    /// overflow text such as "prompt is too long" for a context overflow.
    Error(String),
    /// `stopReason: "length"` with this partial text.
    Length(String),
    /// `stopReason: "aborted"` although nobody aborted (a synthetic abort).
    SyntheticAbort,
    /// The user presses Escape while the response streams: an actual abort.
    UserAbort,
}

/// Something the user does while the response streams.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UserAction {
    /// Types a steering message.
    Steer(String),
    /// Queues a follow-up message.
    FollowUp(String),
    /// Runs a slash command, e.g. `/fresh-window`.
    Command(String),
}

/// One scripted response.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// What the user does while it streams, in order.
    pub actions: Vec<UserAction>,
    /// The response.
    pub reply: ScriptedReply,
    /// Input tokens to report instead of the chars/4 estimate.
    pub input_tokens: Option<u64>,
}

impl Step {
    fn of(reply: ScriptedReply) -> Self {
        Self {
            actions: Vec::new(),
            reply,
            input_tokens: None,
        }
    }

    /// A text answer.
    pub fn text(text: impl Into<String>) -> Self {
        Self::of(ScriptedReply::Text(text.into()))
    }

    /// One tool call.
    pub fn tool(name: &str, arguments: Value) -> Self {
        Self::tools(None, vec![(name, arguments)])
    }

    /// Tool calls with optional text.
    pub fn tools(text: Option<&str>, calls: Vec<(&str, Value)>) -> Self {
        Self::of(ScriptedReply::Tools {
            text: text.map(str::to_owned),
            calls: calls
                .into_iter()
                .map(|(name, arguments)| (name.to_owned(), arguments))
                .collect(),
        })
    }

    /// A provider error.
    pub fn error(message: impl Into<String>) -> Self {
        Self::of(ScriptedReply::Error(message.into()))
    }

    /// Any reply.
    pub fn reply(reply: ScriptedReply) -> Self {
        Self::of(reply)
    }

    /// Adds a user action during the stream.
    pub fn during(mut self, action: UserAction) -> Self {
        self.actions.push(action);
        self
    }

    /// Reports this many input tokens.
    pub fn with_input_tokens(mut self, tokens: u64) -> Self {
        self.input_tokens = Some(tokens);
        self
    }
}

type StepFn = Box<dyn FnMut(&ModelRequest<'_>) -> Step + Send>;

/// The scripted model.
pub struct ScriptedModel {
    /// Identity and limits.
    pub info: ModelInfo,
    steps: VecDeque<StepFn>,
    calls: usize,
}

impl fmt::Debug for ScriptedModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScriptedModel")
            .field("info", &self.info)
            .field("steps_left", &self.steps.len())
            .field("calls", &self.calls)
            .finish()
    }
}

impl ScriptedModel {
    /// A model `scripted/scripted-1` with this context window.
    pub fn new(context_window: u64) -> Self {
        Self {
            info: ModelInfo {
                provider: "scripted".to_owned(),
                id: "scripted-1".to_owned(),
                context_window,
                max_tokens: 8192,
            },
            steps: VecDeque::new(),
            calls: 0,
        }
    }

    /// Queues a fixed step.
    pub fn push(&mut self, step: Step) -> &mut Self {
        self.steps.push_back(Box::new(move |_| step.clone()));
        self
    }

    /// Queues a step decided from the request.
    pub fn push_with(
        &mut self,
        step: impl FnMut(&ModelRequest<'_>) -> Step + Send + 'static,
    ) -> &mut Self {
        self.steps.push_back(Box::new(step));
        self
    }

    /// Steps not used yet.
    pub fn steps_left(&self) -> usize {
        self.steps.len()
    }

    /// Requests answered so far.
    pub fn calls(&self) -> usize {
        self.calls
    }

    /// The next step; an error reply when the script ran out.
    pub(crate) fn respond(&mut self, request: &ModelRequest<'_>) -> Step {
        self.calls += 1;
        match self.steps.pop_front() {
            Some(mut step) => step(request),
            None => Step::error("scripted model: no step left"),
        }
    }
}

/// Characters of a reply, for its output tokens.
pub(crate) fn reply_chars(reply: &ScriptedReply) -> usize {
    match reply {
        ScriptedReply::Text(text) | ScriptedReply::Length(text) => notesoup_pi::json::js_len(text),
        ScriptedReply::Tools { text, calls } => {
            text.as_deref().map_or(0, notesoup_pi::json::js_len)
                + calls
                    .iter()
                    .map(|(name, args)| {
                        notesoup_pi::json::js_len(name) + notesoup_pi::json::js_json_len(args)
                    })
                    .sum::<usize>()
        }
        ScriptedReply::Error(_) | ScriptedReply::SyntheticAbort | ScriptedReply::UserAbort => 0,
    }
}
