//! Tools: the host's own tools (Pi's built-in tools, in miniature) and the
//! tool batch of one assistant message, each result through `tool_result`.

use serde_json::Value;

use notesoup_pi::host::{AgentToolResult, PiExtension, ToolInvocation, ToolResultEvent};
use notesoup_pi::session::{
    AgentMessage, AssistantMessage, ContentBlock, Extra, ToolCall, ToolDeclaration,
    ToolResultMessage,
};

use super::Harness;

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

impl<E: PiExtension> Harness<E> {
    /// The tool batch in call order; the run stops after it only when every
    /// result sets `terminate`.
    pub(super) fn execute_tools(
        &mut self,
        assistant: &AssistantMessage,
    ) -> (Vec<ToolResultMessage>, bool) {
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

    pub(super) fn execute_tool(&mut self, call: &ToolCall) -> AgentToolResult {
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
}
