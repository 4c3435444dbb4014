//! Directories opened below the notes root, and every file operation the
//! store, the dream's tools and doctor make through them.
//!
//! Checking a path and then opening it leaves a window: a local process can
//! swap a directory on the way for a link (`renameat2` with
//! `RENAME_EXCHANGE`) between the check and the use, and the use lands
//! wherever the link points. So nothing below the root is reached by a
//! path. A [`DirHandle`] is an open directory; every note path is resolved
//! relative to an open root handle without following a link at any
//! component, and every file is opened, created, renamed and removed by
//! name inside an open directory. Whatever a swap does after that, the
//! operation acts on the directory that was opened, which is below the
//! root.
//!
//! On Linux (`linux.rs`) a path is resolved by one `openat2` with
//! `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`, or, where the kernel has no
//! `openat2`, one `openat(O_NOFOLLOW | O_DIRECTORY)` per component. The
//! portable fallback (`portable.rs`) keeps the checks made before handles:
//! each component is inspected without following links before the path is
//! used.

use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Path, PathBuf};

#[cfg(target_os = "linux")]
mod linux;
// Built in tests on Linux too, so the fallback is exercised where the
// tests run.
#[cfg(any(not(target_os = "linux"), test))]
mod portable;

#[cfg(target_os = "linux")]
pub(crate) use linux::DirHandle;
#[cfg(not(target_os = "linux"))]
pub(crate) use portable::DirHandle;

use super::error::NoteError;
use crate::wire::RefusalCode;

/// What a directory entry is, never following a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Dir,
    File,
    Link,
    /// A FIFO, socket or device.
    Other,
}

/// One entry of a directory listing.
#[derive(Debug)]
pub(crate) struct Entry {
    pub(crate) name: OsString,
    pub(crate) kind: Kind,
}

/// What `lstat` says about one entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileStat {
    pub(crate) kind: Kind,
    pub(crate) nlink: u64,
    pub(crate) dev: u64,
    pub(crate) ino: u64,
    pub(crate) len: u64,
    /// Seconds and nanoseconds since the epoch.
    pub(crate) modified: (i64, i64),
    pub(crate) changed: (i64, i64),
}

/// Why a path below the root could not be used.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BeneathError {
    /// A component is a symbolic link.
    #[error("{} is a symbolic link", path.display())]
    Link { path: PathBuf },
    /// A component on the way is not a directory.
    #[error("{} is not a directory", path.display())]
    NotADirectory { path: PathBuf },
    /// The target is not a regular file.
    #[error("{} is not a regular file", path.display())]
    NotAFile { path: PathBuf },
    /// The path is not a plain relative path (a `..`, an absolute path).
    #[error("{} does not stay below {}", path.display(), base.display())]
    NotBelow { base: PathBuf, path: PathBuf },
    /// A filesystem operation failed.
    #[error("{action} {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        source: io::Error,
    },
}

impl BeneathError {
    pub(crate) fn io(action: &'static str, path: &Path, source: io::Error) -> BeneathError {
        BeneathError::Io {
            action,
            path: path.to_path_buf(),
            source,
        }
    }
}

impl From<BeneathError> for NoteError {
    fn from(error: BeneathError) -> NoteError {
        match error {
            BeneathError::Link { path } => NoteError::new(
                RefusalCode::InvalidAddress,
                "the note path crosses a symbolic link; the notes store never follows links",
            )
            .with_path(&path),
            BeneathError::NotADirectory { ref path } | BeneathError::NotAFile { ref path } => {
                NoteError::new(RefusalCode::IoError, error.to_string()).with_path(path)
            }
            BeneathError::NotBelow { base, path } => NoteError::new(
                RefusalCode::InternalError,
                format!("{} is not below {}", path.display(), base.display()),
            ),
            BeneathError::Io {
                action,
                path,
                source,
            } => NoteError::io(action, &path, &source),
        }
    }
}

/// The plain components of `rel` (`.` skipped), or `None` when it holds a
/// `..`, a root or a prefix: nothing may lead above the handle.
pub(crate) fn plain_components(rel: &Path) -> Option<Vec<&std::ffi::OsStr>> {
    use std::path::Component;
    rel.components()
        .filter(|component| *component != Component::CurDir)
        .map(|component| match component {
            Component::Normal(name) => Some(name),
            _ => None,
        })
        .collect()
}

/// `name` when it is one plain entry name of the directory at `base`, else
/// the refusal that it does not stay below it.
pub(crate) fn plain_below<'a>(base: &Path, name: &'a OsStr) -> Result<&'a OsStr, BeneathError> {
    if is_plain_name(name) {
        Ok(name)
    } else {
        Err(BeneathError::NotBelow {
            base: base.to_path_buf(),
            path: base.join(name),
        })
    }
}

/// The plain components of `rel` below the directory at `base`, else the
/// refusal that it does not stay below it.
pub(crate) fn components_below<'a>(
    base: &Path,
    rel: &'a Path,
) -> Result<Vec<&'a OsStr>, BeneathError> {
    plain_components(rel).ok_or_else(|| BeneathError::NotBelow {
        base: base.to_path_buf(),
        path: base.join(rel),
    })
}

/// Whether `name` is one plain entry name (no separator, not `.` or `..`).
pub(crate) fn is_plain_name(name: &std::ffi::OsStr) -> bool {
    let bytes = name.as_encoded_bytes();
    !bytes.is_empty()
        && bytes != b"."
        && bytes != b".."
        && !bytes.contains(&b'/')
        && !(cfg!(windows) && bytes.contains(&b'\\'))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

    /// The same checks for every implementation of `DirHandle`.
    #[test]
    fn a_plain_name_is_one_entry_name() {
        use std::ffi::OsStr;
        for name in ["n.md", ".hidden", "..x", "a b"] {
            assert!(super::is_plain_name(OsStr::new(name)), "{name}");
        }
        for name in ["", ".", "..", "a/b", "/"] {
            assert!(!super::is_plain_name(OsStr::new(name)), "{name}");
        }
        // A backslash separates nothing outside Windows.
        assert_eq!(super::is_plain_name(OsStr::new("a\\b")), !cfg!(windows));
    }

    macro_rules! handle_tests {
        ($module:ident, $handle:ty) => {
            mod $module {
                use std::ffi::OsStr;
                use std::fs;
                use std::path::Path;

                use crate::notes::beneath::{BeneathError, Kind};

                type Handle = $handle;

                /// A root holding `a/b/`, a file `f`, `a/l` -> an outside
                /// directory, `top` -> `a`, and `lf` -> `f`; with the root,
                /// the outside directory and its temp dir.
                fn fixture() -> (tempfile::TempDir, Handle, std::path::PathBuf) {
                    let dir = tempfile::tempdir().unwrap();
                    let root = dir.path().join("root");
                    let outside = dir.path().join("outside");
                    fs::create_dir_all(root.join("a/b")).unwrap();
                    fs::create_dir_all(&outside).unwrap();
                    fs::write(outside.join("secret.md"), "outside").unwrap();
                    fs::write(root.join("f"), "file").unwrap();
                    fs::write(root.join("a/b/n.md"), "note").unwrap();
                    #[cfg(unix)]
                    {
                        use std::os::unix::fs::symlink;
                        symlink(&outside, root.join("a/l")).unwrap();
                        symlink(root.join("a"), root.join("top")).unwrap();
                        symlink(root.join("f"), root.join("lf")).unwrap();
                    }
                    let handle = Handle::open_root(&root).unwrap();
                    (dir, handle, outside)
                }

                fn is_link<T: std::fmt::Debug>(result: Result<T, BeneathError>) -> bool {
                    matches!(result, Err(BeneathError::Link { .. }))
                }

                fn is_not_a_directory<T>(result: Result<T, BeneathError>) -> bool {
                    matches!(result, Err(BeneathError::NotADirectory { .. }))
                }

                fn is_not_a_file<T>(result: Result<T, BeneathError>) -> bool {
                    matches!(result, Err(BeneathError::NotAFile { .. }))
                }

                fn is_not_below<T>(result: Result<T, BeneathError>) -> bool {
                    matches!(result, Err(BeneathError::NotBelow { .. }))
                }

                #[test]
                fn directories_open_below_and_never_through_a_link() {
                    let (_dir, root, _) = fixture();
                    let b = root.open_dir(Path::new("a/b")).unwrap().unwrap();
                    assert_eq!(b.path(), root.path().join("a/b"));
                    assert!(root.open_dir(Path::new("a/missing/x")).unwrap().is_none());
                    assert!(is_not_a_directory(root.open_dir(Path::new("f/x"))));
                    assert!(is_not_a_directory(root.open_dir(Path::new("f"))));
                    assert!(is_not_below(root.open_dir(Path::new("a/../../x"))));
                    let not_a_root = Handle::open_root(&root.path().join("f")).unwrap_err();
                    assert_eq!(not_a_root.kind(), std::io::ErrorKind::NotADirectory);
                    #[cfg(unix)]
                    {
                        assert!(is_link(root.open_dir(Path::new("a/l"))));
                        assert!(is_link(root.open_dir(Path::new("a/l/x"))));
                        assert!(is_link(root.open_dir(Path::new("top/b"))));
                    }
                }

                #[test]
                fn directories_are_created_one_at_a_time_and_never_through_a_link() {
                    let (_dir, root, outside) = fixture();
                    let made = root.create_dirs(Path::new("a/new/deeper")).unwrap();
                    assert_eq!(made.path(), root.path().join("a/new/deeper"));
                    assert!(root.path().join("a/new/deeper").is_dir());
                    let again = root.create_dirs(Path::new("a/new/deeper")).unwrap();
                    assert_eq!(again.path(), made.path());
                    #[cfg(unix)]
                    {
                        assert!(is_link(root.create_dirs(Path::new("a/l/new"))));
                        assert!(is_link(root.create_dirs(Path::new("top/new"))));
                        assert!(!outside.join("new").exists());
                        assert!(!root.path().join("a/new/new").exists());
                    }
                    let _ = outside;
                }

                #[test]
                fn only_regular_files_open_and_never_through_a_link() {
                    let (_dir, root, _) = fixture();
                    let (_, len) = root.open_file(OsStr::new("f")).unwrap().unwrap();
                    assert_eq!(len, 4);
                    assert!(root.open_file(OsStr::new("missing")).unwrap().is_none());
                    assert!(is_not_a_file(root.open_file(OsStr::new("a"))));
                    assert!(is_not_below(root.open_file(OsStr::new("a/b"))));
                    let (_, len) = root.open_file_at(Path::new("a/b/n.md")).unwrap().unwrap();
                    assert_eq!(len, 4);
                    assert!(
                        root.open_file_at(Path::new("a/b/none.md"))
                            .unwrap()
                            .is_none()
                    );
                    #[cfg(unix)]
                    {
                        assert!(is_link(root.open_file(OsStr::new("lf"))));
                        assert!(is_link(root.open_listed(OsStr::new("lf"))));
                        assert!(is_link(root.open_file_at(Path::new("a/l/secret.md"))));
                        assert!(is_link(root.open_file_at(Path::new("top/b/n.md"))));
                    }
                    #[cfg(target_os = "linux")]
                    {
                        let a = root.open_dir(Path::new("a")).unwrap().unwrap();
                        rustix::fs::mknodat(
                            rustix::fs::CWD,
                            &a.path().join("fifo"),
                            rustix::fs::FileType::Fifo,
                            rustix::fs::Mode::from_raw_mode(0o600),
                            0,
                        )
                        .unwrap();
                        // Refused without waiting for a writer.
                        assert!(is_not_a_file(a.open_file(OsStr::new("fifo"))));
                    }
                }

                #[test]
                fn entries_and_stats_never_follow_a_link() {
                    let (_dir, root, _) = fixture();
                    let mut entries: Vec<(String, Kind)> = root
                        .entries()
                        .unwrap()
                        .into_iter()
                        .map(|entry| (entry.name.to_string_lossy().into_owned(), entry.kind))
                        .collect();
                    entries.sort_by(|a, b| a.0.cmp(&b.0));
                    let mut expected =
                        vec![("a".to_owned(), Kind::Dir), ("f".to_owned(), Kind::File)];
                    if cfg!(unix) {
                        expected.push(("lf".to_owned(), Kind::Link));
                        expected.push(("top".to_owned(), Kind::Link));
                    }
                    expected.sort_by(|a, b| a.0.cmp(&b.0));
                    assert_eq!(entries, expected);
                    // Listed twice from one handle: the same entries.
                    assert_eq!(root.entries().unwrap().len(), expected.len());
                    let stat = root.stat(OsStr::new("f")).unwrap().unwrap();
                    assert_eq!((stat.kind, stat.len, stat.nlink), (Kind::File, 4, 1));
                    assert!(root.stat(OsStr::new("missing")).unwrap().is_none());
                    assert_eq!(root.stat(OsStr::new("a")).unwrap().unwrap().kind, Kind::Dir);
                    #[cfg(unix)]
                    assert_eq!(
                        root.stat(OsStr::new("top")).unwrap().unwrap().kind,
                        Kind::Link
                    );
                }

                #[test]
                fn a_replace_is_atomic_and_leaves_only_the_target() {
                    let (_dir, root, _) = fixture();
                    let b = root.open_dir(Path::new("a/b")).unwrap().unwrap();
                    b.replace(OsStr::new("n.md"), b"one").unwrap();
                    b.replace(OsStr::new("n.md"), b"two").unwrap();
                    b.sync().unwrap();
                    assert_eq!(fs::read(b.path().join("n.md")).unwrap(), b"two");
                    fs::create_dir_all(b.path().join("occupied.md/inside")).unwrap();
                    b.replace(OsStr::new("occupied.md"), b"x")
                        .expect_err("a rename onto a directory");
                    let mut names: Vec<String> = fs::read_dir(b.path())
                        .unwrap()
                        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
                        .collect();
                    names.sort();
                    assert_eq!(names, ["n.md", "occupied.md"], "no temporary file left");
                    b.replace(OsStr::new("../escape.md"), b"x")
                        .expect_err("a name, not a path");
                    assert!(!root.path().join("a/escape.md").exists());
                }

                #[test]
                fn entries_move_and_go_inside_their_directories_only() {
                    let (_dir, root, _) = fixture();
                    let a = root.open_dir(Path::new("a")).unwrap().unwrap();
                    let b = a.open_dir(Path::new("b")).unwrap().unwrap();
                    fs::write(a.path().join("m.md"), "m").unwrap();
                    a.move_entry(OsStr::new("m.md"), &b, OsStr::new("moved.md"))
                        .unwrap();
                    assert_eq!(fs::read_to_string(b.path().join("moved.md")).unwrap(), "m");
                    let refused = b
                        .move_entry(OsStr::new("moved.md"), &b, OsStr::new("n.md"))
                        .expect_err("never replaces");
                    assert_eq!(refused.kind(), std::io::ErrorKind::AlreadyExists);
                    assert_eq!(fs::read_to_string(b.path().join("n.md")).unwrap(), "note");
                    b.remove_file(OsStr::new("../moved.md"))
                        .expect_err("a name, not a path");
                    b.remove_file(OsStr::new("moved.md")).unwrap();
                    assert!(!b.path().join("moved.md").exists());
                    let mut locked = root.open_dir(Path::new("a")).unwrap().unwrap();
                    locked.lock().unwrap();
                }
            }
        };
    }

    #[cfg(target_os = "linux")]
    handle_tests!(kernel_resolution, crate::notes::beneath::linux::DirHandle);
    handle_tests!(portable_checks, crate::notes::beneath::portable::DirHandle);

    /// The component walk Linux falls back to without `openat2`, under a
    /// swapper exchanging the walked directory with a link out of the
    /// root: every write through what the walk opened lands inside.
    #[cfg(target_os = "linux")]
    #[test]
    fn the_component_walk_never_leaves_the_root_under_a_swap() {
        use std::ffi::OsStr;
        use std::path::Path;
        use std::sync::Arc;
        use std::sync::atomic::{AtomicBool, Ordering};

        use rustix::fs::{CWD, RenameFlags, renameat_with};

        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(root.join("home/box")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("home/box-link")).unwrap();
        let handle = super::linux::DirHandle::open_root(&root).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let swapper = {
            let stop = Arc::clone(&stop);
            let (a, b) = (root.join("home/box"), root.join("home/box-link"));
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let _ = renameat_with(CWD, &a, CWD, &b, RenameFlags::EXCHANGE);
                }
            })
        };
        let (mut opened, mut refused) = (0, 0);
        for i in 0..400_u32 {
            let walked = if i.is_multiple_of(2) {
                handle.walk_for_test(Path::new("home/box"))
            } else {
                handle.create_dirs(Path::new("home/box/deeper")).map(Some)
            };
            match walked {
                Ok(Some(found)) => {
                    found.replace(OsStr::new("n.md"), b"inside").unwrap();
                    opened += 1;
                }
                Ok(None) => {}
                Err(_) => refused += 1,
            }
        }
        stop.store(true, Ordering::Relaxed);
        swapper.join().unwrap();
        assert_eq!(
            std::fs::read_dir(&outside).unwrap().count(),
            0,
            "nothing written outside ({opened} opened, {refused} refused)"
        );
    }
}
