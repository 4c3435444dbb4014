//! [`DirHandle`] on Linux: an open directory descriptor; paths below it are
//! resolved by the kernel without following any link.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::fs::{
    AtFlags, CWD, FileType, FlockOperation, Mode, OFlags, RawDir, RenameFlags, ResolveFlags,
    SeekFrom, Stat,
};
use rustix::io::Errno;

use super::{BeneathError, Entry, FileStat, Kind, components_below, plain_below};

/// A directory, never reached through a link.
const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);
/// A file to read: never through a link, and never blocking on a FIFO
/// (which the regular-file check then refuses).
const READ_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC)
    .union(OFlags::NONBLOCK);
/// Below the directory, and no link at any component.
const RESOLVE: ResolveFlags = ResolveFlags::BENEATH
    .union(ResolveFlags::NO_SYMLINKS)
    .union(ResolveFlags::NO_MAGICLINKS);
/// The `getdents` buffer: a directory of a few hundred notes in one call.
const DIRENT_BUFFER: usize = 32 * 1024;
/// How often a resolution the kernel asks to retry (`EAGAIN`: a rename
/// raced it) is tried before the component walk answers.
const RETRIES: usize = 3;

/// Whether `openat2` may be tried: cleared once the kernel (or a seccomp
/// filter) answers that it has none, after which every path is walked one
/// component at a time.
static OPENAT2: AtomicBool = AtomicBool::new(true);

/// An open directory at or below the notes root, with the path it was
/// reached by (for messages and for callers that key on paths).
#[derive(Debug)]
pub(crate) struct DirHandle {
    fd: OwnedFd,
    path: PathBuf,
    /// Whether [`Self::entries`] has moved the descriptor's offset.
    listed: AtomicBool,
}

impl DirHandle {
    /// Opens `root` itself. The root may be a link (it is the one path
    /// trusted); nothing below it is followed.
    pub(crate) fn open_root(root: &Path) -> io::Result<DirHandle> {
        let fd = retry(|| {
            rustix::fs::openat(
                CWD,
                root,
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )
        })?;
        Ok(DirHandle::new(fd, root.to_path_buf()))
    }

    fn new(fd: OwnedFd, path: PathBuf) -> DirHandle {
        DirHandle {
            fd,
            path,
            listed: AtomicBool::new(false),
        }
    }

    /// The path this directory was reached by.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Opens the directory at `rel` below this one; `None` when it (or a
    /// directory on the way) does not exist.
    pub(crate) fn open_dir(&self, rel: &Path) -> Result<Option<DirHandle>, BeneathError> {
        Ok(self
            .resolve(rel, DIR_FLAGS)?
            .map(|fd| DirHandle::new(fd, self.path.join(rel))))
    }

    /// Opens the directory at `rel` below this one, creating it and every
    /// missing directory on the way (`mkdirat`, then opened again without
    /// following a link, so a link planted in between is refused).
    pub(crate) fn create_dirs(&self, rel: &Path) -> Result<DirHandle, BeneathError> {
        if let Some(dir) = self.open_dir(rel)? {
            return Ok(dir);
        }
        let names = self.components(rel)?;
        let mut path = self.path.clone();
        let mut current: Option<OwnedFd> = None;
        for name in names {
            let parent = current.as_ref().map_or(self.fd.as_fd(), AsFd::as_fd);
            let fd = match open_one(parent, &path, name, DIR_FLAGS)? {
                Some(fd) => fd,
                None => {
                    match rustix::fs::mkdirat(parent, name, Mode::from_raw_mode(0o777)) {
                        Ok(()) | Err(Errno::EXIST) => {}
                        Err(errno) => {
                            return Err(BeneathError::io(
                                "create directory",
                                &path.join(name),
                                errno.into(),
                            ));
                        }
                    }
                    open_one(parent, &path, name, DIR_FLAGS)?.ok_or_else(|| {
                        BeneathError::io(
                            "open directory",
                            &path.join(name),
                            io::ErrorKind::NotFound.into(),
                        )
                    })?
                }
            };
            path.push(name);
            current = Some(fd);
        }
        let fd = match current {
            Some(fd) => fd,
            None => self.reopen()?,
        };
        Ok(DirHandle::new(fd, path))
    }

    /// Opens the regular file `name` in this directory for reading, with
    /// its length; `None` when it does not exist.
    pub(crate) fn open_file(&self, name: &OsStr) -> Result<Option<(File, u64)>, BeneathError> {
        let fd = match open_one(self.fd.as_fd(), &self.path, self.plain(name)?, READ_FLAGS)? {
            Some(fd) => fd,
            None => return Ok(None),
        };
        regular(fd, || self.path.join(name)).map(Some)
    }

    /// Opens the regular file at `rel` below this directory for reading,
    /// with its length; `None` when it does not exist. One `openat2`.
    pub(crate) fn open_file_at(&self, rel: &Path) -> Result<Option<(File, u64)>, BeneathError> {
        match self.resolve(rel, READ_FLAGS)? {
            Some(fd) => regular(fd, || self.path.join(rel)).map(Some),
            None => Ok(None),
        }
    }

    /// Opens `name`, an entry a listing saw as a regular file, for reading:
    /// one `openat` and no type check (a link is refused by the kernel; a
    /// FIFO swapped in reads empty, a directory fails its read). `None`
    /// when it is gone.
    pub(crate) fn open_listed(&self, name: &OsStr) -> Result<Option<File>, BeneathError> {
        Ok(open_one(self.fd.as_fd(), &self.path, self.plain(name)?, READ_FLAGS)?.map(File::from))
    }

    /// What `name` in this directory is, without following a link; `None`
    /// when it does not exist.
    pub(crate) fn stat(&self, name: &OsStr) -> Result<Option<FileStat>, BeneathError> {
        let name = self.plain(name)?;
        match retry(|| rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW)) {
            Ok(stat) => Ok(Some(file_stat(&stat))),
            Err(Errno::NOENT) => Ok(None),
            Err(errno) => Err(BeneathError::io(
                "inspect",
                &self.path.join(name),
                errno.into(),
            )),
        }
    }

    /// Every entry of this directory (not `.` and `..`), in the order the
    /// filesystem gives: `getdents` on this handle's descriptor, with a
    /// buffer that takes a common directory in one call.
    pub(crate) fn entries(&self) -> Result<Vec<Entry>, BeneathError> {
        let failed = |errno: Errno| BeneathError::io("read directory", &self.path, errno.into());
        // Reading moves the descriptor's offset: listed again, it starts over.
        if self.listed.swap(true, Ordering::Relaxed) {
            rustix::fs::seek(&self.fd, SeekFrom::Start(0)).map_err(failed)?;
        }
        let mut buffer = Vec::with_capacity(DIRENT_BUFFER);
        let mut dir = RawDir::new(&self.fd, buffer.spare_capacity_mut());
        let mut entries = Vec::new();
        while let Some(entry) = dir.next() {
            let entry = entry.map_err(failed)?;
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            let name = OsStr::from_bytes(name).to_owned();
            let kind = match entry.file_type() {
                FileType::Directory => Kind::Dir,
                FileType::RegularFile => Kind::File,
                FileType::Symlink => Kind::Link,
                // Filesystems that do not say in the listing: ask.
                FileType::Unknown => match self.stat(&name)? {
                    Some(stat) => stat.kind,
                    None => continue,
                },
                _ => Kind::Other,
            };
            entries.push(Entry { name, kind });
        }
        Ok(entries)
    }

    /// Writes `bytes` to `name` in this directory durably and atomically: a
    /// temporary file created exclusively (never through a link) in this
    /// directory, written, fsynced and renamed over `name` inside it. The
    /// caller fsyncs the directory ([`Self::sync`]). A failed write removes
    /// its temporary file.
    pub(crate) fn replace(&self, name: &OsStr, bytes: &[u8]) -> io::Result<()> {
        let name = self.plain(name).map_err(io::Error::other)?;
        let temp = crate::durable::temp_name();
        let created = retry(|| {
            rustix::fs::openat(
                &self.fd,
                temp.as_str(),
                OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::from_raw_mode(0o666),
            )
        })?;
        let mut file = File::from(created);
        let written = (|| {
            file.write_all(bytes)?;
            file.sync_all()?;
            retry(|| rustix::fs::renameat(&self.fd, temp.as_str(), &self.fd, name))
                .map_err(io::Error::from)
        })();
        if written.is_err() {
            let _ = rustix::fs::unlinkat(&self.fd, temp.as_str(), AtFlags::empty());
        }
        written
    }

    /// Flushes this directory's entries (renames, new files) to disk.
    pub(crate) fn sync(&self) -> io::Result<()> {
        retry(|| rustix::fs::fsync(&self.fd)).map_err(io::Error::from)
    }

    /// Takes an exclusive advisory lock (`flock`) on this directory, shared
    /// by every process; released when the handle is dropped.
    pub(crate) fn lock(&mut self) -> io::Result<()> {
        retry(|| rustix::fs::flock(&self.fd, FlockOperation::LockExclusive))
            .map_err(io::Error::from)
    }

    /// Removes the file (or link) `name` from this directory.
    pub(crate) fn remove_file(&self, name: &OsStr) -> io::Result<()> {
        let name = self.plain(name).map_err(io::Error::other)?;
        retry(|| rustix::fs::unlinkat(&self.fd, name, AtFlags::empty())).map_err(io::Error::from)
    }

    /// Moves the entry `from` of this directory to `to` in `target`,
    /// refusing (`AlreadyExists`) to replace anything there.
    pub(crate) fn move_entry(
        &self,
        from: &OsStr,
        target: &DirHandle,
        to: &OsStr,
    ) -> io::Result<()> {
        let from = self.plain(from).map_err(io::Error::other)?;
        let to = target.plain(to).map_err(io::Error::other)?;
        match retry(|| {
            rustix::fs::renameat_with(&self.fd, from, &target.fd, to, RenameFlags::NOREPLACE)
        }) {
            // A filesystem without `RENAME_NOREPLACE`: look, then move.
            Err(Errno::INVAL) => {
                if target.stat(to).map_err(io::Error::other)?.is_some() {
                    return Err(io::ErrorKind::AlreadyExists.into());
                }
                retry(|| rustix::fs::renameat(&self.fd, from, &target.fd, to))
                    .map_err(io::Error::from)
            }
            moved => moved.map_err(io::Error::from),
        }
    }

    /// A new descriptor of this directory.
    fn reopen(&self) -> Result<OwnedFd, BeneathError> {
        retry(|| rustix::fs::openat(&self.fd, c".", DIR_FLAGS, Mode::empty()))
            .map_err(|errno| BeneathError::io("open directory", &self.path, errno.into()))
    }

    fn plain<'a>(&self, name: &'a OsStr) -> Result<&'a OsStr, BeneathError> {
        plain_below(&self.path, name)
    }

    fn components<'a>(&self, rel: &'a Path) -> Result<Vec<&'a OsStr>, BeneathError> {
        components_below(&self.path, rel)
    }

    /// Opens `rel` below this directory with `flags`, following no link:
    /// one `openat2`, or one `openat` per component where there is none.
    /// An `openat2` failure other than a missing entry is answered by the
    /// component walk too, which says which component is a link or not a
    /// directory.
    fn resolve(&self, rel: &Path, flags: OFlags) -> Result<Option<OwnedFd>, BeneathError> {
        if rel.as_os_str().is_empty() {
            return self.reopen().map(Some);
        }
        if OPENAT2.load(Ordering::Relaxed) {
            for _ in 0..RETRIES {
                match rustix::fs::openat2(&self.fd, rel, flags, Mode::empty(), RESOLVE) {
                    Ok(fd) => return Ok(Some(fd)),
                    Err(Errno::NOENT) => return Ok(None),
                    Err(Errno::AGAIN | Errno::INTR) => {}
                    // No `openat2` in this kernel, or a seccomp filter
                    // refusing it: walk from now on.
                    Err(Errno::NOSYS | Errno::PERM) => {
                        OPENAT2.store(false, Ordering::Relaxed);
                        break;
                    }
                    Err(_) => break,
                }
            }
        }
        self.walk(rel, flags)
    }

    /// [`Self::resolve`] one component at a time: `openat` with
    /// `O_NOFOLLOW | O_DIRECTORY` for each directory on the way.
    fn walk(&self, rel: &Path, flags: OFlags) -> Result<Option<OwnedFd>, BeneathError> {
        let mut names = self.components(rel)?;
        let Some(last) = names.pop() else {
            return self.reopen().map(Some);
        };
        let mut path = self.path.clone();
        let mut current: Option<OwnedFd> = None;
        for name in names {
            let parent = current.as_ref().map_or(self.fd.as_fd(), AsFd::as_fd);
            match open_one(parent, &path, name, DIR_FLAGS)? {
                Some(fd) => current = Some(fd),
                None => return Ok(None),
            }
            path.push(name);
        }
        let parent = current.as_ref().map_or(self.fd.as_fd(), AsFd::as_fd);
        open_one(parent, &path, last, flags)
    }

    #[cfg(test)]
    pub(crate) fn walk_for_test(&self, rel: &Path) -> Result<Option<DirHandle>, BeneathError> {
        Ok(self
            .walk(rel, DIR_FLAGS)?
            .map(|fd| DirHandle::new(fd, self.path.join(rel))))
    }
}

/// Opens the single entry `name` of `dir` (reached as `dir_path`).
fn open_one(
    dir: BorrowedFd<'_>,
    dir_path: &Path,
    name: &OsStr,
    flags: OFlags,
) -> Result<Option<OwnedFd>, BeneathError> {
    match retry(|| rustix::fs::openat(dir, name, flags, Mode::empty())) {
        Ok(fd) => Ok(Some(fd)),
        Err(Errno::NOENT) => Ok(None),
        Err(errno) => Err(diagnose(dir, dir_path, name, errno)),
    }
}

/// Why `name` in `dir` could not be opened: a link (`O_NOFOLLOW` answers
/// `ELOOP`, or `ENOTDIR` with `O_DIRECTORY`), something else than a
/// directory, or a plain failure.
fn diagnose(dir: BorrowedFd<'_>, dir_path: &Path, name: &OsStr, errno: Errno) -> BeneathError {
    let path = dir_path.join(name);
    match errno {
        Errno::LOOP => BeneathError::Link { path },
        Errno::NOTDIR => match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
            .map(|stat| FileType::from_raw_mode(stat.st_mode))
        {
            // A directory now was not one when it was opened: swapped with
            // a link in between, which is what such swaps are.
            Ok(FileType::Symlink | FileType::Directory) => BeneathError::Link { path },
            _ => BeneathError::NotADirectory { path },
        },
        errno => BeneathError::io("open", &path, errno.into()),
    }
}

/// `fd` as a file, when it is a regular one (`fstat`), with its length.
fn regular(fd: OwnedFd, path: impl Fn() -> PathBuf) -> Result<(File, u64), BeneathError> {
    let stat = rustix::fs::fstat(&fd)
        .map_err(|errno| BeneathError::io("inspect", &path(), errno.into()))?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
        return Err(BeneathError::NotAFile { path: path() });
    }
    Ok((File::from(fd), u64::try_from(stat.st_size).unwrap_or(0)))
}

fn file_stat(stat: &Stat) -> FileStat {
    let kind = match FileType::from_raw_mode(stat.st_mode) {
        FileType::Directory => Kind::Dir,
        FileType::RegularFile => Kind::File,
        FileType::Symlink => Kind::Link,
        _ => Kind::Other,
    };
    // The field widths differ between architectures; every value fits.
    #[allow(clippy::useless_conversion, clippy::unnecessary_cast)]
    FileStat {
        kind,
        nlink: stat.st_nlink as u64,
        dev: stat.st_dev as u64,
        ino: stat.st_ino as u64,
        len: u64::try_from(stat.st_size).unwrap_or(0),
        modified: (stat.st_mtime as i64, stat.st_mtime_nsec as i64),
        changed: (stat.st_ctime as i64, stat.st_ctime_nsec as i64),
    }
}

/// Runs `call` again while it is interrupted by a signal.
fn retry<T>(mut call: impl FnMut() -> Result<T, Errno>) -> Result<T, Errno> {
    loop {
        match call() {
            Err(Errno::INTR) => {}
            other => return other,
        }
    }
}
