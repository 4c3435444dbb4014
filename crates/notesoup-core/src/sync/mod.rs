//! Sync: the notes follow their human across machines over a Git remote.
//!
//! Everything sync keeps is under `<root>/.sync/`: `config.json` (the
//! remote, the branch, which homes travel, what stays home), `repo.git`
//! (a bare repository of its own, so the dream's audit repository, the
//! root's `.git`, is never touched) and `lock` (one sync at a time on a
//! machine). A sync commits the travelling notes as they are, fetches the
//! remote branch, merges note by note (`merge.rs`: a note changed on one
//! side takes that side; changed on both, the frontmatter merges field by
//! field and the body three-way by line; a body conflict keeps ours and
//! writes theirs beside it as `<name>.conflict-from-<machine>-<commit>.md`),
//! writes the result to disk and pushes. The `git` binary is the transport
//! only (`git.rs`), bounded by a deadline. See `docs/sync.md`.

mod auto;
mod git;
mod merge;
mod record;
mod repo;
mod tree;

#[cfg(test)]
mod tests;

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use gix::ObjectId;
use serde::{Deserialize, Serialize};

pub use self::auto::AutoSync;
use self::git::{last_words, run_git};
use self::merge::{NoteTree, SideName, merge_trees};
use self::record::MergeRecord;
use self::repo::{Signature, SyncRepo};
use self::tree::{Applied, Scope, apply, note_path, read_notes};
use crate::notes::{NoteStore, find_secret, slugify};
use crate::plumbing::{Links, read_small_file};

/// The folder below the notes root that holds sync's own state (never a
/// note; the dream's audit leaves it out).
pub(crate) const SYNC_DIR: &str = ".sync";
/// The marker in a conflict's side note's name.
pub(crate) const CONFLICT_MARK: &str = ".conflict-from-";
/// How many times a push that lost the race fetches, merges and tries again.
const MAX_PUSH_ATTEMPTS: usize = 4;
/// How long a sync waits for another sync on this machine to finish.
const LOCK_WAIT: Duration = Duration::from_secs(60);
/// The reference the remote branch is fetched into.
const REMOTE_REF: &str = "refs/notesoup/remote";
/// The homes that travel unless the configuration says otherwise.
const DEFAULT_HOMES: [&str; 4] = ["project", "human", "agents", "models"];

/// Why a sync could not be done. Each has a stable code.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// No remote is set up for this notes root.
    #[error("no remote is set up for {0}; run `sync --remote URL` first")]
    NotConfigured(PathBuf),
    /// `.sync/config.json` cannot be read.
    #[error("{path}: {detail}")]
    Config {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
    /// A remote, branch, home or excluded path that cannot be used.
    #[error("{0}")]
    Invalid(String),
    /// No `git` on PATH.
    #[error(
        "the git program is not on PATH; sync uses it to reach the remote (install Git, e.g. `apt install git`)"
    )]
    GitMissing,
    /// `git` ran past its deadline and was stopped.
    #[error(
        "git {command} did not finish within {seconds} s and was stopped; is the remote reachable?"
    )]
    GitTimeout {
        /// The git subcommand.
        command: String,
        /// The deadline.
        seconds: u64,
    },
    /// The remote could not be read or written.
    #[error("the remote {remote} cannot be reached: {detail}")]
    Unreachable {
        /// The remote's URL.
        remote: String,
        /// What git said.
        detail: String,
    },
    /// The remote refused the push (not a lost race: a protected branch,
    /// a checked-out branch of a non-bare repository, no write access).
    #[error("the remote {remote} refused the push: {detail}")]
    PushRefused {
        /// The remote's URL.
        remote: String,
        /// What git said.
        detail: String,
    },
    /// Every push lost the race to another machine's.
    #[error("the push lost the race {0} times to other machines' pushes; sync again")]
    PushRejected(usize),
    /// An outgoing note holds a credential: nothing was pushed.
    #[error(
        "{path} holds a credential ({kind}) on line {line}; nothing was pushed and no note was changed. Take the secret out of the note (keep a reference to where it lives), or exclude the note from sync"
    )]
    SecretDetected {
        /// The note's path below the root.
        path: String,
        /// What kind of credential.
        kind: String,
        /// The line it is on.
        line: usize,
    },
    /// Another sync held the lock for too long.
    #[error("another sync of this notes root is running (it holds {0}); try again when it is done")]
    Busy(PathBuf),
    /// The sync repository failed.
    #[error("the sync repository failed: {0}")]
    Repo(String),
    /// A filesystem operation failed.
    #[error("cannot {action}: {detail}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// The error.
        detail: String,
    },
}

impl SyncError {
    /// The stable code: `not_configured`, `invalid_config`, `invalid`,
    /// `git_missing`, `git_timeout`, `remote_unreachable`, `push_refused`,
    /// `push_rejected`,
    /// `secret_detected`, `sync_busy`, `repo_error`, `io_error`.
    pub fn code(&self) -> &'static str {
        match self {
            SyncError::NotConfigured(_) => "not_configured",
            SyncError::Config { .. } => "invalid_config",
            SyncError::Invalid(_) => "invalid",
            SyncError::GitMissing => "git_missing",
            SyncError::GitTimeout { .. } => "git_timeout",
            SyncError::Unreachable { .. } => "remote_unreachable",
            SyncError::PushRefused { .. } => "push_refused",
            SyncError::PushRejected(_) => "push_rejected",
            SyncError::SecretDetected { .. } => "secret_detected",
            SyncError::Busy(_) => "sync_busy",
            SyncError::Repo(_) => "repo_error",
            SyncError::Io { .. } => "io_error",
        }
    }

    pub(crate) fn io(action: &'static str, err: impl std::fmt::Display) -> SyncError {
        SyncError::Io {
            action,
            detail: err.to_string(),
        }
    }
}

/// A notes root's sync set-up, `<root>/.sync/config.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SyncConfig {
    /// The remote's URL (anything `git fetch` takes: a path, `ssh://`,
    /// `git@host:path`, `https://`, `git://`).
    pub remote: String,
    /// The remote branch (default `main`).
    #[serde(default = "default_branch")]
    pub branch: String,
    /// The homes that travel: `project`, `human`, `agents`, `models`,
    /// `session` (default: all but `session`).
    #[serde(default = "default_homes")]
    pub homes: Vec<String>,
    /// Paths below the root that stay on this machine (a note, or a folder
    /// and everything below it).
    #[serde(default)]
    pub exclude: Vec<String>,
    /// Whether the hosts sync on their own: a boot pulls first (waiting at
    /// most `autoWaitMs`), close-outs, resets and dreams push in the
    /// background (default off).
    #[serde(default)]
    pub auto: bool,
    /// How long a boot waits for its pull, in milliseconds (default 1500).
    #[serde(default = "default_auto_wait_ms")]
    pub auto_wait_ms: u64,
}

fn default_auto_wait_ms() -> u64 {
    SyncConfig::DEFAULT_AUTO_WAIT_MS
}

fn default_branch() -> String {
    "main".to_owned()
}

fn default_homes() -> Vec<String> {
    DEFAULT_HOMES
        .iter()
        .map(|home| (*home).to_owned())
        .collect()
}

impl SyncConfig {
    /// The largest `config.json` read.
    const MAX_BYTES: u64 = 64 * 1024;
    /// How long a boot waits for its pull unless `autoWaitMs` says
    /// otherwise.
    pub const DEFAULT_AUTO_WAIT_MS: u64 = 1500;
    /// The longest a boot may wait for its pull.
    pub const MAX_AUTO_WAIT_MS: u64 = 30_000;

    /// A set-up for `remote` with the defaults.
    pub fn new(remote: &str, branch: Option<&str>) -> Result<SyncConfig, SyncError> {
        let config = SyncConfig {
            remote: remote.to_owned(),
            branch: branch.map_or_else(default_branch, str::to_owned),
            homes: default_homes(),
            exclude: Vec::new(),
            auto: false,
            auto_wait_ms: Self::DEFAULT_AUTO_WAIT_MS,
        };
        config.check()?;
        Ok(config)
    }

    /// Refuses what git or the merge cannot use safely.
    fn check(&self) -> Result<(), SyncError> {
        let remote = self.remote.trim();
        if remote.is_empty() || remote.starts_with('-') || remote.chars().any(char::is_control) {
            return Err(SyncError::Invalid(format!(
                "the remote {:?} is not a URL or path git can use",
                self.remote
            )));
        }
        let branch_ok = !self.branch.is_empty()
            && !self.branch.starts_with(['-', '/', '.'])
            && !self.branch.ends_with(['/', '.'])
            && !self.branch.ends_with(".lock")
            && !self.branch.contains("..")
            && !self.branch.contains("//")
            && !self.branch.contains("@{")
            && self
                .branch
                .chars()
                .all(|c| !c.is_control() && !" ~^:?*[\\".contains(c));
        if !branch_ok {
            return Err(SyncError::Invalid(format!(
                "the branch {:?} is not a valid Git branch name",
                self.branch
            )));
        }
        if self.auto_wait_ms > Self::MAX_AUTO_WAIT_MS {
            return Err(SyncError::Invalid(format!(
                "autoWaitMs is at most {} (a boot waits no longer)",
                Self::MAX_AUTO_WAIT_MS
            )));
        }
        for home in &self.homes {
            if home_dir(home).is_none() {
                return Err(SyncError::Invalid(format!(
                    "the home {home:?} is not one of project, human, agents, models, session"
                )));
            }
        }
        for path in &self.exclude {
            if path.is_empty() || path.starts_with('/') || path.split('/').any(|s| s == "..") {
                return Err(SyncError::Invalid(format!(
                    "the excluded path {path:?} must be relative to the notes root"
                )));
            }
        }
        Ok(())
    }

    /// The set-up of `root`, or `None` when it has none.
    pub(crate) fn read(root: &Path) -> Result<Option<SyncConfig>, SyncError> {
        let path = root.join(SYNC_DIR).join("config.json");
        let fail = |detail: String| SyncError::Config {
            path: path.clone(),
            detail,
        };
        let bytes = match read_small_file(&path, Self::MAX_BYTES, Links::Refuse) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return Ok(None),
            Err(err) => return Err(fail(err.into_io().to_string())),
        };
        let config: SyncConfig =
            serde_json::from_slice(&bytes).map_err(|err| fail(err.to_string()))?;
        config.check().map_err(|err| fail(err.to_string()))?;
        Ok(Some(config))
    }

    /// Saves it as `root`'s set-up.
    pub(crate) fn write(&self, root: &Path) -> Result<(), SyncError> {
        self.check()?;
        let dir = root.join(SYNC_DIR);
        fs::create_dir_all(&dir).map_err(|err| SyncError::io("create .sync", err))?;
        let mut text = serde_json::to_string_pretty(self)
            .map_err(|err| SyncError::io("save the set-up", err))?;
        text.push('\n');
        crate::durable::write(&dir.join("config.json"), text.as_bytes())
            .map_err(|err| SyncError::io("save the set-up", err))
    }

    fn scope(&self) -> Scope {
        Scope {
            homes: self
                .homes
                .iter()
                .filter_map(|home| home_dir(home))
                .collect(),
            exclude: self.exclude.clone(),
        }
    }
}

/// The folder of a home named in the set-up.
fn home_dir(home: &str) -> Option<&'static str> {
    match home {
        "project" => Some("project"),
        "human" => Some("human"),
        "agents" => Some("agents"),
        "models" => Some("models"),
        "session" => Some("pi/session"),
        _ => None,
    }
}

/// Who syncs: the host, its agent and the machine, named in every commit.
#[derive(Debug, Clone)]
pub(crate) struct SyncAuthor {
    host: String,
    agent: String,
    machine: String,
}

impl SyncAuthor {
    fn signature(&self) -> Signature {
        Signature {
            name: format!("{} ({}) on {}", self.agent, self.host, self.machine),
            email: format!("notesoup@{}", self.machine),
        }
    }
}

/// This machine's name, as a slug.
fn machine_name() -> String {
    #[cfg(unix)]
    let name = rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned();
    #[cfg(not(unix))]
    let name = String::from("machine");
    let slug = slugify(&name);
    if slug.is_empty() {
        "machine".to_owned()
    } else {
        slug
    }
}

/// Sync of one notes root over its Git remote: the set-up, a sync, where
/// the root stands, and the automatic syncs a host starts around its boots
/// and close-outs.
///
/// ```no_run
/// # use notesoup_core::sync::NotesSync;
/// let sync = NotesSync::open(std::path::Path::new("/home/me/.notesoup")).by("Pi", "anonymous");
/// if sync.config()?.is_some() {
///     let report = sync.run()?;
///     println!("{} note(s) sent, pushed: {}", report.committed, report.pushed);
/// }
/// # Ok::<(), notesoup_core::sync::SyncError>(())
/// ```
#[derive(Debug, Clone)]
pub struct NotesSync {
    root: PathBuf,
    author: SyncAuthor,
    timeout: Duration,
}

impl NotesSync {
    /// The deadline of each git run unless [`NotesSync::timeout`] says
    /// otherwise.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

    /// Sync of the notes root `root`, by `anonymous (notesoup)` on this
    /// machine, each git run bounded by [`NotesSync::DEFAULT_TIMEOUT`].
    /// Nothing is read or written until a method asks.
    pub fn open(root: &Path) -> NotesSync {
        NotesSync {
            root: root.to_path_buf(),
            author: SyncAuthor {
                host: "notesoup".to_owned(),
                agent: "anonymous".to_owned(),
                machine: machine_name(),
            },
            timeout: Self::DEFAULT_TIMEOUT,
        }
    }

    /// The same, its commits naming `host` (e.g. `Pi`) and `agent` (its
    /// slug).
    #[must_use]
    pub fn by(mut self, host: &str, agent: &str) -> NotesSync {
        host.clone_into(&mut self.author.host);
        agent.clone_into(&mut self.author.agent);
        self
    }

    /// The same, on a named machine instead of this one's host name (tests
    /// run two machines on one).
    #[must_use]
    pub fn on_machine(mut self, machine: &str) -> NotesSync {
        self.author.machine = slugify(machine);
        self
    }

    /// The same, each git run bounded by `timeout`.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> NotesSync {
        self.timeout = timeout;
        self
    }

    /// The root's set-up (`.sync/config.json`), or `None` when it has none.
    pub fn config(&self) -> Result<Option<SyncConfig>, SyncError> {
        SyncConfig::read(&self.root)
    }

    /// Sets the root up to sync with `config.remote`; the repository is made
    /// on the first sync.
    pub fn setup(&self, config: &SyncConfig) -> Result<(), SyncError> {
        config.write(&self.root)
    }

    /// One sync: commit the travelling notes, fetch, merge note by note,
    /// write the merge to disk, push (a push that lost the race fetches and
    /// merges again, a bounded number of times).
    pub fn run(&self) -> Result<SyncReport, SyncError> {
        sync_notes(&self.root, &self.author, self.timeout)
    }

    /// Where the root stands against its remote: fetches (bounded), then
    /// counts.
    pub fn status(&self) -> Result<SyncStatus, SyncError> {
        sync_status(&self.root, self.timeout)
    }

    /// The automatic sync before a boot, when the set-up has `auto` on: the
    /// running binary as `<bin> sync --notes-home <root>`, waited for at
    /// most `autoWaitMs`. Never fails the caller: what went wrong is
    /// returned ([`AutoSync::boot_notice`] says it).
    pub fn auto_boot(&self) -> AutoSync {
        auto::auto_sync(&self.root, auto::AutoMoment::Boot)
    }

    /// The automatic push after a close-out, a reset or a dream, when the
    /// set-up has `auto` on: the running binary as `<bin> sync --notes-home
    /// <root>`, started and not waited for.
    pub fn auto_background(&self) -> AutoSync {
        auto::auto_sync(&self.root, auto::AutoMoment::Background)
    }
}

/// What a sync did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncReport {
    /// Notes of this machine recorded since the last sync.
    pub committed: usize,
    /// Notes written or removed on disk by the merge.
    pub received: Vec<String>,
    /// Body conflicts: the note kept, and the side note holding theirs
    /// ([`SyncReport::conflicts`]).
    pub(crate) conflicts: Vec<SyncConflict>,
    /// Whether a push was made.
    pub pushed: bool,
    /// Pushes that lost the race before one went through.
    pub retries: usize,
    /// The commit both sides now have (hex).
    pub commit: String,
    /// Notes left out because they are over the store's bound
    /// (`NoteStore::MAX_NOTE_BYTES`), here or on the remote.
    pub skipped: Vec<String>,
}

impl SyncReport {
    /// Each body conflict: the note kept as this machine had it, and the
    /// side note holding the other side's version.
    pub fn conflicts(&self) -> impl ExactSizeIterator<Item = (&str, &str)> + '_ {
        self.conflicts
            .iter()
            .map(|conflict| (conflict.note.as_str(), conflict.side.as_str()))
    }
}

/// One body conflict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SyncConflict {
    /// The note kept as this machine had it.
    pub(crate) note: String,
    /// The note holding the other side's version.
    pub(crate) side: String,
}

/// Where sync's own files are.
struct SyncPaths {
    dir: PathBuf,
    repo: PathBuf,
    lock: PathBuf,
    /// The merge being written to disk (`record.rs`): `<from> <to>` (hex;
    /// `none` when nothing was synced before), then each note written,
    /// removed once the branch is at `<to>`.
    merging: PathBuf,
}

impl SyncPaths {
    fn new(root: &Path) -> SyncPaths {
        let dir = root.join(SYNC_DIR);
        SyncPaths {
            repo: dir.join("repo.git"),
            lock: dir.join("lock"),
            merging: dir.join("merging"),
            dir,
        }
    }
}

/// The lock one sync of a root holds (an exclusive `flock` on
/// `.sync/lock`), freed when dropped or when the process ends however it
/// ends.
#[derive(Debug)]
struct SyncLock {
    _file: fs::File,
}

impl SyncLock {
    fn acquire(path: &Path, wait: Duration) -> Result<SyncLock, SyncError> {
        let file = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .map_err(|err| SyncError::io("open the sync lock", err))?;
        let deadline = Instant::now() + wait;
        loop {
            match try_lock(&file) {
                Ok(true) => return Ok(SyncLock { _file: file }),
                Ok(false) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Ok(false) => return Err(SyncError::Busy(path.to_path_buf())),
                Err(err) => return Err(SyncError::io("lock the sync", err)),
            }
        }
    }
}

#[cfg(unix)]
fn try_lock(file: &fs::File) -> std::io::Result<bool> {
    use rustix::fs::{FlockOperation, flock};
    match flock(file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(true),
        Err(rustix::io::Errno::WOULDBLOCK) => Ok(false),
        Err(err) => Err(err.into()),
    }
}

#[cfg(not(unix))]
fn try_lock(file: &fs::File) -> std::io::Result<bool> {
    match file.try_lock() {
        Ok(()) => Ok(true),
        Err(fs::TryLockError::WouldBlock) => Ok(false),
        Err(fs::TryLockError::Error(err)) => Err(err),
    }
}

/// One sync of `root`: commit the travelling notes, fetch, merge note by
/// note, write the merge to disk, push (a push that lost the race fetches
/// and merges again, at most `MAX_PUSH_ATTEMPTS` times).
fn sync_notes(
    root: &Path,
    author: &SyncAuthor,
    timeout: Duration,
) -> Result<SyncReport, SyncError> {
    let config =
        SyncConfig::read(root)?.ok_or_else(|| SyncError::NotConfigured(root.to_path_buf()))?;
    let paths = SyncPaths::new(root);
    fs::create_dir_all(&paths.dir).map_err(|err| SyncError::io("create .sync", err))?;
    let _lock = SyncLock::acquire(&paths.lock, LOCK_WAIT)?;
    let mut repo = SyncRepo::open_or_init(&paths.repo)?;
    let mut scope = config.scope();
    let local_ref = format!("refs/heads/{}", config.branch);
    let signature = author.signature();
    let mut report = SyncReport::default();

    // A merge a killed sync had begun to write to disk is finished first,
    // so its other side is not merged in a second time.
    finish_merge(root, &paths, &repo, &local_ref, &config.scope())?;

    // 1. This machine's notes, as they are.
    let previous = repo.read_ref(&local_ref)?;
    let previous_tree = match previous {
        Some(id) => repo.read_tree(id)?,
        None => NoteTree::new(),
    };
    let mut disk = read_notes(root, &scope)?;
    // A note over the store's bound stays home (doctor names it).
    report.skipped = oversized(&disk);
    scope.exclude.extend(report.skipped.iter().cloned());
    disk.retain(|path, _| scope.contains(path));
    guard(
        disk.iter()
            .filter(|(path, bytes)| previous_tree.get(*path) != Some(*bytes)),
    )?;
    let mut ours_tree: NoteTree = previous_tree
        .iter()
        .filter(|(path, _)| !scope.contains(path))
        .map(|(path, bytes)| (path.clone(), bytes.clone()))
        .collect();
    ours_tree.extend(
        disk.iter()
            .map(|(path, bytes)| (path.clone(), bytes.clone())),
    );
    report.committed = changed_notes(&ours_tree, &previous_tree, |_| true);
    let mut ours = match previous {
        Some(id) if ours_tree == previous_tree => Some(id),
        // Nothing here and nothing synced yet: no commit of an empty tree.
        None if ours_tree.is_empty() => None,
        _ => {
            fault("commit");
            let message = format!("notes from {}", signature.name);
            let id = repo.commit(&ours_tree, previous.as_slice(), &message, &signature)?;
            repo.set_ref(&local_ref, id)?;
            Some(id)
        }
    };

    for attempt in 0..MAX_PUSH_ATTEMPTS {
        // 2. The remote's branch.
        let theirs = fetch(&repo, &config, timeout)?;
        repo = SyncRepo::open(&paths.repo)?;
        let mut push = ours.is_some();
        if let Some(theirs) = theirs {
            let base = match ours {
                Some(ours) if ours == theirs => Some(theirs),
                Some(ours) => merge_base(&repo, ours, theirs, timeout)?,
                None => None,
            };
            if base == Some(theirs) {
                // Level, or only ahead: push as it is.
                push = ours != Some(theirs);
            } else {
                let theirs_tree = repo.read_tree(theirs)?;
                // Nor is one written here.
                scope.exclude.extend(oversized(&theirs_tree));
                let machine = repo
                    .author_email(theirs)
                    .and_then(|email| email.strip_prefix("notesoup@").map(slugify))
                    .filter(|machine| !machine.is_empty())
                    .unwrap_or_else(|| "remote".to_owned());
                let short = theirs.to_hex_with_len(7).to_string();
                let (target, commit) = match ours {
                    Some(ours) if base != Some(ours) => {
                        // 3. Both moved: merge note by note.
                        let base_tree = match base {
                            Some(base) => repo.read_tree(base)?,
                            None => NoteTree::new(),
                        };
                        let ours_tree = repo.read_tree(ours)?;
                        let side_name = |path: &str, taken: &dyn Fn(&str) -> bool| {
                            conflict_name(path, &machine, &short, taken)
                        };
                        let merged = merge_trees(
                            &base_tree,
                            &ours_tree,
                            &theirs_tree,
                            |path| scope.contains(path),
                            side_name,
                        );
                        guard(merged.tree.iter().filter(|(path, bytes)| {
                            scope.contains(path) && theirs_tree.get(*path) != Some(*bytes)
                        }))?;
                        report
                            .conflicts
                            .extend(merged.conflicts.iter().map(|(note, side)| SyncConflict {
                                note: note.clone(),
                                side: side.clone(),
                            }));
                        let message = format!("merge notes from {machine} on {}", signature.name);
                        let id =
                            repo.commit(&merged.tree, &[ours, theirs], &message, &signature)?;
                        push = true;
                        (merged.tree, id)
                    }
                    // Only behind (or nothing here yet): take theirs.
                    _ => {
                        push = false;
                        (theirs_tree, theirs)
                    }
                };
                // 4. The merge, on disk.
                let side_name = |path: &str, taken: &dyn Fn(&str) -> bool| {
                    conflict_name(path, &machine, &short, taken)
                };
                repo.flush_commit(commit)?;
                let mut record = MergeRecord::begin(&paths.merging, ours, commit)?;
                write_to_disk(
                    root,
                    &scope,
                    &mut disk,
                    &target,
                    &mut report,
                    &side_name,
                    &mut record,
                )?;
                drop(record);
                repo.set_ref_durably(&local_ref, commit)?;
                record::remove(&paths.merging)?;
                ours = Some(commit);
            }
        }
        let Some(ours) = ours else {
            // Nothing anywhere yet.
            return Ok(report);
        };
        if !push {
            report.commit = ours.to_string();
            return Ok(report);
        }
        // 5. Push; a push that lost the race goes round again.
        match push_branch(&repo, &config, ours, timeout)? {
            true => {
                repo.set_ref(REMOTE_REF, ours)?;
                report.pushed = true;
                report.retries = attempt;
                report.commit = ours.to_string();
                return Ok(report);
            }
            false => continue,
        }
    }
    Err(SyncError::PushRejected(MAX_PUSH_ATTEMPTS))
}

/// Finishes the merge `.sync/merging` records, when a sync was stopped
/// while writing it to disk: every note still as it was before the merge
/// takes the merge's version; one the record says was written stays as it
/// is on disk (edited since or not: it already holds the merge, so nothing
/// of the other side is merged into it again); one changed since that was
/// not written yet is merged with it as a sync merges a note written while
/// it runs; and the branch moves to the merge. A record the branch has
/// moved past is dropped.
fn finish_merge(
    root: &Path,
    paths: &SyncPaths,
    repo: &SyncRepo,
    local_ref: &str,
    scope: &Scope,
) -> Result<(), SyncError> {
    let Some(recorded) = record::read(&paths.merging) else {
        return Ok(());
    };
    let (from, to) = (recorded.from.as_str(), recorded.to.as_str());
    let previous = repo.read_ref(local_ref)?;
    let from_matches = match previous {
        Some(id) => ObjectId::from_hex(from.as_bytes()).is_ok_and(|from| from == id),
        None => from == "none",
    };
    let Ok(to) = ObjectId::from_hex(to.as_bytes()) else {
        return record::remove(&paths.merging);
    };
    if !from_matches {
        return record::remove(&paths.merging);
    }
    let before = match previous {
        Some(id) => repo.read_tree(id)?,
        None => NoteTree::new(),
    };
    let Ok(merged) = repo.read_tree(to) else {
        return record::remove(&paths.merging);
    };
    let disk = read_notes(root, scope)?;
    let side_name =
        |path: &str, taken: &dyn Fn(&str) -> bool| conflict_name(path, "remote", "merge", taken);
    let paths_changed: std::collections::BTreeSet<&String> = before
        .keys()
        .chain(merged.keys())
        .filter(|path| scope.contains(path) && before.get(*path) != merged.get(*path))
        .filter(|path| !recorded.written.contains(*path))
        .collect();
    for path in paths_changed {
        let (old, new) = (before.get(path), merged.get(path));
        if new.is_some_and(|bytes| bytes.len() > NoteStore::MAX_NOTE_BYTES) || disk.get(path) == new
        {
            continue;
        }
        apply(
            root,
            path,
            old.map(Vec::as_slice),
            new.map(Vec::as_slice),
            &side_name,
        )?;
    }
    repo.set_ref_durably(local_ref, to)?;
    record::remove(&paths.merging)
}

/// A crash at `step` for the fault tests: debug builds only, when
/// `NOTESOUP_SYNC_FAULT` names the step (`commit`: before this machine's
/// notes are committed; `write`: after the first note of a merge is
/// written to disk), the process aborts as a kill would stop it.
fn fault(step: &str) {
    #[cfg(debug_assertions)]
    if std::env::var_os("NOTESOUP_SYNC_FAULT").is_some_and(|named| named == step) {
        std::process::abort();
    }
    #[cfg(not(debug_assertions))]
    let _ = step;
}

/// The notes of `tree` over the store's bound, which never travel.
fn oversized(tree: &NoteTree) -> Vec<String> {
    tree.iter()
        .filter(|(_, bytes)| bytes.len() > NoteStore::MAX_NOTE_BYTES)
        .map(|(path, _)| path.clone())
        .collect()
}

/// How many notes `new` adds or changes against `old`, plus the notes of
/// `old` it lacks among those `seen` (the ones `new` would hold).
fn changed_notes(new: &NoteTree, old: &NoteTree, seen: impl Fn(&str) -> bool) -> usize {
    new.iter()
        .filter(|(path, bytes)| old.get(*path) != Some(*bytes))
        .count()
        + old
            .keys()
            .filter(|path| seen(path) && !new.contains_key(*path))
            .count()
}

/// Every outgoing note must pass the credential guard.
fn guard<'a>(outgoing: impl Iterator<Item = (&'a String, &'a Vec<u8>)>) -> Result<(), SyncError> {
    for (path, bytes) in outgoing {
        if let Some(found) = find_secret(&String::from_utf8_lossy(bytes)) {
            return Err(SyncError::SecretDetected {
                path: path.clone(),
                kind: found.kind.to_string(),
                line: found.line,
            });
        }
    }
    Ok(())
}

/// Writes to disk every note of `scope` where `target` differs from what
/// the sync read (`disk`), each named in `record` once it is written.
fn write_to_disk(
    root: &Path,
    scope: &Scope,
    disk: &mut NoteTree,
    target: &NoteTree,
    report: &mut SyncReport,
    side_name: SideName<'_>,
    record: &mut MergeRecord,
) -> Result<(), SyncError> {
    let paths: Vec<String> = disk
        .keys()
        .chain(target.keys())
        .filter(|path| scope.contains(path))
        .cloned()
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    for path in paths {
        let (expected, new) = (disk.get(&path), target.get(&path));
        if expected == new {
            continue;
        }
        let applied = apply(
            root,
            &path,
            expected.map(Vec::as_slice),
            new.map(Vec::as_slice),
            side_name,
        )?;
        if let Applied::Remerged { side: Some(side) } = &applied {
            report.conflicts.push(SyncConflict {
                note: path.clone(),
                side: side.clone(),
            });
        }
        record.written(&path)?;
        report.received.push(path.clone());
        fault("write");
        match new {
            Some(bytes) if applied == Applied::AsMerged => {
                disk.insert(path, bytes.clone());
            }
            None if applied == Applied::AsMerged => {
                disk.remove(&path);
            }
            _ => {}
        }
    }
    Ok(())
}

/// The name of the side note for `path`'s conflict:
/// `<dir>/<stem>.conflict-from-<machine>-<commit>.md`, `-2`, `-3`, … when
/// taken.
fn conflict_name(path: &str, machine: &str, commit: &str, taken: &dyn Fn(&str) -> bool) -> String {
    let stem = path.strip_suffix(".md").unwrap_or(path);
    let first = format!("{stem}{CONFLICT_MARK}{machine}-{commit}.md");
    if !taken(&first) {
        return first;
    }
    (2..)
        .map(|n| format!("{stem}{CONFLICT_MARK}{machine}-{commit}-{n}.md"))
        .find(|name| !taken(name))
        .unwrap_or(first)
}

/// Fetches the remote branch into `REMOTE_REF`; `None` when the remote has
/// no such branch yet.
fn fetch(
    repo: &SyncRepo,
    config: &SyncConfig,
    timeout: Duration,
) -> Result<Option<ObjectId>, SyncError> {
    let refspec = format!("+refs/heads/{}:{REMOTE_REF}", config.branch);
    let output = run_git(
        repo.path(),
        &[
            "fetch",
            "--no-tags",
            "--quiet",
            "--",
            &config.remote,
            &refspec,
        ],
        timeout,
    )?;
    if !output.success {
        if output.stderr.contains("couldn't find remote ref") {
            return Ok(None);
        }
        return Err(SyncError::Unreachable {
            remote: config.remote.clone(),
            detail: last_words(&output),
        });
    }
    SyncRepo::open(repo.path())?.read_ref(REMOTE_REF)
}

/// Pushes `commit` as the remote branch; `false` when another push got
/// there first.
fn push_branch(
    repo: &SyncRepo,
    config: &SyncConfig,
    commit: ObjectId,
    timeout: Duration,
) -> Result<bool, SyncError> {
    let refspec = format!("{commit}:refs/heads/{}", config.branch);
    let output = run_git(
        repo.path(),
        &["push", "--porcelain", "--", &config.remote, &refspec],
        timeout,
    )?;
    if output.success {
        return Ok(true);
    }
    let said = format!("{}\n{}", output.stdout, output.stderr);
    // Another push got there first: refused as not a fast-forward, or the
    // remote's ref moved while it was being updated.
    let lost = [
        "[rejected]",
        "fetch first",
        "non-fast-forward",
        "cannot lock ref",
        "failed to update ref",
        "incorrect old value",
    ];
    if lost.iter().any(|sign| said.contains(sign)) {
        return Ok(false);
    }
    // The porcelain line of a refused ref says why; without one the remote
    // was not reached.
    match output.stdout.lines().find(|line| line.starts_with('!')) {
        Some(line) => Err(SyncError::PushRefused {
            remote: config.remote.clone(),
            detail: format!(
                "{} ({})",
                line.chars().take(200).collect::<String>(),
                last_words(&output)
            ),
        }),
        None => Err(SyncError::Unreachable {
            remote: config.remote.clone(),
            detail: last_words(&output),
        }),
    }
}

/// The best common ancestor of two commits.
fn merge_base(
    repo: &SyncRepo,
    a: ObjectId,
    b: ObjectId,
    timeout: Duration,
) -> Result<Option<ObjectId>, SyncError> {
    let output = run_git(
        repo.path(),
        &["merge-base", &a.to_string(), &b.to_string()],
        timeout,
    )?;
    if !output.success {
        // Exit 1 with nothing said: no common ancestor.
        if output.stderr.trim().is_empty() {
            return Ok(None);
        }
        return Err(SyncError::Repo(last_words(&output)));
    }
    ObjectId::from_hex(output.stdout.trim().as_bytes())
        .map(Some)
        .map_err(|err| SyncError::Repo(err.to_string()))
}

/// Where a root stands against its remote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncStatus {
    /// The set-up.
    pub config: SyncConfig,
    /// Commits this machine has that the remote has not.
    pub ahead: usize,
    /// Commits the remote has that this machine has not.
    pub behind: usize,
    /// Travelling notes changed here since the last sync.
    pub changed: usize,
    /// Side notes of conflicts nobody resolved yet (live notes named
    /// `….conflict-from-….md`).
    pub conflicts: Vec<String>,
    /// Why the remote could not be asked (the counts are then against the
    /// last fetch).
    pub offline: Option<String>,
}

/// Where `root` stands: fetches (bounded), then counts.
fn sync_status(root: &Path, timeout: Duration) -> Result<SyncStatus, SyncError> {
    let config =
        SyncConfig::read(root)?.ok_or_else(|| SyncError::NotConfigured(root.to_path_buf()))?;
    let paths = SyncPaths::new(root);
    let conflicts = unresolved_conflicts(root);
    let scope = config.scope();
    let disk = read_notes(root, &scope)?;
    let mut status = SyncStatus {
        config: config.clone(),
        ahead: 0,
        behind: 0,
        changed: 0,
        conflicts,
        offline: None,
    };
    if fs::symlink_metadata(&paths.repo).is_err() {
        status.changed = disk.len();
        return Ok(status);
    }
    let repo = SyncRepo::open(&paths.repo)?;
    let local = repo.read_ref(&format!("refs/heads/{}", config.branch))?;
    let local_tree = match local {
        Some(id) => repo.read_tree(id)?,
        None => NoteTree::new(),
    };
    status.changed = changed_notes(&disk, &local_tree, |path| scope.contains(path));
    let remote = match fetch(&repo, &config, timeout) {
        Ok(remote) => remote,
        Err(err) => {
            status.offline = Some(err.to_string());
            repo.read_ref(REMOTE_REF)?
        }
    };
    match (local, remote) {
        (Some(local), Some(remote)) => {
            let range = format!("{local}...{remote}");
            let output = run_git(
                repo.path(),
                &["rev-list", "--left-right", "--count", &range],
                timeout,
            )?;
            let mut counts = output.stdout.split_whitespace().map(str::parse::<usize>);
            status.ahead = counts.next().and_then(Result::ok).unwrap_or(0);
            status.behind = counts.next().and_then(Result::ok).unwrap_or(0);
        }
        (Some(_), None) => status.ahead = 1,
        (None, Some(_)) => status.behind = 1,
        (None, None) => {}
    }
    Ok(status)
}

/// Every live side note of a sync conflict under `root`, by path.
pub(crate) fn unresolved_conflicts(root: &Path) -> Vec<String> {
    let scope = Scope {
        homes: vec!["project", "human", "agents", "models", "pi/session"],
        exclude: Vec::new(),
    };
    let Ok(notes) = read_notes(root, &scope) else {
        return Vec::new();
    };
    notes
        .into_iter()
        .filter(|(path, _)| {
            path.rsplit('/')
                .next()
                .is_some_and(|name| name.contains(CONFLICT_MARK))
        })
        .filter(|(_, bytes)| {
            let text = String::from_utf8_lossy(bytes);
            !crate::notes::split_note(&text)
                .meta(0, &jiff::tz::TimeZone::UTC)
                .is_crumpled()
        })
        .map(|(path, _)| path)
        .filter(|path| note_path(path))
        .collect()
}
