//! `notesoup dream-tools --notes-home <dir>`: the dreamer's tools over MCP,
//! for the headless Claude Code session `notesoup dream` starts. Core's
//! dream tool table and router (jailed write, edit and the wastebasket rule's delete,
//! read-only read, ls, find and grep); nothing else.

use notesoup_core::dream::{DreamTools, call_dream_tool, dream_tool_table};
use serde_json::Value;

use super::protocol::{CallMeta, RpcError, ToolDef, ToolHost, ToolText, code};

/// The MCP server name the dreamer session gives these tools
/// (`mcp__dream__<tool>`).
pub const SERVER_NAME: &str = "dream";

/// The dreamer's tools for one notes home.
#[derive(Debug)]
pub struct DreamToolHost {
    tools: DreamTools,
}

impl DreamToolHost {
    /// Tools jailed to `tools`' home.
    pub fn new(tools: DreamTools) -> Self {
        Self { tools }
    }
}

impl ToolHost for DreamToolHost {
    fn tools(&self) -> Vec<ToolDef> {
        dream_tool_table()
            .into_iter()
            .map(|tool| ToolDef {
                name: tool.name.to_owned(),
                description: tool.description.to_owned(),
                input_schema: tool.input_schema,
                // The writing tools are the sequential ones.
                read_only: Some(!tool.sequential),
                output_schema: None,
            })
            .collect()
    }

    fn call(
        &mut self,
        name: &str,
        arguments: Value,
        _meta: &CallMeta,
    ) -> Result<ToolText, RpcError> {
        match call_dream_tool(&self.tools, name, arguments) {
            Some(Ok(text)) => Ok(ToolText {
                text,
                is_error: false,
                structured: None,
            }),
            Some(Err(message)) => Ok(ToolText {
                text: format!("error: {message}"),
                is_error: true,
                structured: None,
            }),
            None => Err(RpcError::new(
                code::INVALID_PARAMS,
                format!("unknown tool: {}", super::protocol::shown(name)),
            )),
        }
    }
}
