//! `dream doctor`: a read-only check of a notes store. It never follows
//! symlinks, creates directories, commits or removes a lock (it tests a
//! lock's flock, shared and for an instant, to tell a running dream's lock
//! from a stale one). `doctor clean` removes interrupted writes' temporary
//! files and a stale lock, never a held one.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::lock::{LAST_RUN_FILE, LOCK_FILE, LockState, lock_state, remove_stale_lock};
use super::scan::{RawField, RawFrontmatter, scan};
use super::{DreamOutput, OutputLine};
use crate::durable;
use crate::notes::{
    Address, Home, MAX_NOTE_BYTES, escape_forbidden, find_secret, is_forbidden_char,
    is_git_segment, is_slug, parse_iso_ms,
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
    DoctorReport {
        home: home.to_path_buf(),
        findings: doctor.findings,
    }
}

/// How old a temporary file must be before [`clean_temp_files`] may remove
/// it: a live write takes milliseconds, so a minute rules out a writer that
/// is merely slow.
pub const STALE_TEMP_AGE: Duration = Duration::from_secs(60);

/// What `doctor clean` found and did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CleanReport {
    /// The home that was cleaned.
    pub home: PathBuf,
    /// Whether files were removed (`false`: a dry run that only lists them).
    pub applied: bool,
    /// Each stale temporary file, relative to the home, with the result.
    pub files: Vec<(String, Result<(), String>)>,
    /// The stale dream lock (its flock free: the dream that took it is
    /// gone), with the result; `None` when there is none (or it is held).
    pub stale_lock: Option<Result<(), String>>,
}

impl CleanReport {
    /// What the CLI prints; exit 1 when a removal failed.
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
        let failed = self.files.iter().any(|(_, result)| result.is_err())
            || matches!(self.stale_lock, Some(Err(_)));
        DreamOutput {
            exit_code: i32::from(failed),
            lines,
        }
    }
}

/// Finds the temporary files that interrupted writes left below `home`
/// (notesoup's own temporary names only), older than [`STALE_TEMP_AGE`] at
/// `now` and whose writer process is gone, and a stale dream lock (one
/// whose flock nothing holds), and removes them when `apply`. A held lock
/// is never touched. Links are never followed and `.git` is never entered;
/// nothing else is touched.
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
    let mut files = Vec::new();
    let walk = walkdir::WalkDir::new(home)
        .follow_links(false)
        .min_depth(1)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|entry| !(entry.file_type().is_dir() && entry.file_name() == ".git"));
    for entry in walk.flatten() {
        if !entry.file_type().is_file() {
            continue;
        }
        let Some(pid) = entry.file_name().to_str().and_then(durable::temp_writer) else {
            continue;
        };
        let old_enough = entry
            .metadata()
            .ok()
            .and_then(|meta| meta.modified().ok())
            .and_then(|modified| now.duration_since(modified).ok())
            .is_some_and(|age| age >= STALE_TEMP_AGE);
        if !old_enough || durable::writer_alive(pid) {
            continue;
        }
        let relative = entry.path().strip_prefix(home).unwrap_or(entry.path());
        let shown = escape_forbidden(&relative.to_string_lossy()).into_owned();
        let result = if apply {
            fs::remove_file(entry.path()).map_err(|err| err.to_string())
        } else {
            Ok(())
        };
        files.push((shown, result));
    }
    CleanReport {
        home: home.to_path_buf(),
        applied: apply,
        files,
        stale_lock,
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
    name: String,
    path: PathBuf,
    kind: Kind,
}

#[derive(PartialEq, Eq)]
enum Kind {
    Dir,
    File,
    Symlink,
    Other,
}

const ROOT_IGNORED: [&str; 5] = [".git", "dreams", "snapshots", "trash", LAST_RUN_FILE];

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
            escape_forbidden(&parts.join("/")).into_owned()
        };
        self.findings.push(DoctorFinding {
            path,
            message: message.into(),
        });
    }

    /// Sorted entries of `dir`; a read error becomes a finding.
    fn entries(&mut self, dir: &Path) -> Vec<Entry> {
        let read = match fs::read_dir(dir) {
            Ok(read) => read,
            Err(err) => {
                self.report(dir, format!("cannot read directory: {err}"));
                return Vec::new();
            }
        };
        let mut entries: Vec<Entry> = read
            .flatten()
            .map(|entry| {
                let kind = match entry.file_type() {
                    Ok(kind) if kind.is_symlink() => Kind::Symlink,
                    Ok(kind) if kind.is_dir() => Kind::Dir,
                    Ok(kind) if kind.is_file() => Kind::File,
                    _ => Kind::Other,
                };
                Entry {
                    name: entry.file_name().to_string_lossy().into_owned(),
                    path: entry.path(),
                    kind,
                }
            })
            .collect();
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        entries
    }

    /// Reports a symlink or non-directory where a directory belongs.
    fn is_dir(&mut self, entry: &Entry) -> bool {
        match entry.kind {
            Kind::Dir => true,
            Kind::Symlink => {
                self.report(&entry.path, "symlink");
                false
            }
            Kind::File | Kind::Other => {
                self.report(&entry.path, "unexpected entry; expected a directory");
                false
            }
        }
    }

    fn check_root(&mut self) {
        let root = self.root.clone();
        if let Err(err) = fs::symlink_metadata(&root) {
            self.report(&root, format!("cannot read notes home: {err}"));
            return;
        }
        for entry in self.entries(&root) {
            match entry.name.as_str() {
                name if ROOT_IGNORED.contains(&name) => {}
                "global" | "personal" => {
                    self.report(&entry.path, "legacy home; migrate its notes by hand")
                }
                LOCK_FILE => self.check_lock(&entry),
                "pi" => self.check_pi(&entry),
                "project" => self.check_namespace(&entry, Namespace::Project),
                "agents" => self.check_namespace(&entry, Namespace::Agents),
                "models" => self.check_namespace(&entry, Namespace::Models),
                "human" => {
                    if self.is_dir(&entry) {
                        self.check_home(&entry.path, &entry.path, &HomeKind::Other);
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

    fn check_pi(&mut self, pi: &Entry) {
        if !self.is_dir(pi) {
            return;
        }
        for entry in self.entries(&pi.path) {
            if entry.name != "session" {
                self.report(
                    &entry.path,
                    "unexpected entry; only pi/session/ is expected",
                );
                continue;
            }
            if !self.is_dir(&entry) {
                continue;
            }
            for session in self.entries(&entry.path) {
                if self.is_dir(&session) {
                    self.check_home(&session.path, &session.path, &HomeKind::Session);
                }
            }
        }
    }

    fn check_namespace(&mut self, namespace_dir: &Entry, namespace: Namespace) {
        if !self.is_dir(namespace_dir) {
            return;
        }
        for entry in self.entries(&namespace_dir.path) {
            if !self.is_dir(&entry) {
                continue;
            }
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
            self.check_home(&entry.path, &entry.path, &home);
        }
    }

    /// Checks the notes under `dir`, a home or a folder inside the home at
    /// `home_dir` (links resolve from the home).
    fn check_home(&mut self, home_dir: &Path, dir: &Path, home: &HomeKind) {
        for entry in self.entries(dir) {
            if entry.name.contains(is_forbidden_char) {
                self.report(
                    &entry.path,
                    "name holds a control, line-separator or bidirectional character; no address can name it, rename it by hand",
                );
            }
            let stem = entry.name.strip_suffix(".md").unwrap_or(&entry.name);
            if is_git_segment(stem) {
                self.report(
                    &entry.path,
                    "Git directory or .git note inside a home; the audit skips it and no address can name it",
                );
                continue;
            }
            match entry.kind {
                Kind::Dir => self.check_home(home_dir, &entry.path, home),
                Kind::Symlink => self.report(&entry.path, "symlink"),
                Kind::File if entry.name.ends_with(".md") => {
                    self.check_note(home_dir, &entry, home)
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

    fn check_note(&mut self, home_dir: &Path, note: &Entry, home: &HomeKind) {
        let text = match fs::read(&note.path).map(String::from_utf8) {
            Ok(Ok(text)) => {
                if text.len() > MAX_NOTE_BYTES {
                    self.report(
                        &note.path,
                        format!(
                            "note is {} bytes, over the {MAX_NOTE_BYTES}-byte limit; split it by topic",
                            text.len()
                        ),
                    );
                }
                text
            }
            Ok(Err(_)) => return self.report(&note.path, "not UTF-8 text"),
            Err(err) => return self.report(&note.path, format!("cannot read: {err}")),
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
