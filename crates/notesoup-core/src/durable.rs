//! The one durable write: a temporary file in the target's directory,
//! written, fsynced and renamed over the target, then the directory fsynced.
//! A crash leaves the old file or the new one, never a torn one; what it can
//! leave besides is a temporary file, which `temp_writer` recognises so
//! doctor can name it and clean it up.
//!
//! The temporary name is short and independent of the target's name
//! (`.notesoup-<pid>-<32 hex>.tmp`, at most 57 bytes), so a target whose
//! name is at the filesystem's 255-byte limit can still be written.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

const TEMP_PREFIX: &str = ".notesoup-";
const TEMP_SUFFIX: &str = ".tmp";

/// Writes `bytes` to `path` durably and atomically, fsyncing the directory
/// after the rename.
pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    replace(path, bytes)?;
    sync_dir(parent(path)?)
}

/// [`write()`] without the final directory fsync, for a caller that holds the
/// directory open and fsyncs it itself (the notes store, under its
/// directory lock).
pub(crate) fn replace(path: &Path, bytes: &[u8]) -> io::Result<()> {
    through_temp(path, bytes_of(bytes), &OpenOptions::new(), File::sync_all)
}

/// A [`through_temp`] write of `bytes`, whole.
fn bytes_of(bytes: &[u8]) -> impl FnOnce(&mut File) -> io::Result<()> {
    move |file| file.write_all(bytes)
}

/// A new temporary file beside `path` (opened with `options`, created
/// exclusively), filled by `write`, `finish`ed, and renamed over `path`;
/// the temporary file removed again when any step fails.
fn through_temp(
    path: &Path,
    write: impl FnOnce(&mut File) -> io::Result<()>,
    options: &OpenOptions,
    finish: impl FnOnce(&File) -> io::Result<()>,
) -> io::Result<()> {
    let temp = temp_path(parent(path)?);
    let written = (|| {
        // `create_new` is O_CREAT|O_EXCL: it never follows a link planted
        // at the temporary name.
        let mut file = options.clone().write(true).create_new(true).open(&temp)?;
        write(&mut file)?;
        finish(&file)?;
        fs::rename(&temp, path)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&temp);
    }
    written
}

/// [`write()`] with the file's permission bits set to `mode`: the temporary
/// file is created with them (never wider while it is written), then set to
/// them through the open file (so the umask does not narrow them and no
/// other file is touched): for installers, whose binaries must be
/// executable, and for secrets (0600). Like every durable write it never
/// writes through a link: the temporary file is new (O_CREAT|O_EXCL), and a
/// link at `path` is replaced by the rename, not followed.
#[cfg(unix)]
pub(crate) fn write_with_mode(path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    through_temp(
        path,
        bytes_of(bytes),
        OpenOptions::new().mode(mode),
        |file| {
            file.set_permissions(fs::Permissions::from_mode(mode))?;
            file.sync_all()
        },
    )?;
    sync_dir(parent(path)?)
}

/// Permission bits are unix's: elsewhere a plain [`write()`].
#[cfg(not(unix))]
pub(crate) fn write_with_mode(path: &Path, bytes: &[u8], _mode: u32) -> io::Result<()> {
    write(path, bytes)
}

/// Replaces `path` with `bytes` atomically (readers see the old or the new
/// file, never a torn one) but without any fsync: for records a host can
/// rebuild, written on a hot path where an fsync costs more than the rest
/// of the work. A crash may lose the update, never tear it.
pub fn replace_unsynced(path: &Path, bytes: &[u8]) -> io::Result<()> {
    replace_unsynced_with(path, bytes_of(bytes))
}

/// [`replace_unsynced`] of what `write` writes into the new file: for a
/// large record written as it is made, never whole in memory.
pub(crate) fn replace_unsynced_with(
    path: &Path,
    write: impl FnOnce(&mut File) -> io::Result<()>,
) -> io::Result<()> {
    through_temp(path, write, &OpenOptions::new(), |_| Ok(()))
}

/// Flushes a directory's entries (a rename into it, a new file) to disk.
#[cfg(unix)]
pub(crate) fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Directories cannot be opened for syncing off unix.
#[cfg(not(unix))]
pub(crate) fn sync_dir(_dir: &Path) -> io::Result<()> {
    Ok(())
}

/// A fresh temporary path in `dir`.
fn temp_path(dir: &Path) -> PathBuf {
    dir.join(temp_name())
}

/// A fresh temporary file name (`.notesoup-<pid>-<32 hex>.tmp`), for the
/// same write made inside an open directory (the notes store's
/// [`DirHandle::replace`](crate::notes::beneath::DirHandle::replace)).
pub(crate) fn temp_name() -> String {
    format!(
        "{TEMP_PREFIX}{}-{}{TEMP_SUFFIX}",
        std::process::id(),
        uuid::Uuid::new_v4().simple()
    )
}

fn parent(path: &Path) -> io::Result<&Path> {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => Ok(dir),
        Some(_) => Ok(Path::new(".")),
        None => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "a durable write needs a file path",
        )),
    }
}

/// The process id of the writer that left the temporary file `name`, when
/// `name` is one of notesoup's temporary names: today's
/// `.notesoup-<pid>-<32 hex>.tmp`, or the earlier `<note>.<pid>.<32 hex>.tmp`
/// and `<note>.<pid>.<uuid>.tmp`.
pub(crate) fn temp_writer(name: &str) -> Option<u32> {
    let stem = name.strip_suffix(TEMP_SUFFIX)?;
    if let Some(rest) = stem.strip_prefix(TEMP_PREFIX) {
        let (pid, token) = rest.split_once('-')?;
        return is_token(token).then(|| pid.parse().ok()).flatten();
    }
    let (head, token) = stem.rsplit_once('.')?;
    let (_, pid) = head.rsplit_once('.')?;
    if !is_token(token) {
        return None;
    }
    pid.parse().ok()
}

/// A random token: 32 hex digits, with or without a UUID's hyphens.
fn is_token(token: &str) -> bool {
    let digits = token.chars().filter(|&c| c != '-').count();
    digits == 32 && token.len() <= 36 && token.chars().all(|c| c == '-' || c.is_ascii_hexdigit())
}

/// Whether the process `pid` is still running. Without a process table to
/// ask (off Linux) every writer counts as alive, so nothing is cleaned.
pub(crate) fn writer_alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    let proc = Path::new("/proc");
    if !proc.join("self").exists() {
        return true;
    }
    proc.join(pid.to_string()).exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_names_are_recognised_in_every_form() {
        let check =
            |name: &str, expect: Option<u32>| assert_eq!(temp_writer(name), expect, "{name}");
        check(
            ".notesoup-42-0123456789abcdef0123456789abcdef.tmp",
            Some(42),
        );
        check("note.md.42.0123456789abcdef0123456789abcdef.tmp", Some(42));
        check(
            "note.md.7.01234567-89ab-cdef-0123-456789abcdef.tmp",
            Some(7),
        );
        check(".notesoup-42-0123.tmp", None);
        check(".notesoup-x-0123456789abcdef0123456789abcdef.tmp", None);
        check("note.md", None);
        check("notes.tmp", None);
        check("a.b.0123456789abcdef0123456789abcdeg.tmp", None);
    }

    #[test]
    fn a_write_replaces_and_leaves_only_the_target() {
        let dir = tempfile::tempdir().expect("temp");
        let target = dir.path().join(format!("{}.md", "n".repeat(252)));
        write(&target, b"one").expect("a 255-byte name is writable");
        write(&target, b"two").expect("replace");
        assert_eq!(fs::read(&target).expect("read"), b"two");
        assert_eq!(fs::read_dir(dir.path()).expect("dir").count(), 1);
        let name = temp_path(dir.path());
        let name = name.file_name().and_then(|n| n.to_str()).expect("utf-8");
        assert!(name.len() <= 57, "{name}");
        assert_eq!(temp_writer(name), Some(std::process::id()));
    }

    #[test]
    fn a_failed_write_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().expect("temp");
        let target = dir.path().join("note.md");
        fs::create_dir_all(target.join("occupied")).expect("a directory in the way");
        write(&target, b"text").expect_err("rename onto a directory");
        assert_eq!(fs::read_dir(dir.path()).expect("dir").count(), 1);
    }

    #[test]
    fn an_unsynced_replace_is_still_atomic_and_tidy() {
        let dir = tempfile::tempdir().expect("temp");
        let target = dir.path().join("record.json");
        replace_unsynced(&target, b"one").expect("write");
        replace_unsynced(&target, b"two").expect("replace");
        assert_eq!(fs::read(&target).expect("read"), b"two");
        assert_eq!(fs::read_dir(dir.path()).expect("dir").count(), 1);
        fs::create_dir_all(dir.path().join("blocked.json/x")).expect("a directory in the way");
        replace_unsynced(&dir.path().join("blocked.json"), b"x")
            .expect_err("rename onto a directory");
        assert_eq!(
            fs::read_dir(dir.path()).expect("dir").count(),
            2,
            "no temporary file left"
        );
        // A write that fails part way leaves the old file, and no other.
        let failed = replace_unsynced_with(&target, |file| {
            file.write_all(b"thr")?;
            Err(io::Error::other("cut"))
        });
        assert_eq!(failed.expect_err("failed").to_string(), "cut");
        assert_eq!(fs::read(&target).expect("read"), b"two");
        assert_eq!(fs::read_dir(dir.path()).expect("dir").count(), 2);
        replace_unsynced_with(&target, |file| file.write_all(b"three")).expect("written");
        assert_eq!(fs::read(&target).expect("read"), b"three");
    }

    /// A bare file name is written in the working directory; a path
    /// with no file name is refused before anything is opened.
    #[test]
    fn a_write_s_directory_is_its_parent_or_the_working_directory() {
        assert_eq!(
            parent(Path::new("state.json")).expect("bare"),
            Path::new(".")
        );
        assert_eq!(
            parent(Path::new("cache/state.json")).expect("nested"),
            Path::new("cache")
        );
        let refused = parent(Path::new("/")).expect_err("no file name");
        assert_eq!(refused.kind(), io::ErrorKind::InvalidInput);
    }

    #[test]
    fn this_process_is_alive() {
        assert!(writer_alive(std::process::id()));
    }
}
