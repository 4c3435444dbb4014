//! Running the real Claude Code offline: a temporary HOME, no telemetry or
//! updates, the plugin loaded from a copied directory, the model a fake on
//! 127.0.0.1, every run bounded in time.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::hosts::claude;
use crate::support::{Sandbox, spawn};

/// No single Claude Code run may take longer.
const RUN_TIMEOUT: Duration = Duration::from_secs(120);

/// `claude <args>` in the sandbox, with the fake API at `api_url` if given.
pub fn command(sb: &Sandbox, api_url: Option<&str>, args: &[&str]) -> Command {
    let mut cmd = Command::new(claude());
    cmd.args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &sb.home)
        .env("PI_NOTES_HOME", &sb.notes)
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .current_dir(&sb.project);
    if let Some(url) = api_url {
        cmd.env("ANTHROPIC_API_KEY", "sk-notesoup-test")
            .env("ANTHROPIC_BASE_URL", url);
    }
    cmd
}

/// Runs `cmd` to completion, killing it at the timeout.
pub fn run(cmd: &mut Command) -> Output {
    let child = spawn(
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
    );
    let pid = child.id();
    let started = Instant::now();
    let waiter = std::thread::spawn(move || child.wait_with_output());
    while !waiter.is_finished() {
        if started.elapsed() > RUN_TIMEOUT {
            // The child is ours; end it so the test fails instead of hanging.
            let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
            panic!("claude did not finish within {RUN_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    waiter.join().unwrap().unwrap()
}

/// One headless turn, `claude -p <prompt> --output-format json …`, with the
/// plugin at `plugin`; returns the result object.
pub fn turn(sb: &Sandbox, api_url: &str, plugin: &Path, prompt: &str, extra: &[&str]) -> Value {
    let mut args = vec![
        "-p",
        prompt,
        "--output-format",
        "json",
        "--plugin-dir",
        plugin.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let output = run(&mut command(sb, Some(api_url), &args));
    assert!(
        output.status.success(),
        "claude -p {prompt:?} failed: {}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// The plugin data directory Claude Code gives a `--plugin-dir` plugin.
pub fn inline_data_dir(sb: &Sandbox) -> PathBuf {
    sb.home.join(".claude/plugins/data/notesoup-inline")
}
