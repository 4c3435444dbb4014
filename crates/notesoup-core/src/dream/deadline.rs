//! A dreamer's process under a deadline: the hosts that run their agent as a
//! child process (`claude -p`, `pi --mode json`) read its output while a
//! watchdog waits; past the timeout the watchdog kills the child's process
//! group (the child must lead one, so the tools server it started goes too)
//! and then the child itself, which closes its pipes and ends the reading.

use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// A running dreamer and the watchdog that stops it at its deadline.
#[derive(Debug)]
pub struct Deadline {
    child: Arc<Mutex<Child>>,
    finished: Arc<(Mutex<bool>, Condvar)>,
    timed_out: Arc<AtomicBool>,
    watchdog: JoinHandle<()>,
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
    /// Starts watching `child` (its pipes already taken): past `timeout` its
    /// process group and then the child are killed.
    pub fn watch(child: Child, timeout: Duration) -> Self {
        let child = Arc::new(Mutex::new(child));
        let finished = Arc::new((Mutex::new(false), Condvar::new()));
        let timed_out = Arc::new(AtomicBool::new(false));
        let watchdog = {
            let (child, finished, timed_out) = (
                Arc::clone(&child),
                Arc::clone(&finished),
                Arc::clone(&timed_out),
            );
            std::thread::spawn(move || {
                let (done, signal) = &*finished;
                let Ok(guard) = done.lock() else { return };
                let Ok((guard, _)) = signal.wait_timeout_while(guard, timeout, |done| !*done)
                else {
                    return;
                };
                if !*guard {
                    timed_out.store(true, Ordering::SeqCst);
                    if let Ok(mut child) = child.lock() {
                        kill_group(child.id());
                        let _ = child.kill();
                    }
                }
            })
        };
        Self {
            child,
            finished,
            timed_out,
            watchdog,
        }
    }

    /// Waits for the dreamer (call it once its output is read to the end),
    /// then stops the watchdog.
    pub fn wait(self) -> Ended {
        let waited = match self.child.lock() {
            Ok(mut child) => child.wait(),
            Err(_) => Err(std::io::Error::other("the dreamer's handle was lost")),
        };
        {
            let (done, signal) = &*self.finished;
            if let Ok(mut done) = done.lock() {
                *done = true;
            }
            signal.notify_all();
        }
        let _ = self.watchdog.join();
        if self.timed_out.load(Ordering::SeqCst) {
            Ended::TimedOut
        } else {
            Ended::Exited(waited)
        }
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

/// Kills the process group `leader` leads; a child that leads none is left
/// to the caller's own kill.
fn kill_group(leader: u32) {
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{leader}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    fn sleeper(seconds: &str) -> Child {
        let mut command = Command::new("sh");
        command
            .args(["-c", &format!("sleep {seconds} & wait")])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .process_group(0);
        command.spawn().expect("sh runs")
    }

    #[test]
    fn a_dreamer_that_ends_in_time_is_waited_for() {
        let mut child = Command::new("sh")
            .args(["-c", "exit 3"])
            .spawn()
            .expect("sh runs");
        let _ = child.stdout.take();
        match Deadline::watch(child, Duration::from_secs(60)).wait() {
            Ended::Exited(Ok(status)) => assert_eq!(status.code(), Some(3)),
            other => panic!("expected an exit, got {other:?}"),
        }
    }

    #[test]
    fn a_dreamer_past_its_deadline_is_stopped_with_its_group() {
        use std::io::Read;
        let mut child = sleeper("600");
        let mut stdout = child.stdout.take().expect("piped");
        let deadline = Deadline::watch(child, Duration::from_millis(200));
        // The grandchild `sleep` holds the pipe too: reading ends only when
        // the whole group is gone.
        let mut rest = Vec::new();
        let _ = stdout.read_to_end(&mut rest);
        assert!(matches!(deadline.wait(), Ended::TimedOut));
        assert_eq!(
            Ended::timeout_error(Duration::from_secs(30)),
            "dreamer failed: timed out after 30 s and was stopped"
        );
    }
}
