//! `notesoup dream`, `dream doctor` and the dreamer's jailed tools.

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;

use serde_json::{Value, json};

use notesoup_test_support::dreamer;
use notesoup_test_support::files::put;

use crate::support::{Sandbox, notesoup_bin, spawn};

/// Calls the dream tools server once per request, in one process.
fn dream_tools(sb: &Sandbox, calls: &[(&str, Value)]) -> (Vec<String>, Vec<(bool, String)>) {
    let home = sb.notes.to_str().unwrap();
    let mut child = spawn(
        sb.command(&notesoup_bin(), &["dream-tools", "--notes-home", home])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped()),
    );
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut request = |message: Value| -> Value {
        writeln!(stdin, "{message}").unwrap();
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap()
    };
    let listed = request(json!({"jsonrpc":"2.0","id":0,"method":"tools/list"}));
    let names = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    let results = calls
        .iter()
        .enumerate()
        .map(|(id, (name, arguments))| {
            let reply = request(json!({"jsonrpc":"2.0","id":id + 1,"method":"tools/call","params":{"name":name,"arguments":arguments}}));
            let result = &reply["result"];
            (
                result["isError"] == true,
                result["content"][0]["text"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    drop(stdin);
    assert!(child.wait().unwrap().success());
    (names, results)
}

#[test]
fn the_dream_tools_are_jailed_and_delete_only_crumpled_notes() {
    let sb = Sandbox::new();
    put(
        &sb.notes.join("human/old.md"),
        "---\ncrumpledAt: 2026-01-01T00:00:00.000+00:00\n---\n\nold\n",
    );
    put(
        &sb.notes.join("human/live.md"),
        "---\norigin: user\n---\n\nLikes tea.\n",
    );
    // The baseline the wastebasket rule reads (a dream makes it first).
    notesoup_core::dream::audit_commit(&sb.notes, "baseline").unwrap();
    let (names, results) = dream_tools(
        &sb,
        &[
            (
                "write",
                json!({"path": "human/MAP.md", "content": "- `@human/live.md` — tea\n"}),
            ),
            ("write", json!({"path": "../escape.md", "content": "x"})),
            (
                "edit",
                json!({"path": "human/MAP.md", "edits": [{"oldText": "tea", "newText": "tea, no sugar"}]}),
            ),
            ("grep", json!({"query": "TEA"})),
            ("read", json!({"path": "human/MAP.md"})),
            ("delete", json!({"path": "human/live.md"})),
            ("delete", json!({"path": "human/old.md"})),
            ("ls", json!({"path": "human"})),
            ("write", json!({"path": "human/x.md"})),
        ],
    );
    assert_eq!(
        names,
        ["read", "grep", "find", "ls", "write", "edit", "delete"]
    );
    let expect: [(bool, &str); 9] = [
        (false, "wrote human/MAP.md (27 bytes)"),
        (
            true,
            "error: write jail: ../escape.md is outside notes home",
        ),
        (false, "edited human/MAP.md (1 edits)"),
        (
            false,
            "human/MAP.md:1: - `@human/live.md` — tea, no sugar\nhuman/live.md:5: Likes tea.",
        ),
        (false, "- `@human/live.md` — tea, no sugar\n"),
        (
            true,
            "error: delete: human/live.md is not a crumpled note; only the wastebasket rule permits deletion",
        ),
        (false, "deleted human/old.md"),
        (false, "MAP.md\nlive.md"),
        (true, "error: invalid arguments: missing field `content`"),
    ];
    for ((is_error, text), (want_error, want)) in results.iter().zip(expect) {
        assert_eq!(*is_error, want_error, "{text}");
        assert!(
            text.starts_with(want),
            "{text:?} should start with {want:?}"
        );
    }
    assert!(!sb.notes.parent().unwrap().join("escape.md").exists());
}

#[test]
fn dream_respects_its_gates_and_reports_a_dreamer_that_cannot_start() {
    let mut sb = Sandbox::new();
    let home = sb.notes.to_str().unwrap().to_owned();
    let gated = sb.run(&["dream", "--notes-home", &home], b"");
    assert_eq!(gated.status.code(), Some(0));
    assert_eq!(
        String::from_utf8(gated.stdout).unwrap(),
        "time gate: no prior dream\nmaterial gate: only 0 changed sessions\ndream: skipped; pass --force to dream anyway (it never bypasses the lock)\n"
    );

    // A dreamer that is not there: the dream says why and leaves no
    // report, Git repository or lock.
    sb.env
        .push(("NOTESOUP_CLAUDE".into(), "/nonexistent/claude".into()));
    let failed = sb.run(&["dream", "--notes-home", &home, "--force"], b"");
    assert_eq!(failed.status.code(), Some(1));
    let stderr = String::from_utf8(failed.stderr).unwrap();
    assert!(
        stderr.ends_with(
            "dream: cannot start: the dreamer /nonexistent/claude does not exist (install Claude Code, or name it with --claude PATH or NOTESOUP_CLAUDE); nothing was changed\n"
        ),
        "{stderr}"
    );
    for left in ["dreams", ".git", ".dream.lock"] {
        assert!(!sb.notes.join(left).exists(), "{left}");
    }
}

#[test]
fn dream_doctor_is_the_doctor() {
    let sb = Sandbox::new();
    let home = sb.notes.to_str().unwrap();
    let output = sb.run(&["dream", "doctor", "--notes-home", home], b"");
    assert!(output.status.success());
    assert_eq!(
        String::from_utf8(output.stdout).unwrap(),
        format!("doctor: OK ({home})\n")
    );
}

#[test]
fn the_dreamer_setting_picks_the_model_and_the_flag_wins() {
    let mut sb = Sandbox::new();
    let home = sb.notes.to_str().unwrap().to_owned();
    // A stand-in for `claude` that records how it was started and fails, so
    // the run ends right after choosing the model.
    let args_file = sb.home.join("dreamer-args");
    let stand_in = sb.home.join("claude-stand-in");
    dreamer::recording_failure(&stand_in, &args_file);
    sb.set_env("NOTESOUP_CLAUDE", stand_in.to_str().unwrap());
    let model = || {
        let args = std::fs::read_to_string(&args_file).unwrap();
        let args: Vec<&str> = args.lines().collect();
        args.iter()
            .position(|a| *a == "--model")
            .map(|at| args[at + 1].to_owned())
    };
    sb.run(&["dream", "--notes-home", &home, "--force"], b"");
    assert_eq!(model(), None, "no setting: Claude Code's own default");

    sb.project_settings(r#"{"notesoup":{"dreamer":"claude-dreamer-from-settings"}}"#);
    sb.run(&["dream", "--notes-home", &home, "--force"], b"");
    assert_eq!(model().as_deref(), Some("claude-dreamer-from-settings"));

    sb.run(
        &[
            "dream",
            "--notes-home",
            &home,
            "--force",
            "--dreamer",
            "flagged",
        ],
        b"",
    );
    assert_eq!(model().as_deref(), Some("flagged"));

    sb.project_settings(r#"{"notesoup":{"dreamer":7}}"#);
    let warned = sb.run(&["dream", "--notes-home", &home, "--force"], b"");
    assert!(
        String::from_utf8_lossy(&warned.stderr).contains("notesoup.dreamer must be"),
        "{}",
        String::from_utf8_lossy(&warned.stderr)
    );
    assert_eq!(model(), None);
}

#[test]
fn a_dreamer_that_never_ends_is_stopped_with_every_process_it_started() {
    let mut sb = Sandbox::new();
    let home = sb.notes.to_str().unwrap().to_owned();
    let pids = sb.home.join("pids");
    std::fs::create_dir_all(&pids).unwrap();
    let claude = dreamer::never_ending(&pids, "claude");
    let mark = uuid::Uuid::new_v4().to_string();
    sb.set_env(dreamer::TREE_MARK, &mark);
    sb.set_env("NOTESOUP_CLAUDE", claude.to_str().unwrap());
    let out = sb.run(
        &["dream", "--notes-home", &home, "--force", "--timeout", "5"],
        b"",
    );
    let stderr = dreamer::assert_stopped_at_timeout(&out, &pids, &mark, &sb.notes);
    assert!(stderr.contains("dream: the dreamer is running"), "{stderr}");
    let reports = dreamer::reports(&sb.notes);
    assert_eq!(reports.len(), 1);
    let report = &reports[0];
    assert!(
        report.contains("(failed)")
            && report.contains("dreamer failed: timed out after 5 s and was stopped"),
        "{report}"
    );

    // The next dream starts and finishes.
    let quick = sb.home.join("claude-quick");
    dreamer::executable(
        &quick,
        "echo '{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"Report: nothing to do.\"}'\n",
    );
    sb.env.retain(|(key, _)| key != "NOTESOUP_CLAUDE");
    sb.env
        .push(("NOTESOUP_CLAUDE".into(), quick.to_str().unwrap().to_owned()));
    let next = sb.run(&["dream", "--notes-home", &home, "--force"], b"");
    assert_eq!(
        next.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&next.stderr)
    );
}
