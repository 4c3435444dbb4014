//! The tools notesoup registers on dsh, under their plain names.
//!
//! The history tools are core's, with core's schemas and descriptions.
//! `get_context_remaining` and `wipe_memory` answer with plain JSON text; the
//! sidecar decides them from the session's budget and reset state.

use notesoup_core::history::History;
use notesoup_core::tools::history as core;
use notesoup_core::tools::{ToolOutput, parse_arguments, schemas};
use serde::Serialize;
use serde::de::DeserializeOwned;
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

/// Every tool, in registration order: the history tools, then the budget
/// and reset tools.
pub fn manifest() -> Vec<ToolManifest> {
    let shared = schemas::history().into_iter().map(|tool| ToolManifest {
        name: tool.name.to_owned(),
        description: tool.description,
        parameters: tool.input_schema,
        sequential: false,
    });
    shared.chain([
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

/// The history tools' names, as core's schemas name them.
pub const HISTORY_TOOLS: [&str; 4] = [
    "history_windows",
    "history_list",
    "history_search",
    "history_read",
];

/// Runs one history tool over a session's history; `None` for another name.
pub fn history_tool(name: &str, history: &History, arguments: Value) -> Option<ToolOutput> {
    let output = match name {
        "history_windows" => run(arguments, |p| core::history_windows(history, &p)),
        "history_list" => run(arguments, |p| core::history_list(history, &p)),
        "history_search" => run(arguments, |p| core::history_search(history, &p)),
        "history_read" => run(arguments, |p| core::history_read(history, &p)),
        _ => return None,
    };
    Some(output)
}

fn run<P: DeserializeOwned>(arguments: Value, op: impl FnOnce(P) -> ToolOutput) -> ToolOutput {
    match parse_arguments::<P>(arguments) {
        Ok(params) => op(params),
        Err(refusal) => ToolOutput::refusal(&refusal),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_manifest_lists_every_dispatched_tool_once() {
        let names: Vec<String> = manifest().into_iter().map(|t| t.name).collect();
        let mut expected: Vec<&str> = HISTORY_TOOLS.to_vec();
        expected.extend([GET_CONTEXT_REMAINING, WIPE_MEMORY]);
        assert_eq!(names, expected);
        for tool in manifest() {
            assert_eq!(
                tool.parameters["additionalProperties"], false,
                "{}",
                tool.name
            );
        }
    }
}
