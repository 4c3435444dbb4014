//! The sync repository, `<root>/.sync/repo.git`: a bare repository of its
//! own, so the dream's audit repository (the root's `.git`) is never
//! touched. Objects and references are written in process with gix; only
//! transport goes through the `git` binary.

use std::path::{Path, PathBuf};

use gix::bstr::ByteSlice;
use gix::objs::tree::EntryKind;
use gix::refs::transaction::PreviousValue;
use gix::{ObjectId, Repository};

use super::SyncError;
use super::merge::NoteTree;
use crate::git_tree::{TreeEntry, tree_entries};

/// Who a sync commit names.
#[derive(Debug, Clone)]
pub(crate) struct Signature {
    pub(crate) name: String,
    pub(crate) email: String,
}

/// The sync repository.
#[derive(Debug)]
pub(crate) struct SyncRepo {
    repo: Repository,
    path: PathBuf,
}

fn repo_error(err: impl std::fmt::Display) -> SyncError {
    SyncError::Repo(err.to_string())
}

impl SyncRepo {
    /// Opens the repository at `path`, creating it (bare) when missing.
    pub(crate) fn open_or_init(path: &Path) -> Result<SyncRepo, SyncError> {
        if std::fs::symlink_metadata(path).is_err() {
            gix::ThreadSafeRepository::init_opts(
                path,
                gix::create::Kind::Bare,
                gix::create::Options::default(),
                gix::open::Options::isolated(),
            )
            .map_err(repo_error)?;
        }
        Self::open(path)
    }

    /// Opens it again (after `git` wrote objects to it).
    pub(crate) fn open(path: &Path) -> Result<SyncRepo, SyncError> {
        let repo = gix::open_opts(path, gix::open::Options::isolated()).map_err(repo_error)?;
        Ok(SyncRepo {
            repo,
            path: path.to_path_buf(),
        })
    }

    /// Where it is (for `git --git-dir`).
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The commit `name` points at.
    pub(crate) fn read_ref(&self, name: &str) -> Result<Option<ObjectId>, SyncError> {
        let reference = self.repo.try_find_reference(name).map_err(repo_error)?;
        match reference {
            Some(mut reference) => Ok(Some(reference.peel_to_id().map_err(repo_error)?.detach())),
            None => Ok(None),
        }
    }

    /// Points `name` at `id`.
    pub(crate) fn set_ref(&self, name: &str, id: ObjectId) -> Result<(), SyncError> {
        self.repo
            .reference(name, id, PreviousValue::Any, "notesoup sync")
            .map_err(repo_error)?;
        Ok(())
    }

    /// Points `name` at `id`, the reference flushed to disk (gix writes it
    /// without an fsync): a move a merge record is dropped after must
    /// outlast a power cut.
    pub(crate) fn set_ref_durably(&self, name: &str, id: ObjectId) -> Result<(), SyncError> {
        self.set_ref(name, id)?;
        let file = self.path.join(name);
        let flush = || -> std::io::Result<()> {
            std::fs::File::open(&file)?.sync_all()?;
            match file.parent() {
                Some(dir) => crate::durable::sync_dir(dir),
                None => Ok(()),
            }
        };
        flush().map_err(|err| SyncError::io("flush the branch to disk", err))
    }

    /// Flushes to disk every loose object of `commit` (the commit, its
    /// trees and blobs) and the folders holding them: gix writes objects
    /// without an fsync, and a merge record that names a commit must not
    /// outlast the commit through a power cut. Objects in packs came from
    /// `git fetch`, which flushes its own.
    pub(crate) fn flush_commit(&self, commit: ObjectId) -> Result<(), SyncError> {
        let tree = self.tree_of(commit)?;
        let mut ids = vec![commit, tree];
        self.object_ids(tree, &mut ids)?;
        let objects = self.path.join("objects");
        let flush = |ids: &[ObjectId]| -> std::io::Result<()> {
            let mut folders = std::collections::BTreeSet::new();
            for id in ids {
                let hex = id.to_hex().to_string();
                let folder = objects.join(&hex[..2]);
                match std::fs::File::open(folder.join(&hex[2..])) {
                    Ok(file) => file.sync_all()?,
                    Err(err) if err.kind() == std::io::ErrorKind::NotFound => continue,
                    Err(err) => return Err(err),
                }
                folders.insert(folder);
            }
            for folder in &folders {
                crate::durable::sync_dir(folder)?;
            }
            crate::durable::sync_dir(&objects)
        };
        flush(&ids).map_err(|err| SyncError::io("flush the merge commit to disk", err))
    }

    /// The root tree of `commit`.
    fn tree_of(&self, commit: ObjectId) -> Result<ObjectId, SyncError> {
        Ok(self
            .repo
            .find_commit(commit)
            .and_then(|commit| commit.tree_id())
            .map_err(repo_error)?
            .detach())
    }

    /// The ids of every tree and blob under `tree`, appended to `ids`.
    fn object_ids(&self, tree: ObjectId, ids: &mut Vec<ObjectId>) -> Result<(), SyncError> {
        for TreeEntry { id, is_tree, .. } in
            tree_entries(&self.repo, tree, "").map_err(SyncError::Repo)?
        {
            ids.push(id);
            if is_tree {
                self.object_ids(id, ids)?;
            }
        }
        Ok(())
    }

    /// Every file of `commit`'s tree.
    pub(crate) fn read_tree(&self, commit: ObjectId) -> Result<NoteTree, SyncError> {
        let tree = self.tree_of(commit)?;
        let mut files = NoteTree::new();
        self.collect(tree, "", &mut files)?;
        Ok(files)
    }

    fn collect(&self, tree: ObjectId, prefix: &str, files: &mut NoteTree) -> Result<(), SyncError> {
        for TreeEntry {
            path,
            id,
            is_tree,
            is_blob,
        } in tree_entries(&self.repo, tree, prefix).map_err(SyncError::Repo)?
        {
            if is_tree {
                self.collect(id, &path, files)?;
            } else if is_blob {
                let blob = self.repo.find_blob(id).map_err(repo_error)?;
                files.insert(path, blob.data.clone());
            }
        }
        Ok(())
    }

    /// Writes `files` as a tree and a commit on `parents` (no reference
    /// moves).
    pub(crate) fn commit(
        &self,
        files: &NoteTree,
        parents: &[ObjectId],
        message: &str,
        who: &Signature,
    ) -> Result<ObjectId, SyncError> {
        let mut editor = self
            .repo
            .edit_tree(ObjectId::empty_tree(self.repo.object_hash()))
            .map_err(repo_error)?;
        for (path, bytes) in files {
            let blob = self.repo.write_blob(bytes).map_err(repo_error)?.detach();
            editor
                .upsert(path.as_str(), EntryKind::Blob, blob)
                .map_err(repo_error)?;
        }
        let tree = editor.write().map_err(repo_error)?.detach();
        let signature = gix::actor::Signature {
            name: who.name.as_str().into(),
            email: who.email.as_str().into(),
            time: gix::date::Time::now_local_or_utc(),
        };
        let mut time = gix::date::parse::TimeBuf::default();
        let signature = signature.to_ref(&mut time);
        let commit = self
            .repo
            .new_commit_as(signature, signature, message, tree, parents.iter().copied())
            .map_err(repo_error)?;
        Ok(commit.id)
    }

    /// The author email of `commit` (`notesoup@<machine>` for a sync
    /// commit).
    pub(crate) fn author_email(&self, commit: ObjectId) -> Option<String> {
        let commit = self.repo.find_commit(commit).ok()?;
        let author = commit.author().ok()?;
        Some(author.email.to_str_lossy().into_owned())
    }
}
