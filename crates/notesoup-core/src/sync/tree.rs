//! The notes on disk as a [`NoteTree`]: read from the travelling homes, and
//! changed in place by what a merge gave, each file inside its open
//! directory, never through a link, under the directory lock the store
//! takes.

use std::ffi::OsStr;
use std::io::Read;
use std::path::Path;

use super::SyncError;
use super::merge::{NoteMerge, NoteTree, SideName, merge_note};
use crate::notes::NoteStore;
use crate::notes::beneath::{DirHandle, Kind};
use crate::notes::is_git_segment;

/// The longest path a synced note may have (the store's own bound).
const MAX_PATH_BYTES: usize = 512;

/// Which paths this machine syncs: the travelling homes' directories, less
/// the excluded prefixes.
#[derive(Debug, Clone)]
pub(crate) struct Scope {
    /// Home directories below the root (`project`, `human`, `agents`,
    /// `models`, `pi/session`).
    pub(crate) homes: Vec<&'static str>,
    /// Excluded paths (a note, or a folder and all below it).
    pub(crate) exclude: Vec<String>,
}

impl Scope {
    /// Whether `path` is a note path this machine syncs.
    pub(crate) fn contains(&self, path: &str) -> bool {
        note_path(path)
            && self.homes.iter().any(|home| in_home(path, home))
            && !self.exclude.iter().any(|excluded| {
                let excluded = excluded.trim_end_matches('/');
                path == excluded
                    || path
                        .strip_prefix(excluded)
                        .is_some_and(|rest| rest.starts_with('/'))
            })
    }
}

/// Whether `path` lies in `home`, below its owner folder where it has one
/// (`project/<key>/…`, `agents/<slug>/…`).
fn in_home(path: &str, home: &str) -> bool {
    let Some(rest) = path
        .strip_prefix(home)
        .and_then(|rest| rest.strip_prefix('/'))
    else {
        return false;
    };
    let depth = rest.split('/').count();
    if home == "human" {
        depth >= 1
    } else {
        depth >= 2
    }
}

/// Whether `path` can be a synced note: plain names (no empty, `.`-led,
/// control or Git-reserved segment), a `.md` file, within the store's
/// path bound. A tree from a remote is held to it before anything of it
/// reaches the disk.
pub(crate) fn note_path(path: &str) -> bool {
    path.len() <= MAX_PATH_BYTES
        && path.ends_with(".md")
        && path.split('/').all(|segment| {
            !segment.is_empty()
                && !segment.starts_with('.')
                && !segment.contains('\\')
                && !segment.chars().any(char::is_control)
                && !is_git_segment(segment)
        })
}

/// Every note of `scope` on disk under `root`.
pub(crate) fn read_notes(root: &Path, scope: &Scope) -> Result<NoteTree, SyncError> {
    let mut tree = NoteTree::new();
    let root_dir = match DirHandle::open_root(root) {
        Ok(dir) => dir,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(tree),
        Err(err) => return Err(SyncError::io("open the notes root", err)),
    };
    for home in &scope.homes {
        let dir = match root_dir.open_dir(Path::new(home)) {
            Ok(Some(dir)) => dir,
            // Missing, or a link: nothing of it travels.
            Ok(None) | Err(_) => continue,
        };
        walk(&dir, home, &mut tree)?;
    }
    tree.retain(|path, _| scope.contains(path));
    Ok(tree)
}

fn walk(dir: &DirHandle, prefix: &str, tree: &mut NoteTree) -> Result<(), SyncError> {
    let entries = dir
        .entries()
        .map_err(|err| SyncError::io("read a notes folder", err))?;
    for entry in entries {
        let Some(name) = entry.name.to_str() else {
            continue;
        };
        if name.starts_with('.') {
            continue;
        }
        let path = format!("{prefix}/{name}");
        match entry.kind {
            Kind::Dir => {
                if let Ok(Some(child)) = dir.open_dir(Path::new(name)) {
                    walk(&child, &path, tree)?;
                }
            }
            Kind::File if name.ends_with(".md") => {
                if let Some(bytes) = read_file(dir, OsStr::new(name))? {
                    tree.insert(path, bytes);
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// A file of `dir`, within the store's note bound (a larger one is read to
/// the bound plus one byte, so it never equals a note).
fn read_file(dir: &DirHandle, name: &OsStr) -> Result<Option<Vec<u8>>, SyncError> {
    match dir.open_file(name) {
        Ok(Some((file, _))) => {
            let mut bytes = Vec::new();
            file.take(NoteStore::MAX_NOTE_BYTES as u64 + 1)
                .read_to_end(&mut bytes)
                .map_err(|err| SyncError::io("read a note", err))?;
            Ok(Some(bytes))
        }
        Ok(None) | Err(_) => Ok(None),
    }
}

/// What applying one change did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Applied {
    /// The file is now what the merge gave.
    AsMerged,
    /// Someone wrote the note while the sync ran: the file holds both
    /// (merged again), or theirs went beside it as `side`.
    Remerged { side: Option<String> },
    /// The file changed while the sync ran and the merge deleted it: kept.
    Kept,
}

/// Changes note `path` from `expected` (what the sync read) to `new`
/// (`None`: deleted), holding the note's directory lock. A note written
/// meanwhile is merged again, never overwritten.
pub(crate) fn apply(
    root: &Path,
    path: &str,
    expected: Option<&[u8]>,
    new: Option<&[u8]>,
    side_name: SideName<'_>,
) -> Result<Applied, SyncError> {
    let fail = |err: std::io::Error| SyncError::io("write a note", err);
    let (parent, name) = path.rsplit_once('/').unwrap_or(("", path));
    let root_dir = DirHandle::open_root(root).map_err(fail)?;
    let mut dir = match new {
        Some(_) => root_dir
            .create_dirs(Path::new(parent))
            .map_err(|err| SyncError::io("create a notes folder", err))?,
        None => match root_dir.open_dir(Path::new(parent)) {
            Ok(Some(dir)) => dir,
            Ok(None) => return Ok(Applied::AsMerged),
            Err(err) => return Err(SyncError::io("open a notes folder", err)),
        },
    };
    dir.lock().map_err(fail)?;
    let name = OsStr::new(name);
    let current = read_file(&dir, name)?;
    if current.as_deref() == expected {
        match new {
            Some(bytes) => dir.replace(name, bytes).map_err(fail)?,
            None => match dir.remove_file(name) {
                Ok(()) => {}
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                Err(err) => return Err(fail(err)),
            },
        }
        dir.sync().map_err(fail)?;
        return Ok(Applied::AsMerged);
    }
    // Written while the sync ran.
    let (Some(current), Some(new)) = (current, new) else {
        return Ok(Applied::Kept);
    };
    match merge_note(path, expected, &current, new) {
        NoteMerge::Clean(merged) => {
            dir.replace(name, &merged).map_err(fail)?;
            dir.sync().map_err(fail)?;
            Ok(Applied::Remerged { side: None })
        }
        NoteMerge::Conflict => {
            let taken = |candidate: &str| {
                let file = candidate.rsplit('/').next().unwrap_or(candidate);
                matches!(dir.stat(OsStr::new(file)), Ok(Some(_)))
            };
            let side = side_name(path, &taken);
            let file = side.rsplit('/').next().unwrap_or(&side).to_owned();
            dir.replace(OsStr::new(&file), new).map_err(fail)?;
            dir.sync().map_err(fail)?;
            Ok(Applied::Remerged { side: Some(side) })
        }
    }
}
