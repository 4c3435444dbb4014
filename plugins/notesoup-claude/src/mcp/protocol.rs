//! The MCP server over stdio (newline-delimited JSON-RPC 2.0): a line gate
//! in front of the official SDK ([`super::sdk`]).
//!
//! The gate reads lines as bytes, caps their length, and answers what is not
//! a well-formed request itself (JSON-RPC errors with the id as written);
//! it gives the SDK each request with an id of its own and puts the
//! request's id back, byte for byte, on the reply. Notifications and stray
//! responses go nowhere. The SDK runs on a current-thread runtime in a
//! thread of its own, created only here; nothing but protocol lines is ever
//! written to stdout.

use std::collections::{BTreeMap, HashMap};
use std::io::{self, BufRead, Write};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use notesoup_core::plumbing::{CappedLines, LineRead, MAX_LINE_TOKENS, is_blank, too_many_tokens};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use serde::Serialize;
use serde_json::error::Category;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::sdk::{GateTransport, Handler, SUPPORTED_VERSIONS};

/// JSON-RPC error codes used here.
pub mod code {
    /// The line is not JSON.
    pub const PARSE_ERROR: i32 = -32700;
    /// Not a JSON-RPC 2.0 request object.
    pub const INVALID_REQUEST: i32 = -32600;
    /// No such method.
    pub const METHOD_NOT_FOUND: i32 = -32601;
    /// Bad parameters (unknown tool, arguments not an object).
    pub const INVALID_PARAMS: i32 = -32602;
    /// A failure inside the server.
    pub const INTERNAL_ERROR: i32 = -32603;
    /// A protocol version the server does not implement.
    pub const UNSUPPORTED_PROTOCOL_VERSION: i32 = -32022;
}

/// The longest piece of a request an error message repeats, in chars.
pub const SHOWN_CHARS: usize = 120;

/// `text` as an error message repeats it: at most [`SHOWN_CHARS`] chars, so
/// a megabyte method name costs a short reply.
pub fn shown(text: &str) -> String {
    match text.char_indices().nth(SHOWN_CHARS) {
        Some((at, _)) => format!("{}… ({} bytes)", &text[..at], text.len()),
        None => text.to_owned(),
    }
}

/// A JSON-RPC error to send back.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    /// One of [`code`].
    pub code: i32,
    /// One sentence.
    pub message: String,
    /// Optional facts.
    pub data: Option<Value>,
}

impl RpcError {
    /// An error without data.
    pub fn new(code: i32, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }
}

/// A tool as `tools/list` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDef {
    /// The tool name.
    pub name: String,
    /// What the model reads about it.
    pub description: String,
    /// The JSON Schema of its arguments.
    pub input_schema: Value,
    /// Shown as the `readOnlyHint` annotation when known.
    pub read_only: Option<bool>,
    /// The JSON Schema of a successful result's `structuredContent`, shown
    /// as `outputSchema`; `None` for a text-only tool.
    pub output_schema: Option<Value>,
}

/// A tool's answer: the text the model reads, flagged when it is a refusal,
/// and for a tool with an output schema the structured result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolText {
    /// The rendered text the model reads.
    pub text: String,
    /// True for a refusal.
    pub is_error: bool,
    /// The compact JSON sent as `structuredContent` (next to the text), for
    /// successes of tools listed with an output schema.
    pub structured: Option<String>,
}

/// Facts about one `tools/call` taken from its `_meta`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallMeta {
    /// `_meta["claudecode/toolUseId"]`: the transcript's `tool_use` id.
    pub tool_use_id: Option<String>,
}

/// What the server serves.
pub trait ToolHost {
    /// Every tool, in listing order.
    fn tools(&self) -> Vec<ToolDef>;
    /// Runs `name`; `Err` for protocol errors (unknown tool), `Ok` with
    /// `is_error` for refusals.
    fn call(&mut self, name: &str, arguments: Value, meta: &CallMeta)
    -> Result<ToolText, RpcError>;
}

/// The server's name and version as clients see them.
#[derive(Debug, Clone, Copy)]
pub struct ServerInfo {
    /// `notesoup`.
    pub name: &'static str,
    /// The package version.
    pub version: &'static str,
}

/// The longest request line the server reads: the one cap of every line
/// reader (16 MiB). Notes are capped at 1 MB, so no valid request comes
/// near it; a longer line is answered with an error and discarded as it
/// streams in, never held in memory.
pub use notesoup_core::plumbing::MAX_LINE_BYTES;

/// Serves requests from `input` until it closes, answering on `output`.
/// Lines are read as bytes: one that is not JSON (invalid UTF-8 included)
/// or is over [`MAX_LINE_BYTES`] gets an error reply, and the next line is
/// served as usual.
pub fn serve<H: ToolHost + Send + 'static>(
    input: impl BufRead,
    output: impl Write + Send,
    info: &ServerInfo,
    host: H,
) -> io::Result<()> {
    serve_capped(input, output, info, host, MAX_LINE_BYTES)
}

/// Requests the SDK has and has not answered yet: its id for each, with
/// the request's own id.
#[derive(Debug, Default)]
struct Pending {
    ids: Mutex<HashMap<i64, Slot>>,
    answered: Condvar,
}

/// Whose request the SDK is answering.
#[derive(Debug, Clone)]
enum Slot {
    /// The client's, with its id as written.
    Client(Box<RawValue>),
    /// The gate's own `initialize` (see [`Lifecycle`]): the reply is dropped.
    Gate,
}

impl Pending {
    fn insert(&self, id: i64, slot: Slot) {
        if let Ok(mut ids) = self.ids.lock() {
            ids.insert(id, slot);
        }
    }

    /// Whose request the SDK's `id` is.
    fn get(&self, id: i64) -> Option<Slot> {
        self.ids.lock().ok()?.get(&id).cloned()
    }

    /// Whose request the SDK's `id` was, now answered.
    fn take(&self, id: i64) -> Option<Slot> {
        let taken = self.ids.lock().ok()?.remove(&id);
        self.answered.notify_all();
        taken
    }

    /// Waits until every request is answered, or `gone()` says no answer
    /// will come.
    fn wait_all(&self, gone: impl Fn() -> bool) {
        let Ok(mut ids) = self.ids.lock() else {
            return;
        };
        while !ids.is_empty() && !gone() {
            ids = match self.answered.wait_timeout(ids, Duration::from_millis(50)) {
                Ok((ids, _)) => ids,
                Err(_) => return,
            };
        }
    }
}

fn serve_capped<H: ToolHost + Send + 'static>(
    input: impl BufRead,
    mut output: impl Write + Send,
    info: &ServerInfo,
    host: H,
    max_line: usize,
) -> io::Result<()> {
    let (to_sdk, from_gate) = tokio::sync::mpsc::unbounded_channel::<ClientJsonRpcMessage>();
    let (to_writer, lines) = mpsc::channel::<Vec<u8>>();
    let pending = Arc::new(Pending::default());
    let info = *info;
    std::thread::scope(|scope| {
        let writer = scope.spawn(move || -> io::Result<()> {
            for line in lines {
                output.write_all(&line)?;
                output.flush()?;
            }
            Ok(())
        });
        let sdk_writer = to_writer.clone();
        let sdk_pending = Arc::clone(&pending);
        let sdk = scope.spawn(move || run_sdk(host, info, from_gate, sdk_writer, sdk_pending));
        let gated = gate(input, max_line, &to_sdk, &to_writer, &pending);
        // Every forwarded request is answered before the SDK is stopped.
        pending.wait_all(|| to_sdk.is_closed());
        drop(to_sdk);
        drop(to_writer);
        let ran = sdk
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("the MCP SDK panicked")));
        let written = writer
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("the writer panicked")));
        gated.and(ran).and(written)
    })
}

/// Runs the SDK's service loop on a current-thread runtime until the gate
/// closes its channel.
fn run_sdk<H: ToolHost + Send + 'static>(
    host: H,
    info: ServerInfo,
    from_gate: tokio::sync::mpsc::UnboundedReceiver<ClientJsonRpcMessage>,
    to_writer: mpsc::Sender<Vec<u8>>,
    pending: Arc<Pending>,
) -> io::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()?;
    let write = move |message: ServerJsonRpcMessage| -> io::Result<()> {
        let sent = match restore_id(&message, &pending)? {
            Some(bytes) => to_writer.send(bytes).map_err(io::Error::other),
            None => Ok(()),
        };
        // Only once the reply is queued: the gate's own answers wait for it.
        if let Some(id) = sdk_id(&message) {
            pending.take(id);
        }
        sent
    };
    runtime.block_on(async move {
        let transport = GateTransport {
            incoming: from_gate,
            write,
        };
        match rmcp::serve_server(Handler::new(host, info), transport).await {
            Ok(service) => service
                .waiting()
                .await
                .map(|_| ())
                .map_err(io::Error::other),
            // The input closed before any request: nothing to serve.
            Err(_) => Ok(()),
        }
    })
}

/// The id of an SDK reply (the gate's numbering).
fn sdk_id(message: &ServerJsonRpcMessage) -> Option<i64> {
    let id = match message {
        ServerJsonRpcMessage::Response(response) => &response.id,
        ServerJsonRpcMessage::Error(error) => error.id.as_ref()?,
        _ => return None,
    };
    match id {
        rmcp::model::NumberOrString::Number(n) => Some(*n),
        rmcp::model::NumberOrString::String(_) => None,
    }
}

/// The SDK's reply as a line, with the request's own id back in place of
/// the SDK's; `None` for the reply to the gate's own request.
fn restore_id(message: &ServerJsonRpcMessage, pending: &Pending) -> io::Result<Option<Vec<u8>>> {
    let mut value = serde_json::to_value(message).map_err(io::Error::other)?;
    let ours = value.get("id").and_then(Value::as_i64);
    let Some(object) = value.as_object_mut() else {
        return Err(io::Error::other(
            "the SDK sent a message that is not an object",
        ));
    };
    let id = match ours.and_then(|id| pending.get(id)) {
        Some(Slot::Client(raw)) => raw,
        Some(Slot::Gate) => return Ok(None),
        // A message of the SDK's own (none is sent today): as it is.
        None => {
            let mut bytes = serde_json::to_vec(&value).map_err(io::Error::other)?;
            bytes.push(b'\n');
            return Ok(Some(bytes));
        }
    };
    object.remove("id");
    object.remove("jsonrpc");
    let body = match (object.remove("result"), object.remove("error")) {
        (Some(result), _) => Ok(result),
        (None, Some(error)) => Err(error),
        (None, None) => Ok(json!({})),
    };
    Reply { id: Some(id), body }.to_bytes().map(Some)
}

/// Which lifecycle the SDK has been given. The SDK serves a request only
/// after an `initialize` or in a request that carries the stateless
/// revision's whole `_meta`; a client that sends neither (a bare
/// `tools/list`) is served as if it had done the `initialize` handshake, as
/// this server always has: the gate does that handshake for it first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lifecycle {
    /// Nothing chosen yet (`ping` and `server/discover` choose nothing).
    Open,
    /// Chosen, by the client or by the gate.
    Chosen,
}

/// The protocol version a request names in its `_meta`, when this server
/// does not speak it. Checked here so the error repeats at most a short
/// piece of it.
fn unsupported_version(params: Option<&Map<String, Value>>) -> Option<String> {
    let version = params?
        .get("_meta")?
        .get("io.modelcontextprotocol/protocolVersion")?
        .as_str()?;
    (!SUPPORTED_VERSIONS.iter().any(|v| v.as_str() == version)).then(|| version.to_owned())
}

/// The `_meta` keys of a stateless request.
const STATELESS_META: [&str; 3] = [
    "io.modelcontextprotocol/protocolVersion",
    "io.modelcontextprotocol/clientInfo",
    "io.modelcontextprotocol/clientCapabilities",
];

impl Lifecycle {
    /// Whether the gate must do the handshake before this request, and
    /// what the lifecycle is after it.
    fn needs_handshake(&mut self, method: &str, params: Option<&Map<String, Value>>) -> bool {
        if *self == Lifecycle::Chosen || matches!(method, "ping" | "server/discover") {
            return false;
        }
        *self = Lifecycle::Chosen;
        let stateless = params
            .and_then(|p| p.get("_meta"))
            .is_some_and(|meta| STATELESS_META.iter().all(|key| meta.get(key).is_some()));
        method != "initialize" && !stateless
    }
}

/// The `initialize` the gate sends for a client that did not.
fn implicit_initialize(id: i64) -> io::Result<ClientJsonRpcMessage> {
    serde_json::from_value(json!({
        "jsonrpc": "2.0", "id": id, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "notesoup-gate", "version": env!("CARGO_PKG_VERSION")}}
    }))
    .map_err(io::Error::other)
}

/// An `initialize` may leave out what this server never reads (the client's
/// capabilities and name), as it always could here; the SDK wants them.
fn lenient_initialize(params: &mut Option<Map<String, Value>>) {
    let params = params.get_or_insert_with(Map::new);
    params
        .entry("protocolVersion")
        .or_insert_with(|| json!("2025-11-25"));
    params.entry("capabilities").or_insert_with(|| json!({}));
    params
        .entry("clientInfo")
        .or_insert_with(|| json!({"name": "unknown", "version": "0"}));
}

/// What the gate makes of one line.
#[derive(Debug)]
enum Screened {
    /// Answered here.
    Reply(Reply),
    /// A well-formed request for the SDK.
    Request {
        id: Box<RawValue>,
        method: String,
        params: Option<Map<String, Value>>,
    },
    /// A notification or a stray response: nothing to answer.
    Nothing,
}

/// Reads lines until `input` closes; answers malformed ones, hands requests
/// to the SDK.
fn gate(
    input: impl BufRead,
    max_line: usize,
    to_sdk: &tokio::sync::mpsc::UnboundedSender<ClientJsonRpcMessage>,
    to_writer: &mpsc::Sender<Vec<u8>>,
    pending: &Pending,
) -> io::Result<()> {
    let mut lines = CappedLines::with_cap(input, max_line);
    let mut next_id: i64 = 0;
    let mut lifecycle = Lifecycle::Open;
    loop {
        let reply = match lines.next_line()? {
            LineRead::Eof => return Ok(()),
            LineRead::Line(line) if is_blank(line) => continue,
            LineRead::Line(line) if too_many_tokens(line, MAX_LINE_TOKENS) => Reply::error(
                None,
                RpcError {
                    code: code::INVALID_REQUEST,
                    message: format!(
                        "invalid request: the line holds more than {MAX_LINE_TOKENS} commas, colons and opening brackets and was not parsed"
                    ),
                    data: Some(json!({ "limitTokens": MAX_LINE_TOKENS })),
                },
            ),
            LineRead::Line(line) => match screen(line) {
                Screened::Reply(reply) => reply,
                Screened::Nothing => continue,
                // Answered here in every lifecycle: the stateless revision
                // dropped `ping`, but a liveness check must never fail.
                Screened::Request { id, method, .. } if method == "ping" => Reply {
                    id: Some(id),
                    body: Ok(json!({})),
                },
                Screened::Request { id, params, .. }
                    if unsupported_version(params.as_ref()).is_some() =>
                {
                    let requested = unsupported_version(params.as_ref()).unwrap_or_default();
                    Reply::error(
                        Some(id),
                        RpcError {
                            code: code::UNSUPPORTED_PROTOCOL_VERSION,
                            message: "Unsupported protocol version".into(),
                            data: Some(json!({
                                "requested": shown(&requested),
                                "supported": SUPPORTED_VERSIONS.iter().map(|v| v.as_str()).collect::<Vec<_>>(),
                            })),
                        },
                    )
                }
                Screened::Request {
                    id,
                    method,
                    mut params,
                } => {
                    if lifecycle.needs_handshake(&method, params.as_ref()) {
                        next_id += 1;
                        pending.insert(next_id, Slot::Gate);
                        let _ = to_sdk.send(implicit_initialize(next_id)?);
                    }
                    if method == "initialize" {
                        lenient_initialize(&mut params);
                    }
                    next_id += 1;
                    let mut request = json!({"jsonrpc": "2.0", "id": next_id, "method": method});
                    if let Some(params) = params {
                        request["params"] = Value::Object(params);
                    }
                    match serde_json::from_value::<ClientJsonRpcMessage>(request) {
                        Ok(message) => {
                            pending.insert(next_id, Slot::Client(id));
                            if to_sdk.send(message).is_ok() {
                                continue;
                            }
                            let id = match pending.take(next_id) {
                                Some(Slot::Client(id)) => Some(id),
                                _ => None,
                            };
                            Reply::error(
                                id,
                                RpcError::new(code::INTERNAL_ERROR, "the MCP server stopped"),
                            )
                        }
                        // A method the SDK knows with parameters it cannot
                        // read (unknown methods read as custom requests).
                        Err(err) => Reply::error(
                            Some(id),
                            RpcError::new(
                                code::INVALID_PARAMS,
                                format!("invalid params for {}: {err}", shown(&method)),
                            ),
                        ),
                    }
                }
            },
            LineRead::TooLong { bytes, .. } => Reply::error(
                None,
                RpcError {
                    code: code::INVALID_REQUEST,
                    message: format!(
                        "invalid request: the line is longer than the {max_line}-byte limit and was discarded unread"
                    ),
                    data: Some(json!({ "limitBytes": max_line, "lineBytes": bytes })),
                },
            ),
        };
        // In order: an answer given here never overtakes the SDK's answer
        // to an earlier request.
        pending.wait_all(|| to_sdk.is_closed());
        if to_writer.send(reply.to_bytes()?).is_err() {
            return Ok(());
        }
    }
}

/// An answer to send: the request's id exactly as it was written (`None`
/// for `null`) and the result or the error object.
#[derive(Debug)]
struct Reply {
    id: Option<Box<RawValue>>,
    body: Result<Value, Value>,
}

impl Reply {
    fn error(id: Option<Box<RawValue>>, error: RpcError) -> Self {
        Self {
            id,
            body: Err(error_object(&error)),
        }
    }

    /// The reply line, `\n` included. The id is copied byte for byte, so an
    /// id past 64 bits, `1.0` or a string with escapes comes back as sent.
    fn to_bytes(&self) -> io::Result<Vec<u8>> {
        #[derive(Serialize)]
        struct Wire<'a> {
            jsonrpc: &'static str,
            id: Option<&'a RawValue>,
            #[serde(skip_serializing_if = "Option::is_none")]
            result: Option<&'a Value>,
            #[serde(skip_serializing_if = "Option::is_none")]
            error: Option<&'a Value>,
        }
        let wire = Wire {
            jsonrpc: "2.0",
            id: self.id.as_deref(),
            result: self.body.as_ref().ok(),
            error: self.body.as_ref().err(),
        };
        let mut bytes = serde_json::to_vec(&wire).map_err(io::Error::other)?;
        bytes.push(b'\n');
        Ok(bytes)
    }
}

fn error_object(err: &RpcError) -> Value {
    let mut error = json!({"code": err.code, "message": err.message});
    if let Some(data) = &err.data {
        error["data"] = data.clone();
    }
    error
}

/// The kind of JSON value a raw value holds, from its first byte.
fn raw_kind(raw: &RawValue) -> u8 {
    raw.get().as_bytes().first().copied().unwrap_or(b' ')
}

/// Checks one line: a well-formed request goes on to the SDK; anything
/// else is answered here or dropped.
fn screen(line: &[u8]) -> Screened {
    let invalid = |id: Option<Box<RawValue>>, message: &str| {
        Screened::Reply(Reply::error(
            id,
            RpcError::new(code::INVALID_REQUEST, message),
        ))
    };
    // Members stay raw, so the id is echoed as written and nothing in
    // params is reinterpreted before it is needed.
    let mut message: BTreeMap<String, Box<RawValue>> = match serde_json::from_slice(line) {
        Ok(message) => message,
        Err(err) if err.classify() == Category::Data => {
            return invalid(
                None,
                "invalid request: expected one JSON-RPC 2.0 object (batches are not supported)",
            );
        }
        Err(err) => {
            return Screened::Reply(Reply::error(
                None,
                RpcError::new(code::PARSE_ERROR, format!("parse error: {err}")),
            ));
        }
    };
    let value_of = |raw: Option<&Box<RawValue>>| -> Option<Value> {
        raw.and_then(|raw| serde_json::from_str(raw.get()).ok())
    };
    let id = message.remove("id");
    let valid_id = id
        .as_deref()
        .is_some_and(|id| matches!(raw_kind(id), b'"' | b'-' | b'0'..=b'9'));
    let method = match value_of(message.get("method")) {
        Some(Value::String(method)) => Some(method),
        _ => None,
    };
    let jsonrpc = value_of(message.get("jsonrpc"));
    const EXPECTED: &str =
        "invalid request: expected jsonrpc \"2.0\", a string method and a string or number id";
    if id.is_some() && !valid_id {
        return invalid(None, EXPECTED);
    }
    if jsonrpc.as_ref().and_then(Value::as_str) != Some("2.0") {
        return invalid(id, EXPECTED);
    }
    let Some(id) = id else {
        // A notification: nothing to answer, unless it is no request at all.
        return match method {
            Some(_) => Screened::Nothing,
            None => invalid(None, EXPECTED),
        };
    };
    let Some(method) = method else {
        if message.contains_key("result") || message.contains_key("error") {
            // A response to a request this server never sends.
            return Screened::Nothing;
        }
        return invalid(
            Some(id),
            "invalid request: a request with an id needs a string method",
        );
    };
    let params = match message.get("params") {
        None => None,
        Some(raw) => match serde_json::from_str(raw.get()) {
            Ok(Value::Null) => None,
            Ok(Value::Object(params)) => Some(params),
            Ok(_) => {
                return Screened::Reply(Reply::error(
                    Some(id),
                    RpcError::new(code::INVALID_PARAMS, "params must be an object"),
                ));
            }
            Err(err) => {
                return Screened::Reply(Reply::error(
                    Some(id),
                    RpcError::new(
                        code::INVALID_PARAMS,
                        format!("params are not usable JSON: {err}"),
                    ),
                ));
            }
        },
    };
    Screened::Request { id, method, params }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Echo;

    impl ToolHost for Echo {
        fn tools(&self) -> Vec<ToolDef> {
            vec![ToolDef {
                name: "echo".into(),
                description: "echoes".into(),
                input_schema: json!({"type": "object", "additionalProperties": false}),
                read_only: Some(true),
                output_schema: Some(json!({
                    "type": "object",
                    "properties": {"echo": {"type": "object"}},
                    "required": ["echo"]
                })),
            }]
        }

        fn call(
            &mut self,
            name: &str,
            arguments: Value,
            meta: &CallMeta,
        ) -> Result<ToolText, RpcError> {
            if name != "echo" {
                return Err(RpcError::new(
                    code::INVALID_PARAMS,
                    format!("unknown tool: {name}"),
                ));
            }
            let is_error = arguments.get("fail").is_some();
            Ok(ToolText {
                text: format!("{arguments} {:?}", meta.tool_use_id),
                is_error,
                structured: (!is_error).then(|| json!({ "echo": arguments }).to_string()),
            })
        }
    }

    const INFO: ServerInfo = ServerInfo {
        name: "notesoup",
        version: "9.9.9",
    };

    fn serve_bytes(input: &[u8], max_line: usize) -> Vec<String> {
        let mut out = Vec::new();
        serve_capped(input, &mut out, &INFO, Echo, max_line).unwrap();
        String::from_utf8(out)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn ids_come_back_byte_for_byte() {
        for id in [
            "18446744073709551616",
            "-9223372036854775809",
            "123456789012345678901234567890",
            "1.0",
            "1e400",
            "-0",
            r#""a\u0041""#,
            r#""""#,
        ] {
            let request = format!(r#"{{"jsonrpc":"2.0","id": {id} ,"method":"ping"}}"#);
            assert_eq!(
                serve_bytes(request.as_bytes(), MAX_LINE_BYTES),
                [format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#)]
            );
            let request = format!(r#"{{"jsonrpc":"2.0","id":{id}}}"#);
            let reply = serve_bytes(request.as_bytes(), MAX_LINE_BYTES);
            assert!(
                reply[0].starts_with(&format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32600,"#
                )),
                "{reply:?}"
            );
        }
    }

    #[test]
    fn long_lines_and_bad_bytes_are_answered_and_serving_goes_on() {
        let ping = |id: u32| format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n");
        let pong = |id: u32| format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{}}}}");
        let cap = 64;
        let padded = |id: u32, len: usize| {
            let mut line = ping(id).into_bytes();
            line.pop();
            line.resize(len, b' ');
            line.push(b'\n');
            line
        };
        let mut input = padded(1, cap);
        // One byte over the cap.
        input.extend_from_slice(&padded(12, cap + 1));
        input.extend_from_slice(ping(2).as_bytes());
        // Many times the cap, with invalid UTF-8 in it.
        input.extend(std::iter::repeat_n(0xff, cap * 40));
        input.push(b'\n');
        input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":\"\xff\xfe\",\"method\":\"ping\"}\n");
        input.extend_from_slice(ping(3).as_bytes());
        input.extend(std::iter::repeat_n(b'x', cap + 1));
        let replies = serve_bytes(&input, cap);
        assert_eq!(replies.len(), 7, "{replies:?}");
        assert_eq!(replies[0], pong(1));
        let too_long: Value = serde_json::from_str(&replies[1]).unwrap();
        assert_eq!(too_long["id"], Value::Null);
        assert_eq!(too_long["error"]["code"], code::INVALID_REQUEST);
        assert_eq!(too_long["error"]["data"]["lineBytes"], cap + 1);
        assert_eq!(replies[2], pong(2));
        let huge: Value = serde_json::from_str(&replies[3]).unwrap();
        assert_eq!(huge["error"]["data"]["lineBytes"], cap * 40);
        let bad_utf8: Value = serde_json::from_str(&replies[4]).unwrap();
        assert_eq!(
            (&bad_utf8["id"], &bad_utf8["error"]["code"]),
            (&Value::Null, &json!(code::PARSE_ERROR))
        );
        assert_eq!(replies[5], pong(3));
        // A torn last line over the cap is answered too.
        let torn: Value = serde_json::from_str(&replies[6]).unwrap();
        assert_eq!(torn["error"]["data"]["lineBytes"], cap + 1);
    }

    #[test]
    fn serve_answers_line_by_line_and_stops_at_eof() {
        let input = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}";
        let mut out = Vec::new();
        serve(&input[..], &mut out, &INFO, Echo).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n"
        );
    }

    #[test]
    fn both_eras_are_served_through_the_sdk() {
        let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"claude-code","version":"2.1.332"},"io.modelcontextprotocol/clientCapabilities":{}}"#;
        let input = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":\"probe\",\"method\":\"server/discover\",\"params\":{{{meta}}}}}\n\
             {{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{{{meta}}}}}\n\
             {{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{{\"name\":\"echo\",\"arguments\":{{\"fail\":1}},{meta}}}}}\n\
             {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}}\n\
             {{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{{}}}}\n"
        );
        let replies: Vec<Value> = serve_bytes(input.as_bytes(), MAX_LINE_BYTES)
            .iter()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        assert_eq!(replies.len(), 3, "{replies:?}");
        assert_eq!(replies[0]["id"], "probe");
        assert_eq!(replies[0]["result"]["supportedVersions"][0], "2026-07-28");
        assert_eq!(replies[1]["result"]["tools"][0]["name"], "echo");
        assert_eq!(
            replies[1]["result"]["tools"][0]["annotations"]["readOnlyHint"],
            true
        );
        assert_eq!(
            replies[1]["result"]["tools"][0]["outputSchema"]["required"],
            json!(["echo"])
        );
        assert_eq!(replies[2]["result"]["isError"], true);
        assert_eq!(
            replies[2]["result"]["content"][0]["text"],
            "{\"fail\":1} None"
        );
        // A refusal is text only.
        assert_eq!(replies[2]["result"].get("structuredContent"), None);
        // Without a handshake or the stateless _meta, a request is served as
        // after an `initialize`.
        let replies = serve_bytes(
            b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"nope\"}}\n{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"_meta\":{\"claudecode/toolUseId\":\"toolu_1\"}}}\n",
            MAX_LINE_BYTES,
        );
        let unknown: Value = serde_json::from_str(&replies[0]).unwrap();
        assert_eq!(unknown["error"]["code"], code::INVALID_PARAMS);
        let echoed: Value = serde_json::from_str(&replies[1]).unwrap();
        assert_eq!(
            echoed["result"]["content"][0]["text"],
            "{} Some(\"toolu_1\")"
        );
        // A success carries its structured value next to the text.
        assert_eq!(echoed["result"]["structuredContent"], json!({"echo": {}}));
    }
}
