//! The one tool host on Claude Code, for the MCP server and the command
//! line alike: core's [`call_tool`] routes each call and asks this host
//! only for what the tool needs, the caller's notes store
//! ([`caller::Caller`]) or the caller's history ([`history::HistorySource`]).

pub mod caller;
pub mod history;

use std::path::{Path, PathBuf};

use notesoup_core::history::History;
use notesoup_core::notes::NoteStore;
use notesoup_core::tools::{
    ListedTool, Refusal, RefusalCode, ToolContext, ToolOutput, call_tool, tools_for,
};
use serde_json::Value;

use self::caller::{Caller, NO_SESSION};
use self::history::HistorySource;
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
        }
    }

    /// The tools of a running server for `project_dir`: each call's session
    /// found from its `tool_use` id; the last chain's history, the note
    /// heads and the settings kept between calls.
    pub fn serving(env: HostEnv, project_dir: PathBuf) -> Self {
        Self {
            caller: Caller::by_tool_use(env, project_dir),
            history: HistorySource::kept(),
        }
    }

    /// Runs the tool `name` for the `tool_use` `tool_use_id` (none outside
    /// Claude Code): core routes it and reads the arguments.
    pub fn run(&mut self, name: &str, arguments: Value, tool_use_id: Option<&str>) -> ToolOutput {
        self.caller.begin(tool_use_id);
        call_tool(self, name, arguments)
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

impl ToolContext for ClaudeTools {
    fn notes(&mut self) -> Result<NoteStore, Refusal> {
        self.caller.store()
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
