//! The tools notesoup registers on Pi, in registration order: the context
//! runtime and budget (`get_context_remaining`, `wipe_memory`), then the
//! history tools, then the notes tools.
//!
//! Shared tools return core's bounded result: its text is the model-facing
//! content, the flat result travels as `structuredContent`, and `isError`
//! mirrors a refusal. The two budget tools answer with plain JSON text.

use notesoup_core::tools::{
    HISTORY_TOOLS, NOTES_TOOLS, Refusal, RefusalCode, ToolOutput, call_history_tool,
    call_notes_tool, schemas,
};
use serde_json::{Value, json};

use super::{Notesoup, texts};
use crate::diff::generate_diff_string;
use crate::history::host_history;
use crate::host::{AgentToolResult, ExecutionMode, PiHost, ToolDescriptor, ToolInvocation};
use crate::reset::window::active_window;
use crate::reset::{ResetEffect, ResetEvent};
use crate::session::ContentBlock;

/// `get_context_remaining`.
pub const GET_CONTEXT_REMAINING: &str = "get_context_remaining";
/// `wipe_memory`.
pub const WIPE_MEMORY: &str = "wipe_memory";

fn no_parameters() -> Value {
    json!({"type": "object", "properties": {}, "additionalProperties": false})
}

/// `notes_write` → `Notes write`.
fn label(name: &str) -> String {
    let spaced = name.replace('_', " ");
    let mut chars = spaced.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

/// Every tool, in registration order.
pub fn descriptors() -> Vec<ToolDescriptor> {
    let plain = |name: &str, description: &str, mode| ToolDescriptor {
        name: name.to_owned(),
        label: label(name),
        description: description.to_owned(),
        prompt_snippet: None,
        prompt_guidelines: None,
        parameters: no_parameters(),
        execution_mode: mode,
    };
    let mut tools = vec![
        plain(GET_CONTEXT_REMAINING, texts::REMAINING_DESCRIPTION, None),
        plain(
            WIPE_MEMORY,
            texts::WIPE_DESCRIPTION,
            Some(ExecutionMode::Sequential),
        ),
    ];
    let shared = schemas::history().into_iter().chain(schemas::notes());
    tools.extend(shared.map(|schema| ToolDescriptor {
        name: schema.name.to_owned(),
        label: label(schema.name),
        description: schema.description,
        prompt_snippet: None,
        prompt_guidelines: None,
        parameters: schema.input_schema,
        execution_mode: schema.sequential.then_some(ExecutionMode::Sequential),
    }));
    tools
}

/// A JSON answer as text (the budget tools' protocol).
fn plain_json(value: &Value, terminate: bool) -> AgentToolResult {
    AgentToolResult {
        content: vec![ContentBlock::text(value.to_string())],
        details: json!({}),
        usage: None,
        terminate: terminate.then_some(true),
        is_error: None,
        structured_content: None,
    }
}

/// Core's bounded result as Pi's tool result.
fn shared(output: ToolOutput) -> AgentToolResult {
    AgentToolResult {
        structured_content: Some(output.structured()),
        content: vec![ContentBlock::text(output.text)],
        details: json!({}),
        usage: None,
        terminate: None,
        is_error: output.is_error.then_some(true),
    }
}

fn refusal(code: RefusalCode, message: &str) -> AgentToolResult {
    shared(ToolOutput::refusal(&Refusal::new(code, message)))
}

impl Notesoup {
    pub(super) fn run_tool(
        &mut self,
        host: &mut dyn PiHost,
        call: &ToolInvocation,
    ) -> AgentToolResult {
        let params = call.params.clone();
        match call.name.as_str() {
            GET_CONTEXT_REMAINING => self.context_remaining(host),
            WIPE_MEMORY => self.wipe_memory(host),
            name if HISTORY_TOOLS.contains(&name) => history_tool(host, name, params),
            name if NOTES_TOOLS.contains(&name) => self.notes_tool(host, name, params),
            _ => AgentToolResult::error(format!("Tool {} not found", call.name)),
        }
    }

    /// A notes tool under this session's identity and the current model;
    /// `notes_update` diffs render in Pi's own style.
    fn notes_tool(&mut self, host: &dyn PiHost, name: &str, params: Value) -> AgentToolResult {
        let store = match self.store(host) {
            Ok(store) => store,
            Err(error) => return refusal(RefusalCode::InternalError, &error),
        };
        let diff = |change: &notesoup_core::notes::Change| {
            generate_diff_string(&change.before, &change.after)
        };
        match call_notes_tool(&store, name, params, &diff) {
            Some(output) => shared(output),
            None => AgentToolResult::error(format!("Tool {name} not found")),
        }
    }

    /// `{"remaining_tokens": N | null}`: the countdown to the warning line.
    fn context_remaining(&mut self, host: &mut dyn PiHost) -> AgentToolResult {
        let policy = self.policy(host);
        let remaining = {
            let branch = host.branch(None);
            let window = active_window(&branch, host.session_id());
            Self::remaining(host, &branch, &window)
        };
        plain_json(
            &json!({"remaining_tokens": policy.budget.countdown(remaining)}),
            false,
        )
    }

    /// Marks the window for a reset at the end of this tool batch; repeats
    /// in the same window (or inside a manual close-out) only acknowledge.
    fn wipe_memory(&mut self, host: &mut dyn PiHost) -> AgentToolResult {
        if !self.enabled {
            return plain_json(&json!({"error": texts::WIPE_WHILE_OFF}), false);
        }
        let window_id = active_window(&host.branch(None), host.session_id()).id;
        let status = match self.apply(ResetEvent::ToolRequest { window_id }) {
            ResetEffect::AlreadyPending => "rollover_already_pending",
            _ => "rollover_requested",
        };
        plain_json(&json!({ "status": status }), true)
    }
}

fn history_tool(host: &dyn PiHost, name: &str, params: Value) -> AgentToolResult {
    let history = match host_history(host) {
        Ok(history) => history,
        Err(error) => {
            return refusal(
                RefusalCode::InternalError,
                &format!("the session history could not be decoded: {error}"),
            );
        }
    };
    match call_history_tool(&history, name, params) {
        Some(output) => shared(output),
        None => AgentToolResult::error(format!("Tool {name} not found")),
    }
}
