//! `notesoup-pi dream` and `notesoup-pi dream-tools` of the built binary,
//! without Pi: the tools server over pipes, a missing `pi` failing the run
//! cleanly, and the command line. The dream with real Pi as the dreamer is
//! in `tests/real_pi/dream.rs`.

use std::io::Write;
use std::process::{Command, Stdio};

use notesoup_test_support::dreamer;
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_notesoup-pi");

#[test]
fn dream_tools_answers_each_line_inside_the_jail() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("notes");
    std::fs::create_dir_all(home.join("human")).unwrap();
    let mut child = Command::new(BIN)
        .args(["dream-tools", "--notes-home"])
        .arg(&home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let requests = [
        json!({"id": 1, "op": "dream.tool", "params": {"name": "write", "arguments": {"path": "human/prefs.md", "content": "tabs\n"}}}),
        json!({"id": 2, "op": "dream.tool", "params": {"name": "write", "arguments": {"path": "../outside.md", "content": "x"}}}),
        json!({"id": 3, "op": "dream.tool", "params": {"name": "delete", "arguments": {"path": "human/prefs.md"}}}),
        json!({"id": 4, "op": "dream.tool", "params": {"name": "bash", "arguments": {}}}),
    ];
    let mut stdin = child.stdin.take().unwrap();
    for request in &requests {
        writeln!(stdin, "{request}").unwrap();
    }
    writeln!(stdin, "not json").unwrap();
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{output:?}");
    let answers: Vec<Value> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(answers.len(), 5);
    assert_eq!(
        answers[0],
        json!({"id": 1, "result": {"text": "wrote human/prefs.md (5 bytes)", "is_error": false}})
    );
    assert_eq!(answers[1]["result"]["is_error"], true);
    assert!(!dir.path().join("outside.md").exists());
    assert_eq!(answers[2]["result"]["is_error"], true, "a live note stays");
    assert!(home.join("human/prefs.md").exists());
    assert_eq!(answers[3]["error"]["code"], "bad_request");
    assert_eq!(answers[4]["id"], 0);
}

#[test]
fn a_missing_pi_fails_the_run_before_it_starts() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("notes");
    let output = Command::new(BIN)
        .args([
            "dream",
            "--force",
            "--pi",
            "/nonexistent/pi",
            "--notes-home",
        ])
        .arg(&home)
        .env("PI_CODING_AGENT_DIR", dir.path().join("agent"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        stdout.starts_with("time gate: no prior dream\n"),
        "{stdout}"
    );
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.ends_with(
            "dream: cannot start: the dreamer /nonexistent/pi does not exist (install Pi, or name it with --pi PATH or NOTESOUP_PI); nothing was changed\n"
        ),
        "{stderr}"
    );
    assert!(!home.exists(), "nothing is left behind");
}

#[test]
fn the_dream_command_line() {
    let help = Command::new(BIN)
        .args(["dream", "--help"])
        .output()
        .unwrap();
    assert_eq!(help.status.code(), Some(0));
    let text = String::from_utf8(help.stdout).unwrap();
    for flag in [
        "--notes-home",
        "--min-hours",
        "--min-sessions",
        "--force",
        "--dreamer",
        "--playbook",
        "--timeout",
        "--pi",
        "--script",
        "doctor",
    ] {
        assert!(text.contains(flag), "{flag}: {text}");
    }
    let wrong = Command::new(BIN)
        .args(["dream", "--timeout", "soon"])
        .output()
        .unwrap();
    assert_eq!(wrong.status.code(), Some(2));
    assert!(wrong.stdout.is_empty());
    assert!(
        String::from_utf8(wrong.stderr)
            .unwrap()
            .contains("--timeout")
    );
    let tools = Command::new(BIN).args(["dream-tools"]).output().unwrap();
    assert_eq!(tools.status.code(), Some(2), "--notes-home is required");
}

#[test]
fn a_dreamer_that_never_ends_is_stopped_with_every_process_it_started() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("notes");
    let pids = dir.path().join("pids");
    std::fs::create_dir_all(&pids).unwrap();
    let pi = dreamer::never_ending(&pids, "pi");
    let mark = uuid::Uuid::new_v4().to_string();
    let dream = |pi: &std::path::Path, timeout: &str| {
        Command::new(BIN)
            .args(["dream", "--force", "--timeout", timeout, "--pi"])
            .arg(pi)
            .arg("--notes-home")
            .arg(&home)
            .env("PI_CODING_AGENT_DIR", dir.path().join("agent"))
            .env(dreamer::TREE_MARK, &mark)
            .output()
            .unwrap()
    };
    let output = dream(&pi, "5");
    let stderr = dreamer::assert_stopped_at_timeout(&output, &pids, &mark, &home);
    let report = dreamer::failed_run_report(&stderr);
    assert!(
        report.contains("dreamer failed: timed out after 5 s and was stopped"),
        "{report}"
    );

    // The next dream starts (its dreamer ends at once: the run fails, but
    // it ran).
    let next = dream(std::path::Path::new("/bin/false"), "5");
    let stderr = String::from_utf8(next.stderr).unwrap();
    assert!(!stderr.contains("lock gate"), "{stderr}");
    let report = dreamer::failed_run_report(&stderr);
    assert!(
        report.contains("dreamer failed: pi ended without an answer"),
        "{report}"
    );
}
