//! The JSON-lines protocol between the Pi package's shim and `notesoup-pi
//! serve`: one JSON object per line on the sidecar's stdin and stdout.
//!
//! These types are the single source of truth for both sides: `cargo xtask
//! codegen` turns every `#[typeshare]` item here into
//! `generated/notesoup-pi-bridge.d.ts`, which the shim imports, so a change
//! here that the shim does not follow fails its type check.
//!
//! Exchange (version [`PROTOCOL_VERSION`]):
//! 1. the shim sends `hello`; the sidecar answers `ready` (tools, commands,
//!    the events to forward) or `refused` (then exits);
//! 2. for each Pi event, tool call or command the shim sends `event` with the
//!    session state; while handling it the sidecar may send `action`
//!    requests, each answered by one `actionResult` (with the state after the
//!    action) before anything else; then it sends the event's `result`.
//!
//! The `context` event is sent without its `messages` (an `omit` rule of
//! `ready`), and its result is `null` (keep Pi's messages) or a
//! [`ContextAppend`] (`{append}`): the shim returns Pi's messages followed
//! by those. The `context_with_system` event's messages are summarised (a
//! `summarize` rule of `ready`: each message's role, custom type and boot
//! details; system messages whole), and its result is `null` or a
//! [`ContextEdit`] (`{head, keep}`): the shim returns the head followed by
//! the kept ranges of Pi's messages.
//!
//! Payloads that are Pi's own objects (entries, messages, event payloads,
//! results) travel as Pi writes them and are typed `unknown` on the shim's
//! side: the shim forwards them, it never interprets them.

use notesoup_core::tools::CompactJson;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use typeshare::typeshare;

use crate::host::MessageSummary;
use crate::session::AgentMessage;

/// The protocol version both sides must speak. Raise it on any change that
/// an older shim or sidecar could misread.
pub const PROTOCOL_VERSION: u32 = 7;

/// A line from the shim to the sidecar.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", content = "body", rename_all = "camelCase")]
pub enum ShimMessage {
    /// The first line: who is calling.
    Hello(Hello),
    /// A Pi event, tool call or command to handle.
    Event(EventRequest),
    /// The answer to the sidecar's latest `action`.
    ActionResult(ActionResult),
}

/// A line from the sidecar to the shim.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", content = "body", rename_all = "camelCase")]
pub enum SidecarMessage {
    /// The handshake succeeded.
    Ready(Ready),
    /// The handshake failed; the sidecar exits after this line.
    Refused(Refused),
    /// Perform a Pi action and answer with `actionResult`.
    Action(ActionRequest),
    /// The result of the current event.
    Result(EventResult),
}

/// `hello`: the shim's protocol version and the Pi it runs in.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Hello {
    /// [`PROTOCOL_VERSION`] of the shim.
    pub protocol: u32,
    /// Pi's `VERSION`, e.g. `"1.6.0"`.
    pub pi_version: String,
}

/// `ready`: what the shim registers with Pi.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Ready {
    /// The sidecar's [`PROTOCOL_VERSION`].
    pub protocol: u32,
    /// notesoup's version.
    pub version: String,
    /// The Pi extension API level the sidecar serves for `hello.piVersion`
    /// (`"0.87"`: the boundary API).
    pub api_level: String,
    /// The tools, in registration order.
    pub tools: Vec<ToolSpec>,
    /// The commands.
    pub commands: Vec<CommandSpec>,
    /// The Pi events to forward (`pi.on(name, …)`), in order.
    pub events: Vec<String>,
    /// Parts of event payloads the sidecar does not read, which the shim
    /// leaves out (on a copy) to keep the lines short.
    pub omit: Vec<PayloadOmission>,
    /// Payload lists of messages the shim sends summarised (on a copy):
    /// only the fields the sidecar reads of each message.
    pub summarize: Vec<MessageSummaryRule>,
    /// Events whose handlers never read the context usage: their state,
    /// and the states answering their actions, leave `contextUsage` out
    /// (Pi's `getContextUsage()` walks the whole branch: 60–190 ms on a
    /// 100,000-entry session).
    #[serde(default)]
    pub usage_omitted: Vec<String>,
    /// Events whose handlers read the context usage, which the sidecar
    /// computes from its mirror as Pi's `getContextUsage()` does: their
    /// states leave `contextUsage` out and set `usageLocal`, unless the
    /// model is virtual (`api` `pi-virtual`: Pi takes the limits of the
    /// model that answered, which the sidecar does not know), when they
    /// carry Pi's value.
    #[serde(default)]
    pub usage_computed: Vec<String>,
    /// Events of `events` the shim subscribes to only while the sidecar
    /// asks for them (each `result`'s `onDemand`): Pi does work for every
    /// event that has handlers (for `agent_before_settle`, it builds the
    /// boundary context, walking the whole branch), and the handler does
    /// nothing in most runs.
    #[serde(default)]
    pub on_demand: Vec<String>,
}

/// Payload parts of one event to leave out.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PayloadOmission {
    /// The event name.
    pub event: String,
    /// Dotted paths into the payload, e.g. `context.llmMessages`.
    pub paths: Vec<String>,
}

/// A list of messages in one event's payload that the shim sends
/// summarised: each message becomes an object holding only its `fields`
/// (dotted paths, e.g. `details.windowId`; an absent field stays absent),
/// except a message whose `role` is one of `wholeRoles`, which is sent
/// whole, and a message whose `role` is one of `plainRoles`, of which
/// nothing else is read, which is sent as that role's index in
/// `plainRoles`, a number.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageSummaryRule {
    /// The event name.
    pub event: String,
    /// The payload's key holding the messages, e.g. `messages`.
    pub list: String,
    /// The dotted paths kept of each message.
    pub fields: Vec<String>,
    /// The roles whose messages are sent whole.
    pub whole_roles: Vec<String>,
    /// The roles a message of which is sent as the role's index.
    pub plain_roles: Vec<String>,
}

/// `refused`: why the sidecar cannot serve this Pi.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Refused {
    /// The sidecar's [`PROTOCOL_VERSION`].
    pub protocol: u32,
    /// A stable code (`expected_hello`, `bad_hello`, `protocol_mismatch`,
    /// `host_too_old`, `no_notes_home`).
    pub code: String,
    /// One line for the user.
    pub message: String,
}

/// A tool for `pi.registerTool`.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolSpec {
    /// The name the model calls.
    pub name: String,
    /// A label for the UI.
    pub label: String,
    /// What the model reads about it.
    pub description: String,
    /// A one-line prompt snippet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_snippet: Option<String>,
    /// Prompt guidelines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_guidelines: Option<Vec<String>>,
    /// JSON Schema of the arguments.
    #[typeshare(typescript(type = "Record<string, unknown>"))]
    pub parameters: Value,
    /// JSON Schema of a successful result's `structuredContent`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[typeshare(typescript(type = "Record<string, unknown>"))]
    pub output_schema: Option<Value>,
    /// `"sequential"` or `"parallel"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[typeshare(typescript(type = "\"sequential\" | \"parallel\""))]
    pub execution_mode: Option<String>,
}

/// A command for `pi.registerCommand`.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandSpec {
    /// The name, without the slash.
    pub name: String,
    /// Shown in the command list.
    pub description: String,
    /// The arguments the shim offers as completions after the name
    /// (`getArgumentCompletions`).
    #[serde(default)]
    pub arguments: Vec<String>,
}

/// `event`: one thing for the extension to handle.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventRequest {
    /// Chosen by the shim; echoed by the `result`.
    pub id: u32,
    /// A Pi event name from `ready.events`, or `execute_tool` (payload
    /// `{toolCallId, name, params}`) or `command` (payload `{name, args}`).
    pub name: String,
    /// The event object as Pi passed it to the handler.
    #[typeshare(typescript(type = "unknown"))]
    pub payload: Value,
    /// The session as the handler's `ctx` sees it.
    pub state: SessionState,
    /// A `context_with_system` event's message summaries, read from the
    /// line without building its payload (which is then `null`); never on
    /// the wire.
    #[serde(skip)]
    pub summaries: Option<Vec<MessageSummary>>,
}

/// What the extension reads from `ctx` and the session manager, sent with
/// every event and after every action.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionState {
    /// `getSessionId()`. A new id starts a fresh mirror.
    pub session_id: String,
    /// `getHeader()`.
    #[serde(default)]
    #[typeshare(typescript(type = "unknown"))]
    pub header: Value,
    /// Index in `getEntries()` of `entries[0]`; the mirror drops everything
    /// from there on before appending (0 sends the whole session).
    pub entries_from: u32,
    /// `getEntries().slice(entriesFrom)`.
    #[typeshare(typescript(type = "unknown[]"))]
    pub entries: Vec<Value>,
    /// Set when the shim sends no entry before `entriesFrom` because Pi has
    /// written them to `sessionFile`: the sidecar reads them from there,
    /// once it has checked the file holds them, and asks for them with
    /// `resendEntries` when it does not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_disk: Option<OnDisk>,
    /// `getLeafId()`.
    #[serde(default)]
    pub leaf_id: Option<String>,
    /// `getCwd()`.
    pub cwd: String,
    /// `getSessionFile()`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_file: Option<String>,
    /// `ctx.isIdle()`.
    pub idle: bool,
    /// `ctx.hasPendingMessages()`.
    pub pending_messages: bool,
    /// `ctx.signal?.aborted`.
    pub signal_aborted: bool,
    /// `ctx.getContextUsage()` (`{tokens, contextWindow, percent}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[typeshare(typescript(type = "unknown"))]
    pub context_usage: Option<Value>,
    /// Set when the shim left `contextUsage` for the sidecar to compute
    /// (an event of `usageComputed`, the model not virtual).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub usage_local: bool,
    /// `ctx.model` as `{provider, id, contextWindow, maxTokens}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[typeshare(typescript(type = "unknown"))]
    pub model: Option<Value>,
    /// The settings, or why they could not be read.
    pub settings: SettingsState,
    /// `ctx.isProjectTrusted()`.
    pub project_trusted: bool,
}

/// The entries the shim leaves to the session file: the first `count` of
/// `getEntries()`, the last of which has the id `lastId`, and whose ids in
/// order hash to `idsHash` ([`ids_hash`]).
#[typeshare]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OnDisk {
    /// How many entries, from the first.
    pub count: u32,
    /// The id of entry `count - 1`.
    pub last_id: String,
    /// [`ids_hash`] of the entries' ids, in order.
    pub ids_hash: u32,
}

/// 32-bit FNV-1a over each id's UTF-16 code units, each id followed by a
/// newline unit: what the shim computes over `getEntries()` (an id that is
/// not a string counts as `""`), so that a session file whose ids differ
/// from Pi's anywhere, not only at the end, is not taken for Pi's.
pub fn ids_hash<'a>(ids: impl IntoIterator<Item = &'a str>) -> u32 {
    const PRIME: u32 = 0x0100_0193;
    let mut hash: u32 = 0x811c_9dc5;
    for id in ids {
        for unit in id.encode_utf16() {
            hash = (hash ^ u32::from(unit)).wrapping_mul(PRIME);
        }
        hash = (hash ^ 0x0a).wrapping_mul(PRIME);
    }
    hash
}

/// Pi's settings records and the compaction settings for the model.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SettingsState {
    /// Global settings (`{}` when unknown).
    #[serde(default)]
    #[typeshare(typescript(type = "unknown"))]
    pub global: Value,
    /// Project settings (`{}` when not trusted).
    #[serde(default)]
    #[typeshare(typescript(type = "unknown"))]
    pub project: Value,
    /// `getCompactionSettings(model)`: `{enabled, reserveTokens, keepRecentTokens}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[typeshare(typescript(type = "unknown"))]
    pub compaction: Option<Value>,
    /// Set when Pi threw while reading them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// `action`: a Pi action the shim performs before the event's result.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ActionRequest {
    /// Chosen by the sidecar; echoed by `actionResult`.
    pub id: u32,
    /// What to do.
    pub action: Action,
}

/// The actions, named after Pi's API.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "args", rename_all = "camelCase")]
pub enum Action {
    /// `pi.appendEntry(customType, data)`; answers the new leaf id.
    AppendEntry(AppendEntryArgs),
    /// `pi.sendMessage(message, options)`; never waits for the run it starts.
    SendMessage(SendMessageArgs),
    /// `ctx.ui.notify(message, level)`.
    Notify(NotifyArgs),
    /// `ctx.abort()`.
    Abort(AbortArgs),
    /// Not Pi's: the session file did not hold what `onDisk` said, so the
    /// answer's state must carry every entry (`entriesFrom: 0`, no `onDisk`).
    ResendEntries(AbortArgs),
}

impl Action {
    /// The action's name on the wire (its `kind`).
    pub fn name(&self) -> &'static str {
        match self {
            Self::AppendEntry(_) => "appendEntry",
            Self::SendMessage(_) => "sendMessage",
            Self::Notify(_) => "notify",
            Self::Abort(_) => "abort",
            Self::ResendEntries(_) => "resendEntries",
        }
    }
}

/// Arguments of `appendEntry`.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AppendEntryArgs {
    /// The entry's custom type.
    pub custom_type: String,
    /// Its data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[typeshare(typescript(type = "unknown"))]
    pub data: Option<Value>,
}

/// Arguments of `sendMessage`.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendMessageArgs {
    /// `{customType, content, display, details?}`.
    #[typeshare(typescript(type = "unknown"))]
    pub message: Value,
    /// `{triggerTurn?, deliverAs?}`.
    #[typeshare(typescript(type = "unknown"))]
    pub options: Value,
}

/// Arguments of `notify`.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NotifyArgs {
    /// The notice.
    pub message: String,
    /// `"info"`, `"warning"` or `"error"`.
    #[typeshare(typescript(type = "\"info\" | \"warning\" | \"error\""))]
    pub level: String,
}

/// Arguments of `abort` and `resendEntries` (none).
#[typeshare]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AbortArgs {}

/// `actionResult`: how the action went and the session after it.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ActionResult {
    /// The `action`'s id.
    pub id: u32,
    /// Set when Pi threw.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The session after the action.
    pub state: SessionState,
}

/// The value of a `context` event's `result` that adds messages: the shim
/// answers Pi with `{messages: [...event.messages, ...append]}`, so the
/// context's messages cross the pipe in neither direction.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextAppend {
    /// Pi's `AgentMessage`s to add after the context's, in order.
    #[typeshare(typescript(type = "unknown[]"))]
    pub append: Vec<AgentMessage>,
}

/// The value of a `context_with_system` event's `result` that changes the
/// context (its payload's messages are summarised, [`MessageSummaryRule`]):
/// the shim answers Pi with `{messages: [head, ...keep.flatMap(r =>
/// event.messages.slice(r.from, r.to))]}` (no `head` when absent), so the
/// context's messages cross the pipe in neither direction.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextEdit {
    /// Pi's `AgentMessage` put first: the replayed system message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[typeshare(typescript(type = "unknown"))]
    pub head: Option<AgentMessage>,
    /// The ranges of the event's messages kept after the head, in order.
    pub keep: Vec<KeptRange>,
}

/// The event's messages from index `from` up to, not including, `to`.
#[typeshare]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KeptRange {
    /// The first index kept.
    pub from: u32,
    /// The index after the last one kept.
    pub to: u32,
}

/// `result`: what the handler returns to Pi.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventResult {
    /// The `event`'s id.
    pub id: u32,
    /// The handler's return value (`null`: return nothing). For
    /// `execute_tool`, an `AgentToolResult`; for `command`, `null`; for
    /// `context`, a [`ContextAppend`] or `null`; for `context_with_system`,
    /// a [`ContextEdit`] or `null`.
    /// Serialized once, by the handler's encoding.
    #[typeshare(typescript(type = "unknown"))]
    pub value: CompactJson,
    /// Set when the handler failed; the shim throws it, so Pi reports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The events of `ready.onDemand` the sidecar needs from now on (the
    /// shim subscribes to them and drops the others); absent: no change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_demand: Option<Vec<String>>,
    /// With `onDemand`: the context tokens from which a completed turn
    /// needs `turn_end` though `onDemand` leaves it out. The shim counts a
    /// turn's tokens as Pi's `getContextUsage()` would after it (the reply's
    /// usage and the estimate of each message after the reply) and
    /// subscribes to `turn_end` for that turn once they reach this; a reply
    /// that did not complete (its stop reason neither `stop` nor `toolUse`,
    /// or no usage) holds it too. Absent: every turn needs `turn_end`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_end_at: Option<u32>,
}
