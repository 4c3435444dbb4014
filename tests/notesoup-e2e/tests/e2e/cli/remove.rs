//! Removing what must go: a person deletes a note for good (asked first,
//! crumpled first unless forced), the dream's Git history never takes in a
//! file holding a credential, and one that got there is named by doctor and
//! purged by `doctor purge --apply`.

use std::path::Path;
use std::process::Command;

use super::{Bin, Machine};

/// An AWS access key id the credential guard refuses.
const KEY: &str = "AKIAIOSFODNN7EXAMPLX";

#[test]
fn a_person_deletes_a_note_for_good() {
    let machine = Machine::new();
    for bin in Bin::ALL {
        let address = format!("@human/{}-gone.md", bin.name());
        let path = machine
            .notes()
            .join(format!("human/{}-gone.md", bin.name()));
        machine
            .run(bin, &["notes", "write", &address, "soon gone"])
            .ok();

        // No terminal to ask on: a mistake in how it was called.
        let unasked = machine.run(bin, &["notes", "delete", &address]);
        assert_eq!(unasked.code, Some(2), "{bin:?}: {unasked:?}");
        assert!(unasked.stderr.contains("pass --yes"), "{unasked:?}");
        assert!(path.exists());

        // A live note: crumple first, unless forced.
        let live = machine.run(bin, &["notes", "delete", &address, "--yes"]);
        assert_eq!(live.code, Some(1), "{bin:?}: {live:?}");
        assert_eq!(
            live.stderr,
            format!(
                "{} notes: {address} is a live note: crumple it first (notes crumple {address}), or pass --force to delete it anyway\n",
                bin.name()
            )
        );
        assert!(path.exists());

        machine.run(bin, &["notes", "crumple", &address]).ok();
        let deleted = machine.run(bin, &["notes", "delete", &address, "--yes"]);
        assert_eq!(deleted.ok(), format!("deleted {address}\n"), "{bin:?}");
        assert!(!path.exists());

        machine.run(bin, &["notes", "write", &address, "live"]).ok();
        let forced = machine.run(bin, &["notes", "delete", &address, "-y", "--force"]);
        assert_eq!(forced.ok(), format!("deleted {address}\n"), "{bin:?}");
        assert!(!path.exists());

        let missing = machine.run(bin, &["notes", "delete", &address, "--yes"]);
        assert_eq!(missing.code, Some(1));
        assert!(
            missing.stderr.starts_with("error: not_found: "),
            "{missing:?}"
        );
    }
    // Never in another agent's home.
    std::fs::create_dir_all(machine.notes().join("agents/someone-else")).unwrap();
    std::fs::write(machine.notes().join("agents/someone-else/n.md"), "theirs").unwrap();
    let foreign = machine.run(
        Bin::Claude,
        &[
            "notes",
            "delete",
            "@agents/someone-else/n.md",
            "--yes",
            "--force",
        ],
    );
    assert!(
        foreign.stderr.starts_with("error: invalid_scope: "),
        "{foreign:?}"
    );
    assert!(machine.notes().join("agents/someone-else/n.md").exists());
}

fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .expect("git runs");
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Everything the repository's objects hold, as Git reads them.
fn every_object(dir: &Path) -> String {
    let ids = git(
        dir,
        &[
            "cat-file",
            "--batch-all-objects",
            "--batch-check=%(objectname)",
        ],
    );
    ids.lines()
        .map(|id| git(dir, &["cat-file", "-p", id]))
        .collect()
}

#[test]
fn the_dream_s_history_never_takes_in_a_credential() {
    let machine = Machine::new();
    machine
        .run(
            Bin::Claude,
            &["notes", "write", "@human/plain.md", "nothing secret"],
        )
        .ok();
    let key_note = machine.notes().join("human/key.md");
    std::fs::write(&key_note, format!("aws: {KEY}\n")).unwrap();
    machine.stand_in(
        "claude",
        r#"printf '%s\n' '{"type":"result","subtype":"success","is_error":false,"result":"Report: nothing."}'"#,
    );
    let run = machine.run(Bin::Claude, &["dream", "--force"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stderr.contains(
            "dream: the baseline audit left human/key.md out of the Git history: it holds a credential ("
        ),
        "{run:?}"
    );
    let objects = every_object(&machine.notes());
    assert!(objects.contains("nothing secret"), "the rest is committed");
    assert!(!objects.contains(KEY), "{objects}");
    assert!(key_note.exists(), "the note itself stays");
}

#[test]
fn doctor_names_a_credential_in_the_history_and_purge_removes_it() {
    let machine = Machine::new();
    let notes = machine.notes();
    std::fs::create_dir_all(notes.join("human")).unwrap();
    std::fs::write(notes.join("human/plain.md"), "nothing secret\n").unwrap();
    std::fs::write(notes.join("human/key.md"), format!("aws: {KEY}\n")).unwrap();
    // A history made before the audit left such files out.
    git(&notes, &["init", "-q"]);
    for (name, value) in [("user.name", "old"), ("user.email", "old@localhost")] {
        git(&notes, &["config", name, value]);
    }
    git(&notes, &["add", "-A"]);
    git(&notes, &["commit", "-q", "-m", "baseline old"]);
    std::fs::write(notes.join("human/plain.md"), "still nothing secret\n").unwrap();
    git(&notes, &["commit", "-q", "-am", "dream old"]);
    let first = git(&notes, &["rev-list", "--max-parents=0", "HEAD"]);
    let first = &first.trim()[..12];

    for bin in Bin::ALL {
        let doctor = machine.run(bin, &["doctor"]);
        assert_eq!(doctor.code, Some(1), "{bin:?}: {doctor:?}");
        assert!(
            doctor.stdout.contains(&format!(
                ".git: commit {first} (\"baseline old\") holds a credential ("
            )) && doctor.stdout.contains(
                ") in human/key.md; remove it from the history with `doctor purge --apply`"
            ),
            "{bin:?}: {doctor:?}"
        );
        let dry = machine.run(bin, &["doctor", "purge"]);
        assert!(
            dry.ok().ends_with(
                "1 file in 2 commits; run again with --apply to rewrite the history without them\n"
            ),
            "{bin:?}: {dry:?}"
        );
    }
    assert!(
        every_object(&notes).contains(KEY),
        "a dry run changes nothing"
    );

    let purged = machine.run(Bin::Dsh, &["doctor", "purge", "--apply"]);
    assert_eq!(
        purged.ok(),
        "rewrote 2 commits without human/key.md\n",
        "{purged:?}"
    );
    assert!(!every_object(&notes).contains(KEY));
    assert_eq!(
        git(&notes, &["log", "--format=%s"]),
        "dream old\nbaseline old\n",
        "the messages stay"
    );
    assert!(git(&notes, &["show", "HEAD:human/plain.md"]).contains("still nothing secret"));
    git(&notes, &["fsck", "--no-dangling"]);
    assert!(notes.join("human/key.md").exists(), "the note itself stays");
    for bin in Bin::ALL {
        let doctor = machine.run(bin, &["doctor"]);
        assert!(
            !doctor.stdout.contains(".git: commit"),
            "{bin:?}: {doctor:?}"
        );
    }
}
