//! The demo binary runs its scenario to the end and narrates the real run.

use std::process::Command;

#[test]
fn the_demo_runs_through_a_reset_and_finds_the_old_task_by_seq() {
    let notes = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_notesoup-pi"))
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
    // The notes are real files in the given home.
    let checkpoint = walk(notes.path())
        .into_iter()
        .find(|p| p.ends_with("checkpoint.md"))
        .unwrap();
    assert!(
        std::fs::read_to_string(checkpoint)
            .unwrap()
            .contains("# Checkpoint: parser split")
    );

    let usage = Command::new(env!("CARGO_BIN_EXE_notesoup-pi"))
        .arg("nonsense")
        .output()
        .unwrap();
    assert_eq!(usage.status.code(), Some(2));
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}
