//! The documented install without a Rust toolchain (docs/dsh.md,
//! "Installing notesoup on dsh"), as a user on a fresh machine runs it:
//! `npm install -g notesoup-linux-x64 && notesoup-dsh install --profile …`,
//! then a real dsh session on that profile, then the documented uninstall.
//!
//! The platform package is the one `cargo xtask dist` lays out
//! (`NOTESOUP_DIST`), published to a real npm registry (verdaccio) on
//! 127.0.0.1 and installed from it; HOME is a temporary folder whose
//! `.npmrc` names the registry and the global prefix, and PATH holds the
//! pinned Node, npm, pnpm and dsh, that prefix's `bin`, then `/usr/bin:/bin`:
//! no Rust toolchain and no notesoup binary of this build. Behind the
//! `reference-hosts` feature like the other real-dsh tests; `cargo xtask ci`
//! lays out the dist and installs dsh and verdaccio first. A missing piece
//! fails the test.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use notesoup_test_support::child::assert_succeeded;
use notesoup_test_support::npm_registry::{
    HOW_TO_DIST, HOW_TO_VERDACCIO, NOT_ON_A_FRESH_MACHINE, Registry,
    assert_nothing_of_notesoup_or_rust_on, dist_tarballs, fresh_bin, required_path,
};
use serde_json::json;

use crate::e2e::{COMPACTION_OFF, Scenario, World, dsh_root, message_texts, tool_results};

/// The platform package the docs install.
const PACKAGE: &str = "notesoup-linux-x64";

/// Runs `command` and returns its output; a failure shows both streams.
fn succeed(command: &mut Command, what: &str) -> Output {
    let output = command
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{what} does not start: {e}"));
    assert_succeeded(&output, what);
    output
}

/// The folders of `path` holding a program named `name`.
fn found_on(path: &OsString, name: &str) -> Vec<PathBuf> {
    std::env::split_paths(path)
        .filter(|dir| dir.join(name).exists())
        .collect()
}

/// The names under `dir` that mention notesoup (none when it is absent).
fn notesoup_entries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|name| name.contains("notesoup"))
                .collect()
        })
        .unwrap_or_default()
}

/// Every file under `dir` whose name or text mentions notesoup.
fn files_mentioning_notesoup(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let named = entry.file_name().to_string_lossy().contains("notesoup");
            if kind.is_dir() {
                if named {
                    found.push(path.clone());
                }
                stack.push(path);
            } else if named
                || std::fs::read(&path)
                    .is_ok_and(|bytes| String::from_utf8_lossy(&bytes).contains("notesoup"))
            {
                found.push(path);
            }
        }
    }
    found
}

#[test]
fn installed_from_the_npm_platform_package_as_documented() {
    let root = dsh_root();
    let dist = required_path("NOTESOUP_DIST", HOW_TO_DIST);
    let verdaccio = required_path("NOTESOUP_VERDACCIO", HOW_TO_VERDACCIO);
    let version = env!("CARGO_PKG_VERSION");
    let mut world = World::new(root);
    let node = world.host_dirs()[0].join("node");

    // The fresh machine: npm's global prefix set in ~/.npmrc, its bin on
    // PATH, as npm's docs tell a user without root to do.
    let home = world.path("home");
    std::fs::create_dir_all(&home).expect("home");
    let home = home.canonicalize().expect("home");
    let prefix = home.join(".npm-global");
    let prefix_bin = prefix.join("bin");
    let path = std::env::join_paths(
        [fresh_bin(&home, &node), prefix_bin.clone()]
            .into_iter()
            .chain(world.host_dirs())
            .chain(["/usr/bin".into(), "/bin".into()]),
    )
    .expect("PATH");
    assert_nothing_of_notesoup_or_rust_on(&path);
    let fresh = |program: &str| {
        let mut command = Command::new(program);
        command
            .env_clear()
            .env("HOME", &home)
            .env("PATH", &path)
            .current_dir(&home);
        command
    };

    // The registry holds the platform package of this build's dist.
    let registry = Registry::start(&node, &verdaccio, &home.join("registry"));
    std::fs::write(
        home.join(".npmrc"),
        format!("{}prefix={}\n", registry.npmrc(&node), prefix.display()),
    )
    .expect(".npmrc");
    let tarball = dist_tarballs(&dist)
        .into_iter()
        .find(|t| t.ends_with(format!("{PACKAGE}-{version}.tgz")))
        .unwrap_or_else(|| panic!("no {PACKAGE}-{version}.tgz in the dist: {HOW_TO_DIST}"));
    succeed(fresh("npm").arg("publish").arg(&tarball), "npm publish");

    // The documented install, first half: the binaries land in the prefix,
    // and notesoup-dsh on PATH is the package's copy and nothing else.
    succeed(
        fresh("npm").args(["install", "-g", PACKAGE]),
        "npm install -g notesoup-linux-x64",
    );
    let installed = prefix.join("lib/node_modules").join(PACKAGE);
    for name in ["notesoup", "notesoup-pi", "notesoup-dsh"] {
        assert_eq!(
            prefix_bin.join(name).canonicalize().expect("linked"),
            installed.join("bin").join(name),
            "{name} on PATH is the package's"
        );
    }
    assert_eq!(
        found_on(&path, "notesoup-dsh"),
        std::slice::from_ref(&prefix_bin)
    );
    let dist_binary = dist.join("npm").join(PACKAGE).join("bin/notesoup-dsh");
    assert!(
        std::fs::read(installed.join("bin/notesoup-dsh")).expect("installed binary")
            == std::fs::read(&dist_binary).expect("dist binary"),
        "the installed notesoup-dsh is the dist's {}",
        dist_binary.display()
    );

    // Second half: the binary writes its embedded bundle and adds it to the
    // profile (`headless`, the profile the harness drives).
    world.on_a_fresh_machine(home.clone(), path.clone());
    let output = succeed(
        world
            .command("notesoup-dsh")
            .args(["install", "--profile", "headless"]),
        "notesoup-dsh install --profile headless",
    );
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(
        said.contains("notesoup-dsh: added to profile headless with notesoup's compaction engine"),
        "{said}"
    );
    let bundle = home.join(".local/share/notesoup/dsh-bundle");
    assert!(
        bundle.join("index.js").is_file(),
        "the default bundle folder"
    );

    // The profile links that bundle as its package `notesoup-dsh` and names
    // no binary: its sidecar is `notesoup-dsh` on PATH, which on this
    // machine is only the package's (and the environment names no
    // NOTESOUP_DSH_BIN).
    let profile = world.path("dsh-home/profiles/headless");
    assert_eq!(
        profile
            .join("node_modules/notesoup-dsh")
            .canonicalize()
            .expect("the profile's notesoup-dsh"),
        bundle
    );
    let config = world.dumped_config("overlay-npm-dump.yml");
    for row in [
        "- id: notesoup\n  name: notesoup-dsh\n  config: {}\n",
        "- id: notesoup-engine\n  name: notesoup-dsh/engine\n",
        COMPACTION_OFF,
    ] {
        assert!(config.contains(row), "{row} in:\n{config}");
    }
    assert!(!config.contains("binary:"), "{config}");

    // A real headless session on the profile: the first request carries
    // notesoup's boot, and a notes_write lands on disk.
    let outcome = world.run(&Scenario {
        label: "npm",
        script: json!([
            {"tool": "notes_write", "args": {"address": "@human/from-npm.md", "content": "# From npm\nWritten through the npm install."}},
            {"text": "Noted."}
        ]),
        inputs: &["remember this"],
        resume: None,
        engine: true,
        profile: true,
    });
    assert_eq!(outcome.report["text"], "Noted.");
    let (id, log) = world.checked_log(&outcome);
    let first = message_texts(&outcome.requests[0]);
    let window = format!("Current context window id: dsh:{id}:1\n");
    assert!(
        first
            .iter()
            .any(|t| t.contains("<context_window>\n") && t.contains(&window)),
        "the first request carries the boot: {first:?}"
    );
    let wrote = tool_results(&log, "notes_write");
    assert_eq!(wrote.len(), 1, "{wrote:?}");
    let note = std::fs::read_to_string(world.path("notes/human/from-npm.md"))
        .expect("the note is on disk");
    assert!(
        note.ends_with("# From npm\nWritten through the npm install."),
        "{note}"
    );

    // The documented uninstall: the profile first, then the package.
    succeed(
        world
            .command("dsh")
            .args(["plugin", "--profile", "headless", "remove", "notesoup-dsh"]),
        "dsh plugin --profile headless remove notesoup-dsh",
    );
    let config = world.dumped_config("overlay-npm-dump.yml");
    assert!(!config.contains("notesoup"), "{config}");
    assert!(
        !config.contains(COMPACTION_OFF),
        "dsh's own compaction is back on: {config}"
    );
    let left = files_mentioning_notesoup(&world.path("dsh-home"));
    assert!(left.is_empty(), "left in the dsh home: {left:?}");

    succeed(
        fresh("npm").args(["uninstall", "-g", PACKAGE]),
        "npm uninstall -g notesoup-linux-x64",
    );
    assert_eq!(notesoup_entries(&prefix_bin), Vec::<String>::new());
    assert_eq!(
        notesoup_entries(&prefix.join("lib/node_modules")),
        Vec::<String>::new()
    );
    for name in NOT_ON_A_FRESH_MACHINE {
        assert_eq!(found_on(&path, name), Vec::<PathBuf>::new(), "{name}");
    }
    // What stays is the bundle folder the install wrote, as the docs say;
    // removing it leaves nothing of notesoup in the user's data folder.
    assert!(bundle.join("index.js").is_file());
    std::fs::remove_dir_all(home.join(".local/share/notesoup")).expect("rm -r");
    assert_eq!(
        notesoup_entries(&home.join(".local/share")),
        Vec::<String>::new()
    );
}
