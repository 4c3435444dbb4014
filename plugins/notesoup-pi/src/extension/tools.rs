//! The tools notesoup registers on Pi, in registration order: the context
//! runtime and budget (`get_context_remaining`, `wipe_memory`), then the
//! history tools, then the notes tools — all from core's one tool table,
//! every call routed through core's `call_tool`.
//!
//! Shared tools return core's bounded result: its text is the model-facing
//! content, the flat result travels as `structuredContent`, and `isError`
//! mirrors a refusal. The two budget tools answer with plain JSON text.

use notesoup_core::history::History;
use notesoup_core::notes::NoteStore;
use notesoup_core::tools::{
    BudgetHost, Refusal, RefusalCode, ResetRequest, Tool, ToolContext, ToolFamily, ToolOutput,
    call_tool, tool_table,
};
use serde_json::json;

use super::Notesoup;
use crate::history::host_history;
use crate::host::{AgentToolResult, ExecutionMode, PiHost, ToolDescriptor, ToolInvocation};
use crate::reset::window::active_window;
use crate::reset::{ResetEffect, ResetEvent};
use crate::session::ContentBlock;

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
    [ToolFamily::Budget, ToolFamily::History, ToolFamily::Notes]
        .into_iter()
        .flat_map(|family| {
            tool_table()
                .iter()
                .filter(move |tool| tool.family == family)
        })
        .map(|tool| ToolDescriptor {
            name: tool.name.to_owned(),
            label: label(tool.name),
            description: tool.description.clone(),
            prompt_snippet: None,
            prompt_guidelines: None,
            parameters: tool.input_schema.clone(),
            output_schema: tool.output_schema.clone(),
            execution_mode: tool.sequential.then_some(ExecutionMode::Sequential),
        })
        .collect()
}

/// Core's result as Pi's tool result: a shared tool's flat result travels as
/// `structuredContent`; a budget tool's plain JSON is its text alone.
fn pi_result(name: &str, output: ToolOutput) -> AgentToolResult {
    let shared = Tool::find(name).is_some_and(|tool| tool.family != ToolFamily::Budget);
    AgentToolResult {
        structured_content: (shared || output.is_error).then_some(output.json),
        content: vec![ContentBlock::text(output.text)],
        details: json!({}),
        usage: None,
        terminate: output.terminate.then_some(true),
        is_error: output.is_error.then_some(true),
    }
}

impl Notesoup {
    pub(super) fn run_tool(
        &mut self,
        host: &mut dyn PiHost,
        call: &ToolInvocation,
    ) -> AgentToolResult {
        let mut tools = PiTools {
            notesoup: self,
            host,
        };
        let output = call_tool(&mut tools, &call.name, call.params.clone());
        pi_result(&call.name, output)
    }
}

/// The extension and its host, as core's tools see them.
struct PiTools<'a> {
    notesoup: &'a mut Notesoup,
    host: &'a mut dyn PiHost,
}

impl ToolContext for PiTools<'_> {
    /// This session's identity and the current model.
    fn notes(&mut self) -> Result<NoteStore, Refusal> {
        self.notesoup
            .store(self.host)
            .map_err(|error| Refusal::new(RefusalCode::InternalError, error))
    }

    fn history(&mut self) -> Result<History, Refusal> {
        host_history(self.host).map_err(|error| {
            Refusal::new(
                RefusalCode::InternalError,
                format!("the session history could not be decoded: {error}"),
            )
        })
    }

    fn budget(&mut self) -> Option<&mut dyn BudgetHost> {
        Some(self)
    }
}

impl BudgetHost for PiTools<'_> {
    /// The countdown to the warning line in the active window.
    fn remaining_tokens(&mut self) -> Option<u64> {
        let policy = self.notesoup.policy(self.host);
        let remaining = {
            let branch = self.host.window_branch(None);
            let window = active_window(&branch, self.host.session_id());
            Notesoup::remaining(self.host, &branch, &window)
        };
        policy.budget.countdown(remaining)
    }

    /// Marks the window for a reset at the end of this tool batch; repeats
    /// in the same window (or inside a manual close-out) only acknowledge.
    fn request_reset(&mut self) -> ResetRequest {
        if !self.notesoup.enabled {
            return ResetRequest::Off;
        }
        let window_id = active_window(&self.host.window_branch(None), self.host.session_id()).id;
        match self.notesoup.apply(ResetEvent::ToolRequest { window_id }) {
            ResetEffect::AlreadyPending => ResetRequest::AlreadyPending,
            _ => ResetRequest::Requested,
        }
    }
}
