//! The write jail: every path the dreamer writes, edits, deletes or reads
//! must lie inside the notes home, and is reached without following a link.
//!
//! A checked path is never used again by name: the jail opens the target's
//! directory below the real home through [`DirHandle`]s (no link followed
//! at any component) and the tools act inside that open directory. A
//! directory swapped for a link after the check changes nothing: the write
//! lands in the directory that was opened, inside the home.

use std::ffi::OsString;
use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use super::DreamError;
use super::lock::LOCK_FILE;
use crate::notes::address::check_virtual_path;
use crate::notes::beneath::{BeneathError, DirHandle, Kind};
use crate::notes::normalize_lexical;
use crate::notes::segment::is_git_segment;

#[cfg(test)]
/// Checks the dreamer's `path` (relative to `home`, or absolute) as a
/// write target and returns the file it names under the real home,
/// checking in order:
///
/// 1. the real path of `home` resolves;
/// 2. the target's parent is lexically inside home;
/// 3. the target is a note (markdown, inside one of the five homes, not
///    the audit repository or the dream's bookkeeping);
/// 4. the parent exists (created, one directory at a time, when
///    `create_parent`), reached without following a link;
/// 5. the target itself is not a link;
/// 6. the target is not a file with hard links (`nlink > 1`).
///
/// A path leading outside reads `write jail: <path> is outside notes home
/// <home>`; one crossing a link `write jail: <path> crosses a symbolic
/// link in notes home <home>; the jail never follows links`.
pub(crate) fn jail_write_path(
    home: &Path,
    path: &str,
    create_parent: bool,
) -> Result<PathBuf, DreamError> {
    jail_write(home, path, create_parent).map(|jailed| jailed.path)
}

/// A path that passed the write jail: its directory, open, and its name
/// there.
#[derive(Debug)]
pub(crate) struct Jailed {
    /// The target's directory, opened below the real home.
    pub dir: DirHandle,
    /// The target's name in `dir`.
    pub name: OsString,
    /// The target under the real home, for messages.
    pub path: PathBuf,
}

pub(crate) fn jail_write(
    home: &Path,
    path: &str,
    create_parent: bool,
) -> Result<Jailed, DreamError> {
    let real_home = real_home(home)?;
    let outside = || DreamError::OutsideHome {
        path: path.to_owned(),
        home: home.to_path_buf(),
    };

    let target = lexical_target(home, &real_home, Path::new(path)).ok_or_else(outside)?;
    let (Some(parent), Some(name)) = (target.parent(), target.file_name()) else {
        return Err(outside());
    };
    let Ok(rel_parent) = parent.strip_prefix(&real_home) else {
        return Err(outside());
    };
    // Before any directory is created: nothing is made for a path that is
    // not a note.
    check_note(&real_home, &target, path)?;

    let refused = |error| refusal(home, path, "cannot resolve", error);
    let root = open_home(home, &real_home)?;
    let dir = if create_parent {
        root.create_dirs(rel_parent).map_err(refused)?
    } else {
        root.open_dir(rel_parent)
            .map_err(refused)?
            .ok_or_else(|| DreamError::io("cannot resolve", parent, ErrorKind::NotFound.into()))?
    };
    match dir.stat(name).map_err(refused)? {
        Some(stat) if stat.kind == Kind::Link => {
            return Err(refused(BeneathError::Link {
                path: target.clone(),
            }));
        }
        Some(stat) if stat.kind != Kind::Dir && stat.nlink > 1 => return Err(outside()),
        _ => {}
    }
    Ok(Jailed {
        dir,
        name: name.to_owned(),
        path: target,
    })
}

const GIT_REASON: &str = "the audit repository (.git) is not a note";

/// Refuses a write target (below `real_home`) that is not a markdown note
/// inside one of the five homes: the audit repository (`.git`, any case,
/// anywhere), the dream's own bookkeeping (`dreams/`, the lock and its
/// stamp), anything else at the root, and any file an address could not
/// name (not `.md`, control or bidirectional characters, over-long names).
fn check_note(real_home: &Path, target: &Path, path: &str) -> Result<(), DreamError> {
    let refuse = |reason: String| DreamError::NotANote {
        path: path.to_owned(),
        reason,
    };
    let relative = target
        .strip_prefix(real_home)
        .ok()
        .and_then(Path::to_str)
        .ok_or_else(|| refuse("the path is not UTF-8".to_owned()))?;
    let segments: Vec<&str> = relative.split('/').collect();
    if segments.iter().any(|segment| is_git_segment(segment)) {
        return Err(refuse(GIT_REASON.to_owned()));
    }
    let in_home = match segments.as_slice() {
        ["pi", "session", session, rest @ ..] if !session.is_empty() && !rest.is_empty() => rest,
        ["project" | "agents" | "models", home, rest @ ..]
            if !home.is_empty() && !rest.is_empty() =>
        {
            rest
        }
        ["human", rest @ ..] if !rest.is_empty() => rest,
        [first, ..] if *first == "dreams" || first.starts_with(LOCK_FILE) => {
            return Err(refuse(
                "the dream's own bookkeeping (dreams/, the lock and its stamp) is not a note"
                    .to_owned(),
            ));
        }
        _ => {
            return Err(refuse(
                "only notes inside the five homes (pi/session/<id>/, project/<key>/, human/, agents/<slug>/, models/<slug>/) may be written"
                    .to_owned(),
            ));
        }
    };
    let note = in_home.join("/");
    if !note.ends_with(".md") {
        return Err(refuse(
            "only markdown notes (.md) may be written".to_owned(),
        ));
    }
    check_virtual_path(&note).map_err(|error| {
        let reason = error.message();
        refuse(
            reason
                .strip_prefix("invalid note address: ")
                .unwrap_or(reason)
                .to_owned(),
        )
    })
}

#[cfg(test)]
/// Checks the dreamer's `path` for reading and returns it under the real
/// home: it must lie inside home and be reached without following a link.
/// Reads have no hard-link rule (they change nothing).
pub(crate) fn jail_read_path(home: &Path, path: &str) -> Result<PathBuf, DreamError> {
    let jailed = jail_read(home, path)?;
    let mut names: Vec<&std::ffi::OsStr> = jailed.rel.iter().collect();
    if let Some(name) = names.pop() {
        let refused = |error| refusal(home, path, "cannot resolve", error);
        let parent: PathBuf = names.iter().collect();
        let missing = || {
            DreamError::io(
                "cannot resolve",
                jailed.root.path().join(&jailed.rel),
                ErrorKind::NotFound.into(),
            )
        };
        let dir = jailed
            .root
            .open_dir(&parent)
            .map_err(refused)?
            .ok_or_else(missing)?;
        match dir.stat(name).map_err(refused)? {
            None => return Err(missing()),
            Some(stat) if stat.kind == Kind::Link => {
                return Err(refused(BeneathError::Link {
                    path: dir.path().join(name),
                }));
            }
            Some(_) => {}
        }
    }
    Ok(jailed.root.path().join(&jailed.rel))
}

/// A path that passed the read jail: the real home, open, and the path
/// below it.
#[derive(Debug)]
pub(crate) struct JailedRead {
    /// The real home, opened.
    pub root: DirHandle,
    /// The path below it (empty for the home itself).
    pub rel: PathBuf,
}

/// The lexical checks of [`jail_read_path`]; the tools then open the path
/// from `root`, following no link.
pub(crate) fn jail_read(home: &Path, path: &str) -> Result<JailedRead, DreamError> {
    let real_home = real_home(home)?;
    let outside = || DreamError::OutsideHome {
        path: path.to_owned(),
        home: home.to_path_buf(),
    };
    let target = lexical_target(home, &real_home, Path::new(path)).ok_or_else(outside)?;
    let rel = target
        .strip_prefix(&real_home)
        .map_err(|_| outside())?
        .to_path_buf();
    let root = open_home(home, &real_home)?;
    Ok(JailedRead { root, rel })
}

/// The refusal for a path below the home that `error` stopped: a link, or
/// a failure of `action`.
pub(crate) fn refusal(
    home: &Path,
    path: &str,
    action: &'static str,
    error: BeneathError,
) -> DreamError {
    match error {
        BeneathError::Link { .. } => DreamError::ThroughLink {
            path: path.to_owned(),
            home: home.to_path_buf(),
        },
        BeneathError::NotBelow { .. } => DreamError::OutsideHome {
            path: path.to_owned(),
            home: home.to_path_buf(),
        },
        BeneathError::NotADirectory { path } => {
            DreamError::io(action, path, ErrorKind::NotADirectory.into())
        }
        BeneathError::NotAFile { path } => DreamError::io(
            action,
            path,
            std::io::Error::new(ErrorKind::InvalidInput, "not a regular file"),
        ),
        BeneathError::Io { path, source, .. } => DreamError::io(action, path, source),
    }
}

/// The real path of `home` (resolved once; the home may be a link).
fn real_home(home: &Path) -> Result<PathBuf, DreamError> {
    fs::canonicalize(home).map_err(|source| DreamError::HomeUnresolvable {
        home: home.to_path_buf(),
        source,
    })
}

fn open_home(home: &Path, real_home: &Path) -> Result<DirHandle, DreamError> {
    DirHandle::open_root(real_home).map_err(|source| DreamError::HomeUnresolvable {
        home: home.to_path_buf(),
        source,
    })
}

/// The lexical target under `real_home`. An absolute path may name the home
/// by its given or its real path; `..` is resolved lexically. `None` when
/// an absolute path names neither.
fn lexical_target(home: &Path, real_home: &Path, path: &Path) -> Option<PathBuf> {
    if !path.is_absolute() {
        return Some(normalize_lexical(&real_home.join(path)));
    }
    let path = normalize_lexical(path);
    if path.starts_with(real_home) {
        return Some(path);
    }
    let given_home = normalize_lexical(&std::path::absolute(home).ok()?);
    let rest = path.strip_prefix(&given_home).ok()?;
    Some(real_home.join(rest))
}
