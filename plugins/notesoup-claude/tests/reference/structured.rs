//! What Claude Code 2.1.332 does with a tool's `outputSchema` and a result's
//! `structuredContent`, against `notesoup mcp` with `NOTESOUP_MCP_STRUCTURED`
//! on (set in the copied plugin's `.mcp.json`) and off (the plugin as
//! shipped). Pinned here because the plugin ships text only for it:
//!
//! - the tool list with output schemas is accepted (`claude mcp list` says
//!   Connected, all nine tools reach the model, each with its input schema
//!   only);
//! - a success's `structuredContent` replaces the text: the model's
//!   `tool_result` is that JSON, compact, and the text block is dropped;
//! - an `isError` result is its text, whatever its structured content;
//! - a tool name Claude Code did not list never reaches the server.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::claude::{PREFIX, command, mcp_tool, run, turn};
use crate::support::{Sandbox, json_rows};
use notesoup_test_support::fake_anthropic::{FakeApi, Reply};
use notesoup_test_support::fake_model::content_text;

/// The copied plugin with `env` added to its MCP server.
fn plugin_with_env(sb: &Sandbox, env: Value) -> PathBuf {
    let plugin = sb.plugin_copy();
    let path = plugin.join(".mcp.json");
    let mut config: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    config["mcpServers"]["notesoup"]["env"] = env;
    std::fs::write(&path, config.to_string()).unwrap();
    plugin
}

/// One headless turn in which the model writes a note, reads it, reads a
/// missing one and calls a tool that does not exist; returns the last
/// request the model was sent and the transcript's rows.
fn calls(sb: &Sandbox, plugin: &Path) -> (Value, Vec<Value>) {
    let api = FakeApi::start();
    let allowed = format!("{},{}", mcp_tool("notes_write"), mcp_tool("notes_read"));
    api.script(vec![
        Reply::tool(
            "toolu_st_write",
            &mcp_tool("notes_write"),
            json!({"address": "checkpoint.md", "content": "# Checkpoint\nNext: tests."}),
        ),
        Reply::tool(
            "toolu_st_read",
            &mcp_tool("notes_read"),
            json!({"address": "checkpoint.md"}),
        ),
        Reply::tool(
            "toolu_st_missing",
            &mcp_tool("notes_read"),
            json!({"address": "missing.md"}),
        ),
        Reply::tool("toolu_st_unknown", &mcp_tool("notes_nope"), json!({})),
        Reply::text("Done."),
    ]);
    let result = turn(sb, &api.url, plugin, "start", &["--allowedTools", &allowed]);
    assert_eq!(result["result"], "Done.", "{result}");
    let mut requests = api.take_requests();
    assert_eq!(requests.len(), 5);
    let first_tools: Vec<Value> = requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["name"].as_str().unwrap_or("").starts_with(PREFIX))
        .cloned()
        .collect();
    let mut names: Vec<String> = first_tools
        .iter()
        .map(|t| {
            t["name"]
                .as_str()
                .unwrap()
                .trim_start_matches(PREFIX)
                .to_owned()
        })
        .collect();
    names.sort_unstable();
    let mut expected: Vec<&str> = notesoup_core::tools::tools_for(false)
        .map(|t| t.name)
        .collect();
    expected.sort_unstable();
    assert_eq!(names, expected, "every tool reaches the model");
    for listed in &first_tools {
        let mut keys: Vec<&str> = listed
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            ["description", "input_schema", "name"],
            "no output schema reaches the model: {listed}"
        );
    }
    let session = result["session_id"].as_str().unwrap();
    (requests.pop().unwrap(), json_rows(&sb.transcript(session)))
}

/// Every `tool_result` block of `request`, by tool-use id.
fn tool_results(request: &Value) -> HashMap<String, Value> {
    let mut found = HashMap::new();
    for message in request["messages"].as_array().unwrap() {
        for block in message["content"].as_array().into_iter().flatten() {
            if block["type"] == "tool_result" {
                found.insert(
                    block["tool_use_id"].as_str().unwrap().to_owned(),
                    block.clone(),
                );
            }
        }
    }
    found
}

/// The text a `tool_result` block hands the model.
fn content(block: &Value) -> String {
    content_text(&block["content"]).unwrap_or_else(|| panic!("no content: {}", block["content"]))
}

/// The transcript row holding the result of `id`.
fn result_row<'r>(rows: &'r [Value], id: &str) -> &'r Value {
    rows.iter()
        .find(|r| r["message"]["content"][0]["tool_use_id"] == id)
        .unwrap_or_else(|| panic!("no result row for {id}"))
}

/// What every run shows the same way: a refusal is its text, flagged; an
/// unlisted tool is refused by Claude Code itself.
fn refusals_are_text(results: &HashMap<String, Value>) {
    let missing = &results["toolu_st_missing"];
    assert_eq!(missing["is_error"], true, "{missing}");
    assert_eq!(content(missing), "error: not_found: note not found");
    let unknown = &results["toolu_st_unknown"];
    assert_eq!(unknown["is_error"], true, "{unknown}");
    assert_eq!(
        content(unknown),
        format!(
            "<tool_use_error>Error: No such tool available: {PREFIX}notes_nope</tool_use_error>"
        )
    );
}

#[test]
fn structured_content_replaces_the_text_the_model_reads() {
    let _terminal = crate::hosts::shared();
    let sb = Sandbox::new();
    let plugin = plugin_with_env(&sb, json!({"NOTESOUP_MCP_STRUCTURED": "1"}));
    let listed = run(&mut command(
        &sb,
        None,
        &["--plugin-dir", plugin.to_str().unwrap(), "mcp", "list"],
    ));
    let listed = String::from_utf8_lossy(&listed.stdout).into_owned();
    assert!(
        listed
            .lines()
            .any(|l| l.starts_with("plugin:notesoup:notesoup:") && l.ends_with("✔ Connected")),
        "{listed}"
    );
    let (request, rows) = calls(&sb, &plugin);
    let results = tool_results(&request);
    let key = notesoup_core::notes::project_key(&sb.project);

    // The success is the structured JSON, compact; its text is not sent.
    let written = &results["toolu_st_write"];
    assert_eq!(written.get("is_error"), None, "{written}");
    let json_text =
        format!(r#"{{"address":"checkpoint.md","project_key":"{key}","outcome":"created"}}"#);
    assert_eq!(content(written), json_text);
    let read = content(&results["toolu_st_read"]);
    let read: Value = serde_json::from_str(&read).unwrap_or_else(|_| panic!("not JSON: {read}"));
    assert_eq!(read["text"], "# Checkpoint\nNext: tests.");
    assert_eq!(read["address"], "checkpoint.md");
    // The transcript keeps the same JSON as the result, and the structured
    // value beside it.
    let row = result_row(&rows, "toolu_st_write");
    assert_eq!(row["toolUseResult"], json_text.as_str(), "{row}");
    assert_eq!(
        row["mcpMeta"]["structuredContent"],
        json!({"address": "checkpoint.md", "project_key": key, "outcome": "created"})
    );
    refusals_are_text(&results);
}

#[test]
fn the_plugin_as_shipped_hands_the_model_the_text() {
    let _terminal = crate::hosts::shared();
    let sb = Sandbox::new();
    let plugin = plugin_with_env(&sb, json!({}));
    let (request, rows) = calls(&sb, &plugin);
    let results = tool_results(&request);
    let key = notesoup_core::notes::project_key(&sb.project);
    assert_eq!(
        content(&results["toolu_st_write"]),
        format!("created checkpoint.md (project {key})")
    );
    assert!(
        content(&results["toolu_st_read"]).starts_with(&format!("checkpoint.md (project {key})\n")),
        "{}",
        content(&results["toolu_st_read"])
    );
    let row = result_row(&rows, "toolu_st_write");
    assert_eq!(row.get("mcpMeta"), None, "{row}");
    refusals_are_text(&results);
}
