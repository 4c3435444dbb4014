//! The filesystem primitives of the store: the per-file queue, the
//! cross-process directory lock, link-refusing path checks, and the durable
//! atomic write.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

use super::error::NoteError;
use crate::wire::RefusalCode;

/// Holders and waiters of each busy file; an idle key is removed. Keys are
/// the paths' bytes: `Path`'s own order compares component by component,
/// which costs more than the rest of a turn, and any total order serves.
static QUEUE: Mutex<BTreeMap<OsString, Slot>> = Mutex::new(BTreeMap::new());
static QUEUE_WAKE: Condvar = Condvar::new();

#[derive(Debug)]
struct Slot {
    held: bool,
    users: usize,
}

fn queue() -> MutexGuard<'static, BTreeMap<OsString, Slot>> {
    QUEUE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Exclusive in-process turns on one or more files, taken in sorted order
/// (so two renames can never deadlock) and released on drop.
#[derive(Debug)]
pub(crate) struct FileTurns {
    keys: Vec<OsString>,
}

impl FileTurns {
    /// Waits for and takes the turn of every path (duplicates count once).
    pub(crate) fn take(paths: &[&Path]) -> FileTurns {
        let mut keys: Vec<OsString> = paths
            .iter()
            .map(|path| path.as_os_str().to_owned())
            .collect();
        keys.sort();
        keys.dedup();
        for key in &keys {
            take_turn(key);
        }
        FileTurns { keys }
    }
}

/// Waits until `key` is free and marks it held.
fn take_turn(key: &OsStr) {
    let mut map = queue();
    match map.get_mut(key) {
        Some(slot) => slot.users += 1,
        None => {
            map.insert(
                key.to_owned(),
                Slot {
                    held: false,
                    users: 1,
                },
            );
        }
    }
    while map.get(key).is_some_and(|slot| slot.held) {
        map = QUEUE_WAKE.wait(map).unwrap_or_else(PoisonError::into_inner);
    }
    if let Some(slot) = map.get_mut(key) {
        slot.held = true;
    }
}

impl Drop for FileTurns {
    fn drop(&mut self) {
        let mut map = queue();
        let mut waiters = false;
        for key in &self.keys {
            if let Some(slot) = map.get_mut(key) {
                slot.held = false;
                slot.users -= 1;
                if slot.users == 0 {
                    map.remove(key);
                } else {
                    waiters = true;
                }
            }
        }
        drop(map);
        // Waking is a system call; the common turn (a listing's read of a
        // file nobody else touches) has no one to wake.
        if waiters {
            QUEUE_WAKE.notify_all();
        }
    }
}

/// An exclusive advisory lock (`flock`) on a note's directory, shared by
/// every process; also the handle used to fsync the directory. Released
/// when dropped (the descriptor closes).
#[derive(Debug)]
pub(crate) struct DirLock {
    dir: File,
    path: PathBuf,
}

impl DirLock {
    /// Locks each distinct directory, in sorted order.
    pub(crate) fn take(dirs: &[&Path]) -> Result<Vec<DirLock>, NoteError> {
        let mut dirs: Vec<&Path> = dirs.to_vec();
        dirs.sort();
        dirs.dedup();
        dirs.into_iter()
            .map(|dir| {
                let handle =
                    File::open(dir).map_err(|e| NoteError::io("open directory", dir, &e))?;
                handle
                    .lock()
                    .map_err(|e| NoteError::io("lock directory", dir, &e))?;
                Ok(DirLock {
                    dir: handle,
                    path: dir.to_path_buf(),
                })
            })
            .collect()
    }

    /// Flushes the directory entry changes (renames, new files) to disk.
    pub(crate) fn sync(&self) -> Result<(), NoteError> {
        self.dir
            .sync_all()
            .map_err(|e| NoteError::io("sync directory", &self.path, &e))
    }
}

/// What lies at a note path.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Presence {
    /// Nothing (or a missing directory on the way).
    Missing,
    /// A regular file.
    File,
}

/// The `invalid_address` refusal for a path that crosses a symbolic link.
fn crosses_link(link: &Path) -> NoteError {
    NoteError::new(
        RefusalCode::InvalidAddress,
        "the note path crosses a symbolic link; the notes store never follows links",
    )
    .with_path(link)
}

/// Looks at `target` below `root` without following any link: every
/// existing component under `root` must be a real directory and the target
/// a regular file.
pub(crate) fn inspect(root: &Path, target: &Path) -> Result<Presence, NoteError> {
    let relative = target.strip_prefix(root).map_err(|_| {
        NoteError::new(
            RefusalCode::InternalError,
            format!("{} is not below the notes root", target.display()),
        )
    })?;
    let mut current = root.to_path_buf();
    let count = relative.components().count();
    for (index, component) in relative.components().enumerate() {
        current.push(component);
        let meta = match fs::symlink_metadata(&current) {
            Ok(meta) => meta,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Presence::Missing),
            Err(e) => return Err(NoteError::io("inspect", &current, &e)),
        };
        let file_type = meta.file_type();
        if file_type.is_symlink() {
            return Err(crosses_link(&current));
        }
        let last = index + 1 == count;
        if last && file_type.is_file() {
            return Ok(Presence::File);
        }
        if !file_type.is_dir() || last {
            let kind = if last {
                "is not a regular file"
            } else {
                "is not a directory"
            };
            return Err(NoteError::new(
                RefusalCode::IoError,
                format!("{} {kind}", current.display()),
            )
            .with_path(&current));
        }
    }
    Ok(Presence::Missing)
}

/// Whether the directory `dir` below `root` exists, refusing a link or a
/// non-directory anywhere on the way.
pub(crate) fn inspect_dir(root: &Path, dir: &Path) -> Result<bool, NoteError> {
    let relative = dir.strip_prefix(root).map_err(|_| {
        NoteError::new(
            RefusalCode::InternalError,
            format!("{} is not below the notes root", dir.display()),
        )
    })?;
    let mut current = root.to_path_buf();
    for component in relative.components() {
        current.push(component);
        let meta = match fs::symlink_metadata(&current) {
            Ok(meta) => meta,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(NoteError::io("inspect", &current, &e)),
        };
        if meta.file_type().is_symlink() {
            return Err(crosses_link(&current));
        }
        if !meta.is_dir() {
            return Err(NoteError::new(
                RefusalCode::IoError,
                format!("{} is not a directory", current.display()),
            )
            .with_path(&current));
        }
    }
    Ok(true)
}

/// Creates `dir` and its parents below `root` (and `root` itself), refusing
/// to pass through a link.
pub(crate) fn create_dirs(root: &Path, dir: &Path) -> Result<(), NoteError> {
    fs::create_dir_all(root).map_err(|e| NoteError::io("create directory", root, &e))?;
    let relative = dir.strip_prefix(root).map_err(|_| {
        NoteError::new(
            RefusalCode::InternalError,
            format!("{} is not below the notes root", dir.display()),
        )
    })?;
    let mut current = root.to_path_buf();
    for component in relative.components() {
        current.push(component);
        match fs::create_dir(&current) {
            Ok(()) => continue,
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(NoteError::io("create directory", &current, &e)),
        }
        let meta =
            fs::symlink_metadata(&current).map_err(|e| NoteError::io("inspect", &current, &e))?;
        if meta.file_type().is_symlink() {
            return Err(crosses_link(&current));
        }
        if !meta.is_dir() {
            return Err(NoteError::new(
                RefusalCode::IoError,
                format!("{} is not a directory", current.display()),
            )
            .with_path(&current));
        }
    }
    Ok(())
}

/// Writes `bytes` to `path` durably and atomically (see
/// [`crate::durable`]). The caller fsyncs the directory afterwards, under
/// its directory lock.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), NoteError> {
    crate::durable::replace(path, bytes).map_err(|e| NoteError::io("write", path, &e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turns_are_exclusive_and_idle_keys_are_removed() {
        let dir = tempfile::tempdir().expect("temp");
        let key = dir.path().join("note.md");
        let counter = Mutex::new((0usize, 0usize));
        std::thread::scope(|scope| {
            for _ in 0..4 {
                scope.spawn(|| {
                    for _ in 0..50 {
                        let _turn = FileTurns::take(&[&key, &key]);
                        let mut seen = counter.lock().expect("counter");
                        seen.0 += 1;
                        seen.1 = seen.1.max(seen.0);
                        drop(seen);
                        std::thread::yield_now();
                        counter.lock().expect("counter").0 -= 1;
                    }
                });
            }
        });
        assert_eq!(
            counter.lock().expect("counter").1,
            1,
            "never two holders at once"
        );
        assert!(
            !queue().contains_key(key.as_os_str()),
            "the idle key was removed"
        );
    }

    #[test]
    fn a_failed_atomic_write_leaves_no_temp_file() {
        let dir = tempfile::tempdir().expect("temp");
        let target = dir.path().join("note.md");
        fs::create_dir_all(target.join("occupied")).expect("a directory in the way");
        let error = write_atomic(&target, b"text").expect_err("rename onto a directory");
        assert_eq!(error.code(), RefusalCode::IoError);
        let names: Vec<String> = fs::read_dir(dir.path())
            .expect("dir")
            .map(|entry| {
                entry
                    .expect("entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        assert_eq!(names, ["note.md"]);
    }

    #[test]
    fn an_atomic_write_replaces_the_file() {
        let dir = tempfile::tempdir().expect("temp");
        let target = dir.path().join("note.md");
        write_atomic(&target, b"one").expect("write");
        write_atomic(&target, b"two").expect("replace");
        assert_eq!(fs::read(&target).expect("read"), b"two");
        assert_eq!(fs::read_dir(dir.path()).expect("dir").count(), 1);
    }
}
