//! Pi history decoding: session entries into core's history model.
//!
//! Seqs are allocated over **all** entries in file (append) order, other
//! branches included, so they depend only on entry kind and role and stay
//! stable across appends and branching:
//! - `compaction`, `branch_summary`, `custom_message`: 1;
//! - a `message` with a mapped role: 1, plus 1 per `toolCall` part of an
//!   assistant message (the calls take `base+1`, `base+2`, …);
//! - anything else (system messages, custom entries, labels, …): 0.
//!
//! Only entries on the active branch are visible; the seqs of the others
//! become off-branch spans. Windows split at each reset marker on the branch
//! (current or legacy), the first being the root window. Nothing is cached:
//! the extension decodes the host's entries on every history call. A session
//! file read by [`LazySession`] gives the same transcript through
//! [`decode_lazy`], decoding in full only the active branch.

use std::collections::HashSet;

use notesoup_core::history::{
    EndReason, History, ItemKind, MessageRole, NestedArguments, NestedCall, NestedCalls,
    NoticeKind, SeqSpan, ToolStatus, Transcript, TranscriptError, TranscriptItem,
    TranscriptToolCall, TranscriptToolResult, TranscriptWindow, WindowSignals,
};
use serde_json::{Value, json};

use crate::host::PiHost;
use crate::json::to_js_string;
use crate::overflow::is_context_overflow;
use crate::projection::reset_markers;
use crate::reset::Kind;
use crate::reset::window::root_window_id;
use crate::session::{
    AgentMessage, BashExecutionMessage, Content, ContentBlock, Entry, LazySession, Leaf,
    NestedToolCalls, ToolResultMessage,
};

/// The history of the host's session at its current leaf.
pub fn host_history(host: &dyn PiHost) -> Result<History, TranscriptError> {
    let branch = host.branch(None);
    let created = host.header().and_then(|h| h.timestamp.clone());
    let (transcript, signals) = decode_with_signals(
        host.session_id(),
        created.as_deref(),
        host.entries(),
        &branch,
    );
    let mut history = History::new(transcript)?;
    history.set_window_signals(signals);
    Ok(history)
}

/// Decodes `entries` (file order) with `branch` (root first) as the active
/// branch. `created_at` dates the root window (the session header's time).
pub fn decode<'e>(
    session_id: &str,
    created_at: Option<&str>,
    entries: impl IntoIterator<Item = &'e Entry>,
    branch: &[&Entry],
) -> Transcript {
    decode_with_signals(session_id, created_at, entries, branch).0
}

/// [`decode`], with what the entries record about each window beyond its
/// items (token usage, the markers' origins, notices, compactions): the
/// window ledger's input.
pub fn decode_with_signals<'e>(
    session_id: &str,
    created_at: Option<&str>,
    entries: impl IntoIterator<Item = &'e Entry>,
    branch: &[&Entry],
) -> (Transcript, Vec<WindowSignals>) {
    let on_branch: HashSet<*const Entry> = branch.iter().map(|e| std::ptr::from_ref(*e)).collect();
    let markers: HashSet<*const Entry> = reset_markers(branch)
        .iter()
        .map(|marker| {
            // The marker is found on the branch; its entry is the same object.
            let position = marker.position;
            std::ptr::from_ref(branch[position])
        })
        .collect();
    let mut decoder = Decoder::new(session_id, created_at);
    for entry in entries {
        let pointer = std::ptr::from_ref(entry);
        if on_branch.contains(&pointer) {
            decoder.on_branch(entry, markers.contains(&pointer));
        } else {
            decoder.off_branch(seq_count(entry));
        }
    }
    decoder.finish()
}

/// [`decode`] over a [`LazySession`] at `leaf`: the same transcript. The
/// entries are decoded in batches, in file order, and none is kept past its
/// batch (the transcript keeps what it needs); an entry off the branch is
/// decoded for its seq count alone, and not at all when its type takes no
/// seq. The session header's id and time name the root window.
pub fn decode_lazy(session: &LazySession, leaf: Leaf<'_>) -> Transcript {
    decode_lazy_with_signals(session, leaf).0
}

/// [`decode_lazy`] with each window's signals, as [`decode_with_signals`].
pub fn decode_lazy_with_signals(
    session: &LazySession,
    leaf: Leaf<'_>,
) -> (Transcript, Vec<WindowSignals>) {
    let header = session.header();
    let session_id = header.map_or("", |h| h.id.as_str());
    let created_at = header.and_then(|h| h.timestamp.as_deref());
    let mut on_branch = vec![false; session.len()];
    let mut customs = Vec::new();
    for position in session.path_positions(leaf) {
        on_branch[position] = true;
        if session.entry_type(position) == "custom" {
            customs.push(position);
        }
    }
    // Only a custom entry can be a reset marker.
    let mut markers = vec![false; session.len()];
    let custom_entries = session.entries_uncached(&customs);
    let refs: Vec<&Entry> = custom_entries.iter().map(AsRef::as_ref).collect();
    for marker in reset_markers(&refs) {
        markers[customs[marker.position]] = true;
    }
    drop(custom_entries);
    // The entries are decoded a batch at a time, in file order, and dropped
    // once the transcript has what it needs of them.
    let mut decoder = Decoder::new(session_id, created_at);
    let mut batch = Vec::with_capacity(BATCH);
    let mut next = 0;
    while next < session.len() {
        batch.clear();
        while next < session.len() && batch.len() < BATCH {
            if on_branch[next] || SEQ_TYPES.contains(&session.entry_type(next)) {
                batch.push(next);
            }
            next += 1;
        }
        for (&position, entry) in batch.iter().zip(session.entries_uncached(&batch)) {
            if on_branch[position] {
                decoder.on_branch(&entry, markers[position]);
            } else {
                decoder.off_branch(seq_count(&entry));
            }
        }
    }
    decoder.finish()
}

/// How many entries [`decode_lazy`] holds decoded at a time.
const BATCH: usize = 4096;

/// The entry types that can take a seq; every other type takes none, even
/// when its fields do not match Pi's shape.
const SEQ_TYPES: [&str; 4] = ["message", "compaction", "branch_summary", "custom_message"];

/// Builds a transcript from the entries in file order.
struct Decoder {
    session_id: String,
    windows: Vec<TranscriptWindow>,
    window_ids: HashSet<String>,
    off_branch: Vec<SeqSpan>,
    next_seq: u32,
    /// One per window, beside `windows`.
    signals: Vec<WindowSignals>,
    /// The last assistant message of the current window overflowed.
    overflowed: bool,
}

impl Decoder {
    fn new(session_id: &str, created_at: Option<&str>) -> Self {
        let windows = vec![TranscriptWindow {
            id: root_window_id(session_id),
            created_at: created_at.map(str::to_owned),
            items: Vec::new(),
        }];
        let window_ids = windows.iter().map(|w| w.id.clone()).collect();
        Self {
            session_id: session_id.to_owned(),
            windows,
            window_ids,
            off_branch: Vec::new(),
            next_seq: 1,
            signals: vec![WindowSignals::default()],
            overflowed: false,
        }
    }

    /// An entry off the active branch, taking `count` seqs.
    fn off_branch(&mut self, count: u32) {
        if count > 0 {
            self.off_branch.push(SeqSpan {
                first: self.next_seq,
                last: self.next_seq.saturating_add(count - 1),
            });
        }
        self.next_seq = self.next_seq.saturating_add(count);
    }

    /// An entry on the active branch; `marker` when it is a reset marker.
    fn on_branch(&mut self, entry: &Entry, marker: bool) {
        let count = seq_count(entry);
        if marker
            && let Some(window_id) = marker_window(entry)
            // A repeated window id continues the window it names instead of
            // splitting: tools address windows by id.
            && self.window_ids.insert(window_id.to_owned())
        {
            self.windows.push(TranscriptWindow {
                id: window_id.to_owned(),
                created_at: Some(entry.timestamp().to_owned()),
                items: Vec::new(),
            });
            if let Some(ended) = self.signals.last_mut() {
                // A legacy marker records no origin.
                ended.ended_by = match marker_origin(entry) {
                    Some("forced") if self.overflowed => Some(EndReason::Overflow),
                    Some("forced") => Some(EndReason::HardReserve),
                    Some(_) => Some(EndReason::Budget),
                    None => None,
                };
            }
            self.signals.push(WindowSignals::default());
            self.overflowed = false;
        }
        self.signal(entry, self.next_seq);
        if count > 0
            && let Some(window) = self.windows.last_mut()
        {
            decode_entry(entry, self.next_seq, &mut window.items);
        }
        self.next_seq = self.next_seq.saturating_add(count);
    }

    /// What `entry`, at `seq`, tells the current window's signals.
    fn signal(&mut self, entry: &Entry, seq: u32) {
        let Some(signals) = self.signals.last_mut() else {
            return;
        };
        match entry {
            Entry::Message(message) => {
                if let AgentMessage::Assistant(assistant) = &message.message {
                    let usage = &assistant.usage;
                    let tokens = if usage.total_tokens > 0 {
                        usage.total_tokens
                    } else {
                        usage.input + usage.output + usage.cache_read + usage.cache_write
                    };
                    // An aborted or refused turn records no usage.
                    if tokens > 0 {
                        signals.fill.push((seq, tokens));
                        signals.tokens_before_end = None;
                    }
                    self.overflowed = is_context_overflow(assistant, 0);
                }
            }
            Entry::Compaction(compaction) => {
                signals
                    .compaction_summaries
                    .push(u64::try_from(compaction.summary.chars().count()).unwrap_or(u64::MAX));
                signals.tokens_before_end = Some(compaction.tokens_before);
            }
            Entry::CustomMessage(custom) => {
                if Kind::Warning.matches(&custom.custom_type) {
                    signals.notices.push((seq, NoticeKind::Warning));
                } else if Kind::Guidance.matches(&custom.custom_type) {
                    signals.notices.push((seq, NoticeKind::Reminder));
                } else if Kind::ManualWipe.matches(&custom.custom_type) {
                    signals.manual = true;
                }
            }
            _ => {}
        }
    }

    fn finish(self) -> (Transcript, Vec<WindowSignals>) {
        (
            Transcript {
                session_id: self.session_id,
                highest_seq: self.next_seq - 1,
                off_branch: self.off_branch,
                windows: self.windows,
            },
            self.signals,
        )
    }
}

fn marker_origin(entry: &Entry) -> Option<&str> {
    match entry {
        Entry::Custom(custom) => custom.data.as_ref()?.get("origin")?.as_str(),
        _ => None,
    }
}

fn marker_window(entry: &Entry) -> Option<&str> {
    match entry {
        Entry::Custom(custom) => custom.data.as_ref()?.get("windowId")?.as_str(),
        _ => None,
    }
}

/// How many seqs an entry takes.
fn seq_count(entry: &Entry) -> u32 {
    match entry {
        Entry::Compaction(_) | Entry::BranchSummary(_) | Entry::CustomMessage(_) => 1,
        Entry::Message(message) => match &message.message {
            AgentMessage::Assistant(assistant) => {
                let calls = assistant
                    .content
                    .iter()
                    .filter(|block| matches!(block, ContentBlock::ToolCall(_)))
                    .count();
                1 + u32::try_from(calls).unwrap_or(u32::MAX - 1)
            }
            AgentMessage::User(_)
            | AgentMessage::ToolResult(_)
            | AgentMessage::BashExecution(_)
            | AgentMessage::Custom(_)
            | AgentMessage::BranchSummary(_)
            | AgentMessage::CompactionSummary(_) => 1,
            AgentMessage::System(_) | AgentMessage::Unknown(_) => 0,
        },
        _ => 0,
    }
}

fn decode_entry(entry: &Entry, base: u32, items: &mut Vec<TranscriptItem>) {
    let created_at = Some(entry.timestamp().to_owned());
    let mut push = |seq: u32, kind: ItemKind| {
        items.push(TranscriptItem {
            seq,
            created_at: created_at.clone(),
            kind,
        });
    };
    let context = |text: String| ItemKind::Message {
        role: MessageRole::Context,
        text,
    };
    match entry {
        Entry::Compaction(compaction) => push(base, context(compaction.summary.clone())),
        Entry::BranchSummary(summary) => push(base, context(summary.summary.clone())),
        Entry::CustomMessage(custom) => push(
            base,
            context(custom.content.as_ref().map_or_else(String::new, text_of)),
        ),
        Entry::Message(message) => match &message.message {
            AgentMessage::User(user) => push(
                base,
                ItemKind::Message {
                    role: MessageRole::User,
                    text: text_of(&user.content),
                },
            ),
            AgentMessage::Assistant(assistant) => {
                push(
                    base,
                    ItemKind::Message {
                        role: MessageRole::Assistant,
                        text: blocks_text(&assistant.content),
                    },
                );
                let calls = assistant.content.iter().filter_map(|block| match block {
                    ContentBlock::ToolCall(call) => Some(call),
                    _ => None,
                });
                for (offset, call) in (1..).zip(calls) {
                    push(
                        base.saturating_add(offset),
                        ItemKind::from(TranscriptToolCall {
                            name: call.name.clone(),
                            call_id: call.id.clone(),
                            arguments: to_js_string(&call.arguments).ok(),
                        }),
                    );
                }
            }
            AgentMessage::ToolResult(result) => push(base, ItemKind::from(tool_result(result))),
            AgentMessage::BashExecution(bash) => push(base, ItemKind::from(bash_run(bash))),
            AgentMessage::Custom(custom) => push(base, context(text_of(&custom.content))),
            AgentMessage::BranchSummary(summary) => push(base, context(summary.summary.clone())),
            AgentMessage::CompactionSummary(summary) => {
                push(base, context(summary.summary.clone()));
            }
            AgentMessage::System(_) | AgentMessage::Unknown(_) => {}
        },
        _ => {}
    }
}

fn text_of(content: &Content) -> String {
    content.text("\n")
}

fn blocks_text(blocks: &[ContentBlock]) -> String {
    crate::session::blocks_text(blocks, "\n")
}

fn tool_result(result: &ToolResultMessage) -> TranscriptToolResult {
    let details = result.details.as_ref();
    TranscriptToolResult {
        call_id: Some(result.tool_call_id.clone()),
        name: Some(result.tool_name.clone()),
        arguments: None,
        status: if result.is_error {
            ToolStatus::Error
        } else {
            ToolStatus::Ok
        },
        output: blocks_text(&result.content),
        // Pi's own tools record truncation as `details.truncation.truncated`
        // and a saved full output as `details.fullOutputPath`.
        output_truncated: details
            .and_then(|d| d.get("truncation"))
            .and_then(|t| t.get("truncated"))
            .and_then(Value::as_bool)
            .unwrap_or(false),
        full_output_path: details
            .and_then(|d| d.get("fullOutputPath"))
            .and_then(Value::as_str)
            .map(str::to_owned),
        nested_calls: result.nested_calls.as_ref().map(nested),
    }
}

fn nested(calls: &NestedToolCalls) -> NestedCalls {
    NestedCalls {
        calls: calls
            .calls
            .iter()
            .map(|call| NestedCall {
                name: call.name.clone(),
                status: call.status.clone(),
                duration_ms: call.duration_ms,
                error: call.error.clone(),
                arguments: match (&call.arguments, call.arguments_bytes) {
                    (Some(arguments), _) => to_js_string(arguments)
                        .map_or(NestedArguments::NotRecorded, NestedArguments::Recorded),
                    (None, Some(bytes)) => NestedArguments::Omitted { bytes },
                    (None, None) => NestedArguments::NotRecorded,
                },
            })
            .collect(),
        complete: calls.complete,
    }
}

/// A `!command` the user ran: tool `bash` with arguments `{command}`.
fn bash_run(bash: &BashExecutionMessage) -> TranscriptToolResult {
    let status = if bash.cancelled {
        ToolStatus::Error
    } else {
        match bash.exit_code {
            Some(Some(0)) => ToolStatus::Ok,
            Some(Some(_)) => ToolStatus::Error,
            Some(None) | None => ToolStatus::Unfinished,
        }
    };
    TranscriptToolResult {
        call_id: None,
        name: Some("bash".to_owned()),
        arguments: to_js_string(&json!({"command": bash.command})).ok(),
        status,
        output: bash.output.clone(),
        output_truncated: bash.truncated,
        full_output_path: bash.full_output_path.clone(),
        nested_calls: None,
    }
}
