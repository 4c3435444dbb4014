//! One version everywhere: the workspace version (`[workspace.package]` in
//! the root `Cargo.toml`) is the version of every crate, every internal
//! dependency, every npm package, plugin manifest and marketplace entry.
//! `cargo xtask dist` refuses to package when any disagree, and this
//! module's test fails on the same check.

use std::path::Path;

use anyhow::{Context, Result, bail};
use serde_json::Value;

/// The JSON manifests that carry the version, and where in each (JSON
/// pointers).
pub const JSON_MANIFESTS: &[(&str, &[&str])] = &[
    ("plugins/notesoup-pi/package/package.json", &["/version"]),
    (
        "plugins/notesoup-claude/plugin/.claude-plugin/plugin.json",
        &["/version"],
    ),
    (
        "plugins/notesoup-claude/mod/.claude-plugin/plugin.json",
        &["/version"],
    ),
    (
        "plugins/notesoup-claude/.claude-plugin/marketplace.json",
        &["/plugins/0/version", "/plugins/1/version"],
    ),
    ("plugins/notesoup-dsh/bundle/package.json", &["/version"]),
];

/// The crates published to crates.io, in dependency order.
pub const PUBLISHED_CRATES: &[&str] = &[
    "notesoup-core",
    "notesoup-cli",
    "notesoup-pi",
    "notesoup-claude",
    "notesoup-dsh",
];

/// The workspace version, read from the root manifest.
pub fn workspace_version(root: &Path) -> Result<String> {
    let path = root.join("Cargo.toml");
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    section_value(&text, "[workspace.package]", "version")
        .with_context(|| format!("no version in [workspace.package] of {}", path.display()))
}

/// `key = "value"` inside `section` of a TOML file, for the simple lines the
/// workspace manifest uses.
fn section_value(text: &str, section: &str, key: &str) -> Option<String> {
    let mut inside = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            inside = line == section;
            continue;
        }
        if !inside {
            continue;
        }
        let Some((name, value)) = line.split_once('=') else {
            continue;
        };
        if name.trim() == key {
            return Some(value.trim().trim_matches('"').to_owned());
        }
    }
    None
}

/// Every place whose version differs from the workspace's, one line each
/// (`path: what it says`); empty when all agree.
pub fn disagreements(root: &Path) -> Result<Vec<String>> {
    let version = workspace_version(root)?;
    let mut found = Vec::new();
    let manifest = std::fs::read_to_string(root.join("Cargo.toml"))?;
    // Internal dependencies carry the version too: crates.io needs it, and
    // it must be the one being published.
    for name in PUBLISHED_CRATES {
        let line = manifest
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{name} = ")));
        let says = line.and_then(|l| {
            let (_, rest) = l.split_once("version = \"")?;
            rest.split('"').next()
        });
        if says != Some(version.as_str()) {
            found.push(format!(
                "Cargo.toml: [workspace.dependencies] {name} has version {says:?}, not {version:?}"
            ));
        }
    }
    for member in members(&manifest) {
        let path = root.join(&member).join("Cargo.toml");
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        if !text.lines().any(|l| l.trim() == "version.workspace = true") {
            found.push(format!("{member}/Cargo.toml: not version.workspace = true"));
        }
    }
    for (file, pointers) in JSON_MANIFESTS {
        let path = root.join(file);
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        let json: Value =
            serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
        for pointer in *pointers {
            let says = json.pointer(pointer).and_then(Value::as_str);
            if says != Some(version.as_str()) {
                found.push(format!("{file}: {pointer} is {says:?}, not {version:?}"));
            }
        }
    }
    Ok(found)
}

/// The workspace members listed in the root manifest.
fn members(manifest: &str) -> Vec<String> {
    let Some((_, rest)) = manifest.split_once("members = [") else {
        return Vec::new();
    };
    let list = rest.split(']').next().unwrap_or_default();
    list.split(',')
        .map(|m| m.trim().trim_matches('"').to_owned())
        .filter(|m| !m.is_empty())
        .collect()
}

/// Fails with every disagreement when there is one.
pub fn check(root: &Path) -> Result<String> {
    let found = disagreements(root)?;
    if !found.is_empty() {
        bail!(
            "the versions disagree with the workspace version; set them all to it:\n  {}",
            found.join("\n  ")
        );
    }
    workspace_version(root)
}

/// What `<binary> --version` says: its second word (`notesoup 0.1.0 (…)`).
pub fn binary_version(output: &str) -> Option<&str> {
    output.split_whitespace().nth(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::workspace_root;

    #[test]
    fn every_crate_package_and_manifest_has_the_workspace_version() {
        let found = disagreements(&workspace_root()).expect("manifests readable");
        assert!(found.is_empty(), "{found:#?}");
    }

    #[test]
    fn a_manifest_that_disagrees_is_named() {
        let root = workspace_root();
        let copy = tempfile::tempdir().expect("temp dir");
        let version = workspace_version(&root).expect("workspace version");
        // A copy of the workspace's manifests, one of them a version behind.
        let manifest = std::fs::read_to_string(root.join("Cargo.toml")).expect("manifest");
        std::fs::write(copy.path().join("Cargo.toml"), &manifest).expect("copied");
        for member in members(&manifest) {
            let to = copy.path().join(&member);
            std::fs::create_dir_all(&to).expect("member dir");
            std::fs::copy(root.join(&member).join("Cargo.toml"), to.join("Cargo.toml"))
                .expect("member manifest");
        }
        for (file, _) in JSON_MANIFESTS {
            let to = copy.path().join(file);
            std::fs::create_dir_all(to.parent().expect("a folder")).expect("dir");
            std::fs::copy(root.join(file), &to).expect("json manifest");
        }
        assert!(disagreements(copy.path()).expect("read").is_empty());
        let pi = copy.path().join("plugins/notesoup-pi/package/package.json");
        let text = std::fs::read_to_string(&pi).expect("package.json");
        std::fs::write(
            &pi,
            text.replace(
                &format!("\"version\": \"{version}\""),
                "\"version\": \"0.0.1\"",
            ),
        )
        .expect("written");
        assert_eq!(
            disagreements(copy.path()).expect("read"),
            [format!(
                "plugins/notesoup-pi/package/package.json: /version is Some(\"0.0.1\"), not {version:?}"
            )]
        );
        assert!(check(copy.path()).is_err());
    }

    #[test]
    fn the_version_word_of_each_binary_s_version_line() {
        assert_eq!(
            binary_version("notesoup-pi 0.1.0 (Pi 1.6.0, bridge protocol 2)\n"),
            Some("0.1.0")
        );
        assert_eq!(binary_version("notesoup\n"), None);
    }
}
