//! The one tool host on Claude Code, for the MCP server and the command
//! line alike: core's [`call_tool`] routes each call and asks this host
//! only for what the tool needs, the caller's notes store
//! ([`caller::Caller`]) or the caller's history ([`history::HistorySource`]).

pub mod caller;
pub mod history;
pub mod next_boot;

use std::path::{Path, PathBuf};

use notesoup_core::history::History;
use notesoup_core::notes::NoteStore;
use notesoup_core::tools::{
    ListedTool, Refusal, RefusalCode, Tool, ToolContext, ToolOutput, call_tool, tools_for,
};
use serde_json::Value;

use self::caller::{Caller, NO_SESSION};
use self::history::HistorySource;
use self::next_boot::NextBoot;
use crate::env::HostEnv;
use crate::state::ClaudeSessionState;

/// The tools Claude Code lists: every tool but the budget family, which
/// Claude keeps in its hooks (there is no model-callable reset here).
pub fn claude_tools() -> impl Iterator<Item = &'static ListedTool> {
    tools_for(false)
}

/// A tool's description as Claude's model reads it: core's text in this
/// host's wording ([`crate::names::WORDING`]).
pub fn claude_description(tool: &ListedTool) -> String {
    tool.describe(&crate::names::WORDING)
}

/// Core's tool host on Claude Code: who calls, and where their history
/// comes from.
#[derive(Debug)]
pub struct ClaudeTools {
    caller: Caller,
    history: HistorySource,
    /// A server's: the boot it makes ready after the session writes.
    next_boot: Option<NextBoot>,
    /// The current call may change notes: the store it opens is kept in
    /// `opened`, for `next_boot`.
    writing: bool,
    /// The store the current writing call opened.
    opened: Option<NoteStore>,
}

impl ClaudeTools {
    /// The tools of a command run in a known session (`None`: outside any,
    /// the durable homes of `project_dir` alone); history is decoded for
    /// the call.
    pub fn known(
        env: &HostEnv,
        project_dir: &Path,
        project_key: &str,
        session: Option<ClaudeSessionState>,
    ) -> Self {
        Self {
            caller: Caller::known(env, project_dir, project_key, session),
            history: HistorySource::one_shot(),
            next_boot: None,
            writing: false,
            opened: None,
        }
    }

    /// The tools of a running server for `project_dir`: each call's session
    /// found from its `tool_use` id; the last chain's history, the note
    /// heads and the settings kept between calls; after a write, the next
    /// window's boot made ready in the caches ([`NextBoot`]).
    pub fn serving(env: HostEnv, project_dir: PathBuf) -> Self {
        let next_boot = env.cache_dir().map(NextBoot::new);
        Self {
            caller: Caller::by_tool_use(env, project_dir),
            history: HistorySource::kept(),
            next_boot,
            writing: false,
            opened: None,
        }
    }

    /// Runs the tool `name` for the `tool_use` `tool_use_id` (none outside
    /// Claude Code): core routes it and reads the arguments.
    pub fn run(&mut self, name: &str, arguments: Value, tool_use_id: Option<&str>) -> ToolOutput {
        self.caller.begin(tool_use_id);
        self.writing = self.next_boot.is_some() && writes(name);
        let output = call_tool(self, name, arguments);
        let opened = self.opened.take();
        if let (Some(next_boot), Some(store)) = (&mut self.next_boot, opened)
            && !output.is_error
        {
            next_boot.after_write(store);
        }
        output
    }

    /// The settings warnings not given yet; each is given once.
    pub fn take_warnings(&mut self) -> Vec<String> {
        self.caller.take_warnings()
    }

    /// The environment the tools were made with.
    pub fn env(&self) -> &HostEnv {
        self.caller.env()
    }

    fn no_session() -> Refusal {
        Refusal::new(RefusalCode::NoSession, NO_SESSION)
    }
}

/// Whether the tool `name` may change notes (it is not read-only).
fn writes(name: &str) -> bool {
    Tool::find(name).is_some_and(|tool| !tool.read_only)
}

impl ToolContext for ClaudeTools {
    fn notes(&mut self) -> Result<NoteStore, Refusal> {
        let store = self.caller.store()?;
        if self.writing {
            self.opened = Some(store.clone());
        }
        Ok(store)
    }

    fn history(&mut self) -> Result<History, Refusal> {
        match self.caller.session_with_transcript()? {
            Some(state) => self.history.history(state),
            None => Err(Self::no_session()),
        }
    }

    fn with_history(&mut self, run: &mut dyn FnMut(&History) -> ToolOutput) -> ToolOutput {
        match self.caller.session_with_transcript() {
            Ok(Some(state)) => self.history.with_history(state, run),
            Ok(None) => ToolOutput::refusal(&Self::no_session()),
            Err(refusal) => ToolOutput::refusal(&refusal),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use serde_json::json;

    use super::*;

    #[test]
    fn only_tools_that_may_change_notes_make_the_next_boot_ready() {
        for tool in [Tool::NOTES_WRITE, Tool::NOTES_UPDATE] {
            assert!(writes(tool.name), "{}", tool.name);
        }
        for tool in [Tool::NOTES_LIST, Tool::NOTES_READ, Tool::HISTORY_LIST] {
            assert!(!writes(tool.name), "{}", tool.name);
        }
        assert!(!writes("notes_unknown"));
    }

    #[test]
    fn a_server_makes_the_next_boot_ready_after_a_write_that_succeeded_only() {
        let temp = tempfile::tempdir().expect("a temp dir");
        let root = temp.path().to_string_lossy().into_owned();
        let vars: HashMap<&str, String> = HashMap::from([
            ("HOME", format!("{root}/home")),
            ("CLAUDE_PLUGIN_DATA", format!("{root}/data")),
            ("PI_NOTES_HOME", format!("{root}/notes")),
        ]);
        let env = HostEnv::from_lookup(|name| vars.get(name).cloned());
        let mut tools = ClaudeTools::serving(env, temp.path().join("project"));
        let pending = |tools: &ClaudeTools| tools.next_boot.as_ref().is_some_and(NextBoot::pending);
        let listed = tools.run(Tool::NOTES_LIST.name, json!({}), None);
        assert!(!listed.is_error && !pending(&tools), "{}", listed.text);
        let refused = tools.run(
            Tool::NOTES_WRITE.name,
            json!({"address": "@project/x.md"}),
            None,
        );
        assert!(refused.is_error && !pending(&tools), "{}", refused.text);
        let wrote = tools.run(
            Tool::NOTES_WRITE.name,
            json!({"address": "@project/x.md", "content": "# X"}),
            None,
        );
        assert!(!wrote.is_error && pending(&tools), "{}", wrote.text);
    }
}
