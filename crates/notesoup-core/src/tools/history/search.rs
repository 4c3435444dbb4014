//! `history_search`: one page of events whose document contains any of the
//! query literals (case-insensitive), previews starting at the earliest
//! match.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use typeshare::typeshare;

use super::{HistoryPage, Selection, run_over_history};
use crate::history::{History, Role};
use crate::notes::LiteralQueries;
use crate::tools::definition::{Tool, ToolFamily};
use crate::tools::{Refusal, RefusalCode, SearchQuery, ToolOutcome, ToolOutput};

/// `history_search`.
pub(crate) const HISTORY_SEARCH: Tool = Tool::reading::<HistorySearchParams, HistoryPage>(
    "history_search",
    ToolFamily::History,
    "Search this session's history for literal text, case-insensitively; several queries match any of them. \
    Every role is searched by default, tool arguments, output and nested calls included, and nothing is folded. \
    Each hit's preview starts at its earliest match and carries offset_chars: pass the seq and offset_chars \
    to history_read to read from there. Pages like history_list.",
    |context, arguments| run_over_history(context, arguments, history_search),
);

/// Parameters of `history_search`.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct HistorySearchParams {
    /// One literal, or several (any may match). Matching is case-insensitive
    /// over each event's text, tool arguments, output and nested calls.
    #[typeshare(typescript(type = "string | string[]"))]
    pub query: SearchQuery,
    /// Optional. Most matching events per page (default 20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub limit: Option<u32>,
    /// Optional. Only these roles (any of user, assistant, tool, context);
    /// every role by default.
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
    /// Optional. Most preview characters per event (default 1200), starting
    /// at the earliest match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub max_chars_per_item: Option<u32>,
}

/// `history_search`: one page of events whose document contains any of the
/// query literals (case-insensitive), previews starting at the earliest match.
pub(crate) fn history_search(history: &History, params: &HistorySearchParams) -> ToolOutput {
    ToolOutput::from_packed(search_page(history, params))
}

fn search_page(history: &History, params: &HistorySearchParams) -> ToolOutcome<ToolOutput> {
    let selection = Selection {
        limit: params.limit,
        roles: &params.roles,
        before: params.before,
        after: params.after,
        window_id: params.window_id.as_deref(),
        max_chars_per_item: params.max_chars_per_item,
    };
    let scope = selection.scope(history, false)?;
    let literals = params.query.literals()?;
    // The notes store's matcher, so both searches fold case the same way.
    let matcher = LiteralQueries::new(&literals)
        .map_err(|error| Refusal::new(RefusalCode::InvalidQuery, error.message()))?;
    // Folded once per history and kept: a warm search only scans.
    let folded = history.folded();
    scope.page(|index, event| {
        if !scope.selects(event) {
            return None;
        }
        matcher
            .find_first_folded(&event.document, folded.get(index))
            .map(Some)
    })
}
