//! The tools notesoup registers on dsh, under their plain names.
//!
//! `get_context_remaining` and `wipe_memory` answer with plain JSON text; the
//! sidecar decides them from the session's budget and reset state.

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

/// Every tool, in registration order.
pub fn manifest() -> Vec<ToolManifest> {
    vec![
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
    ]
}
