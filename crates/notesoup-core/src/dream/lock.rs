//! The dream lock `<home>/.dream.lock` and the last-run stamp
//! `<home>/.dream.lock.last-run`.
//!
//! The lock is a file held with an exclusive `flock` for the whole run; it
//! holds `<pid> <uuid token>`. A held flock refuses. A file whose flock is
//! free was left by a run that is gone (the kernel frees the flock of a
//! process however it ends, SIGKILL included): it is stale and taken over.

use std::fs::{self, File, OpenOptions};
use std::io::{ErrorKind, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use jiff::Timestamp;

use super::DreamError;

/// File name of the lock inside the notes home.
pub(crate) const LOCK_FILE: &str = ".dream.lock";
/// File name of the last-run stamp inside the notes home; its mtime is the
/// time of the last dream.
pub(crate) const LAST_RUN_FILE: &str = ".dream.lock.last-run";

/// The longest lock content read back: `<pid> <uuid>` is far shorter.
const MAX_LOCK_BYTES: u64 = 4096;

/// How often acquisition starts again when the file it locked was removed
/// by another run at the same moment.
const ACQUIRE_ATTEMPTS: usize = 8;

/// The last-run stamp as it was before this run overwrote it.
#[derive(Debug)]
enum PreviousStamp {
    /// There was none: a failed run removes the one it created.
    Absent,
    /// There was one: a failed run puts its content and mtime back.
    Present {
        content: Vec<u8>,
        modified: SystemTime,
    },
    /// This run did not write a stamp, so a failure leaves it alone.
    Untouched,
}

/// A held dream lock. Only the run that took it removes it, through
/// [`DreamLock::release`] (success) or [`DreamLock::fail`] (failure); its
/// flock is held until then (or until it is dropped).
#[derive(Debug)]
pub(crate) struct DreamLock {
    lock_path: PathBuf,
    stamp_path: PathBuf,
    /// The locked file; closing it frees the flock. `None` once settled.
    file: Option<File>,
    content: String,
    stale: Option<String>,
    started_at: Timestamp,
    previous_stamp: PreviousStamp,
    settled: bool,
}

/// What the lock file of a home says, read without taking it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LockState {
    /// No lock file.
    Absent,
    /// A running dream holds its flock; the file's content.
    Held(String),
    /// Nothing holds it: a dream that is gone left it; the file's content.
    Stale(String),
    /// Not a regular file (a symlink, a directory), or it cannot be opened
    /// or tested: no dream takes it, a person must look. Why.
    Unusable(String),
}

impl DreamLock {
    /// Takes the lock of `home` at `now`, then writes the last-run stamp
    /// (best effort; its mtime is set to `now`).
    ///
    /// The lock file is opened without following a symlink (created when
    /// missing) and flocked exclusively without waiting. Refuses with
    /// [`DreamError::LockHeld`] while another run holds the flock; a file
    /// whose flock is free is stale and is taken over (its content is
    /// [`DreamLock::stale`]).
    pub(crate) fn acquire(home: &Path, now: Timestamp) -> Result<DreamLock, DreamError> {
        let lock_path = home.join(LOCK_FILE);
        let content = format!("{} {}", std::process::id(), uuid::Uuid::new_v4());
        let (mut file, stale) = take(&lock_path)?;
        let written = file
            .set_len(0)
            .and_then(|()| file.rewind())
            .and_then(|()| file.write_all(content.as_bytes()))
            .and_then(|()| file.sync_all());
        if let Err(err) = written {
            // The half-written lock is ours and still flocked: remove it
            // rather than leave the next run a damaged one to take over.
            let _ = fs::remove_file(&lock_path);
            return Err(DreamError::io("cannot write lock", lock_path, err));
        }
        let stamp_path = home.join(LAST_RUN_FILE);
        let previous_stamp = write_stamp(&stamp_path, now);
        Ok(DreamLock {
            lock_path,
            stamp_path,
            file: Some(file),
            content,
            stale,
            started_at: now,
            previous_stamp,
            settled: false,
        })
    }

    /// The content of the stale lock this run took over (left by a dream
    /// that is gone), or `None` when there was no lock file.
    pub(crate) fn stale(&self) -> Option<&str> {
        self.stale.as_deref()
    }

    #[cfg(test)]
    /// When this run took the lock.
    pub(crate) fn started_at(&self) -> Timestamp {
        self.started_at
    }

    #[cfg(test)]
    /// The lock file's content, `<pid> <token>`.
    pub(crate) fn content(&self) -> &str {
        &self.content
    }

    /// The run's stamp: `ISO(startedAt)` with `:` and `.` replaced by `-`,
    /// e.g. `2026-09-15T09-31-45-392Z`. It names the report and the commits.
    pub(crate) fn stamp(&self) -> String {
        run_stamp(self.started_at)
    }

    /// Ends a successful run: removes the lock if it is still this run's,
    /// then frees the flock. Idempotent.
    pub(crate) fn release(&mut self) -> Result<(), DreamError> {
        if self.settled {
            return Ok(());
        }
        self.remove_own_lock()?;
        self.settle();
        Ok(())
    }

    /// Ends a failed run: restores the previous stamp (content and mtime) or
    /// removes the stamp this run created, then removes the lock if it is
    /// still this run's and frees the flock. Idempotent.
    pub(crate) fn fail(&mut self) -> Result<(), DreamError> {
        if self.settled {
            return Ok(());
        }
        self.restore_stamp()?;
        self.remove_own_lock()?;
        self.settle();
        Ok(())
    }

    /// Closes the file, which frees the flock, once the lock file is gone:
    /// removing it first leaves no moment where another run could take
    /// this run's file.
    fn settle(&mut self) {
        self.file = None;
        self.settled = true;
    }

    fn remove_own_lock(&self) -> Result<(), DreamError> {
        let ours = |bytes: &[u8]| {
            bytes == self.content.as_bytes()
                && self
                    .file
                    .as_ref()
                    .is_some_and(|file| names_file(&self.lock_path, file))
        };
        match fs::read(&self.lock_path) {
            Ok(bytes) if ours(&bytes) => fs::remove_file(&self.lock_path)
                .or_else(ignore_not_found)
                .map_err(|err| DreamError::io("cannot remove lock", &self.lock_path, err)),
            Ok(_) => Ok(()),
            Err(err) if err.kind() == ErrorKind::NotFound => Ok(()),
            Err(err) => Err(DreamError::io("cannot read lock", &self.lock_path, err)),
        }
    }

    fn restore_stamp(&self) -> Result<(), DreamError> {
        let path = &self.stamp_path;
        match &self.previous_stamp {
            PreviousStamp::Untouched => Ok(()),
            PreviousStamp::Absent => fs::remove_file(path)
                .or_else(ignore_not_found)
                .map_err(|err| DreamError::io("cannot remove last-run stamp", path, err)),
            PreviousStamp::Present { content, modified } => {
                let restore = || -> std::io::Result<()> {
                    let mut file = create_stamp(path)?;
                    file.write_all(content)?;
                    file.set_modified(*modified)
                };
                restore().map_err(|err| DreamError::io("cannot restore last-run stamp", path, err))
            }
        }
    }
}

/// The mtime of the last-run stamp of `home`, `None` when there is none.
pub(crate) fn last_run(home: &Path) -> Option<SystemTime> {
    fs::metadata(home.join(LAST_RUN_FILE))
        .and_then(|meta| meta.modified())
        .ok()
}

/// Reads the lock of `home` without disturbing a run: its flock is only
/// tested (taken shared for an instant, never waited for).
pub(crate) fn lock_state(home: &Path) -> LockState {
    let path = home.join(LOCK_FILE);
    match fs::symlink_metadata(&path) {
        Err(err) if err.kind() == ErrorKind::NotFound => return LockState::Absent,
        Err(err) => return LockState::Unusable(err.to_string()),
        Ok(meta) if !meta.file_type().is_file() => {
            return LockState::Unusable("not a regular file".to_owned());
        }
        Ok(_) => {}
    }
    let mut file = match open_no_follow(&path, Access::Read) {
        Ok(file) => file,
        Err(err) if err.kind() == ErrorKind::NotFound => return LockState::Absent,
        Err(err) => return LockState::Unusable(err.to_string()),
    };
    let content = read_content(&mut file);
    match file.try_lock_shared() {
        Ok(()) => LockState::Stale(content),
        Err(fs::TryLockError::WouldBlock) => LockState::Held(content),
        Err(fs::TryLockError::Error(err)) => LockState::Unusable(err.to_string()),
    }
}

/// Removes the lock of `home` when it is stale: it is flocked first (so no
/// run holds it, and none can take it meanwhile) and removed only while
/// the path still names the file locked. Returns whether a stale lock was
/// removed; a held lock is left alone.
pub(crate) fn remove_stale_lock(home: &Path) -> Result<bool, DreamError> {
    let path = home.join(LOCK_FILE);
    let file = match open_no_follow(&path, Access::Read) {
        Ok(file) => file,
        Err(err) if err.kind() == ErrorKind::NotFound => return Ok(false),
        Err(err) => return Err(DreamError::io("cannot open lock", path, err)),
    };
    match file.try_lock() {
        Ok(()) => {}
        Err(fs::TryLockError::WouldBlock) => return Ok(false),
        Err(fs::TryLockError::Error(err)) => return Err(DreamError::io("cannot lock", path, err)),
    }
    if !names_file(&path, &file) {
        return Ok(false);
    }
    fs::remove_file(&path).map_err(|err| DreamError::io("cannot remove lock", &path, err))?;
    Ok(true)
}

/// Opens and flocks the lock file; returns it with the content of the
/// stale lock it was (`None` when this run created the file).
fn take(path: &Path) -> Result<(File, Option<String>), DreamError> {
    for _ in 0..ACQUIRE_ATTEMPTS {
        let (mut file, created) =
            open_lock(path).map_err(|err| DreamError::io("cannot open lock", path, err))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => return Err(DreamError::LockHeld),
            Err(fs::TryLockError::Error(err)) => {
                return Err(DreamError::io("cannot lock", path, err));
            }
        }
        // A run that just ended removed the file it held (or a stale one
        // was cleaned away) between the open and the flock: this flock is
        // on a file no one else sees, so start again with the name.
        if !names_file(path, &file) {
            continue;
        }
        let stale = (!created).then(|| read_content(&mut file));
        return Ok((file, stale));
    }
    Err(DreamError::io(
        "cannot take lock",
        path,
        std::io::Error::other("the lock file kept being replaced"),
    ))
}

/// Creates the lock file, or opens the one there; never through a symlink.
/// Returns whether it was created.
fn open_lock(path: &Path) -> std::io::Result<(File, bool)> {
    for _ in 0..ACQUIRE_ATTEMPTS {
        match open_no_follow(path, Access::Create) {
            Ok(file) => return Ok((file, true)),
            Err(err) if err.kind() == ErrorKind::AlreadyExists => {}
            Err(err) => return Err(err),
        }
        match open_no_follow(path, Access::Write) {
            Ok(file) => return Ok((file, false)),
            // Removed in between: create it after all.
            Err(err) if err.kind() == ErrorKind::NotFound => {}
            Err(err) => return Err(err),
        }
    }
    Err(std::io::Error::other("the lock file kept being removed"))
}

/// Whether `path` (not followed) names the open `file`.
fn names_file(path: &Path, file: &File) -> bool {
    match (file.metadata(), fs::symlink_metadata(path)) {
        (Ok(open), Ok(named)) => same_file(&open, &named),
        _ => false,
    }
}

#[cfg(unix)]
fn same_file(a: &fs::Metadata, b: &fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

/// Without inode numbers in std, a regular file of the same length and
/// mtime stands in.
#[cfg(not(unix))]
fn same_file(a: &fs::Metadata, b: &fs::Metadata) -> bool {
    b.is_file() && a.len() == b.len() && a.modified().ok() == b.modified().ok()
}

/// The lock's content as text, at most [`MAX_LOCK_BYTES`], lossily decoded
/// (it is read for people, and a damaged lock may hold any bytes).
fn read_content(file: &mut File) -> String {
    let mut bytes = Vec::new();
    let _ = file.rewind();
    let _ = file.take(MAX_LOCK_BYTES).read_to_end(&mut bytes);
    String::from_utf8_lossy(&bytes).into_owned()
}

/// How the lock file is opened.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Access {
    /// Created new, for reading and writing; fails when it exists.
    Create,
    /// The existing file, for reading and writing.
    Write,
    /// The existing file, read only (to test or remove it).
    Read,
}

/// Opens `path` without following a final symlink.
#[cfg(target_os = "linux")]
fn open_no_follow(path: &Path, access: Access) -> std::io::Result<File> {
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::NOFOLLOW
        | OFlags::CLOEXEC
        | match access {
            Access::Create => OFlags::RDWR | OFlags::CREATE | OFlags::EXCL,
            Access::Write => OFlags::RDWR,
            Access::Read => OFlags::RDONLY,
        };
    let fd = rustix::fs::open(path, flags, Mode::from_raw_mode(0o644))?;
    Ok(File::from(fd))
}

/// Without `O_NOFOLLOW` at hand, a symlink is refused before the open.
#[cfg(not(target_os = "linux"))]
fn open_no_follow(path: &Path, access: Access) -> std::io::Result<File> {
    if fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_symlink()) {
        return Err(std::io::Error::other("the lock is a symlink"));
    }
    fs::OpenOptions::new()
        .read(true)
        .write(access != Access::Read)
        .create_new(access == Access::Create)
        .open(path)
}

/// `ISO(at)` as JavaScript's `toISOString` writes it:
/// `2026-09-15T09:31:45.392Z`.
pub(crate) fn iso_utc(at: Timestamp) -> String {
    at.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

/// `iso_utc(at)` with `:` and `.` replaced by `-`, safe in file names.
pub(crate) fn run_stamp(at: Timestamp) -> String {
    iso_utc(at).replace([':', '.'], "-")
}

fn write_stamp(path: &Path, now: Timestamp) -> PreviousStamp {
    let previous = match fs::read(path) {
        Ok(content) => match fs::metadata(path).and_then(|meta| meta.modified()) {
            Ok(modified) => PreviousStamp::Present { content, modified },
            // Without the old mtime a failure could not restore it: keep it.
            Err(_) => return PreviousStamp::Untouched,
        },
        Err(err) if err.kind() == ErrorKind::NotFound => PreviousStamp::Absent,
        Err(_) => return PreviousStamp::Untouched,
    };
    let write = || -> std::io::Result<()> {
        let mut file = create_stamp(path)?;
        file.write_all(iso_utc(now).as_bytes())?;
        file.set_modified(SystemTime::from(now))
    };
    // Best effort (the spec's wording): a failed write may still have
    // created or truncated the file, so the previous state is kept either way.
    let _ = write();
    previous
}

/// Opens the stamp at `path` for writing (created or truncated), never
/// through a link: a stamp planted as a link would have every dream write
/// wherever it points.
fn create_stamp(path: &Path) -> std::io::Result<fs::File> {
    let mut options = OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // The flag's bits fit an `int`, the type `open` takes.
        #[allow(clippy::cast_possible_wrap)]
        options.custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32);
    }
    options.open(path)
}

fn ignore_not_found(err: std::io::Error) -> std::io::Result<()> {
    if err.kind() == ErrorKind::NotFound {
        Ok(())
    } else {
        Err(err)
    }
}
