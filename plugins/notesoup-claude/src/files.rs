//! Small file helpers for the plugin's own state (never for notes, which
//! the core store writes), and the one way this plugin opens a file whose
//! path it was handed (transcripts, records): [`open_regular`]. Both are
//! core's plumbing ([`notesoup_core::plumbing`]): opened without blocking,
//! a regular file only, and the plugin's own records read within a bound
//! and never through a link.

use std::fs::{self, File};
use std::io::{self, Read};
use std::path::Path;

use notesoup_core::plumbing::{self, Links, SmallFileError};

/// The bound of one of the plugin's records (a session's state, the
/// hand-off marker, a kept scan): real ones are a few kilobytes; a
/// `/fresh-window` prompt kept in a record is the largest part.
pub const MAX_RECORD_BYTES: u64 = 4 * 1024 * 1024;

/// A path given to read names something other than a regular file.
#[derive(Debug, thiserror::Error)]
#[error("not a regular file ({kind})")]
pub struct NotRegular {
    /// `directory`, `fifo`, `socket`, `block device`, `character device`.
    pub kind: &'static str,
}

/// Opens `path` for reading only if it is a regular file (after links).
///
/// Opening a FIFO for reading blocks until a writer comes, and a device can
/// stream forever; a hook must never wait on either. So the type is checked
/// before the open, the open itself does not block (`O_NONBLOCK`, which a
/// regular file's reads ignore), and the opened file is checked again in
/// case the path was swapped in between (core's
/// [`plumbing::open_regular`]).
pub fn open_regular(path: &Path) -> io::Result<File> {
    match plumbing::open_regular(path, Links::Follow) {
        Ok(Some(file)) => Ok(file),
        // The OS's own words for what is missing.
        Ok(None) => Err(fs::metadata(path)
            .err()
            .unwrap_or_else(|| io::ErrorKind::NotFound.into())),
        Err(SmallFileError::NotRegular { kind, .. }) => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            NotRegular { kind },
        )),
        Err(error) => Err(error.into_io()),
    }
}

/// The whole of a regular file (see [`open_regular`]).
pub fn read_regular(path: &Path) -> io::Result<Vec<u8>> {
    let mut file = open_regular(path)?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Whether `err` is [`open_regular`]'s refusal of a file that is not
/// regular.
pub fn is_not_regular(err: &io::Error) -> bool {
    err.get_ref().is_some_and(|inner| inner.is::<NotRegular>())
}

/// Whether `err` says there is no regular file to read: none at all, or
/// something else under the name. Transcripts read as absent then.
pub fn is_absent(err: &io::Error) -> bool {
    err.kind() == io::ErrorKind::NotFound || is_not_regular(err)
}

/// Writes `bytes` to `path` atomically with core's write (a temp file in
/// the same directory, renamed over the target), so a reader never sees a
/// torn record.
///
/// Deliberately not fsynced: these are hook records on the agent's hot path
/// (an fsync costs more than the rest of a hook), a crash can at worst lose
/// the last update, and hooks rebuild a lost record from the transcript.
/// Notes themselves go through core's durable store.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no parent"))?;
    fs::create_dir_all(dir)?;
    notesoup_core::durable::replace_unsynced(path, bytes)
}

/// Makes the caches' directory `dir` when it is missing, with any missing
/// parent, readable by its owner alone (the caches hold note heads and
/// addresses). A failure is left to the write that follows, which then
/// fails and is ignored: a cache that is not saved costs only time.
pub fn private_dir(dir: Option<&Path>) {
    if let Some(dir) = dir {
        plumbing::BootCaches::private_dir(dir);
    }
}

/// Takes the record at `path` atomically: renames it to a private name
/// first, so of several racing takers exactly one gets the content, then
/// reads it (a regular file within [`MAX_RECORD_BYTES`], never through a
/// link) and removes it. `Ok(None)` when there is nothing to take.
pub fn take(path: &Path) -> Result<Option<Vec<u8>>, SmallFileError> {
    let Some(dir) = path.parent() else {
        return Ok(None);
    };
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    let claimed = dir.join(format!(
        ".{}.taken.{}.{}",
        name.unwrap_or_default(),
        std::process::id(),
        uuid::Uuid::new_v4().simple()
    ));
    match fs::rename(path, &claimed) {
        Ok(()) => {}
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(SmallFileError::Io {
                path: path.to_owned(),
                source,
            });
        }
    }
    let bytes = read_record(&claimed).map_err(|error| renamed(error, path));
    // A directory taken by mistake is moved back; anything else goes.
    if matches!(
        bytes,
        Err(SmallFileError::NotRegular {
            kind: "directory",
            ..
        })
    ) {
        let _ = fs::rename(&claimed, path);
    } else {
        let _ = fs::remove_file(&claimed);
    }
    bytes
}

/// `error` about the private name of a taken record, told of the record.
fn renamed(error: SmallFileError, path: &Path) -> SmallFileError {
    let path = path.to_owned();
    match error {
        SmallFileError::NotRegular { kind, .. } => SmallFileError::NotRegular { path, kind },
        SmallFileError::Link { .. } => SmallFileError::Link { path },
        SmallFileError::TooLarge { max, .. } => SmallFileError::TooLarge { path, max },
        SmallFileError::Io { source, .. } => SmallFileError::Io { path, source },
    }
}

/// One of the plugin's records: a regular file within
/// [`MAX_RECORD_BYTES`], never read through a link; `None` when there is
/// none.
pub fn read_record(path: &Path) -> Result<Option<Vec<u8>>, SmallFileError> {
    plumbing::read_small_file(path, MAX_RECORD_BYTES, Links::Refuse)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_and_leaves_no_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/b/state.json");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two");
        let names: Vec<_> = fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec!["state.json"]);
    }

    #[test]
    fn take_hands_the_content_to_exactly_one_taker() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("marker.json");
        write_atomic(&path, b"m").unwrap();
        let takers: Vec<_> = (0..8)
            .map(|_| {
                let path = path.clone();
                std::thread::spawn(move || take(&path).unwrap())
            })
            .collect();
        let got: Vec<_> = takers
            .into_iter()
            .filter_map(|t| t.join().unwrap())
            .collect();
        assert_eq!(got, vec![b"m".to_vec()]);
        assert!(!path.exists());
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[cfg(unix)]
    #[test]
    fn only_regular_files_open_and_a_fifo_never_blocks() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        // No writer ever opens it: a blocking open would hang the test.
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&fifo, &link).unwrap();
        for (path, kind) in [
            (fifo.as_path(), "fifo"),
            (link.as_path(), "fifo"),
            (dir.path(), "directory"),
            (Path::new("/dev/null"), "character device"),
        ] {
            let err = open_regular(path).unwrap_err();
            assert!(is_not_regular(&err) && is_absent(&err), "{err}");
            assert_eq!(err.to_string(), format!("not a regular file ({kind})"));
            assert!(read_record(path).is_err());
        }
        let file = dir.path().join("f");
        fs::write(&file, b"x").unwrap();
        assert_eq!(read_record(&file).unwrap().unwrap(), b"x");
        let missing = open_regular(&dir.path().join("nope")).unwrap_err();
        assert!(is_absent(&missing) && !is_not_regular(&missing));
        // A record taken from under a FIFO's name is refused, not read.
        assert!(take(&fifo).is_err());
    }

    #[test]
    fn take_of_a_missing_file_is_none() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(take(&dir.path().join("nope")).unwrap(), None);
        assert_eq!(read_record(&dir.path().join("nope")).unwrap(), None);
    }

    #[test]
    fn a_take_that_cannot_rename_is_an_error_not_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("file");
        fs::write(&file, b"x").unwrap();
        // A path through a regular file: the rename fails, but not because
        // nothing is there.
        let err = take(&file.join("marker.json")).unwrap_err();
        assert!(matches!(err, SmallFileError::Io { .. }), "{err}");
        assert_eq!(fs::read(&file).unwrap(), b"x");
    }

    #[test]
    fn a_record_is_read_up_to_four_mebibytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("record.json");
        let largest = vec![b'x'; 4 * 1024 * 1024];
        fs::write(&path, &largest).unwrap();
        assert_eq!(read_record(&path).unwrap().unwrap().len(), largest.len());
        fs::write(&path, [&largest[..], b"x"].concat()).unwrap();
        let err = read_record(&path).unwrap_err();
        assert!(matches!(err, SmallFileError::TooLarge { max, .. } if max == MAX_RECORD_BYTES));
        // Taking a record too large refuses it under its own name, and it
        // goes (only a directory is put back), leaving no private name.
        let err = take(&path).unwrap_err();
        assert!(matches!(&err, SmallFileError::TooLarge { path: named, .. } if *named == path));
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
