//! The plugin as Claude Code 2.1.332 sees it: `claude plugin validate
//! --strict`, a local marketplace install, and `claude mcp list` spawning and
//! health-checking `notesoup mcp` from the copied plugin directory.

use serde_json::{Value, json};

use crate::claude::{command, run, stdout_of, validate_strictly};
use crate::support::Sandbox;

#[test]
fn validate_strict_passes_and_lists_every_component() {
    let _terminal = crate::hosts::shared();
    let sb = Sandbox::new();
    let plugin = sb.plugin_copy();
    let report = validate_strictly(&sb, &plugin);
    let provides = &report["provides"];
    let events: Vec<&str> = provides["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["event"].as_str().unwrap())
        .collect();
    assert_eq!(
        events,
        [
            "SessionStart",
            "UserPromptSubmit",
            "PostToolBatch",
            "Stop",
            "SessionEnd"
        ]
    );
    for hook in provides["hooks"].as_array().unwrap() {
        assert_eq!(hook["command"], "${CLAUDE_PLUGIN_ROOT}/bin/notesoup");
        assert_eq!(hook["args"][0], "hook");
    }
    assert_eq!(provides["mcpServers"][0]["name"], "notesoup");
    assert_eq!(provides["mcpServers"][0]["args"], json!(["mcp"]));
    let mut skills: Vec<&str> = provides["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    skills.sort_unstable();
    assert_eq!(
        skills,
        ["notesoup:dream", "notesoup:fresh-window", "notesoup:memory"]
    );
    assert_eq!(provides["bin"], json!(["notesoup"]));
    // The catalog checks: README and license present (only the icon is missing).
    let blocking: Vec<&Value> = report["directory"]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["blocking"] == true)
        .collect();
    assert!(blocking.is_empty(), "{blocking:?}");
}

#[test]
fn a_local_marketplace_installs_and_the_server_is_healthy() {
    let _terminal = crate::hosts::shared();
    let sb = Sandbox::new();
    // The marketplace as `notesoup install-plugin` lays it out, away from
    // any build directory.
    let market = sb.home.join("marketplace");
    let installed = sb.run(&["install-plugin", "--dir", market.to_str().unwrap()], b"");
    assert!(installed.status.success());
    let market_arg = market.to_str().unwrap();
    stdout_of(&run(&mut command(
        &sb,
        None,
        &["plugin", "validate", market_arg, "--strict"],
    )));
    stdout_of(&run(&mut command(
        &sb,
        None,
        &["plugin", "marketplace", "add", market_arg],
    )));
    for plugin in ["notesoup@notesoup", "notesoup-reset@notesoup"] {
        let installed = stdout_of(&run(&mut command(
            &sb,
            None,
            &["plugin", "install", plugin],
        )));
        assert!(
            installed.contains(&format!("Successfully installed plugin: {plugin}")),
            "{installed}"
        );
    }
    let list = stdout_of(&run(&mut command(&sb, None, &["mcp", "list"])));
    let line = list
        .lines()
        .find(|l| l.starts_with("plugin:notesoup:notesoup:"))
        .unwrap_or_else(|| panic!("no notesoup server in:\n{list}"));
    assert!(
        line.ends_with("/plugin/bin/notesoup mcp - ✔ Connected"),
        "{line}"
    );
}
