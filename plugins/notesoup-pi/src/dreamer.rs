//! `notesoup-pi dream`'s dreamer: real Pi, run once in JSON mode in the
//! notes home, with the playbook as its one prompt (on stdin), thinking off,
//! no session file, and no tools but the jailed dream tools.
//!
//! Pi loads nothing of its own: `--no-extensions` (so not notesoup's own
//! package either), `--no-builtin-tools`, no skills, prompt templates,
//! themes, context files or MCP, project-local files ignored, no network
//! but the model's (`--offline`). The one extension it loads is the dream
//! extension (`package/dreamer/dream.ts`, embedded here and written to a
//! scratch directory), which registers core's dream tools under their own
//! names and forwards each call to `notesoup-pi dream-tools` (JSON lines,
//! see [`crate::dream_tools`]); `--tools` names exactly those seven.
//!
//! Every `write`, `edit` and `delete` the dreamer asked for is read from
//! Pi's event stream (`tool_execution_start`), whether or not it was
//! allowed; the report is the last assistant message. A dreamer still
//! running after the timeout is stopped with its whole process tree (Pi,
//! the tools server, anything that left the group), and the run fails with
//! the writes made so far.

use std::ffi::OsString;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use notesoup_core::dream::{
    DreamRequest, DreamResult, DreamRunner, DreamWrite, Ended, dream_tool_table,
};
use notesoup_core::plumbing::{Links, read_small_text, run_dreamer_child};
use notesoup_core::settings::{self, SettingsRecord, SettingsWarning};
use serde_json::{Value, json};

/// The dream extension Pi loads (`package/dreamer/dream.ts`).
pub const EXTENSION: &str = include_str!("../package/dreamer/dream.ts");

/// Names the dream extension's configuration file (`{command, home,
/// tools}`) in the dreamer's environment.
pub const CONFIG_VAR: &str = "NOTESOUP_PI_DREAMER";

/// Names the `pi` to run (default: `pi` on PATH).
pub const PI_VAR: &str = "NOTESOUP_PI";

/// A dreamer that runs `pi --mode json` with the dream extension.
#[derive(Debug, Clone)]
pub struct PiDreamer {
    /// The `pi` executable.
    pub pi: PathBuf,
    /// The `notesoup-pi` binary, which serves the dream tools.
    pub notesoup_pi: PathBuf,
    /// The dreamer is stopped after this long and the run fails.
    pub timeout: Duration,
    /// Scratch directory for the extension and its configuration; created
    /// by the run and removed after it.
    pub work_dir: PathBuf,
}

/// Pi's arguments for a dreamer whose extension is at `extension`.
pub fn pi_arguments(extension: &Path, model_pattern: Option<&str>) -> Vec<OsString> {
    let tools: Vec<&str> = dream_tool_table().iter().map(|tool| tool.name).collect();
    let mut args: Vec<OsString> = [
        "--mode",
        "json",
        "--no-session",
        "--offline",
        "--no-extensions",
        "--extension",
    ]
    .into_iter()
    .map(OsString::from)
    .collect();
    args.push(extension.as_os_str().to_owned());
    for arg in [
        "--no-builtin-tools",
        "--tools",
        &tools.join(","),
        "--no-skills",
        "--no-prompt-templates",
        "--no-themes",
        "--no-context-files",
        "--no-mcp",
        "--no-approve",
        "--thinking",
        "off",
    ] {
        args.push(arg.into());
    }
    if let Some(model) = model_pattern {
        args.push("--model".into());
        args.push(model.into());
    }
    args
}

impl PiDreamer {
    /// Writes the extension and its configuration; returns the extension's
    /// path and the configuration's.
    fn prepare(&self, request: &DreamRequest<'_>) -> Result<(PathBuf, PathBuf), String> {
        let failed = |error: std::io::Error| {
            format!(
                "dreamer failed: preparing {}: {error}",
                self.work_dir.display()
            )
        };
        std::fs::create_dir_all(&self.work_dir).map_err(failed)?;
        let extension = self.work_dir.join("dream.ts");
        std::fs::write(&extension, EXTENSION).map_err(failed)?;
        let config = self.work_dir.join("dreamer.json");
        let body = json!({
            "command": self.notesoup_pi,
            "home": request.home,
            "tools": crate::dream_tools::manifest(),
        });
        std::fs::write(&config, body.to_string()).map_err(failed)?;
        Ok((extension, config))
    }

    fn command(&self, request: &DreamRequest<'_>, extension: &Path, config: &Path) -> Command {
        let mut command = Command::new(&self.pi);
        command
            .args(pi_arguments(extension, request.model_pattern))
            .current_dir(request.home)
            .env(CONFIG_VAR, config)
            .env("PI_OFFLINE", "1");
        command
    }

    fn run_pi(&self, request: &DreamRequest<'_>) -> DreamResult {
        let (extension, config) = match self.prepare(request) {
            Ok(paths) => paths,
            Err(error) => return DreamResult::failed(error),
        };
        // The playbook goes in on stdin (no argument-length limit); Pi takes
        // piped input as the prompt. A timeout stops the tools server too,
        // which would otherwise keep a pipe open.
        let child = match run_dreamer_child(
            &mut self.command(request, &extension, &config),
            self.timeout,
            Some(request.prompt),
            |stdout| read_events(BufReader::new(stdout), request.on_tool_call),
        ) {
            Ok(child) => child,
            Err(error) => return DreamResult::failed(error),
        };
        let events = child.output;
        let waited = match child.ended {
            Ended::Exited(waited) => waited,
            Ended::TimedOut => return DreamResult::timed_out(events.writes, self.timeout),
        };
        let status = waited.map_err(|error| format!("dreamer failed: {error}"));
        events.outcome(request.model_pattern, status, &child.stderr)
    }
}

impl DreamRunner for PiDreamer {
    fn run(&mut self, request: DreamRequest<'_>) -> DreamResult {
        let result = self.run_pi(&request);
        // The extension and its configuration are scratch; the audit keeps
        // what matters.
        let _ = std::fs::remove_dir_all(&self.work_dir);
        result
    }
}

/// What Pi's JSON event stream told.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Events {
    /// Every write, edit and delete the dreamer called, in order.
    pub writes: Vec<DreamWrite>,
    /// The last assistant message (`message_end`).
    pub last_assistant: Option<Value>,
    /// Whether Pi said it had no more work (`agent_settled`).
    pub settled: bool,
}

/// Reads Pi's `--mode json` stream (one JSON object per LF-ended line;
/// other lines are skipped); `on_tool_call` is told of each tool call as it
/// is read.
pub fn read_events(reader: impl BufRead, on_tool_call: &dyn Fn(&str, &Value)) -> Events {
    let mut events = Events::default();
    for line in reader.split(b'\n') {
        let Ok(line) = line else { break };
        let Ok(mut event) = serde_json::from_slice::<Value>(&line) else {
            continue;
        };
        match event["type"].as_str() {
            Some("tool_execution_start") => {
                let name = event["toolName"].as_str().unwrap_or_default();
                on_tool_call(name, &event["args"]);
                events
                    .writes
                    .extend(DreamWrite::from_tool_event(name, &event["args"]));
            }
            Some("message_end") if event["message"]["role"] == "assistant" => {
                events.last_assistant = Some(event["message"].take());
            }
            Some("agent_settled") => events.settled = true,
            _ => {}
        }
    }
    events
}

impl Events {
    /// The dream's result, given how Pi exited and what it said on stderr.
    pub fn outcome(
        self,
        model_pattern: Option<&str>,
        status: Result<std::process::ExitStatus, String>,
        stderr: &str,
    ) -> DreamResult {
        let mut result = DreamResult {
            report: String::new(),
            writes: self.writes,
            error: None,
        };
        match &self.last_assistant {
            Some(message) => {
                let text: Vec<&str> = message["content"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|block| block["type"] == "text")
                    .filter_map(|block| block["text"].as_str())
                    .collect();
                result.report = text.join("\n");
                match message["stopReason"].as_str() {
                    Some("error") => {
                        let why = message["errorMessage"].as_str().unwrap_or("provider error");
                        result.error = Some(format!("dreamer failed: {why}"));
                    }
                    Some("aborted") => {
                        result.error = Some("dreamer failed: the run was aborted".to_owned());
                    }
                    _ => {}
                }
            }
            None => {
                let unresolved = stderr.contains("Model \"") && stderr.contains("\" not found");
                result.error = Some(match model_pattern {
                    Some(pattern) if unresolved => format!(
                        "dreamer model pattern \"{pattern}\" did not resolve to an available model"
                    ),
                    _ => format!(
                        "dreamer failed: pi ended without an answer: {}",
                        last_lines(stderr)
                    ),
                });
            }
        }
        match status {
            Ok(status) if !status.success() && result.error.is_none() => {
                result.error = Some(format!(
                    "dreamer failed: pi exited with {status}: {}",
                    last_lines(stderr)
                ));
            }
            Err(error) if result.error.is_none() => result.error = Some(error),
            _ => {}
        }
        if result.error.is_none() && !self.settled {
            result.error = Some("dreamer failed: pi ended before the run settled".to_owned());
        }
        result
    }
}

/// The last lines of Pi's diagnostics, enough to name the failure (stack
/// frames and hints left out), at most 600 characters.
fn last_lines(text: &str) -> String {
    let joined = DreamResult::last_diagnostic_lines(text, 3, |line| {
        !line.starts_with("at ") && !line.starts_with("Hint:")
    });
    if joined.is_empty() {
        return "(nothing on stderr)".to_owned();
    }
    let cut: String = joined.chars().take(600).collect();
    if cut.len() < joined.len() {
        format!("{cut}…")
    } else {
        cut
    }
}

/// The `pi` to run: `--pi`, else `NOTESOUP_PI`, else `pi` on PATH (core's
/// rule for every host's dreamer: a path is made absolute, since Pi starts
/// in the notes home).
pub fn pi_executable(given: Option<PathBuf>, lookup: impl Fn(&str) -> Option<String>) -> PathBuf {
    notesoup_core::plumbing::DreamerSetting::executable(given, lookup(PI_VAR), "pi")
}

/// The `dreamer` setting from Pi's settings files: the global
/// `settings.json` in Pi's agent directory (`PI_CODING_AGENT_DIR`, else
/// `~/.pi/agent`) and the project's `<cwd>/.pi/settings.json` (the dream
/// command treats the project as trusted), project over global. The
/// warnings are the ones about the dreamer: a file that is not JSON, a bad
/// value, the legacy key.
pub fn dreamer_setting(
    lookup: impl Fn(&str) -> Option<String>,
    cwd: &Path,
) -> (Option<String>, Vec<String>) {
    let agent_dir = lookup("PI_CODING_AGENT_DIR")
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
        .or_else(|| lookup("HOME").map(|home| Path::new(&home).join(".pi/agent")));
    let mut warnings = Vec::new();
    let mut read = |path: Option<PathBuf>| -> Option<Value> {
        let path = path?;
        let text = match read_small_text(&path, SettingsRecord::MAX_BYTES, Links::Follow) {
            Ok(text) => text?,
            Err(error) => {
                warnings.push(format!("notesoup: cannot read {error}; ignoring it."));
                return None;
            }
        };
        match serde_json::from_str(&text) {
            Ok(value) => Some(value),
            Err(error) => {
                warnings.push(format!(
                    "notesoup: {} is not JSON ({error}); ignoring it.",
                    path.display()
                ));
                None
            }
        }
    };
    let global = read(agent_dir.map(|dir| dir.join("settings.json")));
    let project = read(Some(cwd.join(".pi/settings.json")));
    let resolved = settings::ResolvedSettings::resolve(
        global.as_ref(),
        project.as_ref(),
        settings::ProjectTrust::Untrusted,
    );
    warnings.extend(
        resolved
            .warnings
            .iter()
            .filter(|w| {
                matches!(
                    w,
                    SettingsWarning::InvalidDreamer
                        | SettingsWarning::LegacyKey
                        | SettingsWarning::InvalidOverride("dreamer")
                )
            })
            .map(ToString::to_string),
    );
    (resolved.settings.dreamer, warnings)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::os::unix::process::ExitStatusExt;
    use std::process::ExitStatus;

    use notesoup_core::dream::DreamTool;

    use super::*;

    fn ok() -> Result<ExitStatus, String> {
        Ok(ExitStatus::from_raw(0))
    }

    /// The error of a run that printed `stdout`, nothing on stderr, and
    /// ended with `status`.
    fn failure(stdout: &str, status: Result<ExitStatus, String>) -> Option<String> {
        read_events(stdout.as_bytes(), &|_, _| {})
            .outcome(None, status, "")
            .error
    }

    #[test]
    fn pi_gets_only_the_dream_extension_and_its_seven_tools() {
        let args = pi_arguments(Path::new("/w/dream.ts"), Some("fake/fake-1"));
        let args: Vec<&str> = args.iter().map(|a| a.to_str().unwrap()).collect();
        assert_eq!(
            args.join(" "),
            "--mode json --no-session --offline --no-extensions --extension /w/dream.ts \
             --no-builtin-tools --tools read,grep,find,ls,write,edit,delete --no-skills \
             --no-prompt-templates --no-themes --no-context-files --no-mcp --no-approve \
             --thinking off --model fake/fake-1"
        );
        let args = pi_arguments(Path::new("/w/dream.ts"), None);
        assert!(!args.iter().any(|a| a == "--model"));
    }

    #[test]
    fn the_stream_yields_writes_and_the_last_answer() {
        let stream = [
            r#"{"type":"session","version":3,"id":"s","cwd":"/n"}"#,
            r#"{"type":"message_end","message":{"role":"user","content":"playbook"}}"#,
            r#"{"type":"message_end","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"write","arguments":{}}],"stopReason":"toolUse"}}"#,
            r#"{"type":"tool_execution_start","toolCallId":"c1","toolName":"read","args":{"path":"human/MAP.md"}}"#,
            r#"{"type":"tool_execution_start","toolCallId":"c2","toolName":"write","args":{"path":"../outside.md","content":"x"}}"#,
            "not json",
            r#"{"type":"tool_execution_start","toolCallId":"c3","toolName":"delete","args":{"path":"human/old.md"}}"#,
            r#"{"type":"tool_execution_start","toolCallId":"c4","toolName":"bash","args":{"path":"x"}}"#,
            r#"{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"Report: one MAP fixed."}],"stopReason":"stop"}}"#,
            r#"{"type":"agent_settled","aborted":false}"#,
        ]
        .join("\n");
        let result = read_events(stream.as_bytes(), &|_, _| {}).outcome(None, ok(), "");
        assert_eq!(result.report, "Report: one MAP fixed.");
        assert_eq!(result.error, None);
        let writes: Vec<(DreamTool, &str)> = result
            .writes
            .iter()
            .map(|w| (w.tool, w.path.as_str()))
            .collect();
        assert_eq!(
            writes,
            [
                (DreamTool::Write, "../outside.md"),
                (DreamTool::Delete, "human/old.md")
            ]
        );
    }

    #[test]
    fn failures_are_named() {
        let error = r#"{"type":"message_end","message":{"role":"assistant","content":[],"stopReason":"error","errorMessage":"401 invalid api key"}}
{"type":"agent_settled","aborted":false}"#;
        assert_eq!(
            failure(error, ok()).as_deref(),
            Some("dreamer failed: 401 invalid api key")
        );
        let unresolved = read_events(&b""[..], &|_, _| {}).outcome(
            Some("opus"),
            Ok(ExitStatus::from_raw(256)),
            "Error: Model \"opus\" not found. Use --list-models to see available models.\n",
        );
        assert_eq!(
            unresolved.error.as_deref(),
            Some("dreamer model pattern \"opus\" did not resolve to an available model")
        );
        let broken = read_events(&b""[..], &|_, _| {}).outcome(
            None,
            Ok(ExitStatus::from_raw(256)),
            "Error: Failed to load extension \"/w/dream.ts\": boom\nHint: Start without extensions using \"pi -ne\".\n",
        );
        assert_eq!(
            broken.error.as_deref(),
            Some(
                "dreamer failed: pi ended without an answer: Error: Failed to load extension \"/w/dream.ts\": boom"
            )
        );
        let cut = r#"{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"half"}],"stopReason":"stop"}}"#;
        assert_eq!(
            failure(cut, Ok(ExitStatus::from_raw(9))).as_deref(),
            Some("dreamer failed: pi exited with signal: 9 (SIGKILL): (nothing on stderr)")
        );
        assert_eq!(
            failure(cut, ok()).as_deref(),
            Some("dreamer failed: pi ended before the run settled")
        );
    }

    #[test]
    fn the_pi_to_run() {
        let none = |_: &str| None;
        assert_eq!(pi_executable(None, none), PathBuf::from("pi"));
        let set = |name: &str| (name == PI_VAR).then(|| "/opt/pi/bin/pi".to_owned());
        assert_eq!(pi_executable(None, set), PathBuf::from("/opt/pi/bin/pi"));
        assert_eq!(
            pi_executable(Some(PathBuf::from("pi-1.6")), set),
            PathBuf::from("pi-1.6")
        );
        let relative = pi_executable(Some(PathBuf::from("bin/pi")), none);
        assert!(relative.is_absolute() && relative.ends_with("bin/pi"));
    }

    #[test]
    fn the_setting_is_read_project_over_global_and_a_bad_one_warns() {
        let dir = tempfile::tempdir().unwrap();
        let agent = dir.path().join("agent");
        let project = dir.path().join("project");
        std::fs::create_dir_all(&agent).unwrap();
        std::fs::create_dir_all(project.join(".pi")).unwrap();
        let agent_dir = agent.to_str().unwrap().to_owned();
        let lookup = move |name: &str| (name == "PI_CODING_AGENT_DIR").then(|| agent_dir.clone());
        assert_eq!(dreamer_setting(&lookup, &project), (None, vec![]));

        std::fs::write(
            agent.join("settings.json"),
            r#"{"notesoup": {"dreamer": " fake/fake-1 ", "reminderMarginTokens": -1}}"#,
        )
        .unwrap();
        assert_eq!(
            dreamer_setting(&lookup, &project),
            (Some("fake/fake-1".to_owned()), vec![])
        );

        std::fs::write(
            project.join(".pi/settings.json"),
            r#"{"notesoup": {"dreamer": ""}}"#,
        )
        .unwrap();
        // The project's value would win, but being bad, the valid global
        // one under it is kept, with a warning.
        assert_eq!(
            dreamer_setting(&lookup, &project),
            (
                Some("fake/fake-1".to_owned()),
                vec![
                    "notesoup: notesoup.dreamer must be a non-empty string; the overriding value is ignored and the valid one under it is used."
                        .to_owned()
                ]
            )
        );

        std::fs::write(project.join(".pi/settings.json"), "{not json").unwrap();
        let (dreamer, warnings) = dreamer_setting(&lookup, &project);
        assert_eq!(dreamer.as_deref(), Some("fake/fake-1"));
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("is not JSON"), "{warnings:?}");
    }
}
