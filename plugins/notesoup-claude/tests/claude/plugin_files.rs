//! The plugin directory: the shapes Claude Code reads, kept in step with the
//! binary and with core's canonical assets.

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::support::{Sandbox, notesoup_bin, system_message};

fn plugin_file(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("plugin")
        .join(path)
}

fn json_file(path: PathBuf) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn the_dream_skill_and_playbook_are_byte_identical_to_core() {
    assert_eq!(
        std::fs::read_to_string(plugin_file("playbook.md")).unwrap(),
        notesoup_core::dream::DreamAsset::Playbook.text()
    );
    assert_eq!(
        std::fs::read_to_string(plugin_file("skills/dream/SKILL.md")).unwrap(),
        notesoup_core::dream::DreamAsset::DreamSkill.text()
    );
}

#[test]
fn manifests_carry_the_crate_version() {
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(
        json_file(plugin_file(".claude-plugin/plugin.json"))["version"],
        version
    );
    let market = json_file(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".claude-plugin/marketplace.json"),
    );
    assert_eq!(market["plugins"][0]["version"], version);
    assert_eq!(market["plugins"][0]["source"], "./plugin");
    let reset =
        json_file(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("mod/.claude-plugin/plugin.json"));
    assert_eq!(reset["name"], "notesoup-reset");
    assert_eq!(reset["version"], version);
    assert_eq!(market["plugins"][1]["name"], "notesoup-reset");
    assert_eq!(market["plugins"][1]["version"], version);
    assert_eq!(market["plugins"][1]["source"], "./mod");
}

#[test]
fn the_reset_mod_names_its_module_only() {
    let hooks = json_file(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("mod/hooks/hooks.json"));
    assert_eq!(hooks["modules"], json!(["./register.ts"]));
    assert!(hooks.get("hooks").is_none());
}

#[test]
fn hooks_run_the_binary_in_exec_form_for_every_event_it_handles() {
    let hooks = json_file(plugin_file("hooks/hooks.json"));
    let events = hooks["hooks"].as_object().unwrap();
    let expect = [
        ("SessionStart", "session-start"),
        ("UserPromptSubmit", "user-prompt-submit"),
        ("PostToolBatch", "post-tool-batch"),
        ("Stop", "stop"),
        ("SessionEnd", "session-end"),
    ];
    assert_eq!(events.len(), expect.len());
    let sb = Sandbox::new();
    for (event, arg) in expect {
        let entries = events[event].as_array().unwrap();
        assert_eq!(entries.len(), 1, "{event}");
        let matcher = (event == "SessionStart").then_some("startup|resume|clear|compact");
        assert_eq!(
            entries[0].get("matcher").and_then(Value::as_str),
            matcher,
            "{event}"
        );
        assert_eq!(
            entries[0]["hooks"],
            json!([{"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/bin/notesoup", "args": ["hook", arg]}])
        );
        // The binary accepts the event and answers an empty input with a
        // visible complaint, exit 0.
        let output = sb.run(&["hook", arg], b"");
        assert!(output.status.success(), "{arg}");
        let out: Value = serde_json::from_slice(&output.stdout).unwrap();
        assert!(system_message(&out).starts_with("notesoup: unreadable hook input"));
    }
}

#[test]
fn the_mcp_server_is_always_loaded() {
    assert_eq!(
        json_file(plugin_file(".mcp.json")),
        json!({"mcpServers": {"notesoup": {
            "type": "stdio", "command": "${CLAUDE_PLUGIN_ROOT}/bin/notesoup", "args": ["mcp"], "alwaysLoad": true}}})
    );
}

#[test]
fn skills_have_a_name_and_a_description() {
    for skill in ["memory", "dream", "fresh-window"] {
        let text =
            std::fs::read_to_string(plugin_file(&format!("skills/{skill}/SKILL.md"))).unwrap();
        let front = text
            .strip_prefix("---\n")
            .unwrap()
            .split_once("\n---\n")
            .unwrap()
            .0;
        assert!(
            front.lines().any(|l| l == format!("name: {skill}")),
            "{skill}"
        );
        assert!(
            front
                .lines()
                .any(|l| l.starts_with("description: ") && l.len() > 40),
            "{skill}"
        );
    }
    let fresh = std::fs::read_to_string(plugin_file("skills/fresh-window/SKILL.md")).unwrap();
    assert!(fresh.trim_end().ends_with("ask the human to run `/clear`. The\nnext window boots from your notes and continues the same session notes."));
}

#[test]
fn the_binary_reports_its_version() {
    let output = std::process::Command::new(notesoup_bin())
        .arg("--version")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8(output.stdout).unwrap(),
        format!(
            "notesoup {} (Claude Code 2.1.332)\n",
            env!("CARGO_PKG_VERSION")
        )
    );
}

/// Every file under `dir`, relative to `base`.
fn files_under(base: &std::path::Path, dir: &std::path::Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files_under(base, &path, out);
        } else {
            out.push(
                path.strip_prefix(base)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned(),
            );
        }
    }
}

#[test]
fn install_plugin_lays_out_the_whole_marketplace_in_a_stable_place() {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut in_repo = Vec::new();
    for dir in ["plugin", "mod", ".claude-plugin"] {
        files_under(&root, &root.join(dir), &mut in_repo);
    }
    in_repo.sort();
    let mut embedded: Vec<String> = notesoup_claude::install::FILES
        .iter()
        .map(|(path, _)| (*path).to_owned())
        .collect();
    embedded.sort();
    assert_eq!(embedded, in_repo, "every plugin file is embedded");

    let sb = crate::support::Sandbox::new();
    let dir = sb.home.join("market");
    let output = sb.run(&["install-plugin", "--dir", dir.to_str().unwrap()], b"");
    assert!(output.status.success());
    let said = String::from_utf8(output.stdout).unwrap();
    assert!(
        said.contains(&format!("claude plugin marketplace add {}", dir.display())),
        "{said}"
    );
    for (path, bytes) in notesoup_claude::install::FILES {
        assert_eq!(std::fs::read(dir.join(path)).unwrap(), bytes, "{path}");
        assert_eq!(std::fs::read(root.join(path)).unwrap(), bytes, "{path}");
    }
    for binary in notesoup_claude::install::BINARIES {
        let version = std::process::Command::new(dir.join(binary))
            .arg("--version")
            .output()
            .unwrap();
        assert!(
            String::from_utf8(version.stdout)
                .unwrap()
                .starts_with("notesoup "),
            "{binary}"
        );
    }
    // Installing again replaces in place.
    assert!(
        sb.run(&["install-plugin", "--dir", dir.to_str().unwrap()], b"")
            .status
            .success()
    );
    // The default place.
    let output = sb.run(&["install-plugin"], b"");
    assert!(output.status.success());
    assert!(
        sb.home
            .join(".local/share/notesoup/claude-marketplace/plugin/bin/notesoup")
            .is_file()
    );
}

/// `install-plugin` never writes through a link planted at one of its
/// files (the file it pointed at keeps its bytes and its mode), refuses a
/// link where one of its folders belongs, refuses a folder holding files
/// it did not write unless `--force`, and installs again over its own.
#[test]
fn install_plugin_writes_only_its_own_files_and_never_through_links() {
    use notesoup_test_support::planted::{self, Victim};
    use std::os::unix::fs::symlink;
    let sb = Sandbox::new();
    let dir = sb.home.join("market");
    let dir_arg = dir.to_str().unwrap();
    let install = |args: &[&str]| {
        let mut full = vec!["install-plugin"];
        full.extend_from_slice(args);
        sb.run(&full, b"")
    };
    let said = |output: &std::process::Output| String::from_utf8_lossy(&output.stderr).into_owned();
    let ok = install(&["--dir", dir_arg]);
    assert!(ok.status.success(), "{}", said(&ok));

    let victim = Victim::at(sb.home.join(".bashrc"));
    let planted: Vec<&str> = notesoup_claude::install::FILES
        .iter()
        .map(|(path, _)| *path)
        .chain(notesoup_claude::install::BINARIES)
        .collect();
    for file in planted {
        victim.plant_at(&dir.join(file));
        let again = install(&["--dir", dir_arg]);
        assert!(again.status.success(), "{file}: {}", said(&again));
        victim.assert_untouched(file);
        planted::assert_replaced(&dir.join(file), file);
    }
    // Links planted at the temporary names an installer of fixed names
    // would use (`.notesoup-install-<pid>.tmp`, for the process ids the
    // next process is likely to get): never followed.
    victim.reset();
    let next_pid = std::process::Command::new("true")
        .spawn()
        .and_then(|mut child| {
            let pid = child.id();
            child.wait().map(|_| pid)
        })
        .unwrap();
    for pid in next_pid..next_pid + 4000 {
        let planted = dir.join(format!(".claude-plugin/.notesoup-install-{pid}.tmp"));
        symlink(victim.path(), planted).unwrap();
    }
    let again = install(&["--dir", dir_arg]);
    assert!(again.status.success(), "{}", said(&again));
    victim.assert_untouched("the temporary names");
    assert_eq!(
        std::fs::read(dir.join(".claude-plugin/marketplace.json")).unwrap(),
        notesoup_claude::install::FILES[0].1
    );

    // No temporary file is left behind.
    let leftovers: Vec<_> = std::fs::read_dir(dir.join("plugin"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".tmp"))
        .collect();
    assert_eq!(leftovers, Vec::<String>::new());

    planted::assert_linked_folder_refused(
        &dir.join("mod/bin"),
        &sb.home.join("elsewhere"),
        &[vec!["--dir", dir_arg], vec!["--dir", dir_arg, "--force"]],
        install,
    );

    let foreign = sb.home.join("project-files");
    let foreign_arg = foreign.to_str().unwrap();
    planted::assert_foreign_folder_refused(
        &foreign,
        ".claude-plugin/marketplace.json",
        "theirs",
        &[vec!["--dir", foreign_arg]],
        &[],
        install,
    );
    assert!(!foreign.join("plugin").exists());
    let forced = install(&["--dir", foreign_arg, "--force"]);
    assert!(forced.status.success(), "{}", said(&forced));
    assert!(foreign.join("plugin/bin/notesoup").is_file());
}
