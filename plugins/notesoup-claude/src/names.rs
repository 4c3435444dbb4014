//! Claude Code's names for notesoup: the fixed identity, the MCP tool names
//! the model calls, the dreamer's MCP server, and the boot's tool-name
//! bindings.

use notesoup_core::boot::ToolBindings;
use notesoup_core::notes::NotesIdentity;
use notesoup_core::plumbing::NotesOwner;
use notesoup_core::tools::{HostWording, Tool};

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
    NotesOwner {
        root,
        session_id,
        project_key,
        agent: AGENT,
        model: MODEL,
    }
    .identity()
    .map_err(|err| err.to_string())
}

/// Claude Code's words in the tool descriptions: the skill as this host
/// names it (`notesoup:memory`, not Pi's `/skill:memory`).
pub const WORDING: HostWording<'static> = HostWording {
    memory_skill: "the notesoup:memory skill",
};

/// The boot and budget-text bindings on Claude Code: core's tool names
/// under the MCP prefix, and what stands in for the budget tools Claude
/// lacks.
pub fn bindings() -> ToolBindings {
    ToolBindings {
        remaining: format!("{} (unavailable in Claude)", Tool::GET_CONTEXT_REMAINING.name),
        wipe: "/clear (user command; no model reset tool in Claude: close out, then ask the human to run it)".to_owned(),
        ..ToolBindings::named(|name| format!("{MCP_TOOL_PREFIX}{name}"))
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
        assert_eq!(b.history, "mcp__plugin_notesoup_notesoup__history_*");
        assert_eq!(b.remaining, "get_context_remaining (unavailable in Claude)");
        assert!(b.wipe.starts_with("/clear (user command"));
    }
}
