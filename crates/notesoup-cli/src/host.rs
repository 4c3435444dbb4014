//! What differs per host, and only that: the binary's name and version, how
//! the session a command means is found and its tools opened, how its boot
//! is rendered, and the dreamer. Everything else about the shared commands
//! (flags, texts, output lines, exit codes) is this crate's.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;
use notesoup_core::boot::BootSections;
use notesoup_core::budget::BudgetPolicy;
use notesoup_core::dream::DreamRunner;
use notesoup_core::history::SessionLedger;
use notesoup_core::plumbing::{DreamerProcess, DreamerSetting};
use notesoup_core::tools::{ToolContext, ToolOutput};

use crate::out::Out;

/// A host binary's side of the shared commands.
pub trait CliHost {
    /// This host's own flags for choosing a session (`notes`, `boot`,
    /// `history`), e.g. Pi's `--leaf`; [`NoHostArgs`](crate::NoHostArgs)
    /// for none.
    type SessionArgs: Args + fmt::Debug;
    /// This host's own flags for starting its dreamer (`dream`), e.g. the
    /// agent's executable.
    type DreamerArgs: Args + fmt::Debug;

    /// The binary's name, as usage, errors and the man page spell it.
    const BIN: &'static str;
    /// What `--version` prints after the name: the release, then the host
    /// release it is verified with and its protocol where it has one, e.g.
    /// `0.1.0 (Pi 1.6.0, bridge protocol 7)`.
    const VERSION: &'static str;
    /// The host as notices name it: `Claude Code`, `Pi`, `dsh`
    /// ([`no_session_recorded`]).
    const HOST: &'static str;

    /// The notes root when no `--notes-home` is given: core's
    /// `NotesIdentity::default_root` over this host's environment.
    fn notes_root(&self) -> Option<PathBuf>;

    /// The agent a sync's commits name (`sync`): `PI_NOTES_AGENT`'s slug,
    /// else `anonymous`, unless the host has an agent of its own.
    fn agent(&self) -> String {
        notesoup_core::notes::NotesIdentity::agent_slug(|key| std::env::var(key).ok())
    }

    /// Runs `call` with the tools of the session `target` names. `notes`
    /// need no session (the durable homes are served without one); `history`
    /// needs one ([`Purpose::History`]), and its absence is an error that
    /// names what to pass.
    fn with_tools(
        &mut self,
        target: &Target<'_, Self::SessionArgs>,
        purpose: Purpose,
        out: &mut Out,
        call: &mut dyn FnMut(&mut dyn ToolContext) -> anyhow::Result<ToolOutput>,
    ) -> anyhow::Result<ToolOutput>;

    /// The boot of the live window of the session `target` names, or a
    /// preview of a new session's first window when there is none.
    fn boot(
        &mut self,
        target: &Target<'_, Self::SessionArgs>,
        out: &mut Out,
    ) -> anyhow::Result<BootView>;

    /// The window ledger of the session `target` names, read from its
    /// transcript (`report`).
    fn ledger(
        &mut self,
        target: &Target<'_, Self::SessionArgs>,
        out: &mut Out,
    ) -> anyhow::Result<SessionLedger>;

    /// [`CliHost::ledger`] of each of `targets`, in their order (`report
    /// --all`). Read one after another unless the host reads them on a
    /// small thread pool ([`in_parallel`]).
    fn ledgers(
        &mut self,
        targets: &[Target<'_, Self::SessionArgs>],
        out: &mut Out,
    ) -> Vec<anyhow::Result<SessionLedger>> {
        targets
            .iter()
            .map(|target| self.ledger(target, out))
            .collect()
    }

    /// The budget lines the session `target` names is held to in a window
    /// of `context_window` tokens, from this host's settings as they are
    /// now (`report`'s timeline); `None` when this host has no budget.
    fn budget(
        &mut self,
        target: &Target<'_, Self::SessionArgs>,
        context_window: u64,
        out: &mut Out,
    ) -> anyhow::Result<Option<BudgetPolicy>>;

    /// Every recorded session of the project `target` names (its `--cwd`,
    /// else the current directory), oldest first, each as `--session`
    /// takes it (`report --all`). A session continued across several
    /// records (Claude Code's `/clear` chain) is listed once.
    fn sessions(
        &mut self,
        target: &Target<'_, Self::SessionArgs>,
        out: &mut Out,
    ) -> anyhow::Result<Vec<String>>;

    /// The dreamer this host runs, stopped after `timeout`, and its
    /// `dreamer` setting.
    fn dreamer(
        &mut self,
        args: Self::DreamerArgs,
        timeout: Duration,
        out: &mut Out,
    ) -> anyhow::Result<HostDreamer>;
}

/// What a command wants a session's tools for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// The notes tools: no session is needed.
    Notes,
    /// The history tools: the session's transcript is needed.
    History,
}

/// The session a command names, as its flags give it: `--cwd` checked to
/// be a directory and made absolute, `--notes-home` made absolute.
#[derive(Debug)]
pub struct Target<'a, S> {
    /// `--cwd`.
    pub cwd: Option<PathBuf>,
    /// `--session` (an id, or a file).
    pub session: Option<&'a str>,
    /// `--notes-home`, else the host's notes root.
    pub notes_root: Option<PathBuf>,
    /// The host's own flags.
    pub host: &'a S,
}

impl<S> Target<'_, S> {
    /// `--cwd`, else the current directory.
    pub fn cwd_or_current(&self) -> anyhow::Result<PathBuf> {
        match &self.cwd {
            Some(cwd) => Ok(cwd.clone()),
            None => std::env::current_dir()
                .map_err(|error| anyhow::anyhow!("no current directory: {error}")),
        }
    }

    /// `--session` when it names a file (a transcript or session log)
    /// rather than an id: a value holding a path separator (no session id
    /// does) or naming an existing file.
    pub fn session_file(&self) -> Option<&Path> {
        self.session
            .filter(|value| value.contains(std::path::MAIN_SEPARATOR) || Path::new(value).is_file())
            .map(Path::new)
    }

    /// The notes root, or why there is none.
    pub fn notes_root(&self) -> anyhow::Result<&Path> {
        self.notes_root
            .as_deref()
            .ok_or_else(|| anyhow::anyhow!("{}", notesoup_core::plumbing::NotesHomeError::Unknown))
    }
}

/// A rendered boot.
#[derive(Debug)]
pub struct BootView {
    /// The window it opens.
    pub window_id: String,
    /// Its sections.
    pub sections: BootSections,
    /// The bound it was rendered within (`bootMaxChars`).
    pub max_chars: usize,
    /// Set for a preview: where no session is recorded (`this project`, or
    /// the project's directory).
    pub preview: Option<String>,
}

/// A host's dreamer for one dream command.
pub struct HostDreamer {
    /// Runs it.
    pub runner: Box<dyn DreamRunner>,
    /// The child process it starts and its deadline.
    pub process: DreamerProcess,
    /// The `dreamer` setting.
    pub setting: DreamerSetting,
}

impl fmt::Debug for HostDreamer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HostDreamer")
            .field("process", &self.process)
            .field("setting", &self.setting)
            .finish_non_exhaustive()
    }
}

/// A mistake in how a command was called (exit 2, as clap's own), as
/// opposed to a failure to do what it asked (exit 1).
#[derive(Debug)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Why a command has no session to look at: `no <host> session is recorded
/// for <place>`, the same words on every binary.
pub fn no_session_recorded<H: CliHost>(place: impl fmt::Display) -> String {
    format!("no {} session is recorded for {place}", H::HOST)
}

/// The session files among the entries of `dir` that `pick` names (it
/// maps each entry's path to its file, `None` to skip it), oldest first: by
/// the time each was last written, then by path. A file whose time cannot
/// be read is left out; a missing `dir` has none, another error reading it
/// is one.
pub fn files_oldest_first(
    dir: &Path,
    pick: impl Fn(PathBuf) -> Option<PathBuf>,
) -> anyhow::Result<Vec<PathBuf>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => anyhow::bail!("{}: {error}", dir.display()),
    };
    let mut files: Vec<(std::time::SystemTime, PathBuf)> = entries
        .flatten()
        .filter_map(|entry| pick(entry.path()))
        .filter_map(|path| {
            let modified = std::fs::metadata(&path).ok()?.modified().ok()?;
            Some((modified, path))
        })
        .collect();
    files.sort();
    Ok(files.into_iter().map(|(_, path)| path).collect())
}

/// `read` of each of `items`, in their order, on at most as many threads as
/// the machine runs at once (and no more than there are items); one item,
/// or one thread, is read on this thread.
pub fn in_parallel<T: Sync, R: Send>(items: &[T], read: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map_or(1, std::num::NonZeroUsize::get)
        .min(items.len());
    if threads <= 1 {
        return items.iter().map(read).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut all: Vec<(usize, R)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let at = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(item) = items.get(at) else {
                            return done;
                        };
                        done.push((at, read(item)));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|worker| match worker.join() {
                Ok(done) => done,
                Err(panic) => std::panic::resume_unwind(panic),
            })
            .collect()
    });
    all.sort_by_key(|(at, _)| *at);
    all.into_iter().map(|(_, result)| result).collect()
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::{files_oldest_first, in_parallel};

    #[test]
    fn in_parallel_keeps_the_order_of_the_items() {
        let items: Vec<u32> = (0..200).collect();
        // Uneven work, so the threads finish out of order.
        let read = |n: &u32| {
            let mut sum = 0u64;
            for step in 0..u64::from((200 - n) * 50) {
                sum = sum.wrapping_add(step);
            }
            (*n, sum)
        };
        let got: Vec<u32> = in_parallel(&items, read)
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(got, items);
        assert!(in_parallel(&[] as &[u32], read).is_empty());
        assert_eq!(in_parallel(&[7u32], |n| n + 1), [8]);
    }

    #[test]
    fn files_oldest_first_orders_by_time_then_path_and_skips_what_pick_skips() {
        let dir = tempfile::tempdir().unwrap();
        let at = |seconds: u64| SystemTime::UNIX_EPOCH + Duration::from_secs(seconds);
        for (name, seconds) in [
            ("b.jsonl", 20),
            ("c.jsonl", 10),
            ("a.jsonl", 20),
            ("x.txt", 5),
        ] {
            let file = std::fs::File::create(dir.path().join(name)).unwrap();
            file.set_modified(at(1_000_000 + seconds)).unwrap();
        }
        let jsonl = |path: std::path::PathBuf| {
            path.extension()
                .is_some_and(|e| e == "jsonl")
                .then_some(path)
        };
        let names: Vec<String> = files_oldest_first(dir.path(), jsonl)
            .unwrap()
            .into_iter()
            .map(|path| path.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["c.jsonl", "a.jsonl", "b.jsonl"]);
        // A picked path that does not exist has no time: left out.
        let missing = |path: std::path::PathBuf| Some(path.join("session.jsonl"));
        assert!(files_oldest_first(dir.path(), missing).unwrap().is_empty());
        // No folder: no files.
        let gone = dir.path().join("gone");
        assert!(files_oldest_first(&gone, Some).unwrap().is_empty());
        // A folder that is a file cannot be listed: an error naming it.
        let error = files_oldest_first(&dir.path().join("x.txt"), Some).unwrap_err();
        assert!(error.to_string().contains("x.txt"), "{error}");
    }
}
