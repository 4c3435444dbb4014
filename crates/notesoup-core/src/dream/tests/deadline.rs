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

use notesoup_test_support::dreamer;

use super::support::three_fresh_sessions;

/// How long the never-ending dreamers may run: long enough for the slowest
/// of them (Python) to have started its escapee on a loaded machine.
const TIMEOUT: Duration = Duration::from_secs(5);

/// The dreamer: starts the whole [`dreamer::TREE`], then either never ends
/// or exits once its escapees are running.
fn dreamer_script(pids: &Path, ends: bool) -> String {
    let end = if ends {
        let pids = pids.display();
        format!(
            "while [ ! -e {pids}/python ] || [ ! -e {pids}/setsid ]; do sleep 0.05; done; exit 0"
        )
    } else {
        "exec sleep 1000".to_owned()
    };
    dreamer::tree_script(pids, &end)
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
            mark: format!("{}={}", dreamer::TREE_MARK, uuid::Uuid::new_v4()),
            calls: 0,
        }
    }
}

/// `sh -c <script>` with `mark` (`NAME=value`) in its environment and no
/// stdin or stderr; the caller chooses its stdout.
fn marked_sh(script: &str, mark: &str) -> Command {
    let (name, value) = mark.split_once('=').expect("mark");
    let mut command = Command::new("sh");
    command
        .args(["-c", script])
        .env(name, value)
        .stdin(Stdio::null())
        .stderr(Stdio::null());
    command
}

impl DreamRunner for ProcessRunner {
    fn run(&mut self, request: DreamRequest<'_>) -> DreamResult {
        self.calls += 1;
        let (deadline, pipes) = Deadline::spawn(
            marked_sh(&self.script, &self.mark)
                .current_dir(request.home)
                .stdout(Stdio::piped()),
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

struct World {
    _dir: tempfile::TempDir,
    home: PathBuf,
    pids: PathBuf,
}

fn world() -> World {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("notes");
    three_fresh_sessions(&home);
    let pids = dir.path().join("pids");
    fs::create_dir(&pids).expect("pids");
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
    dreamer::assert_tree_stopped(&world.pids, &runner.mark, "the dream");
    assert!(!world.home.join(LOCK_FILE).exists(), "the lock is released");
    let reports = dreamer::reports(&world.home);
    assert_eq!(reports.len(), 1);
    let report = &reports[0];
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
    let (deadline, _pipes) = Deadline::spawn(
        marked_sh(&runner.script, &runner.mark).stdout(Stdio::null()),
        Duration::from_secs(600),
    )
    .expect("sh runs");
    match deadline.wait() {
        Ended::Exited(Ok(status)) => assert!(status.success(), "{status}"),
        other => panic!("expected an exit, got {other:?}"),
    }
    dreamer::assert_tree_stopped(&world.pids, &runner.mark, "its dreamer");
}

#[test]
fn a_process_left_holding_the_output_does_not_keep_the_reading_open() {
    let world = world();
    let pids = world.pids.display();
    let mark = format!("{}={}", dreamer::TREE_MARK, uuid::Uuid::new_v4());
    // The dreamer answers and exits; a `setsid` child keeps its stdout.
    let script = format!(
        "setsid sh -c 'echo $$ > {pids}/setsid.tmp && mv {pids}/setsid.tmp {pids}/setsid; exec sleep 1000' </dev/null &\n\
         while [ ! -e {pids}/setsid ]; do sleep 0.05; done\n\
         echo answered\n"
    );
    let (deadline, pipes) = Deadline::spawn(
        marked_sh(&script, &mark).stdout(Stdio::piped()),
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
    let pid = dreamer::pid_in(&world.pids, "setsid");
    assert!(
        !dreamer::alive(pid, &mark),
        "the setsid process ({pid}) outlived its dreamer"
    );
}
