//! The commands every notesoup binary shares, as `notesoup-pi` has them
//! (their help, on every binary, is snapshotted in `tests/notesoup-e2e`):
//! `doctor` and `dream doctor` as one command, completions and the man
//! page, and `notes` over a Pi session.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use notesoup_test_support::shared_commands::{Binary, ok as stdout};

const BIN: &str = env!("CARGO_BIN_EXE_notesoup-pi");

fn run(args: &[&str], notes: &Path) -> Output {
    Command::new(BIN)
        .args(args)
        .env("PI_NOTES_HOME", notes)
        .env("PI_CODING_AGENT_DIR", notes.join("no-agent-dir"))
        .env_remove("PI_NOTES_AGENT")
        .output()
        .unwrap()
}

/// `notesoup-pi` with `notes` as its notes root, for the checks every
/// binary shares.
fn notesoup_pi(notes: &Path) -> Binary<'_> {
    Binary::new("notesoup-pi", move |args| run(args, notes))
}

#[test]
fn doctor_and_dream_doctor_are_one_command() {
    let notes = tempfile::tempdir().unwrap();
    let home = notes.path().join("notes");
    std::fs::create_dir_all(home.join("human")).unwrap();
    std::fs::write(home.join("stray.txt"), "x").unwrap();
    let home = home.to_str().unwrap();
    notesoup_pi(notes.path()).assert_doctor_is_dream_doctor(&["--notes-home", home]);
}

#[test]
fn completions_and_the_man_page() {
    let notes = tempfile::tempdir().unwrap();
    let bin = notesoup_pi(notes.path());
    bin.assert_completions_name("history");
    bin.assert_man_page("serve");
}

fn golden(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name)
}

/// `notes` on a Pi session: bare addresses are the session's notes; with
/// no session, only the durable homes.
#[test]
fn notes_work_on_a_session_s_notes() {
    let notes = tempfile::tempdir().unwrap();
    let session = golden("retain-none.jsonl");
    let session = session.to_str().unwrap();
    let project = notes.path().join("project-dir");
    std::fs::create_dir_all(&project).unwrap();
    let cwd = project.to_str().unwrap();
    notesoup_pi(notes.path()).assert_notes_on_a_session(
        session,
        &notes
            .path()
            .join("pi/session/0195f000-0000-7000-8000-000000000005/checkpoint.md"),
        &["notes", "--cwd", cwd, "write", "checkpoint.md", "x"],
    );
    let read = stdout(&run(
        &["notes", "read", "checkpoint.md", "--session", session],
        notes.path(),
    ));
    assert!(read.ends_with("# Goal\nship\n"), "{read}");
    let durable = stdout(&run(
        &["notes", "--cwd", cwd, "write", "@human/prefs.md", "# Prefs"],
        notes.path(),
    ));
    assert_eq!(durable, "created @human/prefs.md\n");
}
