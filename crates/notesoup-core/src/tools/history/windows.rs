//! `history_windows`: the session's context windows, oldest first, as many
//! as fit.

use std::fmt::Write;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use typeshare::typeshare;

use super::render::events;
use super::run_over_history;
use crate::history::{EndReason, History, session_ledger};
use crate::tools::definition::{Tool, ToolFamily};
use crate::tools::output::{pack, pack_or};
use crate::tools::window::to_u32;
use crate::tools::{ToolData, ToolOutcome, ToolOutput, fill_best};

/// `history_windows`.
pub(crate) const HISTORY_WINDOWS: Tool = Tool::reading::<HistoryWindowsParams, HistoryWindowsData>(
    "history_windows",
    ToolFamily::History,
    "List this session's context windows, oldest first, each with its seq range and event count. \
    Pass a window_id to history_list or history_search to stay inside one window.",
    |context, arguments| run_over_history(context, arguments, history_windows),
);

/// Parameters of `history_windows`: none.
#[typeshare]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct HistoryWindowsParams {}

/// Result of `history_windows`: the session's windows, oldest first.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct HistoryWindowsData {
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
pub(crate) struct HistoryWindowRow {
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
    /// How the window ended: `tool` (wipe_memory), `manual`, `budget`,
    /// `hard_reserve`, `overflow`, `host_compaction`, `clear`, `reset` (no
    /// reason recorded), or `open` for the live window.
    pub end: EndReason,
    /// Context tokens at the window's end (the live window's latest), or
    /// null when the host recorded none.
    #[typeshare(typescript(type = "number | null"))]
    pub tokens_at_end: Option<u32>,
    /// A checkpoint (the session note with no @) was written in the window.
    pub checkpoint_written: bool,
}

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
            if window.end == EndReason::Open {
                text.push_str(" | open");
            } else {
                let _ = write!(text, " | ended: {}", window.end.as_str());
            }
            if let Some(tokens) = window.tokens_at_end {
                let _ = write!(text, " at {tokens} tokens");
            }
            if window.checkpoint_written {
                text.push_str(" | checkpoint written");
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

/// `history_windows`: the session's windows, oldest first, as many as fit.
pub(crate) fn history_windows(history: &History, _params: &HistoryWindowsParams) -> ToolOutput {
    ToolOutput::from_packed(windows_data(history))
}

fn windows_data(history: &History) -> ToolOutcome<ToolOutput> {
    let all = history.windows();
    let data = |windows: Vec<HistoryWindowRow>| HistoryWindowsData {
        session_id: history.session_id().to_owned(),
        more: to_u32(all.len() - windows.len()),
        windows,
    };
    let ledger = session_ledger(history, history.window_signals());
    let rows = all
        .iter()
        .zip(&ledger.windows)
        .map(|(window, line)| HistoryWindowRow {
            window_id: window.id.clone(),
            created_at: window.created_at.clone(),
            first_seq: window.first_seq,
            last_seq: window.last_seq,
            item_count: window.event_count,
            end: line.end,
            tokens_at_end: line
                .tokens_at_end
                .map(|tokens| u32::try_from(tokens).unwrap_or(u32::MAX)),
            checkpoint_written: line.checkpoint_written,
        });
    let (filled, packed) = fill_best(rows, |kept| pack(&data(kept.to_vec())).ok().flatten());
    match packed {
        Some(output) => Ok(output),
        None => pack_or(
            &data(filled.kept),
            "The session identity does not fit one history_windows response.",
        ),
    }
}
