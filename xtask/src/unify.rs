//! xtask's dependencies resolve with the test build's features.
//!
//! `cargo xtask` builds xtask alone, and cargo resolves features per build:
//! a dependency the test build (`cargo test --workspace --all-features`)
//! compiles with more features is compiled again, with every crate above
//! it. On a fresh clone that was serde, gix and notesoup-core: about half of
//! the test build. `xtask/Cargo.toml` asks for the missing features; the test
//! below names any package whose features drift apart again.
//!
//! Within one build, a package asked for with two feature sets is compiled
//! twice too (when one crate uses it as a library and a proc macro uses it
//! on the host, say); a second test names those.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{Context, Result};

use crate::workspace::cargo_stdout;

/// `cargo tree`'s arguments for the test build: every crate, every
/// feature, with the dev-dependencies.
const TEST_BUILD: [&str; 4] = ["--workspace", "--all-features", "-e", "normal,build,dev"];

/// Packages in xtask's build whose features the test build never uses,
/// with the feature sets the test build does use.
fn unshared() -> Result<Vec<String>> {
    let xtask = tree(&["-p", "xtask", "-e", "normal,build"])?;
    let workspace = tree(&TEST_BUILD)?;
    Ok(unshared_in(&xtask, &workspace))
}

/// Packages the test build compiles more than once, with their feature
/// sets.
fn compiled_twice() -> Result<Vec<String>> {
    let workspace = tree(&TEST_BUILD)?;
    Ok(twice_in(&workspace))
}

/// Each package `tree` lists with more than one feature set.
fn twice_in(tree: &str) -> Vec<String> {
    feature_sets(tree)
        .into_iter()
        .filter(|(_, sets)| sets.len() > 1)
        .map(|(package, sets)| {
            let sets: Vec<_> = sets.iter().map(|s| format!("[{s}]")).collect();
            format!("{package}: {}", sets.join(" "))
        })
        .collect()
}

/// `cargo tree` with one `name version [features]` line per package.
fn tree(args: &[&str]) -> Result<String> {
    let mut tree = vec!["tree", "--locked", "--prefix", "none", "-f", "{p} [{f}]"];
    tree.extend(args);
    String::from_utf8(cargo_stdout(&tree)?).context("cargo tree wrote invalid UTF-8")
}

/// Each package of `xtask` with a feature set `workspace` does not list
/// for it.
fn unshared_in(xtask: &str, workspace: &str) -> Vec<String> {
    let used = feature_sets(workspace);
    let mut unshared = Vec::new();
    for (package, sets) in feature_sets(xtask) {
        let theirs = used.get(package);
        for set in sets {
            match theirs {
                Some(theirs) if theirs.contains(set) => {}
                Some(theirs) => {
                    let theirs: Vec<_> = theirs.iter().map(|s| format!("[{s}]")).collect();
                    unshared.push(format!(
                        "{package} [{set}]: the test build uses {}",
                        theirs.join(" ")
                    ));
                }
                None => unshared.push(format!(
                    "{package} [{set}]: the test build does not build it"
                )),
            }
        }
    }
    unshared
}

/// Package (name, version and, for a proc macro or a local crate, cargo's
/// note) to the feature sets it is built with.
fn feature_sets(tree: &str) -> BTreeMap<&str, BTreeSet<&str>> {
    let mut sets: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for line in tree.lines() {
        let line = line.trim_end().trim_end_matches("(*)").trim_end();
        let Some((package, features)) = line.rsplit_once(" [") else {
            continue;
        };
        let Some(features) = features.strip_suffix(']') else {
            continue;
        };
        sets.entry(package.trim_end()).or_default().insert(features);
    }
    sets
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xtask_builds_its_dependencies_as_the_test_build_does() {
        let unshared = unshared().expect("cargo tree runs");
        assert!(
            unshared.is_empty(),
            "xtask's build would compile these a second time for the test \
             build; ask for the same features in xtask/Cargo.toml:\n{}",
            unshared.join("\n")
        );
    }

    #[test]
    fn the_test_build_compiles_each_package_once() {
        let twice = compiled_twice().expect("cargo tree runs");
        assert!(
            twice.is_empty(),
            "the test build compiles these once per feature set; ask for the \
             union in xtask/Cargo.toml:\n{}",
            twice.join("\n")
        );
    }

    #[test]
    fn a_package_with_two_feature_sets_is_named() {
        let tree = "\
xtask v0.1.0 (/w/xtask) []
syn v2.0.0 [full,visit]
proc-macro2 v1.0.0 [default]
syn v2.0.0 [fold,full]
syn v3.0.0 [full] (*)
proc-macro2 v1.0.0 [default] (*)
";
        assert_eq!(twice_in(tree), ["syn v2.0.0: [fold,full] [full,visit]"]);
        assert!(twice_in("").is_empty());
    }

    #[test]
    fn a_feature_set_the_test_build_never_uses_is_named() {
        let xtask = "\
xtask v0.1.0 (/w/xtask) []
serde v1.0.0 [derive,std]
syn v3.0.0 [derive] (*)
rustix v1.0.0 [fs]
ref-cast-impl v1.0.0 (proc-macro) []
";
        let workspace = "\
xtask v0.1.0 (/w/xtask) []
serde v1.0.0 [derive,std] (*)
syn v3.0.0 [derive,full]
syn v3.0.0 [derive]
rustix v1.0.0 [fs,termios]
ref-cast-impl v1.0.0 (proc-macro) []
";
        assert_eq!(
            unshared_in(xtask, workspace),
            ["rustix v1.0.0 [fs]: the test build uses [fs,termios]"]
        );
        assert_eq!(
            unshared_in("getrandom v0.4.0 []\n", workspace),
            ["getrandom v0.4.0 []: the test build does not build it"]
        );
        assert!(unshared_in("", workspace).is_empty());
    }
}
