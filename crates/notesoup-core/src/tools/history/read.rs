//! `history_read`: one window of an event's document, with its facts.

use std::fmt::Write;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use typeshare::typeshare;

use super::render::{ToolFields, ToolLine, push_header};
use super::run_over_history;
use crate::history::{History, NestedCallSummary, Role, ToolStatus};
use crate::tools::definition::{Tool, ToolFamily};
use crate::tools::window::read_window_packed;
use crate::tools::{
    LimitedBy, Refusal, RefusalCode, ToolData, ToolOutcome, ToolOutput, render_window,
};

/// `history_read`.
pub(crate) const HISTORY_READ: Tool = Tool::reading::<HistoryReadParams, HistoryReadData>(
    "history_read",
    ToolFamily::History,
    "Read one event by seq: its text (for a tool event: the call's arguments, output and nested calls) \
    in a window of code points, with its tool facts. Pass next_offset_chars back as offset_chars until it is null. \
    The footer names a history_list call for the surrounding events.",
    |context, arguments| run_over_history(context, arguments, history_read),
);

/// Parameters of `history_read`.
#[typeshare]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct HistoryReadParams {
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

/// Result of `history_read`: the event's facts and one window of its text.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct HistoryReadData {
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

// Writing to a String cannot fail, so `write!` results are ignored below.
impl ToolData for HistoryReadData {
    fn render(&self) -> String {
        let mut text = String::with_capacity(self.text.len() + 256);
        push_header(&mut text, self.seq, &self.window_id, self.role);
        let tool = ToolLine {
            name: self.tool.as_deref(),
            name_omitted: false,
            status: self.tool_status,
            output_truncated: self.output_truncated,
            full_output_path: self.full_output_path.as_deref(),
            nested_calls: self.nested_calls,
        };
        tool.push(&mut text, self.role);
        let _ = write!(
            text,
            "\nneighborhood → history_list({{\"after\":{},\"before\":{}}})\n\n",
            self.seq.saturating_sub(10),
            u64::from(self.seq) + 10
        );
        render_window(
            &mut text,
            &self.text,
            self.offset_chars,
            self.total_chars,
            self.next_offset_chars,
            self.limited_by,
        );
        text
    }
}

/// `history_read`: one window of an event's document, with its facts.
pub(crate) fn history_read(history: &History, params: &HistoryReadParams) -> ToolOutput {
    ToolOutput::from_packed(read_event(history, params))
}

fn read_event(history: &History, params: &HistoryReadParams) -> ToolOutcome<ToolOutput> {
    let seq = params.seq;
    let highest = history.highest_seq();
    if seq == 0 || seq > highest {
        return Err(Refusal::new(
            RefusalCode::UnknownSeq,
            format!("unknown seq {seq}: this session's items run 1..{highest}"),
        )
        .with_details(json!({ "seq": seq, "highest_seq": highest })));
    }
    if history.is_off_branch(seq) {
        return Err(Refusal::new(
            RefusalCode::NotOnBranch,
            format!("seq {seq} is on another branch and is not readable here"),
        )
        .with_details(json!({ "seq": seq })));
    }
    if let Some(call) = history.paired_call(seq) {
        return Err(Refusal::new(
            RefusalCode::NotAnEvent,
            format!(
                "seq {seq} is a tool result already shown inside the call at seq {call}; read that seq instead"
            ),
        )
        .with_details(json!({ "seq": seq, "read_seq": call })));
    }
    let Some(event) = history.event(seq) else {
        return Err(Refusal::new(
            RefusalCode::UnknownSeq,
            format!("seq {seq} is on this branch but carries no readable event"),
        )
        .with_details(json!({ "seq": seq })));
    };
    let window_id = &history.windows()[event.window].id;
    let facts = ToolFields::of(event);
    read_window_packed(
        &event.document,
        params.offset_chars.map(i64::from),
        params.limit_chars,
        |window| HistoryReadData {
            seq,
            window_id: window_id.clone(),
            role: event.role,
            created_at: event.created_at.clone(),
            tool: facts.name.clone(),
            tool_status: facts.status,
            output_truncated: facts.output_truncated,
            full_output_path: facts.full_output_path.clone(),
            nested_calls: facts.nested_calls,
            text: window.text,
            offset_chars: window.offset_chars,
            total_chars: window.total_chars,
            next_offset_chars: window.next_offset_chars,
            limited_by: window.limited_by,
        },
    )
}
