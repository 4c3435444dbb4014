//! Small file helpers for the plugin's own state (never for notes, which
//! the core store writes), and the one way this plugin opens a file whose
//! path it was handed (transcripts, records): [`open_regular`].

use std::fs::{self, File, Metadata, OpenOptions};
use std::io::{self, Read};
use std::path::Path;

/// A path given to read names something other than a regular file.
#[derive(Debug, thiserror::Error)]
#[error("not a regular file ({kind})")]
pub struct NotRegular {
    /// `directory`, `fifo`, `socket`, `block device`, `character device`.
    pub kind: &'static str,
}

fn check_regular(meta: &Metadata) -> io::Result<()> {
    let kind = meta.file_type();
    if kind.is_file() {
        return Ok(());
    }
    let kind = if kind.is_dir() {
        "directory"
    } else {
        special_kind(&kind)
    };
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        NotRegular { kind },
    ))
}

#[cfg(unix)]
fn special_kind(kind: &fs::FileType) -> &'static str {
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
fn special_kind(_: &fs::FileType) -> &'static str {
    "special file"
}

/// Opens `path` for reading only if it is a regular file (after links).
///
/// Opening a FIFO for reading blocks until a writer comes, and a device can
/// stream forever; a hook must never wait on either. So the type is checked
/// before the open, the open itself does not block (`O_NONBLOCK`, which a
/// regular file's reads ignore), and the opened file is checked again in
/// case the path was swapped in between.
pub fn open_regular(path: &Path) -> io::Result<File> {
    check_regular(&fs::metadata(path)?)?;
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    check_regular(&file.metadata()?)?;
    Ok(file)
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

/// Takes the file at `path` atomically: renames it to a private name first,
/// so of several racing takers exactly one gets the content, then reads and
/// removes it. `Ok(None)` when there is nothing to take.
pub fn take(path: &Path) -> io::Result<Option<Vec<u8>>> {
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
        Err(err) => return Err(err),
    }
    let bytes = read_regular(&claimed);
    let _ = fs::remove_file(&claimed);
    bytes.map(Some)
}

/// Reads a regular file, mapping "not found" to `None`.
pub fn read_optional(path: &Path) -> io::Result<Option<Vec<u8>>> {
    match read_regular(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(err),
    }
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
            assert!(read_optional(path).is_err());
        }
        let file = dir.path().join("f");
        fs::write(&file, b"x").unwrap();
        assert_eq!(read_optional(&file).unwrap().unwrap(), b"x");
        let missing = open_regular(&dir.path().join("nope")).unwrap_err();
        assert!(is_absent(&missing) && !is_not_regular(&missing));
        // A record taken from under a FIFO's name is refused, not read.
        assert!(take(&fifo).is_err());
    }

    #[test]
    fn take_of_a_missing_file_is_none() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(take(&dir.path().join("nope")).unwrap(), None);
        assert_eq!(read_optional(&dir.path().join("nope")).unwrap(), None);
    }
}
