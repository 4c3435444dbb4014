//! The tools notesoup registers on dsh, under their plain names.
//!
//! The notes and history tools are core's, with core's schemas, descriptions
//! and operations (called by name through core's dispatch). A `notes_update`
//! receipt shows core's simple diff, `note <kind>`. `get_context_remaining`
//! and `wipe_memory` answer with plain JSON text; the sidecar decides them
//! from the session's budget and reset state.

use notesoup_core::tools::schemas;
use serde::Serialize;
use serde_json::{Value, json};

/// `get_context_remaining`.
pub const GET_CONTEXT_REMAINING: &str = "get_context_remaining";
/// `wipe_memory`.
pub const WIPE_MEMORY: &str = "wipe_memory";

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

fn no_parameters() -> Value {
    json!({"type": "object", "properties": {}, "additionalProperties": false})
}

/// Every tool, in registration order: the notes tools, the history tools,
/// then the budget and reset tools.
pub fn manifest() -> Vec<ToolManifest> {
    let shared = schemas::all().into_iter().map(|tool| ToolManifest {
        name: tool.name.to_owned(),
        description: tool.description,
        parameters: tool.input_schema,
        sequential: tool.sequential,
    });
    shared
        .chain([
            ToolManifest {
                name: GET_CONTEXT_REMAINING.into(),
                description: "How many tokens are left before this context window closes out (zero = wiped). \
                              Returns {\"remaining_tokens\": N}, or null when usage is unknown."
                    .into(),
                parameters: no_parameters(),
                sequential: false,
            },
            ToolManifest {
                name: WIPE_MEMORY.into(),
                description: "Clear your in-context memory and start a fresh context window. Your session, notes, and history survive.".into(),
                parameters: no_parameters(),
                sequential: true,
            },
        ])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use notesoup_core::tools::{HISTORY_TOOLS, NOTES_TOOLS};

    #[test]
    fn the_manifest_lists_every_dispatched_tool_once() {
        let names: Vec<String> = manifest().into_iter().map(|t| t.name).collect();
        let mut expected: Vec<&str> = NOTES_TOOLS.to_vec();
        expected.extend(HISTORY_TOOLS);
        expected.extend([GET_CONTEXT_REMAINING, WIPE_MEMORY]);
        assert_eq!(names, expected);
        for tool in manifest() {
            assert_eq!(
                tool.parameters["additionalProperties"], false,
                "{}",
                tool.name
            );
            let writes = ["notes_write", "notes_update", WIPE_MEMORY].contains(&tool.name.as_str());
            assert_eq!(tool.sequential, writes, "{}", tool.name);
        }
    }
}
