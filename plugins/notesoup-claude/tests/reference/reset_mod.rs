//! The optional reset mod (`mod/`, plugin `notesoup-reset`) as Claude Code
//! 2.1.332 sees it: `claude plugin validate --strict` reads its hooks module
//! against the real mod API, and `claude plugin test` runs its
//! `tests/register.test.ts` with the real kit (`claude-code/testing`).

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::claude::{command, run};
use crate::support::{Sandbox, copy_dir, notesoup_bin};

/// A copy of the mod directory with the built binary in `bin/`, as
/// `cargo xtask claude-plugin` lays it out.
pub fn mod_copy(sb: &Sandbox) -> PathBuf {
    let copy = sb.home.join("mod-copy");
    copy_dir(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("mod"),
        &copy,
    );
    std::fs::create_dir_all(copy.join("bin")).unwrap();
    std::fs::copy(notesoup_bin(), copy.join("bin/notesoup")).unwrap();
    copy
}

fn succeeded(output: &std::process::Output) -> String {
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "exit {}: {stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

#[test]
fn the_mod_validates_strictly_and_uses_only_what_it_means_to() {
    let sb = Sandbox::new();
    let dir = mod_copy(&sb);
    let report: Value = serde_json::from_str(&succeeded(&run(&mut command(
        &sb,
        None,
        &[
            "plugin",
            "validate",
            dir.to_str().unwrap(),
            "--strict",
            "--json",
        ],
    ))))
    .unwrap();
    assert_eq!(report["success"], true, "{report}");
    assert_eq!(report["manifest"]["errors"], json!([]));
    assert_eq!(report["manifest"]["warnings"], json!([]));
    assert_eq!(
        report["provides"]["modules"],
        json!([{"path": "hooks/register.ts"}])
    );
    let hooks = &report["contents"][0];
    assert_eq!(hooks["errors"], json!([]));
    assert_eq!(hooks["warnings"], json!([]));
    let uses = &hooks["modules"][0]["uses"];
    assert_eq!(
        uses["events"],
        json!([
            "session.start",
            "turn.start",
            "turn.complete",
            "session.measure",
            "session.compact"
        ])
    );
    // Every decision goes through the binary; the mod touches no files,
    // network, settings or state of its own.
    assert_eq!(
        uses["calls"],
        json!([
            "process.hookEnv",
            "process.run",
            "session.compact",
            "session.cwd",
            "session.id",
            "session.info",
            "ui.log"
        ])
    );
    assert_eq!(uses["hosts"]["named"], json!([]));
    assert_eq!(uses["state"], json!({"reads": [], "writes": []}));
}

#[test]
fn the_mods_tests_pass_with_the_real_kit() {
    let sb = Sandbox::new();
    let dir = mod_copy(&sb);
    let stdout = succeeded(&run(&mut command(
        &sb,
        None,
        &["plugin", "test", dir.to_str().unwrap()],
    )));
    assert!(stdout.contains(" 6 pass\n"), "{stdout}");
    assert!(stdout.contains(" 0 fail\n"), "{stdout}");
}
