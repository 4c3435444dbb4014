//! The versioned JSON-lines protocol between the bundle and `notesoup-dsh
//! serve`.
//!
//! One request per line, `{"id": N, "op": "...", "params": {...}}`; one answer
//! per line, `{"id": N, "result": {...}}` or `{"id": N, "error": {"code",
//! "message"}}`. The first request is `hello`; a protocol mismatch is refused
//! and the bundle then runs without notesoup (fail closed). Session-scoped
//! requests carry the session events the sidecar has not seen yet.

use notesoup_core::plumbing::LineRead;
use notesoup_core::tools::CompactJson;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use typeshare::typeshare;

use crate::decode::SessionEvent;
use crate::messages::ResetOrigin;

/// The protocol version both sides must speak.
pub const PROTOCOL_VERSION: u32 = 1;

/// One request line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Request {
    /// Echoed in the answer.
    pub id: u64,
    /// The operation and its parameters.
    #[serde(flatten)]
    pub call: Call,
}

impl Request {
    /// Parses one request line. Equivalent to deserializing [`Request`], but
    /// the params go straight into their type ([`LineRead::envelope`]).
    pub fn parse(line: &str) -> Result<Self, serde_json::Error> {
        let (id, op, params) = LineRead::envelope(line.as_bytes())?;
        let params = params.get();
        let call = match op.as_ref() {
            "hello" => Call::Hello(serde_json::from_str(params)?),
            "window.open" => Call::WindowOpen(serde_json::from_str(params)?),
            "budget.decide" => Call::BudgetDecide(serde_json::from_str(params)?),
            "tool" => Call::Tool(serde_json::from_str(params)?),
            "reset.plan" => Call::ResetPlan(serde_json::from_str(params)?),
            "command.fresh_window" => Call::FreshWindow(serde_json::from_str(params)?),
            "session.sync" => Call::SessionSync(serde_json::from_str(params)?),
            other => return Err(serde::de::Error::unknown_variant(other, OPS)),
        };
        Ok(Self { id, call })
    }
}

/// Every op name, as [`Call`] spells it on the wire.
pub const OPS: &[&str] = &[
    "hello",
    "window.open",
    "budget.decide",
    "tool",
    "reset.plan",
    "command.fresh_window",
    "session.sync",
];

/// Every operation, with its parameters.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", content = "params")]
pub enum Call {
    /// Version and capability handshake.
    #[serde(rename = "hello")]
    Hello(HelloParams),
    /// Window recovery when an agent appears: the boot and a pending reset.
    #[serde(rename = "window.open")]
    WindowOpen(SessionParams),
    /// The budget decision before a step.
    #[serde(rename = "budget.decide")]
    BudgetDecide(BudgetParams),
    /// One notes, history or budget tool call.
    #[serde(rename = "tool")]
    Tool(ToolParams),
    /// The reset transaction's plan.
    #[serde(rename = "reset.plan")]
    ResetPlan(ResetParams),
    /// `/fresh-window [prompt]`.
    #[serde(rename = "command.fresh_window")]
    FreshWindow(FreshWindowParams),
    /// Events only: a log too large for one request line is sent ahead in
    /// batches, and the request that needs it carries the rest.
    #[serde(rename = "session.sync")]
    SessionSync(SessionParams),
}

/// `hello`.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HelloParams {
    /// The bundle's protocol version.
    pub protocol: u32,
    /// The bundle's version (the crate version it was written by).
    pub bundle: String,
    /// The dsh version the bundle was written for.
    pub dsh: String,
    /// The row's `settings` config (see `crate::settings`); it wins per key
    /// over the settings file.
    #[serde(default)]
    #[typeshare(typescript(type = "unknown"))]
    pub settings: Value,
    /// The version of the dsh actually running, when the bundle could read
    /// it; another than the pinned one warns once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running_dsh: Option<String>,
}

/// The answer to `hello`.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HelloResult {
    /// [`PROTOCOL_VERSION`].
    pub protocol: u32,
    /// The sidecar's crate version.
    pub server: String,
    /// The pinned dsh version.
    pub dsh: String,
    /// Settings problems, each shown once.
    pub warnings: Vec<String>,
}

/// The session a request concerns, with the events the sidecar lacks.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionInput {
    /// The dsh session id (`session-<uuid>`), also the notes session id.
    pub id: String,
    /// The session's working directory.
    pub cwd: String,
    /// The agent's model id (the model home follows its last `/` segment).
    #[serde(default)]
    pub model: Option<String>,
    /// The seq of the first event in `events`; 0 re-sends the whole log.
    #[typeshare(serialized_as = "U53")]
    pub from: u64,
    /// Session events from `from` on.
    #[typeshare(typescript(type = "unknown[]"))]
    pub events: Vec<SessionEvent>,
}

/// Parameters that are only a session.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionParams {
    /// The session.
    pub session: SessionInput,
}

/// The answer to `window.open`.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WindowOpenResult {
    /// `dsh:<sessionId>:<n>`.
    pub window_id: String,
    /// The frozen text of the `notesoup:boot` prompt context (template-escaped;
    /// empty when the window's reset marker carries the boot).
    pub context_text: String,
    /// A reset the log shows was requested but not made.
    pub pending_reset: Option<PendingReset>,
}

/// The answer to `session.sync`.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyncResult {
    /// The seq the sidecar expects next.
    #[typeshare(serialized_as = "U53")]
    pub next: u64,
}

/// What starts a reset.
#[typeshare]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResetTrigger {
    /// `wipe_memory`.
    Tool,
    /// `/fresh-window`.
    Manual,
    /// The hard reserve.
    Budget,
    /// `/compact` through the engine row.
    Compaction,
    /// Context-overflow recovery through the engine row.
    Overflow,
}

/// A reset the bundle performs at the next safe point.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingReset {
    /// Recorded on the marker.
    #[typeshare(typescript(type = "`${ResetOrigin}`"))]
    pub origin: ResetOrigin,
    /// What asked for it.
    #[typeshare(typescript(type = "`${ResetTrigger}`"))]
    pub trigger: ResetTrigger,
    /// `/fresh-window <text>`: the text the fresh window continues with.
    #[serde(default)]
    pub prompt: Option<String>,
}

/// `budget.decide`.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BudgetParams {
    /// The session.
    pub session: SessionInput,
    /// `tokenMeter.measure(session).totalTokens`.
    #[serde(default)]
    #[typeshare(serialized_as = "Option<U53>")]
    pub total_tokens: Option<u64>,
    /// `session.requestContext()?.contextWindow`.
    #[serde(default)]
    #[typeshare(serialized_as = "Option<U53>")]
    pub context_window: Option<u64>,
}

/// What the bundle does before the step.
#[typeshare]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BudgetAction {
    /// Nothing.
    None,
    /// Add the reminder to the step.
    Reminder,
    /// Add the warning (the automatic close-out) to the step.
    Warning,
    /// Reset now, before the step (the hard reserve).
    Reset,
}

/// The answer to `budget.decide`.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BudgetResult {
    /// What to do.
    #[typeshare(typescript(type = "`${BudgetAction}`"))]
    pub action: BudgetAction,
    /// Tokens left in the window, when known.
    #[typeshare(serialized_as = "Option<U53>")]
    pub remaining_tokens: Option<u64>,
    /// The message to add to the step (reminder or warning).
    #[typeshare(typescript(type = "unknown"))]
    pub message: Option<Value>,
}

/// `tool`.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolParams {
    /// The session.
    pub session: SessionInput,
    /// The tool name.
    pub name: String,
    /// The model's arguments.
    #[typeshare(typescript(type = "unknown"))]
    pub arguments: Value,
    /// dsh's call id.
    #[serde(default)]
    pub call_id: Option<String>,
    /// `tokenMeter.measure(session).totalTokens` at the call
    /// (`get_context_remaining` only).
    #[serde(default)]
    #[typeshare(serialized_as = "Option<U53>")]
    pub total_tokens: Option<u64>,
    /// `session.requestContext()?.contextWindow` at the call
    /// (`get_context_remaining` only).
    #[serde(default)]
    #[typeshare(serialized_as = "Option<U53>")]
    pub context_window: Option<u64>,
}

/// The answer to `tool`.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    /// The model-facing text.
    pub text: String,
    /// The flat result (data, or `{error, code, details?}`), as core
    /// serialized it.
    #[typeshare(typescript(type = "unknown"))]
    pub result: CompactJson,
    /// A refusal.
    pub is_error: bool,
    /// End the turn after this tool batch (`wipe_memory`).
    pub conclude_turn: bool,
    /// A reset to make when the agent is idle.
    pub reset: Option<PendingReset>,
}

/// `reset.plan`.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResetParams {
    /// The session.
    pub session: SessionInput,
    /// dsh's current surface nodes, checked against the sidecar's fold.
    #[typeshare(serialized_as = "Vec<U53>")]
    pub surface: Vec<u64>,
    /// Recorded on the marker.
    #[typeshare(typescript(type = "`${ResetOrigin}`"))]
    pub origin: ResetOrigin,
    /// What asked for it.
    #[typeshare(typescript(type = "`${ResetTrigger}`"))]
    pub trigger: ResetTrigger,
    /// `/fresh-window <text>`.
    #[serde(default)]
    pub prompt: Option<String>,
}

/// An inclusive surface span.
#[typeshare]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Span {
    /// First shadowed node.
    #[typeshare(serialized_as = "U53")]
    pub start: u64,
    /// Last shadowed node.
    #[typeshare(serialized_as = "U53")]
    pub end: u64,
}

/// The answer to `reset.plan`: everything the bundle writes.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResetPlan {
    /// The window the reset opens.
    pub window_id: String,
    /// The marker: the new window's boot as a `user/message`.
    #[typeshare(typescript(type = "unknown"))]
    pub message: Value,
    /// The span it replaces; `None` on an empty surface (then the marker is
    /// injected).
    pub replace: Option<Span>,
    /// Every shadowed surface node.
    #[typeshare(serialized_as = "Vec<U53>")]
    pub source_event_seqs: Vec<u64>,
    /// The prompt context's new frozen text (empty: the marker carries the boot).
    pub context_text: String,
    /// What the fresh window continues with; `None` stops (bare `/fresh-window`).
    #[typeshare(typescript(type = "unknown"))]
    pub followup: Option<Value>,
}

/// `command.fresh_window`.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FreshWindowParams {
    /// The session.
    pub session: SessionInput,
    /// The text after the command, if any.
    #[serde(default)]
    pub prompt: Option<String>,
}

/// The answer to `command.fresh_window`.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FreshWindowResult {
    /// The reply shown to the human.
    pub text: String,
    /// The close-out message to steer in.
    #[typeshare(typescript(type = "unknown"))]
    pub steer: Option<Value>,
    /// The reset to make once the close-out turn ends.
    pub reset: Option<PendingReset>,
}

/// Why a request was refused.
#[typeshare]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// Not a request line of this protocol.
    BadRequest,
    /// `hello` with another protocol version, or a request before `hello`.
    ProtocolMismatch,
    /// The events do not continue the sidecar's copy; re-send from 0.
    Resync,
    /// The reset cannot be planned on this surface; the window stays.
    ResetRefused,
    /// The boot could not be built; the window stays.
    BootFailed,
    /// A bug in the sidecar.
    Internal,
}

/// A refusal on the wire.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{code:?}: {message}")]
pub struct ProtocolError {
    /// What kind of refusal.
    #[typeshare(typescript(type = "`${ErrorCode}`"))]
    pub code: ErrorCode,
    /// One line for the log.
    pub message: String,
}

/// The longest refusal message, in bytes. Parser messages quote the input
/// (an unknown op, a field name, a tool name), so an unbounded message would
/// echo an attacker's megabytes back.
pub const MAX_MESSAGE_BYTES: usize = 1024;

impl ProtocolError {
    /// A refusal with a message, cut to [`MAX_MESSAGE_BYTES`].
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        let mut message = message.into();
        if message.len() > MAX_MESSAGE_BYTES {
            const MORE: &str = "…";
            let mut end = MAX_MESSAGE_BYTES - MORE.len();
            while !message.is_char_boundary(end) {
                end -= 1;
            }
            message.truncate(end);
            message.push_str(MORE);
        }
        Self { code, message }
    }
}

/// One answer line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Response {
    /// The request's id (0 when the line shows none).
    pub id: u64,
    /// The result or the refusal.
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// A result or a refusal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The operation's result, serialized once.
    Result(CompactJson),
    /// The refusal.
    Error(ProtocolError),
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn round_trip(line: Value) -> Request {
        let request: Request = serde_json::from_value(line.clone()).expect("parse");
        assert_eq!(serde_json::to_value(&request).expect("serialize"), line);
        assert_eq!(
            Request::parse(&line.to_string()).expect("parse"),
            request,
            "Request::parse reads what the derive reads"
        );
        request
    }

    #[test]
    fn requests_round_trip() {
        let hello = round_trip(json!({"id": 1, "op": "hello",
            "params": {"protocol": 1, "bundle": "0.1.0", "dsh": "0.1.0-rc.8", "settings": {}}}));
        assert!(matches!(
            hello.call,
            Call::Hello(HelloParams { protocol: 1, .. })
        ));
        let session = json!({"id": "session-a", "cwd": "/p", "model": "m", "from": 0,
            "events": [{"type": "turn/start", "seq": 0, "time": 5, "data": {"turn": 1}}]});
        let reset = round_trip(json!({"id": 2, "op": "reset.plan",
            "params": {"session": session, "surface": [7, 8], "origin": "forced", "trigger": "budget", "prompt": null}}));
        let Call::ResetPlan(params) = reset.call else {
            panic!("reset.plan")
        };
        assert_eq!(params.origin, ResetOrigin::Forced);
        assert_eq!(params.session.events[0].kind, "turn/start");
    }

    #[test]
    fn unknown_ops_and_fields_are_refused() {
        for line in [
            json!({"id": 1, "op": "format_disk", "params": {}}),
            json!({"id": 1, "op": "hello", "params": {"protocol": 1, "bundle": "b", "dsh": "d", "extra": 1}}),
            json!({"id": 1, "op": "hello", "params": {"protocol": 1, "bundle": "b", "dsh": "d"}, "more": 2}),
            json!({"id": 1, "op": "hello"}),
            json!({"op": "hello", "params": {"protocol": 1, "bundle": "b", "dsh": "d"}}),
            json!({"id": -1, "op": "hello", "params": {"protocol": 1, "bundle": "b", "dsh": "d"}}),
        ] {
            assert!(Request::parse(&line.to_string()).is_err(), "{line}");
            assert!(serde_json::from_value::<Request>(line).is_err());
        }
    }

    #[test]
    fn every_op_is_known_to_both_parsers() {
        for op in OPS {
            let line = json!({"id": 1, "op": op, "params": {}});
            let derived = serde_json::from_value::<Request>(line.clone()).expect_err("no params");
            let parsed = Request::parse(&line.to_string()).expect_err("no params");
            for error in [derived.to_string(), parsed.to_string()] {
                assert!(error.contains("missing field"), "{op}: {error}");
            }
        }
    }

    #[test]
    fn answers_are_flat() {
        let ok = Response {
            id: 3,
            outcome: Outcome::Result(CompactJson::to_json(&json!({"a": 1})).expect("json")),
        };
        assert_eq!(
            serde_json::to_value(&ok).expect("json"),
            json!({"id": 3, "result": {"a": 1}})
        );
        let refused = Response {
            id: 4,
            outcome: Outcome::Error(ProtocolError::new(ErrorCode::Resync, "from 0")),
        };
        assert_eq!(
            serde_json::to_value(&refused).expect("json"),
            json!({"id": 4, "error": {"code": "resync", "message": "from 0"}})
        );
    }

    #[test]
    fn messages_are_cut_on_a_char_boundary() {
        let long = ProtocolError::new(ErrorCode::BadRequest, "é".repeat(MAX_MESSAGE_BYTES));
        assert!(long.message.len() <= MAX_MESSAGE_BYTES);
        assert!(long.message.ends_with("é…"), "{}", long.message);
        let short = ProtocolError::new(ErrorCode::BadRequest, "x".repeat(MAX_MESSAGE_BYTES));
        assert_eq!(short.message.len(), MAX_MESSAGE_BYTES);
    }
}
