//! The result of `history_list` and `history_search`, one page, as it
//! travels on the wire.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};
use typeshare::typeshare;

use crate::history::{NestedCallSummary, Role, ToolStatus};
use crate::wire::OrderedMap;

/// Result of `history_list` and `history_search`: one page, ascending by seq.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct HistoryPage {
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
pub(crate) enum HistoryRow {
    /// A folded run of tool and context events.
    Folded(HistoryFoldedRow),
    /// One event with its preview.
    Event(HistoryPageItem),
}

/// One event on a page, with a verbatim preview of its text.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct HistoryPageItem {
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
pub(crate) struct HistoryFoldedRow {
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
pub(crate) type ToolCounts = OrderedMap<u32>;

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
