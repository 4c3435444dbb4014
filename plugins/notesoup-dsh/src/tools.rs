//! The tools notesoup registers on dsh, under their plain names.
//!
//! Every tool is core's, from core's one table, and every call goes through
//! core's `call_tool` (see `server.rs`): the notes and history tools with
//! core's schemas, operations and line-diff receipts; `get_context_remaining`
//! and `wipe_memory` answer with plain JSON text over the session's budget and
//! reset state.

use notesoup_core::tools::tool_table;
use serde::Serialize;
use serde_json::Value;

/// One tool as the bundle registers it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolManifest {
    /// The name the model calls.
    pub name: String,
    /// The model-facing description.
    pub description: String,
    /// The parameters' JSON Schema.
    pub parameters: Value,
    /// Must not overlap with sibling calls (writes).
    pub sequential: bool,
}

/// Every tool of core's table, in its order: the notes tools, the history
/// tools, then the budget and reset tools.
pub fn manifest() -> Vec<ToolManifest> {
    tool_table()
        .iter()
        .map(|tool| ToolManifest {
            name: tool.name.to_owned(),
            description: tool.description.clone(),
            parameters: tool.input_schema.clone(),
            sequential: tool.sequential,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_manifest_lists_every_dispatched_tool_once() {
        let names: Vec<String> = manifest().into_iter().map(|t| t.name).collect();
        assert_eq!(
            names,
            [
                "notes_write",
                "notes_update",
                "notes_read",
                "notes_list",
                "notes_search",
                "history_windows",
                "history_list",
                "history_search",
                "history_read",
                "get_context_remaining",
                "wipe_memory",
            ]
        );
        for tool in manifest() {
            assert_eq!(
                tool.parameters["additionalProperties"], false,
                "{}",
                tool.name
            );
            let writes =
                ["notes_write", "notes_update", "wipe_memory"].contains(&tool.name.as_str());
            assert_eq!(tool.sequential, writes, "{}", tool.name);
        }
    }
}
