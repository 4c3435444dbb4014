//! The write jail: every path the dreamer writes, edits or deletes must
//! resolve inside the notes home.

use std::fs;
use std::io::ErrorKind;
use std::path::{Component, Path, PathBuf};

use super::DreamError;
use super::lock::LOCK_FILE;
use crate::notes::address::{check_virtual_path, is_git_segment};

/// Resolves the dreamer's `path` (relative to `home`, or absolute) to the
/// real file to write, checking in the spec's order:
///
/// 1. the real path of `home` resolves;
/// 2. the target's parent is lexically inside home;
/// 3. the parent exists (created, one checked directory at a time, when
///    `create_parent`) and its real path is inside home;
/// 4. a symlinked target's real path is inside home (an in-home symlink to
///    an in-home target is allowed, and the real target is returned);
/// 5. the target is not a file with hard links (`nlink > 1`).
///
/// Every refusal reads `write jail: <path> is outside notes home <home>`.
pub fn jail_write_path(
    home: &Path,
    path: &str,
    create_parent: bool,
) -> Result<PathBuf, DreamError> {
    jail_write(home, path, create_parent).map(|jailed| jailed.real)
}

/// A path that passed the write jail.
#[derive(Debug)]
pub(crate) struct Jailed {
    /// The name the dreamer gave, under the real parent (a symlink stays a symlink).
    pub named: PathBuf,
    /// The real file behind it (the symlink's target, or `named` itself).
    pub real: PathBuf,
}

pub(crate) fn jail_write(
    home: &Path,
    path: &str,
    create_parent: bool,
) -> Result<Jailed, DreamError> {
    let real_home = fs::canonicalize(home).map_err(|source| DreamError::HomeUnresolvable {
        home: home.to_path_buf(),
        source,
    })?;
    let outside = || DreamError::OutsideHome {
        path: path.to_owned(),
        home: home.to_path_buf(),
    };

    let target = lexical_target(home, &real_home, Path::new(path)).ok_or_else(outside)?;
    let (Some(parent), Some(name)) = (target.parent(), target.file_name()) else {
        return Err(outside());
    };
    if !parent.starts_with(&real_home) {
        return Err(outside());
    }
    // Before any directory is created: nothing is made for a path that is
    // not a note.
    check_note(&real_home, &target, path)?;

    let real_parent = resolve_parent(&real_home, path, parent, create_parent, &outside)?;
    let named = real_parent.join(name);
    // A symlinked folder on the way may lead elsewhere in the home.
    check_note(&real_home, &named, path)?;
    let real = match fs::symlink_metadata(&named) {
        Ok(meta) if meta.file_type().is_symlink() => {
            // A dangling link cannot be shown to stay inside.
            let real = fs::canonicalize(&named).map_err(|_| outside())?;
            if !real.starts_with(&real_home) {
                return Err(outside());
            }
            check_note(&real_home, &real, path)?;
            real
        }
        Ok(_) => named.clone(),
        Err(err) if err.kind() == ErrorKind::NotFound => {
            return Ok(Jailed {
                real: named.clone(),
                named,
            });
        }
        Err(err) => return Err(DreamError::io("cannot inspect", named, err)),
    };
    let meta = fs::metadata(&real).map_err(|err| DreamError::io("cannot inspect", &real, err))?;
    if !meta.is_dir() && link_count(&meta) > 1 {
        return Err(outside());
    }
    Ok(Jailed { named, real })
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

/// Resolves the dreamer's `path` for reading: its real path must lie inside
/// home. Reads have no hard-link rule (they change nothing).
pub fn jail_read_path(home: &Path, path: &str) -> Result<PathBuf, DreamError> {
    jail_read(home, path).map(|(_, real)| real)
}

/// [`jail_read_path`], also returning the real home.
pub(crate) fn jail_read(home: &Path, path: &str) -> Result<(PathBuf, PathBuf), DreamError> {
    let real_home = fs::canonicalize(home).map_err(|source| DreamError::HomeUnresolvable {
        home: home.to_path_buf(),
        source,
    })?;
    let outside = || DreamError::OutsideHome {
        path: path.to_owned(),
        home: home.to_path_buf(),
    };
    let target = lexical_target(home, &real_home, Path::new(path)).ok_or_else(outside)?;
    if !target.starts_with(&real_home) {
        return Err(outside());
    }
    let real =
        fs::canonicalize(&target).map_err(|err| DreamError::io("cannot resolve", &target, err))?;
    if real.starts_with(&real_home) {
        Ok((real_home, real))
    } else {
        Err(outside())
    }
}

/// The lexical target under `real_home`. An absolute path may name the home
/// by its given or its real path; `..` is resolved lexically. `None` when
/// an absolute path names neither.
fn lexical_target(home: &Path, real_home: &Path, path: &Path) -> Option<PathBuf> {
    if !path.is_absolute() {
        return Some(normalize(&real_home.join(path)));
    }
    let path = normalize(path);
    if path.starts_with(real_home) {
        return Some(path);
    }
    let given_home = normalize(&std::path::absolute(home).ok()?);
    let rest = path.strip_prefix(&given_home).ok()?;
    Some(real_home.join(rest))
}

/// Resolves `.` and `..` without touching the filesystem.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Walks from the real home down to `parent`, checking that every existing
/// directory resolves inside home before creating the next one, so no
/// directory is ever created outside through a symlinked component.
fn resolve_parent(
    real_home: &Path,
    path: &str,
    parent: &Path,
    create_parent: bool,
    outside: &dyn Fn() -> DreamError,
) -> Result<PathBuf, DreamError> {
    let Ok(relative) = parent.strip_prefix(real_home) else {
        return Err(outside());
    };
    let mut current = real_home.to_path_buf();
    for component in relative.components() {
        let next = current.join(component);
        match fs::symlink_metadata(&next) {
            Ok(_) => {}
            Err(err) if err.kind() == ErrorKind::NotFound && create_parent => {
                if let Err(err) = fs::create_dir(&next)
                    && err.kind() != ErrorKind::AlreadyExists
                {
                    return Err(DreamError::io("cannot create directory", next, err));
                }
            }
            Err(err) => return Err(DreamError::io("cannot resolve", next, err)),
        }
        let real =
            fs::canonicalize(&next).map_err(|err| DreamError::io("cannot resolve", &next, err))?;
        if !real.starts_with(real_home) {
            return Err(outside());
        }
        // Nothing is created inside Git's directory, even through a link.
        if real
            .strip_prefix(real_home)
            .is_ok_and(|inside| inside.components().any(|c| is_git_component(c.as_os_str())))
        {
            return Err(DreamError::NotANote {
                path: path.to_owned(),
                reason: GIT_REASON.to_owned(),
            });
        }
        current = real;
    }
    // The spec's step 3 check, on the parent as a whole.
    let real_parent = fs::canonicalize(&current)
        .map_err(|err| DreamError::io("cannot resolve", &current, err))?;
    if !real_parent.starts_with(real_home) {
        return Err(outside());
    }
    if !real_parent.is_dir() {
        let err = std::io::Error::from(ErrorKind::NotADirectory);
        return Err(DreamError::io("cannot write into", real_parent, err));
    }
    Ok(real_parent)
}

fn is_git_component(name: &std::ffi::OsStr) -> bool {
    name.to_str().is_some_and(is_git_segment)
}

#[cfg(unix)]
fn link_count(meta: &fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::nlink(meta)
}

/// Hard links cannot be counted through std off unix; treat every file as
/// singly linked there.
#[cfg(not(unix))]
fn link_count(_meta: &fs::Metadata) -> u64 {
    1
}
