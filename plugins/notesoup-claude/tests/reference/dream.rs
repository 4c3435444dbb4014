//! `notesoup dream` with the real Claude Code as the dreamer, against the
//! fake Messages API: the playbook is the prompt, the dream tools are the
//! only tools, writes are recorded, and the run is audited with Git.

use std::process::Command;

use notesoup_test_support::child::assert_succeeded;
use serde_json::json;

use crate::claude::run;
use crate::hosts::claude;
use crate::support::{Sandbox, notesoup_bin};
use notesoup_test_support::fake_anthropic::{FakeApi, Reply, texts};

#[test]
fn a_dream_runs_claude_with_only_the_jailed_tools() {
    let _terminal = crate::hosts::shared();
    let sb = Sandbox::new();
    let api = FakeApi::start();
    api.script(vec![
        Reply::tool(
            "toolu_dream_write",
            "mcp__dream__write",
            json!({"path": "human/MAP.md", "content": "- `@human/prefs.md` — short answers\n"}),
        ),
        Reply::text("Report: wrote the human MAP."),
    ]);
    let home = sb.notes.to_str().unwrap();
    let mut cmd = sb.command(&notesoup_bin(), &["dream", "--notes-home", home, "--force"]);
    cmd.env("NOTESOUP_CLAUDE", claude())
        .env("ANTHROPIC_API_KEY", "sk-notesoup-test")
        .env("ANTHROPIC_BASE_URL", &api.url)
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_AUTOUPDATER", "1");
    let output = run(&mut cmd);
    assert_succeeded(&output, "notesoup dream");
    let stdout = String::from_utf8_lossy(&output.stdout);

    let requests = api.take_requests();
    assert_eq!(requests.len(), 2);
    // No built-in tool: only the dream tools (and Claude Code's own
    // placeholder for deferred tools, of which there are none).
    let tools: Vec<&str> = requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .filter(|name| *name != "DeferredToolPlaceholder")
        .collect();
    assert_eq!(
        tools,
        [
            "mcp__dream__delete",
            "mcp__dream__edit",
            "mcp__dream__find",
            "mcp__dream__grep",
            "mcp__dream__ls",
            "mcp__dream__read",
            "mcp__dream__write"
        ]
    );
    assert!(
        texts(&requests[0])
            .iter()
            .any(|t| t.starts_with("# Dream playbook")),
        "the playbook is the prompt"
    );

    assert_eq!(
        std::fs::read_to_string(sb.notes.join("human/MAP.md")).unwrap(),
        "- `@human/prefs.md` — short answers\n"
    );
    let report_path = stdout.lines().last().unwrap();
    let report = std::fs::read_to_string(report_path).unwrap();
    assert!(
        report.contains("Report: wrote the human MAP.\n\n- write: human/MAP.md"),
        "{report}"
    );
    let log = Command::new("git")
        .args(["log", "--format=%s"])
        .current_dir(&sb.notes)
        .output()
        .unwrap();
    let subjects = String::from_utf8(log.stdout).unwrap();
    let subjects: Vec<&str> = subjects.lines().collect();
    assert_eq!(subjects.len(), 2, "{subjects:?}");
    assert!(
        subjects[0].starts_with("dream ") && subjects[1].starts_with("baseline "),
        "{subjects:?}"
    );
}
