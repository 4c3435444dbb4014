//! What can stand at a settings file's (or a record's) name instead of a
//! regular file: every binary must warn once and go on, never wait on it
//! nor read it whole.

use std::path::Path;
use std::process::Command;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotAFile {
    /// A link to `/dev/zero`: endless, never a regular file.
    DevZero,
    /// A FIFO no one writes: opening it for reading would wait forever.
    Fifo,
    Directory,
    /// A regular file of 5 MiB: valid JSON, past every settings bound.
    Oversized,
}

pub const NOT_FILES: [NotAFile; 4] = [
    NotAFile::DevZero,
    NotAFile::Fifo,
    NotAFile::Directory,
    NotAFile::Oversized,
];

/// Puts a `kind` at `path`, making its parent folders.
pub fn place(kind: NotAFile, path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    match kind {
        NotAFile::DevZero => std::os::unix::fs::symlink("/dev/zero", path).unwrap(),
        NotAFile::Fifo => {
            let made = Command::new("mkfifo").arg(path).status().unwrap();
            assert!(made.success());
        }
        NotAFile::Directory => std::fs::create_dir(path).unwrap(),
        NotAFile::Oversized => {
            let mut text = br#"{"notesoup": {"bootMaxChars": 5000}, "pad": ""#.to_vec();
            text.resize(5 << 20, b' ');
            text.extend_from_slice(b"\"}");
            std::fs::write(path, text).unwrap();
        }
    }
}

/// Fails the test unless `warnings` is exactly one warning, starting with
/// `head` (the binary naming the file) and ending with `tail` (the defaults
/// apply); `what` names the case.
pub fn assert_one_warning(warnings: &[&str], head: &str, tail: &str, what: &str) {
    assert_eq!(warnings.len(), 1, "{what}");
    assert!(
        warnings[0].starts_with(head) && warnings[0].ends_with(tail),
        "{}",
        warnings[0]
    );
}
