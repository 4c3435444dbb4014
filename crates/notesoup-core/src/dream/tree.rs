//! A dreamer's process tree: everything it started, found and stopped.
//!
//! The dreamer leads a process group of its own, and its environment holds
//! a token ([`TREE_VAR`]) every descendant inherits. On Linux the process
//! that runs dreamers is a child subreaper while one runs, so a descendant
//! that left the group (`setsid`, a double fork) is reparented to it when
//! its parent dies instead of vanishing under init. Stopping the tree kills
//! the group, then scans `/proc` for the rest (same group, the token, or a
//! parent in the tree) and kills and reaps them until none is left. Off
//! Linux only the group is killed.

use std::process::Command;

/// Names the token in a dreamer's environment.
pub(crate) const TREE_VAR: &str = "NOTESOUP_DREAM_TREE";

/// One dreamer's tree: its leader (the process spawned, which leads the
/// group) and the `TREE_VAR=<token>` entry its processes carry.
#[derive(Debug, Clone)]
pub(crate) struct Tree {
    leader: u32,
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    marker: Vec<u8>,
}

impl Tree {
    /// Marks `command` as the leader of a new tree: its own process group
    /// and a fresh token in its environment. Returns the token's entry.
    pub(crate) fn prepare(command: &mut Command) -> Vec<u8> {
        let token = uuid::Uuid::new_v4().to_string();
        command.env(TREE_VAR, &token);
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(command, 0);
        format!("{TREE_VAR}={token}").into_bytes()
    }

    /// The tree led by `leader`, whose processes carry `marker`.
    pub(crate) fn new(leader: u32, marker: Vec<u8>) -> Self {
        Tree { leader, marker }
    }

    /// Blocks until the leader has exited, without reaping it: while it is
    /// unreaped its pid (and so its group id) cannot name another process,
    /// so the tree can still be stopped safely by those ids.
    pub(crate) fn wait_for_leader(&self) {
        #[cfg(target_os = "linux")]
        linux::wait_unreaped(self.leader);
    }

    /// Kills every process of the tree and reaps the ones that came to this
    /// process, the leader excepted (its `Child` reaps it).
    pub(crate) fn kill(&self) {
        #[cfg(target_os = "linux")]
        linux::kill_tree(self);
        #[cfg(all(unix, not(target_os = "linux")))]
        kill_group_command(self.leader);
        #[cfg(not(unix))]
        kill_tree_command(self.leader);
    }
}

/// Off Linux there is no `/proc` to scan: the group alone is killed.
#[cfg(all(unix, not(target_os = "linux")))]
fn kill_group_command(leader: u32) {
    use std::process::Stdio;
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{leader}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// Windows has no process groups to signal; `taskkill /T` ends the tree.
#[cfg(not(unix))]
fn kill_tree_command(leader: u32) {
    use std::process::Stdio;
    let _ = Command::new("taskkill")
        .args(["/F", "/T", "/PID", &leader.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// While one dreamer or more runs, this process is a child subreaper.
#[derive(Debug)]
pub(crate) struct Subreaper(());

#[cfg(target_os = "linux")]
static SUBREAPER_HOLDERS: std::sync::Mutex<usize> = std::sync::Mutex::new(0);

impl Subreaper {
    /// Makes this process a child subreaper until the last holder drops.
    /// Best effort: without it an escapee is still found by its token, only
    /// not reaped here.
    pub(crate) fn hold() -> Self {
        #[cfg(target_os = "linux")]
        {
            let mut holders = SUBREAPER_HOLDERS
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if *holders == 0 {
                let _ = rustix::process::set_child_subreaper(Some(rustix::process::getpid()));
            }
            *holders += 1;
        }
        Subreaper(())
    }
}

impl Drop for Subreaper {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        {
            let mut holders = SUBREAPER_HOLDERS
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            *holders = holders.saturating_sub(1);
            if *holders == 0 {
                // Orphans of anything else this process runs later are
                // init's again, not left here as zombies.
                let _ = rustix::process::set_child_subreaper(None);
            }
        }
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use std::collections::HashSet;
    use std::fs;
    use std::time::Duration;

    use rustix::io::Errno;
    use rustix::process::{
        Pid, Signal, WaitId, WaitIdOptions, WaitOptions, kill_process, kill_process_group, waitid,
        waitpid,
    };

    use super::Tree;

    /// How many scans a stop makes at most: a process killed dies at once
    /// unless the kernel holds it (uninterruptible sleep), which must not
    /// hang the dream either.
    const MAX_SCANS: usize = 500;
    /// The pause between scans while killed processes are still dying.
    const SCAN_PAUSE: Duration = Duration::from_millis(2);

    /// One process as `/proc/<pid>/stat` shows it.
    struct Process {
        pid: i32,
        ppid: i32,
        group: i32,
        zombie: bool,
    }

    pub(super) fn wait_unreaped(leader: u32) {
        let Some(pid) = pid(leader) else { return };
        loop {
            match waitid(
                WaitId::Pid(pid),
                WaitIdOptions::EXITED | WaitIdOptions::NOWAIT,
            ) {
                Err(Errno::INTR) => {}
                // Exited, or not waitable here: the caller's wait decides.
                _ => return,
            }
        }
    }

    pub(super) fn kill_tree(tree: &Tree) {
        let Some(leader) = i32::try_from(tree.leader).ok() else {
            return;
        };
        if let Some(group) = pid(tree.leader) {
            let _ = kill_process_group(group, Signal::KILL);
        }
        let me = rustix::process::getpid().as_raw_nonzero().get();
        for _ in 0..MAX_SCANS {
            let members = members(leader, &tree.marker, me);
            let pids: HashSet<i32> = members.iter().map(|p| p.pid).collect();
            let mut dying = false;
            for process in &members {
                let Some(pid) = Pid::from_raw(process.pid) else {
                    continue;
                };
                if process.zombie {
                    if process.pid == leader {
                        // Its `Child` reaps it.
                    } else if process.ppid == me {
                        let _ = waitpid(Some(pid), WaitOptions::NOHANG);
                    } else if pids.contains(&process.ppid) {
                        // Reparented here once its parent, killed too, is gone.
                        dying = true;
                    }
                    continue;
                }
                if kill_process(pid, Signal::KILL).is_ok() {
                    dying = true;
                }
            }
            if !dying {
                return;
            }
            std::thread::sleep(SCAN_PAUSE);
        }
    }

    fn pid(raw: u32) -> Option<Pid> {
        i32::try_from(raw).ok().and_then(Pid::from_raw)
    }

    /// Every process of the tree: in the leader's group, carrying the
    /// marker, or a descendant of one of those. This process never is.
    fn members(leader: i32, marker: &[u8], me: i32) -> Vec<Process> {
        let Ok(entries) = fs::read_dir("/proc") else {
            return Vec::new();
        };
        let processes: Vec<Process> = entries
            .flatten()
            .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
            .filter(|&pid| pid != me)
            .filter_map(read_stat)
            .collect();
        let mut tree: HashSet<i32> = processes
            .iter()
            .filter(|p| p.group == leader || p.pid == leader || carries(p.pid, marker))
            .map(|p| p.pid)
            .collect();
        loop {
            let before = tree.len();
            for process in &processes {
                if tree.contains(&process.ppid) {
                    tree.insert(process.pid);
                }
            }
            if tree.len() == before {
                break;
            }
        }
        processes
            .into_iter()
            .filter(|p| tree.contains(&p.pid))
            .collect()
    }

    /// `pid (comm) state ppid pgrp …`; the command name may hold spaces
    /// and parentheses, so the fields are read after its last `)`.
    fn read_stat(pid: i32) -> Option<Process> {
        let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let rest = &stat[stat.rfind(')')? + 1..];
        let mut fields = rest.split_ascii_whitespace();
        let state = fields.next()?;
        let ppid = fields.next()?.parse().ok()?;
        let group = fields.next()?.parse().ok()?;
        Some(Process {
            pid,
            ppid,
            group,
            zombie: state == "Z" || state == "X",
        })
    }

    /// Whether the process's environment holds the tree's entry (another
    /// user's processes cannot be read, and are no dreamer's).
    fn carries(pid: i32, marker: &[u8]) -> bool {
        fs::read(format!("/proc/{pid}/environ")).is_ok_and(|environ| {
            environ
                .split(|&byte| byte == 0)
                .any(|entry| entry == marker)
        })
    }
}
