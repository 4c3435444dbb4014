//! Reading a crate's module graph from its source, for the tests that hold
//! a crate's modules to their layering: each module as its path, the files
//! of a source tree, the module a path names, and a cycle of uses, shown as
//! its chain.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module's path (`["notes", "store", "heads"]`).
pub type Module = Vec<String>;
/// Which modules each file's module names.
pub type Uses = BTreeMap<Module, BTreeSet<Module>>;

/// `src/a/b.rs` or `src/a/b/mod.rs` as the module path `a::b`.
pub fn module_of(src: &Path, file: &Path) -> Module {
    let relative = file.strip_prefix(src).unwrap().with_extension("");
    let mut path: Vec<String> = relative
        .components()
        .map(|part| part.as_os_str().to_string_lossy().into_owned())
        .collect();
    if path.last().is_some_and(|last| last == "mod") {
        path.pop();
    }
    path
}

/// Every `.rs` file under `dir`.
pub fn files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(files(&path));
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            found.push(path);
        }
    }
    found
}

/// The module a path in `this` (a file's module) names: `start` (where the
/// path's first segments lead) extended by the longest prefix of `rest`
/// that is still a module of `modules`; none when that is the crate root or
/// `this` itself.
pub fn named_module(
    modules: &BTreeSet<Module>,
    this: &[String],
    start: Module,
    rest: &[&str],
) -> Option<Module> {
    let mut module = start;
    let mut longest = module.clone();
    for segment in rest {
        module.push((*segment).to_owned());
        if modules.contains(&module) {
            longest = module.clone();
        }
    }
    (!longest.is_empty() && longest != this).then_some(longest)
}

/// A module that reaches itself through a chain of uses, shown as the chain.
pub fn cycle(graph: &Uses) -> Option<Vec<String>> {
    fn visit(
        node: &Module,
        graph: &Uses,
        done: &mut BTreeSet<Module>,
        stack: &mut Vec<Module>,
    ) -> Option<Vec<String>> {
        if let Some(at) = stack.iter().position(|n| n == node) {
            let mut chain: Vec<String> = stack[at..].iter().map(|n| n.join("::")).collect();
            chain.push(node.join("::"));
            return Some(chain);
        }
        if !done.insert(node.clone()) {
            return None;
        }
        stack.push(node.clone());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(chain) = visit(next, graph, done, stack) {
                return Some(chain);
            }
        }
        stack.pop();
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut done, &mut Vec::new()))
}
