//! `wipe_memory`: asks the host's reset lifecycle for a fresh context
//! window at the end of this tool batch.

use serde_json::json;

use super::{no_parameters, run_over_budget};
use crate::tools::definition::Tool;
use crate::tools::{BudgetHost, ResetRequest, ToolOutput};

/// `wipe_memory`.
pub(crate) const WIPE_MEMORY: Tool = Tool::budget(
    "wipe_memory",
    "Clear your in-context memory and start a fresh context window. Your session, notes, and history survive.",
    no_parameters,
    |context, arguments| run_over_budget(context, arguments, wipe),
).writing();

/// `wipe_memory`'s answer while notesoup is off.
pub(crate) const WIPE_WHILE_OFF: &str = "notesoup is off (/notesoup on to enable)";

/// `{"status": "rollover_requested" | "rollover_already_pending"}` (ending
/// the tool batch), or `{"error": …}` while notesoup is off.
fn wipe(budget: &mut dyn BudgetHost) -> ToolOutput {
    match budget.request_reset() {
        ResetRequest::Requested => {
            ToolOutput::plain_json(&json!({"status": "rollover_requested"}), true)
        }
        ResetRequest::AlreadyPending => {
            ToolOutput::plain_json(&json!({"status": "rollover_already_pending"}), true)
        }
        ResetRequest::Off => ToolOutput::plain_json(&json!({"error": WIPE_WHILE_OFF}), false),
    }
}
