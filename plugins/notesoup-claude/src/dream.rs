//! `notesoup dream`: core's dream run with a headless Claude Code session as
//! the dreamer. The session gets the playbook as its one prompt, no built-in
//! tools, and only the jailed dream tools, served by this same binary
//! (`notesoup dream-tools`); notesoup's own hooks are off inside it.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use notesoup_core::dream::{DreamRequest, DreamResult, DreamRunner, DreamWrite, Ended};
use notesoup_core::plumbing::run_dreamer_child;
use serde_json::{Value, json};

use crate::env::DISABLE_VAR;
use crate::names::DREAM_SERVER;

/// The dream tools the session may call.
const TOOLS: [&str; 7] = ["read", "grep", "find", "ls", "write", "edit", "delete"];

/// Names the `claude` to run (default: `claude` on PATH).
pub const CLAUDE_VAR: &str = "NOTESOUP_CLAUDE";

/// A dreamer that runs `claude -p`.
#[derive(Debug, Clone)]
pub struct ClaudeDreamer {
    /// The `claude` executable.
    pub claude: PathBuf,
    /// This binary, which serves the dream tools.
    pub notesoup: PathBuf,
    /// The dreamer is stopped after this long and the run fails.
    pub timeout: Duration,
}

impl ClaudeDreamer {
    fn command(&self, request: &DreamRequest<'_>) -> Command {
        let prefix = format!("mcp__{DREAM_SERVER}__");
        let config = json!({"mcpServers": {DREAM_SERVER: {
            "type": "stdio",
            "command": self.notesoup,
            "args": ["dream-tools", "--notes-home", request.home],
            "alwaysLoad": true,
        }}});
        let allowed: Vec<String> = TOOLS.iter().map(|t| format!("{prefix}{t}")).collect();
        let mut cmd = Command::new(&self.claude);
        cmd.args(["-p", request.prompt])
            .args(["--output-format", "stream-json", "--verbose"])
            .args(["--tools", ""])
            .arg("--strict-mcp-config")
            .arg("--mcp-config")
            .arg(config.to_string())
            .arg("--allowedTools")
            .arg(allowed.join(","))
            .arg("--no-session-persistence")
            .current_dir(request.home)
            .env(DISABLE_VAR, "1");
        if let Some(model) = request.model_pattern {
            cmd.args(["--model", model]);
        }
        cmd
    }
}

impl DreamRunner for ClaudeDreamer {
    fn run(&mut self, request: DreamRequest<'_>) -> DreamResult {
        let read = |stdout| read_stream(BufReader::new(stdout), request.on_tool_call);
        let child = match run_dreamer_child(&mut self.command(&request), self.timeout, None, read) {
            Ok(child) => child,
            Err(error) => return DreamResult::failed(error),
        };
        let mut result = child.output;
        let waited = match child.ended {
            Ended::Exited(waited) => waited,
            // The writes made so far go into the report.
            Ended::TimedOut => return DreamResult::timed_out(result.writes, self.timeout),
        };
        let stderr = &child.stderr;
        // Without a result event, how claude ended and what it said is the
        // reason.
        let no_result = result.error.as_deref() == Some(NO_RESULT);
        match waited {
            Ok(status) if !status.success() && (result.error.is_none() || no_result) => {
                result.error = Some(format!(
                    "dreamer failed: claude exited with {status}: {}",
                    stderr.trim()
                ));
            }
            Ok(_) if no_result && !stderr.trim().is_empty() => {
                result.error = Some(format!("{NO_RESULT}: {}", stderr.trim()));
            }
            Err(err) if result.error.is_none() => {
                result.error = Some(format!("dreamer failed: {err}"));
            }
            _ => {}
        }
        result
    }
}

/// The failure of a stream that ended without Claude Code's `result` event.
const NO_RESULT: &str = "dreamer failed: claude ended without a result";

/// Reads Claude Code's `stream-json` output: every dream-tool call that
/// names a path is a write (recorded whether or not it succeeded), and the
/// final `result` event is the report, or the failure. `on_tool_call` is
/// told of each dream-tool call as it is read.
pub fn read_stream(reader: impl BufRead, on_tool_call: &dyn Fn(&str, &Value)) -> DreamResult {
    let prefix = format!("mcp__{DREAM_SERVER}__");
    let mut result = DreamResult::default();
    let mut finished = false;
    for line in reader.lines() {
        let Ok(line) = line else { break };
        let Ok(event) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        match event["type"].as_str() {
            Some("assistant") => {
                for block in event["message"]["content"].as_array().into_iter().flatten() {
                    if block["type"] != "tool_use" {
                        continue;
                    }
                    let Some(tool) = block["name"].as_str().and_then(|n| n.strip_prefix(&prefix))
                    else {
                        continue;
                    };
                    on_tool_call(tool, &block["input"]);
                    result
                        .writes
                        .extend(DreamWrite::from_tool_event(tool, &block["input"]));
                }
            }
            Some("result") => {
                finished = true;
                let text = event["result"].as_str().unwrap_or_default().to_owned();
                if event["is_error"] == true {
                    let reason = if text.is_empty() {
                        event["subtype"].as_str().unwrap_or("error").to_owned()
                    } else {
                        text
                    };
                    result.error = Some(format!("dreamer failed: {reason}"));
                } else {
                    result.report = text;
                }
            }
            _ => {}
        }
    }
    if !finished && result.error.is_none() {
        result.error = Some(NO_RESULT.to_owned());
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use notesoup_core::dream::DreamTool;

    #[test]
    fn the_stream_yields_writes_and_the_report() {
        let stream = [
            r#"{"type":"system","subtype":"init"}"#,
            r#"{"type":"assistant","message":{"content":[{"type":"text","text":"tidying"},{"type":"tool_use","id":"t1","name":"mcp__dream__read","input":{"path":"human/MAP.md"}},{"type":"tool_use","id":"t2","name":"mcp__dream__write","input":{"path":"human/MAP.md","content":"x"}}]}}"#,
            "not json",
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t3","name":"mcp__dream__delete","input":{"path":"human/old.md"}},{"type":"tool_use","id":"t4","name":"mcp__other__write","input":{"path":"x"}}]}}"#,
            r#"{"type":"result","subtype":"success","is_error":false,"result":"Report: one MAP fixed."}"#,
        ]
        .join("\n");
        let result = read_stream(stream.as_bytes(), &|_, _| {});
        assert_eq!(result.report, "Report: one MAP fixed.");
        assert_eq!(result.error, None);
        let writes: Vec<(DreamTool, &str)> = result
            .writes
            .iter()
            .map(|w| (w.tool, w.path.as_str()))
            .collect();
        assert_eq!(
            writes,
            [
                (DreamTool::Write, "human/MAP.md"),
                (DreamTool::Delete, "human/old.md")
            ]
        );
    }

    #[test]
    fn failures_are_reported() {
        let failed = read_stream(r#"{"type":"result","subtype":"error_during_execution","is_error":true,"result":"API Error: 500"}"#.as_bytes(), &|_, _| {});
        assert_eq!(
            failed.error.as_deref(),
            Some("dreamer failed: API Error: 500")
        );
        let cut = read_stream(&b""[..], &|_, _| {});
        assert_eq!(
            cut.error.as_deref(),
            Some("dreamer failed: claude ended without a result")
        );
    }
}
