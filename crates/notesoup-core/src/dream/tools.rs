//! The dreamer's tools: jailed write and edit, the wastebasket rule's
//! delete, and read-only read, ls, find and grep. A host wraps these in its
//! own tool definitions and records `{tool, path}` for every write, edit and
//! delete.

use std::fs::File;
use std::io::{ErrorKind, Read};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::DreamError;
use super::jail::{Jailed, JailedRead, jail_read, jail_write, refusal};
use super::wastebasket;
use crate::notes::beneath::{BeneathError, Kind};
use crate::notes::{NoteStore, find_secret};

/// One exact-text replacement of the `edit` tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextEdit {
    /// Text that must occur exactly once in the file.
    pub old_text: String,
    /// Its replacement.
    pub new_text: String,
}

/// One `grep` hit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GrepMatch {
    /// The file, relative to the home, `/`-separated.
    pub path: String,
    /// 1-based line number.
    pub line: usize,
    /// The whole line.
    pub text: String,
}

/// The jailed tool set of one notes home. Paths are relative to the home
/// (or absolute inside it). Stateless, so a host may share it across threads.
#[derive(Debug, Clone)]
pub struct DreamTools {
    home: PathBuf,
    /// The clock the wastebasket rule reads; `None` reads the system's at
    /// each delete.
    now: Option<Timestamp>,
}

impl DreamTools {
    /// Tools for the notes home `home`.
    pub fn new(home: impl Into<PathBuf>) -> Self {
        DreamTools {
            home: home.into(),
            now: None,
        }
    }

    /// These tools with the wastebasket rule measured at `now` (the run's
    /// clock) instead of the system clock.
    pub fn at(mut self, now: Timestamp) -> Self {
        self.now = Some(now);
        self
    }

    /// The notes home.
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// Writes `content` to `path` (creating parent directories inside the
    /// home) atomically. Returns `wrote <path> (<n> bytes)`.
    pub fn write(&self, path: &str, content: &str) -> Result<String, DreamError> {
        refuse_oversized(path, content.len())?;
        refuse_secrets(path, content)?;
        let jailed = jail_write(&self.home, path, true)?;
        atomic_write(&jailed, content.as_bytes())?;
        Ok(format!("wrote {path} ({} bytes)", content.len()))
    }

    /// Applies `edits` in order to the existing text file at `path`; each
    /// `old_text` must occur exactly once in the evolving text. Nothing is
    /// written unless every edit applies. Returns `edited <path> (<n> edits)`.
    pub fn edit(&self, path: &str, edits: &[TextEdit]) -> Result<String, DreamError> {
        refuse_secret_path(path)?;
        let jailed = jail_write(&self.home, path, false)?;
        let mut text = read_jailed(&self.home, &jailed, path)?;
        for (index, edit) in edits.iter().enumerate() {
            if edit.old_text.is_empty() {
                return Err(DreamError::EmptyEdit {
                    path: path.to_owned(),
                    index,
                });
            }
            match text.matches(edit.old_text.as_str()).count() {
                0 => {
                    return Err(DreamError::NoMatch {
                        path: path.to_owned(),
                        index,
                    });
                }
                1 => text = text.replacen(edit.old_text.as_str(), &edit.new_text, 1),
                count => {
                    return Err(DreamError::AmbiguousEdit {
                        path: path.to_owned(),
                        index,
                        count,
                    });
                }
            }
        }
        refuse_oversized(path, text.len())?;
        refuse_secrets(path, &text)?;
        atomic_write(&jailed, text.as_bytes())?;
        Ok(format!("edited {path} ({} edits)", edits.len()))
    }

    /// Deletes a note from the wastebasket; see `delete_crumpled_note`.
    pub fn delete(&self, path: &str) -> Result<String, DreamError> {
        delete_crumpled_note(&self.home, path, self.now.unwrap_or_else(Timestamp::now))
    }

    /// Reads the text file at `path` (inside the home, reached without
    /// following a link).
    pub fn read(&self, path: &str) -> Result<String, DreamError> {
        let jailed = jail_read(&self.home, path)?;
        let refused = |error| refusal(&self.home, path, "cannot read", error);
        let (file, len) = jailed
            .root
            .open_file_at(&jailed.rel)
            .map_err(refused)?
            .ok_or_else(|| missing("cannot read", &jailed))?;
        text_of(file, len, &jailed.root.path().join(&jailed.rel), path)
    }

    /// Lists the directory at `path`, sorted; directories end in `/`.
    pub fn ls(&self, path: &str) -> Result<Vec<String>, DreamError> {
        let jailed = jail_read(&self.home, path)?;
        let refused = |error| refusal(&self.home, path, "cannot list", error);
        let dir = jailed
            .root
            .open_dir(&jailed.rel)
            .map_err(refused)?
            .ok_or_else(|| missing("cannot list", &jailed))?;
        let mut names: Vec<String> = dir
            .entries()
            .map_err(refused)?
            .into_iter()
            .map(|entry| {
                let mut name = entry.name.to_string_lossy().into_owned();
                if entry.kind == Kind::Dir {
                    name.push('/');
                }
                name
            })
            .collect();
        names.sort();
        Ok(names)
    }

    /// Lists every file under `path`, recursively, relative to the home and
    /// sorted. Links are listed, not followed; `.git` is skipped.
    pub fn find(&self, path: &str) -> Result<Vec<String>, DreamError> {
        let jailed = jail_read(&self.home, path)?;
        let mut files: Vec<String> = walk_files(&self.home, path, &jailed)?
            .into_iter()
            .map(|(file, _)| shown(&file))
            .collect();
        files.sort();
        Ok(files)
    }

    /// Case-insensitive literal search for `query` in every UTF-8 file under
    /// `path` (a directory or one file), in path order. Links are not
    /// followed.
    pub fn grep(&self, query: &str, path: &str) -> Result<Vec<GrepMatch>, DreamError> {
        let jailed = jail_read(&self.home, path)?;
        let needle = query.to_lowercase();
        let mut files: Vec<PathBuf> = walk_files(&self.home, path, &jailed)?
            .into_iter()
            .filter(|(_, kind)| *kind == Kind::File)
            .map(|(file, _)| file)
            .collect();
        files.sort();
        let mut matches = Vec::new();
        for file in files {
            // One `openat2` from the home: a directory swapped for a link
            // since the walk is refused, not read through.
            let Ok(Some((opened, len))) = jailed.root.open_file_at(&file) else {
                continue;
            };
            let Ok(text) = text_of(opened, len, &file, path) else {
                continue;
            };
            let shown = shown(&file);
            for (index, line) in text.lines().enumerate() {
                if line.to_lowercase().contains(&needle) {
                    matches.push(GrepMatch {
                        path: shown.clone(),
                        line: index + 1,
                        text: line.to_owned(),
                    });
                }
            }
        }
        Ok(matches)
    }
}

/// Deletes the note at `path` only under the wastebasket rule (see
/// `wastebasket.rs`): it is crumpled, byte for byte what the baseline commit
/// (the home's `HEAD`) holds, so it was crumpled before this dream began
/// and stays recoverable, and its `crumpledAt` and last access are both
/// more than 7 days before `now`. The path is jailed without creating
/// parents; a symlink is removed itself, after its in-home target was
/// checked. Returns `deleted <path>`.
pub(crate) fn delete_crumpled_note(
    home: &Path,
    path: &str,
    now: Timestamp,
) -> Result<String, DreamError> {
    let jailed = jail_write(home, path, false)?;
    let text = read_jailed(home, &jailed, path)?;
    wastebasket::check(home, &jailed.path, path, text.as_bytes(), now)?;
    jailed
        .dir
        .remove_file(&jailed.name)
        .map_err(|err| DreamError::io("cannot delete", &jailed.path, err))?;
    jailed
        .dir
        .sync()
        .map_err(|err| DreamError::io("cannot delete", &jailed.path, err))?;
    Ok(format!("deleted {path}"))
}

/// The text of the jailed file, read inside its open directory.
fn read_jailed(home: &Path, jailed: &Jailed, path: &str) -> Result<String, DreamError> {
    let (file, len) = jailed
        .dir
        .open_file(&jailed.name)
        .map_err(|error| refusal(home, path, "cannot read", error))?
        .ok_or_else(|| DreamError::io("cannot read", &jailed.path, ErrorKind::NotFound.into()))?;
    text_of(file, len, &jailed.path, path)
}

/// The jailed path found missing while `action` (`cannot read`, ...).
fn missing(action: &'static str, jailed: &JailedRead) -> DreamError {
    DreamError::io(
        action,
        jailed.root.path().join(&jailed.rel),
        ErrorKind::NotFound.into(),
    )
}

/// The whole of `file` (`len` bytes long, at `real`) as UTF-8 text.
fn text_of(file: File, len: u64, real: &Path, path: &str) -> Result<String, DreamError> {
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0).saturating_add(1));
    file.take(u64::MAX)
        .read_to_end(&mut bytes)
        .map_err(|err| DreamError::io("cannot read", real, err))?;
    String::from_utf8(bytes).map_err(|_| DreamError::NotText {
        path: path.to_owned(),
    })
}

/// Every entry that is not a directory under the jailed path (or the path
/// itself when it is not a directory), relative to the home, with its
/// kind; never descending into a link or `.git`. Each directory is opened
/// inside its parent, following no link; one that cannot be read is
/// skipped.
fn walk_files(
    home: &Path,
    path: &str,
    jailed: &JailedRead,
) -> Result<Vec<(PathBuf, Kind)>, DreamError> {
    let refused = |error| refusal(home, path, "cannot resolve", error);
    let start = match jailed.root.open_dir(&jailed.rel) {
        Ok(Some(dir)) => dir,
        Ok(None) => return Err(missing("cannot resolve", jailed)),
        // Not a directory: the one file, unless it is a link.
        Err(BeneathError::NotADirectory { .. }) => {
            let mut names: Vec<&std::ffi::OsStr> = jailed.rel.iter().collect();
            let name = names.pop().unwrap_or_default();
            let parent: PathBuf = names.iter().collect();
            let dir = jailed.root.open_dir(&parent).map_err(refused)?;
            return match dir
                .map(|dir| dir.stat(name))
                .transpose()
                .map_err(refused)?
                .flatten()
            {
                Some(stat) if stat.kind == Kind::Link => Err(refused(BeneathError::Link {
                    path: jailed.rel.clone(),
                })),
                Some(stat) => Ok(vec![(jailed.rel.clone(), stat.kind)]),
                None => Ok(Vec::new()),
            };
        }
        Err(error) => return Err(refused(error)),
    };
    let mut files = Vec::new();
    if jailed.rel.file_name().is_some_and(|name| name == ".git") {
        return Ok(files);
    }
    let mut pending = vec![(Rc::new(start), None, jailed.rel.clone())];
    while let Some((parent, name, rel)) = pending.pop() {
        let dir = match name {
            None => parent,
            Some(name) => match parent.open_dir(Path::new(&name)) {
                Ok(Some(dir)) => Rc::new(dir),
                _ => continue,
            },
        };
        let Ok(entries) = dir.entries() else {
            continue;
        };
        for entry in entries {
            if entry.name == ".git" {
                continue;
            }
            let file = rel.join(&entry.name);
            if entry.kind == Kind::Dir {
                pending.push((Rc::clone(&dir), Some(entry.name), file));
            } else {
                files.push((file, entry.kind));
            }
        }
    }
    Ok(files)
}

/// A path below the home as the tools show it: `/`-separated.
fn shown(rel: &Path) -> String {
    let parts: Vec<_> = rel
        .components()
        .map(|component| component.as_os_str().to_string_lossy())
        .collect();
    parts.join("/")
}

/// A dream write or edit obeys the notes' size limit, as the notes tools
/// do: a note of `bytes` over [`NoteStore::MAX_NOTE_BYTES`] is refused.
fn refuse_oversized(path: &str, bytes: usize) -> Result<(), DreamError> {
    if bytes > NoteStore::MAX_NOTE_BYTES {
        return Err(DreamError::TooLarge {
            path: path.to_owned(),
            bytes,
            limit: NoteStore::MAX_NOTE_BYTES,
        });
    }
    Ok(())
}

/// The dream never copies a credential: a write or edit is refused when
/// the file as it would be written, or its path, holds one, whatever the
/// setting of the notes tools. The whole file is judged, so edits cannot
/// assemble a key piece by piece.
fn refuse_secrets(path: &str, text: &str) -> Result<(), DreamError> {
    refuse_secret_path(path)?;
    match find_secret(text) {
        Some(found) => Err(DreamError::SecretDetected {
            path: path.to_owned(),
            line: found.line,
            kind: found.kind.as_str(),
        }),
        None => Ok(()),
    }
}

/// A path holding a credential is refused before anything else, and
/// without repeating the path.
fn refuse_secret_path(path: &str) -> Result<(), DreamError> {
    match find_secret(path) {
        Some(found) => Err(DreamError::SecretInPath {
            kind: found.kind.as_str(),
        }),
        None => Ok(()),
    }
}

/// The durable write inside the jailed directory: a temporary file created
/// there, fsynced, renamed over the target there, then the directory
/// fsynced; the temporary file is removed on failure.
fn atomic_write(jailed: &Jailed, bytes: &[u8]) -> Result<(), DreamError> {
    let failed = |err| DreamError::io("cannot write", &jailed.path, err);
    jailed.dir.replace(&jailed.name, bytes).map_err(failed)?;
    jailed.dir.sync().map_err(failed)
}
