//! The texts of a history page, and the event lines `history_read` shares.

use std::fmt::Write;

use super::types::{HistoryFoldedRow, HistoryPage, HistoryPageItem, HistoryRow};
use crate::history::{HistoryEvent, NestedCallSummary, Role, ToolStatus};
use crate::tools::ToolData;

// Writing to a String cannot fail, so `write!` results are ignored below.

impl ToolData for HistoryPage {
    fn render(&self) -> String {
        if self.items.is_empty() {
            return "no events match this selection".to_owned();
        }
        let mut text = String::new();
        for (index, row) in self.items.iter().enumerate() {
            if index > 0 {
                text.push_str("\n\n");
            }
            match row {
                HistoryRow::Event(item) => push_item(&mut text, item),
                HistoryRow::Folded(fold) => push_fold(&mut text, fold),
            }
        }
        let older = self
            .older_before
            .map(|seq| format!("→ older: {{\"before\":{seq}}}"));
        let newer = self
            .newer_after
            .map(|seq| format!("→ newer: {{\"after\":{seq}}}"));
        let footer: Vec<String> = older.into_iter().chain(newer).collect();
        if !footer.is_empty() {
            text.push_str("\n\n");
            text.push_str(&footer.join(" | "));
        }
        text
    }
}

/// `seq N | window W | role`
pub(super) fn push_header(text: &mut String, seq: u32, window_id: &str, role: Role) {
    let _ = write!(text, "seq {seq} | window {window_id} | {}", role.as_str());
}

/// An event's tool facts as a page item and a read carry them: the
/// truncation flag only when set, and the full output's path only beside it.
pub(super) struct ToolFields {
    pub name: Option<String>,
    pub status: Option<ToolStatus>,
    pub output_truncated: Option<bool>,
    pub full_output_path: Option<String>,
    pub nested_calls: Option<NestedCallSummary>,
}

impl ToolFields {
    pub(super) fn of(event: &HistoryEvent) -> ToolFields {
        let tool = event.tool.as_ref();
        let output_truncated = tool.is_some_and(|tool| tool.output_truncated);
        ToolFields {
            name: tool.map(|tool| tool.name.clone()),
            status: tool.map(|tool| tool.status),
            output_truncated: output_truncated.then_some(true),
            full_output_path: tool
                .filter(|_| output_truncated)
                .and_then(|tool| tool.full_output_path.clone()),
            nested_calls: tool.and_then(|tool| tool.nested_calls),
        }
    }
}

/// The second line of a tool event:
/// `tool X | status S[ | output truncated[, full text at P]][ | nested calls N recorded, complete|incomplete]`.
pub(super) struct ToolLine<'a> {
    pub name: Option<&'a str>,
    pub name_omitted: bool,
    pub status: Option<ToolStatus>,
    pub output_truncated: Option<bool>,
    pub full_output_path: Option<&'a str>,
    pub nested_calls: Option<NestedCallSummary>,
}

impl ToolLine<'_> {
    pub(super) fn push(&self, text: &mut String, role: Role) {
        if role != Role::Tool {
            return;
        }
        match (self.name, self.name_omitted) {
            (_, true) | (None, _) => text.push_str("\ntool name omitted"),
            (Some(name), false) => {
                let _ = write!(text, "\ntool {name}");
            }
        }
        if let Some(status) = self.status {
            let _ = write!(text, " | status {}", status.as_str());
        }
        if self.output_truncated == Some(true) {
            text.push_str(" | output truncated");
            if let Some(path) = self.full_output_path {
                let _ = write!(text, ", full text at {path}");
            }
        }
        if let Some(nested) = self.nested_calls {
            let completeness = if nested.complete {
                "complete"
            } else {
                "incomplete"
            };
            let _ = write!(
                text,
                " | nested calls {} recorded, {completeness}",
                nested.call_count
            );
        }
    }
}

fn push_item(text: &mut String, item: &HistoryPageItem) {
    push_header(text, item.seq, &item.window_id, item.role);
    let tool = ToolLine {
        name: item.tool.as_deref(),
        name_omitted: item.tool_name_omitted == Some(true),
        status: item.tool_status,
        output_truncated: item.output_truncated,
        full_output_path: item.full_output_path.as_deref(),
        nested_calls: item.nested_calls,
    };
    tool.push(text, item.role);
    if item.truncated {
        let _ = write!(
            text,
            "\n[preview of {} chars from offset {}; read this seq for the rest]",
            item.total_chars,
            item.offset_chars.unwrap_or(0)
        );
    }
    text.push('\n');
    text.push_str(&item.content);
}

/// `N event` or `N events`.
pub(super) fn events(count: impl Into<u64>) -> String {
    let count = count.into();
    if count == 1 {
        "1 event".to_owned()
    } else {
        format!("{count} events")
    }
}

/// `seqs a-b | folded N events | bash 2, read 1` (`seq a | folded 1 event`
/// for one), then the expand call.
fn push_fold(text: &mut String, fold: &HistoryFoldedRow) {
    if fold.first_seq == fold.last_seq {
        let _ = write!(text, "seq {}", fold.first_seq);
    } else {
        let _ = write!(text, "seqs {}-{}", fold.first_seq, fold.last_seq);
    }
    let _ = write!(text, " | folded {}", events(fold.count));
    for (index, (name, count)) in fold.tools.0.iter().enumerate() {
        text.push_str(if index == 0 { " | " } else { ", " });
        let _ = write!(text, "{name} {count}");
    }
    if let Some(omitted) = fold.omitted_tools {
        let _ = write!(text, " | {omitted} more tool names not listed");
    }
    let _ = write!(
        text,
        "\n\t→ expand: {{\"after\":{},\"before\":{},\"roles\":[\"tool\",\"context\"]}}",
        fold.first_seq.saturating_sub(1),
        u64::from(fold.last_seq) + 1
    );
}
