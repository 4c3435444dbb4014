//! The tools `notesoup mcp` serves: the one tool host of Claude Code
//! ([`ClaudeTools`]), listed as Claude lists them. Results are text only,
//! unless `NOTESOUP_MCP_STRUCTURED` asks for each tool's `outputSchema`
//! and a success's `structuredContent` (core's compact JSON, as it is)
//! next to the text: Claude Code 2.1.332 would hand the model that JSON
//! instead of the text, so the plugin leaves it off.

use std::io::Write;

use serde_json::Value;

use super::{CallMeta, McpTools, ToolAnswer, ToolDef};
use crate::tools::{ClaudeTools, claude_description, claude_tools};

impl McpTools for ClaudeTools {
    fn tools(&self) -> Vec<ToolDef> {
        let structured = self.env().mcp_structured;
        claude_tools()
            .map(|tool| ToolDef {
                name: tool.name.to_owned(),
                description: claude_description(tool),
                input_schema: tool.input_schema.clone(),
                output_schema: structured.then(|| tool.output_schema.clone()).flatten(),
                read_only: Some(tool.read_only),
            })
            .collect()
    }

    fn call(&mut self, name: &str, arguments: Value, meta: &CallMeta<'_>) -> ToolAnswer {
        let output = self.run(name, arguments, meta.tool_use_id);
        for warning in self.take_warnings() {
            // Claude Code keeps a server's stderr in its logs; a closed
            // stderr leaves nowhere to say it.
            let _ = writeln!(std::io::stderr(), "{warning}");
        }
        // Successes only: a refusal's `{error, code}` is not the tool's
        // output schema, and its text is what every client shows.
        let structured = self.env().mcp_structured && !output.is_error;
        ToolAnswer {
            structured: structured.then_some(output.json),
            text: output.text,
            is_error: output.is_error,
        }
    }
}
