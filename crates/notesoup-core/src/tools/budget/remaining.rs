//! `get_context_remaining`: the countdown to the warning line.

use serde_json::json;

use super::{no_parameters, run_over_budget};
use crate::tools::definition::Tool;
use crate::tools::{BudgetHost, ToolOutput};

/// `get_context_remaining`.
pub(crate) const GET_CONTEXT_REMAINING: Tool = Tool::budget(
    "get_context_remaining",
    "How many tokens are left before this context window closes out (zero = wiped). Returns {\"remaining_tokens\": N}, or null when usage is unknown.",
    no_parameters,
    |context, arguments| run_over_budget(context, arguments, remaining),
);

/// `{"remaining_tokens": N | null}`.
fn remaining(budget: &mut dyn BudgetHost) -> ToolOutput {
    ToolOutput::plain_json(
        &json!({"remaining_tokens": budget.remaining_tokens()}),
        false,
    )
}
