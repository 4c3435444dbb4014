//! One name, one type: no two crates of the workspace declare a public
//! struct, enum, trait or type alias of the same name, so a name met in a
//! stack trace, a doc or a review says which type it is without its crate.
//!
//! Read from the sources (every `.rs` file of every member, its tests
//! included: a test binary's helper types are met in reviews as well), a
//! declaration being a line that starts with `pub struct`, `pub enum`,
//! `pub trait` or `pub type` after its indentation. `pub(crate)` and
//! narrower are the crate's own business.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The repository root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The folders holding the workspace's crates.
const MEMBER_FOLDERS: [&str; 4] = ["crates", "plugins", "tests", "xtask"];

/// The public type a line declares, if it declares one.
fn declared_type(line: &str) -> Option<&str> {
    let line = line.trim_start();
    let rest = ["pub struct ", "pub enum ", "pub trait ", "pub type "]
        .iter()
        .find_map(|keyword| line.strip_prefix(keyword))?;
    let end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
}

/// The crate a source file belongs to: the nearest folder above it with a
/// `Cargo.toml`.
fn crate_of(file: &Path) -> Option<PathBuf> {
    file.ancestors()
        .skip(1)
        .find(|dir| dir.join("Cargo.toml").is_file())
        .map(Path::to_path_buf)
}

/// Every `.rs` file under the member folders, without build output and
/// dependencies.
fn sources() -> Vec<PathBuf> {
    let root = root();
    let mut found = Vec::new();
    let mut stack: Vec<PathBuf> = MEMBER_FOLDERS.iter().map(|top| root.join(top)).collect();
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let name = entry.file_name();
            if matches!(name.to_str(), Some("target" | "node_modules" | ".git")) {
                continue;
            }
            let path = entry.path();
            if entry.file_type().unwrap().is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                found.push(path);
            }
        }
    }
    found
}

/// Each public type name, with the crates declaring it and where.
fn declarations() -> BTreeMap<String, BTreeMap<PathBuf, String>> {
    let root = root();
    let mut names: BTreeMap<String, BTreeMap<PathBuf, String>> = BTreeMap::new();
    for file in sources() {
        let Some(krate) = crate_of(&file) else {
            continue;
        };
        let text = std::fs::read_to_string(&file).unwrap();
        for (index, line) in text.lines().enumerate() {
            if let Some(name) = declared_type(line) {
                let place = format!(
                    "{}:{}",
                    file.strip_prefix(&root).unwrap_or(&file).display(),
                    index + 1
                );
                names
                    .entry(name.to_owned())
                    .or_default()
                    .entry(krate.clone())
                    .or_insert(place);
            }
        }
    }
    names
}

#[test]
fn no_two_crates_declare_a_public_type_of_one_name() {
    let names = declarations();
    let shared: Vec<String> = names
        .iter()
        .filter(|(_, crates)| crates.len() > 1)
        .map(|(name, crates)| {
            let places: BTreeSet<&str> = crates.values().map(String::as_str).collect();
            format!(
                "{name}: {}",
                places.into_iter().collect::<Vec<_>>().join(", ")
            )
        })
        .collect();
    assert!(
        shared.is_empty(),
        "public types sharing a name across crates (rename one so the name says which):\n{}",
        shared.join("\n")
    );
}

#[test]
fn the_declaration_reader_finds_the_types_it_must() {
    assert_eq!(declared_type("pub struct Tool {"), Some("Tool"));
    assert_eq!(
        declared_type("    pub enum LineRead<'a> {"),
        Some("LineRead")
    );
    assert_eq!(
        declared_type("pub trait ToolContext: Sync {"),
        Some("ToolContext")
    );
    assert_eq!(
        declared_type("pub type Sink<'a> = &'a mut dyn FnMut();"),
        Some("Sink")
    );
    assert_eq!(declared_type("pub(crate) struct Hidden;"), None);
    assert_eq!(declared_type("pub fn tool() {}"), None);
    // The workspace's own core types are found, in their own crate.
    let names = declarations();
    let tool = &names["ToolContext"];
    assert_eq!(tool.len(), 1, "{tool:?}");
    assert!(
        tool.keys()
            .all(|krate| krate.ends_with("crates/notesoup-core"))
    );
}
