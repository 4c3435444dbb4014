//! `notesoup mcp` and `notesoup dream-tools`: the stdio MCP server, one
//! newline-delimited JSON-RPC 2.0 message a line, served on the calling
//! thread.
//!
//! Each line is read through core's capped line reader, checked in one pass
//! ([`wire::read_line`]), and answered before the next is read, so answers
//! come in request order; a tool call goes to the [`McpTools`] the server
//! serves as its name, arguments and `_meta`. Nothing but protocol lines is
//! ever written to stdout.
//!
//! Both eras of MCP are served: the stateless 2026-07-28 revision
//! (`server/discover`, each request carrying its whole `_meta`) and the
//! `initialize` handshake of the earlier revisions. A client that sends
//! neither an `initialize` nor the stateless `_meta` (a bare `tools/list`)
//! is served as after an `initialize`, as this server always has. See
//! docs/claude.md for every answer.

pub mod dream_tools;
pub mod tools;
pub mod wire;

use std::io::{self, BufRead, Write};

use notesoup_core::plumbing::{CappedLines, LineRead};
use notesoup_core::tools::CompactJson;
use serde::{Serialize, Serializer};
use serde_json::{Map, Value, json};

use self::wire::{Line, RpcError, code};
use crate::shown::shown;

/// Every revision served, newest first: the stateless one, then those with
/// an `initialize` handshake.
pub const SUPPORTED_VERSIONS: [&str; 5] = [
    STATELESS_VERSION,
    "2025-11-25",
    "2025-06-18",
    "2025-03-26",
    "2024-11-05",
];

/// The stateless revision: requests carry their whole `_meta` and get
/// results with `resultType` (and, when cacheable, cache hints).
const STATELESS_VERSION: &str = "2026-07-28";

/// What `initialize` answers when the client names a revision without a
/// handshake or one this server does not know.
const NEWEST_HANDSHAKE: &str = "2025-11-25";

/// The `_meta` keys of a stateless request.
const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_CLIENT: &str = "io.modelcontextprotocol/clientInfo";
const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// Claude Code's id of the `tool_use` a `tools/call` answers.
const META_TOOL_USE: &str = "claudecode/toolUseId";

/// The server's name and version as clients see them.
#[derive(Debug, Clone, Copy)]
pub struct ServerInfo {
    /// `notesoup`.
    pub name: &'static str,
    /// The package version.
    pub version: &'static str,
}

/// A tool as `tools/list` shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolDef {
    /// The tool name.
    pub name: String,
    /// What the model reads about it.
    pub description: String,
    /// The JSON Schema of its arguments.
    pub input_schema: Value,
    /// The JSON Schema of a successful result's `structuredContent`; `None`
    /// for a text-only tool.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// Shown as the `readOnlyHint` annotation when known.
    #[serde(
        rename = "annotations",
        skip_serializing_if = "Option::is_none",
        serialize_with = "read_only_hint"
    )]
    pub read_only: Option<bool>,
}

fn read_only_hint<S: Serializer>(read_only: &Option<bool>, to: S) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Annotations {
        read_only_hint: bool,
    }
    match read_only {
        Some(read_only) => Annotations {
            read_only_hint: *read_only,
        }
        .serialize(to),
        None => to.serialize_none(),
    }
}

/// Facts about one `tools/call` taken from its `_meta`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CallMeta<'a> {
    /// `_meta["claudecode/toolUseId"]`: the transcript's `tool_use` id.
    pub tool_use_id: Option<&'a str>,
}

/// A tool's answer: the text the model reads, flagged when it is a refusal,
/// and the structured result when the tool has an output schema.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolAnswer {
    /// The rendered text the model reads.
    pub text: String,
    /// True for a refusal.
    pub is_error: bool,
    /// Sent as `structuredContent` next to the text, as it is.
    pub structured: Option<CompactJson>,
}

/// The tools one server serves.
pub trait McpTools {
    /// Every tool, in listing order; asked once, when the server starts.
    fn tools(&self) -> Vec<ToolDef>;
    /// Runs `name`, one of [`Self::tools`]; a refusal is an answer with
    /// `is_error`.
    fn call(&mut self, name: &str, arguments: Value, meta: &CallMeta<'_>) -> ToolAnswer;
}

/// Serves requests from `input` until it closes, answering on `output`.
/// Lines are read as bytes: one that is not JSON (invalid UTF-8 included)
/// or is over [`LineRead::MAX_BYTES`] gets an error reply, and the next line is
/// served as usual.
pub fn serve(
    input: impl BufRead,
    output: impl Write,
    info: &ServerInfo,
    tools: impl McpTools,
) -> io::Result<()> {
    serve_capped(input, output, info, tools, LineRead::MAX_BYTES)
}

fn serve_capped(
    input: impl BufRead,
    mut output: impl Write,
    info: &ServerInfo,
    tools: impl McpTools,
    max_line: usize,
) -> io::Result<()> {
    let mut server = Server::new(*info, tools)?;
    let mut lines = CappedLines::with_cap(input, max_line);
    let mut out = Vec::new();
    loop {
        out.clear();
        match lines.next_line()? {
            LineRead::Eof => return Ok(()),
            LineRead::Line(line) if LineRead::is_blank(line) => continue,
            LineRead::Line(line) if LineRead::too_many_tokens(line, LineRead::MAX_TOKENS) => {
                let error = RpcError {
                    code: code::INVALID_REQUEST,
                    message: format!(
                        "invalid request: the line holds more than {max_tokens} commas, colons and opening brackets and was not parsed",
                        max_tokens = LineRead::MAX_TOKENS
                    ),
                    data: Some(json!({ "limitTokens": LineRead::MAX_TOKENS })),
                };
                wire::write_error(&mut out, None, &error)?;
            }
            LineRead::Line(line) => server.answer(line, &mut out)?,
            LineRead::TooLong { bytes, .. } => {
                let error = RpcError {
                    code: code::INVALID_REQUEST,
                    message: format!(
                        "invalid request: the line is longer than the {max_line}-byte limit and was discarded unread"
                    ),
                    data: Some(json!({ "limitBytes": max_line, "lineBytes": bytes })),
                };
                wire::write_error(&mut out, None, &error)?;
            }
        }
        if !out.is_empty() {
            output.write_all(&out)?;
            output.flush()?;
        }
    }
}

/// Which lifecycle the client chose. `ping` and `server/discover` choose
/// none; an `initialize` chooses the handshake, and so does any other first
/// request that does not carry the stateless `_meta` (all three keys).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lifecycle {
    Open,
    Handshake,
    /// Every request must carry its version and capabilities.
    Stateless,
}

/// One connection: the tools, what it lists, and its lifecycle.
struct Server<T> {
    tools: T,
    info: ServerInfo,
    /// The listed names, for telling an unknown tool.
    names: Vec<String>,
    /// The listed tools as a JSON array, written once.
    listing: String,
    lifecycle: Lifecycle,
}

impl<T: McpTools> Server<T> {
    fn new(info: ServerInfo, tools: T) -> io::Result<Self> {
        let defs = tools.tools();
        let listing = serde_json::to_string(&defs).map_err(io::Error::other)?;
        Ok(Self {
            names: defs.into_iter().map(|tool| tool.name).collect(),
            listing,
            tools,
            info,
            lifecycle: Lifecycle::Open,
        })
    }

    /// Answers one line into `out` (nothing for a notification).
    fn answer(&mut self, line: &[u8], out: &mut Vec<u8>) -> io::Result<()> {
        let request = match wire::read_line(line) {
            Line::RpcRequest(request) => request,
            Line::Refused(id, error) => return wire::write_error(out, id, &error),
            Line::Nothing => return Ok(()),
        };
        wire::start_result(out, request.id);
        match self.respond(&request.method, request.params.unwrap_or_default(), out) {
            Ok(()) => {
                wire::end_result(out);
                Ok(())
            }
            Err(error) => {
                out.clear();
                wire::write_error(out, Some(request.id), &error)
            }
        }
    }

    /// Writes the result of `method` in `out`, or says why there is none.
    fn respond(
        &mut self,
        method: &str,
        mut params: Map<String, Value>,
        out: &mut Vec<u8>,
    ) -> Result<(), RpcError> {
        // Answered in every lifecycle: the stateless revision dropped
        // `ping`, but a liveness check must never fail.
        if method == "ping" {
            out.extend_from_slice(b"{}");
            return Ok(());
        }
        let meta = params.remove("_meta");
        let meta = RequestMeta::read(meta.as_ref(), method)?;
        self.admit(method, &meta)?;
        let stateless = meta.stateless();
        match method {
            "initialize" => self.initialize(&params, out),
            "server/discover" => self.discover(out),
            "tools/list" => {
                out.extend_from_slice(if stateless {
                    br#"{"resultType":"complete","ttlMs":0,"cacheScope":"private","tools":"#
                } else {
                    br#"{"tools":"#
                });
                out.extend_from_slice(self.listing.as_bytes());
                out.push(b'}');
                Ok(())
            }
            "tools/call" => self.call(params, &meta, stateless, out),
            _ => Err(RpcError::new(
                code::METHOD_NOT_FOUND,
                format!("method not found: {}", shown(method)),
            )),
        }
    }

    /// Checks `method` may be served in this lifecycle, choosing it on the
    /// first request that does.
    fn admit(&mut self, method: &str, meta: &RequestMeta<'_>) -> Result<(), RpcError> {
        match method {
            "initialize" => return Ok(()),
            "server/discover" => return meta.complete(),
            _ => {}
        }
        if self.lifecycle == Lifecycle::Open {
            if meta.has_all_keys {
                meta.complete()?;
                self.lifecycle = Lifecycle::Stateless;
            } else {
                self.lifecycle = Lifecycle::Handshake;
            }
        }
        if self.lifecycle == Lifecycle::Stateless || meta.stateless() {
            meta.complete()?;
        }
        Ok(())
    }

    /// The handshake: the client's revision when it has one, else the
    /// newest. What the client leaves out (its name, its capabilities) is
    /// never read here.
    fn initialize(
        &mut self,
        params: &Map<String, Value>,
        out: &mut Vec<u8>,
    ) -> Result<(), RpcError> {
        let invalid = |what: &str| RpcError::invalid_params("initialize", what);
        let requested = match params.get("protocolVersion") {
            None => None,
            Some(Value::String(version)) => Some(version.as_str()),
            Some(_) => return Err(invalid("protocolVersion must be a string")),
        };
        for key in ["capabilities", "clientInfo"] {
            if params.get(key).is_some_and(|value| !value.is_object()) {
                return Err(invalid(&format!("{key} must be an object")));
            }
        }
        let version = requested
            .filter(|version| SUPPORTED_VERSIONS[1..].contains(version))
            .unwrap_or(NEWEST_HANDSHAKE);
        if self.lifecycle == Lifecycle::Open {
            self.lifecycle = Lifecycle::Handshake;
        }
        write_json(
            out,
            &json!({
                "protocolVersion": version,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": self.info.name, "version": self.info.version},
            }),
        )
    }

    fn discover(&self, out: &mut Vec<u8>) -> Result<(), RpcError> {
        write_json(
            out,
            &json!({
                "resultType": "complete",
                "supportedVersions": SUPPORTED_VERSIONS,
                "capabilities": {"tools": {}},
                "ttlMs": 0,
                "cacheScope": "private",
                "_meta": {"io.modelcontextprotocol/serverInfo":
                    {"name": self.info.name, "version": self.info.version}},
            }),
        )
    }

    /// A `tools/call`: the tool's text, flagged when it is a refusal, with
    /// its structured result written as it is.
    fn call(
        &mut self,
        mut params: Map<String, Value>,
        meta: &RequestMeta<'_>,
        stateless: bool,
        out: &mut Vec<u8>,
    ) -> Result<(), RpcError> {
        let invalid = |what: &str| RpcError::invalid_params("tools/call", what);
        let Some(Value::String(name)) = params.remove("name") else {
            return Err(invalid("name must be a string"));
        };
        let arguments = match params.remove("arguments") {
            None | Some(Value::Null) => Value::Object(Map::new()),
            Some(arguments @ Value::Object(_)) => arguments,
            Some(_) => return Err(invalid("arguments must be an object")),
        };
        // A name this server never listed is a protocol error in MCP (not a
        // tool result).
        if !self.names.contains(&name) {
            return Err(RpcError::new(
                code::INVALID_PARAMS,
                format!("unknown tool: {}", shown(&name)),
            ));
        }
        let call = CallMeta {
            tool_use_id: meta.tool_use_id,
        };
        let answer = self.tools.call(&name, arguments, &call);
        if stateless {
            out.extend_from_slice(br#"{"resultType":"complete","content":[{"type":"text","text":"#);
        } else {
            out.extend_from_slice(br#"{"content":[{"type":"text","text":"#);
        }
        write_json(out, &answer.text)?;
        out.extend_from_slice(b"}]");
        if let Some(structured) = &answer.structured {
            out.extend_from_slice(br#","structuredContent":"#);
            out.extend_from_slice(structured.as_str().as_bytes());
        }
        out.extend_from_slice(if answer.is_error {
            br#","isError":true}"#
        } else {
            br#","isError":false}"#
        });
        Ok(())
    }
}

fn write_json<V: Serialize + ?Sized>(out: &mut Vec<u8>, value: &V) -> Result<(), RpcError> {
    wire::write_json(out, value).map_err(|error| {
        RpcError::new(
            code::INTERNAL_ERROR,
            format!("the answer could not be written: {error}"),
        )
    })
}

/// What a request's `_meta` says.
#[derive(Debug, Default)]
struct RequestMeta<'m> {
    /// The revision it names, one this server speaks.
    version: Option<&'m str>,
    /// It names its version, its client and its capabilities.
    has_all_keys: bool,
    /// Its capabilities are an object.
    capabilities: bool,
    tool_use_id: Option<&'m str>,
}

impl<'m> RequestMeta<'m> {
    fn read(meta: Option<&'m Value>, method: &str) -> Result<Self, RpcError> {
        let meta = match meta {
            None => return Ok(Self::default()),
            Some(Value::Object(meta)) => meta,
            Some(_) => {
                return Err(RpcError::invalid_params(
                    &shown(method),
                    "_meta must be an object",
                ));
            }
        };
        let version = meta.get(META_VERSION).and_then(Value::as_str);
        if let Some(version) = version
            && !SUPPORTED_VERSIONS.contains(&version)
        {
            return Err(RpcError {
                code: code::UNSUPPORTED_PROTOCOL_VERSION,
                message: "Unsupported protocol version".into(),
                data: Some(json!({"requested": shown(version), "supported": SUPPORTED_VERSIONS})),
            });
        }
        Ok(Self {
            version,
            has_all_keys: [META_VERSION, META_CLIENT, META_CAPABILITIES]
                .iter()
                .all(|key| meta.contains_key(*key)),
            capabilities: meta.get(META_CAPABILITIES).is_some_and(Value::is_object),
            tool_use_id: meta.get(META_TOOL_USE).and_then(Value::as_str),
        })
    }

    /// It names the stateless revision (or a later one): its result has the
    /// stateless shape, and it must carry its capabilities.
    fn stateless(&self) -> bool {
        self.version.is_some_and(|v| v >= STATELESS_VERSION)
    }

    /// Whether it names the version and capabilities a stateless request
    /// must carry.
    fn complete(&self) -> Result<(), RpcError> {
        let missing: Vec<&str> = [
            (self.version.is_none(), META_VERSION),
            (!self.capabilities, META_CAPABILITIES),
        ]
        .into_iter()
        .filter_map(|(missing, key)| missing.then_some(key))
        .collect();
        if missing.is_empty() {
            return Ok(());
        }
        Err(RpcError::new(
            code::INVALID_PARAMS,
            format!(
                "request _meta is missing or has malformed required fields: {}",
                missing.join(", ")
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Echo;

    impl McpTools for Echo {
        fn tools(&self) -> Vec<ToolDef> {
            vec![ToolDef {
                name: "echo".into(),
                description: "echoes".into(),
                input_schema: json!({"type": "object", "additionalProperties": false}),
                output_schema: Some(json!({
                    "type": "object",
                    "properties": {"echo": {"type": "object"}},
                    "required": ["echo"]
                })),
                read_only: Some(true),
            }]
        }

        fn call(&mut self, _name: &str, arguments: Value, meta: &CallMeta<'_>) -> ToolAnswer {
            let is_error = arguments.get("fail").is_some();
            ToolAnswer {
                text: format!("{arguments} {:?}", meta.tool_use_id),
                is_error,
                structured: (!is_error)
                    .then(|| CompactJson::to_json(&json!({ "echo": arguments })).unwrap()),
            }
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
                serve_bytes(request.as_bytes(), LineRead::MAX_BYTES),
                [format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#)]
            );
            let request = format!(r#"{{"jsonrpc":"2.0","id":{id}}}"#);
            let reply = serve_bytes(request.as_bytes(), LineRead::MAX_BYTES);
            assert!(
                reply[0].starts_with(&format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32600,"#
                )),
                "{reply:?}"
            );
        }
    }

    /// A line within the byte limit but with more JSON punctuation than
    /// the token limit is refused unparsed, and serving goes on.
    #[test]
    fn a_line_of_too_many_tokens_is_refused_unparsed() {
        let ping = |id: u32| format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n");
        let mut input = r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":["#.to_owned();
        input.push_str(&"0,".repeat(LineRead::MAX_TOKENS));
        input.push_str("0]}}\n");
        input.push_str(&ping(2));
        let replies = serve_bytes(input.as_bytes(), LineRead::MAX_BYTES);
        assert_eq!(
            replies.len(),
            2,
            "{:?}",
            replies
                .iter()
                .map(|r| &r[..r.len().min(200)])
                .collect::<Vec<_>>()
        );
        let refused: Value = serde_json::from_str(&replies[0]).unwrap();
        assert_eq!(refused["id"], Value::Null);
        assert_eq!(refused["error"]["code"], code::INVALID_REQUEST);
        assert_eq!(
            refused["error"]["data"]["limitTokens"],
            LineRead::MAX_TOKENS
        );
        assert_eq!(
            refused["error"]["message"],
            "invalid request: the line holds more than 2097152 commas, colons and opening brackets and was not parsed"
        );
        assert_eq!(replies[1], r#"{"jsonrpc":"2.0","id":2,"result":{}}"#);
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
    fn both_eras_are_served() {
        let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"claude-code","version":"2.1.332"},"io.modelcontextprotocol/clientCapabilities":{}}"#;
        let input = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":\"probe\",\"method\":\"server/discover\",\"params\":{{{meta}}}}}\n\
             {{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{{{meta}}}}}\n\
             {{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{{\"name\":\"echo\",\"arguments\":{{\"fail\":1}},{meta}}}}}\n\
             {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}}\n\
             {{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{{}}}}\n"
        );
        let replies: Vec<Value> = serve_bytes(input.as_bytes(), LineRead::MAX_BYTES)
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
            LineRead::MAX_BYTES,
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
