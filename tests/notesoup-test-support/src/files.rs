//! A folder as a test looks at it: every file under it, and what they
//! hold, to show that something changed nothing; and a file put in place
//! with the folders it needs.

use std::fs;
use std::path::{Path, PathBuf};

/// Every entry under `dir` that is not a folder (a link is listed, never
/// followed into), unsorted; a folder that cannot be read holds none.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let is_dir = entry.file_type().is_ok_and(|kind| kind.is_dir());
        if is_dir {
            out.extend(files_under(&entry.path()));
        } else {
            out.push(entry.path());
        }
    }
    out
}

/// Every file under `dir` ([`files_under`]) with its bytes (none where it
/// cannot be read), sorted by path: two equal trees hold the same.
pub fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files: Vec<(PathBuf, Vec<u8>)> = files_under(dir)
        .into_iter()
        .map(|path| {
            let bytes = fs::read(&path).unwrap_or_default();
            (path, bytes)
        })
        .collect();
    files.sort();
    files
}

/// Writes `text` to `path`, creating the folders it needs first.
pub fn put(path: &Path, text: impl AsRef<[u8]>) {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).unwrap();
    }
    fs::write(path, text).unwrap();
}
