//! The crate's floors, read from its source: the command line on top, then
//! the doors the hosts come in by (the MCP transport, the hooks and the
//! boot they render), then the one tool host, then sessions, transcripts
//! and the small pieces under them, then core. A module names only its own
//! floor or those below, and no file reaches, through any chain of uses,
//! back to itself.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use notesoup_test_support::modules::{Module, Uses, cycle, files, module_of, named_module};

/// Each top-level module's floor, the command line's first.
const FLOORS: [&[&str]; 4] = [
    &["cli", "dream", "install"],
    &["mcp", "hook", "boot"],
    &["tools"],
    &[
        "state",
        "transcript",
        "window",
        "budget",
        "settings",
        "names",
        "env",
        "files",
        "shown",
    ],
];

fn floor_of(module: &str) -> usize {
    FLOORS
        .iter()
        .position(|floor| floor.contains(&module))
        .unwrap_or_else(|| panic!("{module} is on no floor: add it to FLOORS"))
}

/// The modules `text` (one file, its test module left out) names through
/// `crate::`, `super::` or `self::` paths, each as the longest prefix that
/// is a module of `modules`.
fn uses(text: &str, this: &[String], modules: &BTreeSet<Module>) -> BTreeSet<Module> {
    let code = text.split("#[cfg(test)]").next().unwrap_or_default();
    let mut named = BTreeSet::new();
    let is_file_module = modules.contains(this);
    for (at, _) in code.match_indices("::") {
        let start = code[..at]
            .rfind(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .map_or(0, |i| i + 1);
        let end = code[at..]
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .map_or(code.len(), |i| at + i);
        // Each path once, at its first `::`.
        if code[start..at].contains("::") {
            continue;
        }
        let segments: Vec<&str> = code[start..end].split("::").collect();
        let (path, rest): (Module, &[&str]) = match segments[0] {
            "crate" => (Vec::new(), &segments[1..]),
            "self" if is_file_module => (this.to_vec(), &segments[1..]),
            "super" => (
                this[..this.len().saturating_sub(1)].to_vec(),
                &segments[1..],
            ),
            _ => continue,
        };
        named.extend(named_module(modules, this, path, rest));
    }
    named
}

/// The uses between the crate's files, and every one that climbs a floor.
fn check(src: &Path) -> (Uses, Vec<String>) {
    let files: Vec<(Module, PathBuf)> = files(src)
        .into_iter()
        .map(|file| (module_of(src, &file), file))
        .filter(|(module, _)| !module.is_empty() && module[0] != "lib" && module[0] != "main")
        .collect();
    let modules: BTreeSet<Module> = files.iter().map(|(module, _)| module.clone()).collect();
    let mut graph = BTreeMap::new();
    let mut climbs = Vec::new();
    for (module, file) in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let named = uses(&text, module, &modules);
        for target in &named {
            if floor_of(&target[0]) < floor_of(&module[0]) {
                climbs.push(format!("{} -> {}", module.join("::"), target.join("::")));
            }
        }
        graph.insert(module.clone(), named);
    }
    (graph, climbs)
}

#[test]
fn the_floors_read_cli_doors_tools_sessions_and_no_file_reaches_itself() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let (graph, climbs) = check(&src);
    assert!(climbs.is_empty(), "uses that climb a floor: {climbs:#?}");
    assert_eq!(cycle(&graph), None, "a cycle of uses");
    // The check sees what it checks: the MCP transport names the tool host.
    assert!(graph[&vec!["mcp".to_owned(), "tools".to_owned()]].contains(&vec!["tools".to_owned()]));
}
