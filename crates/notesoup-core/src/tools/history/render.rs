//! The model-facing texts of the history tools.

use std::fmt::Write;

use super::types::{
    HistoryFoldedRow, HistoryPage, HistoryPageItem, HistoryReadData, HistoryRow, HistoryWindowsData,
};
use crate::history::{NestedCallSummary, Role, ToolStatus};
use crate::tools::{ToolData, render_window};

// Writing to a String cannot fail, so `write!` results are ignored below.

impl ToolData for HistoryWindowsData {
    fn render(&self) -> String {
        let mut text = format!("session {}", self.session_id);
        for window in &self.windows {
            let _ = write!(text, "\nwindow {} | ", window.window_id);
            match (window.first_seq, window.last_seq) {
                (Some(first), Some(last)) => {
                    let _ = write!(text, "seqs {first}-{last} | {}", events(window.item_count));
                }
                _ => text.push_str("no events yet"),
            }
        }
        if self.more > 0 {
            let _ = write!(
                text,
                "\n{} more windows not shown; history_list also reports window ids on events",
                self.more
            );
        }
        text
    }
}

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

/// `seq N | window W | role`
fn push_header(text: &mut String, seq: u32, window_id: &str, role: Role) {
    let _ = write!(text, "seq {seq} | window {window_id} | {}", role.as_str());
}

/// The second line of a tool event:
/// `tool X | status S[ | output truncated[, full text at P]][ | nested calls N recorded, complete|incomplete]`.
struct ToolLine<'a> {
    name: Option<&'a str>,
    name_omitted: bool,
    status: Option<ToolStatus>,
    output_truncated: Option<bool>,
    full_output_path: Option<&'a str>,
    nested_calls: Option<NestedCallSummary>,
}

impl ToolLine<'_> {
    fn push(&self, text: &mut String, role: Role) {
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
fn events(count: impl Into<u64>) -> String {
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
