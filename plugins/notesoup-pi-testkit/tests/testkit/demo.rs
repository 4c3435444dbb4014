//! `notesoup-pi-reference`: the demo runs its scenario to the end and
//! narrates the real run; every subcommand answers `--help`.

use std::process::Command;

use notesoup_test_support::child;
use notesoup_test_support::files::files_under;
use notesoup_test_support::shared_a::plain_binary;

#[test]
fn the_demo_runs_through_a_reset_and_finds_the_old_task_by_seq() {
    let notes = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_notesoup-pi-reference"))
        .args(["demo", "--notes-home"])
        .arg(notes.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for expected in [
        "+ custom_message:notesoup/guidance",
        "notice [Warning] notesoup: context almost full; close out the current memory window.",
        "→ wipe_memory {}",
        "+ custom:notesoup/reset-marker",
        "notice [Info] notesoup: memory cleared · pcw:",
        "→ history_search {\"query\":\"tokenizer\",\"roles\":[\"user\"]}",
        "→ history_read {\"seq\":2}",
        "│ Split the parser module into a tokenizer and a parser, keep the tests green.",
        "THIS PROJECT · @project",
        "  - Parser split — @project/parser-split.md · ",
    ] {
        assert!(
            stdout.contains(expected),
            "missing {expected:?} in:\n{stdout}"
        );
    }
    // The run names where the notes it kept are.
    assert!(
        stdout.ends_with(&format!("the notes stay in {}.\n", notes.path().display())),
        "{stdout}"
    );
    // The notes are real files in the given home.
    let checkpoint = files_under(notes.path())
        .into_iter()
        .find(|p| p.ends_with("checkpoint.md"))
        .unwrap();
    assert!(
        std::fs::read_to_string(checkpoint)
            .unwrap()
            .contains("# Checkpoint: parser split")
    );

    let usage = Command::new(env!("CARGO_BIN_EXE_notesoup-pi-reference"))
        .arg("nonsense")
        .output()
        .unwrap();
    assert_eq!(usage.status.code(), Some(2));
}

/// A reader that has gone away ends the demo quietly: status 0, no panic on
/// stderr. The pipe's read end is closed before the demo starts writing.
#[test]
fn a_closed_pipe_ends_the_demo_quietly() {
    child::assert_quiet_without_a_reader(
        Command::new(env!("CARGO_BIN_EXE_notesoup-pi-reference")).arg("demo"),
        "demo",
    );
}

/// Every subcommand answers `--help`; `--version` names the Pi it models; a
/// mistake is refused on stderr with status 2.
#[test]
fn every_subcommand_answers_help() {
    let binary = plain_binary(
        "notesoup-pi-reference",
        env!("CARGO_BIN_EXE_notesoup-pi-reference"),
    );
    binary.assert_answers_help(&[&[], &["demo"], &["dream"]]);
    let version = binary.run(&["--version"]);
    assert_eq!(
        String::from_utf8(version.stdout).unwrap(),
        format!(
            "notesoup-pi-reference {} (Pi 1.6.0 reference host)\n",
            env!("CARGO_PKG_VERSION")
        )
    );
    binary.assert_refused(
        &["dream", "--min-hours", "soon", "--script", "x.json"],
        "--min-hours",
    );
}
