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
use super::OutputLine;
use crate::git_tree::{TreeEntry, tree_entries};
use crate::notes::{SecretKind, find_secret};

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
    /// Files left out because they hold a credential (the credential
    /// guard's scan): their path in the home and what kind. The history
    /// never takes one in (their content is not even written as an object).
    pub withheld: Vec<(String, SecretKind)>,
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
    let mut withheld = Vec::new();
    stage_dir(
        &repo,
        &index,
        &mut excludes,
        home,
        &mut BString::default(),
        &mut Staging {
            staged: &mut staged,
            withheld: &mut withheld,
        },
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
        withheld,
    })
}

/// What a walk of the home stages, and what it leaves out.
struct Staging<'a> {
    staged: &'a mut Vec<Staged>,
    withheld: &'a mut Vec<(String, SecretKind)>,
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
    staging: &mut Staging<'_>,
) -> Result<(), AuditStep> {
    let read_error = |path: &Path, source| AuditStep::Read {
        path: path.display().to_string(),
        source,
    };
    let entries = fs::read_dir(dir).map_err(|err| read_error(dir, err))?;
    for entry in entries {
        let entry = entry.map_err(|err| read_error(dir, err))?;
        let name = entry.file_name();
        // Sync's own repository and lock are never audited.
        if name == ".git" || (prefix.is_empty() && name == crate::sync::SYNC_DIR) {
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
                stage_dir(repo, index, excludes, &path, prefix, staging)?;
            } else if kind.is_file() || kind.is_symlink() {
                match stage_file(repo, &path, prefix.clone(), kind.is_symlink())? {
                    Ok(staged) => staging.staged.push(staged),
                    Err(kind) => staging.withheld.push((prefix.to_string(), kind)),
                }
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

/// Stages one file, or says what credential keeps it out.
fn stage_file(
    repo: &Repository,
    path: &Path,
    rela_path: BString,
    symlink: bool,
) -> Result<Result<Staged, SecretKind>, AuditStep> {
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
    if let Some(found) = find_secret(&String::from_utf8_lossy(&content)) {
        return Ok(Err(found.kind));
    }
    let id = repo
        .write_blob(&content)
        .map_err(|source| AuditStep::Stage {
            path: rela_path.to_string(),
            source,
        })?
        .detach();
    // A stat that cannot be taken only costs Git a re-hash on `git status`.
    let stat = Stat::from_fs(&meta).unwrap_or_default();
    Ok(Ok(Staged {
        path: rela_path,
        kind,
        id,
        stat,
    }))
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
    let signature = audit_signature();
    let mut time = gix::date::parse::TimeBuf::default();
    let signature = signature.to_ref(&mut time);
    repo.commit_as(signature, signature, "HEAD", message, tree, parent)
        .map(gix::Id::detach)
        .map_err(AuditStep::Commit)
}

/// `notesoup <notesoup@localhost>`, now.
fn audit_signature() -> gix::actor::Signature {
    gix::actor::Signature {
        name: AUDIT_NAME.into(),
        email: AUDIT_EMAIL.into(),
        time: gix::date::Time::now_local_or_utc(),
    }
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

/// A credential a commit of the audit history holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistorySecret {
    /// The commit (hex).
    pub commit: String,
    /// Its message's first line.
    pub subject: String,
    /// The file holding it, as the commit's tree names it.
    pub path: String,
    /// What kind of credential.
    pub kind: SecretKind,
}

/// Every (commit, file) of the home's audit history, from `HEAD` back, whose
/// content holds a credential (the credential guard's scan, each blob read
/// once). Empty when the home has no repository or no commit.
pub(crate) fn secrets_in_history(home: &Path) -> Result<Vec<HistorySecret>, DreamError> {
    let Some(repo) = open_existing(home)? else {
        return Ok(Vec::new());
    };
    let mut scan = HistoryScan::new(&repo);
    let mut found = Vec::new();
    for id in history(&repo)? {
        let commit = repo.find_commit(id).map_err(audit_error)?;
        let subject = commit
            .message_raw_sloppy()
            .lines()
            .next()
            .map(|line| line.to_str_lossy().into_owned())
            .unwrap_or_default();
        let tree = commit.tree_id().map_err(audit_error)?.detach();
        for (path, kind) in scan.secrets(tree, "")? {
            found.push(HistorySecret {
                commit: id.to_string(),
                subject: subject.clone(),
                path,
                kind,
            });
        }
    }
    Ok(found)
}

/// What `purge_secrets` did, or would do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PurgeReport {
    /// What the history held.
    pub found: Vec<HistorySecret>,
    /// Whether the history was rewritten (`false`: a dry run).
    pub applied: bool,
    /// Commits rewritten.
    pub rewritten: usize,
    /// Objects holding a credential that are still in a pack (Git's own
    /// `gc --prune=now` removes them); their ids.
    pub still_packed: Vec<String>,
}

/// Removes every file holding a credential from the home's audit history:
/// each commit from the first is written again without them (same
/// messages, authors and times), the branch `HEAD` names is moved to the
/// new tip, their loose objects are deleted, the index drops them, and the
/// reference logs (which name the old commits) are removed. The notes
/// themselves are not touched. With `apply` false, only says what it would
/// do. Refused while a dream holds the lock.
pub fn purge_secrets(home: &Path, apply: bool) -> Result<PurgeReport, DreamError> {
    let found = secrets_in_history(home)?;
    let mut report = PurgeReport {
        found,
        applied: false,
        rewritten: 0,
        still_packed: Vec::new(),
    };
    if !apply || report.found.is_empty() {
        return Ok(report);
    }
    if matches!(
        super::lock::lock_state(home),
        super::lock::LockState::Held(_)
    ) {
        return Err(DreamError::LockHeld);
    }
    let Some(repo) = open_existing(home)? else {
        return Ok(report);
    };
    // The old commits are deleted below: nothing else may reach them.
    let branch = repo
        .head_name()
        .map_err(audit_error)?
        .ok_or_else(|| DreamError::Audit("HEAD names no branch".to_owned()))?;
    let others: Vec<String> = repo
        .references()
        .and_then(|refs| {
            Ok(refs
                .all()?
                .filter_map(Result::ok)
                .map(|reference| reference.name().as_bstr().to_string())
                .collect::<Vec<_>>())
        })
        .map_err(audit_error)?
        .into_iter()
        .filter(|name| name.as_str() != branch.as_bstr())
        .collect();
    if !others.is_empty() {
        return Err(DreamError::Audit(format!(
            "the history has other references ({}); remove them first, the audit keeps one branch",
            others.join(", ")
        )));
    }
    let mut scan = HistoryScan::new(&repo);
    let mut chain = history(&repo)?;
    chain.reverse();
    let mut renamed: std::collections::HashMap<ObjectId, ObjectId> = Default::default();
    let mut tip = None;
    for id in chain {
        let commit = repo.find_commit(id).map_err(audit_error)?;
        let mut owned = commit
            .decode()
            .and_then(|decoded| decoded.to_owned())
            .map_err(audit_error)?;
        let secrets = scan.secrets(owned.tree, "")?;
        if !secrets.is_empty() {
            let mut editor = repo.edit_tree(owned.tree).map_err(audit_error)?;
            for (path, _) in &secrets {
                editor.remove(path.as_str()).map_err(audit_error)?;
            }
            owned.tree = editor.write().map_err(audit_error)?.detach();
        }
        let parents: Vec<ObjectId> = owned
            .parents
            .iter()
            .map(|parent| renamed.get(parent).copied().unwrap_or(*parent))
            .collect();
        let changed = !secrets.is_empty() || parents.iter().ne(owned.parents.iter());
        let new_id = if changed {
            owned.parents = parents.into_iter().collect();
            report.rewritten += 1;
            repo.write_object(&owned).map_err(audit_error)?.detach()
        } else {
            id
        };
        renamed.insert(id, new_id);
        tip = Some((id, new_id));
    }
    if let Some((old, new)) = tip
        && old != new
    {
        let edit = gix::refs::transaction::RefEdit::update(
            branch,
            new,
            gix::refs::transaction::PreviousValue::MustExistAndMatch(old.into()),
            "notesoup: remove credentials from the history",
        );
        // The audit's own identity: the repository is opened isolated, with
        // no user's to write in the reference log.
        let mut time = gix::date::parse::TimeBuf::default();
        let signature = audit_signature();
        repo.edit_references_as([edit], Some(signature.to_ref(&mut time)))
            .map_err(audit_error)?;
    }
    let secret_blobs = scan.secret_blobs();
    drop_from_index(&repo, &secret_blobs)?;
    // The reference logs name the old commits; without them nothing
    // reaches the objects removed below.
    match fs::remove_dir_all(repo.common_dir().join("logs")) {
        Err(err) if err.kind() != ErrorKind::NotFound => {
            return Err(DreamError::Audit(format!(
                "cannot remove the reference logs: {err}"
            )));
        }
        _ => {}
    }
    let objects = repo.common_dir().join("objects");
    // The blobs, and what reached them: the old commits and the trees that
    // held them, so the repository stays whole (`git fsck` finds no broken
    // link).
    let old_commits = renamed
        .iter()
        .filter(|(old, new)| old != new)
        .map(|(old, _)| *old);
    let gone: Vec<ObjectId> = secret_blobs
        .iter()
        .copied()
        .chain(scan.tainted.iter().copied())
        .chain(old_commits)
        .collect();
    for blob in &gone {
        let hex = blob.to_string();
        let loose = objects.join(&hex[..2]).join(&hex[2..]);
        match fs::remove_file(&loose) {
            Err(err) if err.kind() != ErrorKind::NotFound => {
                return Err(DreamError::Audit(format!(
                    "cannot remove {}: {err}",
                    loose.display()
                )));
            }
            _ => {}
        }
    }
    let reopened = open_existing(home)?;
    report.still_packed = secret_blobs
        .iter()
        .filter(|blob| reopened.as_ref().is_some_and(|repo| repo.has_object(blob)))
        .map(ToString::to_string)
        .collect();
    report.applied = true;
    Ok(report)
}

fn audit_error(err: impl std::fmt::Display) -> DreamError {
    DreamError::Audit(err.to_string())
}

/// The home's repository, when it has one.
fn open_existing(home: &Path) -> Result<Option<Repository>, DreamError> {
    if fs::symlink_metadata(home.join(".git")).is_err() {
        return Ok(None);
    }
    gix::open_opts(home, gix::open::Options::isolated())
        .map(Some)
        .map_err(audit_error)
}

/// Every commit reachable from `HEAD`, newest first (each once).
fn history(repo: &Repository) -> Result<Vec<ObjectId>, DreamError> {
    let Some(head) = repo.head().map_err(audit_error)?.id().map(gix::Id::detach) else {
        return Ok(Vec::new());
    };
    let mut seen = std::collections::HashSet::new();
    let mut order = Vec::new();
    let mut stack = vec![head];
    while let Some(id) = stack.pop() {
        if !seen.insert(id) {
            continue;
        }
        order.push(id);
        let commit = repo.find_commit(id).map_err(audit_error)?;
        stack.extend(commit.parent_ids().map(gix::Id::detach));
    }
    // Each commit before its parents (a linear audit history already is).
    topological(repo, order)
}

/// `commits` ordered so each comes before its parents.
fn topological(repo: &Repository, commits: Vec<ObjectId>) -> Result<Vec<ObjectId>, DreamError> {
    let set: std::collections::HashSet<ObjectId> = commits.iter().copied().collect();
    let mut children: std::collections::HashMap<ObjectId, usize> = Default::default();
    let mut parents_of: std::collections::HashMap<ObjectId, Vec<ObjectId>> = Default::default();
    for id in &commits {
        let parents: Vec<ObjectId> = repo
            .find_commit(*id)
            .map_err(audit_error)?
            .parent_ids()
            .map(gix::Id::detach)
            .filter(|parent| set.contains(parent))
            .collect();
        for parent in &parents {
            *children.entry(*parent).or_default() += 1;
        }
        parents_of.insert(*id, parents);
    }
    let mut ready: Vec<ObjectId> = commits
        .iter()
        .copied()
        .filter(|id| !children.contains_key(id))
        .collect();
    let mut order = Vec::with_capacity(commits.len());
    while let Some(id) = ready.pop() {
        order.push(id);
        for parent in parents_of.remove(&id).unwrap_or_default() {
            if let Some(count) = children.get_mut(&parent) {
                *count -= 1;
                if *count == 0 {
                    ready.push(parent);
                }
            }
        }
    }
    Ok(order)
}

/// Trees read for credentials, each blob judged once.
struct HistoryScan<'r> {
    repo: &'r Repository,
    judged: std::collections::HashMap<ObjectId, Option<SecretKind>>,
    /// The trees found holding such a blob, at any depth.
    tainted: std::collections::HashSet<ObjectId>,
}

impl<'r> HistoryScan<'r> {
    fn new(repo: &'r Repository) -> Self {
        Self {
            repo,
            judged: Default::default(),
            tainted: Default::default(),
        }
    }

    /// The files under `tree` (named below `prefix`) holding a credential.
    fn secrets(
        &mut self,
        tree: ObjectId,
        prefix: &str,
    ) -> Result<Vec<(String, SecretKind)>, DreamError> {
        let mut found = Vec::new();
        for TreeEntry {
            path,
            id,
            is_tree,
            is_blob,
        } in tree_entries(self.repo, tree, prefix).map_err(DreamError::Audit)?
        {
            if is_tree {
                found.extend(self.secrets(id, &path)?);
            } else if is_blob {
                let kind = match self.judged.get(&id) {
                    Some(kind) => *kind,
                    None => {
                        let blob = self.repo.find_blob(id).map_err(audit_error)?;
                        let kind = find_secret(&String::from_utf8_lossy(&blob.data))
                            .map(|found| found.kind);
                        self.judged.insert(id, kind);
                        kind
                    }
                };
                if let Some(kind) = kind {
                    found.push((path, kind));
                }
            }
        }
        if !found.is_empty() {
            self.tainted.insert(tree);
        }
        Ok(found)
    }

    /// The blobs found holding a credential.
    fn secret_blobs(&self) -> Vec<ObjectId> {
        let mut blobs: Vec<ObjectId> = self
            .judged
            .iter()
            .filter(|(_, kind)| kind.is_some())
            .map(|(id, _)| *id)
            .collect();
        blobs.sort();
        blobs
    }
}

/// Rewrites the index without the entries of `blobs` and without its
/// cached trees.
fn drop_from_index(repo: &Repository, blobs: &[ObjectId]) -> Result<(), DreamError> {
    let path = repo.index_path();
    if fs::symlink_metadata(&path).is_err() {
        return Ok(());
    }
    let mut file = gix::index::File::at(
        &path,
        repo.object_hash(),
        false,
        gix::index::decode::Options::default(),
    )
    .map_err(audit_error)?;
    file.remove_entries(|_, _, entry| blobs.contains(&entry.id));
    // Its cached trees may name the trees removed with them.
    file.remove_tree();
    file.remove_resolve_undo();
    file.write(Default::default()).map_err(audit_error)
}

/// What an audit left out of its commit, one stderr line per file.
pub(crate) fn withheld_lines(
    audit: &str,
    withheld: &[(String, crate::notes::SecretKind)],
) -> Vec<OutputLine> {
    withheld
        .iter()
        .map(|(path, kind)| {
            OutputLine::stderr(format!(
                "dream: the {audit} audit left {path} out of the Git history: it holds a credential ({kind})"
            ))
        })
        .collect()
}

/// A file's text as one audit commit of a home holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditedText {
    /// The commit (hex).
    pub commit: String,
    /// Its commit time, Unix seconds.
    pub committed_at: i64,
    /// The file's bytes, read as UTF-8 (a bad byte replaced).
    pub text: String,
}

/// For each `(path, at)`: the file at `path` (`/`-separated, relative to
/// `home`) in the newest audit commit made at or before `at` (Unix
/// seconds), `None` where that commit lacks it or no commit is that old.
/// A path that commit lacks is followed back through a rename: the audit
/// records a rename as a deletion and an addition in one commit, so the
/// first later commit that adds `path` names the file it was before (the
/// deleted file with the same blob, else with the same body, else the only
/// file that commit deleted), and that file's text is the one given. At
/// most eight renames are followed.
/// `Ok(None)` when the home has no repository. Read only: nothing is
/// written, the index included.
pub fn audited_texts(
    home: &Path,
    wanted: &[(String, i64)],
) -> Result<Option<Vec<Option<AuditedText>>>, DreamError> {
    let Some(repo) = open_existing(home)? else {
        return Ok(None);
    };
    let mut commits = Vec::new();
    for id in history(&repo)? {
        let commit = repo.find_commit(id).map_err(audit_error)?;
        let seconds = commit.time().map_err(audit_error)?.seconds;
        let tree = commit.tree_id().map_err(audit_error)?.detach();
        let parent = match commit.parent_ids().next() {
            Some(parent) => Some(
                repo.find_commit(parent.detach())
                    .map_err(audit_error)?
                    .tree_id()
                    .map_err(audit_error)?
                    .detach(),
            ),
            None => None,
        };
        commits.push(AuditedCommit {
            id,
            seconds,
            tree,
            parent,
        });
    }
    let mut found = Vec::with_capacity(wanted.len());
    for (path, at) in wanted {
        // Newest first: the first commit not after `at`.
        let Some(base) = commits.iter().position(|commit| commit.seconds <= *at) else {
            found.push(None);
            continue;
        };
        let commit = &commits[base];
        let mut looked = path.clone();
        let mut text = blob_at(&repo, commit.tree, &looked)?;
        // The commits after `base` still to search for the rename, newest
        // first.
        let mut later = &commits[..base];
        for _ in 0..MAX_RENAME_HOPS {
            if text.is_some() {
                break;
            }
            let Some((index, before)) = renamed_from(&repo, later, &looked)? else {
                break;
            };
            later = &later[index + 1..];
            text = blob_at(&repo, commit.tree, &before)?;
            looked = before;
        }
        found.push(text.map(|text| AuditedText {
            commit: commit.id.to_string(),
            committed_at: commit.seconds,
            text,
        }));
    }
    Ok(Some(found))
}

/// How many renames [`audited_texts`] follows back for one file.
const MAX_RENAME_HOPS: usize = 8;

/// One commit of the audit history, as [`audited_texts`] reads it.
struct AuditedCommit {
    id: ObjectId,
    seconds: i64,
    tree: ObjectId,
    /// The first parent's tree.
    parent: Option<ObjectId>,
}

/// The text of the blob at `path` in `tree`, `None` when there is none.
fn blob_at(repo: &Repository, tree: ObjectId, path: &str) -> Result<Option<String>, DreamError> {
    match blob_id(repo, tree, path)? {
        Some(id) => {
            let blob = repo.find_blob(id).map_err(audit_error)?;
            Ok(Some(String::from_utf8_lossy(&blob.data).into_owned()))
        }
        None => Ok(None),
    }
}

/// The blob at `path` in `tree`.
fn blob_id(repo: &Repository, tree: ObjectId, path: &str) -> Result<Option<ObjectId>, DreamError> {
    let tree = repo.find_tree(tree).map_err(audit_error)?;
    let entry = tree.lookup_entry_by_path(path).map_err(audit_error)?;
    Ok(entry
        .filter(|entry| entry.mode().is_blob())
        .map(|entry| entry.object_id()))
}

/// Where `path` was before the first of `later` (newest first) that adds
/// it, with that commit's index in `later`: the file the same commit
/// deleted with the same blob, else with the same body, else the only one
/// it deleted. `None` when no commit adds it or none of these holds.
fn renamed_from(
    repo: &Repository,
    later: &[AuditedCommit],
    path: &str,
) -> Result<Option<(usize, String)>, DreamError> {
    for (index, commit) in later.iter().enumerate().rev() {
        let Some(added) = blob_id(repo, commit.tree, path)? else {
            continue;
        };
        let Some(parent) = commit.parent else {
            return Ok(None);
        };
        if blob_id(repo, parent, path)?.is_some() {
            return Ok(None);
        }
        let mut deleted = Vec::new();
        deleted_blobs(repo, parent, Some(commit.tree), "", &mut deleted)?;
        if let Some((before, _)) = deleted.iter().find(|(_, id)| *id == added) {
            return Ok(Some((index, before.clone())));
        }
        let body = |id: ObjectId| -> Result<String, DreamError> {
            let blob = repo.find_blob(id).map_err(audit_error)?;
            let text = String::from_utf8_lossy(&blob.data);
            Ok(crate::notes::strip_frontmatter(&text).to_owned())
        };
        let added_body = body(added)?;
        for (before, id) in &deleted {
            if body(*id)? == added_body {
                return Ok(Some((index, before.clone())));
            }
        }
        return Ok(match deleted.as_slice() {
            [(before, _)] => Some((index, before.clone())),
            _ => None,
        });
    }
    Ok(None)
}

/// The blobs under `prefix` that `parent` holds and `tree` does not (at
/// that path), with their ids; a subtree both hold unchanged is skipped.
fn deleted_blobs(
    repo: &Repository,
    parent: ObjectId,
    tree: Option<ObjectId>,
    prefix: &str,
    out: &mut Vec<(String, ObjectId)>,
) -> Result<(), DreamError> {
    if tree == Some(parent) {
        return Ok(());
    }
    let now: std::collections::HashMap<String, TreeEntry> = match tree {
        Some(tree) => tree_entries(repo, tree, prefix)
            .map_err(audit_error)?
            .into_iter()
            .map(|entry| (entry.path.clone(), entry))
            .collect(),
        None => std::collections::HashMap::new(),
    };
    for entry in tree_entries(repo, parent, prefix).map_err(audit_error)? {
        let kept = now.get(&entry.path);
        if entry.is_tree {
            let kept_tree = kept.filter(|other| other.is_tree).map(|other| other.id);
            deleted_blobs(repo, entry.id, kept_tree, &entry.path, out)?;
        } else if entry.is_blob && !kept.is_some_and(|other| other.is_blob) {
            out.push((entry.path, entry.id));
        }
    }
    Ok(())
}
