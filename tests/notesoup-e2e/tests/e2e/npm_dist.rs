//! The packages `cargo xtask dist` lays out, installed as users install
//! them: published to a real npm registry (verdaccio) on 127.0.0.1, then
//! `pi install npm:notesoup-pi` and Claude Code's marketplace install, in a
//! fresh HOME whose PATH holds Node and npm but no Rust toolchain and no
//! notesoup binary. Feature `npm-dist`; `cargo xtask ci` packages the test
//! build's binaries (`cargo xtask dist --profile dev --no-build`), installs
//! the hosts and sets the variables below. A missing piece fails the test.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::pi_support::{World, find_note, text, tool, wait_bounded};
use notesoup_test_support::child::assert_succeeded;
use notesoup_test_support::fake_anthropic::{FakeApi, Reply, texts};
use notesoup_test_support::npm_registry::{
    HOW_TO_DIST, Registry, assert_nothing_of_notesoup_or_rust_on, dist_tarballs, fresh_bin,
    required_path as var,
};

const HOSTS: &str = "run `eval \"$(cargo xtask hosts pi)\"`, `eval \"$(cargo xtask hosts verdaccio)\"` and `eval \"$(cargo xtask claude-hosts claude)\"`";

/// A machine with no Rust and no notesoup: HOME is the world's temporary
/// folder, PATH is `HOME/bin` (Node 22 as `node`, npm) then `/usr/bin:/bin`,
/// checked to hold neither cargo, rustc nor any notesoup binary.
fn fresh_path(home: &Path, node: &Path) -> OsString {
    let bin = fresh_bin(home, node);
    let path = std::env::join_paths([bin, "/usr/bin".into(), "/bin".into()]).unwrap();
    assert_nothing_of_notesoup_or_rust_on(&path);
    path
}

/// `command` in the fresh machine: nothing inherited but what is set here.
fn fresh(command: impl AsRef<std::ffi::OsStr>, home: &Path, path: &OsString) -> Command {
    let mut cmd = Command::new(command);
    cmd.env_clear()
        .env("HOME", home)
        .env("PATH", path)
        .env("PI_CODING_AGENT_DIR", home.join("agent"))
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// Runs `cmd` (bounded) and returns its stdout; a failure shows both streams.
fn succeed(mut cmd: Command, what: &str) -> String {
    let output: Output = wait_bounded(cmd.spawn().expect(what), what);
    assert_succeeded(&output, what);
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn the_npm_packages_install_into_real_pi_and_claude_code_on_a_fresh_machine() {
    let dist = var("NOTESOUP_DIST", HOW_TO_DIST);
    let verdaccio = var("NOTESOUP_VERDACCIO", HOSTS);
    let node = var("NOTESOUP_NODE22", HOSTS);
    let pi_cli = var("NOTESOUP_PI_SDK", HOSTS).join("dist/cli.js");
    let claude = var("NOTESOUP_CLAUDE", HOSTS);
    let version = env!("CARGO_PKG_VERSION");

    let mut world = World::new(200_000);
    let home = world.temp.path().canonicalize().unwrap();
    let path = fresh_path(&home, &node);

    // The registry, and npm pointed at it as a user would (`~/.npmrc`).
    let registry = Registry::start(&node, &verdaccio, &home.join("registry"));
    std::fs::write(home.join(".npmrc"), registry.npmrc(&node)).unwrap();
    let tarballs = dist_tarballs(&dist);
    let names: Vec<String> = tarballs
        .iter()
        .map(|t| t.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    // This machine's platform package, and any other platform's of a
    // release built for several (`cargo xtask dist --target …`).
    let others: Vec<&String> = names
        .iter()
        .filter(|n| n.starts_with("notesoup-linux-") && !n.starts_with("notesoup-linux-x64-"))
        .collect();
    assert!(
        others
            .iter()
            .all(|n| *n == &format!("notesoup-linux-arm64-{version}.tgz")),
        "{others:?}"
    );
    let ours: Vec<&String> = names.iter().filter(|n| !others.contains(n)).collect();
    assert_eq!(
        ours,
        [
            &format!("notesoup-claude-{version}.tgz"),
            &format!("notesoup-claude-reset-{version}.tgz"),
            &format!("notesoup-linux-x64-{version}.tgz"),
            &format!("notesoup-pi-{version}.tgz"),
        ]
    );
    for tarball in &tarballs {
        let mut publish = fresh("npm", &home, &path);
        publish.arg("publish").arg(tarball).current_dir(&home);
        succeed(publish, "npm publish");
    }

    // Pi's command line on the fresh machine, which must succeed.
    let pi = |args: [&str; 2]| {
        let mut cmd = fresh(&node, &home, &path);
        cmd.arg(&pi_cli).args(args).current_dir(&home);
        succeed(cmd, &format!("pi {}", args.join(" ")))
    };

    // Pi: one command.
    pi(["install", "npm:notesoup-pi"]);
    let agent = home.join("agent");
    let settings = read_json(&agent.join("settings.json"));
    assert_eq!(settings["packages"], json!(["npm:notesoup-pi"]));
    let modules = agent.join("npm/node_modules");
    let sidecar = modules.join("notesoup-linux-x64/bin/notesoup-pi");
    assert!(sidecar.is_file(), "the platform package's sidecar");
    // Only this machine's platform package is installed.
    assert!(!modules.join("notesoup-linux-arm64").exists());
    // The dream skill reads the playbook beside it, as installed.
    let dream_skill = modules.join("notesoup-pi/skills/dream/SKILL.md");
    assert!(
        std::fs::read_to_string(&dream_skill)
            .unwrap()
            .contains("`../../playbook.md`")
    );
    assert!(
        dream_skill
            .parent()
            .unwrap()
            .join("../../playbook.md")
            .is_file()
    );

    // The agent loop on the installed copy: the shim must find the
    // platform package's sidecar (NOTESOUP_PI_BIN names nothing, PATH has
    // none).
    world.package = PathBuf::from("npm:notesoup-pi");
    world.sidecar = home.join("no-notesoup-pi-here");
    world.env = vec![("PATH".to_owned(), path.clone())];
    let report = world.run(
        None,
        json!([
            {"respond": [
                tool("notes_write", json!({"address": "@project/plan.md", "content": "# Plan\nShip the packages.\n"})),
                text("Noted."),
            ]},
            {"prompt": "Remember the plan."},
            {"respond": [tool("wipe_memory", json!({})), text("Fresh.")]},
            {"prompt": "Please wipe."},
            {"respond": [text("I see the plan in my notes.")]},
            {"prompt": "What do you know?"},
        ]),
    );
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert!(
        !report
            .notice_texts()
            .iter()
            .any(|n| n.contains("unavailable")),
        "{:?}",
        report.notices
    );
    assert!(find_note(&world.notes_home().join("project"), "plan.md").is_some());
    assert!(report.kinds().iter().any(|k| k == "compaction"), "the wipe");
    let fresh_window: String = report.requests[3].iter().map(|(_, t)| t.as_str()).collect();
    assert!(fresh_window.contains("<context_window>"), "{fresh_window}");
    assert!(
        fresh_window.contains("@project/plan.md"),
        "the fresh boot lists the note"
    );

    // A package and binary of different versions: the documented notice,
    // Pi carries on.
    let manifest = modules.join("notesoup-pi/package.json");
    let original = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &manifest,
        original.replace(
            &format!("\"version\": \"{version}\""),
            "\"version\": \"0.0.1\"",
        ),
    )
    .unwrap();
    let report = world.run(
        None,
        json!([{"respond": [text("Plain Pi.")]}, {"prompt": "Hello."}]),
    );
    assert_eq!(
        report.notice_texts(),
        [format!(
            "notesoup unavailable: {} is version {version} but the notesoup-pi Pi package is 0.0.1; \
             install matching versions: `pi install npm:notesoup-pi@{version}`, or a notesoup-pi binary \
             of version 0.0.1 (`cargo install notesoup-pi --version 0.0.1`)",
            sidecar.display()
        )]
    );
    std::fs::write(&manifest, original).unwrap();

    // And the uninstall leaves nothing.
    pi(["remove", "npm:notesoup-pi"]);
    let settings = std::fs::read_to_string(agent.join("settings.json")).unwrap();
    assert!(!settings.contains("notesoup"), "{settings}");
    let left: Vec<_> = std::fs::read_dir(&modules)
        .map(|d| {
            d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n.contains("notesoup"))
                .collect()
        })
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
    assert_nothing_of_notesoup_or_rust_on(&path);

    // Claude Code: two commands, the marketplace then the plugin.
    let project = home.join("project");
    let claude_cmd = |args: &[&str]| {
        let mut cmd = fresh(&claude, &home, &path);
        cmd.args(args)
            .env("PI_NOTES_HOME", world.notes_home())
            .current_dir(&project);
        cmd
    };
    let market = dist.join("marketplace");
    succeed(
        claude_cmd(&["plugin", "marketplace", "add", market.to_str().unwrap()]),
        "claude plugin marketplace add",
    );
    // The plugin, then the optional reset mod from the same marketplace,
    // its own binary with it.
    for plugin in ["notesoup@notesoup", "notesoup-reset@notesoup"] {
        let installed = succeed(
            claude_cmd(&["plugin", "install", plugin]),
            &format!("claude plugin install {plugin}"),
        );
        assert!(
            installed.contains(&format!("Successfully installed plugin: {plugin}")),
            "{installed}"
        );
    }
    let plugins = succeed(claude_cmd(&["plugin", "list"]), "claude plugin list");
    assert!(plugins.contains("notesoup-reset@notesoup"), "{plugins}");
    let list = succeed(claude_cmd(&["mcp", "list"]), "claude mcp list");
    let line = list
        .lines()
        .find(|l| l.starts_with("plugin:notesoup:notesoup:"))
        .unwrap_or_else(|| panic!("no notesoup server in:\n{list}"));
    assert!(line.ends_with("/bin/notesoup mcp - ✔ Connected"), "{line}");
    assert!(
        line.contains(&home.join(".claude").display().to_string()),
        "{line}"
    );

    // The SessionStart hook of the installed plugin boots a headless turn.
    let api = FakeApi::start();
    api.script(vec![Reply::text("Started.")]);
    let mut turn = claude_cmd(&["-p", "start the work", "--output-format", "json"]);
    turn.env("ANTHROPIC_API_KEY", "sk-notesoup-test")
        .env("ANTHROPIC_BASE_URL", &api.url);
    succeed(turn, "claude -p");
    let requests = api.take_requests();
    assert!(
        texts(&requests[0])
            .iter()
            .any(|t| t.starts_with("SessionStart hook additional context: <context_window>")),
        "{:#?}",
        texts(&requests[0])
    );

    // Uninstalled, nothing of notesoup is left in Claude Code's settings.
    succeed(
        claude_cmd(&["plugin", "uninstall", "notesoup-reset@notesoup"]),
        "claude plugin uninstall notesoup-reset",
    );
    succeed(
        claude_cmd(&["plugin", "uninstall", "notesoup@notesoup"]),
        "claude plugin uninstall",
    );
    succeed(
        claude_cmd(&["plugin", "marketplace", "remove", "notesoup"]),
        "claude plugin marketplace remove",
    );
    for file in [
        ".claude/settings.json",
        ".claude/plugins/installed_plugins.json",
        ".claude/plugins/known_marketplaces.json",
    ] {
        if let Ok(text) = std::fs::read_to_string(home.join(file)) {
            assert!(!text.contains("notesoup"), "{file}: {text}");
        }
    }
    let list = succeed(claude_cmd(&["mcp", "list"]), "claude mcp list");
    assert!(!list.contains("notesoup"), "{list}");
    assert_nothing_of_notesoup_or_rust_on(&path);
}
