//! A dreamer run as a real process tree under its deadline: a dreamer that
//! never ends, and processes that leave its group (`setsid`, a double fork
//! with `os.setsid()`), are all stopped, the lock is released, the failure
//! is reported and the next dream runs.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use notesoup_core::dream::{
    Deadline, DreamOptions, DreamRequest, DreamResult, DreamRunner, Ended, LOCK_FILE, run_dream,
};

use super::support::put;

/// How long the never-ending dreamers may run: long enough for the slowest
/// of them (Python) to have started its escapee on a loaded machine.
const TIMEOUT: Duration = Duration::from_secs(5);

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

/// The dreamer: writes its own pid, starts a child in its group, one that
/// `setsid`s into its own session and one double-forked Python escapee
/// (both with their output away from the dreamer's pipes), then either
/// never ends or exits once its escapees are running.
fn dreamer_script(pids: &Path, ends: bool) -> String {
    let pids = pids.display();
    let end = if ends {
        format!(
            "while [ ! -e {pids}/python ] || [ ! -e {pids}/setsid ]; do sleep 0.05; done; exit 0"
        )
    } else {
        "exec sleep 1000".to_owned()
    };
    format!(
        "echo $$ > {pids}/leader.tmp && mv {pids}/leader.tmp {pids}/leader\n\
         sleep 1000 &\n\
         echo $! > {pids}/grouped.tmp && mv {pids}/grouped.tmp {pids}/grouped\n\
         setsid sh -c 'echo $$ > {pids}/setsid.tmp && mv {pids}/setsid.tmp {pids}/setsid; exec sleep 1000' </dev/null >/dev/null 2>&1 &\n\
         python3 {pids}/double_fork.py {pids}/python </dev/null >/dev/null 2>&1 &\n\
         {end}\n"
    )
}

/// A dreamer run as `sh -c <script>` through [`Deadline`], the way the
/// hosts run theirs. `mark` is put in its environment, to tell its
/// processes from any other that reuses a pid.
struct ProcessRunner {
    script: String,
    mark: String,
    calls: usize,
}

impl ProcessRunner {
    fn new(script: String) -> Self {
        ProcessRunner {
            script,
            mark: format!("NOTESOUP_TEST_TREE_MARK={}", uuid::Uuid::new_v4()),
            calls: 0,
        }
    }
}

impl DreamRunner for ProcessRunner {
    fn run(&mut self, request: DreamRequest<'_>) -> DreamResult {
        self.calls += 1;
        let (name, value) = self.mark.split_once('=').expect("mark");
        let (deadline, pipes) = Deadline::spawn(
            Command::new("sh")
                .args(["-c", &self.script])
                .current_dir(request.home)
                .env(name, value)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::null()),
            TIMEOUT,
        )
        .expect("sh runs");
        let mut output = String::new();
        let _ = pipes.stdout.expect("piped").read_to_string(&mut output);
        match deadline.wait() {
            Ended::TimedOut => DreamResult::failed(Ended::timeout_error(TIMEOUT)),
            Ended::Exited(Ok(status)) if status.success() => DreamResult {
                report: "done".to_owned(),
                ..DreamResult::default()
            },
            Ended::Exited(other) => DreamResult::failed(format!("dreamer failed: {other:?}")),
        }
    }
}

/// Whether a process `pid` that carries `mark` is still alive (a zombie
/// has no environment left, and a reused pid carries no mark).
fn alive(pid: u32, mark: &str) -> bool {
    fs::read(format!("/proc/{pid}/environ")).is_ok_and(|environ| {
        environ
            .split(|&b| b == 0)
            .any(|entry| entry == mark.as_bytes())
    })
}

fn pid_in(pids: &Path, name: &str) -> u32 {
    let path = pids.join(name);
    let text = fs::read_to_string(&path)
        .unwrap_or_else(|err| panic!("{} was never written: {err}", path.display()));
    text.trim().parse().expect("a pid")
}

struct World {
    _dir: tempfile::TempDir,
    home: PathBuf,
    pids: PathBuf,
}

fn world() -> World {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("notes");
    for session in ["s1", "s2", "s3"] {
        put(
            &home,
            &format!("pi/session/{session}/checkpoint.md"),
            "---\norigin: self\n---\n\ngoal\n",
        );
    }
    let pids = dir.path().join("pids");
    fs::create_dir(&pids).expect("pids");
    fs::write(pids.join("double_fork.py"), DOUBLE_FORK).expect("script");
    World {
        _dir: dir,
        home,
        pids,
    }
}

#[test]
fn a_dreamer_that_never_ends_is_stopped_with_every_process_it_started() {
    let world = world();
    let mut runner = ProcessRunner::new(dreamer_script(&world.pids, false));
    let options = DreamOptions::new(&world.home, jiff::Timestamp::now());
    let output = run_dream(&options, &mut runner);

    assert_eq!(output.exit_code, 1, "{:?}", output.lines);
    for name in ["leader", "grouped", "setsid", "python"] {
        let pid = pid_in(&world.pids, name);
        assert!(
            !alive(pid, &runner.mark),
            "the {name} process ({pid}) outlived the dream"
        );
    }
    assert!(!world.home.join(LOCK_FILE).exists(), "the lock is released");
    let reports: Vec<_> = fs::read_dir(world.home.join("dreams"))
        .expect("dreams")
        .map(|entry| entry.expect("entry").path())
        .collect();
    assert_eq!(reports.len(), 1);
    let report = fs::read_to_string(&reports[0]).expect("report");
    assert!(report.contains("(failed)"), "{report}");
    assert!(
        report.contains("dreamer failed: timed out after 5 s and was stopped"),
        "{report}"
    );

    // The next dream starts: nothing is left holding the lock.
    let mut next = ProcessRunner::new("exit 0".to_owned());
    let mut options = DreamOptions::new(&world.home, jiff::Timestamp::now());
    options.force = true;
    let output = run_dream(&options, &mut next);
    assert_eq!(next.calls, 1, "{:?}", output.lines);
    assert_eq!(output.exit_code, 0, "{:?}", output.lines);
}

#[test]
fn what_a_dreamer_leaves_running_is_stopped_when_it_ends() {
    let world = world();
    let runner = ProcessRunner::new(dreamer_script(&world.pids, true));
    let (name, value) = runner.mark.split_once('=').expect("mark");
    let (deadline, _pipes) = Deadline::spawn(
        Command::new("sh")
            .args(["-c", &runner.script])
            .env(name, value)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
        Duration::from_secs(600),
    )
    .expect("sh runs");
    match deadline.wait() {
        Ended::Exited(Ok(status)) => assert!(status.success(), "{status}"),
        other => panic!("expected an exit, got {other:?}"),
    }
    for name in ["leader", "grouped", "setsid", "python"] {
        let pid = pid_in(&world.pids, name);
        assert!(
            !alive(pid, &runner.mark),
            "the {name} process ({pid}) outlived its dreamer"
        );
    }
}

#[test]
fn a_process_left_holding_the_output_does_not_keep_the_reading_open() {
    let world = world();
    let pids = world.pids.display();
    let mark = format!("NOTESOUP_TEST_TREE_MARK={}", uuid::Uuid::new_v4());
    let (name, value) = mark.split_once('=').expect("mark");
    // The dreamer answers and exits; a `setsid` child keeps its stdout.
    let script = format!(
        "setsid sh -c 'echo $$ > {pids}/setsid.tmp && mv {pids}/setsid.tmp {pids}/setsid; exec sleep 1000' </dev/null &\n\
         while [ ! -e {pids}/setsid ]; do sleep 0.05; done\n\
         echo answered\n"
    );
    let (deadline, pipes) = Deadline::spawn(
        Command::new("sh")
            .args(["-c", &script])
            .env(name, value)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null()),
        Duration::from_secs(120),
    )
    .expect("sh runs");
    let mut output = String::new();
    let _ = pipes.stdout.expect("piped").read_to_string(&mut output);
    assert_eq!(output, "answered\n");
    match deadline.wait() {
        Ended::Exited(Ok(status)) => assert!(status.success(), "{status}"),
        other => panic!("the dreamer ended by itself, got {other:?}"),
    }
    let pid = pid_in(&world.pids, "setsid");
    assert!(
        !alive(pid, &mark),
        "the setsid process ({pid}) outlived its dreamer"
    );
}
