//! Path escapes: nothing outside the notes root is read or written, whatever
//! the address or the links inside a home.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use crate::notes::{ListQuery, UpdateRequest};
use crate::tools::RefusalCode;

use super::listing::addresses;
use super::support::{AllRows, Fixture, code, edits, put};

/// A directory outside the root with one file; returns (dir, file, text).
fn outside(f: &Fixture) -> (PathBuf, PathBuf, &'static str) {
    let dir = f.dir.path().join("outside");
    let file = dir.join("secret.md");
    let text = "---\norigin: user\n---\n\nouter secret flock\n";
    put(&file, text);
    (dir, file, text)
}

/// A link at `rel` below the notes root (its folders made) to `target`.
fn link(f: &Fixture, rel: &str, target: &Path) {
    let at = f.root().join(rel);
    std::fs::create_dir_all(at.parent().expect("parent")).expect("folders");
    symlink(target, &at).unwrap_or_else(|err| panic!("link {rel}: {err}"));
}

fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files: Vec<(PathBuf, Vec<u8>)> = walkdir::WalkDir::new(dir)
        .into_iter()
        .map(|entry| entry.expect("entry"))
        .filter(|entry| entry.file_type().is_file())
        .map(|entry| {
            (
                entry.path().to_path_buf(),
                std::fs::read(entry.path()).expect("read"),
            )
        })
        .collect();
    files.sort();
    files
}

/// Whether a search finds the outside file's word through the store.
fn finds_the_secret(f: &Fixture) -> bool {
    !f.store
        .search(&["secret"], &ListQuery::default())
        .all_rows()
        .is_empty()
}

fn edit() -> UpdateRequest {
    edits(&[("secret", "stolen")])
}

#[test]
fn lexical_escapes_are_invalid_addresses() {
    let f = Fixture::new();
    let (dir, _, _) = outside(&f);
    let before = snapshot(&dir);
    for address in [
        "../outside/secret",
        "@project/../../outside/secret",
        "@human/../../outside/secret",
        "/etc/passwd",
        "@human//etc/passwd",
        "..\\outside\\secret",
        "a\0b",
        "@agents/../outside/secret",
        "@models/../../outside/secret",
    ] {
        assert_eq!(
            code(f.store.read(address)),
            RefusalCode::InvalidAddress,
            "{address:?}"
        );
        assert_eq!(
            code(f.store.write(address, "x", None)),
            RefusalCode::InvalidAddress,
            "{address:?}"
        );
        assert_eq!(
            code(f.store.update(address, &edit())),
            RefusalCode::InvalidAddress,
            "{address:?}"
        );
        assert_eq!(
            code(f.store.rename("ok", address)),
            RefusalCode::InvalidAddress,
            "{address:?}"
        );
    }
    assert_eq!(snapshot(&dir), before);
}

#[test]
fn a_symlinked_directory_inside_a_home_is_never_followed() {
    let f = Fixture::new();
    let (dir, _, _) = outside(&f);
    f.store.write("@human/real", "inside", None).expect("write");
    link(&f, "human/linked", &dir);
    let before = snapshot(&dir);
    let read = f.store.read("@human/linked/secret").expect_err("read");
    assert_eq!(read.code(), RefusalCode::InvalidAddress);
    assert!(
        read.message().contains("symbolic link"),
        "{}",
        read.message()
    );
    assert_eq!(
        [
            code(f.store.write("@human/linked/secret", "pwned", None)),
            code(f.store.write("@human/linked/new", "pwned", None)),
            code(f.store.write("@human/linked/sub/new", "pwned", None)),
            code(f.store.update("@human/linked/secret", &edit())),
            code(f.store.rename("@human/linked/secret", "@human/mine")),
            code(f.store.rename("@human/real", "@human/linked/moved")),
        ],
        [RefusalCode::InvalidAddress; 6]
    );
    assert_eq!(
        addresses(&f.store, &ListQuery::default()),
        ["@human/real.md"]
    );
    assert!(!finds_the_secret(&f));
    assert_eq!(snapshot(&dir), before, "nothing outside was written");
    assert!(
        f.root().join("human/real.md").exists(),
        "the failed rename kept its source"
    );
}

#[test]
fn a_symlinked_note_file_is_never_followed() {
    let f = Fixture::new();
    let (dir, file, text) = outside(&f);
    link(&f, "human/secret.md", &file);
    link(&f, "human/dangling.md", &dir.join("missing.md"));
    assert_eq!(
        [
            code(f.store.read("@human/secret")),
            code(f.store.write("@human/secret", "pwned", None)),
            code(f.store.write("@human/dangling", "pwned", None)),
            code(f.store.update("@human/secret", &edit())),
        ],
        [RefusalCode::InvalidAddress; 4]
    );
    f.store.write("@human/mine", "mine", None).expect("write");
    assert_eq!(
        code(f.store.rename("@human/mine", "@human/secret")),
        RefusalCode::InvalidAddress
    );
    // A link as the source is refused before the target's folders are made,
    // and a link is never deleted, live or not.
    assert_eq!(
        [
            code(f.store.rename("@human/secret", "@human/new/moved")),
            code(f.store.delete("@human/secret", true)),
            code(f.store.delete("@human/dangling", true)),
        ],
        [RefusalCode::InvalidAddress; 3]
    );
    assert!(!f.root().join("human/new").exists());
    assert!(f.root().join("human/secret.md").is_symlink());
    assert!(f.root().join("human/dangling.md").is_symlink());
    assert!(
        f.store
            .list(&ListQuery::default())
            .all_rows()
            .iter()
            .all(|row| row.location.address == "@human/mine.md")
    );
    assert!(!finds_the_secret(&f));
    assert_eq!(std::fs::read_to_string(&file).expect("outer"), text);
    assert!(
        !dir.join("missing.md").exists(),
        "the dangling link's target was not created"
    );
}

#[test]
fn a_symlinked_home_is_refused_and_reported_unavailable() {
    let f = Fixture::new();
    let (dir, _, _) = outside(&f);
    link(&f, "project/proj-12345678", &dir);
    link(&f, "agents/eve", &dir);
    let before = snapshot(&dir);
    assert_eq!(
        [
            code(f.store.read("@project/secret")),
            code(f.store.write("@project/new", "pwned", None)),
            code(f.store.read("@agents/eve/secret")),
        ],
        [RefusalCode::InvalidAddress; 3]
    );
    let status = f.store.list(&ListQuery::default()).expect("status");
    assert_eq!(status.homes_unavailable, ["@project"]);
    assert!(status.rows.is_empty());
    let agents = f
        .store
        .list(&ListQuery {
            pattern: Some("@agents/*/**".into()),
            ..ListQuery::default()
        })
        .expect("status");
    assert!(
        agents.rows.is_empty() && agents.homes_unavailable.is_empty(),
        "linked agent dirs are not homes"
    );
    let eve = f
        .store
        .list(&ListQuery {
            pattern: Some("@agents/eve/**".into()),
            ..ListQuery::default()
        })
        .expect("status");
    assert_eq!(eve.homes_unavailable, ["@agents/eve"]);
    assert_eq!(snapshot(&dir), before);
}

#[test]
fn the_root_itself_may_be_a_link() {
    let dir = tempfile::tempdir().expect("temp");
    let real = dir.path().join("real-notes");
    std::fs::create_dir_all(&real).expect("real");
    let linked = dir.path().join("notes-link");
    symlink(&real, &linked).expect("root link");
    let store = super::support::store_at(&linked, "alice", "gpt");
    store
        .write("@human/x", "through the root link", None)
        .expect("write");
    assert!(real.join("human/x.md").exists());
    assert_eq!(store.list(&ListQuery::default()).all_rows().len(), 1);
}

#[test]
fn a_hard_linked_note_is_replaced_not_written_through() {
    let f = Fixture::new();
    let (_, file, text) = outside(&f);
    std::fs::create_dir_all(f.root().join("human")).expect("home");
    std::fs::hard_link(&file, f.root().join("human/shared.md")).expect("hard link");
    f.store
        .write("@human/shared", "replaced", None)
        .expect("write");
    assert_eq!(
        std::fs::read_to_string(&file).expect("outer"),
        text,
        "the other name keeps its content"
    );
    let read = f
        .store
        .read("@human/shared")
        .expect("read")
        .expect("exists");
    assert_eq!(read.body, "replaced");
}
