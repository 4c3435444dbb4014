//! The Git audit: the notes home is its own repository, and every dream is
//! framed by a `baseline <stamp>` and a `dream <stamp>[ (failed)]` commit.
//! Written with gix only; no `git` binary is needed at run time.

use std::fs;
use std::io::{ErrorKind, Write};
use std::path::Path;

use gix::bstr::{BString, ByteSlice, ByteVec};
use gix::index::entry::{Flags, Mode, Stat};
use gix::objs::tree::EntryKind;
use gix::{ObjectId, Repository};

use super::DreamError;

/// Author and committer name of audit commits.
pub(crate) const AUDIT_NAME: &str = "notesoup";
/// Author and committer email of audit commits.
pub(crate) const AUDIT_EMAIL: &str = "notesoup@localhost";
/// The pattern added to `.git/info/exclude` so the lock and stamp are never
/// committed.
pub(crate) const LOCK_EXCLUDE: &str = ".dream.lock*";

/// A successful audit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditCommit {
    /// The HEAD commit id after the audit (hex).
    pub commit: String,
    /// Whether the tree was clean (nothing new to record).
    pub empty: bool,
}

/// Records the notes home as it is now, like `git add -A` and `git commit`:
/// initialises the repository when `home/.git` is missing, excludes
/// `.dream.lock*`, stages everything including deletions, and commits with
/// `message` as `notesoup <notesoup@localhost>`. A clean tree is committed
/// (empty) only when there is no HEAD yet; a clean tree with a HEAD makes no
/// commit. The index is rewritten so `git status` stays clean.
pub fn audit_commit(home: &Path, message: &str) -> Result<AuditCommit, DreamError> {
    audit(home, message).map_err(|err| DreamError::Audit(err.to_string()))
}

/// The stages of the audit, each naming what failed.
#[derive(Debug, thiserror::Error)]
enum AuditStep {
    #[error("cannot open repository: {0}")]
    Open(gix::Error),
    #[error("cannot write {path}: {source}")]
    Exclude {
        path: String,
        source: std::io::Error,
    },
    #[error("cannot read index: {0}")]
    Index(gix::Error),
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("cannot stage {path}: {source}")]
    Stage { path: String, source: gix::Error },
    #[error("cannot write tree: {0}")]
    Tree(gix::Error),
    #[error("cannot read HEAD: {0}")]
    Head(gix::Error),
    #[error("cannot commit: {0}")]
    Commit(gix::Error),
    #[error("cannot write index: {0}")]
    WriteIndex(gix::Error),
}

/// One staged path.
struct Staged {
    path: BString,
    kind: EntryKind,
    id: ObjectId,
    stat: Stat,
}

fn audit(home: &Path, message: &str) -> Result<AuditCommit, AuditStep> {
    let repo = open_or_init(home)?;
    ensure_excluded(&repo)?;
    let index = repo.index_or_empty().map_err(AuditStep::Index)?;
    let mut excludes = repo
        .excludes(&index, None, Default::default())
        .map_err(AuditStep::Index)?;
    let mut staged = Vec::new();
    stage_dir(
        &repo,
        &index,
        &mut excludes,
        home,
        &mut BString::default(),
        &mut staged,
    )?;

    let tree = write_tree(&repo, &staged)?;
    let head = repo
        .head()
        .map_err(AuditStep::Head)?
        .id()
        .map(gix::Id::detach);
    let head_tree = match head {
        Some(head) => Some(
            repo.find_commit(head)
                .and_then(|commit| commit.tree_id())
                .map_err(AuditStep::Head)?
                .detach(),
        ),
        None => None,
    };
    let clean = head_tree.unwrap_or_else(|| ObjectId::empty_tree(repo.object_hash())) == tree;
    let commit = match head {
        Some(head) if clean => head,
        _ => commit(&repo, message, tree, head)?,
    };
    write_index(&repo, staged)?;
    Ok(AuditCommit {
        commit: commit.to_string(),
        empty: clean,
    })
}

fn open_or_init(home: &Path) -> Result<Repository, AuditStep> {
    // Isolated: the audit must not depend on the user's global Git
    // configuration (identity, hooks, excludes, init templates).
    if fs::symlink_metadata(home.join(".git")).is_err() {
        gix::ThreadSafeRepository::init_opts(
            home,
            gix::create::Kind::WithWorktree,
            gix::create::Options::default(),
            gix::open::Options::isolated(),
        )
        .map_err(AuditStep::Open)?;
    }
    gix::open_opts(home, gix::open::Options::isolated()).map_err(AuditStep::Open)
}

fn ensure_excluded(repo: &Repository) -> Result<(), AuditStep> {
    let info = repo.common_dir().join("info");
    let path = info.join("exclude");
    let fail = |source| AuditStep::Exclude {
        path: path.display().to_string(),
        source,
    };
    let existing = match fs::read(&path) {
        Ok(bytes) => bytes,
        Err(err) if err.kind() == ErrorKind::NotFound => Vec::new(),
        Err(err) => return Err(fail(err)),
    };
    if existing
        .lines()
        .any(|line| line.trim() == LOCK_EXCLUDE.as_bytes())
    {
        return Ok(());
    }
    let append = || -> std::io::Result<()> {
        fs::create_dir_all(&info)?;
        let mut file = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)?;
        if !existing.is_empty() && !existing.ends_with(b"\n") {
            file.write_all(b"\n")?;
        }
        writeln!(file, "{LOCK_EXCLUDE}")
    };
    append().map_err(fail)
}

/// Stages every entry under `dir` (whose repository path is `prefix`) like
/// `git add -A`: ignored paths are skipped unless already tracked, `.git`
/// is never staged, symlinks are staged as links.
fn stage_dir(
    repo: &Repository,
    index: &gix::index::State,
    excludes: &mut gix::AttributeStack<'_>,
    dir: &Path,
    prefix: &mut BString,
    staged: &mut Vec<Staged>,
) -> Result<(), AuditStep> {
    let read_error = |path: &Path, source| AuditStep::Read {
        path: path.display().to_string(),
        source,
    };
    let entries = fs::read_dir(dir).map_err(|err| read_error(dir, err))?;
    for entry in entries {
        let entry = entry.map_err(|err| read_error(dir, err))?;
        let name = entry.file_name();
        if name == ".git" {
            continue;
        }
        let path = entry.path();
        let kind = entry.file_type().map_err(|err| read_error(&path, err))?;
        let prefix_len = prefix.len();
        if !prefix.is_empty() {
            prefix.push(b'/');
        }
        let name_bytes = gix::path::os_str_into_bstr(&name)
            .map_err(|err| read_error(&path, std::io::Error::other(err)))?;
        prefix.push_str(name_bytes);
        let is_dir = kind.is_dir();
        let excluded =
            is_excluded(excludes, prefix.as_ref(), is_dir).map_err(|source| AuditStep::Stage {
                path: prefix.to_string(),
                source,
            })?;
        let tracked = if is_dir {
            index
                .prefixed_entries(format!("{prefix}/").as_str().into())
                .is_some_and(|entries| !entries.is_empty())
        } else {
            index.entry_by_path(prefix.as_ref()).is_some()
        };
        if !excluded || tracked {
            if is_dir {
                stage_dir(repo, index, excludes, &path, prefix, staged)?;
            } else if kind.is_file() || kind.is_symlink() {
                staged.push(stage_file(repo, &path, prefix.clone(), kind.is_symlink())?);
            }
        }
        prefix.truncate(prefix_len);
    }
    Ok(())
}

fn is_excluded(
    excludes: &mut gix::AttributeStack<'_>,
    path: &gix::bstr::BStr,
    is_dir: bool,
) -> Result<bool, gix::Error> {
    let mode = if is_dir { Mode::DIR } else { Mode::FILE };
    let platform = excludes.at_entry(path, Some(mode))?;
    Ok(platform.is_excluded())
}

fn stage_file(
    repo: &Repository,
    path: &Path,
    rela_path: BString,
    symlink: bool,
) -> Result<Staged, AuditStep> {
    let read_error = |source| AuditStep::Read {
        path: path.display().to_string(),
        source,
    };
    let meta = gix::index::fs::Metadata::from_path_no_follow(path).map_err(read_error)?;
    let (kind, content) = if symlink {
        let target = fs::read_link(path).map_err(read_error)?;
        let target =
            gix::path::into_bstr(target).map_err(|err| read_error(std::io::Error::other(err)))?;
        (EntryKind::Link, Vec::from(target.into_owned()))
    } else {
        let kind = if meta.is_executable() {
            EntryKind::BlobExecutable
        } else {
            EntryKind::Blob
        };
        (kind, fs::read(path).map_err(read_error)?)
    };
    let id = repo
        .write_blob(&content)
        .map_err(|source| AuditStep::Stage {
            path: rela_path.to_string(),
            source,
        })?
        .detach();
    // A stat that cannot be taken only costs Git a re-hash on `git status`.
    let stat = Stat::from_fs(&meta).unwrap_or_default();
    Ok(Staged {
        path: rela_path,
        kind,
        id,
        stat,
    })
}

fn write_tree(repo: &Repository, staged: &[Staged]) -> Result<ObjectId, AuditStep> {
    let mut editor = repo
        .edit_tree(ObjectId::empty_tree(repo.object_hash()))
        .map_err(AuditStep::Tree)?;
    for entry in staged {
        editor
            .upsert(entry.path.clone(), entry.kind, entry.id)
            .map_err(|source| AuditStep::Stage {
                path: entry.path.to_string(),
                source,
            })?;
    }
    editor.write().map(gix::Id::detach).map_err(AuditStep::Tree)
}

fn commit(
    repo: &Repository,
    message: &str,
    tree: ObjectId,
    parent: Option<ObjectId>,
) -> Result<ObjectId, AuditStep> {
    let signature = gix::actor::Signature {
        name: AUDIT_NAME.into(),
        email: AUDIT_EMAIL.into(),
        time: gix::date::Time::now_local_or_utc(),
    };
    let mut time = gix::date::parse::TimeBuf::default();
    let signature = signature.to_ref(&mut time);
    repo.commit_as(signature, signature, "HEAD", message, tree, parent)
        .map(gix::Id::detach)
        .map_err(AuditStep::Commit)
}

fn write_index(repo: &Repository, staged: Vec<Staged>) -> Result<(), AuditStep> {
    let mut state = gix::index::State::new(repo.object_hash());
    for entry in staged {
        let mode = match entry.kind {
            EntryKind::BlobExecutable => Mode::FILE_EXECUTABLE,
            EntryKind::Link => Mode::SYMLINK,
            _ => Mode::FILE,
        };
        state.dangerously_push_entry(
            entry.stat,
            entry.id,
            Flags::empty(),
            mode,
            entry.path.as_ref(),
        );
    }
    state.sort_entries();
    let mut file = gix::index::File::from_state(state, repo.index_path());
    file.write(Default::default())
        .map_err(AuditStep::WriteIndex)
}
