//! The budget tools, over a host's [`BudgetHost`]: host-neutral operations
//! where the host says how many tokens remain and whether a reset can be
//! asked for; the texts and status strings are here. One file per tool,
//! each registered in `TOOLS`.

mod remaining;
mod wipe;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

pub(crate) use remaining::GET_CONTEXT_REMAINING;
pub(crate) use wipe::WIPE_MEMORY;

use super::definition::Tool;
use super::{BudgetHost, Refusal, RefusalCode, ToolContext, ToolOutput, with_arguments};

/// The budget tools, in the order hosts list them.
pub(crate) const TOOLS: &[&Tool] = &[&GET_CONTEXT_REMAINING, &WIPE_MEMORY];

/// Runs a budget tool: its (absent) parameters are checked first, then the
/// host's budget is asked for; a host without one refuses the tool as
/// unknown.
fn run_over_budget(
    context: &mut dyn ToolContext,
    arguments: Value,
    run: fn(&mut dyn BudgetHost) -> ToolOutput,
) -> ToolOutput {
    with_arguments(arguments, |NoParameters {}| match context.budget() {
        Some(budget) => run(budget),
        None => ToolOutput::refusal(&Refusal::new(
            RefusalCode::UnknownTool,
            "this host keeps no context budget",
        )),
    })
}

/// The budget tools take no parameters; an unknown one is refused like any
/// tool's.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoParameters {}

/// The schema of [`NoParameters`], as the budget tools have always listed
/// it.
fn no_parameters() -> Value {
    json!({"type": "object", "properties": {}, "additionalProperties": false})
}
