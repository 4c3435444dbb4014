//! A synchronous MCP server over stdio: newline-delimited JSON-RPC 2.0.
//!
//! It speaks both eras Claude Code and other clients use: the stateless
//! 2026-07-28 revision (`server/discover`, every request carrying its
//! `_meta`) and the `initialize` handshake (2024-11-05 … 2025-11-25). No
//! request depends on an earlier one, so the two eras share one dispatcher.
//! Notifications are ignored; malformed and unknown requests get JSON-RPC
//! errors; nothing but protocol lines is ever written to stdout.

use std::io::{self, BufRead, Write};

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

/// Serves requests from `input` until it closes, answering on `output`.
pub fn serve(
    input: impl BufRead,
    mut output: impl Write,
    info: &ServerInfo,
    host: &mut impl ToolHost,
) -> io::Result<()> {
    for line in input.split(b'\n') {
        let line = line?;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if let Some(reply) = handle_line(&line, info, host) {
            let mut bytes = serde_json::to_vec(&reply).map_err(io::Error::other)?;
            bytes.push(b'\n');
            output.write_all(&bytes)?;
            output.flush()?;
        }
    }
    Ok(())
}

/// Answers one line; `None` for notifications and stray responses.
pub fn handle_line(line: &[u8], info: &ServerInfo, host: &mut impl ToolHost) -> Option<Value> {
    let message: Value = match serde_json::from_slice(line) {
        Ok(message) => message,
        Err(err) => {
            return Some(error_reply(
                Value::Null,
                RpcError::new(code::PARSE_ERROR, format!("parse error: {err}")),
            ));
        }
    };
    let Value::Object(message) = message else {
        return Some(error_reply(
            Value::Null,
            RpcError::new(
                code::INVALID_REQUEST,
                "invalid request: expected one JSON-RPC 2.0 object (batches are not supported)",
            ),
        ));
    };
    let id = message.get("id").cloned();
    let valid_id = matches!(id, Some(Value::String(_) | Value::Number(_)));
    let method = message.get("method").and_then(Value::as_str);
    if message.get("jsonrpc").and_then(Value::as_str) != Some("2.0")
        || (id.is_some() && !valid_id)
        || (method.is_none() && id.is_none())
    {
        return Some(error_reply(
            id.filter(|_| valid_id).unwrap_or(Value::Null),
            RpcError::new(
                code::INVALID_REQUEST,
                "invalid request: expected jsonrpc \"2.0\", a string method and a string or number id",
            ),
        ));
    }
    let Some(id) = id else {
        // A notification: nothing to answer.
        return None;
    };
    let Some(method) = method else {
        // A response to a request this server never sends.
        return None;
    };
    let params = match message.get("params") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(params)) => params.clone(),
        Some(_) => {
            return Some(error_reply(
                id,
                RpcError::new(code::INVALID_PARAMS, "params must be an object"),
            ));
        }
    };
    Some(match dispatch(method, params, info, host) {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err(err) => error_reply(id, err),
    })
}

fn error_reply(id: Value, err: RpcError) -> Value {
    let mut error = json!({"code": err.code, "message": err.message});
    if let Some(data) = err.data {
        error["data"] = data;
    }
    json!({"jsonrpc": "2.0", "id": id, "error": error})
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
            data: Some(json!({"requested": version, "supported": versions})),
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
                format!("method not found: {method}"),
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
