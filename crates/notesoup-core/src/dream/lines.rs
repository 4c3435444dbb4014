//! The dreamer's tools as JSON lines: the protocol every host that runs its
//! dreamer as a child process serves (`notesoup-pi dream-tools`,
//! `notesoup-dsh dream-tools`) to the small extension inside that dreamer.
//!
//! One request per line, `{"id": N, "op": "dream.tool", "params": {"name",
//! "arguments"}}`; one answer per line, `{"id": N, "result": {"text",
//! "is_error"}}` (a refusal of the tool is `is_error`), or `{"id": N,
//! "error": {"code": "bad_request", "message"}}` for a line that is no such
//! request. A bad line is answered and skipped; only a failing pipe ends the
//! server early.

use std::io::{self, BufRead, Write};

use serde::Deserialize;
use serde_json::{Value, json};

use super::{DreamTools, call_dream_tool, dream_tool_table};

/// The longest request line read, newline excluded: a whole note
/// ([`crate::notes::MAX_NOTE_BYTES`]) escaped as JSON fits many times.
pub const DREAM_LINE_MAX_BYTES: usize = 16 * 1024 * 1024;

/// The id answered when a line's own id cannot be read; extensions number
/// their requests from 1.
pub const UNKNOWN_ID: u64 = 0;

/// The longest refusal message sent back, in bytes.
const MAX_MESSAGE_BYTES: usize = 1024;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Request {
    id: u64,
    op: String,
    params: Params,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    name: String,
    #[serde(default)]
    arguments: Value,
}

/// `{"id", "error": {"code": "bad_request", "message"}}`, the message cut
/// to a bound.
fn refusal(id: u64, message: &str) -> Value {
    let mut message = message.to_owned();
    if message.len() > MAX_MESSAGE_BYTES {
        let mut end = MAX_MESSAGE_BYTES - 3;
        while !message.is_char_boundary(end) {
            end -= 1;
        }
        message.truncate(end);
        message.push('…');
    }
    json!({"id": id, "error": {"code": "bad_request", "message": message}})
}

/// The `id` of a line that is not a valid request, when it has one: from
/// the parsed line, else from a line that starts `{"id":N` as the
/// extension writes them (an over-long line keeps only its start).
fn recover_id(line: &[u8]) -> u64 {
    if let Ok(value) = serde_json::from_slice::<Value>(line) {
        return value
            .get("id")
            .and_then(Value::as_u64)
            .unwrap_or(UNKNOWN_ID);
    }
    let Some(rest) = line.strip_prefix(b"{\"id\":") else {
        return UNKNOWN_ID;
    };
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    std::str::from_utf8(&rest[..digits])
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(UNKNOWN_ID)
}

/// The answer to one request line.
pub fn answer_dream_line(tools: &DreamTools, line: &[u8]) -> Value {
    let request: Request = match serde_json::from_slice(line) {
        Ok(request) => request,
        Err(error) => return refusal(recover_id(line), &format!("not a request: {error}")),
    };
    if request.op != "dream.tool" {
        return refusal(request.id, "the only op is dream.tool");
    }
    let arguments = match request.params.arguments {
        Value::Null => json!({}),
        other => other,
    };
    match call_dream_tool(tools, &request.params.name, arguments) {
        Some(Ok(text)) => json!({"id": request.id, "result": {"text": text, "is_error": false}}),
        Some(Err(text)) => json!({"id": request.id, "result": {"text": text, "is_error": true}}),
        None => refusal(
            request.id,
            &format!(
                "no dream tool is named {}; the tools are {}",
                Value::String(request.params.name.chars().take(120).collect()),
                dream_tool_table()
                    .iter()
                    .map(|tool| tool.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ),
    }
}

/// What one bounded line read brought.
#[derive(Debug, PartialEq, Eq)]
enum Line {
    /// A whole line is in the buffer, without its line ending.
    Whole,
    /// The line was over the bound; it was skipped to its newline, and only
    /// its first bytes are in the buffer.
    TooLong(u64),
    /// The input ended.
    End,
}

/// Reads one line into `line`, keeping at most `cap` bytes of it.
fn read_line(input: &mut impl BufRead, line: &mut Vec<u8>, cap: usize) -> io::Result<Line> {
    line.clear();
    let mut total: u64 = 0;
    let mut seen = false;
    loop {
        let available = match input.fill_buf() {
            Ok(available) => available,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        if available.is_empty() {
            if !seen {
                return Ok(Line::End);
            }
            break;
        }
        seen = true;
        let (chunk, done) = match memchr::memchr(b'\n', available) {
            Some(at) => (&available[..at], Some(at + 1)),
            None => (available, None),
        };
        let room = (cap + 1).saturating_sub(line.len());
        line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        total += chunk.len() as u64;
        let used = done.unwrap_or(available.len());
        input.consume(used);
        if done.is_some() {
            break;
        }
    }
    if total > cap as u64 {
        line.truncate(256);
        return Ok(Line::TooLong(total));
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    Ok(Line::Whole)
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
    serve_capped(tools, input, output, DREAM_LINE_MAX_BYTES)
}

fn serve_capped(
    tools: &DreamTools,
    mut input: impl BufRead,
    mut output: impl Write,
    cap: usize,
) -> io::Result<()> {
    let mut line = Vec::new();
    loop {
        let answer = match read_line(&mut input, &mut line, cap)? {
            Line::End => return Ok(()),
            Line::TooLong(bytes) => refusal(
                recover_id(&line),
                &format!("the request line is {bytes} bytes, over the limit of {cap}"),
            ),
            Line::Whole if line.iter().all(u8::is_ascii_whitespace) => continue,
            Line::Whole => answer_dream_line(tools, &line),
        };
        output.write_all(answer.to_string().as_bytes())?;
        output.write_all(b"\n")?;
        output.flush()?;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

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
        let answers = served(&tools, &input, DREAM_LINE_MAX_BYTES);
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
        let message = refused["error"]["message"].as_str().unwrap();
        assert!(message.len() <= MAX_MESSAGE_BYTES);
        assert!(
            message.len() > MAX_MESSAGE_BYTES - 8,
            "cut at the bound, not before"
        );
        assert!(message.ends_with('…'));
        let exact = "a".repeat(MAX_MESSAGE_BYTES);
        assert_eq!(refusal(4, &exact)["error"]["message"], exact.as_str());
    }

    /// A reader that is interrupted once before each chunk it gives.
    struct Interrupting<'a> {
        data: &'a [u8],
        interrupt: bool,
    }

    impl io::Read for Interrupting<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.interrupt = !self.interrupt;
            if self.interrupt {
                return Err(io::ErrorKind::Interrupted.into());
            }
            let n = buf.len().min(self.data.len()).min(7);
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
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
        serve_capped(&tools, reader, &mut out, DREAM_LINE_MAX_BYTES).unwrap();
        let answer: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(answer["id"], 9);
        assert_eq!(answer["result"]["text"], "(nothing)");
    }
}
