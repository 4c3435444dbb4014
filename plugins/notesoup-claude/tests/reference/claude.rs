//! Running the real Claude Code offline: a temporary HOME, no telemetry or
//! updates, the plugin loaded from a copied directory, the model a fake on
//! 127.0.0.1, every run bounded in time.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use notesoup_test_support::child::assert_succeeded;
use serde_json::Value;

use crate::hosts::claude;
use crate::support::{Sandbox, spawn};

/// How Claude Code names the plugin's MCP tools: this prefix, then the
/// tool's own name.
pub const PREFIX: &str = "mcp__plugin_notesoup_notesoup__";

/// The name Claude Code gives the plugin's MCP tool `name`.
pub fn mcp_tool(name: &str) -> String {
    format!("{PREFIX}{name}")
}

/// How a notesoup boot reaches the model: the start of SessionStart's
/// additional context.
pub const BOOT_TEXT: &str = "SessionStart hook additional context: <context_window>";

/// The one text of `texts` that starts with `prefix`.
pub fn one_starting(texts: &[String], prefix: &str) -> String {
    let found: Vec<&String> = texts.iter().filter(|t| t.starts_with(prefix)).collect();
    assert_eq!(found.len(), 1, "{prefix:?} in {texts:#?}");
    found[0].clone()
}

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
    let output = run(&mut turn_command(sb, api_url, plugin, prompt, extra));
    assert_succeeded(&output, format_args!("claude -p {prompt:?}"));
    serde_json::from_slice(&output.stdout).unwrap()
}

/// `claude -p <prompt> --output-format json --plugin-dir <plugin> <extra>`
/// in the sandbox, with the fake API at `api_url`.
pub fn turn_command(
    sb: &Sandbox,
    api_url: &str,
    plugin: &Path,
    prompt: &str,
    extra: &[&str],
) -> Command {
    let mut args = vec![
        "-p",
        prompt,
        "--output-format",
        "json",
        "--plugin-dir",
        plugin.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    command(sb, Some(api_url), &args)
}

/// The plugin data directory Claude Code gives a `--plugin-dir` plugin.
pub fn inline_data_dir(sb: &Sandbox) -> PathBuf {
    sb.home.join(".claude/plugins/data/notesoup-inline")
}

/// The stdout of a Claude Code run that must succeed; a failure shows both
/// streams.
pub fn stdout_of(output: &Output) -> String {
    assert_succeeded(output, "claude");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// `claude plugin validate <dir> --strict --json`: the report of a plugin
/// that passes with no manifest error or warning.
pub fn validate_strictly(sb: &Sandbox, dir: &Path) -> Value {
    let report: Value = serde_json::from_str(&stdout_of(&run(&mut command(
        sb,
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
    assert_eq!(report["manifest"]["errors"], serde_json::json!([]));
    assert_eq!(report["manifest"]["warnings"], serde_json::json!([]));
    report
}

/// A recorded session with one prompt and its answer, for an MCP client
/// that sends no tool-use id (its calls resolve to the project's latest
/// session).
pub fn parser_session(sb: &Sandbox, session: &str) {
    sb.start_session(
        session,
        &[
            crate::support::user_row("u1", "h1", "fix the parser"),
            serde_json::json!({"type":"assistant","uuid":"a1","parentUuid":"u1","isSidechain":false,"message":{"id":"m1","model":"claude-opus-5-5","role":"assistant","content":[{"type":"text","text":"Looking at the parser."}]}}).to_string(),
        ],
    );
}

/// Headless Claude Code in a sandbox with the plugin copied and its model a
/// fake API.
pub struct Headless {
    pub sb: Sandbox,
    pub plugin: PathBuf,
    pub api: notesoup_test_support::fake_anthropic::FakeApi,
}

impl Headless {
    pub fn new() -> Self {
        let sb = Sandbox::new();
        let plugin = sb.plugin_copy();
        let api = notesoup_test_support::fake_anthropic::FakeApi::start();
        Self { sb, plugin, api }
    }

    /// One headless turn with the plugin (see [`turn`]).
    pub fn turn(&self, prompt: &str, extra: &[&str]) -> Value {
        turn(&self.sb, &self.api.url, &self.plugin, prompt, extra)
    }
}
