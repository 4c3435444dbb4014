//! The host every notes and history tool call runs over on Claude Code, for
//! the MCP server and the command line alike: core's router routes the call
//! and asks this host only for what the tool needs (the caller's notes
//! store, or the caller's decoded history).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use notesoup_core::history::History;
use notesoup_core::notes::{HeadCache, NoteStore};
use notesoup_core::tools::{
    ListedTool, Refusal, RefusalCode, ToolContext, ToolOutput, call_offered_tool, tools_for,
};
use serde_json::Value;

use crate::env::HostEnv;
use crate::state::SessionState;
use crate::store::{self, NO_SESSION};

/// The tools Claude Code lists: every tool but the budget family, which
/// Claude keeps in its hooks (there is no model-callable reset here).
pub fn claude_tools() -> Vec<&'static ListedTool> {
    tools_for(OFFERS_BUDGET).collect()
}

/// Claude keeps no budget the model can call.
const OFFERS_BUDGET: bool = false;

/// A tool's description as Claude's model reads it: core's text in this
/// host's wording ([`crate::names::WORDING`]).
pub fn claude_description(tool: &ListedTool) -> String {
    tool.describe(&crate::names::WORDING)
}

/// How a call finds its session and that session's history.
pub trait Caller {
    /// The calling session, `None` when no session is known.
    fn session(&mut self) -> Result<Option<SessionState>, String>;
    /// The note heads a long-lived caller keeps between calls.
    fn head_cache(&self) -> Option<Arc<HeadCache>> {
        None
    }
    /// The decoded history of `state`'s `/clear` chain.
    fn history(&mut self, state: &SessionState) -> Result<History, Refusal> {
        crate::mcp::tools::chain_history(state)
    }
    /// Runs a history tool over `state`'s history; a caller that keeps it
    /// between calls lends it.
    fn with_history(
        &mut self,
        state: &SessionState,
        run: &mut dyn FnMut(&History) -> ToolOutput,
    ) -> ToolOutput {
        match self.history(state) {
            Ok(history) => run(&history),
            Err(refusal) => ToolOutput::refusal(&refusal),
        }
    }
}

/// A caller whose session is already known (the command line).
#[derive(Debug)]
pub struct Known(pub Option<SessionState>);

impl Caller for Known {
    fn session(&mut self) -> Result<Option<SessionState>, String> {
        Ok(self.0.clone())
    }
}

/// One call's host.
#[derive(Debug)]
pub struct ClaudeToolHost<'a, C: Caller> {
    env: &'a HostEnv,
    /// The project served when no session is known.
    project_dir: &'a Path,
    project_key: &'a str,
    caller: C,
    /// The session, once asked for.
    session: Option<Option<SessionState>>,
    /// What was wrong with the settings the call read (a settings file that
    /// is not a file, a project's `secretGuard: false`, a bad value).
    warnings: Vec<String>,
}

impl<'a, C: Caller> ClaudeToolHost<'a, C> {
    /// A host for one call. The arguments are core's alone to read: a
    /// caller without a session gets an identity without one, and core
    /// refuses its session notes with `no_session`.
    pub fn new(env: &'a HostEnv, project_dir: &'a Path, project_key: &'a str, caller: C) -> Self {
        Self {
            env,
            project_dir,
            project_key,
            caller,
            session: None,
            warnings: Vec::new(),
        }
    }

    /// The settings warnings of the call, for the caller to show (the
    /// command line on stderr, the MCP server once on its stderr).
    pub fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }

    fn session(&mut self) -> Result<Option<SessionState>, Refusal> {
        if let Some(session) = &self.session {
            return Ok(session.clone());
        }
        let session = self
            .caller
            .session()
            .map_err(|error| Refusal::new(RefusalCode::IoError, error))?;
        self.session = Some(session.clone());
        Ok(session)
    }

    /// The caller's session after a call, if it was looked up.
    pub fn into_caller(self) -> C {
        self.caller
    }
}

impl<C: Caller> ToolContext for ClaudeToolHost<'_, C> {
    fn notes(&mut self) -> Result<NoteStore, Refusal> {
        let state = self.session()?;
        let (session, project_key, project_dir): (Option<&str>, &str, PathBuf) = match &state {
            Some(state) => (
                Some(state.notes_session_id.as_str()),
                state.project_key.as_str(),
                state.cwd.clone(),
            ),
            None => (None, self.project_key, self.project_dir.to_path_buf()),
        };
        let store = store::open(self.env, session, project_key)?;
        let settings = crate::settings::load(self.env, &project_dir);
        self.warnings = settings.warnings;
        let store = store.with_secret_guard(settings.settings.secret_guard);
        Ok(match self.caller.head_cache() {
            Some(heads) => store.with_head_cache(heads),
            None => store,
        })
    }

    fn history(&mut self) -> Result<History, Refusal> {
        match self.session()? {
            Some(state) => self.caller.history(&state),
            None => Err(Refusal::new(RefusalCode::NoSession, NO_SESSION)),
        }
    }

    fn with_history(&mut self, run: &mut dyn FnMut(&History) -> ToolOutput) -> ToolOutput {
        match self.session() {
            Ok(Some(state)) => self.caller.with_history(&state, run),
            Ok(None) => ToolOutput::refusal(&Refusal::new(RefusalCode::NoSession, NO_SESSION)),
            Err(refusal) => ToolOutput::refusal(&refusal),
        }
    }
}

/// Runs one tool call over `host`: core routes it. `None` for a name
/// [`claude_tools`] does not list (an unknown one or a budget tool), which
/// the MCP server answers as an unknown tool.
pub fn run(host: &mut dyn ToolContext, name: &str, arguments: Value) -> Option<ToolOutput> {
    call_offered_tool(host, name, arguments, OFFERS_BUDGET)
}
