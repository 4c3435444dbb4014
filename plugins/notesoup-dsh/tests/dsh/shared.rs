//! The commands every notesoup binary shares, as `notesoup-dsh` has them
//! (their help, on every binary, is snapshotted in `tests/notesoup-e2e`):
//! `doctor` and `dream doctor` as one command, completions and the man
//! page, and `notes`, `boot` and `history` over dsh sessions and their logs.

use std::path::Path;
use std::process::{Command, Output};

use notesoup_test_support::shared_commands::{Binary, ok as stdout};

const BIN: &str = env!("CARGO_BIN_EXE_notesoup-dsh");

/// `notesoup-dsh ARGS` in `dir` with the notes root and the dsh home in it.
fn run(args: &[&str], dir: &Path) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .env("PI_NOTES_HOME", dir.join("notes"))
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env("DSH_HOME", dir.join("dsh-home"))
        .env_remove("PI_NOTES_AGENT")
        .output()
        .expect("notesoup-dsh runs")
}

/// `notesoup-dsh` in `dir`, for the checks every binary shares.
fn notesoup_dsh(dir: &Path) -> Binary<'_> {
    Binary::new("notesoup-dsh", move |args| run(args, dir))
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn doctor_and_dream_doctor_are_one_command() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dir.path().join("notes/human")).expect("mkdir");
    std::fs::write(dir.path().join("notes/stray.txt"), "x").expect("write");
    notesoup_dsh(dir.path()).assert_doctor_is_dream_doctor(&[]);
}

#[test]
fn completions_and_the_man_page() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = notesoup_dsh(dir.path());
    bin.assert_completions_name("history");
    bin.assert_man_page("bundle");
    assert_eq!(
        stdout(&bin.run(&["--version"])),
        format!(
            "notesoup-dsh {} (dsh {}, sidecar protocol {})\n",
            env!("CARGO_PKG_VERSION"),
            notesoup_dsh::decode::PINNED_DSH_VERSION,
            notesoup_dsh::protocol::PROTOCOL_VERSION
        )
    );
}

const LOG: &str = "wipe-reset.session.jsonl";
const SESSION: &str = "session-1ee89c1d-8379-472c-a198-f16baf1f860f";

/// The recorded log, given as a file or found under the dsh home: its
/// history, and the boot of its live window (the second: it was wiped once).
#[test]
fn a_session_log_gives_its_history_and_its_live_window() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/dsh/fixtures")
        .join(LOG);
    let log = log.to_str().expect("utf-8");
    let windows = stdout(&run(&["history", log, "windows"], dir.path()));
    assert_eq!(
        windows,
        format!(
            "session {SESSION}\nwindow dsh:{SESSION}:1 | seqs 8-31 | 6 events | ended: tool at 110 tokens\nwindow dsh:{SESSION}:2 | seqs 35-47 | 4 events | open at 110 tokens\n"
        )
    );
    let boot: serde_json::Value = serde_json::from_str(&stdout(&run(
        &["boot", "--session", log, "--json"],
        dir.path(),
    )))
    .expect("JSON");
    assert_eq!(boot["window"], format!("dsh:{SESSION}:2"));
    assert_eq!(boot["bootMaxChars"], 10000);

    // No session named and none logged for the project: refused, naming
    // what to pass.
    let none = run(&["history", "windows"], dir.path());
    assert_eq!(none.status.code(), Some(1));
    assert!(
        stderr(&none).starts_with("notesoup-dsh history: no dsh session is recorded for "),
        "{}",
        stderr(&none)
    );
    assert!(
        stderr(&none).trim_end().ends_with("; pass --session"),
        "{}",
        stderr(&none)
    );

    // The project's most recent log under the dsh home, by id or by default.
    let cwd = dir.path().canonicalize().expect("canonical");
    let folder = format!(
        "--{}--",
        cwd.to_str()
            .expect("utf-8")
            .trim_start_matches('/')
            .replace('/', "-")
    );
    let logged = dir
        .path()
        .join("dsh-home/sessions")
        .join(folder)
        .join(SESSION);
    std::fs::create_dir_all(&logged).expect("mkdir");
    std::fs::copy(log, logged.join("session.jsonl")).expect("copy");
    let cwd = cwd.to_str().expect("utf-8");
    assert_eq!(
        stdout(&run(&["history", "--cwd", cwd, "windows"], dir.path())),
        windows
    );
    assert_eq!(
        stdout(&run(
            &["history", "--cwd", cwd, "--session", SESSION, "windows"],
            dir.path()
        )),
        windows
    );
}

/// `notes` names the session's notes by its id; without one, the durable
/// homes.
#[test]
fn notes_work_on_a_session_s_notes() {
    let dir = tempfile::tempdir().expect("tempdir");
    notesoup_dsh(dir.path()).assert_notes_on_a_session(
        "session-1",
        &dir.path().join("notes/pi/session/session-1/checkpoint.md"),
        &["notes", "write", "checkpoint.md", "x"],
    );
    let listed = stdout(&run(
        &["notes", "list", "--session", "session-1", "--json"],
        dir.path(),
    ));
    let listed: serde_json::Value = serde_json::from_str(&listed).expect("JSON");
    assert_eq!(listed["files"][0]["address"], "checkpoint.md", "{listed}");
}
