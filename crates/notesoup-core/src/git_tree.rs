//! Reading a Git tree the way the dream's audit and sync both walk one:
//! each entry's path below the walk's start, its object and whether it is a
//! tree or a blob (anything else, a link or a submodule, is neither).

use gix::bstr::ByteSlice;
use gix::{ObjectId, Repository};

/// One entry of a tree, named by its path below the walk's start.
pub(crate) struct TreeEntry {
    /// `prefix/name`, or `name` at the start.
    pub(crate) path: String,
    pub(crate) id: ObjectId,
    pub(crate) is_tree: bool,
    pub(crate) is_blob: bool,
}

/// The entries of `tree`, their paths below `prefix`. A failure is Git's
/// message, for the caller's own error.
pub(crate) fn tree_entries(
    repo: &Repository,
    tree: ObjectId,
    prefix: &str,
) -> Result<Vec<TreeEntry>, String> {
    let tree = repo.find_tree(tree).map_err(|err| err.to_string())?;
    let decoded = tree.decode().map_err(|err| err.to_string())?;
    Ok(decoded
        .entries
        .iter()
        .map(|entry| {
            let name = entry.filename.to_str_lossy();
            TreeEntry {
                path: if prefix.is_empty() {
                    name.into_owned()
                } else {
                    format!("{prefix}/{name}")
                },
                id: entry.oid.to_owned(),
                is_tree: entry.mode.is_tree(),
                is_blob: entry.mode.is_blob(),
            }
        })
        .collect())
}
