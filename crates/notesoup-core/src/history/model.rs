//! The projected history: a transcript's items paired into public events, each
//! with its document computed once.

use std::collections::HashMap;
use std::hash::Hasher;

use super::document::tool_document;
use super::event::{HistoryEvent, NestedCallSummary, Role, ToolFacts};
use super::folded::{FoldCache, FoldedDocuments};
use super::signals::WindowSignals;
use super::transcript::{
    ItemKind, MessageRole, SeqSpan, ToolStatus, Transcript, TranscriptItem, TranscriptToolCall,
    TranscriptToolResult,
};

/// One window of the active branch, with the seq range of its events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    /// The window id.
    pub id: String,
    /// When the window began, if known.
    pub created_at: Option<String>,
    /// Lowest event seq, if the window has events.
    pub first_seq: Option<u32>,
    /// Highest event seq, if the window has events.
    pub last_seq: Option<u32>,
    /// Number of public events (paired results are inside their calls).
    pub event_count: u32,
}

/// A transcript a host built inconsistently; a bug in that host's decoder.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TranscriptError {
    /// Items must come in strictly ascending seq order across all windows.
    #[error("history item seq {seq} does not follow seq {previous}")]
    SeqOutOfOrder {
        /// The offending seq.
        seq: u32,
        /// The seq before it.
        previous: u32,
    },
    /// Seqs start at 1 and end at `highest_seq`.
    #[error("history item seq {seq} is outside 1..={highest_seq}")]
    SeqOutOfRange {
        /// The offending seq.
        seq: u32,
        /// The transcript's highest seq.
        highest_seq: u32,
    },
    /// An item on the active branch cannot sit in an off-branch span.
    #[error("history item seq {seq} lies in an off-branch span")]
    SeqOffBranch {
        /// The offending seq.
        seq: u32,
    },
    /// Off-branch spans must be well-formed and within `highest_seq`.
    #[error("off-branch span {first}..={last} is empty or past the highest seq")]
    BadSpan {
        /// First seq of the span.
        first: u32,
        /// Last seq of the span.
        last: u32,
    },
    /// [`History::extend_owned`] was handed a transcript that does not continue
    /// the history (build it again instead).
    #[error("the transcript does not continue the history: {reason}")]
    NotAContinuation {
        /// What broke the continuation.
        reason: &'static str,
    },
    /// Window ids must be unique, since tools address windows by id.
    #[error("window id {id:?} appears twice")]
    DuplicateWindowId {
        /// The repeated id.
        id: String,
    },
}

/// One session's history, ready for the history tools.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct History {
    pub(super) session_id: String,
    pub(super) highest_seq: u32,
    pub(super) off_branch: Vec<SeqSpan>,
    pub(super) windows: Vec<Window>,
    pub(super) events: Vec<HistoryEvent>,
    /// `(result seq, call seq)` for every result shown inside its call, by
    /// result seq.
    pub(super) paired_slots: Vec<(u32, u32)>,
    /// The seq of the last item read (0 before any), for [`History::extend_owned`].
    pub(super) last_item_seq: u32,
    /// The calls still waiting for a result, in seq order, each with the
    /// index of its event: a later item may finish them.
    pub(super) pending_calls: Vec<PendingCall>,
    /// The events' documents folded for search, once searched.
    pub(super) folded: FoldCache,
    /// What the host recorded about each window beyond its events, when
    /// it handed that over ([`History::set_window_signals`]).
    pub(super) window_signals: Vec<WindowSignals>,
}

/// A call without a result yet, kept so [`History::extend_owned`] can pair it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct PendingCall {
    /// Its event's index in [`History::events`].
    pub(super) event: usize,
    pub(super) call: TranscriptToolCall,
}

impl History {
    /// Validates a transcript, pairs tool calls with their results and computes
    /// every event's document.
    ///
    /// Each call takes the first unconsumed result with the same call id and a
    /// higher seq; the pair is one tool event at the call's seq, and the
    /// result's seq becomes a paired slot. An unpaired call is `unfinished`; an
    /// unpaired result stays its own event.
    pub fn new(transcript: Transcript) -> Result<Self, TranscriptError> {
        let Transcript {
            session_id,
            highest_seq,
            off_branch,
            windows: transcript_windows,
        } = transcript;
        for span in &off_branch {
            if span.first == 0 || span.first > span.last || span.last > highest_seq {
                return Err(TranscriptError::BadSpan {
                    first: span.first,
                    last: span.last,
                });
            }
        }
        let off_branch = merge_spans(off_branch);

        let mut windows = Vec::with_capacity(transcript_windows.len());
        let total = transcript_windows.iter().map(|w| w.items.len()).sum();
        let mut items: Vec<Option<(usize, TranscriptItem)>> = Vec::with_capacity(total);
        let mut seen_ids = HashMap::new();
        for (index, window) in transcript_windows.into_iter().enumerate() {
            if seen_ids.insert(window.id.clone(), index).is_some() {
                return Err(TranscriptError::DuplicateWindowId { id: window.id });
            }
            items.extend(window.items.into_iter().map(|item| Some((index, item))));
            windows.push(Window {
                id: window.id,
                created_at: window.created_at,
                first_seq: None,
                last_seq: None,
                event_count: 0,
            });
        }
        let seqs = items.iter().flatten().map(|(_, item)| item.seq);
        check_seqs(seqs, 0, highest_seq, &off_branch)?;

        let mut history = Self {
            session_id,
            highest_seq,
            off_branch,
            windows,
            events: Vec::with_capacity(items.len()),
            paired_slots: Vec::new(),
            last_item_seq: 0,
            pending_calls: Vec::new(),
            folded: FoldCache::default(),
            window_signals: Vec::new(),
        };
        history.pair_and_project(items);
        Ok(history)
    }

    /// Pairs and projects `items` (every seq above the history's items) onto
    /// the history, in seq order. The calls still pending take their
    /// results first (they come before every item), then each new call
    /// takes the first unconsumed result with its id after it; a call
    /// left without one is pending. Returns the lowest index of an existing
    /// event that changed (a pending call that got its result), else the
    /// number of events before.
    pub(super) fn pair_and_project(
        &mut self,
        mut items: Vec<Option<(usize, TranscriptItem)>>,
    ) -> usize {
        let mut first_changed = self.events.len();
        let paired_before = self.paired_slots.len();
        if let Some((_, item)) = items.iter().flatten().next_back() {
            self.last_item_seq = item.seq;
        }
        // The results' positions by the hash of their call id, each hash's
        // in ascending seq order (no id is copied).
        let mut results: Vec<(u64, usize)> = items
            .iter()
            .enumerate()
            .filter_map(|(position, slot)| Some((id_hash(result_call_id(slot)?), position)))
            .collect();
        results.sort_unstable();
        let take_first = |items: &mut [Option<(usize, TranscriptItem)>], id: &str, after| {
            let hash = id_hash(id);
            // Every position after `after` has a higher seq.
            let later = results.partition_point(|&candidate| candidate < (hash, after));
            results[later..]
                .iter()
                .take_while(|&&(candidate, _)| candidate == hash)
                .find_map(|&(_, candidate)| take_result(&mut items[candidate], id))
        };
        for pending in std::mem::take(&mut self.pending_calls) {
            let Some((result_seq, result)) = take_first(&mut items, &pending.call.call_id, 0)
            else {
                self.pending_calls.push(pending);
                continue;
            };
            let event = &mut self.events[pending.event];
            self.paired_slots.push((result_seq, event.seq));
            let parts = call_event(event.seq, pending.call, Some(result));
            event.tool = parts.tool;
            event.document = parts.document;
            first_changed = first_changed.min(pending.event);
        }
        for position in 0..items.len() {
            let Some((window, item)) = items[position].take() else {
                continue; // a result already shown inside its call
            };
            let event = match item.kind {
                ItemKind::Message { role, text } => message_event(item.seq, role, text),
                ItemKind::ToolResult(result) => unpaired_result_event(item.seq, *result),
                ItemKind::ToolCall(call) => {
                    let result = take_first(&mut items, &call.call_id, position + 1);
                    match &result {
                        Some((result_seq, _)) => self.paired_slots.push((*result_seq, item.seq)),
                        None => self.pending_calls.push(PendingCall {
                            event: self.events.len(),
                            call: TranscriptToolCall::clone(&call),
                        }),
                    }
                    call_event(item.seq, *call, result.map(|(_, result)| result))
                }
            };
            self.push_event(window, item.created_at, event);
        }
        // Every new result seq is above the earlier ones.
        self.paired_slots[paired_before..].sort_unstable();
        first_changed
    }

    fn push_event(&mut self, window: usize, created_at: Option<String>, event: EventParts) {
        let seq = event.seq;
        if let Some(info) = self.windows.get_mut(window) {
            info.first_seq.get_or_insert(seq);
            info.last_seq = Some(seq);
            info.event_count += 1;
        }
        self.events.push(HistoryEvent {
            seq,
            window,
            role: event.role,
            created_at,
            tool: event.tool,
            document: event.document,
        });
    }

    /// Hands over what the host's format records about each window beyond
    /// its events (`signals[i]` for window `i`), so `history_windows` can
    /// say how each window ended and how full it was. A host sets them
    /// again after [`History::extend_owned`]: they are not extended.
    pub fn set_window_signals(&mut self, signals: Vec<WindowSignals>) {
        self.window_signals = signals;
    }

    /// The window signals the host handed over (none when it did not).
    pub fn window_signals(&self) -> &[WindowSignals] {
        &self.window_signals
    }

    /// The session id.
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// The last seq allocated over all entries, other branches included.
    pub fn highest_seq(&self) -> u32 {
        self.highest_seq
    }

    /// The active branch's windows, oldest first.
    pub fn windows(&self) -> &[Window] {
        &self.windows
    }

    /// Every public event, in ascending seq order.
    pub fn events(&self) -> &[HistoryEvent] {
        &self.events
    }

    /// Every event's document case-folded, in event order: built on the
    /// first call (a search), then kept with the history and its clones.
    pub fn folded(&self) -> &FoldedDocuments {
        self.folded.get_or_fold(&self.events)
    }

    /// The event at `seq`, if one lives there.
    pub fn event(&self, seq: u32) -> Option<&HistoryEvent> {
        self.events
            .binary_search_by_key(&seq, |event| event.seq)
            .ok()
            .map(|index| &self.events[index])
    }

    /// True when `seq` was allocated to an entry off the active branch.
    pub fn is_off_branch(&self, seq: u32) -> bool {
        span_contains(&self.off_branch, seq)
    }

    /// The call seq whose event shows the result at `seq`, if `seq` is a
    /// paired result slot.
    pub fn paired_call(&self, seq: u32) -> Option<u32> {
        self.paired_slots
            .binary_search_by_key(&seq, |&(result, _)| result)
            .ok()
            .map(|index| self.paired_slots[index].1)
    }
}

/// An event before it is placed in its window.
struct EventParts {
    seq: u32,
    role: Role,
    tool: Option<ToolFacts>,
    document: String,
}

fn message_event(seq: u32, role: MessageRole, text: String) -> EventParts {
    let role = match role {
        MessageRole::User => Role::User,
        MessageRole::Assistant => Role::Assistant,
        MessageRole::Context => Role::Context,
    };
    EventParts {
        seq,
        role,
        tool: None,
        document: text,
    }
}

/// The call id of the result in `slot`, if it holds one.
fn result_call_id(slot: &Option<(usize, TranscriptItem)>) -> Option<&str> {
    match slot {
        Some((
            _,
            TranscriptItem {
                kind: ItemKind::ToolResult(result),
                ..
            },
        )) => result.call_id.as_deref(),
        _ => None,
    }
}

fn id_hash(id: &str) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    hasher.write(id.as_bytes());
    hasher.finish()
}

/// Takes the result in `slot` if it answers the call `id`.
fn take_result(
    slot: &mut Option<(usize, TranscriptItem)>,
    id: &str,
) -> Option<(u32, TranscriptToolResult)> {
    if result_call_id(slot) != Some(id) {
        return None;
    }
    match slot.take() {
        Some((
            _,
            TranscriptItem {
                seq,
                kind: ItemKind::ToolResult(result),
                ..
            },
        )) => Some((seq, *result)),
        _ => None,
    }
}

fn call_event(
    seq: u32,
    call: TranscriptToolCall,
    result: Option<TranscriptToolResult>,
) -> EventParts {
    let Some(mut result) = result else {
        return tool_event(seq, call.name, call.arguments, ToolStatus::Unfinished, None);
    };
    let arguments = call.arguments.or_else(|| result.arguments.take());
    let status = result.status;
    tool_event(seq, call.name, arguments, status, Some(result))
}

fn unpaired_result_event(seq: u32, mut result: TranscriptToolResult) -> EventParts {
    let name = result.name.take().unwrap_or_else(|| "unknown".to_owned());
    let arguments = result.arguments.take();
    let status = result.status;
    tool_event(seq, name, arguments, status, Some(result))
}

fn tool_event(
    seq: u32,
    name: String,
    arguments: Option<String>,
    status: ToolStatus,
    result: Option<TranscriptToolResult>,
) -> EventParts {
    let (output, output_truncated, full_output_path, nested) = match result {
        Some(result) => (
            result.output,
            result.output_truncated,
            result.full_output_path,
            result.nested_calls,
        ),
        None => (String::new(), false, None, None),
    };
    let document = tool_document(&name, arguments.as_deref(), output, nested.as_ref());
    EventParts {
        seq,
        role: Role::Tool,
        tool: Some(ToolFacts {
            name,
            status,
            output_truncated,
            full_output_path,
            nested_calls: nested.map(|nested| NestedCallSummary {
                call_count: u32::try_from(nested.calls.len()).unwrap_or(u32::MAX),
                complete: nested.complete,
            }),
        }),
        document,
    }
}

/// Checks that the items' `seqs` ascend strictly from above `previous`, stay within
/// `highest_seq` and avoid the off-branch spans.
pub(super) fn check_seqs(
    seqs: impl IntoIterator<Item = u32>,
    mut previous: u32,
    highest_seq: u32,
    off_branch: &[SeqSpan],
) -> Result<(), TranscriptError> {
    for seq in seqs {
        if seq == 0 || seq > highest_seq {
            return Err(TranscriptError::SeqOutOfRange { seq, highest_seq });
        }
        if seq <= previous {
            return Err(TranscriptError::SeqOutOfOrder { seq, previous });
        }
        if span_contains(off_branch, seq) {
            return Err(TranscriptError::SeqOffBranch { seq });
        }
        previous = seq;
    }
    Ok(())
}

/// Sorts spans and merges overlapping or adjacent ones, so lookups can binary
/// search.
pub(super) fn merge_spans(mut spans: Vec<SeqSpan>) -> Vec<SeqSpan> {
    spans.sort_unstable_by_key(|span| span.first);
    let mut merged: Vec<SeqSpan> = Vec::with_capacity(spans.len());
    for span in spans {
        match merged.last_mut() {
            Some(last) if span.first <= last.last.saturating_add(1) => {
                last.last = last.last.max(span.last);
            }
            _ => merged.push(span),
        }
    }
    merged
}

/// True when `seq` lies in one of the sorted, disjoint `spans`.
pub(super) fn span_contains(spans: &[SeqSpan], seq: u32) -> bool {
    let after = spans.partition_point(|span| span.first <= seq);
    after > 0 && spans[after - 1].contains(seq)
}
