//! `dream doctor`: a read-only check of a notes store. It never follows
//! symlinks, creates directories, commits or removes a lock (it tests a
//! lock's flock, shared and for an instant, to tell a running dream's lock
//! from a stale one). `doctor clean` removes interrupted writes' temporary
//! files and a stale lock, never a held one.

use std::ffi::{OsStr, OsString};
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::lock::{LAST_RUN_FILE, LOCK_FILE, LockState, lock_state, remove_stale_lock};
use super::scan::{RawField, RawFrontmatter, scan};
use super::{DreamOutput, OutputLine};
use crate::durable;
use crate::notes::beneath::{BeneathError, DirHandle, Kind};
use crate::notes::segment::{MAX_SEGMENT_BYTES, is_hfs_ignorable};
use crate::notes::{
    Address, Home, NoteStore, escape_forbidden, find_secret, is_forbidden_char, is_git_segment,
    is_slug, parse_iso_ms,
};

/// One problem, printed as `<relative path>: <message>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DoctorFinding {
    /// Path relative to the home, `/`-separated (`.` for the home itself).
    pub path: String,
    /// What is wrong.
    pub message: String,
}

/// Everything doctor found in one home.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DoctorReport {
    /// The home that was checked.
    pub home: PathBuf,
    /// Findings in walk order (entries sorted by name).
    pub findings: Vec<DoctorFinding>,
}

impl DoctorReport {
    /// 0 when clean, 1 with findings.
    pub fn exit_code(&self) -> i32 {
        i32::from(!self.findings.is_empty())
    }

    /// What the CLI prints: `doctor: OK (<home>)` when clean, else one
    /// `<relative path>: <message>` line per finding.
    pub fn output(&self) -> DreamOutput {
        let lines = if self.findings.is_empty() {
            vec![OutputLine::stdout(format!(
                "doctor: OK ({})",
                self.home.display()
            ))]
        } else {
            self.findings
                .iter()
                .map(|finding| OutputLine::stdout(format!("{}: {}", finding.path, finding.message)))
                .collect()
        };
        DreamOutput {
            exit_code: self.exit_code(),
            lines,
        }
    }
}

/// Checks the notes store at `home` without changing it.
pub fn doctor(home: &Path) -> DoctorReport {
    let mut doctor = Doctor {
        root: home.to_path_buf(),
        findings: Vec::new(),
    };
    doctor.check_root();
    doctor.check_history();
    doctor.check_sync_conflicts();
    DoctorReport {
        home: home.to_path_buf(),
        findings: doctor.findings,
    }
}

/// How old a temporary file must be before [`clean_temp_files`] may remove
/// it: a live write takes milliseconds, so a minute rules out a writer that
/// is merely slow.
pub(crate) const STALE_TEMP_AGE: Duration = Duration::from_secs(60);

/// What `doctor clean` found and did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CleanReport {
    /// The home that was cleaned.
    pub home: PathBuf,
    /// Whether files were removed (`false`: a dry run that only lists them).
    pub applied: bool,
    /// Each stale temporary file, relative to the home, with the result.
    pub files: Vec<(String, Result<(), String>)>,
    /// Each entry inside a home named like `.git`, and where it goes.
    pub moved: Vec<MovedEntry>,
    /// The stale dream lock (its flock free: the dream that took it is
    /// gone), with the result; `None` when there is none (or it is held).
    pub stale_lock: Option<Result<(), String>>,
}

/// An entry inside a home named like `.git` (a name Git takes for `.git`
/// on some system, or a note whose name without `.md` is one), which
/// `doctor clean` moves to a name Git and the addresses accept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MovedEntry {
    /// The entry, relative to the home.
    pub from: String,
    /// Its new name, relative to the home; `None` when none is free.
    pub to: Option<String>,
    /// What happened (`Ok` on a dry run when a name is free).
    pub result: Result<(), String>,
}

impl CleanReport {
    /// What the CLI prints; exit 1 when a removal or a move failed.
    pub fn output(&self) -> DreamOutput {
        let mut lines = Vec::new();
        let stale = "a stale lock left by a dream that is gone";
        match (&self.stale_lock, self.applied) {
            (None, _) => {}
            (Some(Ok(())), true) => {
                lines.push(OutputLine::stdout(format!("removed {LOCK_FILE}, {stale}")));
            }
            (Some(Ok(())), false) => lines.push(OutputLine::stdout(format!(
                "would remove {LOCK_FILE}, {stale}; run again with --apply to remove it"
            ))),
            (Some(Err(err)), _) => lines.push(OutputLine::stderr(format!(
                "could not remove {LOCK_FILE}: {err}"
            ))),
        }
        for (path, result) in &self.files {
            lines.push(match (result, self.applied) {
                (Ok(()), true) => OutputLine::stdout(format!("removed {path}")),
                (Ok(()), false) => OutputLine::stdout(format!("would remove {path}")),
                (Err(err), _) => OutputLine::stderr(format!("could not remove {path}: {err}")),
            });
        }
        for moved in &self.moved {
            let from = &moved.from;
            let to = moved.to.as_deref().unwrap_or("?");
            lines.push(match (&moved.result, self.applied) {
                (Ok(()), true) => OutputLine::stdout(format!("moved {from} to {to}")),
                (Ok(()), false) => OutputLine::stdout(format!("would move {from} to {to}")),
                (Err(err), _) => {
                    OutputLine::stderr(format!("could not move {from} to {to}: {err}"))
                }
            });
        }
        let summary = match (self.files.len(), self.applied) {
            (0, _) => format!(
                "doctor clean: no stale temporary files ({})",
                self.home.display()
            ),
            (n, false) => format!(
                "doctor clean: {n} stale temporary file{}; run again with --apply to remove {}",
                if n == 1 { "" } else { "s" },
                if n == 1 { "it" } else { "them" }
            ),
            (n, true) => format!(
                "doctor clean: {n} stale temporary file{} handled",
                if n == 1 { "" } else { "s" }
            ),
        };
        lines.push(OutputLine::stdout(summary));
        let entries = |n: usize| if n == 1 { "entry" } else { "entries" };
        match (self.moved.len(), self.applied) {
            (0, _) => {}
            (n, false) => lines.push(OutputLine::stdout(format!(
                "doctor clean: {n} {} named like .git inside a home; run again with --apply to move {}",
                entries(n),
                if n == 1 { "it" } else { "them" }
            ))),
            (n, true) => lines.push(OutputLine::stdout(format!(
                "doctor clean: {n} {} named like .git inside a home handled",
                entries(n)
            ))),
        }
        let failed = self.files.iter().any(|(_, result)| result.is_err())
            || self.moved.iter().any(|moved| moved.result.is_err())
            || matches!(self.stale_lock, Some(Err(_)));
        DreamOutput {
            exit_code: i32::from(failed),
            lines,
        }
    }
}

/// `doctor clean`: finds the temporary files that interrupted writes left
/// below `home` (notesoup's own temporary names only), older than
/// `STALE_TEMP_AGE` at `now` and whose writer process is gone, and the
/// entries inside the homes named like `.git` (each a moved entry), and a
/// stale dream lock (one whose flock nothing holds; a held lock is never
/// touched); with `apply` it removes the temporary files and the stale lock and moves each such entry to a
/// free name Git and the addresses accept (`.git.` to `dot-git`, `git~1` to
/// `git-1`, never replacing anything). Links are never followed and `.git`
/// itself is never entered or moved; nothing else is touched. Each
/// directory is opened inside its parent and each file removed or moved
/// inside its open directory, so a directory swapped for a link meanwhile
/// cannot lead the change out of the home.
pub fn clean_temp_files(home: &Path, apply: bool, now: SystemTime) -> CleanReport {
    let stale_lock = match lock_state(home) {
        LockState::Stale(_) if apply => match remove_stale_lock(home) {
            Ok(true) => Some(Ok(())),
            // Taken by a dream meanwhile, or already gone: nothing to say.
            Ok(false) => None,
            Err(err) => Some(Err(err.to_string())),
        },
        LockState::Stale(_) => Some(Ok(())),
        LockState::Absent | LockState::Held(_) | LockState::Unusable(_) => None,
    };
    let mut cleaned = Cleaned::default();
    if let Ok(root) = DirHandle::open_root(home) {
        clean_dir(&root, Path::new(""), apply, now, &mut cleaned);
    }
    CleanReport {
        home: home.to_path_buf(),
        applied: apply,
        files: cleaned.files,
        moved: cleaned.moved,
        stale_lock,
    }
}

/// What [`clean_dir`] found and did.
#[derive(Default)]
struct Cleaned {
    files: Vec<(String, Result<(), String>)>,
    moved: Vec<MovedEntry>,
}

/// [`clean_temp_files`] in `dir` (at `rel` below the home) and below it,
/// in name order.
fn clean_dir(dir: &DirHandle, rel: &Path, apply: bool, now: SystemTime, cleaned: &mut Cleaned) {
    let Ok(mut entries) = dir.entries() else {
        return;
    };
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    let in_home = is_in_home(rel);
    let mut claimed = Vec::new();
    for entry in entries {
        let mut path = rel.join(&entry.name);
        if let Some(name) = entry.name.to_str()
            && in_home
            && is_named_like_git(name)
        {
            let (to, result) = move_named_like_git(dir, name, apply, &mut claimed);
            let moved = apply && result.is_ok();
            cleaned.moved.push(MovedEntry {
                from: shown(&path),
                to: to.as_ref().map(|to| shown(&rel.join(to))),
                result,
            });
            if let (true, Some(to)) = (moved, to) {
                path = rel.join(to);
            }
        }
        let Some(name) = path.file_name() else {
            continue;
        };
        match entry.kind {
            Kind::Dir if name != ".git" => {
                if let Ok(Some(sub)) = dir.open_dir(Path::new(name)) {
                    clean_dir(&sub, &path, apply, now, cleaned);
                }
            }
            Kind::File => {
                let Some(pid) = entry.name.to_str().and_then(durable::temp_writer) else {
                    continue;
                };
                let old_enough = dir
                    .stat(&entry.name)
                    .ok()
                    .flatten()
                    .and_then(|stat| modified_at(stat.modified))
                    .and_then(|modified| now.duration_since(modified).ok())
                    .is_some_and(|age| age >= STALE_TEMP_AGE);
                if !old_enough || durable::writer_alive(pid) {
                    continue;
                }
                let result = if apply {
                    dir.remove_file(&entry.name).map_err(|err| err.to_string())
                } else {
                    Ok(())
                };
                cleaned.files.push((shown(&path), result));
            }
            _ => {}
        }
    }
}

/// A path below the home as findings print it: `/`-separated, a name no
/// address could hold escaped.
fn shown(path: &Path) -> String {
    let parts: Vec<_> = path
        .components()
        .map(|component| component.as_os_str().to_string_lossy())
        .collect();
    printable(&parts.join("/"))
}

/// `text` with every character no address may hold, and every code point
/// HFS+ ignores (invisible, and what makes `.g\u{200c}it` a `.git`),
/// written as a `\u{…}` escape: a name on disk printed raw could forge
/// findings or hide what is wrong with it.
fn printable(text: &str) -> String {
    if !text.contains(is_hfs_ignorable) {
        return escape_forbidden(text).into_owned();
    }
    let mut escaped = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_hfs_ignorable(c) && !is_forbidden_char(c) {
            escaped.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            escaped.push(c);
        }
    }
    escape_forbidden(&escaped).into_owned()
}

/// Whether the directory at `rel` below the root is a home or inside one
/// (`pi/session/<id>/`, `project/<key>/`, `human/`, `agents/<slug>/`,
/// `models/<slug>/`).
fn is_in_home(rel: &Path) -> bool {
    let parts: Vec<&str> = rel.iter().map(|part| part.to_str().unwrap_or("")).collect();
    matches!(
        parts.as_slice(),
        ["human", ..] | ["pi", "session", _, ..] | ["project" | "agents" | "models", _, ..]
    )
}

/// Whether an entry inside a home is named like `.git` but is not `.git`
/// itself (Git's own directory, or a nested repository, which the audit
/// skips): a name Git takes for `.git`, which makes the audit fail, or a
/// note whose name without `.md` is one, which no address can name.
fn is_named_like_git(name: &str) -> bool {
    name != ".git" && (is_git_segment(name) || name.strip_suffix(".md").is_some_and(is_git_segment))
}

/// Where [`is_named_like_git`]'s `name` goes: its characters that make it
/// `.git` made plain (`.` first becomes `dot-`, `~` and `:` become `-`,
/// trailing dots and spaces and ignorable or unaddressable code points
/// go), a note keeping its `.md`. `None` when nothing would be left or the
/// name would grow past the filesystem's limit.
fn plain_name(name: &str) -> Option<(String, &'static str)> {
    let (stem, ext) = match name.strip_suffix(".md") {
        Some(stem) if !is_git_segment(name) => (stem, ".md"),
        _ => (name, ""),
    };
    let kept: String = stem
        .chars()
        .filter(|&c| !is_hfs_ignorable(c) && !is_forbidden_char(c))
        .map(|c| if c == '~' || c == ':' { '-' } else { c })
        .collect();
    let kept = kept.trim_end_matches(['.', ' ']);
    let plain = match kept.strip_prefix('.') {
        Some(rest) => format!("dot-{rest}"),
        None => kept.to_owned(),
    };
    (!plain.is_empty()
        && plain.len() + ext.len() + 3 <= MAX_SEGMENT_BYTES
        && !is_git_segment(&plain))
    .then_some((plain, ext))
}

/// The first free name for `name` in `dir` ([`plain_name`], then with
/// `-2`, `-3`, … before its `.md`) that is not `claimed` by an earlier
/// entry of the same listing (so a dry run names what a real run does),
/// and, with `apply`, the move there (never replacing an entry that
/// appears meanwhile).
fn move_named_like_git(
    dir: &DirHandle,
    name: &str,
    apply: bool,
    claimed: &mut Vec<String>,
) -> (Option<String>, Result<(), String>) {
    const TRIES: usize = 99;
    let Some((plain, ext)) = plain_name(name) else {
        return (None, Err("no plain name; rename it by hand".to_owned()));
    };
    for n in 1..=TRIES {
        let candidate = if n == 1 {
            format!("{plain}{ext}")
        } else {
            format!("{plain}-{n}{ext}")
        };
        if claimed.contains(&candidate) {
            continue;
        }
        match dir.stat(OsStr::new(&candidate)) {
            Ok(None) => {}
            Ok(Some(_)) => continue,
            Err(err) => return (Some(candidate), Err(err.to_string())),
        }
        if !apply {
            claimed.push(candidate.clone());
            return (Some(candidate), Ok(()));
        }
        match dir.move_entry(OsStr::new(name), dir, OsStr::new(&candidate)) {
            Ok(()) => {
                claimed.push(candidate.clone());
                return (Some(candidate), Ok(()));
            }
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(err) => return (Some(candidate), Err(err.to_string())),
        }
    }
    (
        None,
        Err(format!(
            "no free name after {TRIES} tries; rename it by hand"
        )),
    )
}

/// A modification time from `lstat`'s seconds and nanoseconds.
fn modified_at((secs, nanos): (i64, i64)) -> Option<SystemTime> {
    let nanos = Duration::from_nanos(u64::try_from(nanos).ok()?);
    match u64::try_from(secs) {
        Ok(secs) => SystemTime::UNIX_EPOCH.checked_add(Duration::from_secs(secs) + nanos),
        Err(_) => SystemTime::UNIX_EPOCH
            .checked_sub(Duration::from_secs(secs.unsigned_abs()))?
            .checked_add(nanos),
    }
}

/// Which home a note lives in, for resolving its links.
#[derive(Debug, Clone)]
enum HomeKind {
    Session,
    Project(String),
    Other,
}

struct Doctor {
    root: PathBuf,
    findings: Vec<DoctorFinding>,
}

/// A directory entry read without following symlinks.
struct Entry {
    /// The name as text (lossy), for the checks.
    name: String,
    /// The name on disk.
    os_name: OsString,
    path: PathBuf,
    kind: Kind,
}

const ROOT_IGNORED: [&str; 6] = [
    ".git",
    crate::sync::SYNC_DIR,
    "dreams",
    "snapshots",
    "trash",
    LAST_RUN_FILE,
];

impl Doctor {
    fn report(&mut self, path: &Path, message: impl Into<String>) {
        let relative = path.strip_prefix(&self.root).unwrap_or(path);
        let parts: Vec<_> = relative
            .components()
            .map(|component| component.as_os_str().to_string_lossy())
            .collect();
        let path = if parts.is_empty() {
            ".".to_owned()
        } else {
            // A name on disk may hold anything; printed raw it could forge
            // findings.
            printable(&parts.join("/"))
        };
        self.findings.push(DoctorFinding {
            path,
            message: message.into(),
        });
    }

    /// Sorted entries of `dir`; a read error becomes a finding.
    fn entries(&mut self, dir: &DirHandle) -> Vec<Entry> {
        let read = match dir.entries() {
            Ok(read) => read,
            Err(err) => {
                self.report(
                    dir.path(),
                    format!("cannot read directory: {}", cause(&err)),
                );
                return Vec::new();
            }
        };
        let mut entries: Vec<Entry> = read
            .into_iter()
            .map(|entry| Entry {
                name: entry.name.to_string_lossy().into_owned(),
                path: dir.path().join(&entry.name),
                os_name: entry.name,
                kind: entry.kind,
            })
            .collect();
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        entries
    }

    /// Opens `entry` of `dir` as a directory, reporting a symlink or
    /// non-directory where a directory belongs.
    fn open_dir(&mut self, dir: &DirHandle, entry: &Entry) -> Option<DirHandle> {
        match entry.kind {
            Kind::Dir => {}
            Kind::Link => {
                self.report(&entry.path, "symlink");
                return None;
            }
            Kind::File | Kind::Other => {
                self.report(&entry.path, "unexpected entry; expected a directory");
                return None;
            }
        }
        match dir.open_dir(Path::new(&entry.os_name)) {
            Ok(Some(opened)) => Some(opened),
            // Gone since it was listed.
            Ok(None) => None,
            Err(BeneathError::Link { .. }) => {
                self.report(&entry.path, "symlink");
                None
            }
            Err(err) => {
                self.report(
                    &entry.path,
                    format!("cannot read directory: {}", cause(&err)),
                );
                None
            }
        }
    }

    /// The dream's Git history: a commit that holds a credential is named,
    /// with the command that rewrites the history without it.
    fn check_history(&mut self) {
        match super::audit::secrets_in_history(&self.root) {
            Ok(found) => {
                for secret in found {
                    let short = secret.commit.get(..12).unwrap_or(&secret.commit);
                    self.report(
                        Path::new(".git"),
                        format!(
                            "commit {short} (\"{}\") holds a credential ({}) in {}; remove it from the history with `doctor purge --apply` (the note itself stays: edit or delete it)",
                            secret.subject, secret.kind, secret.path
                        ),
                    );
                }
            }
            Err(err) => self.report(
                Path::new(".git"),
                format!("cannot read the audit history: {err}"),
            ),
        }
    }

    /// Each live side note a sync conflict left: the other machine's
    /// version of a note, waiting for a person (or agent) to merge it.
    fn check_sync_conflicts(&mut self) {
        for side in crate::sync::unresolved_conflicts(&self.root) {
            let note = side
                .split_once(crate::sync::CONFLICT_MARK)
                .map_or_else(|| side.clone(), |(stem, _)| format!("{stem}.md"));
            let path = self.root.join(&side);
            self.report(
                &path,
                format!(
                    "unresolved sync conflict: another machine's version of {note}; merge what it holds into {note}, then crumple or delete this note"
                ),
            );
        }
    }

    fn check_root(&mut self) {
        let root = match DirHandle::open_root(&self.root) {
            Ok(root) => root,
            Err(err) => {
                let path = self.root.clone();
                self.report(&path, format!("cannot read notes home: {err}"));
                return;
            }
        };
        for entry in self.entries(&root) {
            match entry.name.as_str() {
                name if ROOT_IGNORED.contains(&name) => {}
                "global" | "personal" => {
                    self.report(&entry.path, "legacy home; migrate its notes by hand")
                }
                LOCK_FILE => self.check_lock(&entry),
                "pi" => self.check_pi(&root, &entry),
                "project" => self.check_namespace(&root, &entry, Namespace::Project),
                "agents" => self.check_namespace(&root, &entry, Namespace::Agents),
                "models" => self.check_namespace(&root, &entry, Namespace::Models),
                "human" => {
                    if let Some(human) = self.open_dir(&root, &entry) {
                        self.check_home(&entry.path, &human, &HomeKind::Other);
                    }
                }
                _ => self.report(&entry.path, "unexpected root entry"),
            }
        }
    }

    fn check_lock(&mut self, entry: &Entry) {
        if entry.kind != Kind::File {
            self.report(
                &entry.path,
                "malformed lock (not a regular file); no dream can take it: remove it by hand",
            );
            return;
        }
        let message = match lock_state(&self.root) {
            LockState::Absent => return,
            LockState::Held(content) => match lock_pid(&content) {
                Some(pid) => format!("lock held by a running dream (process {pid})"),
                None => "malformed lock held by a running process; wait for it to end".to_owned(),
            },
            LockState::Stale(content) => {
                let owner = match lock_pid(&content) {
                    Some(pid) => format!("a dream that is gone (process {pid})"),
                    None => "a dream that is gone (malformed content)".to_owned(),
                };
                format!(
                    "stale lock left by {owner}; the next dream takes it over, `doctor clean --apply` removes it"
                )
            }
            LockState::Unusable(why) => {
                format!("malformed lock ({why}); no dream can take it: remove it by hand")
            }
        };
        self.report(&entry.path, message);
    }

    fn check_pi(&mut self, root: &DirHandle, pi: &Entry) {
        let Some(pi_dir) = self.open_dir(root, pi) else {
            return;
        };
        for entry in self.entries(&pi_dir) {
            if entry.name != "session" {
                self.report(
                    &entry.path,
                    "unexpected entry; only pi/session/ is expected",
                );
                continue;
            }
            let Some(sessions) = self.open_dir(&pi_dir, &entry) else {
                continue;
            };
            for session in self.entries(&sessions) {
                if let Some(session_dir) = self.open_dir(&sessions, &session) {
                    self.check_home(&session.path, &session_dir, &HomeKind::Session);
                }
            }
        }
    }

    fn check_namespace(&mut self, root: &DirHandle, namespace_entry: &Entry, namespace: Namespace) {
        let Some(namespace_dir) = self.open_dir(root, namespace_entry) else {
            return;
        };
        for entry in self.entries(&namespace_dir) {
            let Some(home_dir) = self.open_dir(&namespace_dir, &entry) else {
                continue;
            };
            let home = match namespace {
                Namespace::Project => {
                    if !is_project_key(&entry.name) {
                        self.report(&entry.path, "invalid project key; expected <name>-<8 hex>");
                    }
                    HomeKind::Project(entry.name.clone())
                }
                Namespace::Agents | Namespace::Models => {
                    if !is_slug(&entry.name) {
                        let what = if namespace == Namespace::Agents {
                            "agent"
                        } else {
                            "model"
                        };
                        self.report(&entry.path, format!("invalid {what} slug"));
                    }
                    HomeKind::Other
                }
            };
            self.check_home(&entry.path, &home_dir, &home);
        }
    }

    /// Checks the notes under `dir`, a home or a folder inside the home at
    /// `home_dir` (links resolve from the home).
    fn check_home(&mut self, home_dir: &Path, dir: &DirHandle, home: &HomeKind) {
        let mut claimed = Vec::new();
        for entry in self.entries(dir) {
            if entry.name.contains(is_forbidden_char) {
                self.report(
                    &entry.path,
                    "name holds a control, line-separator or bidirectional character; no address can name it, rename it by hand",
                );
            }
            if entry.name == ".git" {
                self.report(
                    &entry.path,
                    "Git directory or .git note inside a home; the audit skips it and no address can name it",
                );
                continue;
            }
            if is_named_like_git(&entry.name) {
                let what = if is_git_segment(&entry.name) {
                    "a name Git takes for .git on some systems, where the audit cannot record it; no address can name it"
                } else {
                    "a note named like .git; no address can name it"
                };
                let fix = match move_named_like_git(dir, &entry.name, false, &mut claimed) {
                    (Some(to), Ok(())) => {
                        let parent = entry.path.parent().unwrap_or(&entry.path);
                        let to = parent.join(to);
                        let to = to.strip_prefix(&self.root).unwrap_or(&to);
                        format!("`doctor clean --apply` moves it to {}", shown(to))
                    }
                    _ => "rename it by hand".to_owned(),
                };
                self.report(&entry.path, format!("{what}, {fix}"));
                continue;
            }
            match entry.kind {
                Kind::Dir => {
                    if let Some(sub) = self.open_dir(dir, &entry) {
                        self.check_home(home_dir, &sub, home);
                    }
                }
                Kind::Link => self.report(&entry.path, "symlink"),
                Kind::File if entry.name.ends_with(".md") => {
                    self.check_note(home_dir, dir, &entry, home)
                }
                Kind::File => match durable::temp_writer(&entry.name) {
                    Some(pid) if durable::writer_alive(pid) => self.report(
                        &entry.path,
                        format!(
                            "temporary file of a write in progress or interrupted; its writer (process {pid}) is still running"
                        ),
                    ),
                    Some(pid) => self.report(
                        &entry.path,
                        format!(
                            "temporary file of an interrupted write; its writer (process {pid}) is gone, `doctor clean --apply` removes it"
                        ),
                    ),
                    None => self.report(&entry.path, "non-markdown file"),
                },
                Kind::Other => self.report(&entry.path, "non-markdown file"),
            }
        }
    }

    fn check_note(&mut self, home_dir: &Path, dir: &DirHandle, note: &Entry, home: &HomeKind) {
        let text = match read_file(dir, &note.os_name).map(String::from_utf8) {
            Ok(Ok(text)) => {
                if text.len() > NoteStore::MAX_NOTE_BYTES {
                    self.report(
                        &note.path,
                        format!(
                            "note is {} bytes, over the {max_note_bytes}-byte limit; split it by topic",
                            text.len(), max_note_bytes = NoteStore::MAX_NOTE_BYTES
                        ),
                    );
                }
                text
            }
            Ok(Err(_)) => return self.report(&note.path, "not UTF-8 text"),
            Err(err) => return self.report(&note.path, format!("cannot read: {}", cause(&err))),
        };
        let (fields, body) = match scan(&text) {
            RawFrontmatter::Missing => {
                self.report(&note.path, "missing frontmatter");
                (Vec::new(), text.as_str())
            }
            RawFrontmatter::Unclosed => {
                self.report(&note.path, "unclosed frontmatter");
                (Vec::new(), text.as_str())
            }
            RawFrontmatter::Block { fields, body } => (fields, body),
        };
        for message in field_problems(&fields) {
            self.report(&note.path, message);
        }
        if let Some(found) = find_secret(body) {
            self.report(
                &note.path,
                format!(
                    "holds a credential ({}) on body line {}; move it out and keep a reference",
                    found.kind, found.line
                ),
            );
        }
        let project = match home {
            HomeKind::Project(key) => Some(key.clone()),
            HomeKind::Session => fields
                .iter()
                .find(|field| field.key == "project")
                .map(RawField::value)
                .filter(|key| !key.is_empty()),
            HomeKind::Other => None,
        };
        let context = LinkContext {
            root: &self.root,
            home_dir,
            project: project.as_deref(),
            is_map: note.name == "MAP.md",
        };
        for message in link_problems(body, &context) {
            self.report(&note.path, message);
        }
    }
}

/// The whole of the regular file `name` in `dir`, never through a link.
fn read_file(dir: &DirHandle, name: &OsStr) -> Result<Vec<u8>, BeneathError> {
    let (file, len) = dir.open_file(name)?.ok_or_else(|| BeneathError::Io {
        action: "read",
        path: dir.path().join(name),
        source: std::io::ErrorKind::NotFound.into(),
    })?;
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0).saturating_add(1));
    file.take(u64::MAX)
        .read_to_end(&mut bytes)
        .map_err(|source| BeneathError::io("read", &dir.path().join(name), source))?;
    Ok(bytes)
}

/// What went wrong, without the path (a finding names its path already).
fn cause(err: &BeneathError) -> String {
    match err {
        BeneathError::Io { source, .. } => source.to_string(),
        BeneathError::Link { .. } => "symlink".to_owned(),
        BeneathError::NotADirectory { .. } => "not a directory".to_owned(),
        BeneathError::NotAFile { .. } => "not a regular file".to_owned(),
        BeneathError::NotBelow { .. } => "outside the notes home".to_owned(),
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Namespace {
    Project,
    Agents,
    Models,
}

/// The frontmatter checks, in field order.
fn field_problems(fields: &[RawField<'_>]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for field in fields {
        if seen.contains(&field.key) {
            problems.push(format!("duplicate key {}", field.key));
            continue;
        }
        seen.push(field.key);
        let value = field.value();
        let valid = match field.key {
            "origin" => ["user", "self", "external"].contains(&value.as_str()),
            "accessCount" => !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()),
            "createdAt" | "updatedAt" | "lastAccessed" | "crumpledAt" => is_iso_timestamp(&value),
            "status" => ["active", "superseded", "pending", "archived"].contains(&value.as_str()),
            "stale" => ["true", "false"].contains(&value.as_str()),
            "scope" => {
                problems.push("obsolete key scope".to_owned());
                continue;
            }
            key if key.contains('_') => {
                problems.push(format!("legacy key {key}; manually migrate to camelCase"));
                continue;
            }
            _ => true,
        };
        if !valid {
            problems.push(format!("invalid {} {value:?}", field.key));
        }
    }
    problems
}

/// A stored timestamp as the notes codec reads it (ISO 8601 with an offset
/// or `Z`, a local date-time, or a bare date).
fn is_iso_timestamp(value: &str) -> bool {
    parse_iso_ms(value, &jiff::tz::TimeZone::UTC).is_some()
}

/// The pid of well-formed lock content, `^[1-9]\d* <uuid>\s*$`.
fn lock_pid(content: &str) -> Option<&str> {
    let (pid, rest) = content.split_once(' ')?;
    let token = rest.trim_end();
    let pid_ok = pid.starts_with(|c: char| ('1'..='9').contains(&c))
        && pid.bytes().all(|b| b.is_ascii_digit());
    (pid_ok && is_uuid(token)).then_some(pid)
}

fn is_uuid(token: &str) -> bool {
    let groups: Vec<&str> = token.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(group, len)| group.len() == len && group.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// `^.+-[\da-f]{8}$`
fn is_project_key(name: &str) -> bool {
    let Some((name, hash)) = name.rsplit_once('-') else {
        return false;
    };
    !name.is_empty()
        && hash.len() == 8
        && hash
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Where a note's links resolve from.
struct LinkContext<'a> {
    root: &'a Path,
    home_dir: &'a Path,
    /// The project key `@project/` means here, if known.
    project: Option<&'a str>,
    /// Bare names are checked only inside `MAP.md`.
    is_map: bool,
}

/// Why a link does not resolve.
enum LinkProblem {
    Missing,
    NoProject,
    Invalid,
}

/// Checks every backtick-quoted `*.md` string without `<>*?` or whitespace.
fn link_problems(body: &str, context: &LinkContext<'_>) -> Vec<String> {
    let mut problems = Vec::new();
    for link in body.split('`').skip(1).step_by(2) {
        let candidate = link.ends_with(".md")
            && !link.contains(['<', '>', '*', '?'])
            && !link.chars().any(char::is_whitespace);
        if !candidate || link.starts_with("@self/") || link.starts_with("@model/") {
            continue;
        }
        if !link.starts_with('@') && !context.is_map {
            continue;
        }
        let problem = match resolve_link(link, context) {
            Ok(path) if fs::symlink_metadata(&path).is_ok() => continue,
            Ok(_) => LinkProblem::Missing,
            Err(problem) => problem,
        };
        let what = match problem {
            LinkProblem::Missing => "target missing",
            LinkProblem::NoProject => "project context unavailable",
            LinkProblem::Invalid => "invalid address",
        };
        problems.push(format!("link {link}: {what}"));
    }
    problems
}

/// The file a link names. The head is dispatched here because doctor has
/// no current agent, model or session; the path rules are the notes
/// library's.
fn resolve_link(link: &str, context: &LinkContext<'_>) -> Result<PathBuf, LinkProblem> {
    let Some(address) = link.strip_prefix('@') else {
        // Bare names (only checked in MAP.md) name notes of the MAP's home.
        return note_path(context.home_dir, Home::Session, link);
    };
    let (head, rest) = address.split_once('/').ok_or(LinkProblem::Invalid)?;
    match head {
        "project" => {
            let key = context.project.ok_or(LinkProblem::NoProject)?;
            note_path(&context.root.join("project").join(key), Home::Project, rest)
        }
        "human" => note_path(&context.root.join("human"), Home::Human, rest),
        "agents" | "models" => {
            let (slug, path) = rest.split_once('/').ok_or(LinkProblem::Invalid)?;
            if !is_slug(slug) {
                return Err(LinkProblem::Invalid);
            }
            let home = if head == "agents" {
                Home::Agent(slug.to_owned())
            } else {
                Home::Model(slug.to_owned())
            };
            note_path(&context.root.join(head).join(slug), home, path)
        }
        _ => Err(LinkProblem::Invalid),
    }
}

fn note_path(dir: &Path, home: Home, path: &str) -> Result<PathBuf, LinkProblem> {
    let address = Address::new(home, path).map_err(|_| LinkProblem::Invalid)?;
    Ok(dir.join(address.path()))
}
