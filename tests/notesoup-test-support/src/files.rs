//! A folder as a test looks at it: every file under it, and what they
//! hold, to show that something changed nothing; a file put in place
//! with the folders it needs; and the notes a kept-cache test changes from
//! outside.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

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

/// Waits until the folders just changed are old enough for a boot to keep
/// their shelf (core keeps one only once its directories are 2 s old).
pub fn settle() {
    std::thread::sleep(Duration::from_millis(2_100));
}

/// The kept-cache file of `kind` (`boot-shelves`, `note-heads`) for the
/// project `key` under the cache directory `cache`.
pub fn kept_file(cache: &Path, kind: &str, key: &str) -> PathBuf {
    find_kept_file(cache, kind, key).unwrap_or_else(|| panic!("the project's {kind} file"))
}

/// [`kept_file`], or `None` while it is not there: for a test that waits
/// for it (its folder is made before the file is written).
pub fn find_kept_file(cache: &Path, kind: &str, key: &str) -> Option<PathBuf> {
    fs::read_dir(cache.join(kind))
        .ok()?
        .filter_map(|entry| Some(entry.ok()?.path()))
        .find(|path| path.to_string_lossy().contains(key))
}

/// The notes of the project folder `dir` (`alpha` and `beta`, written by
/// [`renamed_note`], with the caches kept) added to, removed from and
/// edited from outside: after each change a boot through the kept caches
/// (`boot(false)`) shows it and equals a boot without them (`boot(true)`).
/// Then the kept `shelves` and `heads` files are damaged: the next boot
/// passes them over, equals the last, and keeps them anew. The boot after
/// the edit.
pub fn boots_follow_outside_changes(
    dir: &Path,
    shelves: &Path,
    heads: &Path,
    boot: &mut dyn FnMut(bool) -> String,
) -> String {
    // Added, removed and edited from outside since the caches were kept.
    renamed_note(dir, "gamma", 3, "gamma");
    let added = boot(false);
    assert!(added.contains("@project/gamma.md"), "{added}");
    assert_eq!(added, boot(true));
    fs::remove_file(dir.join("beta.md")).unwrap();
    let removed = boot(false);
    assert!(!removed.contains("@project/beta.md"), "{removed}");
    assert_eq!(removed, boot(true));
    settle();
    boot(false);
    fs::write(
        dir.join("alpha.md"),
        "---\nupdatedAt: 2026-01-09T00:00:00.000+00:00\n---\n\n# alpha, edited in place\n",
    )
    .unwrap();
    let edited = boot(false);
    assert!(edited.contains("alpha, edited in place"), "{edited}");
    assert_eq!(edited, boot(true));

    // Damaged caches: passed over, and made anew.
    settle();
    fs::write(shelves, b"{not an index").unwrap();
    fs::write(heads, b"not heads").unwrap();
    let damaged = boot(false);
    assert_eq!(damaged, boot(true));
    assert_eq!(damaged, edited);
    // The index's JSON line names the notes (each folder's file ids follow).
    assert!(String::from_utf8_lossy(&fs::read(shelves).unwrap()).contains("alpha.md"));
    assert_ne!(fs::read(heads).unwrap(), b"not heads");
    edited
}
