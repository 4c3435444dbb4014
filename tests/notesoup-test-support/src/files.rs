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

/// Writes the note `<dir>/<name>.md` as notesoup writes one (a temporary
/// file renamed over it), updated on day `day` of January 2026 and titled
/// `title`: a note a kept-cache test changes from outside.
pub fn renamed_note(dir: &Path, name: &str, day: u8, title: &str) {
    let temp = dir.join(format!(".{name}.tmp"));
    fs::write(
        &temp,
        format!("---\nupdatedAt: 2026-01-{day:02}T00:00:00.000+00:00\n---\n\n# {title}\n"),
    )
    .expect("a temporary note");
    fs::rename(&temp, dir.join(format!("{name}.md"))).expect("the note renamed into place");
}
