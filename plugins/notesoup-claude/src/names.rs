//! Claude Code's names for notesoup: the fixed identity, the MCP tool names
//! the model calls, the dreamer's MCP server, and the boot's tool-name
//! bindings.

use notesoup_core::notes::NotesIdentity;
use notesoup_core::wire::ToolBindings;

use crate::env::HostEnv;

/// The agent slug on Claude Code, fixed so existing `@self/` notes
/// (`agents/claude/`) keep working.
pub const AGENT: &str = "claude";
/// The model slug on Claude Code, fixed so existing `@model/` notes
/// (`models/claude/`) keep working.
pub const MODEL: &str = "claude";

/// The prefix Claude Code gives the tools of plugin `notesoup`, server
/// `notesoup`.
pub const MCP_TOOL_PREFIX: &str = "mcp__plugin_notesoup_notesoup__";

/// The MCP server name the dreamer's session gives the dream tools
/// (`mcp__dream__<tool>`).
pub const DREAM_SERVER: &str = "dream";

/// The notes identity of a Claude session: its chain's notes session (none
/// when no session is known), its project, and the fixed Claude agent and
/// model.
pub fn notes_identity(
    env: &HostEnv,
    session_id: Option<&str>,
    project_key: &str,
) -> Result<NotesIdentity, String> {
    let root = env
        .notes_root
        .as_ref()
        .ok_or("the notes root is unknown: set PI_NOTES_HOME or HOME")?;
    match session_id {
        Some(session_id) => NotesIdentity::new(root, session_id, project_key, AGENT, MODEL),
        None => NotesIdentity::without_session(root, project_key, AGENT, MODEL),
    }
    .map_err(|err| err.to_string())
}

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
