//! [`DirHandle`] where the kernel offers no resolution below a directory:
//! a directory's path, each component inspected without following links
//! (`lstat`) before the path is used. This keeps the checks the store made
//! before handles; it does not close the window between a check and its
//! use that the Linux handles close.

use std::ffi::OsStr;
use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};

use super::{BeneathError, Entry, FileStat, Kind, components_below, plain_below};
#[cfg(not(unix))]
use crate::notes::time::since_epoch;

/// A directory at or below the notes root, by path.
#[derive(Debug)]
pub(crate) struct DirHandle {
    path: PathBuf,
    /// The open directory holding the lock, once [`Self::lock`] took it.
    locked: Option<File>,
}

impl DirHandle {
    /// The root itself (which may be a link).
    pub(crate) fn open_root(root: &Path) -> io::Result<DirHandle> {
        if !fs::metadata(root)?.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("{} is not a directory", root.display()),
            ));
        }
        Ok(DirHandle::at(root.to_path_buf()))
    }

    fn at(path: PathBuf) -> DirHandle {
        DirHandle { path, locked: None }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn open_dir(&self, rel: &Path) -> Result<Option<DirHandle>, BeneathError> {
        let mut current = self.path.clone();
        for name in self.components(rel)? {
            current.push(name);
            match lstat(&current)? {
                None => return Ok(None),
                Some(meta) => expect_dir(&current, &meta)?,
            }
        }
        Ok(Some(DirHandle::at(current)))
    }

    pub(crate) fn create_dirs(&self, rel: &Path) -> Result<DirHandle, BeneathError> {
        let mut current = self.path.clone();
        for name in self.components(rel)? {
            current.push(name);
            match fs::create_dir(&current) {
                Ok(()) => continue,
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(BeneathError::io("create directory", &current, e)),
            }
            match lstat(&current)? {
                Some(meta) => expect_dir(&current, &meta)?,
                None => {
                    return Err(BeneathError::io(
                        "open directory",
                        &current,
                        io::ErrorKind::NotFound.into(),
                    ));
                }
            }
        }
        Ok(DirHandle::at(current))
    }

    pub(crate) fn open_file(&self, name: &OsStr) -> Result<Option<(File, u64)>, BeneathError> {
        let path = self.path.join(self.plain(name)?);
        let Some(meta) = lstat(&path)? else {
            return Ok(None);
        };
        if meta.file_type().is_symlink() {
            return Err(BeneathError::Link { path });
        }
        if !meta.is_file() {
            return Err(BeneathError::NotAFile { path });
        }
        match File::open(&path) {
            Ok(file) => Ok(Some((file, meta.len()))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(BeneathError::io("open", &path, e)),
        }
    }

    pub(crate) fn open_file_at(&self, rel: &Path) -> Result<Option<(File, u64)>, BeneathError> {
        let mut names = self.components(rel)?;
        let Some(last) = names.pop() else {
            return Err(BeneathError::NotAFile {
                path: self.path.clone(),
            });
        };
        let dir: PathBuf = names.iter().collect();
        match self.open_dir(&dir)? {
            Some(dir) => dir.open_file(last),
            None => Ok(None),
        }
    }

    pub(crate) fn open_listed(&self, name: &OsStr) -> Result<Option<File>, BeneathError> {
        Ok(self.open_file(name)?.map(|(file, _)| file))
    }

    pub(crate) fn stat(&self, name: &OsStr) -> Result<Option<FileStat>, BeneathError> {
        let path = self.path.join(self.plain(name)?);
        Ok(lstat(&path)?.map(|meta| file_stat(&meta)))
    }

    pub(crate) fn entries(&self) -> Result<Vec<Entry>, BeneathError> {
        let failed = |e| BeneathError::io("read directory", &self.path, e);
        let mut entries = Vec::new();
        for entry in fs::read_dir(&self.path).map_err(failed)? {
            let entry = entry.map_err(failed)?;
            let kind = match entry.file_type() {
                Ok(kind) if kind.is_symlink() => Kind::Link,
                Ok(kind) if kind.is_dir() => Kind::Dir,
                Ok(kind) if kind.is_file() => Kind::File,
                Ok(_) => Kind::Other,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(failed(e)),
            };
            entries.push(Entry {
                name: entry.file_name(),
                kind,
            });
        }
        Ok(entries)
    }

    pub(crate) fn replace(&self, name: &OsStr, bytes: &[u8]) -> io::Result<()> {
        let name = self.plain(name).map_err(io::Error::other)?;
        crate::durable::replace(&self.path.join(name), bytes)
    }

    pub(crate) fn sync(&self) -> io::Result<()> {
        crate::durable::sync_dir(&self.path)
    }

    pub(crate) fn lock(&mut self) -> io::Result<()> {
        let dir = File::open(&self.path)?;
        dir.lock()?;
        self.locked = Some(dir);
        Ok(())
    }

    pub(crate) fn remove_file(&self, name: &OsStr) -> io::Result<()> {
        let name = self.plain(name).map_err(io::Error::other)?;
        fs::remove_file(self.path.join(name))
    }

    pub(crate) fn move_entry(
        &self,
        from: &OsStr,
        target: &DirHandle,
        to: &OsStr,
    ) -> io::Result<()> {
        let from = self.plain(from).map_err(io::Error::other)?;
        let to = target
            .path
            .join(target.plain(to).map_err(io::Error::other)?);
        if fs::symlink_metadata(&to).is_ok() {
            return Err(io::ErrorKind::AlreadyExists.into());
        }
        fs::rename(self.path.join(from), to)
    }

    fn plain<'a>(&self, name: &'a OsStr) -> Result<&'a OsStr, BeneathError> {
        plain_below(&self.path, name)
    }

    fn components<'a>(&self, rel: &'a Path) -> Result<Vec<&'a OsStr>, BeneathError> {
        components_below(&self.path, rel)
    }
}

/// `lstat`, with a missing entry as `None`.
fn lstat(path: &Path) -> Result<Option<fs::Metadata>, BeneathError> {
    match fs::symlink_metadata(path) {
        Ok(meta) => Ok(Some(meta)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(BeneathError::io("inspect", path, e)),
    }
}

fn expect_dir(path: &Path, meta: &fs::Metadata) -> Result<(), BeneathError> {
    if meta.file_type().is_symlink() {
        return Err(BeneathError::Link {
            path: path.to_path_buf(),
        });
    }
    if !meta.is_dir() {
        return Err(BeneathError::NotADirectory {
            path: path.to_path_buf(),
        });
    }
    Ok(())
}

fn file_stat(meta: &fs::Metadata) -> FileStat {
    let file_type = meta.file_type();
    let kind = if file_type.is_symlink() {
        Kind::Link
    } else if file_type.is_dir() {
        Kind::Dir
    } else if file_type.is_file() {
        Kind::File
    } else {
        Kind::Other
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        FileStat {
            kind,
            nlink: meta.nlink(),
            dev: meta.dev(),
            ino: meta.ino(),
            len: meta.len(),
            modified: (meta.mtime(), meta.mtime_nsec()),
            changed: (meta.ctime(), meta.ctime_nsec()),
        }
    }
    // Without change times, inodes or link counts, the modification time
    // stands in for the change time and every file counts as linked once.
    #[cfg(not(unix))]
    {
        let modified = meta.modified().map_or((0, 0), since_epoch);
        FileStat {
            kind,
            nlink: 1,
            dev: 0,
            ino: 0,
            len: meta.len(),
            modified,
            changed: modified,
        }
    }
}
