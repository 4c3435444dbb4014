//! The tools of one command, for a host whose command line opens them
//! afresh: the session's notes store, or its decoded history.

use notesoup_core::history::History;
use notesoup_core::notes::NoteStore;
use notesoup_core::tools::{Refusal, RefusalCode, ToolContext, ToolOutput};

/// A command's tools: a notes command gets a store, a history command the
/// session's history; a tool of the other kind is refused.
#[derive(Debug, Default)]
pub struct CommandTools {
    /// The session's notes store.
    pub store: Option<NoteStore>,
    /// The session's decoded history.
    pub history: Option<History>,
}

fn missing(what: &str) -> Refusal {
    Refusal::new(
        RefusalCode::InternalError,
        format!("this command opened no {what}"),
    )
}

impl ToolContext for CommandTools {
    fn notes(&mut self) -> Result<NoteStore, Refusal> {
        self.store.clone().ok_or_else(|| missing("notes store"))
    }

    fn history(&mut self) -> Result<History, Refusal> {
        self.history.take().ok_or_else(|| missing("history"))
    }

    fn with_history(&mut self, run: &mut dyn FnMut(&History) -> ToolOutput) -> ToolOutput {
        match &self.history {
            Some(history) => run(history),
            None => ToolOutput::refusal(&missing("history")),
        }
    }
}
