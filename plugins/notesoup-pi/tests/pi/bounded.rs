//! Bounds on what the shim, Pi's files and a session file can make
//! `notesoup-pi` hold or wait for: the built binary over real pipes, with
//! a bound on every wait so that a hang fails the test instead of stalling
//! it (the bound is no timing assertion: nothing here should take a second).

use std::io::Write;
use std::path::Path;
use std::process::Command;

use notesoup_pi::bridge::protocol::PROTOCOL_VERSION;
use notesoup_pi::session::{DiagnosticCode, LazySession, SessionFile};
use notesoup_test_support::child::{HANG, HUGE_LINE_BYTES, LINE_CAP_BYTES, Proc};
use notesoup_test_support::not_a_file::{self, NOT_FILES, NotAFile};
use serde_json::{Value, json};

fn serve(env: &[(&str, &str)]) -> (Proc, tempfile::TempDir) {
    let temp = tempfile::tempdir().unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_notesoup-pi"));
    command
        .arg("serve")
        .env("PI_NOTES_HOME", temp.path().join("notes"))
        .env("XDG_CACHE_HOME", temp.path().join("cache"))
        .env("PI_NOTES_AGENT", "tester");
    for (key, value) in env {
        command.env(key, value);
    }
    (Proc::spawn(&mut command), temp)
}

/// `notesoup-pi serve` past its handshake, with a project folder.
fn ready(env: &[(&str, &str)]) -> (Proc, tempfile::TempDir, std::path::PathBuf) {
    ready_after(env, b"")
}

/// [`ready`], `before` sent ahead of the hello.
fn ready_after(
    env: &[(&str, &str)],
    before: &[u8],
) -> (Proc, tempfile::TempDir, std::path::PathBuf) {
    let (mut sidecar, temp) = serve(env);
    let cwd = temp.path().join("project");
    std::fs::create_dir_all(&cwd).unwrap();
    sidecar.stdin().write_all(before).unwrap();
    sidecar.send(&hello());
    assert_eq!(sidecar.next()["type"], "ready");
    (sidecar, temp, cwd)
}

fn hello() -> Value {
    json!({"type": "hello", "body": {"protocol": PROTOCOL_VERSION, "piVersion": "1.6.0"}})
}

fn state(cwd: &Path, from: u32) -> Value {
    crate::bridge::state(cwd, Vec::new(), from, None)
}

fn tool_event(id: u32, cwd: &Path, params: Value) -> Value {
    json!({"type": "event", "body": {
        "id": id, "name": "execute_tool",
        "payload": {"toolCallId": format!("call_{id}"), "name": "notes_list", "params": params},
        "state": state(cwd, 0),
    }})
}

#[test]
fn an_event_line_past_the_cap_fails_that_event_in_bounded_memory_and_serving_goes_on() {
    let (mut sidecar, _temp, cwd) = ready(&[]);
    let refused = sidecar.answer_to_a_huge_line(
        r#"{"type":"event","body":{"id":7,"name":"turn_start","payload":""#,
        r#""}}"#,
    );
    assert_eq!(refused["type"], "result", "{refused}");
    assert_eq!(refused["body"]["id"], 7);
    let error = refused["body"]["error"].as_str().unwrap();
    assert_eq!(
        error,
        format!(
            "notesoup: a line of {HUGE_LINE_BYTES} bytes, over the limit of {LINE_CAP_BYTES}, was discarded unread"
        )
    );
    sidecar.send(&tool_event(8, &cwd, json!({})));
    let served = sidecar.next();
    assert_eq!(served["body"]["id"], 8, "{served}");
    assert_eq!(served["body"]["error"], Value::Null, "{served}");
    let (status, _, _) = sidecar.finish();
    assert!(status.success());
}

/// Blank lines before the hello and between events are passed over; a line
/// under the byte cap that would make the parser build past core's token
/// bound fails its event with the reason, unparsed, and serving goes on.
#[test]
fn blank_lines_are_passed_over_and_a_dense_line_fails_its_event() {
    use notesoup_core::plumbing::LineRead;
    let (mut sidecar, _temp, cwd) = ready_after(&[], b"\n \t\r\n");
    sidecar.stdin().write_all(b"\n\n").unwrap();
    let depth = LineRead::MAX_TOKENS + 1;
    let dense = format!(
        r#"{{"type":"event","body":{{"id":7,"name":"turn_start","payload":{}{}}}}}"#,
        "[".repeat(depth),
        "]".repeat(depth)
    );
    writeln!(sidecar.stdin(), "{dense}").unwrap();
    let refused = sidecar.next();
    assert_eq!(refused["body"]["id"], 7, "{refused}");
    assert_eq!(
        refused["body"]["error"],
        format!(
            "notesoup: a line of more than {} commas, colons and opening brackets was not parsed",
            LineRead::MAX_TOKENS
        )
    );
    sidecar.stdin().write_all(b" \n").unwrap();
    sidecar.send(&tool_event(8, &cwd, json!({})));
    let served = sidecar.next();
    assert_eq!(served["body"]["id"], 8, "{served}");
    assert_eq!(served["body"]["error"], Value::Null, "{served}");
    assert!(sidecar.finish().0.success());
}

#[test]
fn tool_parameters_that_are_not_an_object_are_refused_with_a_code() {
    let (mut sidecar, _temp, cwd) = ready(&[]);
    // By position, `["@human/x.md", "text"]` would have been a write.
    for (id, params) in [
        (1, json!(["@human/", 5])),
        (2, json!("@human/")),
        (3, json!(7)),
    ] {
        sidecar.send(&tool_event(id, &cwd, params.clone()));
        let result = sidecar.next();
        let value = &result["body"]["value"];
        assert_eq!(value["isError"], true, "{params}: {result}");
        let text = value["content"][0]["text"].as_str().unwrap();
        assert!(
            text.starts_with("error: invalid_arguments: invalid arguments: expected an object"),
            "{params}: {text}"
        );
    }
    // `null` still reads as `{}`.
    sidecar.send(&tool_event(4, &cwd, Value::Null));
    let listed = sidecar.next();
    assert_ne!(listed["body"]["value"]["isError"], true, "{listed}");
    assert!(sidecar.finish().0.success());
}

#[test]
fn an_event_before_the_hello_is_refused_in_a_few_words() {
    let (mut sidecar, temp) = serve(&[]);
    let cwd = temp.path().join("project");
    // A megabyte of payload that must not come back, nor go to stderr.
    let mut event = tool_event(1, &cwd, json!({}));
    event["body"]["payload"]["params"] = json!({"content": "y".repeat(1 << 20)});
    sidecar.send(&event);
    let refused = sidecar.next();
    assert_eq!(
        refused,
        json!({"type": "refused", "body": {"protocol": PROTOCOL_VERSION, "code": "expected_hello",
               "message": "the first line must be hello; got event 1"}})
    );
    let (status, stderr_bytes, stderr) = sidecar.finish();
    assert_eq!(status.code(), Some(3));
    assert!(
        stderr_bytes < 1024,
        "{stderr_bytes} bytes on stderr: {stderr}"
    );
    assert_eq!(
        stderr,
        "notesoup-pi serve: refused (expected_hello): the first line must be hello; got event 1\n"
    );
}

#[test]
fn a_pi_version_that_is_no_version_is_refused_without_being_echoed() {
    for version in ["1.6.0".to_owned() + &"9".repeat(10 << 20), "z".repeat(65)] {
        let (mut sidecar, _temp) = serve(&[]);
        sidecar.send(
            &json!({"type": "hello", "body": {"protocol": PROTOCOL_VERSION, "piVersion": version}}),
        );
        let refused = sidecar.next();
        assert_eq!(refused["body"]["code"], "bad_hello", "{refused}");
        assert_eq!(
            refused["body"]["message"],
            format!(
                "piVersion is {} bytes long; a Pi version is at most 64",
                version.len()
            )
        );
        let (status, stderr_bytes, _) = sidecar.finish();
        assert_eq!(status.code(), Some(3));
        assert!(stderr_bytes < 1024, "{stderr_bytes} bytes on stderr");
    }
    // An old version is still named, and a short one in full.
    let (mut sidecar, _temp) = serve(&[]);
    sidecar.send(
        &json!({"type": "hello", "body": {"protocol": PROTOCOL_VERSION, "piVersion": "0.12.0"}}),
    );
    let refused = sidecar.next();
    assert_eq!(refused["body"]["code"], "host_too_old");
    assert!(
        refused["body"]["message"]
            .as_str()
            .unwrap()
            .ends_with("this host speaks the 0.12.0 extension API"),
        "{refused}"
    );
    sidecar.finish();
}

/// The shim never answers the boot's `sendMessage`: after the (here
/// shortened) bound the event fails with a clear error, the late answer is
/// taken in stride, and the next event is served.
#[test]
fn an_action_answer_that_never_comes_fails_the_event_after_a_bounded_wait() {
    let (mut sidecar, _temp, cwd) = ready(&[("NOTESOUP_PI_ACTION_TIMEOUT_MS", "300")]);
    sidecar.send(&json!({"type": "event", "body": {
        "id": 1, "name": "session_start", "payload": {"type": "session_start", "reason": "startup"},
        "state": state(&cwd, 0),
    }}));
    let action = sidecar.next();
    assert_eq!(action["type"], "action", "{action}");
    let action_id = action["body"]["id"].as_u64().unwrap();
    let failed = sidecar.next();
    assert_eq!(failed["type"], "result", "{failed}");
    assert_eq!(failed["body"]["id"], 1);
    assert_eq!(
        failed["body"]["error"],
        format!(
            "notesoup: session_start: the Pi package did not answer action {action_id} (sendMessage) within 300 ms; the event failed"
        )
    );
    // The answer, late: no surprise, and serving goes on.
    sidecar
        .send(&json!({"type": "actionResult", "body": {"id": action_id, "state": state(&cwd, 0)}}));
    sidecar.send(&tool_event(2, &cwd, json!({})));
    let served = sidecar.next();
    assert_eq!(served["body"]["id"], 2, "{served}");
    assert_eq!(served["body"]["error"], Value::Null, "{served}");
    assert!(sidecar.finish().0.success());
}

#[test]
fn pi_settings_that_are_not_files_give_the_defaults_and_one_warning_to_boot() {
    for kind in NOT_FILES {
        for trusted_project in [false, true] {
            let temp = tempfile::tempdir().unwrap();
            let agent = temp.path().join("agent");
            let cwd = temp.path().join("project");
            std::fs::create_dir_all(&agent).unwrap();
            std::fs::create_dir_all(&cwd).unwrap();
            let settings = if trusted_project {
                std::fs::write(
                    agent.join("settings.json"),
                    r#"{"defaultProjectTrust": "always"}"#,
                )
                .unwrap();
                cwd.join(".pi/settings.json")
            } else {
                agent.join("settings.json")
            };
            not_a_file::place(kind, &settings);
            let mut command = Command::new(env!("CARGO_BIN_EXE_notesoup-pi"));
            command
                .args(["boot", "--cwd"])
                .arg(&cwd)
                .env("PI_NOTES_HOME", temp.path().join("notes"))
                .env("PI_CODING_AGENT_DIR", &agent)
                .env("PI_NOTES_AGENT", "tester");
            let boot = Proc::spawn(&mut command);
            let (status, _, stderr) = boot.finish();
            assert!(status.success(), "{kind:?}: {stderr}");
            let warnings: Vec<&str> = stderr
                .lines()
                .filter(|line| line.contains("settings.json"))
                .collect();
            not_a_file::assert_one_warning(
                &warnings,
                &format!("notesoup-pi boot: {}: ", settings.display()),
                "; using the defaults",
                &format!("{kind:?} {trusted_project}: {stderr}"),
            );
        }
    }
}

#[test]
fn a_session_line_past_the_cap_is_skipped_as_a_bad_line_and_reading_goes_on() {
    let temp = tempfile::tempdir().unwrap();
    let path = temp.path().join("session.jsonl");
    let header = r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;
    let entry = |id: &str, parent: &str, text: &str| {
        format!(
            r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"user","content":"{text}","timestamp":1}}}}"#
        )
    };
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    writeln!(file, "{header}").unwrap();
    writeln!(file, "{}", entry("a1", "null", "before")).unwrap();
    // 17 MiB of one entry: past the cap, so it is never held.
    let huge = entry("a2", "\"a1\"", &"z".repeat(17 << 20));
    writeln!(file, "{huge}").unwrap();
    writeln!(file, "{}", entry("a3", "\"a1\"", "after")).unwrap();
    drop(huge);
    file.flush().unwrap();
    drop(file);
    for chunk in [1 << 20, 4096, 7] {
        let session = LazySession::read_chunked(&path, chunk).unwrap();
        assert_eq!(session.len(), 2, "chunk {chunk}");
        assert_eq!(session.last_id(), Some("a3"));
        let diagnostics = session.diagnostics();
        assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
        assert_eq!(diagnostics[0].line, 3);
        assert_eq!(diagnostics[0].code, DiagnosticCode::LineTooLong);
        assert_eq!(session.line_number(1), 4);
    }
    // A long line at the end without its newline is skipped too.
    let torn = temp.path().join("torn.jsonl");
    let mut bytes = format!("{header}\n{}\n", entry("a1", "null", "x")).into_bytes();
    bytes.resize(bytes.len() + (17 << 20), b'{');
    std::fs::write(&torn, bytes).unwrap();
    let session = LazySession::read(&torn).unwrap();
    assert_eq!(session.len(), 1);
    assert_eq!(session.diagnostics()[0].code, DiagnosticCode::LineTooLong);
    assert_eq!(session.diagnostics()[0].line, 3);
}

/// Lines past a small cap, at every chunk size: a line of exactly the cap
/// is kept, one a byte longer is passed over, as is a long one within the
/// file and one that ends it without a newline, and every line after one
/// is read back from where it stands (its entry decodes as itself).
#[test]
fn lines_past_a_small_cap_are_passed_over_and_the_rest_read_back_in_place() {
    const CAP: usize = 300;
    let header = r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;
    // An entry line `len` bytes long (without its newline).
    let entry = |id: &str, parent: &str, len: usize| {
        let line = |text: &str| {
            format!(
                r#"{{"type":"message","id":"{id}","parentId":"{parent}","timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"user","content":"{text}","timestamp":1}}}}"#
            )
        };
        let line = line(&"x".repeat(len - line("").len()));
        assert_eq!(line.len(), len);
        line
    };
    let temp = tempfile::tempdir().unwrap();
    let path = temp.path().join("session.jsonl");
    let torn = temp.path().join("torn.jsonl");
    // The first entry's length moves every later line against the chunks.
    for (lead, chunk) in [200, 203, 211]
        .into_iter()
        .flat_map(|lead| [1, 7, 64, 4096].map(|chunk| (lead, chunk)))
    {
        let lines = [
            header.to_owned(),
            entry("a1", "a0", lead),
            entry("a2", "a1", 5 * CAP),
            entry("a3", "a1", CAP),
            entry("a4", "a3", CAP + 1),
            entry("a5", "a3", 200),
        ];
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        std::fs::write(&torn, lines.join("\n") + "\n" + &entry("a6", "a5", 3 * CAP)).unwrap();
        for file in [&path, &torn] {
            let session = LazySession::read_capped(file, chunk, CAP).unwrap();
            let read: Vec<(&str, Option<&str>)> = (0..session.len())
                .map(|at| (session.entry(at).id(), session.entry(at).parent_id()))
                .collect();
            assert_eq!(
                read,
                [("a1", Some("a0")), ("a3", Some("a1")), ("a5", Some("a3"))],
                "chunk {chunk}, lead {lead}, {}",
                file.display()
            );
            session.check().unwrap();
            let skipped: Vec<(usize, DiagnosticCode)> = session
                .diagnostics()
                .iter()
                .map(|diagnostic| (diagnostic.line, diagnostic.code))
                .collect();
            let mut expected = vec![
                (3, DiagnosticCode::LineTooLong),
                (5, DiagnosticCode::LineTooLong),
            ];
            if file == &torn {
                expected.push((7, DiagnosticCode::LineTooLong));
            }
            assert_eq!(
                skipped,
                expected,
                "chunk {chunk}, lead {lead}, {}",
                file.display()
            );
            assert_eq!((session.line_number(1), session.line_number(2)), (4, 6));
        }
    }
}

#[test]
fn a_session_file_that_is_a_fifo_is_refused_not_waited_on() {
    let temp = tempfile::tempdir().unwrap();
    let fifo = temp.path().join("session.jsonl");
    not_a_file::place(NotAFile::Fifo, &fifo);
    let path = fifo.clone();
    assert_refuses_the_fifo(move || LazySession::read(&path).map(|s| s.len()));
    // The eager reader (`notesoup-pi boot`, the writer) too.
    assert_refuses_the_fifo(move || SessionFile::read(&fifo).map(|_| ()));
}

/// Runs `read` on a thread, so that a read that waits for a writer fails
/// the test: it must refuse the FIFO, not read it.
fn assert_refuses_the_fifo<T, E>(read: impl FnOnce() -> Result<T, E> + Send + 'static)
where
    T: Send + std::fmt::Debug + 'static,
    E: Send + std::fmt::Display + 'static,
{
    let (to_test, done) = std::sync::mpsc::channel();
    std::thread::spawn(move || to_test.send(read()));
    let error = match done.recv_timeout(HANG).expect("the read waits on the FIFO") {
        Ok(read) => panic!("the FIFO was read: {read:?}"),
        Err(error) => error,
    };
    assert!(
        error.to_string().contains("not a regular file (fifo)"),
        "{error}"
    );
}
