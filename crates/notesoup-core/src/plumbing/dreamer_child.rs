//! A dreamer a host runs as a child process (`claude -p`, `pi --mode json`,
//! a headless dsh), the part every such host shares: it is spawned under a
//! [`Deadline`], its prompt (when the host sends it on stdin) written and
//! its standard error read on threads of their own, so that no pipe can
//! fill and stall it, its standard output handed to the host's reader, and
//! then it is waited for. The host says only how it is started, what its
//! output means and how its failures read.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{ChildStdout, Command, Stdio};
use std::thread;
use std::time::Duration;

use crate::dream::{Deadline, DreamResult, DreamWrite, Ended};

/// What a dreamer child said and how it ended.
#[derive(Debug)]
pub struct DreamerChild<T> {
    /// What the host's reader made of its standard output.
    pub output: T,
    /// Its standard error (invalid UTF-8 replaced), for the failure line.
    pub stderr: String,
    /// How it ended.
    pub ended: Ended,
}

/// Runs `command` as the dreamer under a deadline of `timeout`: its stdin is
/// `prompt` (or nothing), `read` reads its standard output to the end, and
/// its standard error is read meanwhile. The error is the run's failure
/// when it could not be started.
pub fn run_dreamer_child<T>(
    command: &mut Command,
    timeout: Duration,
    prompt: Option<&str>,
    read: impl FnOnce(ChildStdout) -> T,
) -> Result<DreamerChild<T>, String> {
    command
        .stdin(if prompt.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let program = Path::new(command.get_program()).display().to_string();
    // The deadline spawns it as the leader of its own process tree, so a
    // timeout stops everything it started (a child still holding a pipe
    // would otherwise keep the read open).
    let (deadline, pipes) = Deadline::spawn(command, timeout)
        .map_err(|error| format!("dreamer failed: could not start {program}: {error}"))?;
    let (Some(stdout), Some(mut stderr_pipe)) = (pipes.stdout, pipes.stderr) else {
        let _ = deadline.stop();
        return Err(format!("dreamer failed: no pipes to {program}"));
    };
    // A dreamer that exits early closes its stdin, which only ends this
    // writer; no argument-length limit applies to a prompt sent this way.
    let writer = match (prompt, pipes.stdin) {
        (Some(prompt), Some(mut stdin)) => {
            let prompt = prompt.to_owned();
            Some(thread::spawn(move || {
                let _ = stdin.write_all(prompt.as_bytes());
            }))
        }
        _ => None,
    };
    let stderr_reader = thread::spawn(move || {
        let mut text = Vec::new();
        // Diagnostics only: a read failure leaves them short.
        let _ = stderr_pipe.read_to_end(&mut text);
        String::from_utf8_lossy(&text).into_owned()
    });
    let output = read(stdout);
    let ended = deadline.wait();
    let stderr = stderr_reader.join().unwrap_or_default();
    if let Some(writer) = writer {
        let _ = writer.join();
    }
    Ok(DreamerChild {
        output,
        stderr,
        ended,
    })
}

impl DreamResult {
    /// The run's result for a dreamer stopped at `timeout`: no report, and the
    /// writes it made so far, which go into the audit.
    pub fn timed_out(writes: Vec<DreamWrite>, timeout: Duration) -> DreamResult {
        DreamResult {
            report: String::new(),
            writes,
            error: Some(Ended::timeout_error(timeout)),
        }
    }

    /// The failure a dreamer's exit names: `dreamer failed: <name> exited with
    /// <status>: <diagnostics>` for an unsuccessful status, `dreamer failed:
    /// <error>` when waiting for it failed; `None` for a success.
    pub fn exit_error(
        waited: &std::io::Result<std::process::ExitStatus>,
        name: &str,
        diagnostics: impl FnOnce() -> String,
    ) -> Option<String> {
        match waited {
            Ok(status) if status.success() => None,
            Ok(status) => Some(format!(
                "dreamer failed: {name} exited with {status}: {}",
                diagnostics()
            )),
            Err(error) => Some(format!("dreamer failed: {error}")),
        }
    }

    /// The last `count` lines of a dreamer's diagnostics that `keep` keeps
    /// (each trimmed, blank ones left out), joined with ` | `: enough to name a
    /// failure; each host leaves out its own noise (stack frames, hints).
    pub fn last_diagnostic_lines(text: &str, count: usize, keep: impl Fn(&str) -> bool) -> String {
        let lines: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty() && keep(line))
            .collect();
        lines[lines.len().saturating_sub(count)..].join(" | ")
    }
}

#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::os::unix::process::ExitStatusExt;

    use super::*;

    /// A dreamer's exit names its failure, with its diagnostics only when
    /// it exited unsuccessfully.
    #[test]
    fn an_unsuccessful_exit_is_a_failure_with_its_diagnostics() {
        let exited = |code: i32| Ok(std::process::ExitStatus::from_raw(code << 8));
        let error =
            |waited, name| DreamResult::exit_error(&waited, name, || "out of tokens".to_owned());
        assert_eq!(error(exited(0), "agent"), None);
        assert_eq!(
            error(exited(2), "agent").unwrap(),
            "dreamer failed: agent exited with exit status: 2: out of tokens"
        );
        assert_eq!(
            error(Err(std::io::Error::other("no child")), "agent").unwrap(),
            "dreamer failed: no child"
        );
        let stopped = DreamResult::timed_out(Vec::new(), Duration::from_secs(5));
        assert_eq!(
            stopped.error,
            Some(Ended::timeout_error(Duration::from_secs(5)))
        );
        assert!(stopped.report.is_empty());
    }

    /// The last lines the host keeps, trimmed, blank ones left out.
    #[test]
    fn the_last_diagnostic_lines_are_the_kept_ones() {
        let text = "first\n  second  \n\n   \nat frame\nthird\n";
        let kept = |count| {
            DreamResult::last_diagnostic_lines(text, count, |line| !line.starts_with("at "))
        };
        assert_eq!(kept(2), "second | third");
        assert_eq!(kept(9), "first | second | third");
        assert_eq!(kept(0), "");
    }
}
