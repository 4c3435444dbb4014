//! Installing a host's files (the Pi package, the Claude Code marketplace,
//! the dsh bundle) into a folder the user names, without harming anything
//! else there.
//!
//! - Every file goes through the durable write
//!   (`durable::write_with_mode`): a new temporary file (O_CREAT|O_EXCL,
//!   never through a link planted at its name) renamed over the target, so
//!   a link planted at a target is replaced, never written through, and the
//!   file it pointed at keeps its bytes and its mode.
//! - A link where a folder on the way to a file belongs is refused: a write
//!   below it would land wherever it points.
//! - The folder is the installer's only when it is new, empty, or holds the
//!   installer's marker (`MARKER`), which lists the files it wrote. A
//!   folder holding anything else and no marker is refused (an unrelated
//!   `package.json` in `--dir $HOME` is never overwritten), and so is a file
//!   at one of the paths to write that the marker does not list, unless the
//!   caller forces the install.
//!
//! What a link swapped in by another process of the same user between the
//! check and the write can do is out of reach of a path-based install; the
//! checks stop every link that is already there.

use std::collections::BTreeSet;
use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

use crate::durable;

/// The marker an install leaves in its folder: its first line, then the
/// path of every file it wrote, one per line.
pub(crate) const MARKER: &str = ".notesoup-install";
/// The first line of [`MARKER`].
const MARKER_HEADER: &str = "notesoup install 1";
/// The largest marker read.
const MAX_MARKER_BYTES: u64 = 64 * 1024;
/// How many foreign names a refusal shows.
const SHOWN_FOREIGN: usize = 5;

/// One file an installer writes.
#[derive(Debug, Clone, Copy)]
pub struct InstallFile<'a> {
    /// Its path below the install folder, `/`-separated, without `.` or
    /// `..`.
    pub path: &'a str,
    /// Its bytes.
    pub bytes: &'a [u8],
    /// Whether it is a program (mode 0755, else 0644).
    pub executable: bool,
}

/// Why an install was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// The folder holds files this installer did not write.
    #[error(
        "{dir} holds files notesoup did not install ({}); nothing was written: choose a fresh directory with --dir, or pass --force to install over them",
        shown(.found)
    )]
    Foreign {
        /// The folder.
        dir: PathBuf,
        /// What was found there, relative to it.
        found: Vec<String>,
    },
    /// A link where a folder (or the folder itself) belongs.
    #[error(
        "{path} is a symbolic link; notesoup does not install through links: remove it or choose a fresh directory with --dir"
    )]
    Link {
        /// The link.
        path: PathBuf,
    },
    /// Something other than a folder where one belongs, or a folder where
    /// a file belongs.
    #[error("{path} is in the way: expected {expected}")]
    InTheWay {
        /// What is in the way.
        path: PathBuf,
        /// What belongs there.
        expected: &'static str,
    },
    /// A path an installer names that is not a plain relative path (a bug
    /// of the installer, never the user's input).
    #[error("{0:?} is not a plain relative path")]
    BadPath(String),
    /// A filesystem error.
    #[error("{action} {path}: {source}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// Where.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
}

fn shown(found: &[String]) -> String {
    let mut text = found
        .iter()
        .take(SHOWN_FOREIGN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if found.len() > SHOWN_FOREIGN {
        text.push_str(&format!(" and {} more", found.len() - SHOWN_FOREIGN));
    }
    text
}

fn io_error(action: &'static str, path: &Path) -> impl FnOnce(io::Error) -> InstallError {
    let path = path.to_path_buf();
    move |source| InstallError::Io {
        action,
        path,
        source,
    }
}

/// Every check an install makes before it writes anything.
fn check(dir: &Path, files: &[InstallFile<'_>], force: bool) -> Result<(), InstallError> {
    for file in files {
        plain(file.path)?;
    }
    let meta = match fs::metadata(dir) {
        Ok(meta) => meta,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(error) => return Err(io_error("inspecting", dir)(error)),
    };
    if !meta.is_dir() {
        return Err(InstallError::InTheWay {
            path: dir.to_path_buf(),
            expected: "a directory",
        });
    }
    // The folders on the way to each file, and each file itself.
    for file in files {
        let mut at = dir.to_path_buf();
        let parts: Vec<&str> = file.path.split('/').collect();
        for (index, part) in parts.iter().enumerate() {
            at.push(part);
            let last = index + 1 == parts.len();
            match fs::symlink_metadata(&at) {
                Ok(meta) if meta.file_type().is_symlink() && !last => {
                    return Err(InstallError::Link { path: at });
                }
                Ok(meta) if !last && !meta.is_dir() => {
                    return Err(InstallError::InTheWay {
                        path: at,
                        expected: "a directory",
                    });
                }
                Ok(meta) if last && meta.is_dir() => {
                    return Err(InstallError::InTheWay {
                        path: at,
                        expected: "a file",
                    });
                }
                Ok(_) => {}
                Err(error) if error.kind() == io::ErrorKind::NotFound => break,
                Err(error) => return Err(io_error("inspecting", &at)(error)),
            }
        }
    }
    if force {
        return Ok(());
    }
    let found: Vec<String> = match owned(dir)? {
        // No marker: only an empty folder (or one holding nothing but the
        // temporary files of an interrupted write) is the installer's.
        None => entries(dir)?
            .into_iter()
            .filter(|name| durable::temp_writer(name).is_none())
            .collect(),
        // A marker: no file it does not list is overwritten.
        Some(owned) => files
            .iter()
            .filter(|file| !owned.contains(file.path))
            .filter(|file| fs::symlink_metadata(dir.join(file.path)).is_ok())
            .map(|file| file.path.to_owned())
            .collect(),
    };
    if found.is_empty() {
        Ok(())
    } else {
        Err(InstallError::Foreign {
            dir: dir.to_path_buf(),
            found,
        })
    }
}

/// Refuses a path that is not plain: empty, absolute, or with `.`, `..` or
/// an empty part.
fn plain(path: &str) -> Result<(), InstallError> {
    let bad = || InstallError::BadPath(path.to_owned());
    if path.is_empty() || path.split('/').any(|part| part.is_empty()) {
        return Err(bad());
    }
    if Path::new(path)
        .components()
        .any(|part| !matches!(part, Component::Normal(_)))
    {
        return Err(bad());
    }
    Ok(())
}

/// The files the marker in `dir` lists; `None` when there is no marker (or
/// something else under its name: a link, a folder, not a marker at all).
fn owned(dir: &Path) -> Result<Option<BTreeSet<String>>, InstallError> {
    use std::io::Read;
    let path = dir.join(MARKER);
    match fs::symlink_metadata(&path) {
        Ok(meta) if meta.is_file() => {}
        Ok(_) => return Ok(None),
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(io_error("inspecting", &path)(error)),
    }
    let mut text = String::new();
    fs::File::open(&path)
        .and_then(|file| file.take(MAX_MARKER_BYTES).read_to_string(&mut text))
        .map_err(io_error("reading", &path))?;
    let mut lines = text.lines();
    if lines.next() != Some(MARKER_HEADER) {
        return Ok(None);
    }
    Ok(Some(lines.map(str::to_owned).collect()))
}

/// The names in `dir`, sorted.
fn entries(dir: &Path) -> Result<Vec<String>, InstallError> {
    let mut names = Vec::new();
    for entry in fs::read_dir(dir).map_err(io_error("reading", dir))? {
        let entry = entry.map_err(io_error("reading", dir))?;
        names.push(entry.file_name().to_string_lossy().into_owned());
    }
    names.sort();
    Ok(names)
}

/// Makes the folders on the way to `path` below `dir`, one at a time, never
/// through a link.
fn make_dirs(dir: &Path, path: &str) -> Result<(), InstallError> {
    let mut at = dir.to_path_buf();
    let parts: Vec<&str> = path.split('/').collect();
    for part in &parts[..parts.len().saturating_sub(1)] {
        at.push(part);
        match fs::symlink_metadata(&at) {
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(InstallError::Link { path: at });
            }
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => {
                return Err(InstallError::InTheWay {
                    path: at,
                    expected: "a directory",
                });
            }
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                match fs::create_dir(&at) {
                    Ok(()) => {}
                    Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {
                        // Made meanwhile: checked again at the next write.
                    }
                    Err(error) => return Err(io_error("creating", &at)(error)),
                }
            }
            Err(error) => return Err(io_error("inspecting", &at)(error)),
        }
    }
    Ok(())
}

impl InstallFile<'_> {
    /// What an install of `files` into `dir` would do, without doing it: the
    /// paths it would write (for `--print`), or why it would be refused.
    pub fn plan(
        dir: &Path,
        files: &[InstallFile<'_>],
        force: bool,
    ) -> Result<Vec<PathBuf>, InstallError> {
        check(dir, files, force)?;
        Ok(files.iter().map(|file| dir.join(file.path)).collect())
    }

    /// Installs `files` into `dir` (created when missing) after the checks of
    /// the module's documentation (`force` skips the ones about foreign files,
    /// never the ones about links): the marker first, listing every file, so an
    /// install cut short can be run again; then each file.
    pub fn install(dir: &Path, files: &[InstallFile<'_>], force: bool) -> Result<(), InstallError> {
        check(dir, files, force)?;
        fs::create_dir_all(dir).map_err(io_error("creating", dir))?;
        let mut marker = String::from(MARKER_HEADER);
        marker.push('\n');
        for file in files {
            marker.push_str(file.path);
            marker.push('\n');
        }
        let marker_path = dir.join(MARKER);
        durable::write_with_mode(&marker_path, marker.as_bytes(), 0o644)
            .map_err(io_error("writing", &marker_path))?;
        for file in files {
            let path = dir.join(file.path);
            make_dirs(dir, file.path)?;
            let mode = if file.executable { 0o755 } else { 0o644 };
            durable::write_with_mode(&path, file.bytes, mode)
                .map_err(io_error("writing", &path))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

    use super::*;
    use std::os::unix::fs::{PermissionsExt, symlink};

    const FILES: [InstallFile<'static>; 3] = [
        InstallFile {
            path: "package.json",
            bytes: b"{}\n",
            executable: false,
        },
        InstallFile {
            path: "dreamer/dream.ts",
            bytes: b"dream\n",
            executable: false,
        },
        InstallFile {
            path: "bin/tool",
            bytes: b"#!/bin/sh\n",
            executable: true,
        },
    ];

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn a_fresh_folder_is_installed_and_installed_again() {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path().join("pkg");
        assert_eq!(InstallFile::plan(&dir, &FILES, false).unwrap().len(), 3);
        assert!(!dir.exists(), "a plan writes nothing");
        InstallFile::install(&dir, &FILES, false).unwrap();
        assert_eq!(fs::read(dir.join("dreamer/dream.ts")).unwrap(), b"dream\n");
        assert_eq!(mode(&dir.join("bin/tool")), 0o755);
        assert_eq!(mode(&dir.join("package.json")), 0o644);
        InstallFile::install(&dir, &FILES, false).unwrap();
        let marker = fs::read_to_string(dir.join(MARKER)).unwrap();
        assert_eq!(
            marker,
            "notesoup install 1\npackage.json\ndreamer/dream.ts\nbin/tool\n"
        );
    }

    #[test]
    fn links_are_never_written_through() {
        let temp = tempfile::tempdir().unwrap();
        let victim = temp.path().join("bashrc");
        fs::write(&victim, b"mine").unwrap();
        fs::set_permissions(&victim, fs::Permissions::from_mode(0o600)).unwrap();
        let dir = temp.path().join("pkg");
        InstallFile::install(&dir, &FILES, false).unwrap();
        // A link at a file: replaced.
        fs::remove_file(dir.join("dreamer/dream.ts")).unwrap();
        symlink(&victim, dir.join("dreamer/dream.ts")).unwrap();
        InstallFile::install(&dir, &FILES, false).unwrap();
        assert_eq!(fs::read(&victim).unwrap(), b"mine");
        assert_eq!(mode(&victim), 0o600);
        assert!(
            !fs::symlink_metadata(dir.join("dreamer/dream.ts"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
        // A link at a folder: refused, forced or not.
        let elsewhere = temp.path().join("elsewhere");
        fs::create_dir(&elsewhere).unwrap();
        fs::remove_dir_all(dir.join("dreamer")).unwrap();
        symlink(&elsewhere, dir.join("dreamer")).unwrap();
        for force in [false, true] {
            let error = InstallFile::install(&dir, &FILES, force).unwrap_err();
            assert!(matches!(error, InstallError::Link { .. }), "{error}");
        }
        assert_eq!(fs::read_dir(&elsewhere).unwrap().count(), 0);
    }

    #[test]
    fn a_foreign_folder_is_refused_unless_forced() {
        let temp = tempfile::tempdir().unwrap();
        let home = temp.path().join("home");
        fs::create_dir(&home).unwrap();
        fs::write(home.join("package.json"), b"theirs").unwrap();
        let error = InstallFile::install(&home, &FILES, false).unwrap_err();
        let text = error.to_string();
        assert!(
            text.contains("package.json") && text.contains("--force"),
            "{text}"
        );
        assert!(InstallFile::plan(&home, &FILES, false).is_err());
        assert_eq!(fs::read(home.join("package.json")).unwrap(), b"theirs");
        assert!(!home.join(MARKER).exists());
        // Installed once (forced), a file the marker does not list is still
        // never overwritten.
        InstallFile::install(&home, &FILES, true).unwrap();
        let more = [
            FILES[0],
            InstallFile {
                path: "extra.txt",
                bytes: b"x",
                executable: false,
            },
        ];
        fs::write(home.join("extra.txt"), b"theirs").unwrap();
        assert!(matches!(
            InstallFile::install(&home, &more, false).unwrap_err(),
            InstallError::Foreign { .. }
        ));
        assert_eq!(fs::read(home.join("extra.txt")).unwrap(), b"theirs");
        // A bad path is the installer's bug.
        let bad = [InstallFile {
            path: "../x",
            bytes: b"",
            executable: false,
        }];
        assert!(matches!(
            InstallFile::install(&home, &bad, true).unwrap_err(),
            InstallError::BadPath(_)
        ));
    }

    #[test]
    fn a_refusal_names_five_foreign_files_and_counts_the_rest() {
        let names =
            |count: usize| -> Vec<String> { (1..=count).map(|n| format!("f{n}")).collect() };
        assert_eq!(shown(&names(5)), "f1, f2, f3, f4, f5");
        assert_eq!(shown(&names(7)), "f1, f2, f3, f4, f5 and 2 more");
    }

    /// A package of many files is its installer's again: its whole marker
    /// is read (well past a kilobyte).
    #[test]
    fn a_long_marker_is_read_whole() {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path().join("pkg");
        let paths: Vec<String> = (0..200).map(|n| format!("skills/file-{n:03}.md")).collect();
        let files: Vec<InstallFile<'_>> = paths
            .iter()
            .map(|path| InstallFile {
                path,
                bytes: b"x\n",
                executable: false,
            })
            .collect();
        InstallFile::install(&dir, &files, false).unwrap();
        assert!(fs::metadata(dir.join(MARKER)).unwrap().len() > 2048);
        InstallFile::install(&dir, &files, false).unwrap();
    }

    /// What is in the way is refused before anything is written, by a plan
    /// as by an install: a file where a folder belongs (the install folder
    /// or one on the way), a folder where a file belongs.
    #[test]
    fn what_is_in_the_way_is_refused_by_the_plan() {
        let temp = tempfile::tempdir().unwrap();
        let file = temp.path().join("file");
        fs::write(&file, b"mine").unwrap();
        let below_a_file = InstallFile::plan(&file.join("pkg"), &FILES, false).unwrap_err();
        assert!(
            matches!(below_a_file, InstallError::Io { .. }),
            "{below_a_file}"
        );
        let in_the_way = |make: &dyn Fn(&Path), expected: &str| {
            let dir = temp.path().join(format!("pkg-{expected}"));
            InstallFile::install(&dir, &FILES, false).unwrap();
            make(&dir);
            for error in [
                InstallFile::plan(&dir, &FILES, false).unwrap_err(),
                InstallFile::install(&dir, &FILES, true).unwrap_err(),
            ] {
                match error {
                    InstallError::InTheWay { expected: what, .. } => assert_eq!(what, expected),
                    other => panic!("{other}"),
                }
            }
        };
        in_the_way(
            &|dir| {
                fs::remove_dir_all(dir.join("dreamer")).unwrap();
                fs::write(dir.join("dreamer"), b"a file").unwrap();
            },
            "a directory",
        );
        in_the_way(
            &|dir| {
                fs::remove_file(dir.join("package.json")).unwrap();
                fs::create_dir(dir.join("package.json")).unwrap();
            },
            "a file",
        );
    }

    #[test]
    fn an_installer_s_path_must_be_plain() {
        for path in ["", "a//b", "a/", "/a", "./a", "a/../b", ".."] {
            assert!(
                matches!(plain(path), Err(InstallError::BadPath(_))),
                "{path:?}"
            );
        }
        for path in ["a", "a/b.md", "a.b/c"] {
            assert!(plain(path).is_ok(), "{path:?}");
        }
    }

    /// Only a regular file at the marker's name is a marker: a link to one
    /// or a folder there leaves the install folder foreign.
    #[test]
    fn only_a_regular_file_is_a_marker() {
        let temp = tempfile::tempdir().unwrap();
        let elsewhere = temp.path().join("marker");
        fs::write(&elsewhere, format!("{MARKER_HEADER}\npackage.json\n")).unwrap();
        for kind in ["a link", "a folder"] {
            let dir = temp.path().join(kind.replace(' ', "-"));
            fs::create_dir(&dir).unwrap();
            fs::write(dir.join("package.json"), b"theirs").unwrap();
            let marker = dir.join(MARKER);
            if kind == "a link" {
                symlink(&elsewhere, &marker).unwrap();
            } else {
                fs::create_dir(&marker).unwrap();
            }
            let error = InstallFile::install(&dir, &FILES[..1], false).unwrap_err();
            assert!(
                matches!(error, InstallError::Foreign { .. }),
                "{kind}: {error}"
            );
            assert_eq!(fs::read(dir.join("package.json")).unwrap(), b"theirs");
        }
    }

    /// The folders on the way to a file are made one at a time, never
    /// through a link (one swapped in after the checks) nor over a file.
    #[test]
    fn folders_are_made_never_through_a_link_nor_over_a_file() {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path().join("pkg");
        fs::create_dir(&dir).unwrap();
        make_dirs(&dir, "a/b/c.md").unwrap();
        assert!(dir.join("a/b").is_dir());
        make_dirs(&dir, "a/b/c.md").unwrap();
        let elsewhere = temp.path().join("elsewhere");
        fs::create_dir(&elsewhere).unwrap();
        symlink(&elsewhere, dir.join("l")).unwrap();
        assert!(matches!(
            make_dirs(&dir, "l/x/y.md").unwrap_err(),
            InstallError::Link { .. }
        ));
        assert_eq!(fs::read_dir(&elsewhere).unwrap().count(), 0);
        fs::write(dir.join("f"), b"a file").unwrap();
        assert!(matches!(
            make_dirs(&dir, "f/y.md").unwrap_err(),
            InstallError::InTheWay { .. }
        ));
    }
}
