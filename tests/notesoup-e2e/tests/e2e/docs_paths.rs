//! The docs name only what exists: every source path written in `docs/`
//! and the README is a file or folder of this repository, and every agent
//! tool named there is one core registers.
//!
//! Paths in the docs are written from the repository root
//! (`plugins/notesoup-pi/src/bridge/protocol.rs`), from a crate
//! (`tests/claude/mcp.rs`) or from the module being described
//! (`mcp/mod.rs`, `relink.rs`), so a path holds when it is the tail of a
//! tracked path; one written from the root must exist as written.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use notesoup_core::tools::tool_table;

/// The repository root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The top folders a path written from the repository root starts with.
const TOP: [&str; 8] = [
    "crates/",
    "plugins/",
    "tests/notesoup-e2e/",
    "xtask/",
    "generated/",
    "docs/",
    ".ci/",
    "deny.toml",
];

/// Endings of the source files the docs point at.
const SOURCE: [&str; 8] = [
    ".rs", ".ts", ".js", ".mjs", ".toml", ".sh", ".d.ts", ".snap",
];

/// Every file and folder of the repository, relative to its root, without
/// build output, dependencies or Git's own folder.
fn tracked() -> BTreeSet<String> {
    let root = root();
    let mut found = BTreeSet::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let name = entry.file_name().to_string_lossy().into_owned();
            if matches!(name.as_str(), ".git" | "target" | "node_modules") {
                continue;
            }
            let path = entry.path();
            let relative = path
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if entry.file_type().unwrap().is_dir() {
                found.insert(format!("{relative}/"));
                stack.push(path);
            } else {
                found.insert(relative);
            }
        }
    }
    found
}

/// The docs this check reads: README.md and every page under `docs/`.
fn pages() -> Vec<(String, String)> {
    let root = root();
    let mut pages = vec![("README.md".to_owned(), root.join("README.md"))];
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|ext| ext == "md") {
            let name = format!("docs/{}", path.file_name().unwrap().to_string_lossy());
            pages.push((name, path));
        }
    }
    pages
        .into_iter()
        .map(|(name, path)| (name, std::fs::read_to_string(path).unwrap()))
        .collect()
}

/// The code spans of a markdown page: the text between single backticks.
/// Fenced blocks are skipped, and so is the paragraph that begins
/// "The original:", whose paths are the original implementation's, in
/// another repository.
fn code_spans(text: &str) -> Vec<&str> {
    let mut spans = Vec::new();
    let mut fenced = false;
    let mut elsewhere = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if line.starts_with("The original:") {
            elsewhere = true;
        } else if line.trim().is_empty() {
            elsewhere = false;
        }
        if fenced || elsewhere {
            continue;
        }
        let mut parts = line.split('`');
        parts.next();
        while let (Some(span), Some(_)) = (parts.next(), parts.next()) {
            spans.push(span);
        }
    }
    spans
}

/// A span that names a path of this repository: from the root, or a source
/// file written from its crate or module. Anything with a placeholder, a
/// glob, a home or an absolute path is a path on the user's machine, not
/// the repository's.
fn repository_path(span: &str) -> Option<&str> {
    let span = span.trim_end_matches([',', '.', ':', ')']);
    if span.is_empty()
        || span.contains(|c: char| c.is_whitespace() || "<>*{}~@$%|=\"'(".contains(c))
        || span.starts_with('/')
        || span.starts_with('.') && !span.starts_with(".ci/")
    {
        return None;
    }
    let from_root = TOP.iter().any(|top| span.starts_with(top));
    let source = SOURCE.iter().any(|ending| span.ends_with(ending));
    (from_root || source).then_some(span)
}

#[test]
fn every_path_the_docs_name_exists() {
    let tracked = tracked();
    let mut missing = Vec::new();
    for (page, text) in pages() {
        for span in code_spans(&text) {
            let Some(path) = repository_path(span) else {
                continue;
            };
            let from_root = TOP.iter().any(|top| path.starts_with(top));
            let dir = format!("{}/", path.trim_end_matches('/'));
            let exists = if from_root {
                tracked.contains(path) || tracked.contains(&dir)
            } else {
                let tail = format!("/{path}");
                tracked.contains(path) || tracked.iter().any(|known| known.ends_with(&tail))
            };
            if !exists {
                missing.push(format!("{page}: `{span}`"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "the docs name paths that do not exist:\n{}",
        missing.join("\n")
    );
}

/// The Rust sources of every crate (not their tests), where a word that
/// looks like an agent tool's name (`notes_…`, `history_…`, `wipe_…`) may
/// be the name of a function, field or module instead.
fn identifiers_in_sources(tracked: &BTreeSet<String>) -> String {
    let root = root();
    let mut all = String::new();
    for path in tracked
        .iter()
        .filter(|path| path.ends_with(".rs") && path.contains("/src/"))
    {
        all.push_str(&std::fs::read_to_string(root.join(path)).unwrap_or_default());
    }
    all
}

#[test]
fn every_tool_the_docs_name_is_registered() {
    let registered: BTreeSet<&str> = tool_table().iter().map(|tool| tool.name).collect();
    let globs = ["notes_*", "history_*"];
    // Names of earlier versions, kept in behavior.md's version history
    // because old sessions may hold calls to them.
    let legacy = ["notes_edit"];
    let tracked = tracked();
    let sources = identifiers_in_sources(&tracked);
    let looks_like_tool = |word: &str| {
        (word.starts_with("notes_") || word.starts_with("history_") || word.starts_with("wipe_"))
            || word == "get_context_remaining"
    };
    let mut unknown = Vec::new();
    for (page, text) in pages() {
        for span in code_spans(&text) {
            // A call written out (`history_list({"after":8})`) names its
            // tool before the parenthesis.
            let word = span.split(['(', ' ']).next().unwrap_or_default();
            let word = word
                .strip_prefix("mcp__plugin_notesoup_notesoup__")
                .unwrap_or(word);
            if !looks_like_tool(word)
                || registered.contains(word)
                || globs.contains(&word)
                || legacy.contains(&word)
                || !word.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
            {
                continue;
            }
            // Not a tool: a name of the code (`notes_identity`).
            let as_code = [
                format!("fn {word}("),
                format!("fn {word}<"),
                format!(" {word}: "),
                format!("mod {word};"),
            ];
            if as_code.iter().any(|form| sources.contains(form.as_str())) {
                continue;
            }
            unknown.push(format!("{page}: `{span}`"));
        }
    }
    assert!(
        unknown.is_empty(),
        "the docs name tools core does not register:\n{}",
        unknown.join("\n")
    );
}

#[test]
fn the_check_reads_paths_and_tools_as_written() {
    assert_eq!(
        code_spans("a `tools/mod.rs` b `x`\n```\n`not/this.rs`\n```\n`y.rs`"),
        ["tools/mod.rs", "x", "y.rs"]
    );
    assert_eq!(repository_path("mcp/mod.rs"), Some("mcp/mod.rs"));
    assert_eq!(
        repository_path("crates/notesoup-core/"),
        Some("crates/notesoup-core/")
    );
    assert_eq!(repository_path("~/.claude/settings.json"), None);
    assert_eq!(repository_path("pi/session/<id>/"), None);
    assert_eq!(repository_path("@project/a.md"), None);
    assert_eq!(repository_path("hooks"), None);
    assert_eq!(
        code_spans("The original: x (`docs/a.md`,\n`src/b.rs`).\n\n`c.rs`"),
        ["c.rs"]
    );
}
