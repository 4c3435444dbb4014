//! `history_list`: one page of events around the anchors, the conversation
//! view (with folded rows) when no roles are given.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use typeshare::typeshare;

use super::{HistoryPage, Selection, run_over_history};
use crate::history::{History, Role};
use crate::tools::definition::{Tool, ToolFamily};
use crate::tools::{ToolOutcome, ToolOutput};

/// `history_list`.
pub(crate) const HISTORY_LIST: Tool = Tool::reading::<HistoryListParams, HistoryPage>(
    "history_list",
    ToolFamily::History,
    "Page through this session's history by seq. Without before/after you get the newest page; \
    before and after are strict bounds, and together they select the events strictly between. \
    Rows are in ascending seq order and the footer prints the exact calls for the older and newer pages. \
    Without roles you get the conversation view: user and assistant messages, with each run of tool \
    and context events folded into one row that prints its own expand call. \
    Read a whole event with history_read.",
    |context, arguments| run_over_history(context, arguments, history_list),
);

/// Parameters of `history_list`.
#[typeshare]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct HistoryListParams {
    /// Optional. Most events per page (default 20); folded rows do not count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub limit: Option<u32>,
    /// Optional. Only these roles (any of user, assistant, tool, context).
    /// Omit for the conversation view: user and assistant shown, runs of tool
    /// and context events folded into rows with their own expand call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub roles: Option<Vec<Role>>,
    /// Optional. Only events with seq strictly below this. With after, selects
    /// the events strictly between the two.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<u32>,
    /// Optional. Only events with seq strictly above this. With before, selects
    /// the events strictly between the two.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<u32>,
    /// Optional. Only one context window: an id from history_windows or from
    /// any event; "@previous" names the window before the current one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_id: Option<String>,
    /// Optional. Most preview characters per event (default 1200); read the
    /// seq with history_read for the rest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub max_chars_per_item: Option<u32>,
}

/// `history_list`: one page of events around the anchors, the conversation
/// view (with folded rows) when no roles are given.
pub(crate) fn history_list(history: &History, params: &HistoryListParams) -> ToolOutput {
    ToolOutput::from_packed(list_page(history, params))
}

fn list_page(history: &History, params: &HistoryListParams) -> ToolOutcome<ToolOutput> {
    let selection = Selection {
        limit: params.limit,
        roles: &params.roles,
        before: params.before,
        after: params.after,
        window_id: params.window_id.as_deref(),
        max_chars_per_item: params.max_chars_per_item,
    };
    let scope = selection.scope(history, params.roles.is_none())?;
    scope.page(|_, event| scope.selects(event).then_some(None))
}
