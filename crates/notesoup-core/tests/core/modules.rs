//! Core's modules, read from its source: no module reaches, through any
//! chain of `use crate::…`, `use super::…` or inline `crate::x::` paths, back
//! to itself. A piece two modules share lives in the lower one, or in a small
//! module of its own below both.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use notesoup_test_support::modules::{Module, Uses, cycle, files, module_of, named_module};

/// A file's code: its test module left out (from a `#[cfg(test)]` whose
/// item, past any other attributes, is a `mod`, to the end: another item
/// marked for tests, a function or an `impl`, stays in, with what follows
/// it), and its comment lines (doc links name paths that are no uses).
fn code_of(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let test_module = lines.iter().enumerate().position(|(at, line)| {
        line.trim() == "#[cfg(test)]"
            && lines[at + 1..]
                .iter()
                .map(|next| next.trim_start())
                .find(|next| !next.starts_with("#["))
                .is_some_and(|item| item.starts_with("mod ") || item.starts_with("pub(crate) mod "))
    });
    lines[..test_module.unwrap_or(lines.len())]
        .iter()
        .filter(|line| !line.trim_start().starts_with("//"))
        .copied()
        .collect::<Vec<_>>()
        .join("\n")
}

/// The paths a use tree names, `{…}` groups expanded
/// (`super::{a::X, b::{Y, Z}}` names `super::a::X`, `super::b::Y` and
/// `super::b::Z`).
fn expand(tree: &str) -> Vec<String> {
    let tree: String = tree.chars().filter(|c| !c.is_whitespace()).collect();
    let Some(open) = tree.find('{') else {
        return vec![tree];
    };
    let Some(close) = tree.rfind('}') else {
        return vec![tree];
    };
    let prefix = &tree[..open];
    let mut members = Vec::new();
    let (mut depth, mut start) = (0, open + 1);
    for (at, c) in tree.char_indices().take(close).skip(open + 1) {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                members.push(&tree[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    members.push(&tree[start..close]);
    members
        .into_iter()
        .filter(|member| !member.is_empty())
        .flat_map(|member| expand(&format!("{prefix}{member}")))
        .collect()
}

/// Every `crate::`, `super::` or `self::` path in `code`: the use trees
/// expanded, and each inline path once.
fn paths(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    let is_path_char = |c: char| c.is_alphanumeric() || c == '_' || c == ':';
    let mut rest = code;
    while let Some(at) = rest.find("use ") {
        let before = &rest[..at];
        let after = &rest[at + 4..];
        let end = after.find(';').unwrap_or(after.len());
        let tree = after[..end].trim();
        let starts_a_word = before.chars().last().is_none_or(|c| !is_path_char(c));
        if starts_a_word
            && ["crate::", "super::", "self::"]
                .iter()
                .any(|p| tree.starts_with(p))
        {
            found.extend(expand(tree));
        }
        rest = &after[end.min(after.len())..];
    }
    for (at, _) in code.match_indices("::") {
        let start = code[..at]
            .rfind(|c: char| !is_path_char(c))
            .map_or(0, |i| i + 1);
        let end = code[at..]
            .find(|c: char| !is_path_char(c))
            .map_or(code.len(), |i| at + i);
        // Each path once, at its first `::`.
        if code[start..at].contains("::") {
            continue;
        }
        let path = code[start..end].trim_end_matches(':');
        if ["crate", "super", "self"].contains(&&code[start..at]) {
            found.push(path.to_owned());
        }
    }
    found
}

/// The modules `code` names, each as the longest prefix of a path that is a
/// module of `modules`.
fn uses(code: &str, this: &[String], modules: &BTreeSet<Module>) -> BTreeSet<Module> {
    let mut named = BTreeSet::new();
    for path in paths(code) {
        let segments: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
        let mut module: Module = match segments[0] {
            "crate" => Vec::new(),
            _ => this.to_vec(),
        };
        let mut rest = &segments[1..];
        if segments[0] == "super" {
            module.pop();
            while rest.first() == Some(&"super") {
                module.pop();
                rest = &rest[1..];
            }
        }
        named.extend(named_module(modules, this, module, rest));
    }
    named
}

/// The uses between the files of the crate whose sources are `src`.
fn graph(src: &Path) -> Uses {
    let files: Vec<(Module, PathBuf)> = files(src)
        .into_iter()
        .map(|file| (module_of(src, &file), file))
        .filter(|(module, _)| !module.is_empty() && module[..] != ["lib".to_owned()])
        .collect();
    let modules: BTreeSet<Module> = files.iter().map(|(module, _)| module.clone()).collect();
    files
        .iter()
        .map(|(module, file)| {
            let code = code_of(&std::fs::read_to_string(file).unwrap());
            (module.clone(), uses(&code, module, &modules))
        })
        .collect()
}

fn module(path: &str) -> Module {
    path.split("::").map(str::to_owned).collect()
}

#[test]
fn no_core_module_reaches_itself_through_its_uses() {
    let graph = graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert_eq!(cycle(&graph), None, "a cycle of uses among core's modules");
    // The check sees what it checks: a plain use, a grouped one, an inline
    // path and one through `super::`.
    assert!(graph[&module("boot::render")].contains(&module("boot::snapshot")));
    assert!(graph[&module("notes::address")].contains(&module("notes::segment")));
    assert!(graph[&module("boot::shelves")].contains(&module("durable")));
    assert!(graph[&module("notes::store::watch")].contains(&module("notes::store::forget")));
    // Past an item marked for tests (`HeadCache`'s test-only
    // constructor comes before its save).
    assert!(graph[&module("notes::store::heads")].contains(&module("durable")));
}

#[test]
fn a_cycle_through_grouped_and_inline_paths_is_found_and_shown() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::create_dir_all(src.join("area")).unwrap();
    std::fs::write(src.join("lib.rs"), "pub mod area;\npub mod other;\n").unwrap();
    std::fs::write(src.join("area/mod.rs"), "mod low;\nmod high;\n").unwrap();
    std::fs::write(
        src.join("area/low.rs"),
        "// use super::high::Nothing; a comment names no module\n\
         fn f() { crate::other::g(); }\n",
    )
    .unwrap();
    std::fs::write(
        src.join("other.rs"),
        "use crate::{area::{high::Thing}, lib};\n",
    )
    .unwrap();
    std::fs::write(
        src.join("area/high.rs"),
        "use super::{low::Piece};\n#[cfg(test)]\nmod tests { use crate::other; }\n",
    )
    .unwrap();
    assert_eq!(
        cycle(&graph(src)),
        Some(vec![
            "area::high".to_owned(),
            "area::low".to_owned(),
            "other".to_owned(),
            "area::high".to_owned(),
        ])
    );
    // Without the inline path there is none.
    std::fs::write(src.join("area/low.rs"), "fn f() {}\n").unwrap();
    assert_eq!(cycle(&graph(src)), None);
}
