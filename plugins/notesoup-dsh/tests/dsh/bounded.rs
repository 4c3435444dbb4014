//! Bounds on what the bundle, the dreamer's extension and a project's
//! files can make `notesoup-dsh` hold or wait for: the built binary over
//! real pipes, with a bound on every wait so that a hang fails the test
//! instead of stalling it (the bound is no timing assertion).

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

use std::path::Path;
use std::process::Command;

use notesoup_test_support::child::{HUGE_LINE_BYTES, LINE_CAP_BYTES, Proc};
use notesoup_test_support::files::put;
use notesoup_test_support::not_a_file::{self, NOT_FILES};
use serde_json::{Value, json};

use crate::hello;

/// A sandbox: the notes root, the dsh home and a project.
struct Place {
    _temp: tempfile::TempDir,
    notes: std::path::PathBuf,
    dsh_home: std::path::PathBuf,
    project: std::path::PathBuf,
}

impl Place {
    fn new() -> Self {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path().to_path_buf();
        let place = Self {
            notes: root.join("notes"),
            dsh_home: root.join("dsh-home"),
            project: root.join("project"),
            _temp: temp,
        };
        for dir in [&place.notes, &place.dsh_home, &place.project] {
            std::fs::create_dir_all(dir).unwrap();
        }
        place
    }

    fn run(&self, args: &[&str]) -> Proc {
        let mut command = Command::new(env!("CARGO_BIN_EXE_notesoup-dsh"));
        command
            .args(args)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self._temp.path())
            .env("PI_NOTES_HOME", &self.notes)
            .env("DSH_HOME", &self.dsh_home);
        Proc::spawn(&mut command)
    }

    /// `notesoup-dsh serve` after its hello, with the hello's answer.
    fn greeted(&self) -> (Proc, Value) {
        let mut sidecar = self.run(&["serve"]);
        sidecar.send(&request(1, "hello", hello()));
        let greeted = sidecar.next();
        (sidecar, greeted)
    }
}

fn request(id: u64, op: &str, params: Value) -> Value {
    json!({"id": id, "op": op, "params": params})
}

fn write_call(id: u64, cwd: &Path, address: &str, content: &str) -> Value {
    request(
        id,
        "tool",
        json!({"session": {"id": "session-bounded", "cwd": cwd, "model": "scripted/scripted-model",
                           "from": 0, "events": []},
               "name": "notes_write", "arguments": {"address": address, "content": content}}),
    )
}

/// The sidecar's and the dream tools' refusal of request `id`, a line past
/// the cap.
fn assert_line_refused(refused: &Value, id: u64) {
    assert_eq!(refused["id"], id, "{refused}");
    assert_eq!(refused["error"]["code"], "bad_request");
    assert_eq!(
        refused["error"]["message"],
        format!(
            "the request line is {HUGE_LINE_BYTES} bytes, over the limit of {LINE_CAP_BYTES}; it was discarded"
        )
    );
}

#[test]
fn a_request_line_past_the_cap_is_refused_in_bounded_memory_and_serving_goes_on() {
    let place = Place::new();
    let mut sidecar = place.run(&["serve"]);
    let refused = sidecar.answer_to_a_huge_line(
        r#"{"id":5,"op":"hello","params":{"settings":{"pad":""#,
        r#""}}}"#,
    );
    assert_line_refused(&refused, 5);
    sidecar.send(&request(6, "hello", hello()));
    let greeted = sidecar.next();
    assert_eq!(greeted["id"], 6);
    assert_eq!(greeted["result"]["protocol"], 1, "{greeted}");
    assert!(sidecar.finish().0.success());
}

#[test]
fn a_dream_tools_line_past_the_cap_is_refused_in_bounded_memory_and_serving_goes_on() {
    let place = Place::new();
    let notes = place.notes.display().to_string();
    let mut tools = place.run(&["dream-tools", "--notes-home", &notes]);
    let refused = tools.answer_to_a_huge_line(
        r#"{"id":3,"op":"dream.tool","params":{"name":"read","arguments":{"path":""#,
        r#""}}}"#,
    );
    assert_line_refused(&refused, 3);
    tools.send(&json!({"id": 4, "op": "dream.tool", "params": {"name": "ls"}}));
    let listed = tools.next();
    assert_eq!(listed["id"], 4);
    assert_eq!(listed["result"]["is_error"], false, "{listed}");
    // Arguments by position are no arguments.
    tools.send(&json!({"id": 5, "op": "dream.tool", "params": {"name": "read", "arguments": ["human/a.md"]}}));
    let refused = tools.next();
    assert_eq!(refused["result"]["is_error"], true, "{refused}");
    assert_eq!(
        refused["result"]["text"],
        "invalid arguments: expected an object, got an array"
    );
    assert!(tools.finish().0.success());
}

#[test]
fn a_settings_file_that_is_not_a_file_gives_the_defaults_and_one_warning() {
    for kind in NOT_FILES {
        let place = Place::new();
        let file = place.dsh_home.join("notesoup.json");
        not_a_file::place(kind, &file);
        let (mut sidecar, greeted) = place.greeted();
        let warnings: Vec<&str> = greeted["result"]["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|warning| warning.as_str().unwrap())
            .collect();
        not_a_file::assert_one_warning(
            &warnings,
            &format!("notesoup: could not read {}: ", file.display()),
            "; using the defaults.",
            &format!("{kind:?}: {greeted}"),
        );
        // The defaults: the guard is on.
        sidecar.send(&write_call(2, &place.project, "@human/keys", KEY));
        let refused = sidecar.next();
        assert_eq!(
            refused["result"]["result"]["code"], "secret_detected",
            "{refused}"
        );
        let (status, _, stderr) = sidecar.finish();
        assert!(status.success());
        assert_eq!(stderr, "", "{kind:?}");
    }
}

const KEY: &str = "# Keys\naws_access_key_id = AKIAIOSFODNN7EXAMPLX\n";

#[test]
fn a_project_file_that_is_not_a_file_gives_the_defaults_and_one_warning() {
    for kind in NOT_FILES {
        let place = Place::new();
        let file = place.project.join(".dsh/notesoup.json");
        not_a_file::place(kind, &file);
        let (mut sidecar, greeted) = place.greeted();
        assert!(greeted["result"]["warnings"].as_array().unwrap().is_empty());
        for id in [2, 3] {
            sidecar.send(&write_call(id, &place.project, "@project/plain", "plain\n"));
            let stored = sidecar.next();
            assert_eq!(stored["result"]["is_error"], false, "{kind:?}: {stored}");
        }
        let (status, _, stderr) = sidecar.finish();
        assert!(status.success());
        not_a_file::assert_one_warning(
            &stderr.lines().collect::<Vec<_>>(),
            &format!("notesoup: could not read {}: ", file.display()),
            "; using the defaults.",
            &format!("{kind:?}: {stderr}"),
        );
    }
}

/// A cloned repository's `.dsh/notesoup.json` cannot turn the guard off:
/// the write is refused and the sidecar says why, once; the user's own
/// setting (the row, or the dsh home's file) still turns it off.
#[test]
fn a_project_cannot_turn_the_secret_guard_off() {
    let place = Place::new();
    put(
        &place.project.join(".dsh/notesoup.json"),
        r#"{"notesoup": {"secretGuard": false}}"#,
    );
    let (mut sidecar, _) = place.greeted();
    for id in [2, 3] {
        sidecar.send(&write_call(id, &place.project, "@project/keys", KEY));
        let refused = sidecar.next();
        assert_eq!(
            refused["result"]["result"]["code"], "secret_detected",
            "{refused}"
        );
    }
    let (_, _, stderr) = sidecar.finish();
    assert_eq!(
        stderr,
        "notesoup: a project's own settings cannot turn notesoup.secretGuard off; keeping the credential guard on (turn it off in your own settings).\n"
    );
    assert!(!place.notes.join("project").exists());

    std::fs::write(
        place.dsh_home.join("notesoup.json"),
        r#"{"notesoup": {"secretGuard": false}}"#,
    )
    .unwrap();
    let (mut sidecar, _) = place.greeted();
    sidecar.send(&write_call(2, &place.project, "@project/keys", KEY));
    let stored = sidecar.next();
    assert_eq!(stored["result"]["is_error"], false, "{stored}");
    let (_, _, stderr) = sidecar.finish();
    assert_eq!(stderr, "");
}
