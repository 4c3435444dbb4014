//! The dream lock `<home>/.dream.lock` and the last-run stamp
//! `<home>/.dream.lock.last-run`.
//!
//! The lock is created exclusively and holds `<pid> <uuid token>`. An
//! existing lock always refuses, whatever its content or age: there is no
//! stale takeover, so a crashed run leaves a lock that only a human removes.

use std::fs::{self, OpenOptions};
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use jiff::Timestamp;

use super::DreamError;

/// File name of the lock inside the notes home.
pub const LOCK_FILE: &str = ".dream.lock";
/// File name of the last-run stamp inside the notes home; its mtime is the
/// time of the last dream.
pub const LAST_RUN_FILE: &str = ".dream.lock.last-run";

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
/// [`DreamLock::release`] (success) or [`DreamLock::fail`] (failure).
#[derive(Debug)]
pub struct DreamLock {
    lock_path: PathBuf,
    stamp_path: PathBuf,
    content: String,
    started_at: Timestamp,
    previous_stamp: PreviousStamp,
    settled: bool,
}

impl DreamLock {
    /// Takes the lock of `home` at `now`, then writes the last-run stamp
    /// (best effort; its mtime is set to `now`).
    ///
    /// Refuses with [`DreamError::LockHeld`] when the lock file exists.
    pub fn acquire(home: &Path, now: Timestamp) -> Result<DreamLock, DreamError> {
        let lock_path = home.join(LOCK_FILE);
        let content = format!("{} {}", std::process::id(), uuid::Uuid::new_v4());
        let mut file = match OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&lock_path)
        {
            Ok(file) => file,
            Err(err) if err.kind() == ErrorKind::AlreadyExists => return Err(DreamError::LockHeld),
            Err(err) => return Err(DreamError::io("cannot create lock", lock_path, err)),
        };
        if let Err(err) = file
            .write_all(content.as_bytes())
            .and_then(|()| file.sync_all())
        {
            drop(file);
            // The half-written lock is ours; leaving it would block every later run.
            let _ = fs::remove_file(&lock_path);
            return Err(DreamError::io("cannot write lock", lock_path, err));
        }
        let stamp_path = home.join(LAST_RUN_FILE);
        let previous_stamp = write_stamp(&stamp_path, now);
        Ok(DreamLock {
            lock_path,
            stamp_path,
            content,
            started_at: now,
            previous_stamp,
            settled: false,
        })
    }

    /// When this run took the lock.
    pub fn started_at(&self) -> Timestamp {
        self.started_at
    }

    /// The lock file's content, `<pid> <token>`.
    pub fn content(&self) -> &str {
        &self.content
    }

    /// The run's stamp: `ISO(startedAt)` with `:` and `.` replaced by `-`,
    /// e.g. `2026-09-15T09-31-45-392Z`. It names the report and the commits.
    pub fn stamp(&self) -> String {
        run_stamp(self.started_at)
    }

    /// Ends a successful run: removes the lock if it is still this run's.
    /// Idempotent.
    pub fn release(&mut self) -> Result<(), DreamError> {
        if self.settled {
            return Ok(());
        }
        self.remove_own_lock()?;
        self.settled = true;
        Ok(())
    }

    /// Ends a failed run: restores the previous stamp (content and mtime) or
    /// removes the stamp this run created, then removes the lock if it is
    /// still this run's. Idempotent.
    pub fn fail(&mut self) -> Result<(), DreamError> {
        if self.settled {
            return Ok(());
        }
        self.restore_stamp()?;
        self.remove_own_lock()?;
        self.settled = true;
        Ok(())
    }

    fn remove_own_lock(&self) -> Result<(), DreamError> {
        match fs::read(&self.lock_path) {
            Ok(bytes) if bytes == self.content.as_bytes() => fs::remove_file(&self.lock_path)
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
pub fn last_run(home: &Path) -> Option<SystemTime> {
    fs::metadata(home.join(LAST_RUN_FILE))
        .and_then(|meta| meta.modified())
        .ok()
}

/// `ISO(at)` as JavaScript's `toISOString` writes it:
/// `2026-09-15T09:31:45.392Z`.
pub fn iso_utc(at: Timestamp) -> String {
    at.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

/// `iso_utc(at)` with `:` and `.` replaced by `-`, safe in file names.
pub fn run_stamp(at: Timestamp) -> String {
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
        file.set_modified(SystemTime::try_from(now).map_err(std::io::Error::other)?)
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
