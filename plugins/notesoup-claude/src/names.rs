//! Claude Code's names for notesoup: the fixed identity, the MCP tool names
//! the model calls, and the boot's tool-name bindings.

use notesoup_core::wire::ToolBindings;

/// The agent slug on Claude Code, fixed so existing `@self/` notes
/// (`agents/claude/`) keep working.
pub const AGENT: &str = "claude";
/// The model slug on Claude Code, fixed so existing `@model/` notes
/// (`models/claude/`) keep working.
pub const MODEL: &str = "claude";

/// The prefix Claude Code gives the tools of plugin `notesoup`, server
/// `notesoup`.
pub const MCP_TOOL_PREFIX: &str = "mcp__plugin_notesoup_notesoup__";

/// The boot and budget-text bindings on Claude Code.
pub fn bindings() -> ToolBindings {
    let tool = |name: &str| format!("{MCP_TOOL_PREFIX}{name}");
    ToolBindings {
        notes: tool("notes_*"),
        notes_list: tool("notes_list"),
        history: tool("history_*"),
        history_windows: tool("history_windows"),
        history_list: tool("history_list"),
        history_search: tool("history_search"),
        history_read: tool("history_read"),
        remaining: "get_context_remaining (unavailable in Claude)".to_owned(),
        wipe: "/clear (user command; no model reset tool in Claude: close out, then ask the human to run it)".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bindings_use_the_plugin_mcp_names() {
        let b = bindings();
        assert_eq!(b.notes, "mcp__plugin_notesoup_notesoup__notes_*");
        assert_eq!(b.notes_list, "mcp__plugin_notesoup_notesoup__notes_list");
        assert_eq!(
            b.history_read,
            "mcp__plugin_notesoup_notesoup__history_read"
        );
        assert!(b.wipe.starts_with("/clear (user command"));
    }
}
