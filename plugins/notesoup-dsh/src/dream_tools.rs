//! The dreamer's tools on dsh: core's jailed write, edit and wastebasket-rule
//! delete, and its read-only read, ls, find and grep, served as JSON lines
//! by `notesoup-dsh dream-tools --notes-home HOME` to the bundle's
//! `notesoup/dsh/dream` row inside the headless dsh `dream` starts.
//!
//! The protocol is core's: [`notesoup_core::dream::serve_dream_tools`].

use notesoup_core::dream::dream_tool_table;

use crate::tools::ToolManifest;

/// The dream tools as the bundle registers them: core's table.
pub fn manifest() -> Vec<ToolManifest> {
    dream_tool_table()
        .into_iter()
        .map(|tool| ToolManifest {
            name: tool.name.to_owned(),
            description: tool.description.to_owned(),
            parameters: tool.input_schema,
            sequential: tool.sequential,
        })
        .collect()
}

/// Serves dream-tool requests until the input ends: core's JSON-lines
/// protocol ([`notesoup_core::dream::serve_dream_tools`]).
pub use notesoup_core::dream::serve_dream_tools as serve;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_manifest_names_every_tool_once_and_writes_go_alone() {
        let names: Vec<String> = manifest().into_iter().map(|t| t.name).collect();
        assert_eq!(
            names,
            ["read", "grep", "find", "ls", "write", "edit", "delete"]
        );
        for tool in manifest() {
            let writes = ["write", "edit", "delete"].contains(&tool.name.as_str());
            assert_eq!(tool.sequential, writes, "{}", tool.name);
        }
    }
}
