//! A dreamer's process under a deadline: the hosts that run their agent as a
//! child process (`claude -p`, `pi --mode json`, a headless dsh) spawn it
//! through [`Deadline::spawn`], read its output while a watchdog waits, and
//! then [`Deadline::wait`]. Past the timeout the watchdog stops the whole
//! tree the dreamer started (see [`super::tree`]: its process group, and on
//! Linux every descendant that left the group too), which closes its pipes
//! and ends the reading. When the dreamer ends by itself, whatever it left
//! running is stopped as well (on Linux at once, so a process it left
//! holding its output cannot keep the host reading until the deadline):
//! nothing a dream starts outlives it.

use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, ExitStatus};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use super::tree::{Subreaper, Tree};

/// A running dreamer and the watchdog that stops it at its deadline.
#[derive(Debug)]
pub(crate) struct Deadline {
    child: Child,
    tree: Tree,
    finished: Arc<(Mutex<bool>, Condvar)>,
    timed_out: Arc<AtomicBool>,
    watchdog: JoinHandle<()>,
    /// On Linux: stops the rest of the tree as soon as the dreamer exits,
    /// so a process it left holding its output cannot keep the host
    /// reading until the deadline.
    leader_watch: Option<JoinHandle<()>>,
    /// Held until the tree is stopped and reaped.
    subreaper: Subreaper,
}

/// The pipes of a spawned dreamer (each `Some` when the command asked for
/// it with `Stdio::piped()`).
#[derive(Debug)]
pub(crate) struct DreamerPipes {
    /// Its standard input.
    pub stdin: Option<ChildStdin>,
    /// Its standard output.
    pub stdout: Option<ChildStdout>,
    /// Its standard error.
    pub stderr: Option<ChildStderr>,
}

/// How a watched dreamer ended.
#[derive(Debug)]
pub enum Ended {
    /// It exited by itself (or waiting for it failed).
    Exited(std::io::Result<ExitStatus>),
    /// The deadline passed and it was killed.
    TimedOut,
}

impl Deadline {
    /// Spawns `command` (the host sets its program, arguments, directory,
    /// environment and pipes) as the leader of a process tree of its own
    /// and starts watching it: past `timeout` the whole tree is killed.
    pub(crate) fn spawn(
        command: &mut Command,
        timeout: Duration,
    ) -> std::io::Result<(Deadline, DreamerPipes)> {
        let marker = Tree::prepare(command);
        // Before the spawn, so no escapee of even the first instant is lost.
        let subreaper = Subreaper::hold();
        let mut child = command.spawn()?;
        let pipes = DreamerPipes {
            stdin: child.stdin.take(),
            stdout: child.stdout.take(),
            stderr: child.stderr.take(),
        };
        let tree = Tree::new(child.id(), marker);
        let finished = Arc::new((Mutex::new(false), Condvar::new()));
        let timed_out = Arc::new(AtomicBool::new(false));
        let watchdog = {
            let (tree, finished, timed_out) =
                (tree.clone(), Arc::clone(&finished), Arc::clone(&timed_out));
            // The watchdog needs only the tree's ids, never the `Child`:
            // `wait` may be blocked on the child while the deadline passes.
            std::thread::spawn(move || {
                let (done, signal) = &*finished;
                let Ok(guard) = done.lock() else { return };
                let Ok((guard, _)) = signal.wait_timeout_while(guard, timeout, |done| !*done)
                else {
                    return;
                };
                if !*guard {
                    timed_out.store(true, Ordering::SeqCst);
                    tree.kill();
                }
            })
        };
        #[cfg(target_os = "linux")]
        let leader_watch = {
            let tree = tree.clone();
            Some(std::thread::spawn(move || {
                tree.wait_for_leader();
                tree.kill();
            }))
        };
        // Elsewhere the leader cannot be waited for without reaping it.
        #[cfg(not(target_os = "linux"))]
        let leader_watch = None;
        let deadline = Deadline {
            child,
            tree,
            finished,
            timed_out,
            watchdog,
            leader_watch,
            subreaper,
        };
        Ok((deadline, pipes))
    }

    /// Waits for the dreamer (call it once its output is read to the end),
    /// stops the watchdog, then stops whatever the dreamer left running.
    pub(crate) fn wait(self) -> Ended {
        let Deadline {
            mut child,
            tree,
            finished,
            timed_out,
            watchdog,
            leader_watch,
            subreaper,
        } = self;
        tree.wait_for_leader();
        {
            let (done, signal) = &*finished;
            if let Ok(mut done) = done.lock() {
                *done = true;
            }
            signal.notify_all();
        }
        let _ = watchdog.join();
        // On Linux it has stopped what the dreamer left running.
        if let Some(leader_watch) = leader_watch {
            let _ = leader_watch.join();
        }
        let waited = child.wait();
        // Off Linux the leader cannot be waited for unreaped, so its group
        // is stopped only once it has exited.
        #[cfg(not(target_os = "linux"))]
        tree.kill();
        drop(subreaper);
        if timed_out.load(Ordering::SeqCst) {
            Ended::TimedOut
        } else {
            Ended::Exited(waited)
        }
    }

    /// Stops the dreamer and its tree now (e.g. its pipes could not be
    /// used) and waits for it.
    pub(crate) fn stop(self) -> Ended {
        self.tree.kill();
        self.wait()
    }
}

impl Ended {
    /// The run's error for a dreamer stopped at `timeout`.
    pub fn timeout_error(timeout: Duration) -> String {
        format!(
            "dreamer failed: timed out after {} s and was stopped",
            timeout.as_secs()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Stdio;

    #[test]
    fn a_dreamer_that_ends_in_time_is_waited_for() {
        let (deadline, _) = Deadline::spawn(
            Command::new("sh").args(["-c", "exit 3"]),
            Duration::from_secs(60),
        )
        .expect("sh runs");
        match deadline.wait() {
            Ended::Exited(Ok(status)) => assert_eq!(status.code(), Some(3)),
            other => panic!("expected an exit, got {other:?}"),
        }
    }

    #[test]
    fn a_dreamer_past_its_deadline_is_stopped_with_its_group() {
        use std::io::Read;
        let (deadline, pipes) = Deadline::spawn(
            Command::new("sh")
                .args(["-c", "sleep 600 & wait"])
                .stdin(Stdio::null())
                .stdout(Stdio::piped()),
            Duration::from_millis(200),
        )
        .expect("sh runs");
        // The grandchild `sleep` holds the pipe too: reading ends only when
        // the whole group is gone.
        let mut rest = Vec::new();
        let _ = pipes.stdout.expect("piped").read_to_end(&mut rest);
        assert!(matches!(deadline.wait(), Ended::TimedOut));
        assert_eq!(
            Ended::timeout_error(Duration::from_secs(30)),
            "dreamer failed: timed out after 30 s and was stopped"
        );
    }
}
