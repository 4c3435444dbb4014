//! `PiExtension`: the events a host calls, with typed results (pi-host.md §9.1).

use notesoup_core::tools::CompactJson;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::boundary::{BoundaryResult, BoundaryState};
use super::context_edit::{MessageSummary, WindowEdit};
use super::events::{
    AgentSettledEvent, BeforeAgentStartEvent, BeforeAgentStartResult, InputEvent, InputResult,
    ModelSelectEvent, SessionBeforeCompactEvent, SessionBeforeCompactResult,
    SessionBeforeTreeEvent, SessionBeforeTreeResult, SessionCompactEvent, SessionShutdownEvent,
    SessionStartEvent, SessionTreeEvent, ToolResultEvent, ToolResultPatch, TurnEndEvent,
    TurnStartEvent,
};
use super::pi_host::{HostError, PiHost};
use crate::json::pi_object;
use crate::session::{AgentMessage, ContentBlock, Usage};

pi_object! {
    /// A tool as registered with `pi.registerTool`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct ToolDescriptor {
        /// The name the model calls.
        pub name: String,
        /// A label for the UI.
        pub label: String,
        /// What the model reads about it.
        pub description: String,
        /// A one-line prompt snippet.
        pub prompt_snippet?: String,
        /// Prompt guidelines.
        pub prompt_guidelines?: Vec<String>,
        /// JSON Schema of the arguments.
        pub parameters: Value,
        /// JSON Schema of a successful result's `structuredContent` (1.6.0
        /// `outputSchema`; programmatic callers such as codemode read it).
        pub output_schema?: Value,
        /// `"sequential"`: calls of this tool never overlap (writing tools).
        pub execution_mode?: ExecutionMode,
    }
}

/// `ToolDefinition.executionMode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExecutionMode {
    /// The batch runs one call at a time when it holds this tool.
    Sequential,
    /// Calls may run concurrently.
    Parallel,
}

/// A command as registered with `pi.registerCommand`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandDescriptor {
    /// The name, without the slash.
    pub name: String,
    /// Shown in the command list.
    pub description: String,
    /// The arguments the host offers as completions after the name.
    #[serde(default)]
    pub arguments: Vec<String>,
}

/// One tool call to execute.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolInvocation {
    /// The call id.
    pub tool_call_id: String,
    /// The tool.
    pub name: String,
    /// The arguments object.
    pub params: Value,
}

pi_object! {
    /// `AgentToolResult`: what a tool returns.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct AgentToolResult {
        /// Text and image blocks for the model.
        pub content: Vec<ContentBlock>,
        /// Tool details, stored in the session.
        pub details: Value,
        /// Usage of the tool's own execution.
        pub usage?: Usage,
        /// Stop the run after this tool batch (when every result sets it).
        pub terminate?: bool,
        /// A non-throwing error result (1.6.0).
        pub is_error?: bool,
        /// The result for programmatic callers (1.6.0 `structuredContent`);
        /// neither sent to the model nor stored in the session. Core's compact
        /// JSON, serialized once.
        pub structured_content?: CompactJson,
    }
}

impl AgentToolResult {
    /// An error result carrying `message`, as Pi makes of a thrown error.
    pub fn error(message: impl Into<String>) -> Self {
        Self {
            content: vec![ContentBlock::text(message)],
            details: Value::Object(serde_json::Map::new()),
            usage: None,
            terminate: None,
            is_error: Some(true),
            structured_content: None,
        }
    }
}

/// The handlers a Pi host calls. Every handler has a neutral default, so an
/// extension implements only what it listens to. A host at
/// [`PiApiLevel::V0_58`](super::PiApiLevel::V0_58) never calls
/// `agent_before_settle` or `context_with_system` and ignores `turn_end`
/// results.
pub trait PiExtension {
    /// The tools to register.
    fn tools(&self) -> Vec<ToolDescriptor> {
        Vec::new()
    }

    /// The commands to register.
    fn commands(&self) -> Vec<CommandDescriptor> {
        Vec::new()
    }

    /// Runs one of [`Self::tools`].
    fn execute_tool(&mut self, _host: &mut dyn PiHost, call: &ToolInvocation) -> AgentToolResult {
        AgentToolResult::error(format!("Tool {} not found", call.name))
    }

    /// Runs one of [`Self::commands`] with its argument text.
    fn run_command(
        &mut self,
        _host: &mut dyn PiHost,
        _name: &str,
        _args: &str,
    ) -> Result<(), HostError> {
        Ok(())
    }

    /// `session_start`.
    fn session_start(&mut self, _host: &mut dyn PiHost, _event: &SessionStartEvent) {}

    /// `session_tree`.
    fn session_tree(&mut self, _host: &mut dyn PiHost, _event: &SessionTreeEvent) {}

    /// `session_before_tree`.
    fn session_before_tree(
        &mut self,
        _host: &mut dyn PiHost,
        _event: &SessionBeforeTreeEvent,
    ) -> SessionBeforeTreeResult {
        SessionBeforeTreeResult::default()
    }

    /// `session_before_compact`.
    fn session_before_compact(
        &mut self,
        _host: &mut dyn PiHost,
        _event: &SessionBeforeCompactEvent,
    ) -> SessionBeforeCompactResult {
        SessionBeforeCompactResult::default()
    }

    /// `session_compact`.
    fn session_compact(&mut self, _host: &mut dyn PiHost, _event: &SessionCompactEvent) {}

    /// `session_shutdown`.
    fn session_shutdown(&mut self, _host: &mut dyn PiHost, _event: &SessionShutdownEvent) {}

    /// `model_select`.
    fn model_select(&mut self, _host: &mut dyn PiHost, _event: &ModelSelectEvent) {}

    /// `before_agent_start`.
    fn before_agent_start(
        &mut self,
        _host: &mut dyn PiHost,
        _event: &BeforeAgentStartEvent,
    ) -> BeforeAgentStartResult {
        BeforeAgentStartResult::default()
    }

    /// `turn_start`.
    fn turn_start(&mut self, _host: &mut dyn PiHost, _event: &TurnStartEvent) {}

    /// `turn_end` (≥ 0.87 returns boundary drafts).
    fn turn_end(&mut self, _host: &mut dyn PiHost, _event: &TurnEndEvent) -> BoundaryResult {
        BoundaryResult::keep()
    }

    /// Whether the extension needs `event` delivered now. A host may leave
    /// an event it is not needed for undelivered (Pi then skips work it
    /// does for events that have handlers); its handler must then do
    /// nothing whatever the event would carry. Every event by default.
    fn needs(&self, _event: &str) -> bool {
        true
    }

    /// The context tokens (Pi's `getContextUsage()` count after the turn:
    /// the turn's reply's usage and the estimate of the messages after it)
    /// from which a completed turn needs `turn_end` delivered even while
    /// [`needs`](Self::needs) says it is not needed; a turn that does not
    /// complete (an error, an abort, a cut reply) always does. A host that
    /// leaves `turn_end` undelivered by `needs` reads the turn's messages
    /// against this line. `None`: every turn needs it (the default).
    fn turn_end_at(&self) -> Option<u64> {
        None
    }

    /// `agent_before_settle` (≥ 0.87).
    fn agent_before_settle(
        &mut self,
        _host: &mut dyn PiHost,
        _state: &BoundaryState,
    ) -> BoundaryResult {
        BoundaryResult::keep()
    }

    /// `agent_settled`.
    fn agent_settled(&mut self, _host: &mut dyn PiHost, _event: &AgentSettledEvent) {}

    /// `context`: the messages to add after Pi's (its messages without
    /// system messages, ≥ 0.87) for this provider request; none keeps Pi's
    /// as they are. The hook never sees Pi's messages: it decides from the
    /// session, so the bridge does not carry them.
    fn context(&mut self, _host: &mut dyn PiHost) -> Vec<AgentMessage> {
        Vec::new()
    }

    /// `context_with_system` (≥ 0.87): the full transcript, summarised (each
    /// message's role, custom type and boot details; system messages
    /// whole). `Some` is the edit the host applies to its messages, which
    /// must keep a system message first; the hook never sees the messages'
    /// content, so the bridge does not carry it.
    fn context_with_system(
        &mut self,
        _host: &mut dyn PiHost,
        _messages: &[MessageSummary],
    ) -> Option<WindowEdit> {
        None
    }

    /// `tool_result`: a patch merged field by field.
    fn tool_result(&mut self, _host: &mut dyn PiHost, _event: &ToolResultEvent) -> ToolResultPatch {
        ToolResultPatch::default()
    }

    /// `input`.
    fn input(&mut self, _host: &mut dyn PiHost, _event: &InputEvent) -> InputResult {
        InputResult::Continue
    }
}
