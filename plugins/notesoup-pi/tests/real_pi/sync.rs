//! `sync` across two notes roots: a note the model writes in a real Pi
//! session on root A is in the boot of a real Pi session on root B, whose
//! automatic sync pulled it before the boot.

use notesoup_test_support::child::bare_remote;
use serde_json::json;

use super::support::{World, find_note, text, tool};

/// `notesoup-pi ARGS` on the world's notes root, with the environment Pi
/// runs under: its stdout.
fn notesoup_pi(world: &World, args: &[&str]) -> String {
    notesoup_test_support::child::stdout_of(&mut world.notesoup_pi(args))
}

#[test]
fn a_note_written_on_one_root_is_in_the_boot_on_another_after_sync() {
    let first = World::new(200_000);
    let second = World::new(200_000);
    let remote = bare_remote(&first.path("remote.git"));

    notesoup_pi(&first, &["sync", "--remote", &remote]);
    let report = first.start(json!([
        {"respond": [
            tool("notes_write", json!({"address": "@human/x.md", "content": "# X\nWritten on the first root.\n"})),
            text("Noted."),
        ]},
        {"prompt": "Remember x."},
    ]));
    report.assert_finished(0);
    assert!(find_note(&first.notes_home().join("human"), "x.md").is_some());
    let sent = notesoup_pi(&first, &["sync"]);
    assert!(sent.contains("pushed"), "{sent}");

    // The second root: the same remote, automatic sync on. The wait is a
    // bound, not a delay: the boot goes on once the pull is done.
    notesoup_pi(&second, &["sync", "--remote", &remote]);
    notesoup_pi(
        &second,
        &["sync", "--auto", "on", "--auto-wait-ms", "20000"],
    );
    assert!(find_note(&second.notes_home().join("human"), "x.md").is_none());
    let report = second.start(json!([
        {"respond": [text("Hello.")]},
        {"prompt": "Hi."},
    ]));
    report.assert_finished(0);
    let boot = &report.requests[0][0];
    assert_eq!(boot.0, "user");
    assert!(boot.1.starts_with("<context_window>"), "{boot:?}");
    assert!(
        boot.1.contains("@human/x.md"),
        "the boot lists the note: {boot:?}"
    );
    assert!(find_note(&second.notes_home().join("human"), "x.md").is_some());
}
