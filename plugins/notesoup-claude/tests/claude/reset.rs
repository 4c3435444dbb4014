//! `notesoup mod <op>`: the reset mod's requests against the built binary,
//! sharing the session records with the hooks.

use serde_json::{Value, json};

use crate::support::{Sandbox, context_of, notesoup_bin, reply_row};

const S1: &str = "11111111-1111-4111-8111-111111111111";

/// The request the mod sends: its own data directory, which the binary maps
/// to the notesoup plugin's sibling one.
fn request(sb: &Sandbox) -> Value {
    let mod_data = sb.data.with_file_name("notesoup-reset-test");
    json!({
        "sessionId": S1,
        "cwd": sb.project,
        "transcriptPath": sb.transcript(S1),
        "pluginData": mod_data,
    })
}

/// Runs `notesoup mod <op>` as `$.process.run` does (no plugin or hook
/// variables set: the project is the request's `cwd`): exit 0 and exactly
/// one JSON line.
fn op(sb: &Sandbox, op: &str, request: &Value) -> Value {
    let output = sb
        .command(&notesoup_bin(), &["mod", op])
        .env_remove("CLAUDE_PLUGIN_DATA")
        .env_remove("CLAUDE_PROJECT_DIR")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write as _;
            child
                .stdin
                .take()
                .unwrap()
                .write_all(request.to_string().as_bytes())?;
            child.wait_with_output()
        })
        .unwrap();
    assert!(output.status.success(), "mod {op} exited {}", output.status);
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        stdout.ends_with('\n') && stdout.lines().count() == 1,
        "{stdout}"
    );
    serde_json::from_str(&stdout).unwrap()
}

fn result(sb: &Sandbox, name: &str) -> Value {
    let answer = op(sb, name, &request(sb));
    assert_eq!(answer["ok"], true, "{answer}");
    answer["result"].clone()
}

fn start(sb: &Sandbox, source: &str) -> Option<Value> {
    sb.hook(
        "session-start",
        &sb.payload(&format!("SessionStart-{source}"), S1),
    )
}

fn stop(sb: &Sandbox) -> Option<Value> {
    sb.hook("stop", &sb.payload("Stop", S1))
}

/// A started session whose last reply used `tokens`, with the window the
/// mod's `boot` opened (window 2).
fn booted_by_the_mod(tokens: u64) -> Sandbox {
    let sb = Sandbox::new();
    start(&sb, "startup").unwrap();
    sb.append_transcript(S1, &[reply_row("a1", tokens)]);
    result(&sb, "boot");
    sb
}

/// UserPromptSubmit with an ordinary prompt.
fn prompt(sb: &Sandbox) -> Option<Value> {
    sb.hook("user-prompt-submit", &sb.payload("UserPromptSubmit", S1))
}

const INSTRUCTIONS: &str = "notesoup: reset to a fresh notes-only context window.";

#[test]
fn decide_resets_once_the_close_out_is_done() {
    let sb = Sandbox::new();
    start(&sb, "startup").unwrap();
    let wait = json!({"reset": false, "instructions": INSTRUCTIONS});
    assert_eq!(result(&sb, "decide"), wait);
    // Past the warning line: the Stop block, then the close-out.
    sb.append_transcript(S1, &[reply_row("a1", 160_000)]);
    assert_eq!(stop(&sb).unwrap()["decision"], "block");
    assert_eq!(result(&sb, "decide"), wait, "the close-out is not done yet");
    stop(&sb).unwrap();
    assert_eq!(
        result(&sb, "decide"),
        json!({"reset": true, "origin": "normal", "instructions": INSTRUCTIONS})
    );
}

#[test]
fn decide_forces_a_reset_at_the_hard_reserve() {
    let sb = Sandbox::new();
    start(&sb, "startup").unwrap();
    // 200k window, reserve 30,000: 20,000 left is below it.
    sb.append_transcript(S1, &[reply_row("a1", 180_000)]);
    assert_eq!(result(&sb, "decide")["origin"], "forced");
}

/// The next compaction of the user's boots window 3 as usual.
#[track_caller]
fn assert_compact_boots_window_3(sb: &Sandbox) {
    let next = context_of(&start(sb, "compact").unwrap(), "SessionStart");
    assert!(next.contains(&format!("Current context window id: claude:{S1}:3")));
}

#[test]
fn the_mods_boot_opens_the_next_window_and_compact_adds_no_second_one() {
    let sb = Sandbox::new();
    start(&sb, "startup").unwrap();
    sb.append_transcript(S1, &[reply_row("a1", 180_000)]);
    let boot = result(&sb, "boot");
    assert_eq!(boot["window"], format!("claude:{S1}:2"));
    let text = boot["text"].as_str().unwrap();
    assert!(text.starts_with("<context_window>\nAgent name: claude (brain: claude)\n"));
    assert!(text.contains(&format!("Current context window id: claude:{S1}:2")));
    assert!(text.contains(&format!("Previous context window id: claude:{S1}:1")));
    assert!(text.ends_with("It's your mess now."), "{text}");
    assert_eq!(
        result(&sb, "decide")["reset"],
        false,
        "a reset is in flight"
    );

    // The compaction's own SessionStart: the boot is already there.
    assert_eq!(start(&sb, "compact"), None);
    let committed = result(&sb, "committed");
    assert_eq!(
        committed,
        json!({"window": format!("claude:{S1}:2"), "message": "notesoup: memory cleared · window 2"})
    );
    assert!(sb.session_record(S1).get("resetFrom").is_none());
    assert_eq!(sb.session_record(S1)["window"]["bootInjected"], true);

    // Claude Code may write the compaction to the transcript late: until the
    // window's first prompt, the old window's usage decides nothing.
    assert_eq!(result(&sb, "decide")["reset"], false);
    prompt(&sb);
    assert_eq!(
        result(&sb, "decide")["origin"],
        "forced",
        "the transcript still ends at 180,000"
    );

    // A later compaction of the user's boots window 3 as usual.
    assert_compact_boots_window_3(&sb);
}

#[test]
fn without_a_compact_session_start_the_next_prompt_settles_the_mods_boot() {
    let sb = booted_by_the_mod(180_000);
    result(&sb, "committed");
    assert_eq!(sb.session_record(S1)["window"]["bootByMod"], true);
    // No SessionStart(compact) came; the next prompt ends the mod's turn.
    prompt(&sb);
    assert!(sb.session_record(S1)["window"].get("bootByMod").is_none());
    assert!(sb.session_record(S1)["window"].get("openedByMod").is_none());
    assert_compact_boots_window_3(&sb);
}

#[test]
fn after_the_compact_session_start_the_next_prompt_forgets_the_mods_window() {
    let sb = booted_by_the_mod(1_000);
    assert_eq!(start(&sb, "compact"), None);
    result(&sb, "committed");
    let window = &sb.session_record(S1)["window"];
    assert!(
        window.get("bootByMod").is_none(),
        "the compaction's boot was placed"
    );
    assert_eq!(window["openedByMod"], true);
    // Far from every budget line: the prompt has nothing to say, and still
    // records that the mod's turn is over.
    assert_eq!(prompt(&sb), None);
    assert!(sb.session_record(S1)["window"].get("openedByMod").is_none());
}

#[test]
fn a_stop_settles_the_mods_boot_too() {
    let sb = Sandbox::new();
    start(&sb, "startup").unwrap();
    result(&sb, "boot");
    assert_eq!(stop(&sb), None);
    assert!(sb.session_record(S1)["window"].get("bootByMod").is_none());
}

#[test]
fn a_failed_reset_gives_the_window_back() {
    let sb = Sandbox::new();
    start(&sb, "startup").unwrap();
    sb.append_transcript(S1, &[reply_row("a1", 160_000)]);
    stop(&sb).unwrap();
    stop(&sb).unwrap();
    let before = sb.session_record(S1);
    result(&sb, "boot");
    assert_eq!(sb.session_record(S1)["windowOrdinal"], 2);
    let mut req = request(&sb);
    req["reason"] = "a hook vetoed the compaction".into();
    let failed = op(&sb, "failed", &req);
    assert_eq!(
        failed,
        json!({"ok": true, "result": {
            "window": format!("claude:{S1}:1"),
            "message": "notesoup: reset failed; keeping the current window: a hook vetoed the compaction",
        }})
    );
    assert_eq!(sb.session_record(S1), before);
    assert_eq!(
        result(&sb, "decide")["reset"],
        true,
        "the reset may be tried again"
    );
}

#[test]
fn a_boot_that_cannot_be_built_vetoes_the_reset() {
    let mut sb = Sandbox::new();
    start(&sb, "startup").unwrap();
    let before = sb.session_record(S1);
    sb.set_env("PI_NOTES_HOME", "");
    sb.set_env("HOME", "");
    assert_eq!(
        op(&sb, "boot", &request(&sb)),
        json!({"ok": false, "error": "the notes root is unknown: set PI_NOTES_HOME or HOME"})
    );
    assert_eq!(sb.session_record(S1), before);
}

#[test]
fn bad_requests_are_refused_in_one_line() {
    let sb = Sandbox::new();
    let answer = op(&sb, "decide", &json!("not an object"));
    assert_eq!(answer["ok"], false);
    assert!(
        answer["error"]
            .as_str()
            .unwrap()
            .starts_with("unreadable mod request: ")
    );
    let answer = op(&sb, "decide", &json!({"cwd": sb.project}));
    assert_eq!(
        answer,
        json!({"ok": false, "error": "no session_id: the request needs sessionId, the session's id ($.session.id()); it was missing or empty"})
    );
}

#[test]
fn fresh_window_resets_through_the_mod_with_its_prompt() {
    let sb = Sandbox::new();
    start(&sb, "startup").unwrap();
    let mut payload = sb.payload("UserPromptSubmit", S1);
    payload["prompt"] = "/fresh-window next: the parser".into();
    assert_eq!(sb.hook("user-prompt-submit", &payload), None);
    stop(&sb).unwrap();
    assert_eq!(
        result(&sb, "decide"),
        json!({"reset": true, "origin": "normal", "instructions": INSTRUCTIONS})
    );
    let boot = result(&sb, "boot");
    let text = boot["text"].as_str().unwrap();
    assert!(
        text.ends_with(
            "\n\nThe human asked for this window (with /fresh-window):\nnext: the parser"
        ),
        "{text}"
    );
    // A vetoed reset keeps the prompt for the next try; a committed one
    // has placed it.
    result(&sb, "failed");
    assert_eq!(
        sb.session_record(S1)["nextWindowPrompt"],
        "next: the parser"
    );
    result(&sb, "boot");
    result(&sb, "committed");
    assert!(sb.session_record(S1).get("nextWindowPrompt").is_none());
}
