//! The dreamer's tools on Pi: core's jailed write, edit and wastebasket-rule
//! delete, and its read-only read, grep, find and ls, served by
//! `notesoup-pi dream-tools --notes-home HOME` in core's JSON-lines protocol
//! ([`notesoup_core::dream::serve_dream_tools`]) to the dream extension
//! (`package/dreamer/dream.ts`) inside the Pi that `notesoup-pi dream`
//! starts.

use notesoup_core::dream::dream_tool_table;
pub use notesoup_core::dream::serve_dream_tools as serve;
use serde_json::{Value, json};

/// The dream tools as the extension registers them: core's table, as
/// `[{name, description, parameters, sequential}]`.
pub fn manifest() -> Value {
    Value::Array(
        dream_tool_table()
            .into_iter()
            .map(|tool| {
                json!({
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.input_schema,
                    "sequential": tool.sequential,
                })
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_manifest_is_core_s_table_and_writes_go_alone() {
        let manifest = manifest();
        let names: Vec<&str> = manifest
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            ["read", "grep", "find", "ls", "write", "edit", "delete"]
        );
        for tool in manifest.as_array().unwrap() {
            let writes = ["write", "edit", "delete"].contains(&tool["name"].as_str().unwrap());
            assert_eq!(tool["sequential"], writes, "{tool}");
            assert_eq!(tool["parameters"]["type"], "object");
        }
    }
}
