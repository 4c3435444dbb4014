//! The dreamer's tools as JSON lines: the protocol every host that runs its
//! dreamer as a child process serves (`notesoup-pi dream-tools`,
//! `notesoup-dsh dream-tools`) to the small extension inside that dreamer.
//!
//! One request per line, `{"id": N, "op": "dream.tool", "params": {"name",
//! "arguments"}}` ([`DreamCall`]); one answer per line ([`DreamAnswer`]),
//! `{"id": N, "result": {"text", "is_error"}}` (a refusal of the tool is
//! `is_error`), or `{"id": N, "error": {"code": "bad_request", "message"}}`
//! for a line that is no such request. A bad line is answered and skipped;
//! only a failing pipe ends the server early.
//!
//! These types are the protocol's only definition: `cargo xtask codegen`
//! writes them to `generated/notesoup.d.ts`, which the extensions (Pi's
//! `dreamer/dream.ts`, the dsh bundle's `dream.js`) import and `tsc` checks.

use std::io::{self, BufRead, Write};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use typeshare::typeshare;

use super::{DreamTools, call_dream_tool, dream_tool_table};
use crate::plumbing::{CappedLines, LineRead};

/// The longest refusal message sent back, in bytes.
const MAX_MESSAGE_BYTES: usize = 1024;

/// The one op, as [`DreamCall`] spells it on the wire.
const TOOL_OP: &str = "dream.tool";

/// A request's operation and its parameters: `"op"` and `"params"` of the
/// request line, next to its `"id"`.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", content = "params")]
pub(crate) enum DreamCall {
    /// Runs one dream tool.
    #[serde(rename = "dream.tool")]
    Tool(DreamToolParams),
}

/// The params of `dream.tool`.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DreamToolParams {
    /// The dream tool's name, from core's table ([`dream_tool_table`]).
    pub name: String,
    /// The tool's arguments, an object; absent or `null` is `{}`.
    #[serde(default)]
    #[typeshare(typescript(type = "unknown"))]
    pub arguments: Value,
}

/// One answer line: `result` for a request served, `error` for a line that
/// is no such request.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct DreamAnswer {
    /// The request's id (`0` when the line shows none).
    #[typeshare(serialized_as = "U53")]
    pub id: u64,
    /// What the tool answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<DreamToolResult>,
    /// Why the line was refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<DreamProtocolError>,
}

/// What a dream tool answered.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct DreamToolResult {
    /// The tool's text, or its refusal's.
    pub text: String,
    /// Whether the tool refused (the jail, a missing note, bad arguments).
    pub is_error: bool,
}

/// Why a line got no tool's answer.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct DreamProtocolError {
    /// What kind of refusal.
    #[typeshare(typescript(type = "`${DreamErrorCode}`"))]
    pub code: DreamErrorCode,
    /// One line, cut to a bound.
    pub message: String,
}

/// The kinds of [`DreamProtocolError`].
#[typeshare]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum DreamErrorCode {
    /// Not a request line of this protocol, another op, too long a line, or
    /// a name that is no dream tool.
    BadRequest,
}

/// One request line. Not generated: the extensions write it as
/// `{ id, op, params }` from a [`DreamCall`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Request {
    id: u64,
    #[serde(flatten)]
    call: DreamCall,
}

/// Why a line is no request.
enum NotARequest {
    /// Not this protocol's shape; the parser's words.
    Malformed(serde_json::Error),
    /// A well-formed line with another op.
    OtherOp(u64),
}

impl Request {
    /// Parses one line. Equivalent to deserializing [`Request`], but `op` is
    /// read first, so another op gets its own refusal, and the params go
    /// straight into their type (the derived form buffers the whole line).
    fn parse(line: &[u8]) -> Result<Self, NotARequest> {
        let (id, op, params) = LineRead::envelope(line).map_err(NotARequest::Malformed)?;
        if op != TOOL_OP {
            return Err(NotARequest::OtherOp(id));
        }
        let params = serde_json::from_str(params.get()).map_err(NotARequest::Malformed)?;
        Ok(Self {
            id,
            call: DreamCall::Tool(params),
        })
    }
}

impl DreamAnswer {
    /// A tool's answer.
    fn result(id: u64, text: String, is_error: bool) -> Self {
        Self {
            id,
            result: Some(DreamToolResult { text, is_error }),
            error: None,
        }
    }
}

/// `{"id", "error": {"code": "bad_request", "message"}}`, the message cut
/// to a bound.
fn refusal(id: u64, message: &str) -> DreamAnswer {
    let mut message = message.to_owned();
    if message.len() > MAX_MESSAGE_BYTES {
        let mut end = MAX_MESSAGE_BYTES - 3;
        while !message.is_char_boundary(end) {
            end -= 1;
        }
        message.truncate(end);
        message.push('…');
    }
    DreamAnswer {
        id,
        result: None,
        error: Some(DreamProtocolError {
            code: DreamErrorCode::BadRequest,
            message,
        }),
    }
}

/// The answer to one request line.
pub(crate) fn answer_dream_line(tools: &DreamTools, line: &[u8]) -> DreamAnswer {
    let Request { id, call } = match Request::parse(line) {
        Ok(request) => request,
        Err(NotARequest::Malformed(error)) => {
            return refusal(
                LineRead::recover_id(line),
                &format!("not a request: {error}"),
            );
        }
        Err(NotARequest::OtherOp(id)) => return refusal(id, "the only op is dream.tool"),
    };
    let DreamCall::Tool(DreamToolParams { name, arguments }) = call;
    let arguments = match arguments {
        Value::Null => Value::Object(serde_json::Map::new()),
        other => other,
    };
    match call_dream_tool(tools, &name, arguments) {
        Some(Ok(text)) => DreamAnswer::result(id, text, false),
        Some(Err(text)) => DreamAnswer::result(id, text, true),
        None => refusal(
            id,
            &format!(
                "no dream tool is named {}; the tools are {}",
                Value::String(name.chars().take(120).collect()),
                dream_tool_table()
                    .iter()
                    .map(|tool| tool.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ),
    }
}

/// Serves dream-tool requests until the input ends.
///
/// # Errors
/// Only when reading the input or writing an answer fails.
pub fn serve_dream_tools(
    tools: &DreamTools,
    input: impl BufRead,
    output: impl Write,
) -> io::Result<()> {
    serve_capped(tools, input, output, LineRead::MAX_BYTES)
}

fn serve_capped(
    tools: &DreamTools,
    input: impl BufRead,
    mut output: impl Write,
    cap: usize,
) -> io::Result<()> {
    let mut lines = CappedLines::with_cap(input, cap);
    loop {
        let answer = match lines.next_line()? {
            LineRead::Eof => return Ok(()),
            LineRead::TooLong { prefix, bytes } => refusal(
                LineRead::recover_id(prefix),
                &format!(
                    "the request line is {bytes} bytes, over the limit of {cap}; it was discarded"
                ),
            ),
            LineRead::Line(line) if LineRead::is_blank(line) => continue,
            LineRead::Line(line) => answer_dream_line(tools, line),
        };
        let mut bytes = serde_json::to_vec(&answer).map_err(io::Error::other)?;
        bytes.push(b'\n');
        output.write_all(&bytes)?;
        output.flush()?;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::plumbing::lines::tests::Interrupting;

    fn served(tools: &DreamTools, input: &str, cap: usize) -> Vec<Value> {
        let mut out = Vec::new();
        serve_capped(tools, input.as_bytes(), &mut out, cap).unwrap();
        String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn lines_are_answered_in_order_and_the_jail_refuses() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("notes");
        std::fs::create_dir_all(home.join("human")).unwrap();
        let tools = DreamTools::new(&home);
        let input = [
            r#"{"id":1,"op":"dream.tool","params":{"name":"write","arguments":{"path":"human/a.md","content":"hi"}}}"#,
            r#"{"id":2,"op":"dream.tool","params":{"name":"write","arguments":{"path":"../escape.md","content":"x"}}}"#,
            r#"{"id":3,"op":"dream.tool","params":{"name":"bash","arguments":{}}}"#,
            "not json",
            "",
            r#"{"id":5,"op":"dream.tool","params":{"name":"ls"}}"#,
            r#"{"id":6,"op":"shell","params":{"name":"ls"}}"#,
            "{\"id\":7,\"op\":\"dream.tool\",\"params\":{\"name\":\"read\",\"arguments\":{\"path\":\"human/a.md\"}}}\r",
        ]
        .join("\n");
        let answers = served(&tools, &input, LineRead::MAX_BYTES);
        assert_eq!(answers.len(), 7);
        assert_eq!(answers[0]["result"]["is_error"], false);
        assert_eq!(answers[1]["result"]["is_error"], true, "{}", answers[1]);
        assert!(!dir.path().join("escape.md").exists());
        assert_eq!(answers[2]["error"]["code"], "bad_request");
        assert!(
            answers[2]["error"]["message"]
                .as_str()
                .unwrap()
                .starts_with("no dream tool is named \"bash\"")
        );
        assert_eq!(answers[3]["id"], 0);
        assert_eq!(answers[4]["result"]["text"], "human/");
        assert_eq!(answers[5]["error"]["message"], "the only op is dream.tool");
        assert_eq!(answers[6]["result"]["text"], "hi");
    }

    #[test]
    fn an_over_long_line_is_refused_and_the_next_one_served() {
        let dir = tempfile::tempdir().unwrap();
        let tools = DreamTools::new(dir.path());
        let long = format!(
            r#"{{"id":1,"op":"dream.tool","params":{{"name":"ls","arguments":{{"path":"{}"}}}}}}"#,
            "x".repeat(500)
        );
        let input =
            format!("{long}\n{{\"id\":2,\"op\":\"dream.tool\",\"params\":{{\"name\":\"ls\"}}}}\n");
        let answers = served(&tools, &input, 200);
        assert_eq!(answers.len(), 2);
        assert_eq!(answers[0]["id"], 1, "the id is read from the line's start");
        assert!(
            answers[0]["error"]["message"]
                .as_str()
                .unwrap()
                .contains("over the limit of 200"),
            "{}",
            answers[0]
        );
        assert_eq!(answers[1]["id"], 2);
        assert_eq!(answers[1]["result"]["text"], "(nothing)");
    }

    #[test]
    fn a_long_refusal_is_cut() {
        let long = "é".repeat(2000);
        let refused = refusal(3, &long);
        let message = refused.error.unwrap().message;
        assert!(message.len() <= MAX_MESSAGE_BYTES);
        assert!(
            message.len() > MAX_MESSAGE_BYTES - 8,
            "cut at the bound, not before"
        );
        assert!(message.ends_with('…'));
        let exact = "a".repeat(MAX_MESSAGE_BYTES);
        assert_eq!(refusal(4, &exact).error.unwrap().message, exact);
    }

    #[test]
    fn the_wire_shapes_are_the_generated_types() {
        // A request as the extensions write it is the derived `{id, op,
        // params}` of `Request`, and `parse` reads exactly that.
        let line =
            r#"{"id":4,"op":"dream.tool","params":{"name":"ls","arguments":{"path":"human"}}}"#;
        let request = Request::parse(line.as_bytes()).ok().unwrap();
        assert_eq!(serde_json::to_string(&request).unwrap(), line);
        assert_eq!(serde_json::from_str::<Request>(line).unwrap(), request);
        let bare = Request::parse(br#"{"id":5,"op":"dream.tool","params":{"name":"ls"}}"#)
            .ok()
            .unwrap();
        assert_eq!(
            bare.call,
            DreamCall::Tool(DreamToolParams {
                name: "ls".into(),
                arguments: Value::Null
            })
        );
        for refused in [
            r#"{"id":1,"op":"dream.tool","params":{"name":"ls"},"extra":1}"#,
            r#"{"id":1,"op":"dream.tool","params":{"name":"ls","extra":1}}"#,
            r#"{"id":1,"op":"dream.tool"}"#,
        ] {
            assert!(
                matches!(
                    Request::parse(refused.as_bytes()),
                    Err(NotARequest::Malformed(_))
                ),
                "{refused}"
            );
        }
        // The answers' bytes: no absent field, the fields in this order.
        let answer = |a: &DreamAnswer| serde_json::to_string(a).unwrap();
        assert_eq!(
            answer(&DreamAnswer::result(1, "a\"b".into(), false)),
            r#"{"id":1,"result":{"text":"a\"b","is_error":false}}"#
        );
        assert_eq!(
            answer(&refusal(2, "no")),
            r#"{"id":2,"error":{"code":"bad_request","message":"no"}}"#
        );
    }

    #[test]
    fn an_interrupted_read_is_retried() {
        let dir = tempfile::tempdir().unwrap();
        let tools = DreamTools::new(dir.path());
        let input = r#"{"id":9,"op":"dream.tool","params":{"name":"ls"}}"#.to_owned() + "\n";
        let reader = io::BufReader::with_capacity(
            16,
            Interrupting {
                data: input.as_bytes(),
                interrupt: false,
            },
        );
        let mut out = Vec::new();
        serve_dream_tools(&tools, reader, &mut out).unwrap();
        let answer: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(answer["id"], 9);
        assert_eq!(answer["result"]["text"], "(nothing)");
    }
}
