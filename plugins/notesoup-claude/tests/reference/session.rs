//! End to end: real Claude Code sessions against the fake Messages API, with
//! the plugin loaded from a copied directory. One chain of headless runs goes
//! through the boot, MCP history calls, the reminder, a Stop close-out,
//! `/compact`, `/clear` and the hand-off into the next window.

use serde_json::{Value, json};

use crate::claude::{BOOT_TEXT, Headless, inline_data_dir, mcp_tool, one_starting};
use crate::support::json_rows;
use notesoup_test_support::fake_anthropic::{Reply, texts};

#[test]
fn a_chain_of_windows_through_compact_and_clear() {
    let _terminal = crate::hosts::shared();
    let claude = Headless::new();
    let (sb, api) = (&claude.sb, &claude.api);
    let history_list = mcp_tool("history_list");
    let history_windows = mcp_tool("history_windows");
    let notes_write = mcp_tool("notes_write");
    let allowed = format!("{history_list},{history_windows},{notes_write}");

    // 1. Startup: the boot, then MCP calls the model makes.
    api.script(vec![
        Reply::tool("toolu_e2e_write", &notes_write, json!({"address": "checkpoint.md", "content": "# Checkpoint: parser rewrite\nNext: tests."})),
        Reply::tool("toolu_e2e_list", &history_list, json!({})),
        Reply::text("Started.").tokens(150_000),
    ]);
    let first = claude.turn("start the work", &["--allowedTools", &allowed]);
    let session = first["session_id"].as_str().unwrap().to_owned();
    let requests = api.take_requests();
    assert_eq!(requests.len(), 3);
    let boot = one_starting(&texts(&requests[0]), BOOT_TEXT);
    assert!(boot.contains(&format!("Current context window id: claude:{session}:1\n")));
    let key = notesoup_core::notes::project_key(&sb.project);
    assert_eq!(
        one_starting(&texts(&requests[1]), "created "),
        format!("created checkpoint.md (project {key})")
    );
    assert!(
        sb.notes
            .join("pi/session")
            .join(&session)
            .join("checkpoint.md")
            .is_file()
    );
    let tools: Vec<&str> = requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        tools.contains(&history_list.as_str()),
        "notesoup tools are loaded up front: {tools:?}"
    );
    // A page opens with a row: `seq N | …` for one event, `seqs A-B | …` for a fold.
    let result = one_starting(&texts(&requests[2]), "seq");
    assert!(
        result.contains(&format!(
            "| window claude:{session}:1 | user\nstart the work"
        )),
        "{result}"
    );
    let rows = json_rows(&sb.transcript(&session));
    assert!(
        rows.iter()
            .any(|r| r["message"]["content"][0]["id"] == "toolu_e2e_list"),
        "the call is in the transcript"
    );

    // 2. The next prompt gets the reminder (150,000 of 200,000 used); the
    //    reply crosses the warning line, so Stop blocks once and the model
    //    closes out; the close-out is recorded.
    api.script(vec![
        Reply::text("Noted.").tokens(160_000),
        Reply::text("Closed out."),
    ]);
    claude.turn("keep going", &["--resume", &session]);
    let requests = api.take_requests();
    assert_eq!(requests.len(), 2, "one block, one continuation");
    assert!(
        one_starting(
            &texts(&requests[0]),
            "UserPromptSubmit hook additional context: <context_window_guidance>\nOnly "
        )
        .contains("Then call /clear")
    );
    assert!(
        texts(&requests[1])
            .iter()
            .any(|t| t.contains("Final warning")),
        "the Stop block reached the model"
    );
    let data = inline_data_dir(sb);
    let state: Value = serde_json::from_slice(
        &std::fs::read(data.join(format!("sessions/{session}.json"))).unwrap(),
    )
    .unwrap();
    assert_eq!(
        state["window"],
        json!({"bootInjected": true, "reminderShown": true, "warningShown": true, "closeOutDone": true})
    );
    let hook_outputs: Vec<String> = json_rows(&sb.transcript(&session))
        .iter()
        .filter(|r| {
            r["attachment"]["type"] == "hook_success" && r["attachment"]["hookName"] == "Stop"
        })
        .filter_map(|r| r["attachment"]["stdout"].as_str().map(str::to_owned))
        .collect();
    assert!(
        hook_outputs.iter().any(|s| s.contains("close-out done")),
        "{hook_outputs:?}"
    );

    // 3. /compact: the fresh window gets a fresh boot.
    api.script(vec![Reply::text("SUMMARY: started the work, closed out.")]);
    claude.turn("/compact", &["--resume", &session]);
    api.take_requests();
    api.script(vec![Reply::text("Back.")]);
    claude.turn("after compact", &["--resume", &session]);
    let requests = api.take_requests();
    let boots: Vec<String> = texts(&requests[0])
        .into_iter()
        .filter(|t| t.contains("hook additional context: <context_window>"))
        .collect();
    assert_eq!(boots.len(), 1, "{boots:#?}");
    assert!(boots[0].contains(&format!("Current context window id: claude:{session}:2\nPrevious context window id: claude:{session}:1\n")));

    // 4. /clear: the hand-off carries the chain into a new session.
    let cleared = claude.turn("/clear", &["--resume", &session]);
    let next = cleared["session_id"].as_str().unwrap().to_owned();
    assert_ne!(next, session);
    api.take_requests();
    api.script(vec![
        Reply::tool("toolu_e2e_windows", &history_windows, json!({})),
        Reply::text("I see three windows."),
    ]);
    claude.turn(
        "where are we",
        &["--resume", &next, "--allowedTools", &allowed],
    );
    let requests = api.take_requests();
    let boot = one_starting(&texts(&requests[0]), BOOT_TEXT);
    assert!(boot.contains(&format!(
        "First context window id: claude:{session}:1\nCurrent context window id: claude:{next}:3\nPrevious context window id: claude:{session}:2\n"
    )), "{boot}");
    assert!(boot.contains("You wake up blank, puffy-eyed, and clearly robbed."));
    assert!(
        boot.contains("Checkpoint: parser rewrite — checkpoint.md · "),
        "the session note survives /clear: {boot}"
    );
    let windows = one_starting(&texts(&requests[1]), "session ");
    let lines: Vec<&str> = windows.lines().collect();
    assert_eq!(lines[0], format!("session {session}"));
    assert!(
        lines[1].starts_with(&format!("window claude:{session}:1 | seqs 1-")),
        "{windows}"
    );
    assert!(
        lines[2].starts_with(&format!("window claude:{session}:2 | seqs ")),
        "{windows}"
    );
    assert!(
        lines[3].starts_with(&format!("window claude:{next}:3 | seqs ")),
        "{windows}"
    );
}

/// The real Claude Code runs the server with the environment its hooks
/// get, so the boot the server makes ready after a write is the one the
/// next hook reads: while the model still thinks (the fake holds its next
/// turn), the server lists the written home and keeps its shelf in the
/// hooks' caches, and the next session's boot is served from it.
#[test]
fn the_server_makes_the_next_boot_ready_while_the_session_runs() {
    let _terminal = crate::hosts::shared();
    let claude = Headless::new();
    let (sb, api) = (&claude.sb, &claude.api);
    let notes_write = mcp_tool("notes_write");
    api.script(vec![
        Reply::tool(
            "toolu_e2e_ready",
            &notes_write,
            json!({"address": "@project/decisions.md", "content": "# Decisions\nUse tabs."}),
        ),
        Reply::text("Written."),
    ]);
    // The turn that carries the tool's result waits until released.
    api.pause_after(1);
    let kept = std::thread::scope(|scope| {
        let turn = scope.spawn(|| claude.turn("note it", &["--allowedTools", &notes_write]));
        let kept = sb.shelves_listing("decisions.md", std::time::Duration::from_secs(60));
        let Some(kept) = kept else {
            api.release();
            panic!("no shelf lists decisions.md while the session runs");
        };
        assert!(
            api.pausing(),
            "the shelf was kept before the model answered"
        );
        api.release();
        turn.join().unwrap();
        kept
    });
    api.take_requests();
    api.script(vec![Reply::text("Hello.")]);
    claude.turn("hello", &[]);
    let requests = api.take_requests();
    let boot = one_starting(&texts(&requests[0]), BOOT_TEXT);
    assert!(boot.contains("decisions.md"), "{boot}");
    // Served from the kept shelf, nothing listed.
    sb.assert_shelves_as_kept(&kept);
}
