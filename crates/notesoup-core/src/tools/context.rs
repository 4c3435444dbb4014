//! What the tools need from the host that runs them: [`ToolContext`], and
//! the budget side of a host that keeps one, [`BudgetHost`].

use super::{Refusal, ToolOutput};
use crate::history::History;
use crate::notes::NoteStore;

/// What the tools need from the host that runs them. Each is asked for only
/// by the tools that use it, so a history call never opens the store and a
/// notes call never decodes the transcript.
pub trait ToolContext {
    /// The caller's notes store.
    fn notes(&mut self) -> Result<NoteStore, Refusal>;
    /// The calling session's decoded history.
    fn history(&mut self) -> Result<History, Refusal>;
    /// Runs a history tool over the calling session's history. A host that
    /// keeps a decoded history between calls lends it here instead of
    /// handing out a copy.
    fn with_history(&mut self, run: &mut dyn FnMut(&History) -> ToolOutput) -> ToolOutput {
        match self.history() {
            Ok(history) => run(&history),
            Err(refusal) => ToolOutput::refusal(&refusal),
        }
    }
    /// The host's budget; `None` on a host without the budget tools.
    fn budget(&mut self) -> Option<&mut dyn BudgetHost> {
        None
    }
}

/// What `wipe_memory` asked of the host's reset lifecycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResetRequest {
    /// A reset will follow this tool batch.
    Requested,
    /// This window already has one pending.
    AlreadyPending,
    /// notesoup is off; nothing will happen.
    Off,
}

/// The budget and reset side of a host.
pub trait BudgetHost {
    /// The countdown to the warning line (zero = wiped), `None` when usage
    /// is unknown.
    fn remaining_tokens(&mut self) -> Option<u64>;
    /// Asks for a reset at the end of this tool batch.
    fn request_reset(&mut self) -> ResetRequest;
}
