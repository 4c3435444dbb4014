//! The system `git` binary, for transport only (fetch, push, merge-base,
//! counts): it brings the user's credentials, SSH agent and helpers. Each
//! run is bounded by a deadline; at the deadline its whole process group
//! (an `ssh` it started too) is killed.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use super::SyncError;

/// What one `git` run said.
#[derive(Debug)]
pub(crate) struct GitOutput {
    pub(crate) success: bool,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

/// Runs `git --git-dir <repo> <args>` within `timeout`. `git` missing is
/// [`SyncError::GitMissing`]; a run past its deadline is
/// [`SyncError::GitTimeout`]; a run that fails is returned as it is, for
/// the caller to name.
pub(crate) fn run_git(
    repo: &Path,
    args: &[&str],
    timeout: Duration,
) -> Result<GitOutput, SyncError> {
    let mut command = Command::new("git");
    command
        .arg("--git-dir")
        .arg(repo)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Never wait for a person to type a password: a credential helper
        // or an SSH agent answers, or the run fails.
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("LC_ALL", "C");
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        command.process_group(0);
    }
    let what = args.first().copied().unwrap_or("git").to_owned();
    let mut child = command.spawn().map_err(|err| {
        if err.kind() == std::io::ErrorKind::NotFound {
            SyncError::GitMissing
        } else {
            SyncError::Io {
                action: "start git",
                detail: err.to_string(),
            }
        }
    })?;
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        thread::spawn(move || {
            let mut text = Vec::new();
            if let Some(mut pipe) = pipe {
                // Bounded: git says little; more is not kept.
                let _ = pipe.by_ref().take(1 << 20).read_to_end(&mut text);
                let _ = std::io::copy(&mut pipe, &mut std::io::sink());
            }
            String::from_utf8_lossy(&text).into_owned()
        })
    };
    let stdout = drain(
        child
            .stdout
            .take()
            .map(|pipe| Box::new(pipe) as Box<dyn Read + Send>),
    );
    let stderr = drain(
        child
            .stderr
            .take()
            .map(|pipe| Box::new(pipe) as Box<dyn Read + Send>),
    );
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() >= deadline => break None,
            Ok(None) => thread::sleep(Duration::from_millis(5)),
            Err(err) => {
                return Err(SyncError::Io {
                    action: "wait for git",
                    detail: err.to_string(),
                });
            }
        }
    };
    let Some(status) = status else {
        kill_group(&mut child);
        let _ = child.wait();
        return Err(SyncError::GitTimeout {
            command: what,
            seconds: timeout.as_secs_f64().ceil() as u64,
        });
    };
    let stdout = stdout.join().unwrap_or_default();
    let stderr = stderr.join().unwrap_or_default();
    Ok(GitOutput {
        success: status.success(),
        stdout,
        stderr,
    })
}

#[cfg(unix)]
fn kill_group(child: &mut std::process::Child) {
    use rustix::process::{Pid, Signal, kill_process_group};
    if let Some(pid) = i32::try_from(child.id()).ok().and_then(Pid::from_raw) {
        let _ = kill_process_group(pid, Signal::KILL);
    }
}

#[cfg(not(unix))]
fn kill_group(child: &mut std::process::Child) {
    let _ = child.kill();
}

/// The last line of what git said on stderr that means something, for an
/// error (at most 300 characters).
pub(crate) fn last_words(output: &GitOutput) -> String {
    let line = output
        .stderr
        .lines()
        .map(str::trim)
        .rfind(|line| !line.is_empty() && !line.starts_with("hint:"))
        .unwrap_or("git failed without a message");
    line.chars().take(300).collect()
}
