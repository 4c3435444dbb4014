//! Small durable-file helpers for the plugin's own state (never for notes,
//! which the core store writes).

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::Path;

/// Writes `bytes` to `path` atomically: a temp file in the same directory,
/// fsynced, then renamed over the target, so a reader never sees a torn
/// record and a crash leaves either the old or the new content.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no parent"))?;
    fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no file name"))?;
    let tmp = dir.join(format!(
        ".{}.{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id(),
        uuid::Uuid::new_v4().simple()
    ));
    let result = (|| {
        let mut file = File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
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
    let bytes = fs::read(&claimed);
    let _ = fs::remove_file(&claimed);
    bytes.map(Some)
}

/// Reads a file, mapping "not found" to `None`.
pub fn read_optional(path: &Path) -> io::Result<Option<Vec<u8>>> {
    match fs::read(path) {
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

    #[test]
    fn take_of_a_missing_file_is_none() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(take(&dir.path().join("nope")).unwrap(), None);
        assert_eq!(read_optional(&dir.path().join("nope")).unwrap(), None);
    }
}
