//! Records a session for the fuller-history fixture: a Bash call with an
//! output too large for Claude Code to keep inline, and an Agent call whose
//! sub-agent calls Bash itself. Checks the decoder on it; with
//! `NOTESOUP_RECORD_DIR` set, copies the transcript and the sub-agent's
//! files there (as tests/claude/fixtures/subagent/ holds them).

use notesoup_claude::transcript::decode::{ChainFile, decode_chain};
use notesoup_core::history::History;
use serde_json::json;

use crate::claude::Headless;
use notesoup_test_support::fake_anthropic::Reply;

#[test]
fn persisted_outputs_and_sub_agent_calls_decode() {
    let _terminal = crate::hosts::shared();
    let claude = Headless::new();
    let (sb, api) = (&claude.sb, &claude.api);
    api.script(vec![
        Reply::tool(
            "toolu_big",
            "Bash",
            json!({"command": "seq 1 300000", "description": "many lines"}),
        ),
        Reply::tool(
            "toolu_task",
            "Agent",
            json!({"description": "look", "prompt": "list files", "subagent_type": "general-purpose"}),
        ),
        Reply::tool(
            "toolu_sub_bash",
            "Bash",
            json!({"command": "echo sub", "description": "sub echo"}),
        ),
        Reply::text("sub done"),
        Reply::text("all done"),
    ]);
    let result = claude.turn("go", &["--allowedTools", "Bash,Agent"]);
    let session = result["session_id"].as_str().unwrap().to_owned();
    let transcript = sb.transcript(&session);
    if let Some(dir) = std::env::var_os("NOTESOUP_RECORD_DIR") {
        let dir = std::path::PathBuf::from(dir);
        let subagents = dir.join(&session).join("subagents");
        std::fs::create_dir_all(&subagents).unwrap();
        std::fs::copy(&transcript, dir.join(format!("{session}.jsonl"))).unwrap();
        for entry in std::fs::read_dir(transcript.with_extension("").join("subagents")).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), subagents.join(entry.file_name())).unwrap();
        }
    }
    let sub_dir = transcript.with_extension("").join("subagents");
    let files = [ChainFile {
        session_id: session.clone(),
        path: transcript,
    }];
    let history = History::new(decode_chain(&session, &files).unwrap()).unwrap();
    let tools: Vec<_> = history
        .events()
        .iter()
        .filter_map(|event| event.tool.as_ref())
        .collect();
    assert_eq!(tools[0].name, "Bash");
    assert!(tools[0].output_truncated && tools[0].full_output_path.is_some());
    // The sub-agent runs in the background, beside the main loop, so which
    // of them takes which scripted reply varies: its recorded calls, however
    // many, are what the Agent call's event must carry.
    let agent = tools
        .iter()
        .find(|t| t.name == "Agent")
        .expect("the Agent call");
    let nested = agent.nested_calls.as_ref().expect("the sub-agent's calls");
    let mut recorded = 0;
    let mut finished = false;
    for entry in std::fs::read_dir(&sub_dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        if path.to_string_lossy().ends_with(".meta.json") {
            finished =
                serde_json::from_str::<serde_json::Value>(&text).unwrap()["finished"] == true;
        } else {
            recorded += text.matches("\"type\":\"tool_use\"").count();
        }
    }
    assert_eq!(
        (nested.call_count as usize, nested.complete),
        (recorded, finished)
    );
}
