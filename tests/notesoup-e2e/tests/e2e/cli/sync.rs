//! `sync` on every binary: one machine's note reaches another through a
//! bare repository, whichever binary each machine runs; `--status` counts;
//! doctor names a conflict; no `git` on PATH is a clear error with a code.

use std::process::Command;

use super::{Bin, Machine};

fn bare_remote(machine: &Machine) -> String {
    let remote = machine.root.join("remote.git");
    let status = Command::new("git")
        .args(["init", "--quiet", "--bare"])
        .arg(&remote)
        .status()
        .unwrap();
    assert!(status.success());
    remote.display().to_string()
}

#[test]
fn a_note_travels_between_machines_on_every_binary() {
    let first = Machine::new();
    let second = Machine::new();
    let remote = bare_remote(&first);
    for (i, bin) in Bin::ALL.into_iter().enumerate() {
        let (here, there) = if i % 2 == 0 {
            (&first, &second)
        } else {
            (&second, &first)
        };
        let set_up = here.run(bin, &["sync", "--remote", &remote]);
        assert!(
            set_up.ok().starts_with("sync: ") && set_up.stdout.contains(&remote),
            "{set_up:?}"
        );
        let address = format!("@human/{}.md", bin.name());
        here.run(bin, &["notes", "write", &address, "from here"])
            .ok();
        let sent = here.run(bin, &["sync"]);
        assert!(sent.ok().contains("pushed"), "{bin:?}: {sent:?}");
        there.run(bin, &["sync", "--remote", &remote]).ok();
        there.run(bin, &["sync"]).ok();
        let status = there.run(bin, &["sync", "--status", "--json"]);
        let status: serde_json::Value = serde_json::from_str(status.ok()).unwrap();
        assert_eq!(status["behind"], 0, "{status}");
        assert_eq!(status["changed"], 0, "{status}");
        // Reading a note records the access: a change the next sync sends.
        let read = there.run(bin, &["notes", "read", &address]);
        assert!(read.ok().contains("from here"), "{bin:?}: {read:?}");
        let status = there.run(bin, &["sync", "--status", "--json"]);
        let status: serde_json::Value = serde_json::from_str(status.ok()).unwrap();
        assert_eq!(status["changed"], 1, "{status}");
    }
}

#[test]
fn a_conflict_is_said_and_doctor_names_it() {
    let first = Machine::new();
    let second = Machine::new();
    let remote = bare_remote(&first);
    for machine in [&first, &second] {
        machine.run(Bin::Pi, &["sync", "--remote", &remote]).ok();
    }
    first
        .run(Bin::Pi, &["notes", "write", "@human/db.md", "port 1"])
        .ok();
    first.run(Bin::Pi, &["sync"]).ok();
    second.run(Bin::Dsh, &["sync"]).ok();
    first
        .run(Bin::Pi, &["notes", "write", "@human/db.md", "port 2"])
        .ok();
    second
        .run(Bin::Dsh, &["notes", "write", "@human/db.md", "port 3"])
        .ok();
    first.run(Bin::Pi, &["sync"]).ok();
    let merged = second.run(Bin::Dsh, &["sync"]);
    assert!(merged.ok().contains("1 conflict(s)"), "{merged:?}");
    assert!(merged.stdout.contains("conflict: human/db.md kept as it was here; the other side is in human/db.conflict-from-"), "{merged:?}");
    let ours = second.run(Bin::Dsh, &["notes", "read", "@human/db.md"]);
    assert!(ours.ok().contains("port 3"), "{ours:?}");
    let doctor = second.run(Bin::Claude, &["doctor"]);
    assert_eq!(doctor.code, Some(1), "{doctor:?}");
    assert!(
        doctor
            .stdout
            .contains("unresolved sync conflict: another machine's version of human/db.md"),
        "{doctor:?}"
    );
    let status = second.run(Bin::Claude, &["sync", "--status"]);
    assert_eq!(status.code, Some(1), "{status:?}");
    assert!(
        status
            .stdout
            .contains("unresolved conflict: human/db.conflict-from-"),
        "{status:?}"
    );
}

#[test]
fn without_git_or_a_remote_sync_says_why() {
    let mut machine = Machine::new();
    let unset = machine.run(Bin::Claude, &["sync"]);
    assert_eq!(unset.code, Some(1));
    assert!(
        unset
            .stderr
            .starts_with("notesoup sync: not_configured: no remote is set up for "),
        "{unset:?}"
    );
    let remote = bare_remote(&machine);
    machine
        .run(Bin::Claude, &["sync", "--remote", &remote])
        .ok();
    machine
        .run(Bin::Claude, &["notes", "write", "@human/x.md", "x"])
        .ok();
    let path = machine.stand_ins.display().to_string();
    machine.set_env("PATH", path);
    let missing = machine.run(Bin::Claude, &["sync"]);
    assert_eq!(missing.code, Some(1));
    assert!(
        missing
            .stderr
            .starts_with("notesoup sync: git_missing: the git program is not on PATH"),
        "{missing:?}"
    );
    let bad = machine.run(Bin::Claude, &["sync", "--remote", "-x"]);
    assert_eq!(bad.code, Some(2), "{bad:?}");
}
