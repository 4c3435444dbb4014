//! `sync` on every binary: one machine's note reaches another through a
//! bare repository, whichever binary each machine runs; `--status` counts;
//! doctor names a conflict; no `git` on PATH is a clear error with a code.

use std::process::Command;

use notesoup_test_support::files::put;

use super::{Bin, Machine};

/// A fresh bare remote in `machine`'s folder: its URL.
fn bare_remote(machine: &Machine) -> String {
    notesoup_test_support::child::bare_remote(&machine.root.join("remote.git"))
}

/// Two machines set up to sync through one fresh bare remote with `bin`:
/// the first, the second and the remote's URL.
fn two_machines_on_one_remote(bin: Bin) -> (Machine, Machine, String) {
    let first = Machine::new();
    let second = Machine::new();
    let remote = bare_remote(&first);
    for machine in [&first, &second] {
        machine.run(bin, &["sync", "--remote", &remote]).ok();
    }
    (first, second, remote)
}

/// A machine whose Claude Code plugin data is a folder of its own.
fn claude_machine() -> Machine {
    let mut machine = Machine::new();
    let data = machine.root.join("plugin-data");
    machine.set_env("CLAUDE_PLUGIN_DATA", &data);
    machine
}

/// What `sync --status --json` says on `machine`.
fn sync_status(machine: &Machine, bin: Bin) -> serde_json::Value {
    let status = machine.run(bin, &["sync", "--status", "--json"]);
    serde_json::from_str(status.ok()).unwrap()
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
        let status = sync_status(there, bin);
        assert_eq!(status["behind"], 0, "{status}");
        assert_eq!(status["changed"], 0, "{status}");
        // Reading a note records the access: a change the next sync sends.
        let read = there.run(bin, &["notes", "read", &address]);
        assert!(read.ok().contains("from here"), "{bin:?}: {read:?}");
        let status = sync_status(there, bin);
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
    let (first, second, _) = two_machines_on_one_remote(Bin::Pi);
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
    let second = claude_machine();
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
    wait_for_remote(&remote, "human/from-second.md", &second);
    // Off again: only the command syncs.
    let off = second.run(Bin::Claude, &["sync", "--auto", "off"]);
    assert!(!off.ok().contains("automatic"), "{off:?}");
}

/// Waits (bounded) for the remote's branch to hold `path`; the background
/// sync's log says why when it never does.
fn wait_for_remote(remote: &str, path: &str, machine: &Machine) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !remote_holds(remote, path) {
        assert!(
            std::time::Instant::now() < deadline,
            "the background push of {path} never landed: {}",
            std::fs::read_to_string(machine.notes().join(".sync/auto.log")).unwrap_or_default()
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Whether the remote's branch holds `path`.
fn remote_holds(remote: &str, path: &str) -> bool {
    let listed = Command::new("git")
        .args(["ls-tree", "-r", "--name-only", "main"])
        .current_dir(remote)
        .output()
        .unwrap();
    String::from_utf8_lossy(&listed.stdout)
        .lines()
        .any(|line| line == path)
}

/// With `auto` on, Claude Code's close-out pushes in the background: the
/// Stop that records the close-out done starts the sync, as a reset's
/// close-out does on Pi and dsh.
#[test]
fn with_auto_on_a_claude_close_out_pushes() {
    let machine = claude_machine();
    let remote = auto_on(&machine, Bin::Claude);
    let transcript = machine.home.join(".claude/projects/shop/s.jsonl");
    let payload = |event: &str, active: bool| {
        serde_json::json!({
            "session_id": "0b0e7c1a-0000-4000-8000-000000000004",
            "transcript_path": transcript,
            "cwd": machine.project,
            "hook_event_name": event,
            "source": "startup",
            "stop_hook_active": active,
        })
    };
    let boot = hook(&machine, "session-start", &payload("SessionStart", false));
    assert_eq!(boot.code, Some(0), "{boot:?}");
    // The close-out's note, written once the boot's pull is done.
    machine
        .run(
            Bin::Claude,
            &[
                "notes",
                "write",
                "@human/closed-out.md",
                "written at the close-out",
            ],
        )
        .ok();
    // A reply past the warning line (200k window, 160k used): the first
    // Stop blocks with the close-out text, and pushes nothing.
    std::fs::create_dir_all(transcript.parent().unwrap()).unwrap();
    let reply = serde_json::json!({
        "type": "assistant", "uuid": "a1", "parentUuid": null, "isSidechain": false,
        "requestedModel": "claude-opus-5-5",
        "message": {"id": "msg-a1", "model": "claude-opus-5-5", "role": "assistant",
            "content": [{"type": "text", "text": "ok"}],
            "usage": {"input_tokens": 80_000, "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 79_990, "output_tokens": 10}},
    });
    std::fs::write(&transcript, format!("{reply}\n")).unwrap();
    let block = hook(&machine, "stop", &payload("Stop", false));
    assert_eq!(block.code, Some(0), "{block:?}");
    assert!(block.stdout.contains("\"decision\":\"block\""), "{block:?}");
    assert!(!remote_holds(&remote, "human/closed-out.md"));
    // The Stop after the close-out records it done and pushes.
    let done = hook(&machine, "stop", &payload("Stop", true));
    assert_eq!(done.code, Some(0), "{done:?}");
    assert!(done.stdout.contains("close-out done"), "{done:?}");
    wait_for_remote(&remote, "human/closed-out.md", &machine);
}

/// Puts a `git` on the machine's `PATH` that runs the real one, except that
/// a run naming `$NOTESOUP_TEST_GIT_BLOCK` (`fetch`, `push`) says so in
/// `<dir>/blocked` and then never answers, until `<dir>/release` appears
/// (then it fails). The test kills the sync there, or sees a boot go on.
fn blocking_git(machine: &Machine) -> std::path::PathBuf {
    let real = Command::new("sh")
        .args(["-c", "command -v git"])
        .output()
        .unwrap();
    let real = String::from_utf8_lossy(&real.stdout).trim().to_owned();
    let dir = machine.root.join("git-gate");
    std::fs::create_dir_all(&dir).unwrap();
    machine.stand_in(
        "git",
        &format!(
            "for arg in \"$@\"; do\n  if [ -n \"$NOTESOUP_TEST_GIT_BLOCK\" ] && [ \"$arg\" = \"$NOTESOUP_TEST_GIT_BLOCK\" ]; then\n    touch '{dir}/blocked'\n    while [ ! -e '{dir}/release' ]; do sleep 0.05; done\n    exit 1\n  fi\ndone\nexec '{real}' \"$@\"",
            dir = dir.display()
        ),
    );
    dir
}

/// Waits (bounded) for `path` to appear.
fn wait_for(path: &std::path::Path) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !path.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// The travelling notes of a machine (`human/`), by name.
fn human_notes(machine: &Machine) -> Vec<(String, String)> {
    let mut notes: Vec<(String, String)> = std::fs::read_dir(machine.notes().join("human"))
        .unwrap()
        .map(|entry| entry.unwrap())
        .map(|entry| {
            (
                entry.file_name().to_string_lossy().into_owned(),
                std::fs::read_to_string(entry.path()).unwrap(),
            )
        })
        .collect();
    notes.sort();
    notes
}

/// Where a sync is stopped, and how.
#[derive(Debug, Clone, Copy)]
enum Kill {
    /// `NOTESOUP_SYNC_FAULT=<step>`: the process aborts there.
    Fault(&'static str),
    /// SIGKILL while its `git <command>` is running.
    During(&'static str),
}

/// Two machines both ahead of their last sync; the second's sync is killed
/// at `kill`; then it syncs again and the first syncs: both hold every note
/// each of them wrote, the same, and the lock was freed.
fn a_sync_killed_then_run_again_loses_nothing(kill: Kill) {
    let (first, second, _) = two_machines_on_one_remote(Bin::Pi);
    let gate = blocking_git(&second);
    let write = |machine: &Machine, address: &str, text: &str| {
        machine
            .run(Bin::Pi, &["notes", "write", address, text])
            .ok();
    };
    write(&first, "@human/shared.md", "written on the first machine");
    first.run(Bin::Pi, &["sync"]).ok();
    second.run(Bin::Pi, &["sync"]).ok();
    // Both move: the first's sync is acknowledged (pushed); the second's
    // has to fetch, merge, write to disk and push.
    write(&first, "@human/a1.md", "one from the first");
    write(&first, "@human/a2.md", "two from the first");
    write(&first, "@human/shared.md", "edited on the first machine");
    assert!(first.run(Bin::Pi, &["sync"]).ok().contains("pushed"));
    write(&second, "@human/b1.md", "one from the second");
    write(&second, "@human/b2.md", "two from the second");

    let mut command = second.command(Bin::Pi, &["sync"]);
    command
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let status = match kill {
        Kill::Fault(step) => command.env("NOTESOUP_SYNC_FAULT", step).status().unwrap(),
        Kill::During(git_command) => {
            let mut child = command
                .env("NOTESOUP_TEST_GIT_BLOCK", git_command)
                .spawn()
                .unwrap();
            wait_for(&gate.join("blocked"));
            child.kill().unwrap();
            let status = child.wait().unwrap();
            std::fs::write(gate.join("release"), "").unwrap();
            status
        }
    };
    assert!(!status.success(), "{kill:?}: the sync was not stopped");

    // Every note the second wrote is still there, as written.
    let here = human_notes(&second);
    for (name, text) in [
        ("b1.md", "one from the second"),
        ("b2.md", "two from the second"),
    ] {
        assert!(
            here.iter().any(|(n, t)| n == name && t.ends_with(text)),
            "{kill:?}: {name} lost: {here:?}"
        );
    }
    // The lock is free: the next sync runs (a held lock would be sync_busy
    // after a minute), and both machines converge.
    let again = second.run(Bin::Pi, &["sync"]);
    assert!(again.ok().contains("pushed"), "{kill:?}: {again:?}");
    first.run(Bin::Pi, &["sync"]).ok();
    let one = human_notes(&first);
    assert_eq!(one, human_notes(&second), "{kill:?}");
    let names: Vec<&str> = one.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(
        names,
        ["a1.md", "a2.md", "b1.md", "b2.md", "shared.md"],
        "{kill:?}"
    );
    assert!(one[4].1.ends_with("edited on the first machine"), "{one:?}");
    for machine in [&first, &second] {
        let status = sync_status(machine, Bin::Pi);
        assert_eq!(
            (&status["ahead"], &status["behind"], &status["changed"]),
            (
                &serde_json::json!(0),
                &serde_json::json!(0),
                &serde_json::json!(0)
            ),
            "{kill:?}: {status}"
        );
    }
}

#[test]
fn a_sync_killed_before_its_commit_loses_nothing() {
    a_sync_killed_then_run_again_loses_nothing(Kill::Fault("commit"));
}

#[test]
fn a_sync_killed_during_its_fetch_loses_nothing() {
    a_sync_killed_then_run_again_loses_nothing(Kill::During("fetch"));
}

#[test]
fn a_sync_killed_while_writing_the_merge_to_disk_loses_nothing() {
    a_sync_killed_then_run_again_loses_nothing(Kill::Fault("write"));
}

#[test]
fn a_sync_killed_during_its_push_loses_nothing() {
    a_sync_killed_then_run_again_loses_nothing(Kill::During("push"));
}

/// The boot a host renders on `machine`: Pi's `session_start` through
/// `notesoup-pi serve`, dsh's first `window.open` through `notesoup-dsh
/// serve`, each over its pipes (the automatic sync is the serving binary
/// itself, run as a child).
fn host_boot(machine: &Machine, bin: Bin) -> (String, String) {
    let cwd = machine.project.clone();
    match bin {
        Bin::Pi => {
            let mut sidecar = pi_serve(machine);
            let state = pi_state(&cwd, vec![], None);
            sidecar.send(&serde_json::json!({"type": "event", "body": {
                "id": 1, "name": "session_start", "payload": {"type": "session_start", "reason": "startup"},
                "state": state,
            }}));
            // Notices come first, each answered as the shim does.
            let mut said = String::new();
            let action = loop {
                let action = sidecar.next();
                if action["body"]["action"]["kind"] != "notify" {
                    break action;
                }
                said.push_str(
                    action["body"]["action"]["args"]["message"]
                        .as_str()
                        .unwrap(),
                );
                said.push('\n');
                sidecar.send(&serde_json::json!({"type": "actionResult",
                    "body": {"id": action["body"]["id"], "state": state}}));
            };
            assert_eq!(action["body"]["action"]["kind"], "sendMessage", "{action}");
            let message = &action["body"]["action"]["args"]["message"];
            assert_eq!(message["customType"], "notesoup/boot", "{action}");
            drop(sidecar.take_stdin());
            (message["content"].to_string(), said)
        }
        Bin::Dsh => {
            let mut sidecar = dsh_serve(machine);
            sidecar.send(
                &serde_json::json!({"id": 2, "op": "window.open", "params": {"session":
                {"id": "0b0e7c1a-0000-4000-8000-000000000002", "cwd": cwd,
                 "model": "scripted/scripted-model", "from": 0, "events": []}}}),
            );
            let opened = sidecar.next();
            assert!(opened.get("error").is_none(), "{opened}");
            let boot = opened["result"]["context_text"]
                .as_str()
                .unwrap()
                .to_owned();
            // dsh's window has no notice: what the sidecar says is in its log.
            let (_, _, said) = sidecar.finish();
            (boot, said)
        }
        Bin::Claude => unreachable!("Claude Code boots through its hook"),
    }
}

/// With `auto` on and a remote whose git never answers a fetch, Claude
/// Code's SessionStart boots after the (small) wait from the notes here,
/// and says so once, in its notice.
/// The remote moves on (`first` syncs `later.md`) while `second` writes
/// `local.md` and waits at most 50 ms for its automatic sync, whose fetch
/// never answers (held at `blocking_git`'s gate).
fn the_remote_moves_on_out_of_reach(first: &Machine, second: &mut Machine, bin: Bin) {
    first
        .run(bin, &["notes", "write", "@human/later.md", "not in time"])
        .ok();
    first.run(bin, &["sync"]).ok();
    second
        .run(bin, &["notes", "write", "@human/local.md", "written here"])
        .ok();
    second
        .run(bin, &["sync", "--auto", "on", "--auto-wait-ms", "50"])
        .ok();
    second.set_env("NOTESOUP_TEST_GIT_BLOCK", "fetch");
}

#[test]
fn with_auto_on_a_claude_boot_never_waits_past_the_bound_and_says_so() {
    let first = Machine::new();
    let mut second = claude_machine();
    let remote = bare_remote(&first);
    let gate = blocking_git(&second);
    first.run(Bin::Claude, &["sync", "--remote", &remote]).ok();
    second.run(Bin::Claude, &["sync", "--remote", &remote]).ok();
    the_remote_moves_on_out_of_reach(&first, &mut second, Bin::Claude);
    let payload = serde_json::json!({
        "session_id": "0b0e7c1a-0000-4000-8000-000000000003",
        "transcript_path": second.home.join(".claude/projects/shop/s.jsonl"),
        "cwd": second.project,
        "hook_event_name": "SessionStart",
        "source": "startup",
    });
    let boot = hook(&second, "session-start", &payload);
    // The boot is back before the pull's fetch may have begun: the fetch
    // is awaited (bounded), then let go.
    wait_for(&gate.join("blocked"));
    std::fs::write(gate.join("release"), "").unwrap();
    assert_eq!(boot.code, Some(0), "{boot:?}");
    assert!(boot.stdout.contains("local.md"), "{boot:?}");
    assert!(!boot.stdout.contains("later.md"), "{boot:?}");
    assert_eq!(
        boot.stdout
            .matches("this boot is from the notes on this machine, not the remote's")
            .count(),
        1,
        "{boot:?}"
    );
}

/// With `auto` on, Pi's and dsh's boots pull first; a remote that never
/// answers holds a boot no longer than `autoWaitMs`, and the boot is the
/// notes as they are here.
#[test]
fn with_auto_on_pi_and_dsh_boots_pull_first_and_never_wait_past_the_bound() {
    for bin in [Bin::Pi, Bin::Dsh] {
        let first = Machine::new();
        let mut second = Machine::new();
        let remote = bare_remote(&first);
        let gate = blocking_git(&second);
        first.run(bin, &["sync", "--remote", &remote]).ok();
        first
            .run(
                bin,
                &["notes", "write", "@human/from-first.md", "pulled at boot"],
            )
            .ok();
        first.run(bin, &["sync"]).ok();
        second.run(bin, &["sync", "--remote", &remote]).ok();
        // The wait is a bound, not a delay.
        second
            .run(bin, &["sync", "--auto", "on", "--auto-wait-ms", "20000"])
            .ok();
        let (boot, said) = host_boot(&second, bin);
        assert!(boot.contains("from-first.md"), "{bin:?}: {boot}");
        assert!(!said.contains("automatic sync"), "{bin:?}: {said}");
        assert!(second.notes().join("human/from-first.md").exists());

        // The remote moves on, but this machine's git never answers a
        // fetch: the boot goes on after the (small) wait, from the notes
        // here.
        the_remote_moves_on_out_of_reach(&first, &mut second, bin);
        let (boot, said) = host_boot(&second, bin);
        assert!(
            said.contains("this boot is from the notes on this machine, not the remote's: the automatic sync before it did not land (it did not finish within autoWaitMs"),
            "{bin:?}: {said}"
        );
        // The boot is back before the pull's fetch may have begun: the
        // fetch is awaited (bounded); the note it would bring is not here
        // while it hangs; then it is let go.
        wait_for(&gate.join("blocked"));
        assert!(!second.notes().join("human/later.md").exists());
        std::fs::write(gate.join("release"), "").unwrap();
        assert!(boot.contains("local.md"), "{bin:?}: {boot}");
        assert!(!boot.contains("later.md"), "{bin:?}: {boot}");
    }
}

/// A note changed on both machines, merged, and the sync killed right after
/// writing that merge to disk: the next sync finishes the same merge, and
/// does not merge the other side's change in a second time.
#[test]
fn a_merge_killed_half_written_is_finished_not_merged_twice() {
    let (first, second, _) = two_machines_on_one_remote(Bin::Pi);
    a_shared_note_edited_on_both_then_merged_and_killed(&first, &second);
    let half = std::fs::read_to_string(second.notes().join("human/a-shared.md")).unwrap();
    assert!(half.ends_with("ONE\ntwo\nTHREE\n"), "{half}");
    assert!(!second.notes().join("human/z-later.md").exists());

    let one = synced_again(&first, &second);
    let names: Vec<&str> = one.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names, ["a-shared.md", "z-later.md"]);
    // 2, one access on the first, three on the second.
    assert!(one[0].1.contains("accessCount: 6\n"), "{}", one[0].1);
    assert!(one[0].1.ends_with("ONE\ntwo\nTHREE\n"), "{}", one[0].1);
}

/// A machine's first sync, which only takes the remote's notes, killed
/// right after writing the first of them: the next sync finishes that
/// merge (its record names no earlier commit of this machine) and moves to
/// the remote's commit, with no commit of its own to push.
#[test]
fn a_first_sync_killed_half_written_is_finished_without_a_commit_of_its_own() {
    let (first, second, remote) = two_machines_on_one_remote(Bin::Pi);
    put_human(&first, "a-first.md", &dated_note(1, "a\n"));
    put_human(&first, "z-second.md", &dated_note(1, "z\n"));
    first.run(Bin::Pi, &["sync"]).ok();
    let head = remote_head(&remote);
    sync_killed_after_its_first_write(&second);
    assert!(second.notes().join("human/a-first.md").exists());
    assert!(!second.notes().join("human/z-second.md").exists());

    second.run(Bin::Pi, &["sync"]).ok();
    assert_eq!(human_notes(&second), human_notes(&first));
    assert_eq!(remote_head(&remote), head, "nothing of its own pushed");
}

/// The commit the remote's branch is at.
fn remote_head(remote: &str) -> String {
    let head = Command::new("git")
        .args(["rev-parse", "main"])
        .current_dir(remote)
        .output()
        .unwrap();
    assert!(head.status.success(), "{head:?}");
    String::from_utf8(head.stdout).unwrap().trim().to_owned()
}

/// A merge killed right after writing a note, and that note then edited by
/// hand before the next sync: the next sync keeps the edit and counts each
/// side's reads once (the note already holds the other side's, so they are
/// not added again).
#[test]
fn a_merged_note_edited_by_hand_after_a_kill_counts_its_reads_once() {
    let (first, second, _) = two_machines_on_one_remote(Bin::Pi);
    a_shared_note_edited_on_both_then_merged_and_killed(&first, &second);
    let merged = dated_note(6, "ONE\ntwo\nTHREE\n");
    assert_eq!(
        std::fs::read_to_string(second.notes().join("human/a-shared.md")).unwrap(),
        merged
    );
    // The record names the merge and the one note it wrote.
    let record = std::fs::read_to_string(second.notes().join(".sync/merging")).unwrap();
    let lines: Vec<&str> = record.lines().collect();
    assert_eq!(lines.len(), 2, "{record}");
    assert_eq!(lines[0].split(' ').count(), 2, "{record}");
    assert_eq!(lines[1], "human/a-shared.md", "{record}");
    // The merged note, edited by hand (no read) before the next sync.
    put_human(
        &second,
        "a-shared.md",
        &dated_note(6, "ONE\ntwo\nTHREE\nfour\n"),
    );

    let one = synced_again(&first, &second);
    let names: Vec<&str> = one.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names, ["a-shared.md", "z-later.md"]);
    // 2, one read on the first, three on the second: 6, not 7.
    assert_eq!(one[0].1, dated_note(6, "ONE\ntwo\nTHREE\nfour\n"));
}

/// A merge with a conflict, the sync killed right after writing the side
/// note, and a note edited by hand before the next sync: the next sync
/// writes no second side note and keeps both edits of the edited note.
#[test]
fn a_conflicting_merge_killed_half_written_keeps_one_side_note_and_later_edits() {
    let (first, second, _) = two_machines_on_one_remote(Bin::Pi);
    put_human(&first, "a-shared.md", "one\ntwo\nthree\n");
    put_human(&first, "m-edited.md", "one\ntwo\nthree\n");
    first.run(Bin::Pi, &["sync"]).ok();
    second.run(Bin::Pi, &["sync"]).ok();
    put_human(&first, "a-shared.md", "one\ntwo from the first\nthree\n");
    put_human(&first, "m-edited.md", "ONE\ntwo\nthree\n");
    put_human(&first, "z-later.md", "from the first\n");
    first.run(Bin::Pi, &["sync"]).ok();
    put_human(&second, "a-shared.md", "one\ntwo from the second\nthree\n");
    // The side note is the first note the merge writes; then it stops.
    sync_killed_after_its_first_write(&second);
    let sides = |machine: &Machine| {
        human_notes(machine)
            .into_iter()
            .filter(|(name, _)| name.contains(".conflict-from-"))
            .collect::<Vec<_>>()
    };
    assert_eq!(sides(&second).len(), 1, "{:?}", human_notes(&second));
    assert!(!second.notes().join("human/z-later.md").exists());
    // Edited by hand before the next sync.
    put_human(&second, "m-edited.md", "one\ntwo\nTHREE\n");

    let two = synced_again(&first, &second);
    assert_eq!(sides(&second).len(), 1, "{two:?}");
    assert!(
        sides(&second)[0].1.contains("two from the first"),
        "{two:?}"
    );
    let text = |name: &str| {
        two.iter()
            .find(|(n, _)| n == name)
            .map(|(_, t)| t.clone())
            .unwrap_or_default()
    };
    assert_eq!(text("a-shared.md"), "one\ntwo from the second\nthree\n");
    assert_eq!(text("m-edited.md"), "ONE\ntwo\nTHREE\n");
    assert_eq!(text("z-later.md"), "from the first\n");
    assert_eq!(two.len(), 4, "{two:?}");
}

/// Writes `human/<name>` straight into `machine`'s notes, as an edit by
/// hand does.
fn put_human(machine: &Machine, name: &str, text: &str) {
    let dir = machine.notes().join("human");
    put(&dir.join(name), text);
}

/// A note's text: front matter dated 2026-01-01, read `count` times, then
/// `body`.
fn dated_note(count: u32, body: &str) -> String {
    format!(
        "---\norigin: self\ncreatedAt: 2026-01-01T00:00:00.000+00:00\nupdatedAt: 2026-01-01T00:00:00.000+00:00\nlastAccessed: 2026-01-01T00:00:00.000+00:00\naccessCount: {count}\n---\n\n{body}"
    )
}

/// Runs Pi's `sync` on `machine` with `NOTESOUP_SYNC_FAULT=write`: it aborts
/// right after writing the first note of its merge to disk.
fn sync_killed_after_its_first_write(machine: &Machine) {
    let killed = machine
        .command(Bin::Pi, &["sync"])
        .env("NOTESOUP_SYNC_FAULT", "write")
        .output()
        .unwrap();
    assert!(!killed.status.success(), "{killed:?}");
}

/// A shared note (read twice) reaches both machines; the first reads it once
/// and edits its first line, the second reads it three times and edits its
/// last; the first also writes a note that is written to disk after the
/// merged one. The second's sync merges and is killed after writing the
/// merged note.
fn a_shared_note_edited_on_both_then_merged_and_killed(first: &Machine, second: &Machine) {
    put_human(first, "a-shared.md", &dated_note(2, "one\ntwo\nthree\n"));
    first.run(Bin::Pi, &["sync"]).ok();
    second.run(Bin::Pi, &["sync"]).ok();
    put_human(first, "a-shared.md", &dated_note(3, "ONE\ntwo\nthree\n"));
    put_human(first, "z-later.md", &dated_note(1, "from the first\n"));
    first.run(Bin::Pi, &["sync"]).ok();
    put_human(second, "a-shared.md", &dated_note(5, "one\ntwo\nTHREE\n"));
    sync_killed_after_its_first_write(second);
}

/// The second syncs again, then the first: both hold the same travelling
/// notes, returned.
fn synced_again(first: &Machine, second: &Machine) -> Vec<(String, String)> {
    second.run(Bin::Pi, &["sync"]).ok();
    first.run(Bin::Pi, &["sync"]).ok();
    let one = human_notes(first);
    assert_eq!(one, human_notes(second));
    one
}

/// Sets `machine` up to sync with a fresh bare remote, `auto` on: the
/// remote's URL.
fn auto_on(machine: &Machine, bin: Bin) -> String {
    let remote = bare_remote(machine);
    machine.run(bin, &["sync", "--remote", &remote]).ok();
    machine
        .run(bin, &["sync", "--auto", "on", "--auto-wait-ms", "20000"])
        .ok();
    remote
}

/// Writes `@human/<name>.md` on `machine`, a note `remote` does not have.
fn note_to_push(machine: &Machine, bin: Bin, remote: &str, name: &str) {
    machine
        .run(
            bin,
            &["notes", "write", &format!("@human/{name}.md"), "to push"],
        )
        .ok();
    assert!(!remote_holds(remote, &format!("human/{name}.md")));
}

/// The session state the Pi package sends with an event.
fn pi_state(
    cwd: &std::path::Path,
    entries: Vec<serde_json::Value>,
    leaf: Option<&str>,
) -> serde_json::Value {
    let session = "01a2324d-b8ef-7034-88ed-c5815690112d";
    serde_json::json!({
        "sessionId": session,
        "header": {"type": "session", "version": 3, "id": session,
                   "timestamp": "2026-01-01T00:00:00.000Z", "cwd": cwd},
        "entriesFrom": 0, "entries": entries, "leafId": leaf, "cwd": cwd,
        "idle": true, "pendingMessages": false, "signalAborted": false,
        "model": {"provider": "faux", "id": "faux-1", "contextWindow": 200000, "maxTokens": 8192},
        "settings": {"global": {}, "project": {}}, "projectTrusted": true,
    })
}

/// `notesoup-pi serve` on `machine`, greeted.
fn pi_serve(machine: &Machine) -> notesoup_test_support::child::Proc {
    use notesoup_test_support::child::Proc;
    let mut sidecar = Proc::spawn(&mut machine.command(Bin::Pi, &["serve"]));
    let protocol = notesoup_pi::bridge::protocol::PROTOCOL_VERSION;
    sidecar.send(
        &serde_json::json!({"type": "hello", "body": {"protocol": protocol, "piVersion": "1.6.0"}}),
    );
    let ready = sidecar.next();
    assert_eq!(ready["type"], "ready", "{ready}");
    sidecar
}

/// `notesoup-dsh serve` on `machine`, greeted.
fn dsh_serve(machine: &Machine) -> notesoup_test_support::child::Proc {
    use notesoup_test_support::child::Proc;
    let mut sidecar = Proc::spawn(&mut machine.command(Bin::Dsh, &["serve"]));
    sidecar.send(&serde_json::json!({"id": 1, "op": "hello", "params":
        {"protocol": 1, "bundle": "0.1.0", "dsh": "0.1.0-rc.8", "settings": {}}}));
    let hello = sidecar.next();
    assert!(hello.get("error").is_none(), "{hello}");
    sidecar
}

/// Sends Pi event `name` with `payload` and `state`, answers each action the
/// sidecar asks for with `state` (as the shim does): the actions, and the
/// event's result.
fn pi_event(
    sidecar: &mut notesoup_test_support::child::Proc,
    id: u64,
    name: &str,
    payload: serde_json::Value,
    state: &serde_json::Value,
) -> (Vec<serde_json::Value>, serde_json::Value) {
    sidecar.send(&serde_json::json!({"type": "event", "body": {
        "id": id, "name": name, "payload": payload, "state": state,
    }}));
    let mut actions = Vec::new();
    loop {
        let message = sidecar.next();
        if message["type"] != "action" {
            assert_eq!(message["type"], "result", "{name}: {message}");
            assert_eq!(message["body"]["id"], id, "{name}: {message}");
            return (actions, message["body"].clone());
        }
        sidecar.send(&serde_json::json!({"type": "actionResult",
            "body": {"id": message["body"]["id"], "state": state}}));
        actions.push(message["body"]["action"].clone());
    }
}

/// Ends a `serve` sidecar, which must exit cleanly, then waits (bounded)
/// for its background push of `path` to reach `remote`.
fn ended_then_pushed(
    sidecar: notesoup_test_support::child::Proc,
    remote: &str,
    path: &str,
    machine: &Machine,
) {
    let (status, _, said) = sidecar.finish();
    assert!(status.success(), "{said}");
    wait_for_remote(remote, path, machine);
}

/// With `auto` on, Pi's `session_shutdown` (through `notesoup-pi serve`)
/// pushes in the background.
#[test]
fn with_auto_on_a_pi_session_shutdown_pushes() {
    let machine = Machine::new();
    let remote = auto_on(&machine, Bin::Pi);
    note_to_push(&machine, Bin::Pi, &remote, "at-shutdown");
    let mut sidecar = pi_serve(&machine);
    let state = pi_state(&machine.project, vec![], None);
    let (_, result) = pi_event(
        &mut sidecar,
        1,
        "session_shutdown",
        serde_json::json!({"type": "session_shutdown", "reason": "quit"}),
        &state,
    );
    assert!(result.get("error").is_none(), "{result}");
    ended_then_pushed(sidecar, &remote, "human/at-shutdown.md", &machine);
}

/// With `auto` on, Pi's reset (a `/fresh-window` close-out committed when
/// the run settles, through `notesoup-pi serve`) pushes in the background.
#[test]
fn with_auto_on_a_pi_reset_pushes() {
    let machine = Machine::new();
    let remote = auto_on(&machine, Bin::Pi);
    let mut sidecar = pi_serve(&machine);
    let cwd = machine.project.clone();
    // The boot (its pull pushes too), then the session holding it.
    let (actions, _) = pi_event(
        &mut sidecar,
        1,
        "session_start",
        serde_json::json!({"type": "session_start", "reason": "startup"}),
        &pi_state(&cwd, vec![], None),
    );
    let boot = actions
        .iter()
        .map(|action| &action["args"]["message"])
        .find(|message| message["customType"] == "notesoup/boot")
        .unwrap_or_else(|| panic!("no boot: {actions:?}"));
    let state = pi_state(
        &cwd,
        vec![
            serde_json::json!({"type": "custom_message", "customType": "notesoup/boot",
            "content": boot["content"], "display": false, "details": boot["details"],
            "id": "a1b2c3d4", "parentId": null, "timestamp": "2026-01-01T00:00:01.000Z"}),
        ],
        Some("a1b2c3d4"),
    );
    note_to_push(&machine, Bin::Pi, &remote, "at-reset");
    // `/fresh-window` arms the close-out; nothing is pushed yet.
    let (_, armed) = pi_event(
        &mut sidecar,
        2,
        "command",
        serde_json::json!({"name": "fresh-window", "args": ""}),
        &state,
    );
    assert!(armed.get("error").is_none(), "{armed}");
    assert!(!remote_holds(&remote, "human/at-reset.md"));
    // The run settles: the reset commits its boundary, and pushes.
    let (_, settled) = pi_event(
        &mut sidecar,
        3,
        "agent_before_settle",
        serde_json::json!({"entries": [], "continue": false, "outcome": "completed",
            "context": {"pendingMessages": [], "canContinue": false}}),
        &state,
    );
    assert!(
        settled["value"]["entries"]
            .as_array()
            .is_some_and(|e| !e.is_empty()),
        "the reset committed no boundary: {settled}"
    );
    ended_then_pushed(sidecar, &remote, "human/at-reset.md", &machine);
}

/// With `auto` on, dsh's reset (its plan, through `notesoup-dsh serve`)
/// pushes in the background.
#[test]
fn with_auto_on_a_dsh_reset_pushes() {
    let machine = Machine::new();
    let remote = auto_on(&machine, Bin::Dsh);
    let mut sidecar = dsh_serve(&machine);
    let session = serde_json::json!({"id": "0b0e7c1a-0000-4000-8000-000000000005",
        "cwd": machine.project, "model": "scripted/scripted-model", "from": 0, "events": []});
    sidecar
        .send(&serde_json::json!({"id": 2, "op": "window.open", "params": {"session": session}}));
    let opened = sidecar.next();
    assert!(opened.get("error").is_none(), "{opened}");
    // Written after the boot's pull (which pushes too).
    note_to_push(&machine, Bin::Dsh, &remote, "at-reset");
    let mut session = session;
    session["events"] = serde_json::json!([]);
    sidecar.send(
        &serde_json::json!({"id": 3, "op": "reset.plan", "params": {"session": session,
        "surface": [], "origin": "normal", "trigger": "manual"}}),
    );
    let plan = sidecar.next();
    assert!(plan.get("error").is_none(), "{plan}");
    assert!(plan["result"]["window_id"].as_str().is_some(), "{plan}");
    ended_then_pushed(sidecar, &remote, "human/at-reset.md", &machine);
}

/// With `auto` on, a finished dream pushes in the background.
#[test]
fn with_auto_on_a_finished_dream_pushes() {
    let machine = Machine::new();
    let remote = auto_on(&machine, Bin::Pi);
    note_to_push(&machine, Bin::Pi, &remote, "at-dream");
    super::dream::answering_stand_in(&machine, Bin::Pi);
    let run = machine.run(Bin::Pi, &["dream", "--force", "--timeout", "60"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stderr.contains("dream: the dreamer finished after "),
        "{run:?}"
    );
    wait_for_remote(&remote, "human/at-dream.md", &machine);
}

/// A throwaway `sshd` on a free port of 127.0.0.1: its own host key,
/// one user key authorized, everything in a temp dir; stopped when
/// dropped.
#[cfg(feature = "ssh-remote")]
struct Sshd {
    _child: notesoup_test_support::child::Reaped,
    port: u16,
    dir: tempfile::TempDir,
}

#[cfg(feature = "ssh-remote")]
impl Sshd {
    fn start() -> Sshd {
        const INSTALL: &str = "install it with `eval \"$(cargo xtask hosts sshd)\"` (Debian's openssh-server; it sets NOTESOUP_SSHD)";
        let program = std::env::var_os("NOTESOUP_SSHD")
            .filter(|path| !path.is_empty())
            .map_or_else(
                || std::path::PathBuf::from("/usr/sbin/sshd"),
                std::path::PathBuf::from,
            );
        assert!(
            program.is_file(),
            "sshd is not at {}: the SSH remote test cannot run; {INSTALL}",
            program.display()
        );
        // sshd's privilege separation needs its (root-owned) empty folder.
        std::fs::create_dir_all("/run/sshd").unwrap_or_else(|err| {
            panic!("/run/sshd is missing and cannot be made ({err}); run the test as root")
        });
        let dir = tempfile::tempdir().unwrap();
        let keygen = |name: &str| {
            let status = Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", ""])
                .arg("-f")
                .arg(dir.path().join(name))
                .status()
                .expect("ssh-keygen runs");
            assert!(status.success(), "ssh-keygen {name}");
        };
        keygen("host_key");
        keygen("user_key");
        std::fs::copy(
            dir.path().join("user_key.pub"),
            dir.path().join("authorized_keys"),
        )
        .unwrap();
        let port = notesoup_test_support::child::free_port();
        let config = dir.path().join("sshd_config");
        std::fs::write(
            &config,
            format!(
                "Port {port}\nListenAddress 127.0.0.1\nHostKey {d}/host_key\nAuthorizedKeysFile {d}/authorized_keys\n\
                 StrictModes no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n\
                 PermitRootLogin prohibit-password\nPidFile {d}/sshd.pid\n",
                d = dir.path().display()
            ),
        )
        .unwrap();
        let mut child = notesoup_test_support::child::Reaped(
            Command::new(&program)
                .arg("-D")
                .arg("-e")
                .arg("-f")
                .arg(&config)
                .stdout(std::process::Stdio::null())
                .stderr(std::fs::File::create(dir.path().join("sshd.log")).unwrap())
                .spawn()
                .expect("sshd starts"),
        );
        let listening = child.listening(port, std::time::Duration::from_secs(20));
        let sshd = Sshd {
            _child: child,
            port,
            dir,
        };
        if let Err(why) = listening {
            panic!("sshd {why}: {}", sshd.log());
        }
        sshd
    }

    /// What sshd said.
    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("sshd.log")).unwrap_or_default()
    }

    /// The `GIT_SSH_COMMAND` that logs in with the user key, trusting the
    /// throwaway host key without recording it.
    fn ssh_command(&self) -> String {
        format!(
            "ssh -i {} -p {} -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR",
            self.dir.path().join("user_key").display(),
            self.port
        )
    }
}

/// Two machines sync through a bare repository reached over SSH (a real
/// `sshd` on 127.0.0.1, the system `ssh` as git's transport).
#[cfg(feature = "ssh-remote")]
#[test]
fn two_machines_sync_over_ssh() {
    let sshd = Sshd::start();
    let mut first = Machine::new();
    let mut second = Machine::new();
    let remote = bare_remote(&first);
    let user = Command::new("id").arg("-un").output().unwrap();
    let user = String::from_utf8_lossy(&user.stdout).trim().to_owned();
    let url = format!("ssh://{user}@127.0.0.1:{}{remote}", sshd.port);
    for machine in [&mut first, &mut second] {
        machine.set_env("GIT_SSH_COMMAND", sshd.ssh_command());
        machine.run(Bin::Pi, &["sync", "--remote", &url]).ok();
    }
    first
        .run(
            Bin::Pi,
            &["notes", "write", "@human/over-ssh.md", "from the first"],
        )
        .ok();
    let sent = first.run(Bin::Pi, &["sync"]);
    assert!(sent.ok().contains("pushed"), "{sent:?}: {}", sshd.log());
    assert!(remote_holds(&remote, "human/over-ssh.md"));
    second.run(Bin::Pi, &["sync"]).ok();
    second
        .run(
            Bin::Dsh,
            &["notes", "write", "@human/back.md", "from the second"],
        )
        .ok();
    assert!(second.run(Bin::Dsh, &["sync"]).ok().contains("pushed"));
    first.run(Bin::Pi, &["sync"]).ok();
    assert_eq!(human_notes(&first), human_notes(&second));
    assert_eq!(human_notes(&first).len(), 2);
    let status = sync_status(&first, Bin::Pi);
    assert_eq!(
        (&status["ahead"], &status["behind"], &status["offline"]),
        (
            &serde_json::json!(0),
            &serde_json::json!(0),
            &serde_json::Value::Null
        ),
        "{status}"
    );
}
