//! `notesoup dream-tools --notes-home <dir>`: the dreamer's tools over MCP,
//! for the headless Claude Code session `notesoup dream` starts. Core's
//! dream tool table and router (jailed write, edit and the wastebasket
//! rule's delete, read-only read, ls, find and grep); nothing else.

use notesoup_core::dream::{DreamTools, call_dream_tool, dream_tool_table};
use serde_json::Value;

use super::{CallMeta, McpTools, ToolAnswer, ToolDef};

impl McpTools for DreamTools {
    fn tools(&self) -> Vec<ToolDef> {
        dream_tool_table()
            .into_iter()
            .map(|tool| ToolDef {
                name: tool.name.to_owned(),
                description: tool.description.to_owned(),
                input_schema: tool.input_schema,
                output_schema: None,
                // The writing tools are the sequential ones.
                read_only: Some(!tool.sequential),
            })
            .collect()
    }

    fn call(&mut self, name: &str, arguments: Value, _meta: &CallMeta<'_>) -> ToolAnswer {
        let (text, is_error) = match call_dream_tool(self, name, arguments) {
            Some(Ok(text)) => (text, false),
            Some(Err(message)) => (format!("error: {message}"), true),
            // Only listed names reach here.
            None => (format!("error: unknown tool {name}"), true),
        };
        ToolAnswer {
            text,
            is_error,
            structured: None,
        }
    }
}
