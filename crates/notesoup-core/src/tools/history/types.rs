//! Parameters and result data of the history tools, as they travel on the wire.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};
use typeshare::typeshare;

use crate::history::{NestedCallSummary, Role, ToolStatus};
use crate::tools::{LimitedBy, SearchQuery};
use crate::wire::OrderedMap;

/// Parameters of `history_windows`: none.
#[typeshare]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HistoryWindowsParams {}

/// Parameters of `history_list`.
#[typeshare]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HistoryListParams {
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

/// Parameters of `history_search`.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HistorySearchParams {
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

/// Parameters of `history_read`.
#[typeshare]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HistoryReadParams {
    /// The event's seq, from history_list or history_search.
    #[schemars(range(min = 1))]
    pub seq: u32,
    /// Optional. Code-point offset into the event's text (default 0); a
    /// negative value counts back from the end. Pass next_offset_chars here to
    /// continue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset_chars: Option<i32>,
    /// Optional. Most code points to return (default 12000, at most 50000);
    /// the response byte budget may stop the window earlier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 50000))]
    pub limit_chars: Option<u32>,
}

/// Result of `history_windows`: the session's windows, oldest first.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct HistoryWindowsData {
    /// The session id.
    pub session_id: String,
    /// Windows, oldest first.
    pub windows: Vec<HistoryWindowRow>,
    /// Windows not shown (the response budget); events carry window ids too.
    pub more: u32,
}

/// One window in `history_windows`.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct HistoryWindowRow {
    /// The window id.
    pub window_id: String,
    /// When the window began, if known.
    #[typeshare(typescript(type = "string | null"))]
    pub created_at: Option<String>,
    /// Lowest event seq, or null for a window without events.
    #[typeshare(typescript(type = "number | null"))]
    pub first_seq: Option<u32>,
    /// Highest event seq, or null for a window without events.
    #[typeshare(typescript(type = "number | null"))]
    pub last_seq: Option<u32>,
    /// Number of events.
    pub item_count: u32,
}

/// Result of `history_list` and `history_search`: one page, ascending by seq.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct HistoryPage {
    /// Event rows and (in the conversation view) folded rows, ascending.
    #[typeshare(typescript(type = "(HistoryPageItem | HistoryFoldedRow)[]"))]
    pub items: Vec<HistoryRow>,
    /// Pass as before to page older; null when nothing older matches.
    #[typeshare(typescript(type = "number | null"))]
    pub older_before: Option<u32>,
    /// Pass as after to page newer; null when nothing newer matches.
    #[typeshare(typescript(type = "number | null"))]
    pub newer_after: Option<u32>,
}

/// A page row: one event, or a fold of tool and context events.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum HistoryRow {
    /// A folded run of tool and context events.
    Folded(HistoryFoldedRow),
    /// One event with its preview.
    Event(HistoryPageItem),
}

/// One event on a page, with a verbatim preview of its text.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct HistoryPageItem {
    /// The event's stable address.
    pub seq: u32,
    /// The event's window.
    pub window_id: String,
    /// The public role.
    pub role: Role,
    /// When it was recorded, if known.
    #[typeshare(typescript(type = "string | null"))]
    pub created_at: Option<String>,
    /// Tool name, on tool events (absent when tool_name_omitted is set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The tool name did not fit this page; read the seq to see it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name_omitted: Option<bool>,
    /// How the tool run ended, on tool events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_status: Option<ToolStatus>,
    /// The host truncated the recorded output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_truncated: Option<bool>,
    /// Where the full output is, when the host saved it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_output_path: Option<String>,
    /// The nested-call record, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nested_calls: Option<NestedCallSummary>,
    /// The preview leaves part of the text out; history_read returns it all.
    pub truncated: bool,
    /// Code-point length of the whole text.
    pub total_chars: u32,
    /// Verbatim preview, starting at offset_chars (or 0).
    pub content: String,
    /// Search only: code-point offset of the earliest match, where the
    /// preview starts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset_chars: Option<u32>,
}

/// A run of tool and context events the conversation view folds away.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct HistoryFoldedRow {
    /// Always true.
    pub folded: bool,
    /// Lowest seq in the fold.
    pub first_seq: u32,
    /// Highest seq in the fold.
    pub last_seq: u32,
    /// Events in the fold.
    pub count: u32,
    /// Tool name to event count, in first-use order, for the names listed.
    pub tools: ToolCounts,
    /// Distinct tool names not listed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub omitted_tools: Option<u32>,
}

/// Tool name to count, kept in first-use order and serialized as a JSON object.
#[typeshare(serialized_as = "HashMap<String, u32>")]
pub type ToolCounts = OrderedMap<u32>;

impl JsonSchema for ToolCounts {
    fn schema_name() -> Cow<'static, str> {
        "ToolCounts".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "object",
            "additionalProperties": { "type": "integer", "minimum": 1 }
        })
    }
}

/// Result of `history_read`: the event's facts and one window of its text.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct HistoryReadData {
    /// The event's stable address.
    pub seq: u32,
    /// The event's window.
    pub window_id: String,
    /// The public role.
    pub role: Role,
    /// When it was recorded, if known.
    #[typeshare(typescript(type = "string | null"))]
    pub created_at: Option<String>,
    /// Tool name, on tool events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// How the tool run ended, on tool events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_status: Option<ToolStatus>,
    /// The host truncated the recorded output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_truncated: Option<bool>,
    /// Where the full output is, when the host saved it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_output_path: Option<String>,
    /// The nested-call record, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nested_calls: Option<NestedCallSummary>,
    /// The delivered slice of the event's text, verbatim.
    pub text: String,
    /// Code-point offset the slice starts at.
    pub offset_chars: u32,
    /// Code-point length of the whole text.
    pub total_chars: u32,
    /// Pass as offset_chars to continue; null at the true end.
    #[typeshare(typescript(type = "number | null"))]
    pub next_offset_chars: Option<u32>,
    /// Why the slice stopped early (the limit or the byte budget); null when
    /// nothing was withheld.
    #[typeshare(typescript(type = "LimitedBy | null"))]
    pub limited_by: Option<LimitedBy>,
}
