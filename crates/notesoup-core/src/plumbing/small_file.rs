//! The bounded small-file reader: settings files, session records, hand-off
//! markers, kept note heads and boot shelves.
//!
//! Each of these is a regular file of at most a few megabytes, but the path
//! may name anything: a project's settings file comes with a cloned
//! repository (a link to `/dev/zero` streams forever), and a FIFO under a
//! kept file's name blocks an ordinary open until a writer comes. So the
//! file is opened without blocking (`O_NONBLOCK`, which reads of a regular
//! file ignore) and, where notesoup wrote the file itself, without following
//! a link (`O_NOFOLLOW`); the opened file must be a regular file, and at most
//! the bound is read. Anything else is a [`SmallFileError`], which the
//! caller turns into its defaults and one warning.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// Whether the last component of a path may be a symbolic link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Links {
    /// A file the user places (a settings file may well be a link into a
    /// dotfiles repository): the link is followed, and what it leads to must
    /// still be a regular file.
    Follow,
    /// A file notesoup writes itself (records, kept heads and shelves): a
    /// link there was put by someone else and is refused.
    Refuse,
}

/// Why a small file was not read.
#[derive(Debug, thiserror::Error)]
pub enum SmallFileError {
    /// The path names a directory, FIFO, socket or device.
    #[error("{}: not a regular file ({kind})", path.display())]
    NotRegular {
        /// The path.
        path: PathBuf,
        /// `directory`, `fifo`, `socket`, `block device`, `character device`.
        kind: &'static str,
    },
    /// A symbolic link where notesoup keeps a file of its own.
    #[error("{}: a symbolic link, where notesoup keeps a file of its own", path.display())]
    Link {
        /// The path.
        path: PathBuf,
    },
    /// The file is longer than the bound.
    #[error("{}: larger than {max} bytes", path.display())]
    TooLarge {
        /// The path.
        path: PathBuf,
        /// The bound.
        max: u64,
    },
    /// Opening or reading failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// What failed.
        source: io::Error,
    },
}

impl SmallFileError {
    /// The path that was not read.
    pub fn path(&self) -> &Path {
        match self {
            Self::NotRegular { path, .. }
            | Self::Link { path }
            | Self::TooLarge { path, .. }
            | Self::Io { path, .. } => path,
        }
    }

    /// The error as an `io::Error` without the path, for a caller whose own
    /// error names it: the open's or read's own error, else `InvalidInput`
    /// saying what the file is (its message is this error's, less the path).
    pub fn into_io(self) -> io::Error {
        let message = match self {
            Self::Io { source, .. } => return source,
            Self::NotRegular { kind, .. } => format!("not a regular file ({kind})"),
            Self::Link { .. } => "a symbolic link, where notesoup keeps a file of its own".into(),
            Self::TooLarge { max, .. } => format!("larger than {max} bytes"),
        };
        io::Error::new(io::ErrorKind::InvalidInput, message)
    }

    fn io(path: &Path, source: io::Error) -> Self {
        Self::Io {
            path: path.to_owned(),
            source,
        }
    }
}

/// Whether an open failure means nothing is there: no file, or, for a file
/// the user places, a path through something that is not a directory (a
/// project whose `.claude` is a file has no settings there). notesoup's own
/// directories must be directories: a path through a file is an error.
fn is_missing(error: &io::Error, links: Links) -> bool {
    match error.kind() {
        io::ErrorKind::NotFound => true,
        io::ErrorKind::NotADirectory => links == Links::Follow,
        _ => false,
    }
}

/// Opens `path` for reading if it is a regular file, without ever blocking
/// (see the module docs). `Ok(None)` when nothing is there.
///
/// # Errors
/// When the path names something other than a regular file, a link under
/// [`Links::Refuse`], or the open fails.
pub fn open_regular(path: &Path, links: Links) -> Result<Option<File>, SmallFileError> {
    if links == Links::Follow {
        // A device a link leads to is not even opened (opening some has
        // effects); the opened file is checked again below, in case the
        // path changed in between.
        match std::fs::metadata(path) {
            Ok(meta) => check_regular(path, &meta)?,
            Err(error) if is_missing(&error, links) => return Ok(None),
            Err(error) => return Err(SmallFileError::io(path, error)),
        }
    }
    let file = match open_nonblocking(path, links) {
        Ok(file) => file,
        Err(error) if is_missing(&error, links) => return Ok(None),
        Err(error) if links == Links::Refuse && is_link_refusal(path, &error) => {
            return Err(SmallFileError::Link {
                path: path.to_owned(),
            });
        }
        Err(error) => return Err(SmallFileError::io(path, error)),
    };
    let meta = file
        .metadata()
        .map_err(|error| SmallFileError::io(path, error))?;
    check_regular(path, &meta)?;
    Ok(Some(file))
}

/// The bytes of the regular file at `path`, at most `max` of them.
/// `Ok(None)` when nothing is there.
///
/// # Errors
/// See [`open_regular`]; also [`SmallFileError::TooLarge`] past `max`.
pub fn read_small_file(
    path: &Path,
    max: u64,
    links: Links,
) -> Result<Option<Vec<u8>>, SmallFileError> {
    let Some(file) = open_regular(path, links)? else {
        return Ok(None);
    };
    let too_large = || SmallFileError::TooLarge {
        path: path.to_owned(),
        max,
    };
    let len = file
        .metadata()
        .map_err(|error| SmallFileError::io(path, error))?
        .len();
    if len > max {
        return Err(too_large());
    }
    // The file may grow between the stat and the read: `take` still bounds it.
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0).saturating_add(1));
    file.take(max.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|error| SmallFileError::io(path, error))?;
    if bytes.len() as u64 > max {
        return Err(too_large());
    }
    Ok(Some(bytes))
}

/// [`read_small_file`] as text: invalid UTF-8 is read with replacement
/// characters and a leading byte-order mark is dropped (editors on some
/// systems write one; JSON parsers refuse it).
///
/// # Errors
/// As [`read_small_file`].
pub fn read_small_text(
    path: &Path,
    max: u64,
    links: Links,
) -> Result<Option<String>, SmallFileError> {
    Ok(read_small_file(path, max, links)?.map(|bytes| {
        let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(&bytes);
        String::from_utf8_lossy(bytes).into_owned()
    }))
}

fn check_regular(path: &Path, meta: &std::fs::Metadata) -> Result<(), SmallFileError> {
    let kind = meta.file_type();
    if kind.is_file() {
        return Ok(());
    }
    let kind = if kind.is_dir() {
        "directory"
    } else if kind.is_symlink() {
        "symbolic link"
    } else {
        special_kind(&kind)
    };
    Err(SmallFileError::NotRegular {
        path: path.to_owned(),
        kind,
    })
}

#[cfg(unix)]
fn special_kind(kind: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_fifo() {
        "fifo"
    } else if kind.is_socket() {
        "socket"
    } else if kind.is_block_device() {
        "block device"
    } else if kind.is_char_device() {
        "character device"
    } else {
        "special file"
    }
}

#[cfg(not(unix))]
fn special_kind(_: &std::fs::FileType) -> &'static str {
    "special file"
}

#[cfg(unix)]
fn open_nonblocking(path: &Path, links: Links) -> io::Result<File> {
    use rustix::fs::{Mode, OFlags};
    let mut flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC;
    if links == Links::Refuse {
        flags |= OFlags::NOFOLLOW;
    }
    rustix::fs::open(path, flags, Mode::empty())
        .map(File::from)
        .map_err(io::Error::from)
}

/// Whether `error` is the open's refusal of a link (`O_NOFOLLOW` fails with
/// `ELOOP` on Linux, `EMLINK` on some BSDs): checked on the path itself, so
/// a real `ELOOP` in a directory on the way is told apart only by that.
#[cfg(unix)]
fn is_link_refusal(path: &Path, error: &io::Error) -> bool {
    let code = error.raw_os_error();
    (code == Some(rustix::io::Errno::LOOP.raw_os_error())
        || code == Some(rustix::io::Errno::MLINK.raw_os_error()))
        && std::fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_symlink())
}

#[cfg(not(unix))]
fn open_nonblocking(path: &Path, links: Links) -> io::Result<File> {
    if links == Links::Refuse
        && std::fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_symlink())
    {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "a link"));
    }
    File::open(path)
}

#[cfg(not(unix))]
fn is_link_refusal(path: &Path, _: &io::Error) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_symlink())
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn mkfifo(path: &Path) {
        rustix::fs::mknodat(
            rustix::fs::CWD,
            path,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
            0,
        )
        .unwrap();
    }

    #[test]
    fn only_a_regular_file_within_the_bound_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("settings.json");
        std::fs::write(&file, b"\xef\xbb\xbf{}").unwrap();
        assert_eq!(
            read_small_file(&file, 5, Links::Refuse).unwrap().unwrap(),
            b"\xef\xbb\xbf{}"
        );
        assert_eq!(
            read_small_text(&file, 5, Links::Follow).unwrap().unwrap(),
            "{}"
        );
        assert!(matches!(
            read_small_file(&file, 4, Links::Follow),
            Err(SmallFileError::TooLarge { max: 4, .. })
        ));
        assert!(
            read_small_file(&dir.path().join("none"), 5, Links::Follow)
                .unwrap()
                .is_none()
        );
        assert!(
            read_small_file(&file.join("below-a-file"), 5, Links::Follow)
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn fifos_devices_directories_and_links_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        // No writer ever opens it: a blocking open would hang the test.
        mkfifo(&fifo);
        let to_fifo = dir.path().join("to-fifo");
        std::os::unix::fs::symlink(&fifo, &to_fifo).unwrap();
        let to_zero = dir.path().join("to-zero");
        std::os::unix::fs::symlink("/dev/zero", &to_zero).unwrap();
        let file = dir.path().join("file");
        std::fs::write(&file, b"x").unwrap();
        let to_file = dir.path().join("to-file");
        std::os::unix::fs::symlink(&file, &to_file).unwrap();
        for links in [Links::Follow, Links::Refuse] {
            for (path, kind) in [(&fifo, "fifo"), (&dir.path().to_owned(), "directory")] {
                let error = read_small_file(path, 10, links).unwrap_err();
                assert!(
                    matches!(&error, SmallFileError::NotRegular { kind: k, .. } if *k == kind),
                    "{error}"
                );
            }
        }
        for path in [&to_fifo, &to_zero] {
            assert!(matches!(
                read_small_file(path, 10, Links::Follow),
                Err(SmallFileError::NotRegular { .. })
            ));
            assert!(matches!(
                read_small_file(path, 10, Links::Refuse),
                Err(SmallFileError::Link { .. })
            ));
        }
        assert_eq!(
            read_small_file(&to_file, 10, Links::Follow)
                .unwrap()
                .unwrap(),
            b"x"
        );
        let refused = read_small_file(&to_file, 10, Links::Refuse).unwrap_err();
        assert_eq!(
            refused.to_string(),
            format!(
                "{}: a symbolic link, where notesoup keeps a file of its own",
                to_file.display()
            )
        );
        assert_eq!(refused.path(), to_file);
    }

    /// Nothing there is nothing under either rule; a path through a file is
    /// nothing only where the user places files (links followed), and an
    /// error, not a link, in notesoup's own; a loop of links is an error,
    /// never nothing.
    #[test]
    fn only_a_missing_file_is_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("file");
        std::fs::write(&file, b"x").unwrap();
        for links in [Links::Follow, Links::Refuse] {
            let none = read_small_file(&dir.path().join("none"), 10, links).unwrap();
            assert!(none.is_none(), "{links:?}");
        }
        let below = file.join("below-a-file");
        assert!(
            read_small_file(&below, 10, Links::Follow)
                .unwrap()
                .is_none()
        );
        let error = read_small_file(&below, 10, Links::Refuse).unwrap_err();
        assert!(matches!(error, SmallFileError::Io { .. }), "{error}");
        let (one, two) = (dir.path().join("one"), dir.path().join("two"));
        std::os::unix::fs::symlink(&two, &one).unwrap();
        std::os::unix::fs::symlink(&one, &two).unwrap();
        let error = read_small_file(&one, 10, Links::Follow).unwrap_err();
        assert!(matches!(error, SmallFileError::Io { .. }), "{error}");
        // The loop on the way to a path that is no link itself: an error
        // under notesoup's own rule too, not a link refused.
        let error = read_small_file(&one.join("x"), 10, Links::Refuse).unwrap_err();
        assert!(matches!(error, SmallFileError::Io { .. }), "{error}");
    }
}

impl crate::settings::SettingsRecord {
    /// The bound of a settings file (notesoup's own, or a host's such as Pi's
    /// `settings.json`): real ones are a few kilobytes.
    pub const MAX_BYTES: u64 = 1 << 20;
}
