//! The dreamer's tools: jailed write, edit and crumpled-only delete, plus
//! read-only read, ls, find and grep. A host wraps these in its own tool
//! definitions and records `{tool, path}` for every write, edit and delete.

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::DreamError;
use super::jail::{jail_read, jail_write};
use crate::notes::{find_secret, parse_note};

/// The dreamer's tool allowlist in the original (`DREAMER_TOOLS`); `write`
/// and `edit` are the jailed versions. [`DELETE_TOOL`] is offered besides.
pub const DREAMER_TOOLS: [&str; 6] = ["read", "grep", "find", "ls", "write", "edit"];
/// The custom crumpled-only delete tool.
pub const DELETE_TOOL: &str = "delete";
/// The description hosts give the delete tool (its one parameter is `path`).
pub const DELETE_TOOL_DESCRIPTION: &str = "Delete a crumpled note (one whose frontmatter has crumpledAt) inside the notes home. A live note is refused: only the playbook's wastebasket rule permits deletion.";

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
}

impl DreamTools {
    /// Tools for the notes home `home`.
    pub fn new(home: impl Into<PathBuf>) -> Self {
        DreamTools { home: home.into() }
    }

    /// The notes home.
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// Writes `content` to `path` (creating parent directories inside the
    /// home) atomically. Returns `wrote <path> (<n> bytes)`.
    pub fn write(&self, path: &str, content: &str) -> Result<String, DreamError> {
        refuse_secrets(path, content)?;
        let jailed = jail_write(&self.home, path, true)?;
        atomic_write(&jailed.real, content.as_bytes())?;
        Ok(format!("wrote {path} ({} bytes)", content.len()))
    }

    /// Applies `edits` in order to the existing text file at `path`; each
    /// `old_text` must occur exactly once in the evolving text. Nothing is
    /// written unless every edit applies. Returns `edited <path> (<n> edits)`.
    pub fn edit(&self, path: &str, edits: &[TextEdit]) -> Result<String, DreamError> {
        refuse_secret_path(path)?;
        let jailed = jail_write(&self.home, path, false)?;
        let mut text = read_text(&jailed.real, path)?;
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
        refuse_secrets(path, &text)?;
        atomic_write(&jailed.real, text.as_bytes())?;
        Ok(format!("edited {path} ({} edits)", edits.len()))
    }

    /// Deletes a crumpled note; see [`delete_crumpled_note`].
    pub fn delete(&self, path: &str) -> Result<String, DreamError> {
        delete_crumpled_note(&self.home, path)
    }

    /// Reads the text file at `path` (its real path must be inside the home).
    pub fn read(&self, path: &str) -> Result<String, DreamError> {
        let (_, real) = jail_read(&self.home, path)?;
        read_text(&real, path)
    }

    /// Lists the directory at `path`, sorted; directories end in `/`.
    pub fn ls(&self, path: &str) -> Result<Vec<String>, DreamError> {
        let (_, real) = jail_read(&self.home, path)?;
        let entries =
            fs::read_dir(&real).map_err(|err| DreamError::io("cannot list", &real, err))?;
        let mut names = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|err| DreamError::io("cannot list", &real, err))?;
            let mut name = entry.file_name().to_string_lossy().into_owned();
            if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                name.push('/');
            }
            names.push(name);
        }
        names.sort();
        Ok(names)
    }

    /// Lists every file under `path`, recursively, relative to the home and
    /// sorted. Symlinks are listed, not followed; `.git` is skipped.
    pub fn find(&self, path: &str) -> Result<Vec<String>, DreamError> {
        let (real_home, real) = jail_read(&self.home, path)?;
        let mut files: Vec<String> = walk_files(&real)
            .map(|file| relative(&real_home, &file))
            .collect();
        files.sort();
        Ok(files)
    }

    /// Case-insensitive literal search for `query` in every UTF-8 file under
    /// `path` (a directory or one file), in path order.
    pub fn grep(&self, query: &str, path: &str) -> Result<Vec<GrepMatch>, DreamError> {
        let (real_home, real) = jail_read(&self.home, path)?;
        let needle = query.to_lowercase();
        let mut files: Vec<PathBuf> = walk_files(&real).collect();
        files.sort();
        let mut matches = Vec::new();
        for file in files {
            let Ok(text) = fs::read_to_string(&file) else {
                continue;
            };
            let shown = relative(&real_home, &file);
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

/// Deletes the note at `path` only when its frontmatter has `crumpledAt`
/// (it is in the wastebasket). The path is jailed without creating parents;
/// a symlink is removed itself, after its in-home target was checked.
/// Returns `deleted <path>`.
pub fn delete_crumpled_note(home: &Path, path: &str) -> Result<String, DreamError> {
    let jailed = jail_write(home, path, false)?;
    let text = read_text(&jailed.real, path)?;
    // Only the presence of `crumpledAt` matters, so the clock and zone the
    // codec uses for defaults are irrelevant here.
    let note = parse_note(&text, 0, &jiff::tz::TimeZone::UTC);
    if !note.meta.is_crumpled() {
        return Err(DreamError::NotCrumpled {
            path: path.to_owned(),
        });
    }
    fs::remove_file(&jailed.named)
        .map_err(|err| DreamError::io("cannot delete", &jailed.named, err))?;
    Ok(format!("deleted {path}"))
}

fn read_text(real: &Path, path: &str) -> Result<String, DreamError> {
    let bytes = fs::read(real).map_err(|err| DreamError::io("cannot read", real, err))?;
    String::from_utf8(bytes).map_err(|_| DreamError::NotText {
        path: path.to_owned(),
    })
}

/// Every regular file or symlink under `root` (or `root` itself when it is
/// a file), never descending into symlinked directories or `.git`.
fn walk_files(root: &Path) -> impl Iterator<Item = PathBuf> {
    walkdir::WalkDir::new(root)
        .follow_links(false)
        .into_iter()
        .filter_entry(|entry| entry.file_name() != ".git")
        .flatten()
        .filter(|entry| !entry.file_type().is_dir())
        .map(walkdir::DirEntry::into_path)
}

fn relative(real_home: &Path, path: &Path) -> String {
    let relative = path.strip_prefix(real_home).unwrap_or(path);
    let parts: Vec<_> = relative
        .components()
        .map(|component| component.as_os_str().to_string_lossy())
        .collect();
    parts.join("/")
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

/// Temp file in the same directory, fsync, rename into place, fsync the
/// directory; the temp file is removed on failure.
fn atomic_write(target: &Path, bytes: &[u8]) -> Result<(), DreamError> {
    crate::durable::write(target, bytes).map_err(|err| DreamError::io("cannot write", target, err))
}
