//! `sync` across two notes roots: a note the model writes in a real Claude
//! Code session on root A is in the SessionStart boot of a real Claude Code
//! session on root B, whose automatic sync pulled it before the boot.

use serde_json::json;

use crate::claude::{BOOT_TEXT, Headless, one_starting, stdout_of};
use notesoup_test_support::child::bare_remote;
use notesoup_test_support::fake_anthropic::{Reply, texts};

const NOTES_WRITE: &str = "mcp__plugin_notesoup_notesoup__notes_write";

/// `notesoup ARGS` in the sandbox, as a plugin process runs; it must succeed.
fn notesoup(claude: &Headless, args: &[&str]) -> String {
    stdout_of(&claude.sb.run(args, b""))
}

#[test]
fn a_note_written_on_one_root_is_in_the_boot_on_another_after_sync() {
    let _terminal = crate::hosts::shared();
    let first = Headless::new();
    let second = Headless::new();
    let remote = bare_remote(&first.sb.home.join("remote.git"));
    let remote = remote.as_str();

    notesoup(&first, &["sync", "--remote", remote]);
    first.api.script(vec![
        Reply::tool(
            "toolu_sync_write",
            NOTES_WRITE,
            json!({"address": "@human/x.md", "content": "# X\nWritten on the first root."}),
        ),
        Reply::text("Noted."),
    ]);
    first.turn("remember x", &["--allowedTools", NOTES_WRITE]);
    assert!(first.sb.notes.join("human/x.md").is_file());
    let sent = notesoup(&first, &["sync"]);
    assert!(sent.contains("pushed"), "{sent}");

    // The second root: the same remote, automatic sync on. The wait is a
    // bound, not a delay: the boot goes on once the pull is done.
    notesoup(&second, &["sync", "--remote", remote]);
    notesoup(
        &second,
        &["sync", "--auto", "on", "--auto-wait-ms", "20000"],
    );
    assert!(!second.sb.notes.join("human/x.md").exists());
    second.api.script(vec![Reply::text("Hello.")]);
    second.turn("hi", &[]);
    let requests = second.api.take_requests();
    let boot = one_starting(&texts(&requests[0]), BOOT_TEXT);
    assert!(
        boot.contains("@human/x.md"),
        "the boot lists the note: {boot}"
    );
    assert!(second.sb.notes.join("human/x.md").is_file());
}
