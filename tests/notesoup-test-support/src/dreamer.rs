//! Stand-ins for a host's dreamer (`claude`, `pi`, `dsh`): executables that
//! record how they were started, and process trees that try to outlive the
//! dream, with the check that none did.

use std::path::{Path, PathBuf};

/// The variable a stand-in's tree carries, set to a fresh value per test,
/// so that a reused pid is never taken for one of its processes.
pub const TREE_MARK: &str = "NOTESOUP_TEST_TREE_MARK";

/// The processes a [`tree_script`] starts, by the file its pid is written
/// to: the dreamer itself, a child in its group, one that `setsid`s into a
/// session of its own, and a double-forked Python escapee.
pub const TREE: [&str; 4] = ["leader", "grouped", "setsid", "python"];

/// Forks, `setsid`s, forks again and lets the middle process exit, so the
/// grandchild belongs to no group or session of the dreamer and its parent
/// is gone; the grandchild writes its pid and sleeps.
const DOUBLE_FORK: &str = r#"
import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        with open(sys.argv[1] + ".tmp", "w") as f:
            f.write(str(os.getpid()))
        os.rename(sys.argv[1] + ".tmp", sys.argv[1])
        time.sleep(1000)
    os._exit(0)
os.wait()
"#;

/// The shell lines of a dreamer that starts every process of [`TREE`]
/// (writing each one's pid into `pids`, the escapees with their output away
/// from the dreamer's pipes), then runs `end`. Writes the Python escapee
/// into `pids`.
pub fn tree_script(pids: &Path, end: &str) -> String {
    std::fs::write(pids.join("double_fork.py"), DOUBLE_FORK).unwrap();
    let pids = pids.display();
    format!(
        "echo $$ > {pids}/leader.tmp && mv {pids}/leader.tmp {pids}/leader\n\
         sleep 1000 &\n\
         echo $! > {pids}/grouped.tmp && mv {pids}/grouped.tmp {pids}/grouped\n\
         setsid sh -c 'echo $$ > {pids}/setsid.tmp && mv {pids}/setsid.tmp {pids}/setsid; exec sleep 1000' </dev/null >/dev/null 2>&1 &\n\
         python3 {pids}/double_fork.py {pids}/python </dev/null >/dev/null 2>&1 &\n\
         {end}\n"
    )
}

/// Writes an executable shell script `body` (without its `#!` line) at
/// `path`.
pub fn executable(path: &Path, body: &str) {
    std::fs::write(path, format!("#!/bin/sh\n{body}")).unwrap();
    let mut permissions = std::fs::metadata(path).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(path, permissions).unwrap();
}

/// An executable called `name` in `pids` that never ends: it starts the
/// whole [`TREE`] and sleeps.
pub fn never_ending(pids: &Path, name: &str) -> PathBuf {
    let script = pids.join(name);
    executable(&script, &tree_script(pids, "exec sleep 1000"));
    script
}

/// An executable at `path` that writes its arguments, one a line, to
/// `args_file` and fails (exit 3), so a run ends right after starting it.
pub fn recording_failure(path: &Path, args_file: &Path) {
    executable(
        path,
        &format!(
            "printf '%s\\n' \"$@\" > '{}'\nexit 3\n",
            args_file.display()
        ),
    );
}

/// The pid a [`tree_script`] process wrote to `pids/name`.
pub fn pid_in(pids: &Path, name: &str) -> u32 {
    let path = pids.join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|err| panic!("{} was never written: {err}", path.display()));
    text.trim().parse().unwrap()
}

/// Whether the process `pid` is alive and carries `mark` (`NAME=value`) in
/// its environment (a zombie has no environment left, and a reused pid
/// carries no mark).
pub fn alive(pid: u32, mark: &str) -> bool {
    std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|environ| {
        environ
            .split(|&b| b == 0)
            .any(|entry| entry == mark.as_bytes())
    })
}

/// Fails the test if any process of the [`TREE`] whose pids are in `pids`
/// is still alive with `mark`: it outlived `what`.
pub fn assert_tree_stopped(pids: &Path, mark: &str, what: &str) {
    for name in TREE {
        let pid = pid_in(pids, name);
        assert!(
            !alive(pid, mark),
            "the {name} process ({pid}) outlived {what}"
        );
    }
}

/// Fails the test unless the dream of `output`, run with `--timeout 5` and
/// a dreamer that never ends (its tree's pids in `pids`, marked with
/// `mark`), was stopped: exit code 1, the stop said on stderr, no process
/// of the [`TREE`] left, the lock of `notes_home` released. Its stderr.
pub fn assert_stopped_at_timeout(
    output: &std::process::Output,
    pids: &Path,
    mark: &str,
    notes_home: &Path,
) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("dream: stopped the dreamer after 5 s"),
        "{stderr}"
    );
    assert_tree_stopped(pids, &format!("{TREE_MARK}={mark}"), "the dream");
    assert!(
        !notes_home.join(".dream.lock").exists(),
        "the lock is released"
    );
    stderr
}

/// The report a failed dream run names on stderr (`dream: run failed:
/// REASON; see PATH`).
pub fn failed_run_report(stderr: &str) -> String {
    let path = stderr
        .lines()
        .find_map(|line| {
            line.strip_prefix("dream: run failed: ")
                .and_then(|rest| rest.rsplit_once("; see "))
                .map(|(_, path)| path)
        })
        .unwrap_or_else(|| panic!("{stderr}"));
    std::fs::read_to_string(path).unwrap()
}

/// Every report in the notes home's `dreams/` folder, in name order.
pub fn reports(home: &Path) -> Vec<String> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(home.join("dreams"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|path| std::fs::read_to_string(path).unwrap())
        .collect()
}

/// A live note of a project, for a dream to read and keep.
pub const LIVE: &str = "project/demo-1a2b3c4d/parser.md";

/// A crumpled note of the same project, for a dream to delete.
pub const CRUMPLED: &str = "project/demo-1a2b3c4d/old-idea.md";

/// A note the model wrote, with `body`; `crumpled` puts it in the
/// wastebasket.
pub fn note(crumpled: bool, body: &str) -> String {
    let crumpled = if crumpled {
        "crumpledAt: 2026-02-01T00:00:00.000+00:00\n"
    } else {
        ""
    };
    format!(
        "---\norigin: self\ncreatedAt: 2026-01-01T00:00:00.000+00:00\nupdatedAt: 2026-01-01T00:00:00.000+00:00\n{crumpled}---\n\n{body}\n"
    )
}

/// Writes [`LIVE`] ("The parser is slow.") and [`CRUMPLED`] ("An abandoned
/// idea.") into the notes home `notes`.
pub fn live_and_crumpled(notes: &Path) {
    crate::files::put(&notes.join(LIVE), note(false, "The parser is slow."));
    crate::files::put(&notes.join(CRUMPLED), note(true, "An abandoned idea."));
}
