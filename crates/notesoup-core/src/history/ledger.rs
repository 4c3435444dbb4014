//! The window ledger: how each window of a session went, read back from its
//! decoded history and what the host recorded about its windows.
//!
//! Nothing is recorded for the ledger while a session runs: a host reads its
//! own transcript once more and hands [`session_ledger`] the
//! [`History`] it decodes for the history tools plus one [`WindowSignals`]
//! per window (the token counts, boundaries and notices its format records
//! and the neutral history does not). The notes written in a window are the
//! `notes_write` and `notes_update` calls the history holds, so the ledger
//! shows what the agent wrote, at the time it wrote it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::event::{HistoryEvent, Role};
use super::model::History;
use super::signals::{EndReason, NoticeKind, WindowSignals};
use super::transcript::ToolStatus;
use crate::tools::budget::{self, WIPE_MEMORY};
use crate::tools::notes::{self, NOTES_UPDATE, NOTES_WRITE};
use crate::tools::{Tool, ToolFamily};

/// One note written or updated in a window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LedgerNote {
    /// The seq of the call.
    pub seq: u32,
    /// `write` or `update`.
    pub op: String,
    /// The address as the agent wrote it.
    pub address: String,
    /// Chars of the written content (of the replacement text for an update).
    pub chars: u64,
    /// The address has no `@`: the session's checkpoint.
    pub checkpoint: bool,
    /// The text as the call carried it (the new content of a write, the
    /// replacement of an update).
    pub text: String,
    /// When the call was recorded, as the host recorded it.
    #[serde(default)]
    pub at: Option<String>,
    /// An update's edits, in order (empty for a write), so a reader can
    /// apply them to the note's earlier text.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub edits: Vec<LedgerEdit>,
    /// The update replaced every occurrence of each old text.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub replace_all: bool,
    /// The address an update moved the note to (`rename_to`), if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rename_to: Option<String>,
}

/// One edit of a `notes_update` call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LedgerEdit {
    /// The text replaced.
    pub old_text: String,
    /// Its replacement.
    pub new_text: String,
}

/// A notice with the fill at the time it was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LedgerNotice {
    /// Where the notice sits.
    pub seq: u32,
    /// Which notice.
    pub kind: NoticeKind,
    /// Context tokens at the last model turn before it.
    pub tokens: Option<u64>,
}

/// What a fresh window spent before it got back to work: from its boot to
/// its first call of a tool other than the notes, history and budget tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reorientation {
    /// Notes, history and budget calls before the first work call.
    pub tool_calls: u32,
    /// Context tokens at the model turn that made the first work call (the
    /// boot and what the agent read back included); `None` when unknown.
    pub tokens: Option<u64>,
    /// The window made a work call at all.
    pub reached_work: bool,
}

/// One window's line in the ledger.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WindowLedger {
    /// The window id.
    pub window_id: String,
    /// First and last event seq, when the window has events.
    pub first_seq: Option<u32>,
    /// See `first_seq`.
    pub last_seq: Option<u32>,
    /// When the window began, as the host recorded it.
    pub started_at: Option<String>,
    /// When its last event was recorded.
    pub ended_at: Option<String>,
    /// Events in the window.
    pub events: u32,
    /// Tool calls in the window.
    pub tool_calls: u32,
    /// Context tokens at the end: the last model turn's, or what the host
    /// measured at the boundary.
    pub tokens_at_end: Option<u64>,
    /// The context window, when known.
    pub context_window: Option<u64>,
    /// How the window ended.
    pub end: EndReason,
    /// Budget notices given.
    pub notices: Vec<LedgerNotice>,
    /// Notes written or updated, in order.
    pub notes: Vec<LedgerNote>,
    /// A checkpoint was written in the window before it ended.
    pub checkpoint_written: bool,
    /// Chars of the last checkpoint written in the window.
    pub checkpoint_chars: Option<u64>,
    /// The re-orientation cost of this window, when an earlier window ended
    /// into it.
    pub reorientation: Option<Reorientation>,
    /// A host compaction with a non-empty summary happened in or at the end
    /// of the window: a summary slipped through.
    pub slipped_summaries: u32,
    /// Context tokens after each model turn, `(seq, tokens)`: the timeline.
    pub fill: Vec<(u32, u64)>,
}

/// One session's ledger.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionLedger {
    /// The session id.
    pub session_id: String,
    /// The windows, oldest first.
    pub windows: Vec<WindowLedger>,
    /// Window ends by reason (the open window included).
    pub ends: BTreeMap<EndReason, u32>,
    /// Summaries that slipped through, over every window.
    pub slipped_summaries: u32,
    /// Events over every window.
    pub events: u32,
    /// Tool calls over every window.
    pub tool_calls: u32,
    /// Notes written or updated over every window.
    pub notes_written: u32,
    /// Notes, history and budget calls every fresh window spent before work.
    pub reorientation_calls: u32,
}

/// Builds the ledger of `history`, reading `signals[i]` for window `i` (a
/// missing entry reads as nothing recorded).
pub fn session_ledger(history: &History, signals: &[WindowSignals]) -> SessionLedger {
    let empty = WindowSignals::default();
    let events = history.events();
    let count = history.windows().len();
    let mut windows = Vec::with_capacity(count);
    let mut start = 0;
    for (index, window) in history.windows().iter().enumerate() {
        let end = start
            + events[start..]
                .iter()
                .take_while(|event| event.window == index)
                .count();
        let own = &events[start..end];
        start = end;
        let signal = signals.get(index).unwrap_or(&empty);
        let last = index + 1 == count;
        windows.push(window_ledger(
            &window.id,
            window.created_at.clone(),
            own,
            signal,
            last,
            index > 0,
        ));
    }
    let mut ends = BTreeMap::new();
    for window in &windows {
        *ends.entry(window.end).or_insert(0) += 1;
    }
    SessionLedger {
        session_id: history.session_id().to_owned(),
        ends,
        slipped_summaries: windows.iter().map(|w| w.slipped_summaries).sum(),
        events: windows.iter().map(|w| w.events).sum(),
        tool_calls: windows.iter().map(|w| w.tool_calls).sum(),
        notes_written: windows.iter().map(|w| count_u32(w.notes.len())).sum(),
        reorientation_calls: windows
            .iter()
            .filter_map(|w| w.reorientation.map(|r| r.tool_calls))
            .sum(),
        windows,
    }
}

fn window_ledger(
    id: &str,
    started_at: Option<String>,
    events: &[HistoryEvent],
    signal: &WindowSignals,
    last: bool,
    after_reset: bool,
) -> WindowLedger {
    let fill_at = |seq: u32| {
        let later = signal.fill.partition_point(|&(at, _)| at <= seq);
        later.checked_sub(1).map(|i| signal.fill[i].1)
    };
    let mut notes = Vec::new();
    let mut wiped = false;
    let mut tool_calls = 0;
    for event in events {
        let Some(tool) = &event.tool else { continue };
        tool_calls += 1;
        let name = base_name(&tool.name);
        if name == WIPE_MEMORY.name && tool.status == ToolStatus::Ok {
            wiped = true;
        }
        if tool.status != ToolStatus::Error
            && let Some(mut note) = note_of(event.seq, name, &event.document)
        {
            note.at.clone_from(&event.created_at);
            notes.push(note);
        }
    }
    let end = match signal.ended_by {
        None | Some(EndReason::Open) if last => EndReason::Open,
        // A window a later one follows, its boundary naming no reason (a
        // legacy marker, or a host that handed over no signals).
        None | Some(EndReason::Open | EndReason::Reset) if wiped => EndReason::Tool,
        None | Some(EndReason::Open) => EndReason::Reset,
        Some(EndReason::Budget) if signal.manual => EndReason::Manual,
        Some(EndReason::Budget) if wiped => EndReason::Tool,
        Some(reason) => reason,
    };
    let checkpoint = notes.iter().rev().find(|note| note.checkpoint);
    let tokens_at_end = signal
        .tokens_before_end
        .or_else(|| signal.fill.last().map(|&(_, tokens)| tokens));
    WindowLedger {
        window_id: id.to_owned(),
        first_seq: events.first().map(|e| e.seq),
        last_seq: events.last().map(|e| e.seq),
        started_at,
        ended_at: events.iter().rev().find_map(|e| e.created_at.clone()),
        events: count_u32(events.len()),
        tool_calls,
        tokens_at_end,
        context_window: signal.context_window,
        end,
        notices: signal
            .notices
            .iter()
            .map(|&(seq, kind)| LedgerNotice {
                seq,
                kind,
                tokens: fill_at(seq),
            })
            .collect(),
        checkpoint_written: checkpoint.is_some(),
        checkpoint_chars: checkpoint.map(|note| note.chars),
        notes,
        reorientation: after_reset.then(|| reorientation(events, &fill_at)),
        slipped_summaries: count_u32(
            signal
                .compaction_summaries
                .iter()
                .filter(|&&chars| chars > 0)
                .count(),
        ),
        fill: signal.fill.clone(),
    }
}

fn reorientation(events: &[HistoryEvent], fill_at: &dyn Fn(u32) -> Option<u64>) -> Reorientation {
    let mut tool_calls = 0;
    for event in events {
        let Some(tool) = &event.tool else { continue };
        if event.role != Role::Tool {
            continue;
        }
        if is_memory_tool(base_name(&tool.name)) {
            tool_calls += 1;
        } else {
            return Reorientation {
                tool_calls,
                tokens: fill_at(event.seq),
                reached_work: true,
            };
        }
    }
    Reorientation {
        tool_calls,
        tokens: None,
        reached_work: false,
    }
}

/// A host may prefix the tool names (Claude Code's
/// `mcp__plugin_notesoup_notesoup__notes_write`): the ledger reads the name
/// after the last `__`.
fn base_name(name: &str) -> &str {
    name.rsplit_once("__").map_or(name, |(_, base)| base)
}

/// One of notesoup's tools (the notes, history and budget tools), which a
/// fresh window calls to find its bearings. The history tools are known by
/// their family's glob: their list sits above the ledger, which
/// `history_windows` reads.
fn is_memory_tool(name: &str) -> bool {
    let listed = |tools: &[&Tool]| tools.iter().any(|tool| tool.name == name);
    let history = ToolFamily::History
        .glob()
        .and_then(|glob| glob.strip_suffix('*'))
        .is_some_and(|prefix| name.starts_with(prefix));
    listed(notes::TOOLS) || listed(budget::TOOLS) || history
}

/// The note a `notes_write` or `notes_update` event wrote, read from its
/// document (`<name> <JSON arguments>…`).
fn note_of(seq: u32, name: &str, document: &str) -> Option<LedgerNote> {
    let op = if name == NOTES_WRITE.name {
        "write"
    } else if name == NOTES_UPDATE.name {
        "update"
    } else {
        return None;
    };
    let (_, rest) = document.split_once(' ')?;
    let arguments: serde_json::Value = serde_json::Deserializer::from_str(rest)
        .into_iter()
        .next()?
        .ok()?;
    let address = arguments.get("address")?.as_str()?.to_owned();
    let text_of = |edit: &serde_json::Value, camel: &str, snake: &str| {
        edit.get(camel)
            .or_else(|| edit.get(snake))
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned)
    };
    let edits: Vec<LedgerEdit> = arguments
        .get("edits")
        .and_then(serde_json::Value::as_array)
        .map(|edits| {
            edits
                .iter()
                .filter_map(|edit| {
                    Some(LedgerEdit {
                        old_text: text_of(edit, "oldText", "old_text")?,
                        new_text: text_of(edit, "newText", "new_text")?,
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    let text = if op == "update" {
        edits
            .iter()
            .map(|edit| edit.new_text.as_str())
            .collect::<Vec<_>>()
            .join("\n…\n")
    } else {
        arguments
            .get("content")
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    Some(LedgerNote {
        seq,
        op: op.to_owned(),
        checkpoint: !address.starts_with('@'),
        chars: u64::try_from(text.chars().count()).unwrap_or(u64::MAX),
        address,
        text,
        at: None,
        replace_all: arguments
            .get("replace_all")
            .or_else(|| arguments.get("replaceAll"))
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(false),
        rename_to: arguments
            .get("rename_to")
            .or_else(|| arguments.get("renameTo"))
            .and_then(serde_json::Value::as_str)
            .filter(|to| !to.is_empty())
            .map(str::to_owned),
        edits,
    })
}

fn count_u32(count: usize) -> u32 {
    u32::try_from(count).unwrap_or(u32::MAX)
}
