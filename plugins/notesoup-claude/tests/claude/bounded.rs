//! Bounds on what Claude Code, a cloned repository or a stray file can make
//! `notesoup` hold or wait for: the built binary over real pipes, with a
//! bound on every wait so that a hang fails the test instead of stalling it
//! (the bound is no timing assertion).

use std::io::Write;
use std::process::ExitStatus;
use std::time::Duration;

use notesoup_test_support::child::{self, HUGE_LINE_BYTES, LINE_CAP_BYTES, Proc};
use notesoup_test_support::not_a_file::{self, NOT_FILES, NotAFile};
use serde_json::{Value, json};

use crate::support::{Sandbox, context_of, mcp_call_row, notesoup_bin, user_row};

const S1: &str = "88888888-8888-4888-8888-888888888888";

fn mcp(sb: &Sandbox) -> Proc {
    Proc::spawn(&mut sb.command(&notesoup_bin(), &["mcp"]))
}

fn ping(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "ping"})
}

#[test]
fn a_request_line_past_the_cap_is_refused_in_bounded_memory_and_serving_goes_on() {
    let sb = Sandbox::new();
    let mut server = mcp(&sb);
    let refused = server.answer_to_a_huge_line(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"notes_write","arguments":{"content":""#,
        r#""}}}"#,
    );
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert_eq!(
        refused["error"]["data"],
        json!({"limitBytes": LINE_CAP_BYTES, "lineBytes": HUGE_LINE_BYTES})
    );
    server.send(&ping(2));
    assert_eq!(
        server.next(),
        json!({"jsonrpc": "2.0", "id": 2, "result": {}})
    );
    assert!(server.finish().0.success());
}

/// A transcript row past the cap (a Read of a huge file, or garbage) is
/// skipped as a bad line while history streams past it: the server's
/// memory stays far below the row, and the rows around it are served.
#[test]
fn a_transcript_line_past_the_cap_is_skipped_in_bounded_memory() {
    let sb = Sandbox::new();
    sb.start_session(S1, &[user_row("u1", "h1", "before the long line")]);
    let transcript = sb.transcript(S1);
    {
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&transcript)
            .unwrap();
        let piece = vec![b'x'; 1 << 20];
        for _ in 0..(HUGE_LINE_BYTES >> 20) {
            file.write_all(&piece).unwrap();
        }
        file.write_all(b"\n").unwrap();
    }
    sb.append_transcript(
        S1,
        &[
            user_row("u2", "u1", "after the long line"),
            mcp_call_row("a1", Some("u2"), "toolu_long", "history_list"),
        ],
    );
    let mut server = mcp(&sb);
    server.send(&json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "history_search", "arguments": {"query": "the long line"},
                   "_meta": {"claudecode/toolUseId": "toolu_long"}}
    }));
    let found = server.next();
    let text = found["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    // Both prompts, each the match of its own seq.
    assert!(text.starts_with("seq 2 | "), "{text}");
    assert!(text.contains("\n\nseq 3 | "), "{text}");
    assert_eq!(text.matches("the long line").count(), 2, "{text}");
    server.assert_peak_rss_bounded();
    assert!(server.finish().0.success());
}

#[test]
fn a_hook_input_past_the_cap_is_not_read() {
    let sb = Sandbox::new();
    let hook = Proc::spawn(&mut sb.command(&notesoup_bin(), &["hook", "session-start"]));
    // The hook stops reading at the cap and ends: the rest meets a closed pipe.
    let (output, status) = hook.answer_to_a_huge_input();
    assert_eq!(
        output,
        json!({"systemMessage": format!("notesoup: the hook input is over {LINE_CAP_BYTES} bytes; it was not read")})
    );
    assert!(status.success());
}

/// The lines of a hook's `systemMessage` that contain `needle`.
fn notices_with(output: &Value, needle: &str) -> Vec<String> {
    output["systemMessage"]
        .as_str()
        .unwrap_or_default()
        .lines()
        .filter(|line| line.contains(needle))
        .map(str::to_owned)
        .collect()
}

/// Runs `notesoup <args>` with `stdin`, failing the test if it hangs.
fn run_within(sb: &Sandbox, args: &[&str], stdin: &[u8]) -> (ExitStatus, String, String) {
    child::run_within(&mut sb.command(&notesoup_bin(), args), stdin)
}

/// Runs `notesoup hook session-start` on `payload`, failing the test if it
/// hangs.
fn session_start(sb: &Sandbox, payload: &Value) -> (ExitStatus, String, String) {
    run_within(
        sb,
        &["hook", "session-start"],
        payload.to_string().as_bytes(),
    )
}

#[test]
fn settings_that_are_not_files_give_the_defaults_and_one_warning() {
    for kind in NOT_FILES {
        for user in [true, false] {
            let sb = Sandbox::new();
            let file = if user {
                sb.home.join(".claude/notesoup.json")
            } else {
                sb.project.join(".claude/notesoup.json")
            };
            not_a_file::place(kind, &file);
            // A note write completes, with the defaults and one warning.
            let (status, stdout, stderr) =
                run_within(&sb, &["notes", "write", "@human/a.md", "plain\n"], b"");
            assert!(status.success(), "{kind:?}: {stderr}");
            assert_eq!(stdout, "created @human/a.md\n");
            not_a_file::assert_one_warning(
                &stderr.lines().collect::<Vec<_>>(),
                &format!("notesoup: could not read {}: ", file.display()),
                "; using the defaults.",
                &format!("{kind:?} {user}: {stderr}"),
            );
            // So does the boot.
            let payload = sb.payload("SessionStart-startup", S1);
            let (status, stdout, _) = session_start(&sb, &payload);
            assert!(status.success());
            let output: Value = serde_json::from_str(&stdout).unwrap();
            assert!(output["hookSpecificOutput"]["additionalContext"].is_string());
            assert_eq!(notices_with(&output, "notesoup.json").len(), 1, "{output}");
        }
    }
}

#[test]
fn a_session_record_that_is_not_a_file_is_rebuilt_with_one_warning() {
    for kind in NOT_FILES {
        let sb = Sandbox::new();
        let record = sb.data.join(format!("sessions/{S1}.json"));
        not_a_file::place(kind, &record);
        let payload = sb.payload("SessionStart-startup", S1);
        let (status, stdout, stderr) = session_start(&sb, &payload);
        assert!(status.success(), "{kind:?}: {stderr}");
        let output: Value = serde_json::from_str(&stdout).unwrap();
        assert!(
            output["hookSpecificOutput"]["additionalContext"].is_string(),
            "{output}"
        );
        let rebuilt = notices_with(&output, "is rebuilt");
        assert_eq!(rebuilt.len(), 1, "{kind:?}: {output}");
        assert!(
            rebuilt[0].starts_with(&format!("notesoup: {}", record.display())),
            "{}",
            rebuilt[0]
        );
        match kind {
            // A directory stays (nothing of it is removed); saving says so.
            NotAFile::Directory => assert!(record.is_dir()),
            _ => assert!(
                std::fs::symlink_metadata(&record).unwrap().is_file(),
                "{kind:?}: the record is written again"
            ),
        }
    }
}

#[test]
fn a_hand_off_that_is_not_a_file_starts_a_new_chain_with_one_warning() {
    for kind in [NotAFile::DevZero, NotAFile::Fifo, NotAFile::Oversized] {
        let sb = Sandbox::new();
        let key = notesoup_core::notes::project_key(&sb.project);
        let projects = sb.data.join("projects");
        // The directory name is the key with unsafe characters made `-`.
        let safe: String = key
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                    c
                } else {
                    '-'
                }
            })
            .collect();
        let marker = projects.join(safe).join("handoff.json");
        not_a_file::place(kind, &marker);
        let payload = sb.payload("SessionStart-clear", S1);
        let (status, stdout, stderr) = session_start(&sb, &payload);
        assert!(status.success(), "{kind:?}: {stderr}");
        let output: Value = serde_json::from_str(&stdout).unwrap();
        let warned = notices_with(&output, "a new chain starts");
        assert_eq!(warned.len(), 1, "{kind:?}: {output}");
        assert!(
            std::fs::symlink_metadata(&marker).is_err(),
            "the marker is taken"
        );
    }
}

#[test]
fn kept_heads_and_shelves_that_are_fifos_are_not_waited_on() {
    let sb = Sandbox::new();
    let (status, _, stderr) = run_within(
        &sb,
        &["notes", "write", "@project/a.md", "# A\nhello\n"],
        b"",
    );
    assert!(status.success(), "{stderr}");
    // Heads and shelves are kept only for notes and folders that have not
    // changed for 2 s.
    std::thread::sleep(Duration::from_millis(2_100));
    let payload = sb.payload("SessionStart-startup", S1);
    let (status, _, _) = session_start(&sb, &payload);
    assert!(status.success());
    for kind in ["note-heads", "boot-shelves"] {
        let file = sb.kept_file(kind);
        std::fs::remove_file(&file).unwrap();
        not_a_file::place(NotAFile::Fifo, &file);
    }
    // Another session's boot: the caches are no help, and no wait.
    let other = "99999999-9999-4999-8999-999999999999";
    let payload = sb.payload("SessionStart-startup", other);
    let (status, stdout, _) = session_start(&sb, &payload);
    assert!(status.success());
    let output: Value = serde_json::from_str(&stdout).unwrap();
    assert!(
        context_of(&output, "SessionStart").contains("@project/a.md"),
        "{output}"
    );
}

#[test]
fn content_on_stdin_past_a_note_s_bound_is_not_read() {
    let sb = Sandbox::new();
    let content = vec![b'a'; 1_000_001];
    let (status, stdout, stderr) = run_within(&sb, &["notes", "write", "@human/big.md"], &content);
    assert_eq!(status.code(), Some(1));
    assert_eq!(stdout, "");
    assert_eq!(
        stderr,
        "notesoup notes: the content on stdin is over 1000000 bytes, the most a note holds; nothing was written\n"
    );
    assert!(!sb.notes.join("human/big.md").exists());
}
