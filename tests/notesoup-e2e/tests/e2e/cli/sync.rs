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
    // Each commit names its agent, host and machine.
    let log = Command::new("git")
        .args(["log", "--format=%an", "main"])
        .current_dir(&remote)
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&log.stdout);
    for host in [
        "claude (Claude Code) on ",
        "anonymous (Pi) on ",
        "anonymous (dsh) on ",
    ] {
        assert!(log.contains(host), "{host}: {log}");
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

/// Runs `notesoup hook <event>` on `payload`, as Claude Code does.
fn hook(machine: &Machine, event: &str, payload: &serde_json::Value) -> super::Run {
    use std::io::Write;
    let mut child = machine
        .command(Bin::Claude, &["hook", event])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.to_string().as_bytes())
        .unwrap();
    super::Run::of(child.wait_with_output().unwrap())
}

#[test]
fn with_auto_on_a_boot_pulls_first_and_a_session_end_pushes() {
    let first = Machine::new();
    let mut second = Machine::new();
    let data = second.root.join("plugin-data");
    second.set_env("CLAUDE_PLUGIN_DATA", &data);
    let remote = bare_remote(&first);
    first.run(Bin::Claude, &["sync", "--remote", &remote]).ok();
    first
        .run(
            Bin::Claude,
            &["notes", "write", "@human/from-first.md", "pulled at boot"],
        )
        .ok();
    first.run(Bin::Claude, &["sync"]).ok();

    second.run(Bin::Claude, &["sync", "--remote", &remote]).ok();
    // The wait is a bound, not a delay: the boot goes on as soon as the pull
    // is done.
    let on = second.run(
        Bin::Claude,
        &["sync", "--auto", "on", "--auto-wait-ms", "20000"],
    );
    assert!(on.ok().contains("automatic: boots pull first"), "{on:?}");
    let session = |event: &str| {
        serde_json::json!({
            "session_id": "0b0e7c1a-0000-4000-8000-000000000001",
            "transcript_path": second.home.join(".claude/projects/shop/s.jsonl"),
            "cwd": second.project,
            "hook_event_name": event,
            "source": "startup",
            "reason": "other",
        })
    };
    let boot = hook(&second, "session-start", &session("SessionStart"));
    assert_eq!(boot.code, Some(0), "{boot:?}");
    assert!(boot.stdout.contains("from-first.md"), "{boot:?}");
    assert!(second.notes().join("human/from-first.md").exists());

    // A session's end pushes in the background.
    second
        .run(
            Bin::Claude,
            &[
                "notes",
                "write",
                "@human/from-second.md",
                "pushed at the end",
            ],
        )
        .ok();
    let end = hook(&second, "session-end", &session("SessionEnd"));
    assert_eq!(end.code, Some(0), "{end:?}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let listed = Command::new("git")
            .args(["ls-tree", "-r", "--name-only", "main"])
            .current_dir(&remote)
            .output()
            .unwrap();
        if String::from_utf8_lossy(&listed.stdout).contains("human/from-second.md") {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the background push never landed: {}",
            std::fs::read_to_string(second.notes().join(".sync/auto.log")).unwrap_or_default()
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // Off again: only the command syncs.
    let off = second.run(Bin::Claude, &["sync", "--auto", "off"]);
    assert!(!off.ok().contains("automatic"), "{off:?}");
}
