//! `auto` sync: a host's boot pulls first (a sync, waited for at most
//! `autoWaitMs`), and its close-outs, resets and dreams push in the
//! background. Each is the host's own binary run as `<bin> sync
//! --notes-home <root>`, a child of its own: it outlives a short-lived hook,
//! its git runs are bounded as every sync's are, and what it says goes to
//! `.sync/auto.log`.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::{SYNC_DIR, SyncConfig};

/// When an automatic sync runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AutoMoment {
    /// Before a boot: waited for, at most `autoWaitMs`.
    Boot,
    /// After a close-out, a reset or a dream: not waited for.
    Background,
}

/// What an automatic sync did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AutoSync {
    /// `auto` is off for this root (or it has no sync set-up).
    Off,
    /// The sync finished within the wait.
    Done,
    /// The sync failed within the wait: the last line it said.
    Failed(String),
    /// Still running (a background sync, or a pull past its wait).
    Running,
    /// It could not be started.
    NotStarted(String),
}

impl AutoSync {
    /// What a boot says when the pull before it did not bring the remote's
    /// notes in: it failed, could not start, or was still running when the
    /// wait ran out. The boot is then the notes on this machine; `None`
    /// when there is nothing to say.
    pub fn boot_notice(&self) -> Option<String> {
        let why = match self {
            AutoSync::Off | AutoSync::Done => return None,
            AutoSync::Running => {
                "it did not finish within autoWaitMs and goes on in the background".to_owned()
            }
            AutoSync::Failed(reason) | AutoSync::NotStarted(reason) => {
                format!("it failed: {reason}")
            }
        };
        Some(format!(
            "notesoup: this boot is from the notes on this machine, not the remote's: the automatic sync before it did not land ({why})"
        ))
    }
}

/// Runs `<the running binary> sync --notes-home root` when `root`'s set-up
/// has `auto` on: before a boot waited for at most `autoWaitMs`, after a
/// close-out not waited for. Never fails the caller: what went wrong is
/// returned.
pub(crate) fn auto_sync(root: &Path, moment: AutoMoment) -> AutoSync {
    let config = match SyncConfig::read(root) {
        Ok(Some(config)) if config.auto => config,
        _ => return AutoSync::Off,
    };
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(err) => return AutoSync::NotStarted(err.to_string()),
    };
    let log_path = root.join(SYNC_DIR).join("auto.log");
    let log = fs::create_dir_all(root.join(SYNC_DIR)).and_then(|()| fs::File::create(&log_path));
    let (out, err) = match log.and_then(|log| Ok((log.try_clone()?, log))) {
        Ok((out, err)) => (Stdio::from(out), Stdio::from(err)),
        Err(_) => (Stdio::null(), Stdio::null()),
    };
    let mut command = Command::new(&exe);
    command
        .arg("sync")
        .arg("--notes-home")
        .arg(root)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err);
    #[cfg(unix)]
    {
        // Its own group: the host's Ctrl-C or end does not cut a push short.
        use std::os::unix::process::CommandExt;
        command.process_group(0);
    }
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(err) => return AutoSync::NotStarted(err.to_string()),
    };
    let wait = match moment {
        AutoMoment::Boot => Duration::from_millis(config.auto_wait_ms),
        AutoMoment::Background => Duration::ZERO,
    };
    let deadline = Instant::now() + wait;
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return AutoSync::Done,
            Ok(Some(_)) => {
                let said = fs::read_to_string(&log_path).unwrap_or_default();
                let last = said.lines().rfind(|line| !line.trim().is_empty());
                return AutoSync::Failed(last.unwrap_or("sync failed").to_owned());
            }
            Ok(None) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(10));
            }
            Ok(None) | Err(_) => break,
        }
    }
    // Reaped when it ends, so a long-lived host keeps no zombie; a
    // short-lived one leaves it to finish on its own.
    std::thread::spawn(move || child.wait());
    AutoSync::Running
}
