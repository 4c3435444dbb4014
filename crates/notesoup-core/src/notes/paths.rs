//! Filesystem layout: the project key of a working directory.

use std::fs;
use std::path::{Path, PathBuf};

use super::identity::absolute_lexical;
use super::segment::is_forbidden_char;

/// The project key of `cwd`: `<basename(root)>-<first 8 hex of sha1(root)>`,
/// where `root` is the git root found by walking up to a `.git` entry (a
/// linked worktree resolves to its main checkout), or `cwd` itself when there
/// is no git root. The root path is hashed as a UTF-8 string.
pub fn project_key(cwd: &Path) -> String {
    let cwd = absolute_lexical(cwd);
    let root = git_root(&cwd).unwrap_or(cwd);
    let text = root.to_string_lossy();
    let digest = sha1_hex(text.as_bytes());
    let base = root
        .file_name()
        .map(|name| printable_base(&name.to_string_lossy()))
        .unwrap_or_default();
    format!("{base}-{}", &digest[..8])
}

/// The SHA-1 of `bytes` in lowercase hex.
fn sha1_hex(bytes: &[u8]) -> String {
    use sha1::Digest as _;
    lower_hex(&sha1::Sha1::digest(bytes))
}

/// `bytes` in lowercase hex, two digits a byte.
pub(crate) fn lower_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// The longest folder name a project key keeps, in bytes, so the key (with
/// its `-<8 hex>`) stays a legal file name.
const PROJECT_BASE_MAX_BYTES: usize = 200;

/// A folder name fit to name a project home: characters no address may
/// hold (and `:`, `\`) become `_`, and a name over
/// [`PROJECT_BASE_MAX_BYTES`] is cut at a character boundary. The hash
/// still tells such projects apart.
fn printable_base(name: &str) -> String {
    let mut base: String = name
        .chars()
        .map(|c| {
            if is_forbidden_char(c) || matches!(c, ':' | '\\') {
                '_'
            } else {
                c
            }
        })
        .collect();
    if base.len() > PROJECT_BASE_MAX_BYTES {
        let mut end = PROJECT_BASE_MAX_BYTES;
        while !base.is_char_boundary(end) {
            end -= 1;
        }
        base.truncate(end);
    }
    base
}

fn git_root(cwd: &Path) -> Option<PathBuf> {
    for dir in cwd.ancestors() {
        let dot_git = dir.join(".git");
        if fs::symlink_metadata(&dot_git).is_err() {
            continue;
        }
        if fs::metadata(&dot_git).is_ok_and(|meta| meta.is_file()) {
            return Some(linked_worktree_main(dir, &dot_git).unwrap_or_else(|| dir.to_path_buf()));
        }
        return Some(dir.to_path_buf());
    }
    None
}

/// For a `.git` file whose `gitdir:` points at `<main>/.git/worktrees/<name>`,
/// returns `<main>`.
fn linked_worktree_main(dir: &Path, dot_git: &Path) -> Option<PathBuf> {
    let text = fs::read_to_string(dot_git).ok()?;
    let target = text
        .lines()
        .find_map(|line| line.strip_prefix("gitdir:"))?
        .trim();
    let gitdir = absolute_lexical(&dir.join(target));
    let worktrees = gitdir.parent()?;
    let dot_git_dir = worktrees.parent()?;
    let is_linked = worktrees.file_name()? == "worktrees" && dot_git_dir.file_name()? == ".git";
    if is_linked {
        dot_git_dir.parent().map(Path::to_path_buf)
    } else {
        None
    }
}
