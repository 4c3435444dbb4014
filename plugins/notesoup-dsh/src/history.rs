//! History on dsh: a session log decoded into core's transcript model, for the
//! history tools.
//!
//! dsh's log is linear and append-only, so nothing is off-branch and a seq
//! never moves: notesoup's seq of an event is its dsh seq plus one (core's
//! seqs start at 1; dsh's at 0), and `highest_seq` is the log's length.
//! Windows split at notesoup's reset markers; the events a reset shadowed stay
//! readable as the earlier windows.
//!
//! | dsh event | item |
//! |---|---|
//! | `user/message` from the human (`source.kind` `user`, or no source) | user message |
//! | any other `user/message` (notesoup boots and notices, dsh's runtime context, compaction summaries) | context message |
//! | `assistant/message` | assistant message (its text blocks) |
//! | `tool/call` | tool call at its own seq |
//! | `tool/result` | tool result, paired by core with its call |
//!
//! A `tool/result` that replaces another on the surface (dsh's tool-result
//! pruner re-logs a shortened copy) is skipped: history keeps the original.
//! Everything else (chunks, turns, steps, headers, inbox splices) carries no
//! item.

use std::collections::HashMap;

use jiff::Timestamp;
use notesoup_core::history::{
    EndReason, History, ItemKind, MessageRole, NoticeKind, SessionLedger, ToolStatus, Transcript,
    TranscriptError, TranscriptItem, TranscriptToolCall, TranscriptToolResult, TranscriptWindow,
    WindowSignals, session_ledger,
};
use serde_json::Value;

use crate::decode::{SessionEvent, SurfaceOp};
use crate::messages::DshNotice;
use crate::window::{parse_window_id, windows};

/// A log the history tools cannot read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HistoryError {
    /// The log has more events than history seqs can address.
    #[error("the session log has more than {max} events; history cannot address seq {seq}", max = u32::MAX - 1)]
    TooLong {
        /// The dsh seq past the limit.
        seq: u64,
    },
    /// The decoded transcript broke core's rules (a bug in this decoder).
    #[error("decoded history is inconsistent: {0}")]
    Transcript(#[from] TranscriptError),
}

/// notesoup's history seq of a dsh event seq.
pub fn history_seq(dsh_seq: u64) -> Result<u32, HistoryError> {
    dsh_seq
        .checked_add(1)
        .and_then(|seq| u32::try_from(seq).ok())
        .ok_or(HistoryError::TooLong { seq: dsh_seq })
}

/// The history of one session, from its whole log in seq order.
pub fn history(session_id: &str, events: &[SessionEvent]) -> Result<History, HistoryError> {
    let mut history = History::new(transcript(session_id, events)?)?;
    history.set_window_signals(window_signals(session_id, events)?);
    Ok(history)
}

/// Decodes a whole log, in seq order, into core's transcript.
pub fn transcript(session_id: &str, events: &[SessionEvent]) -> Result<Transcript, HistoryError> {
    let highest_seq = match events.last() {
        Some(last) => history_seq(last.seq)?,
        None => 0,
    };
    let named_calls = named_calls(events);
    let spans = windows(session_id, events);
    let mut out: Vec<TranscriptWindow> = spans
        .iter()
        .map(|span| TranscriptWindow {
            id: span.id.clone(),
            created_at: span.created_at.and_then(timestamp),
            items: Vec::new(),
        })
        .collect();
    let mut current = 0;
    for event in events {
        while spans
            .get(current + 1)
            .and_then(|next| next.marker_seq)
            .is_some_and(|marker| marker <= event.seq)
        {
            current += 1;
        }
        let Some(kind) = item_kind(event, &named_calls) else {
            continue;
        };
        let item = TranscriptItem {
            seq: history_seq(event.seq)?,
            created_at: event.time.and_then(timestamp),
            kind,
        };
        if let Some(window) = out.get_mut(current) {
            window.items.push(item);
        }
    }
    Ok(Transcript {
        session_id: session_id.to_owned(),
        highest_seq,
        off_branch: Vec::new(),
        windows: out,
    })
}

/// The window ledger of one session, from its whole log in seq order.
pub fn ledger(session_id: &str, events: &[SessionEvent]) -> Result<SessionLedger, HistoryError> {
    let history = history(session_id, events)?;
    Ok(session_ledger(
        &history,
        &window_signals(session_id, events)?,
    ))
}

/// What the log records about each window beyond its items: each reply's
/// usage, the model window of each request, notesoup's notices, the
/// markers' origins, and a summary dsh's own compaction left.
pub fn window_signals(
    session_id: &str,
    events: &[SessionEvent],
) -> Result<Vec<WindowSignals>, HistoryError> {
    let spans = windows(session_id, events);
    let mut signals = vec![WindowSignals::default(); spans.len()];
    let mut current = 0;
    let mut context_window = None;
    let mut usage = None;
    let mut overflowed = false;
    for event in events {
        while spans
            .get(current + 1)
            .and_then(|next| next.marker_seq)
            .is_some_and(|marker| marker <= event.seq)
        {
            let origin = event.source().and_then(|source| source.origin);
            if let Some(ended) = signals.get_mut(current) {
                ended.ended_by = Some(match origin.as_deref() {
                    Some("forced") if overflowed => EndReason::Overflow,
                    Some("forced") => EndReason::HardReserve,
                    _ => EndReason::Budget,
                });
            }
            overflowed = false;
            current += 1;
        }
        let Some(window) = signals.get_mut(current) else {
            continue;
        };
        let seq = history_seq(event.seq)?;
        match event.kind.as_str() {
            "request/context" => {
                if let Some(size) = event.data.get("contextWindow").and_then(Value::as_u64) {
                    context_window = Some(size);
                }
            }
            "assistant/chunk" => {
                let chunk = event.data.get("chunk");
                match chunk.and_then(|c| c.get("type")).and_then(Value::as_str) {
                    Some("usage") => {
                        usage = chunk.and_then(|c| c.get("usage")).map(usage_tokens);
                    }
                    // The provider refused the request as too long: dsh
                    // logs the stream's end with the failure, and the
                    // engine's retry after the reset logs no request error.
                    Some("finish") => {
                        overflowed |= chunk
                            .and_then(|c| c.pointer("/reason/failure/code"))
                            .and_then(Value::as_str)
                            == Some(CONTEXT_WINDOW_EXCEEDED);
                    }
                    _ => {}
                }
            }
            "assistant/message" => {
                let recorded = event
                    .data
                    .get("message")
                    .and_then(|m| m.get("usage"))
                    .map(usage_tokens)
                    .or(usage.take());
                if let Some(tokens) = recorded.filter(|&tokens| tokens > 0) {
                    window.fill.push((seq, tokens));
                }
            }
            "agent/request-error" => {
                overflowed |= event.data.to_string().contains(CONTEXT_WINDOW_EXCEEDED);
            }
            "user/message" => {
                let Some(source) = event.source() else {
                    continue;
                };
                if source.plugin.as_deref() == Some("compact") {
                    let chars = event.text().chars().count();
                    window
                        .compaction_summaries
                        .push(u64::try_from(chars).unwrap_or(u64::MAX));
                } else if source.is_notesoup() && source.form.as_deref() == Some("notice") {
                    match source.notice.as_deref().and_then(DshNotice::parse) {
                        Some(DshNotice::Reminder) => {
                            window.notices.push((seq, NoticeKind::Reminder));
                        }
                        Some(DshNotice::Warning) => {
                            window.notices.push((seq, NoticeKind::Warning));
                        }
                        Some(DshNotice::CloseOut) => window.manual = true,
                        Some(DshNotice::Continuation) | None => {}
                    }
                }
            }
            _ => {}
        }
        window.context_window = context_window;
    }
    Ok(signals)
}

/// The failure code dsh gives a request the provider refused as too long.
const CONTEXT_WINDOW_EXCEEDED: &str = "CONTEXT_WINDOW_EXCEEDED";

/// A dsh usage record's tokens: what the request carried and the reply
/// added.
fn usage_tokens(usage: &Value) -> u64 {
    [
        "inputTokens",
        "outputTokens",
        "cacheReadTokens",
        "cacheWriteTokens",
    ]
    .iter()
    .filter_map(|key| usage.get(key).and_then(Value::as_u64))
    .sum()
}

/// The history of one session, decoded incrementally: the log is
/// append-only, so each call decodes only the events logged since the last
/// one, and a log that did not change answers from the model it already
/// built. A log sent again from seq 0 (a re-sync) is decoded afresh.
///
/// It decodes exactly as [`transcript`] does for any log in which a tool
/// result comes after the assistant message that called it (dsh logs them
/// in that order); a property test holds the two equal over random logs cut
/// into random batches.
#[derive(Debug, Clone)]
pub struct IncrementalHistory {
    session_id: String,
    /// The mirror generation the decoded prefix came from.
    generation: u64,
    /// How many events are decoded.
    decoded: usize,
    /// The last window's ordinal.
    ordinal: u64,
    named_calls: HashMap<String, (String, Option<String>)>,
    transcript: Transcript,
    /// The model over the decoded prefix, built at the last call.
    built: Option<History>,
}

impl IncrementalHistory {
    /// An empty history of `session_id`.
    pub fn new(session_id: &str) -> Self {
        Self {
            session_id: session_id.to_owned(),
            generation: 0,
            decoded: 0,
            ordinal: 1,
            named_calls: HashMap::new(),
            transcript: empty_transcript(session_id),
            built: None,
        }
    }

    /// The history of `events` (the whole log, in seq order) from mirror
    /// generation `generation`: a new generation, or a log shorter than what
    /// was decoded, starts over.
    pub fn history(
        &mut self,
        generation: u64,
        events: &[SessionEvent],
    ) -> Result<&History, HistoryError> {
        if generation != self.generation || events.len() < self.decoded {
            *self = Self::new(&self.session_id);
            self.generation = generation;
        }
        // Decoding new events drops the model built before them.
        self.extend(&events[self.decoded..])?;
        let built = match self.built.take() {
            Some(built) => built,
            None => History::new(self.transcript.clone())?,
        };
        Ok(self.built.insert(built))
    }

    /// The transcript of the decoded prefix.
    pub fn transcript(&self) -> &Transcript {
        &self.transcript
    }

    /// Decodes the next events of the log.
    pub fn extend(&mut self, events: &[SessionEvent]) -> Result<(), HistoryError> {
        for event in events {
            let seq = history_seq(event.seq)?;
            if self.decoded == 0
                && let Some(first) = self.transcript.windows.first_mut()
            {
                first.created_at = event.time.and_then(timestamp);
            }
            if let Some(ordinal) = self.opens_window(event) {
                self.ordinal = ordinal;
                self.transcript.windows.push(TranscriptWindow {
                    id: crate::window::window_id(&self.session_id, ordinal),
                    created_at: event.time.and_then(timestamp),
                    items: Vec::new(),
                });
            }
            for call in event.tool_calls() {
                let arguments = compact_arguments(&call.arguments);
                self.named_calls.insert(call.id, (call.name, arguments));
            }
            if let Some(kind) = item_kind(event, &self.named_calls)
                && let Some(window) = self.transcript.windows.last_mut()
            {
                window.items.push(TranscriptItem {
                    seq,
                    created_at: event.time.and_then(timestamp),
                    kind,
                });
            }
            self.transcript.highest_seq = seq;
            self.decoded += 1;
            self.built = None;
        }
        Ok(())
    }

    /// The ordinal of the window `event` opens, numbered as [`windows`]
    /// numbers it.
    fn opens_window(&self, event: &SessionEvent) -> Option<u64> {
        if event.kind != "user/message" {
            return None;
        }
        let source = event.source()?;
        if !source.is_notesoup() || source.form.as_deref() != Some("snapshot") {
            return None;
        }
        let named = source
            .window_id
            .as_deref()
            .and_then(|id| parse_window_id(&self.session_id, id))
            .filter(|n| *n > self.ordinal);
        named.or_else(|| self.ordinal.checked_add(1))
    }
}

fn empty_transcript(session_id: &str) -> Transcript {
    Transcript {
        session_id: session_id.to_owned(),
        highest_seq: 0,
        off_branch: Vec::new(),
        windows: vec![TranscriptWindow {
            id: crate::window::window_id(session_id, 1),
            created_at: None,
            items: Vec::new(),
        }],
    }
}

/// The name and arguments of every tool call the model made, by call id, so a
/// result whose `tool/call` event is missing still names its tool.
fn named_calls(events: &[SessionEvent]) -> HashMap<String, (String, Option<String>)> {
    events
        .iter()
        .flat_map(SessionEvent::tool_calls)
        .map(|call| {
            let arguments = compact_arguments(&call.arguments);
            (call.id, (call.name, arguments))
        })
        .collect()
}

fn item_kind(
    event: &SessionEvent,
    named_calls: &HashMap<String, (String, Option<String>)>,
) -> Option<ItemKind> {
    match event.kind.as_str() {
        "user/message" => {
            let human = event.source().is_none_or(|source| source.kind == "user");
            let role = if human {
                MessageRole::User
            } else {
                MessageRole::Context
            };
            Some(ItemKind::Message {
                role,
                text: event.text(),
            })
        }
        "assistant/message" => Some(ItemKind::Message {
            role: MessageRole::Assistant,
            text: event.text(),
        }),
        "tool/call" => {
            let field = |key: &str| event.data.get(key).and_then(Value::as_str);
            Some(ItemKind::from(TranscriptToolCall {
                name: field("name").unwrap_or("unknown").to_owned(),
                call_id: field("callId").unwrap_or_default().to_owned(),
                arguments: field("arguments").and_then(compact_arguments),
            }))
        }
        "tool/result" if !matches!(event.surface_op, Some(SurfaceOp::Replace { .. })) => {
            let result = event.tool_result()?;
            let named = named_calls.get(&result.call_id);
            Some(ItemKind::from(TranscriptToolResult {
                name: named.map(|(name, _)| name.clone()),
                arguments: named.and_then(|(_, arguments)| arguments.clone()),
                call_id: Some(result.call_id),
                status: if result.is_error {
                    ToolStatus::Error
                } else {
                    ToolStatus::Ok
                },
                output: result.text,
                output_truncated: false,
                full_output_path: None,
                nested_calls: None,
            }))
        }
        _ => None,
    }
}

/// The arguments as compact JSON; text that is not JSON is kept as recorded,
/// and an empty string means none were recorded.
fn compact_arguments(raw: &str) -> Option<String> {
    if raw.trim().is_empty() {
        return None;
    }
    Some(
        serde_json::from_str::<Value>(raw)
            .map(|value| value.to_string())
            .unwrap_or_else(|_| raw.to_owned()),
    )
}

/// Epoch milliseconds as an RFC 3339 UTC timestamp.
fn timestamp(ms: i64) -> Option<String> {
    Timestamp::from_millisecond(ms).ok().map(|t| t.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use notesoup_core::history::Role;
    use serde_json::json;

    fn ev(seq: u64, kind: &str, data: Value, op: Option<SurfaceOp>) -> SessionEvent {
        SessionEvent {
            time: Some(1_796_086_296_000 + seq as i64),
            ..SessionEvent::test_event(seq, kind, data, op)
        }
    }

    fn user(seq: u64, text: &str, source: Value) -> SessionEvent {
        ev(
            seq,
            "user/message",
            json!({"role": "user", "content": [{"type": "text", "text": text}], "source": source}),
            Some(SurfaceOp::Append),
        )
    }

    fn result(seq: u64, call: &str, text: &str, op: SurfaceOp) -> SessionEvent {
        ev(
            seq,
            "tool/result",
            json!({"message": {"source": {"kind": "tool", "callId": call},
                "content": [{"type": "tool-result", "toolCallId": call, "isError": false,
                             "content": [{"type": "text", "text": text}]}]}}),
            Some(op),
        )
    }

    #[test]
    fn seqs_shift_by_one_and_stop_at_u32() {
        assert_eq!(history_seq(0), Ok(1));
        assert_eq!(history_seq(41), Ok(42));
        assert_eq!(
            history_seq(u64::from(u32::MAX)),
            Err(HistoryError::TooLong {
                seq: u64::from(u32::MAX)
            })
        );
    }

    #[test]
    fn pruned_copies_and_missing_calls() {
        let assistant = ev(
            1,
            "assistant/message",
            json!({"message": {"content": [
                {"type": "tool-call", "id": "c1", "name": "read", "arguments": "{ \"path\": \"a\" }"},
                {"type": "tool-call", "id": "c2", "name": "bash", "arguments": "{\"command\":\"ls\"}"}]}}),
            Some(SurfaceOp::Append),
        );
        let events = vec![
            user(0, "go", json!({"kind": "user"})),
            assistant,
            ev(
                2,
                "tool/call",
                json!({"callId": "c1", "name": "read", "arguments": "{ \"path\": \"a\" }"}),
                None,
            ),
            result(3, "c1", "full text", SurfaceOp::Append),
            // c2's tool/call was never logged.
            result(4, "c2", "listing", SurfaceOp::Append),
            ev(5, "compaction/prune", json!({}), None),
            result(6, "c1", "short", SurfaceOp::Replace { start: 3, end: 3 }),
        ];
        let history = history("s", &events).expect("history");
        assert_eq!(history.highest_seq(), 7);
        let seqs: Vec<(u32, Role)> = history.events().iter().map(|e| (e.seq, e.role)).collect();
        // The assistant message only called tools: an empty assistant event.
        assert_eq!(
            seqs,
            [
                (1, Role::User),
                (2, Role::Assistant),
                (3, Role::Tool),
                (5, Role::Tool)
            ]
        );
        let read = history.event(3).expect("paired call");
        assert!(read.document.starts_with("read {\"path\":\"a\"}"));
        assert!(read.document.contains("full text"));
        assert_eq!(history.paired_call(4), Some(3));
        let bash = history.event(5).expect("result without a logged call");
        assert_eq!(bash.tool.as_ref().map(|t| t.name.as_str()), Some("bash"));
        assert!(bash.document.starts_with("bash {\"command\":\"ls\"}"));
        assert!(history.event(7).is_none(), "the pruned copy is no event");
    }

    #[test]
    fn sources_decide_user_or_context() {
        let events = vec![
            user(0, "typed", json!({"kind": "user"})),
            ev(
                1,
                "user/message",
                json!({"content": [{"type": "text", "text": "no source"}]}),
                Some(SurfaceOp::Append),
            ),
            user(2, "summary", json!({"kind": "plugin", "plugin": "compact"})),
            user(
                3,
                "reminder",
                json!({"kind": "plugin", "plugin": "notesoup", "form": "notice"}),
            ),
        ];
        let history = history("s", &events).expect("history");
        let roles: Vec<Role> = history.events().iter().map(|e| e.role).collect();
        assert_eq!(
            roles,
            [Role::User, Role::User, Role::Context, Role::Context]
        );
        assert_eq!(
            history.events()[0].created_at.as_deref(),
            Some("2026-12-01T00:51:36Z")
        );
    }

    #[test]
    fn a_window_s_fill_and_notices_are_what_was_measured_and_told() {
        let answered = |seq, usage: Value| {
            ev(
                seq,
                "assistant/message",
                json!({"message": {"content": [{"type": "text", "text": "ok"}], "usage": usage}}),
                Some(SurfaceOp::Append),
            )
        };
        let notice = |seq, plugin| {
            user(
                seq,
                "told",
                json!({"kind": "plugin", "plugin": plugin, "form": "notice", "notice": "reminder"}),
            )
        };
        let events = vec![
            user(0, "go", json!({"kind": "user"})),
            answered(1, json!({"inputTokens": 0, "outputTokens": 0})),
            answered(2, json!({"inputTokens": 900, "outputTokens": 100})),
            notice(3, "another-plugin"),
            notice(4, "notesoup"),
        ];
        let signals = window_signals("s", &events).expect("signals");
        assert_eq!(signals.len(), 1);
        assert_eq!(
            signals[0].fill,
            [(3, 1_000)],
            "a zero usage measures nothing"
        );
        assert_eq!(
            signals[0].notices,
            [(5, NoticeKind::Reminder)],
            "notesoup's only"
        );
    }

    /// One generated event, before seqs are given.
    #[derive(Debug, Clone)]
    enum Shape {
        Human(String),
        Context,
        Marker(Option<u64>, bool),
        AssistantText(String),
        AssistantCalls(usize),
        ToolCall,
        ToolResult {
            declared: bool,
            pruned: bool,
            error: bool,
        },
        Chunk,
        NoTime,
    }

    fn shape() -> impl proptest::strategy::Strategy<Value = Shape> {
        use proptest::prelude::*;
        prop_oneof![
            "[a-z ]{0,12}".prop_map(Shape::Human),
            Just(Shape::Context),
            (proptest::option::of(0u64..6), any::<bool>())
                .prop_map(|(n, own)| Shape::Marker(n, own)),
            "[a-z ]{0,12}".prop_map(Shape::AssistantText),
            (0usize..3).prop_map(Shape::AssistantCalls),
            Just(Shape::ToolCall),
            (any::<bool>(), any::<bool>(), any::<bool>()).prop_map(|(declared, pruned, error)| {
                Shape::ToolResult {
                    declared,
                    pruned,
                    error,
                }
            }),
            Just(Shape::Chunk),
            Just(Shape::NoTime),
        ]
    }

    /// A log in dsh's order: a result names only calls declared before it
    /// (or a call id no message declares), each call id declared once.
    fn build(shapes: &[Shape]) -> Vec<SessionEvent> {
        let mut declared: Vec<String> = Vec::new();
        let mut events = Vec::new();
        for (index, shape) in shapes.iter().enumerate() {
            let seq = index as u64;
            let event = match shape {
                Shape::Human(text) => user(seq, text, json!({"kind": "user"})),
                Shape::Context => user(
                    seq,
                    "snapshot",
                    json!({"kind": "plugin", "plugin": "@deepseek-ai/dsh-system-prompt", "form": "snapshot"}),
                ),
                Shape::Marker(ordinal, own) => {
                    let session = if *own { "s" } else { "other" };
                    let window = ordinal.map(|n| format!("dsh:{session}:{n}"));
                    user(
                        seq,
                        "BOOT",
                        json!({"kind": "plugin", "plugin": "notesoup", "form": "snapshot", "windowId": window}),
                    )
                }
                Shape::AssistantText(text) => ev(
                    seq,
                    "assistant/message",
                    json!({"message": {"content": [{"type": "text", "text": text}]}}),
                    Some(SurfaceOp::Append),
                ),
                Shape::AssistantCalls(count) => {
                    let blocks: Vec<Value> = (0..*count).map(|k| {
                        let id = format!("c{seq}-{k}");
                        declared.push(id.clone());
                        json!({"type": "tool-call", "id": id, "name": format!("tool{k}"), "arguments": format!("{{ \"k\": {k} }}")})
                    }).collect();
                    ev(
                        seq,
                        "assistant/message",
                        json!({"message": {"content": blocks}}),
                        Some(SurfaceOp::Append),
                    )
                }
                Shape::ToolCall => {
                    let id = declared.last().cloned().unwrap_or_else(|| "ghost".into());
                    ev(
                        seq,
                        "tool/call",
                        json!({"callId": id, "name": "logged", "arguments": "{}"}),
                        None,
                    )
                }
                Shape::ToolResult {
                    declared: known,
                    pruned,
                    error,
                } => {
                    let id = if *known {
                        declared.first().cloned()
                    } else {
                        None
                    }
                    .unwrap_or_else(|| "ghost".into());
                    let op = if *pruned {
                        SurfaceOp::Replace { start: 0, end: 0 }
                    } else {
                        SurfaceOp::Append
                    };
                    ev(
                        seq,
                        "tool/result",
                        json!({"message": {"content": [{"type": "tool-result", "toolCallId": id, "isError": error,
                        "content": [{"type": "text", "text": "out"}]}]}}),
                        Some(op),
                    )
                }
                Shape::Chunk => ev(seq, "assistant/chunk", Value::Null, None),
                Shape::NoTime => SessionEvent {
                    time: None,
                    ..ev(seq, "turn/start", json!({}), None)
                },
            };
            events.push(event);
        }
        events
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(256))]

        #[test]
        fn incremental_decoding_equals_a_fresh_decode(
            shapes in proptest::collection::vec(shape(), 0..60),
            cuts in proptest::collection::vec(0usize..60, 0..6),
        ) {
            let events = build(&shapes);
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(events.len())).collect();
            cuts.push(events.len());
            cuts.sort_unstable();
            let mut incremental = IncrementalHistory::new("s");
            for end in cuts {
                // Through the caching entry point, as the sidecar calls it.
                let built = incremental.history(1, &events[..end]).map(|h| h.highest_seq());
                let fresh = transcript("s", &events[..end]);
                proptest::prop_assert_eq!(incremental.transcript(), &fresh.clone().expect("fresh decode"));
                proptest::prop_assert_eq!(built.ok(), History::new(fresh.expect("fresh")).ok().map(|h| h.highest_seq()));
            }
            // A re-send from seq 0 starts over.
            let half = &events[..events.len() / 2];
            incremental.history(2, half).expect("history");
            proptest::prop_assert_eq!(incremental.transcript(), &transcript("s", half).expect("fresh"));
            // A shorter log than the one decoded starts over too.
            let quarter = &events[..events.len() / 4];
            incremental.history(2, quarter).expect("history");
            proptest::prop_assert_eq!(incremental.transcript(), &transcript("s", quarter).expect("fresh"));
        }
    }
}
