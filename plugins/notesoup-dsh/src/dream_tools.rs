//! The dreamer's tools on dsh: core's jailed write, edit and crumpled-only
//! delete, and its read-only read, ls, find and grep, served as JSON lines
//! by `notesoup-dsh dream-tools --notes-home HOME` to the bundle's
//! `notesoup/dsh/dream` row inside the headless dsh `dream` starts.
//!
//! One request per line, `{"id": N, "op": "dream.tool", "params": {"name",
//! "arguments"}}`; one answer per line, `{"id": N, "result": {"text",
//! "is_error"}}` (a refusal of the tool is `is_error`), or `{"id": N,
//! "error": {"code", "message"}}` for a line that is no such request.

use std::io::{self, BufRead, Write};

use notesoup_core::dream::{DreamTools, call_dream_tool, dream_tool_table};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::lines::{self, MAX_LINE_BYTES, Read, recover_id};
use crate::tools::ToolManifest;

/// The dream tools as the bundle registers them: core's table.
pub fn manifest() -> Vec<ToolManifest> {
    dream_tool_table()
        .into_iter()
        .map(|tool| ToolManifest {
            name: tool.name.to_owned(),
            description: tool.description.to_owned(),
            parameters: tool.input_schema,
            sequential: tool.sequential,
        })
        .collect()
}

/// Runs one dream tool (core's router): its text, or the refusal's text.
/// `None` for a name that is no dream tool.
pub fn call(tools: &DreamTools, name: &str, arguments: Value) -> Option<Result<String, String>> {
    call_dream_tool(tools, name, arguments)
}

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

fn refusal(id: u64, message: &str) -> Value {
    let mut message = message.to_owned();
    if message.len() > 1024 {
        let mut end = 1021;
        while !message.is_char_boundary(end) {
            end -= 1;
        }
        message.truncate(end);
        message.push('…');
    }
    json!({"id": id, "error": {"code": "bad_request", "message": message}})
}

fn answer(tools: &DreamTools, line: &[u8]) -> Value {
    let id = recover_id(line);
    let request: Request = match serde_json::from_slice(line) {
        Ok(request) => request,
        Err(error) => return refusal(id, &error.to_string()),
    };
    if request.op != "dream.tool" {
        return refusal(request.id, "the only op is dream.tool");
    }
    let arguments = match request.params.arguments {
        Value::Null => json!({}),
        other => other,
    };
    match call(tools, &request.params.name, arguments) {
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

/// Serves dream-tool requests until the input ends. A bad line is answered
/// with `bad_request`; only a failing pipe ends it early.
pub fn serve(
    tools: &DreamTools,
    mut input: impl BufRead,
    mut output: impl Write,
) -> io::Result<()> {
    let mut line = Vec::new();
    loop {
        let answer = match lines::read_line(&mut input, &mut line)? {
            Read::Eof => return Ok(()),
            Read::TooLong { bytes } => refusal(
                recover_id(&line),
                &format!("the request line is {bytes} bytes, over the limit of {MAX_LINE_BYTES}"),
            ),
            Read::Line if lines::is_blank(&line) => continue,
            Read::Line => answer(tools, &line),
        };
        output.write_all(answer.to_string().as_bytes())?;
        output.write_all(b"\n")?;
        output.flush()?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_manifest_names_every_tool_once_and_writes_go_alone() {
        let names: Vec<String> = manifest().into_iter().map(|t| t.name).collect();
        assert_eq!(
            names,
            ["read", "grep", "find", "ls", "write", "edit", "delete"]
        );
        for tool in manifest() {
            let writes = ["write", "edit", "delete"].contains(&tool.name.as_str());
            assert_eq!(tool.sequential, writes, "{}", tool.name);
        }
    }

    #[test]
    fn lines_are_answered_in_order_and_the_jail_refuses() {
        let dir = tempfile::tempdir().expect("tempdir");
        let home = dir.path().join("notes");
        std::fs::create_dir_all(home.join("human")).expect("mkdir");
        let tools = DreamTools::new(&home);
        let input = [
            r#"{"id":1,"op":"dream.tool","params":{"name":"write","arguments":{"path":"human/a.md","content":"hi"}}}"#,
            r#"{"id":2,"op":"dream.tool","params":{"name":"write","arguments":{"path":"../escape.md","content":"x"}}}"#,
            r#"{"id":3,"op":"dream.tool","params":{"name":"bash","arguments":{}}}"#,
            "not json",
            r#"{"id":5,"op":"dream.tool","params":{"name":"ls"}}"#,
        ]
        .join("\n");
        let mut out = Vec::new();
        serve(&tools, input.as_bytes(), &mut out).expect("serve");
        let answers: Vec<Value> = String::from_utf8(out)
            .expect("utf-8")
            .lines()
            .map(|l| serde_json::from_str(l).expect("json"))
            .collect();
        assert_eq!(answers.len(), 5);
        assert_eq!(answers[0]["result"]["is_error"], false);
        assert_eq!(answers[1]["result"]["is_error"], true, "{}", answers[1]);
        assert!(!dir.path().join("escape.md").exists());
        assert_eq!(answers[2]["error"]["code"], "bad_request");
        assert_eq!(answers[3]["id"], 0);
        assert_eq!(answers[4]["result"]["text"], "human/");
    }
}
