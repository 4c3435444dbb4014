//! MCP conformance with an independent client: the Python MCP SDK 2.3.0
//! lists the tools and calls each one (success and refusal) over both the
//! `initialize` handshake and the `server/discover` probe.

use std::io::Write;
use std::process::Stdio;

use notesoup_test_support::child::assert_succeeded;
use serde_json::{Value, json};

use crate::claude::parser_session;
use crate::hosts::mcp_python;
use crate::support::{Sandbox, notesoup_bin, spawn};

const S1: &str = "66666666-6666-4666-8666-666666666666";

fn run_client(sb: &Sandbox, plan: &Value) -> Value {
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference/mcp_client.py");
    let mut child = spawn(
        sb.command(
            &mcp_python(),
            &[script.to_str().unwrap(), notesoup_bin().to_str().unwrap()],
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped()),
    );
    child
        .stdin
        .take()
        .unwrap()
        .write_all(plan.to_string().as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert_succeeded(&output, "python client");
    serde_json::from_slice(&output.stdout).unwrap()
}

/// Every tool, success and refusal.
fn plan() -> Value {
    json!([
        {"name": "notes_write", "arguments": {"address": "checkpoint.md", "content": "# Goal\nfix the parser"}},
        {"name": "notes_write", "arguments": {"address": "@nowhere/x.md", "content": "x"}},
        {"name": "notes_update", "arguments": {"address": "checkpoint.md", "edits": [{"oldText": "fix", "newText": "fixed"}]}},
        {"name": "notes_update", "arguments": {"address": "checkpoint.md", "edits": [{"oldText": "absent", "newText": "x"}]}},
        {"name": "notes_read", "arguments": {"address": "checkpoint.md"}},
        {"name": "notes_read", "arguments": {"address": "missing.md"}},
        {"name": "notes_list", "arguments": {}},
        {"name": "notes_list", "arguments": {"limit": 0}},
        {"name": "notes_search", "arguments": {"query": "PARSER"}},
        {"name": "notes_search", "arguments": {"query": ""}},
        {"name": "history_windows", "arguments": {}},
        {"name": "history_list", "arguments": {}},
        {"name": "history_search", "arguments": {"query": "PARSER"}},
        {"name": "history_read", "arguments": {"seq": 2}},
        {"name": "history_read", "arguments": {"seq": 99}},
        {"name": "history_list", "arguments": {"bogus": 1}},
        {"name": "history_search", "arguments": {"query": []}},
    ])
}

/// For each call of [`plan`]: refused or not, and how its text starts.
fn expected(sb: &Sandbox) -> Vec<(bool, String)> {
    let key = notesoup_core::notes::project_key(&sb.project);
    vec![
        answer(format!("created checkpoint.md (project {key})")),
        refusal("error: invalid_address: invalid note address"),
        answer(format!("updated checkpoint.md (project {key}): 1 edit")),
        refusal("error: no_match: "),
        answer(format!(
            "checkpoint.md (project {key})\norigin self | created "
        )),
        refusal("error: not_found: note not found"),
        answer(format!(
            "1 note\n- checkpoint.md (project {key}) | updated "
        )),
        refusal("error: invalid_arguments: limit must be at least 1"),
        answer(format!(
            "1 file\n- checkpoint.md (project {key}) | updated "
        )),
        refusal("error: invalid_query: "),
        answer(format!(
            "session {S1}\nwindow claude:{S1}:1 | seqs 1-3 | 3 events"
        )),
        answer("seq 1 | folded 1 event"),
        answer(format!("seq 2 | window claude:{S1}:1 | user")),
        answer(format!("seq 2 | window claude:{S1}:1 | user")),
        refusal("error: unknown_seq: unknown seq 99: this session's items run 1..3"),
        refusal("error: invalid_arguments: invalid arguments: unknown field `bogus`"),
        refusal("error: invalid_query: "),
    ]
}

/// A call of [`plan`] that answers with `text`.
fn answer(text: impl Into<String>) -> (bool, String) {
    (false, text.into())
}

/// A call of [`plan`] refused with `text`.
fn refusal(text: &str) -> (bool, String) {
    (true, text.to_owned())
}

/// The client's calls, each checked against [`expected`] (refused or not,
/// text only, how the text starts), with whether it was refused.
fn checked_calls<'a>(report: &'a Value, sb: &Sandbox) -> Vec<(&'a Value, bool)> {
    let calls = report["calls"].as_array().unwrap();
    let expect = expected(sb);
    assert_eq!(calls.len(), expect.len());
    calls
        .iter()
        .zip(expect)
        .map(|(call, (is_error, prefix))| {
            assert_eq!(call["is_error"], is_error, "{call}");
            assert_eq!(call["content_types"], json!(["text"]), "{call}");
            assert!(
                call["text"].as_str().unwrap().starts_with(&prefix),
                "{call}\nexpected prefix {prefix:?}"
            );
            (call, is_error)
        })
        .collect()
}

#[test]
fn the_python_sdk_lists_and_calls_every_tool() {
    let _terminal = crate::hosts::shared();
    let sb = Sandbox::new();
    parser_session(&sb, S1);
    let report = run_client(&sb, &plan());

    assert_eq!(report["initialize"]["protocol_version"], "2025-11-25");
    assert_eq!(report["initialize"]["server"], "notesoup");
    assert_eq!(report["initialize"]["tools_capability"], true);
    let tools = report["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    for tool in tools {
        assert_eq!(
            tool["input_schema"]["additionalProperties"], false,
            "{tool}"
        );
        assert_eq!(tool["output_schema"], Value::Null, "{tool}");
        assert!(!tool["description"].as_str().unwrap().is_empty());
    }
    assert_eq!(report["discover"]["supported_versions"][0], "2026-07-28");
    assert_eq!(report["discover"]["tools"], json!(names));

    for (call, _) in checked_calls(&report, &sb) {
        assert_eq!(call["structured"], Value::Null, "{call}");
    }
}

/// With `NOTESOUP_MCP_STRUCTURED=1` every tool lists core's output schema
/// and every success carries core's compact JSON as `structuredContent`,
/// which the SDK validates against that schema (a mismatch fails the
/// client); the text is unchanged, and refusals stay text only.
#[test]
fn the_python_sdk_validates_every_structured_result() {
    let _terminal = crate::hosts::shared();
    let mut sb = Sandbox::new();
    sb.set_env("NOTESOUP_MCP_STRUCTURED", "1");
    parser_session(&sb, S1);
    let report = run_client(&sb, &plan());

    let tools = report["tools"].as_array().unwrap();
    let specs: Vec<_> = notesoup_core::tools::tools_for(false).collect();
    assert_eq!(tools.len(), specs.len());
    for (tool, spec) in tools.iter().zip(&specs) {
        assert_eq!(tool["name"], spec.name);
        assert_eq!(
            Some(&tool["output_schema"]),
            spec.output_schema.as_ref(),
            "{tool}"
        );
    }
    let calls = checked_calls(&report, &sb);
    for &(call, is_error) in &calls {
        if is_error {
            assert_eq!(call["structured"], Value::Null, "{call}");
        } else {
            assert!(call["structured"].is_object(), "{call}");
        }
    }
    let key = notesoup_core::notes::project_key(&sb.project);
    assert_eq!(
        calls[0].0["structured"],
        json!({"address": "checkpoint.md", "project_key": key, "outcome": "created"})
    );
    assert_eq!(calls[4].0["structured"]["text"], "# Goal\nfixed the parser");
}
