//! `notesoup-dsh dream`: core's dream run with a headless dsh as the
//! dreamer. The dsh gets the playbook as its one task, the jailed dream
//! tools as its only tools (the bundle's `notesoup/dsh/dream` row, answered
//! by `notesoup-dsh dream-tools`), and notesoup's own rows stand aside in it
//! ([`DREAMER_VAR`]). The session log dsh writes is followed while it runs
//! ([`crate::dream_log`]): each tool call is told to the run's progress as
//! it comes, and every write, edit and delete the dreamer asked for goes
//! into the report. A dreamer still running after
//! the timeout is stopped with its whole process tree (dsh, the tools
//! server, anything that left the group), and the run fails with the
//! writes its log shows.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{ChildStdout, Command};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::Duration;

use notesoup_core::dream::{DreamRequest, DreamResult, DreamRunner, Ended};
use notesoup_core::plumbing::{LineRead, run_dreamer_child};
use serde_json::json;

use crate::bundle;
use crate::dream_log::LogFollower;

/// Names the `dsh` to run (default: `dsh` on PATH).
pub const DSH_VAR: &str = "NOTESOUP_DSH";

/// Set to `1` in the dreamer's environment: notesoup's `notesoup/dsh` row
/// (and so its engine) does nothing in that dsh.
pub const DREAMER_VAR: &str = "NOTESOUP_DSH_DREAMER";

/// Which model the dreamer runs on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelChoice {
    /// The dsh provider route (`deepseek-official`, …); `None` keeps the
    /// profile's.
    pub provider: Option<String>,
    /// The model id.
    pub model: String,
}

impl ModelChoice {
    /// Reads a model pattern: `provider/model`, or a bare model id on the
    /// profile's provider. The provider is the text before the first `/`,
    /// so a model id may itself hold slashes.
    pub fn parse(pattern: &str) -> Option<Self> {
        let pattern = pattern.trim();
        if pattern.is_empty() {
            return None;
        }
        match pattern.split_once('/') {
            Some((provider, model)) if !provider.is_empty() && !model.is_empty() => Some(Self {
                provider: Some(provider.to_owned()),
                model: model.to_owned(),
            }),
            _ => Some(Self {
                provider: None,
                model: pattern.to_owned(),
            }),
        }
    }
}

/// A dreamer that runs `dsh --profile <profile> --patch <overlay> <playbook>`.
#[derive(Debug, Clone)]
pub struct DshDreamer {
    /// The `dsh` executable.
    pub dsh: PathBuf,
    /// The dsh profile to boot (`headless` answers one task and exits).
    pub profile: String,
    /// This binary, which serves the dream tools.
    pub notesoup_dsh: PathBuf,
    /// Where the dreamer's bundle, overlay and session log go; removed
    /// after the run.
    pub work_dir: PathBuf,
    /// The dreamer is stopped after this long and the run fails.
    pub timeout: Duration,
}

impl DshDreamer {
    fn overlay(&self, request: &DreamRequest<'_>) -> String {
        let quote = |text: &str| json!(text).to_string();
        let path = |path: &Path| quote(&path.display().to_string());
        let mut rows = format!(
            "# notesoup's dreamer: only the jailed dream tools, the session log kept here.\n\
             - insert:\n    - id: notesoup-dream\n      name: {dream}\n      config:\n        binary: {binary}\n        home: {home}\n\
             - id: tools\n  config:\n    mode: native\n\
             - id: session-title-llm\n  disabled: true\n\
             - id: session-persistence-jsonl\n  config:\n    root: {sessions}\n    compression: none\n",
            dream = path(&self.work_dir.join("bundle/dream.js")),
            binary = path(&self.notesoup_dsh),
            home = path(request.home),
            sessions = path(&self.work_dir.join("sessions")),
        );
        if let Some(choice) = request.model_pattern.and_then(ModelChoice::parse) {
            rows.push_str("- id: agent-default-model\n  config:\n");
            if let Some(provider) = &choice.provider {
                rows.push_str(&format!("    provider: {}\n", quote(provider)));
            }
            rows.push_str(&format!("    model: {}\n", quote(&choice.model)));
        }
        rows
    }

    fn command(&self, request: &DreamRequest<'_>, overlay: &Path) -> Command {
        let mut command = Command::new(&self.dsh);
        command
            .arg("--profile")
            .arg(&self.profile)
            .arg("--patch")
            .arg(overlay)
            .arg(request.prompt)
            .current_dir(request.home)
            .env(DREAMER_VAR, "1");
        command
    }

    fn prepare(&self, request: &DreamRequest<'_>) -> Result<PathBuf, String> {
        let failed = |error: std::io::Error| {
            format!(
                "dreamer failed: preparing {}: {error}",
                self.work_dir.display()
            )
        };
        bundle::write(&self.work_dir.join("bundle")).map_err(|error| {
            format!(
                "dreamer failed: preparing {}: {error}",
                self.work_dir.display()
            )
        })?;
        std::fs::create_dir_all(self.work_dir.join("sessions")).map_err(failed)?;
        let overlay = self.work_dir.join("dreamer.patch.yml");
        std::fs::write(&overlay, self.overlay(request)).map_err(failed)?;
        Ok(overlay)
    }
}

impl DreamRunner for DshDreamer {
    fn run(&mut self, request: DreamRequest<'_>) -> DreamResult {
        let result = self.run_dsh(&request);
        // The dreamer's bundle and session log are scratch; the audit keeps
        // what matters.
        let _ = std::fs::remove_dir_all(&self.work_dir);
        result
    }
}

impl DshDreamer {
    fn run_dsh(&self, request: &DreamRequest<'_>) -> DreamResult {
        let overlay = match self.prepare(request) {
            Ok(overlay) => overlay,
            Err(error) => return DreamResult::failed(error),
        };
        let on_tool_call = request.on_tool_call;
        let mut log = LogFollower::new(self.work_dir.join("sessions"));
        // dsh prints only its last answer, when it ends: its calls are
        // followed in its session log while its stdout stays open.
        let follow = |stdout: ChildStdout| {
            let (ended, end) = mpsc::channel();
            let answer = thread::spawn(move || {
                let text = read_answer(stdout);
                let _ = ended.send(());
                text
            });
            loop {
                log.poll(on_tool_call);
                if !matches!(end.recv_timeout(LOG_POLL), Err(RecvTimeoutError::Timeout)) {
                    break;
                }
            }
            answer.join().unwrap_or_default()
        };
        let child = match run_dreamer_child(
            &mut self.command(request, &overlay),
            self.timeout,
            None,
            follow,
        ) {
            Ok(child) => child,
            Err(error) => return DreamResult::failed(error),
        };
        let followed = log.finish(on_tool_call);
        let mut result = followed.result;
        if result.report.is_empty() {
            result.report = child.output.trim().to_owned();
        }
        match child.ended {
            Ended::Exited(waited) => {
                let stderr = &child.stderr;
                if let Some(error) = DreamResult::exit_error(&waited, "dsh", || last_lines(stderr))
                {
                    result.error = Some(error);
                }
            }
            Ended::TimedOut => return DreamResult::timed_out(result.writes, self.timeout),
        }
        // A log that could not be read whole may hide a write from the
        // report: the run fails naming the line.
        if let (None, Some(refused)) = (&result.error, followed.refused) {
            result.error = Some(format!("dreamer failed: {refused}"));
        }
        // A dreamer that ends without a word did not dream: a failure, not
        // a run with an empty report.
        if result.error.is_none() && result.report.trim().is_empty() {
            let said = last_lines(&child.stderr);
            result.error = Some(if said.is_empty() {
                "dreamer failed: dsh ended without an answer".to_owned()
            } else {
                format!("dreamer failed: dsh ended without an answer: {said}")
            });
        }
        result
    }
}

/// How often the session log is read while dsh runs (dsh appends a batch
/// at most every 200 ms).
const LOG_POLL: Duration = Duration::from_millis(100);

/// dsh's stdout, its last answer: at most [`LineRead::MAX_BYTES`] of it kept,
/// the rest read and dropped so dsh is never stuck writing it.
fn read_answer(mut stdout: ChildStdout) -> String {
    let mut bytes = Vec::new();
    // A read that fails leaves the answer short; the log holds it too.
    let _ = (&mut stdout)
        .take(LineRead::MAX_BYTES as u64)
        .read_to_end(&mut bytes);
    let _ = std::io::copy(&mut stdout, &mut std::io::sink());
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The last lines of dsh's diagnostics, enough to name the failure (stack
/// frames and source excerpts left out).
fn last_lines(text: &str) -> String {
    DreamResult::last_diagnostic_lines(text, 5, |line| {
        !line.starts_with("at ") && !line.starts_with("file://") && !matches!(line, "^" | "}" | "{")
    })
}

#[cfg(test)]
mod tests {
    use notesoup_core::dream::DreamTools;

    use super::*;

    #[test]
    fn model_patterns_name_a_provider_or_only_a_model() {
        assert_eq!(
            ModelChoice::parse("deepseek-official/deepseek-v4-pro"),
            Some(ModelChoice {
                provider: Some("deepseek-official".into()),
                model: "deepseek-v4-pro".into()
            })
        );
        assert_eq!(
            ModelChoice::parse(" deepseek-v4-flash "),
            Some(ModelChoice {
                provider: None,
                model: "deepseek-v4-flash".into()
            })
        );
        assert_eq!(
            ModelChoice::parse("openrouter/vendor/model").map(|c| c.model),
            Some("vendor/model".into())
        );
        assert_eq!(ModelChoice::parse("  "), None);
        for bare in ["/deepseek-v4-pro", "deepseek-official/"] {
            assert_eq!(
                ModelChoice::parse(bare),
                Some(ModelChoice {
                    provider: None,
                    model: bare.into()
                }),
                "a slash with nothing on one side names no provider"
            );
        }
    }

    #[test]
    fn dsh_s_last_words_leave_out_stack_frames_and_source_excerpts() {
        let stderr = "warming up\nError: the profile has no provider\n    at load (file:///dsh/cli.js:10:3)\n\
                      file:///dsh/cli.js:10\n  ^\n{\n  code: 'E_PROFILE'\n}\nNode.js v22.12.0\n";
        assert_eq!(
            last_lines(stderr),
            "warming up | Error: the profile has no provider | code: 'E_PROFILE' | Node.js v22.12.0"
        );
        let many: String = (1..=7).map(|n| format!("line {n}\n")).collect();
        assert_eq!(
            last_lines(&many),
            "line 3 | line 4 | line 5 | line 6 | line 7"
        );
    }

    #[test]
    fn the_work_directory_holds_the_bundle_the_sessions_and_an_overlay_of_quoted_paths() {
        let dir = tempfile::tempdir().expect("tempdir");
        let home = dir.path().join("notes \"home\"");
        let tools = DreamTools::new(&home);
        let dreamer = DshDreamer {
            dsh: "dsh".into(),
            profile: "headless".into(),
            notesoup_dsh: dir.path().join("bin/notesoup-dsh"),
            work_dir: dir.path().join("work"),
            timeout: Duration::from_secs(1),
        };
        let request = |model_pattern| DreamRequest {
            prompt: "tidy",
            home: &home,
            model_pattern,
            tools: &tools,
            on_tool_call: &|_, _| {},
        };

        let overlay = dreamer
            .prepare(&request(Some("deepseek-official/deepseek-v4-pro")))
            .expect("prepared");
        assert_eq!(overlay, dreamer.work_dir.join("dreamer.patch.yml"));
        assert!(dreamer.work_dir.join("sessions").is_dir());
        let manifest = std::fs::read_to_string(dreamer.work_dir.join("bundle/manifest.json"))
            .expect("the bundle's manifest");
        assert_eq!(manifest, bundle::manifest());
        assert!(dreamer.work_dir.join("bundle/dream.js").is_file());

        let quoted = |path: &Path| json!(path.display().to_string()).to_string();
        let text = std::fs::read_to_string(&overlay).expect("overlay");
        for line in [
            format!("      name: {}\n", quoted(&dreamer.work_dir.join("bundle/dream.js"))),
            format!("        binary: {}\n", quoted(&dreamer.notesoup_dsh)),
            format!("        home: {}\n", quoted(&home)),
            format!("    root: {}\n", quoted(&dreamer.work_dir.join("sessions"))),
            "- id: agent-default-model\n  config:\n    provider: \"deepseek-official\"\n    model: \"deepseek-v4-pro\"\n".to_owned(),
        ] {
            assert!(text.contains(&line), "{line:?} in\n{text}");
        }
        assert!(
            text.contains("- id: session-title-llm\n  disabled: true\n"),
            "{text}"
        );

        let profile_s = dreamer.overlay(&request(Some("deepseek-v4-flash")));
        assert!(
            profile_s.ends_with(
                "- id: agent-default-model\n  config:\n    model: \"deepseek-v4-flash\"\n"
            ),
            "{profile_s}"
        );
        let automatic = dreamer.overlay(&request(None));
        assert!(!automatic.contains("agent-default-model"), "{automatic}");
    }
}
