//! A synchronous MCP server over stdio: newline-delimited JSON-RPC 2.0.
//!
//! It speaks both eras Claude Code and other clients use: the stateless
//! 2026-07-28 revision (`server/discover`, every request carrying its
//! `_meta`) and the `initialize` handshake (2024-11-05 … 2025-11-25). No
//! request depends on an earlier one, so the two eras share one dispatcher.
//! Notifications are ignored; malformed and unknown requests get JSON-RPC
//! errors; nothing but protocol lines is ever written to stdout.

use std::collections::BTreeMap;
use std::io::{self, BufRead, Write};

use serde::Serialize;
use serde_json::error::Category;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

/// The stateless revision.
pub const STATELESS_VERSION: &str = "2026-07-28";
/// Handshake-era versions, newest first; `initialize` echoes a supported one.
pub const HANDSHAKE_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// JSON-RPC error codes used here.
pub mod code {
    /// The line is not JSON.
    pub const PARSE_ERROR: i64 = -32700;
    /// Not a JSON-RPC 2.0 request object.
    pub const INVALID_REQUEST: i64 = -32600;
    /// No such method.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Bad parameters (unknown tool, arguments not an object).
    pub const INVALID_PARAMS: i64 = -32602;
    /// A failure inside the server.
    pub const INTERNAL_ERROR: i64 = -32603;
    /// A protocol version the server does not implement.
    pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
}

/// The longest piece of a request an error message repeats, in chars.
const SHOWN_CHARS: usize = 120;

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
    pub code: i64,
    /// One sentence.
    pub message: String,
    /// Optional facts.
    pub data: Option<Value>,
}

impl RpcError {
    /// An error without data.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
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
}

/// A tool's answer: text only, flagged when it is a refusal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolText {
    /// The rendered text the model reads.
    pub text: String,
    /// True for a refusal.
    pub is_error: bool,
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
#[derive(Debug, Clone)]
pub struct ServerInfo {
    /// `notesoup`.
    pub name: &'static str,
    /// The package version.
    pub version: &'static str,
}

/// The longest request line the server reads (16 MiB). Notes are capped at
/// 1 MB, so no valid request comes near it; a longer line is answered with
/// an error and discarded as it streams in, never held in memory.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// Serves requests from `input` until it closes, answering on `output`.
/// Lines are read as bytes: one that is not JSON (invalid UTF-8 included)
/// or is over [`MAX_LINE_BYTES`] gets an error reply, and the next line is
/// served as usual.
pub fn serve(
    input: impl BufRead,
    output: impl Write,
    info: &ServerInfo,
    host: &mut impl ToolHost,
) -> io::Result<()> {
    serve_capped(input, output, info, host, MAX_LINE_BYTES)
}

fn serve_capped(
    mut input: impl BufRead,
    mut output: impl Write,
    info: &ServerInfo,
    host: &mut impl ToolHost,
    max_line: usize,
) -> io::Result<()> {
    let mut line = Vec::new();
    loop {
        let reply = match read_line(&mut input, &mut line, max_line)? {
            LineRead::End => return Ok(()),
            LineRead::Line if line.iter().all(u8::is_ascii_whitespace) => continue,
            LineRead::Line => match handle(&line, info, host) {
                Some(reply) => reply.to_bytes()?,
                None => continue,
            },
            LineRead::TooLong { bytes } => Reply {
                id: None,
                body: Err(RpcError {
                    code: code::INVALID_REQUEST,
                    message: format!(
                        "invalid request: the line is longer than the {max_line}-byte limit and was discarded unread"
                    ),
                    data: Some(json!({ "limitBytes": max_line, "lineBytes": bytes })),
                }),
            }
            .to_bytes()?,
        };
        output.write_all(&reply)?;
        output.flush()?;
    }
}

/// What [`read_line`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LineRead {
    /// The input is closed and no bytes were left.
    End,
    /// One line (without its `\n`) is in the buffer.
    Line,
    /// A line longer than the limit was skipped to its end; `bytes` long.
    TooLong {
        /// Its length, the `\n` excluded.
        bytes: u64,
    },
}

/// Reads one line into `line` (cleared first), keeping at most `max` bytes:
/// past that the rest of the line is consumed without being kept.
fn read_line(input: &mut impl BufRead, line: &mut Vec<u8>, max: usize) -> io::Result<LineRead> {
    // One large request must not pin its buffer for the server's lifetime.
    if line.capacity() > 1024 * 1024 {
        *line = Vec::new();
    }
    line.clear();
    let mut skipped: Option<u64> = None;
    loop {
        let available = match input.fill_buf() {
            Ok(available) => available,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        if available.is_empty() {
            return Ok(match skipped {
                Some(bytes) => LineRead::TooLong { bytes },
                None if line.is_empty() => LineRead::End,
                None => LineRead::Line,
            });
        }
        let (piece, used, ended) = match memchr::memchr(b'\n', available) {
            Some(at) => (&available[..at], at + 1, true),
            None => (available, available.len(), false),
        };
        match &mut skipped {
            Some(bytes) => *bytes += piece.len() as u64,
            None if line.len() + piece.len() > max => {
                skipped = Some((line.len() + piece.len()) as u64);
                *line = Vec::new();
            }
            None => line.extend_from_slice(piece),
        }
        input.consume(used);
        if ended {
            return Ok(match skipped {
                Some(bytes) => LineRead::TooLong { bytes },
                None => LineRead::Line,
            });
        }
    }
}

/// An answer to send: the request's id exactly as it was written (`None`
/// for `null`) and the result or the error.
#[derive(Debug)]
struct Reply {
    id: Option<Box<RawValue>>,
    body: Result<Value, RpcError>,
}

impl Reply {
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
            error: Option<Value>,
        }
        let wire = Wire {
            jsonrpc: "2.0",
            id: self.id.as_deref(),
            result: self.body.as_ref().ok(),
            error: self.body.as_ref().err().map(error_object),
        };
        let mut bytes = serde_json::to_vec(&wire).map_err(io::Error::other)?;
        bytes.push(b'\n');
        Ok(bytes)
    }

    /// The reply as a JSON value. An id that does not fit serde_json's
    /// numbers reads back as a float here; [`Reply::to_bytes`] is exact.
    fn to_value(&self) -> Value {
        let id = self
            .id
            .as_deref()
            .and_then(|raw| serde_json::from_str(raw.get()).ok())
            .unwrap_or(Value::Null);
        match &self.body {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err(err) => error_reply(id, err.clone()),
        }
    }
}

/// Answers one line; `None` for notifications and stray responses. The id
/// in the value may be rounded when it is past 64 bits; [`serve`] writes
/// it verbatim.
pub fn handle_line(line: &[u8], info: &ServerInfo, host: &mut impl ToolHost) -> Option<Value> {
    handle(line, info, host).map(|reply| reply.to_value())
}

/// The kind of JSON value a raw value holds, from its first byte.
fn raw_kind(raw: &RawValue) -> u8 {
    raw.get().as_bytes().first().copied().unwrap_or(b' ')
}

fn handle(line: &[u8], info: &ServerInfo, host: &mut impl ToolHost) -> Option<Reply> {
    let invalid = |id: Option<Box<RawValue>>, message: &str| {
        Some(Reply {
            id,
            body: Err(RpcError::new(code::INVALID_REQUEST, message)),
        })
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
            return Some(Reply {
                id: None,
                body: Err(RpcError::new(
                    code::PARSE_ERROR,
                    format!("parse error: {err}"),
                )),
            });
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
            Some(_) => None,
            None => invalid(None, EXPECTED),
        };
    };
    let Some(method) = method else {
        if message.contains_key("result") || message.contains_key("error") {
            // A response to a request this server never sends.
            return None;
        }
        return invalid(
            Some(id),
            "invalid request: a request with an id needs a string method",
        );
    };
    let params = match message.get("params") {
        None => Map::new(),
        Some(raw) => match serde_json::from_str(raw.get()) {
            Ok(Value::Null) => Map::new(),
            Ok(Value::Object(params)) => params,
            Ok(_) => {
                return Some(Reply {
                    id: Some(id),
                    body: Err(RpcError::new(
                        code::INVALID_PARAMS,
                        "params must be an object",
                    )),
                });
            }
            Err(err) => {
                return Some(Reply {
                    id: Some(id),
                    body: Err(RpcError::new(
                        code::INVALID_PARAMS,
                        format!("params are not usable JSON: {err}"),
                    )),
                });
            }
        },
    };
    Some(Reply {
        id: Some(id),
        body: dispatch(&method, params, info, host),
    })
}

fn error_object(err: &RpcError) -> Value {
    let mut error = json!({"code": err.code, "message": err.message});
    if let Some(data) = &err.data {
        error["data"] = data.clone();
    }
    error
}

fn error_reply(id: Value, err: RpcError) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": error_object(&err)})
}

/// The protocol version a stateless request names in its `_meta`.
fn request_version(params: &Map<String, Value>) -> Option<&str> {
    params
        .get("_meta")?
        .get("io.modelcontextprotocol/protocolVersion")?
        .as_str()
}

fn supported(version: &str) -> bool {
    version == STATELESS_VERSION || HANDSHAKE_VERSIONS.contains(&version)
}

fn dispatch(
    method: &str,
    params: Map<String, Value>,
    info: &ServerInfo,
    host: &mut impl ToolHost,
) -> Result<Value, RpcError> {
    let version = request_version(&params);
    if let Some(version) = version.filter(|v| !supported(v)) {
        let mut versions = vec![STATELESS_VERSION];
        versions.extend(HANDSHAKE_VERSIONS);
        return Err(RpcError {
            code: code::UNSUPPORTED_PROTOCOL_VERSION,
            message: "Unsupported protocol version".into(),
            data: Some(json!({"requested": shown(version), "supported": versions})),
        });
    }
    let stateless = version == Some(STATELESS_VERSION);
    let server_info = json!({"name": info.name, "version": info.version});
    let mut result = match method {
        "server/discover" => {
            let mut versions = vec![STATELESS_VERSION];
            versions.extend(HANDSHAKE_VERSIONS);
            return Ok(json!({
                "resultType": "complete",
                "supportedVersions": versions,
                "capabilities": {"tools": {}},
                "ttlMs": 0,
                "cacheScope": "private",
                "_meta": {"io.modelcontextprotocol/serverInfo": server_info},
            }));
        }
        "initialize" => {
            let asked = params.get("protocolVersion").and_then(Value::as_str);
            let version = asked
                .filter(|v| HANDSHAKE_VERSIONS.contains(v))
                .unwrap_or(HANDSHAKE_VERSIONS[0]);
            return Ok(json!({
                "protocolVersion": version,
                "capabilities": {"tools": {"listChanged": false}},
                "serverInfo": server_info,
            }));
        }
        "ping" => json!({}),
        "tools/list" => {
            let tools: Vec<Value> = host
                .tools()
                .into_iter()
                .map(|tool| {
                    json!({
                        "name": tool.name,
                        "description": tool.description,
                        "inputSchema": tool.input_schema,
                    })
                })
                .collect();
            let mut result = json!({ "tools": tools });
            if stateless {
                result["ttlMs"] = json!(0);
                result["cacheScope"] = json!("private");
            }
            result
        }
        "tools/call" => {
            let name = params.get("name").and_then(Value::as_str).ok_or_else(|| {
                RpcError::new(code::INVALID_PARAMS, "tools/call needs a string name")
            })?;
            let arguments = match params.get("arguments") {
                None | Some(Value::Null) => Value::Object(Map::new()),
                Some(args @ Value::Object(_)) => args.clone(),
                Some(_) => {
                    return Err(RpcError::new(
                        code::INVALID_PARAMS,
                        "tools/call arguments must be an object",
                    ));
                }
            };
            let meta = CallMeta {
                tool_use_id: params
                    .get("_meta")
                    .and_then(|m| m.get("claudecode/toolUseId"))
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            };
            let answer = host.call(name, arguments, &meta)?;
            json!({
                "content": [{"type": "text", "text": answer.text}],
                "isError": answer.is_error,
            })
        }
        _ => {
            return Err(RpcError::new(
                code::METHOD_NOT_FOUND,
                format!("method not found: {}", shown(method)),
            ));
        }
    };
    if stateless {
        result["resultType"] = json!("complete");
    }
    Ok(result)
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
            Ok(ToolText {
                text: format!("{arguments} {:?}", meta.tool_use_id),
                is_error: arguments.get("fail").is_some(),
            })
        }
    }

    const INFO: ServerInfo = ServerInfo {
        name: "notesoup",
        version: "9.9.9",
    };

    fn check(request: &str, expect: Option<Value>) {
        assert_eq!(
            handle_line(request.as_bytes(), &INFO, &mut Echo),
            expect,
            "{request}"
        );
    }

    const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"claude-code","version":"2.1.332"},"io.modelcontextprotocol/clientCapabilities":{}}"#;

    #[test]
    fn discover_and_initialize_both_answer() {
        check(
            &format!(
                r#"{{"jsonrpc":"2.0","id":"server-discover-probe-1","method":"server/discover","params":{{{META}}}}}"#
            ),
            Some(
                json!({"jsonrpc":"2.0","id":"server-discover-probe-1","result":{
                "resultType":"complete",
                "supportedVersions":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"],
                "capabilities":{"tools":{}},"ttlMs":0,"cacheScope":"private",
                "_meta":{"io.modelcontextprotocol/serverInfo":{"name":"notesoup","version":"9.9.9"}}}}),
            ),
        );
        check(
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}"#,
            Some(
                json!({"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":false}},"serverInfo":{"name":"notesoup","version":"9.9.9"}}}),
            ),
        );
        check(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2030-01-01"}}"#,
            Some(
                json!({"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":false}},"serverInfo":{"name":"notesoup","version":"9.9.9"}}}),
            ),
        );
    }

    #[test]
    fn tools_list_and_call_in_both_eras() {
        check(
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
            Some(
                json!({"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"echo","description":"echoes","inputSchema":{"type":"object","additionalProperties":false}}]}}),
            ),
        );
        check(
            &format!(r#"{{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{{{META}}}}}"#),
            Some(
                json!({"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"echo","description":"echoes","inputSchema":{"type":"object","additionalProperties":false}}],"ttlMs":0,"cacheScope":"private","resultType":"complete"}}),
            ),
        );
        check(
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"fail":1},"_meta":{"claudecode/toolUseId":"toolu_1","progressToken":4}}}"#,
            Some(
                json!({"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"{\"fail\":1} Some(\"toolu_1\")"}],"isError":true}}),
            ),
        );
        check(
            &format!(
                r#"{{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{{"name":"echo",{META}}}}}"#
            ),
            Some(
                json!({"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"{} None"}],"isError":false,"resultType":"complete"}}),
            ),
        );
    }

    #[test]
    fn bad_requests_get_json_rpc_errors() {
        let cases = [
            ("not json", Value::Null, code::PARSE_ERROR),
            ("[1,2]", Value::Null, code::INVALID_REQUEST),
            (
                r#"{"id":1,"method":"tools/list"}"#,
                json!(1),
                code::INVALID_REQUEST,
            ),
            (
                r#"{"jsonrpc":"2.0","id":{"x":1},"method":"tools/list"}"#,
                Value::Null,
                code::INVALID_REQUEST,
            ),
            (
                r#"{"jsonrpc":"2.0","id":7,"method":"nope"}"#,
                json!(7),
                code::METHOD_NOT_FOUND,
            ),
            (
                r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"missing"}}"#,
                json!(8),
                code::INVALID_PARAMS,
            ),
            (
                r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"arguments":{}}}"#,
                json!(9),
                code::INVALID_PARAMS,
            ),
            (
                r#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"echo","arguments":[1]}}"#,
                json!(10),
                code::INVALID_PARAMS,
            ),
            (
                r#"{"jsonrpc":"2.0","id":11,"method":"tools/list","params":[1]}"#,
                json!(11),
                code::INVALID_PARAMS,
            ),
            (
                r#"{"jsonrpc":"2.0","id":12,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01"}}}"#,
                json!(12),
                code::UNSUPPORTED_PROTOCOL_VERSION,
            ),
        ];
        for (request, id, code) in cases {
            let reply = handle_line(request.as_bytes(), &INFO, &mut Echo).unwrap();
            assert_eq!(
                (&reply["id"], &reply["error"]["code"]),
                (&id, &json!(code)),
                "{request}"
            );
            assert!(reply["error"]["message"].is_string());
        }
    }

    #[test]
    fn requests_with_an_id_and_no_string_method_are_answered() {
        for request in [
            r#"{"jsonrpc":"2.0","id":21}"#,
            r#"{"jsonrpc":"2.0","id":21,"method":5}"#,
            r#"{"jsonrpc":"2.0","id":21,"method":null,"params":{}}"#,
            r#"{"jsonrpc":"2.0","id":21,"method":["ping"]}"#,
        ] {
            let reply = handle_line(request.as_bytes(), &INFO, &mut Echo).unwrap();
            assert_eq!(reply["id"], 21, "{request}");
            assert_eq!(reply["error"]["code"], code::INVALID_REQUEST, "{request}");
        }
        // Without an id it is neither a request nor a notification.
        let reply = handle_line(br#"{"jsonrpc":"2.0","method":1}"#, &INFO, &mut Echo).unwrap();
        assert_eq!(
            (&reply["id"], &reply["error"]["code"]),
            (&Value::Null, &json!(code::INVALID_REQUEST))
        );
    }

    fn serve_bytes(input: &[u8], max_line: usize) -> Vec<String> {
        let mut out = Vec::new();
        serve_capped(input, &mut out, &INFO, &mut Echo, max_line).unwrap();
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
    fn notifications_and_stray_responses_get_no_answer() {
        check(
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            None,
        );
        check(
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
            None,
        );
        check(r#"{"jsonrpc":"2.0","id":5,"result":{}}"#, None);
        check(
            r#"{"jsonrpc":"2.0","id":6,"error":{"code":1,"message":"x"}}"#,
            None,
        );
    }

    #[test]
    fn serve_answers_line_by_line_and_stops_at_eof() {
        let input = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}";
        let mut out = Vec::new();
        serve(&input[..], &mut out, &INFO, &mut Echo).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n"
        );
    }
}
