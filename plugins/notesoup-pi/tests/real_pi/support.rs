//! Runs real Pi 1.6.0 (Node 22 and the SDK from `cargo xtask hosts pi`) with
//! the notesoup package and `notesoup-pi serve` of this checkout, in a
//! temporary directory. Only the model is scripted (pi-ai's faux provider).
//!
//! The reference host's real-Pi test includes this file too; each test crate
//! says where its `notesoup-pi` binary is (`crate::sidecar()`).
//!
//! Missing Pi fails the test with the command that installs it: this target
//! only builds with the `real-pi` feature, which promises Pi is there.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

/// Node 22 and the Pi SDK's `node_modules`, from the environment.
pub struct Pi {
    pub node: PathBuf,
    pub node_modules: PathBuf,
}

impl Pi {
    /// `PATH` with Node 22 and Pi's `pi` first, for commands that start `pi`.
    pub fn path(&self) -> std::ffi::OsString {
        let node_bin = self.node.parent().expect("Node's folder").to_path_buf();
        std::env::join_paths(
            [node_bin, self.node_modules.join(".bin")]
                .into_iter()
                .chain(std::env::split_paths(
                    &std::env::var_os("PATH").unwrap_or_default(),
                )),
        )
        .expect("a joinable PATH")
    }

    pub fn from_env() -> Self {
        let var = |name: &str| {
            std::env::var_os(name)
                .map(PathBuf::from)
                .unwrap_or_else(|| {
                    panic!(
                        "{name} is not set: the real-pi tests need Pi 1.6.0; run \
                     eval \"$(cargo xtask hosts pi)\" first"
                    )
                })
        };
        let pi = Self {
            node: var("NOTESOUP_NODE22"),
            node_modules: var("NOTESOUP_PI_NODE_MODULES"),
        };
        assert!(pi.node.is_file(), "no Node at {}", pi.node.display());
        assert!(
            pi.node_modules
                .join("@earendil-works/pi-coding-agent/package.json")
                .is_file(),
            "no Pi SDK under {}",
            pi.node_modules.display()
        );
        pi
    }
}

/// The Pi adapter's folder in this checkout (`plugins/notesoup-pi`, whichever
/// crate includes this file), without `..`: Pi compares package
/// paths as written.
pub fn adapter_dir() -> PathBuf {
    // Every crate including this file sits two folders below the root.
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../plugins/notesoup-pi")
        .canonicalize()
        .expect("the notesoup-pi folder")
}

/// The package folder in this checkout, as `pi install <dir>` would load it.
pub fn package_dir() -> PathBuf {
    adapter_dir().join("package")
}

/// A temporary world: project, Pi agent directory, sessions and notes.
pub struct World {
    pub pi: Pi,
    pub temp: tempfile::TempDir,
    pub context_window: u64,
    pub settings: Value,
    /// `NOTESOUP_PI_BIN` for the shim: `notesoup-pi` of this checkout.
    pub sidecar: PathBuf,
    /// The package Pi loads, as the `packages` setting names it: this
    /// checkout's folder, or an installed source such as `npm:notesoup-pi`.
    pub package: PathBuf,
    /// Variables set last on the driver (a test's own `PATH`, say).
    pub env: Vec<(String, std::ffi::OsString)>,
}

/// What one driver run saw.
#[derive(Debug)]
pub struct Report {
    pub session_file: PathBuf,
    /// Every provider request: `(role, text)` per message.
    pub requests: Vec<Vec<(String, String)>>,
    /// The names of the tools each provider request offered.
    pub offered: Vec<Vec<String>>,
    pub notices: Vec<(String, String)>,
    pub errors: Vec<String>,
    pub compact_error: Option<String>,
    pub pending_responses: u64,
    /// Pi's `compaction_start` / `compaction_end` events, in order.
    pub compactions: Vec<Value>,
    /// The sidecar's process at the end of the run, when one ran.
    pub sidecar_pid: Option<u32>,
    /// Pi's `getContextUsage()` tokens as each tool started: `{tool, tokens}`.
    pub tool_usages: Vec<Value>,
}

impl World {
    pub fn new(context_window: u64) -> Self {
        let temp = tempfile::Builder::new()
            .prefix("notesoup-real-pi-")
            .tempdir()
            .expect("temp dir");
        std::fs::create_dir_all(temp.path().join("project")).expect("project dir");
        Self {
            pi: Pi::from_env(),
            temp,
            context_window,
            // Provider errors go to notesoup's recovery, not Pi's retry.
            settings: json!({ "retry": { "enabled": false } }),
            sidecar: crate::sidecar(),
            package: package_dir(),
            env: Vec::new(),
        }
    }

    /// A world whose `notesoup-pi` is missing.
    pub fn without_sidecar(context_window: u64) -> Self {
        let mut world = Self::new(context_window);
        world.sidecar = world.path("no-such-notesoup-pi");
        world
    }

    /// A world with Pi's own threshold compaction on and a large reserve
    /// (80,000 of 100,000 tokens): [`three_long_parts`] makes it compact.
    pub fn large_reserve() -> Self {
        let mut world = Self::new(100_000);
        world.settings["compaction"] =
            json!({"enabled": true, "reserveTokens": 80_000, "keepRecentTokens": 1_000});
        world
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.temp.path().join(name)
    }

    /// `notesoup-pi ARGS` (the binary under test) in the world's project,
    /// with the environment Pi runs under.
    pub fn notesoup_pi(&self, args: &[&str]) -> Command {
        let mut command = Command::new(crate::sidecar());
        command
            .args(args)
            .current_dir(self.path("project"))
            .env("HOME", self.temp.path())
            .env("PI_CODING_AGENT_DIR", self.path("agent"))
            .env("PI_NOTES_HOME", self.notes_home())
            .env("PI_NOTES_AGENT", "tester");
        command
    }

    pub fn notes_home(&self) -> PathBuf {
        self.path("notes")
    }

    /// Runs the steps in a new session (see `run`).
    pub fn start(&self, steps: Value) -> Report {
        self.run(None, steps)
    }

    /// Runs the steps in a new session, or in `resume` reopened, and ends
    /// it as Pi does on quit (`session_shutdown`, then `dispose()`).
    pub fn run(&self, resume: Option<&Path>, steps: Value) -> Report {
        self.run_ending(resume, steps, "shutdown")
    }

    /// Runs the steps and ends the session as `end` says (see
    /// `driver.mjs`: "shutdown", "dispose" or "none"). The driver never
    /// exits on its own call: Node ends when nothing holds it, so a shim
    /// that keeps it alive fails the run (after a bound that only stops a
    /// hang).
    pub fn run_ending(&self, resume: Option<&Path>, steps: Value, end: &str) -> Report {
        let plan = json!({
            "packageDir": self.package,
            "agentDir": self.path("agent"),
            "cwd": self.path("project"),
            "sessionDir": self.path("sessions"),
            "resume": resume,
            "contextWindow": self.context_window,
            "settings": self.settings,
            "steps": steps,
            "end": end,
        });
        let plan_file = self.path("plan.json");
        std::fs::write(&plan_file, plan.to_string()).expect("plan written");
        let driver = adapter_dir().join("tests/real_pi/driver.mjs");
        let child = Command::new(&self.pi.node)
            .arg(&driver)
            .arg(&plan_file)
            .env("NOTESOUP_PI_NODE_MODULES", &self.pi.node_modules)
            .env("NOTESOUP_PI_BIN", &self.sidecar)
            .env("PI_NOTES_HOME", self.notes_home())
            .env("PI_NOTES_AGENT", "tester")
            .env("HOME", self.temp.path())
            .env("PI_CODING_AGENT_DIR", self.path("agent"))
            .envs(self.env.iter().map(|(name, value)| (name, value)))
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("node runs");
        let output = wait_bounded(
            child,
            "the driver (Node kept alive after the session ended?)",
        );
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            output.status.success(),
            "the driver failed ({}):\n{stderr}\n{stdout}",
            output.status
        );
        let report: Value = serde_json::from_str(stdout.trim())
            .unwrap_or_else(|e| panic!("unreadable report ({e}):\n{stdout}\n{stderr}"));
        let pairs = |v: &Value| -> Vec<(String, String)> {
            v.as_array()
                .unwrap()
                .iter()
                .map(|m| {
                    let first = m.get("role").or_else(|| m.get("level")).unwrap();
                    let second = m.get("text").or_else(|| m.get("message")).unwrap();
                    (
                        first.as_str().unwrap().to_owned(),
                        second.as_str().unwrap().to_owned(),
                    )
                })
                .collect()
        };
        Report {
            session_file: PathBuf::from(report["sessionFile"].as_str().expect("a session file")),
            requests: report["requests"]
                .as_array()
                .unwrap()
                .iter()
                .map(pairs)
                .collect(),
            offered: serde_json::from_value(report["offered"].clone()).expect("offered tools"),
            notices: pairs(&report["notices"]),
            errors: report["errors"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e.as_str().unwrap().to_owned())
                .collect(),
            compact_error: report["compactError"].as_str().map(str::to_owned),
            pending_responses: report["pendingResponses"].as_u64().unwrap(),
            compactions: report["compactions"]
                .as_array()
                .cloned()
                .unwrap_or_default(),
            tool_usages: report["toolUsages"].as_array().cloned().unwrap_or_default(),
            sidecar_pid: report["sidecarPid"]
                .as_u64()
                .and_then(|pid| u32::try_from(pid).ok()),
        }
    }
}

/// How long a run may take before it counts as hung: far past any run's
/// own time, only so a hang fails instead of blocking the suite.
const HANG_BOUND: std::time::Duration = std::time::Duration::from_secs(300);

/// `child`'s output once it has ended; killed and failed past [`HANG_BOUND`].
pub fn wait_bounded(mut child: std::process::Child, what: &str) -> std::process::Output {
    // The pipes are drained while it runs, so a full pipe cannot stall it.
    let drain = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let stdout = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn std::io::Read + Send>),
    );
    let stderr = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn std::io::Read + Send>),
    );
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > HANG_BOUND {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} did not end by itself");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    std::process::Output {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    }
}

/// Whether process `pid` has ended (gone, or a zombie nobody reaped).
pub fn ended(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .map(|status| {
            status
                .lines()
                .any(|line| line.starts_with("State:") && line.contains('Z'))
        })
        .unwrap_or(true)
}

impl Report {
    /// The run ended without a driver error, with `pending` scripted
    /// responses left unused.
    #[track_caller]
    pub fn assert_finished(&self, pending: u64) {
        assert!(self.errors.is_empty(), "{:?}", self.errors);
        assert_eq!(self.pending_responses, pending);
    }

    /// Pi answered every scripted turn and showed exactly one notice, that
    /// notesoup is unavailable, starting with `start`.
    #[track_caller]
    pub fn assert_unavailable_once(&self, start: &str) {
        assert_eq!(self.pending_responses, 0);
        let notices = self.notice_texts();
        assert_eq!(notices.len(), 1, "{notices:?}");
        assert!(notices[0].starts_with(start), "{notices:?}");
    }

    /// The session file's entries as JSON, after checking that the crate's
    /// reader takes it without a diagnostic (nothing half-written).
    pub fn entries(&self) -> Vec<Value> {
        let file = notesoup_pi::session::SessionFile::read(&self.session_file).expect("readable");
        assert!(file.diagnostics().is_empty(), "{:?}", file.diagnostics());
        assert!(file.is_loadable_by_pi());
        std::fs::read_to_string(&self.session_file)
            .expect("session file")
            .lines()
            .skip(1)
            .map(|line| serde_json::from_str(line).expect("JSON line"))
            .collect()
    }

    /// How each window of the session ended, as `notesoup-pi report
    /// FILE --json` (the binary under test) reads it from the file Pi
    /// wrote.
    pub fn ledger_ends(&self) -> Vec<String> {
        let report = notesoup_test_support::child::stdout_of(
            Command::new(crate::sidecar())
                .arg("report")
                .arg(&self.session_file)
                .arg("--json")
                .env("PI_NOTES_HOME", self.session_file.with_extension("notes")),
        );
        let ledger: Value = serde_json::from_str(&report).expect("the ledger's JSON");
        ledger["windows"]
            .as_array()
            .expect("windows")
            .iter()
            .map(|window| window["end"].as_str().expect("an end").to_owned())
            .collect()
    }

    /// `type[:customType|:role]` of every entry.
    pub fn kinds(&self) -> Vec<String> {
        self.entries().iter().map(kind).collect()
    }

    /// `(windowId, origin)` of every reset marker.
    pub fn markers(&self) -> Vec<(String, String)> {
        self.entries()
            .iter()
            .filter(|e| e["customType"] == "notesoup/reset-marker")
            .map(|e| {
                (
                    e["data"]["windowId"].as_str().unwrap().to_owned(),
                    e["data"]["origin"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    }

    /// The last request's messages as `role: text` cut at 60 chars.
    pub fn request(&self, index: isize) -> Vec<String> {
        let index = if index < 0 {
            self.requests.len() as isize + index
        } else {
            index
        };
        self.requests[index as usize]
            .iter()
            .map(|(role, text)| {
                let short: String = text.chars().take(60).collect();
                format!("{role}: {}", short.replace('\n', "⏎"))
            })
            .collect()
    }

    pub fn notice_texts(&self) -> Vec<&str> {
        self.notices.iter().map(|(_, text)| text.as_str()).collect()
    }

    /// Fails unless a notice Pi showed contains `text`.
    pub fn assert_notice(&self, text: &str) {
        assert!(
            self.notices.iter().any(|(_, notice)| notice.contains(text)),
            "no notice with {text:?}: {:?}",
            self.notices
        );
    }
}

pub fn kind(entry: &Value) -> String {
    let ty = entry["type"].as_str().unwrap_or("?");
    match ty {
        "message" => format!(
            "message:{}",
            entry["message"]["role"].as_str().unwrap_or("?")
        ),
        "custom" | "custom_message" => {
            format!("{ty}:{}", entry["customType"].as_str().unwrap_or("?"))
        }
        other => other.to_owned(),
    }
}

/// A model reply: text.
pub fn text(text: &str) -> Value {
    json!({ "text": text })
}

/// Three long prompts, each answered, that fill a
/// [`World::large_reserve`] window past Pi's threshold: the third is
/// answered twice (the reply, then the first turn after a reset).
pub fn three_long_parts() -> Value {
    json!([
        {"respond": [text("First part read.")]},
        {"prompt": format!("Part one. {}", "a".repeat(60_000))},
        {"respond": [text("Second part read.")]},
        {"prompt": format!("Part two. {}", "b".repeat(40_000))},
        {"respond": [text("Third part read."), text("Fresh after the forced reset.")]},
        {"prompt": format!("Part three. {}", "c".repeat(120_000))},
    ])
}

/// A model reply: one tool call.
pub fn tool(name: &str, args: Value) -> Value {
    json!({ "tools": [{ "name": name, "args": args }] })
}

/// Fails the test unless a request (`Report::request`) ends with the final
/// warning.
pub fn assert_final_warning(request: &[String]) {
    assert!(
        request
            .last()
            .is_some_and(|last| last.starts_with("user: <context_window_guidance>⏎Final warning")),
        "{request:?}"
    );
}

/// A model reply: a provider error.
pub fn error(message: &str) -> Value {
    json!({ "error": message })
}

/// The port the fake model endpoint (`fake_openai.mjs`) wrote to
/// `port_file` once it listens; fails if `server` exits first or never
/// listens within `patience` (a bound on waiting, not on speed).
pub fn wait_for_port(
    port_file: &Path,
    server: &mut std::process::Child,
    patience: std::time::Duration,
) -> String {
    let start = std::time::Instant::now();
    loop {
        if let Some(port) = std::fs::read_to_string(port_file)
            .ok()
            .filter(|port| !port.is_empty())
        {
            return port;
        }
        assert!(
            start.elapsed() < patience,
            "the fake endpoint never listened"
        );
        if let Some(status) = server.try_wait().expect("the fake endpoint's status") {
            panic!("the fake endpoint exited ({status})");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// The file called `name` anywhere under `root`.
pub fn find_note(root: &Path, name: &str) -> Option<PathBuf> {
    walk(root)
        .into_iter()
        .find(|p| p.file_name().is_some_and(|n| n == name))
}

/// Every file under `dir`.
pub use notesoup_test_support::files::files_under as walk;

/// How long to wait for Pi in a terminal to reach a state before failing
/// with the pane. A bound on waiting, not an assertion on speed.
pub const PATIENCE: std::time::Duration = std::time::Duration::from_secs(180);

/// A home for the real `pi` command: a temporary root with Pi's agent
/// directory, a project and a notes root, and the environment `pi` and
/// `notesoup-pi` run in (offline, Node 22 and `pi` on `PATH`).
pub struct PiHome {
    _temp: tempfile::TempDir,
    pub root: PathBuf,
    pub agent: PathBuf,
    pub project: PathBuf,
    pub notes: PathBuf,
    pub env: Vec<(&'static str, std::ffi::OsString)>,
}

impl PiHome {
    pub fn new(pi: &Pi, prefix: &str) -> Self {
        let temp = tempfile::Builder::new().prefix(prefix).tempdir().unwrap();
        let root = temp.path().to_path_buf();
        let agent = root.join("agent");
        let project = root.join("project");
        let notes = root.join("notes");
        std::fs::create_dir_all(&agent).unwrap();
        std::fs::create_dir_all(&project).unwrap();
        let env = vec![
            ("PATH", pi.path()),
            ("HOME", root.clone().into()),
            ("PI_CODING_AGENT_DIR", agent.clone().into()),
            ("PI_NOTES_HOME", notes.clone().into()),
            ("PI_NOTES_AGENT", "tester".into()),
            ("PI_OFFLINE", "1".into()),
        ];
        Self {
            _temp: temp,
            root,
            agent,
            project,
            notes,
            env,
        }
    }

    /// `notesoup-pi install --dir <root>/pi-package` (which runs `pi
    /// install <dir>` itself, `pi` being on `PATH`); returns the package
    /// folder.
    pub fn install(&self) -> PathBuf {
        let package = self.root.join("pi-package");
        notesoup_test_support::child::stdout_of(
            Command::new(crate::sidecar())
                .args(["install", "--dir"])
                .arg(&package)
                .envs(self.env.iter().map(|(k, v)| (k, v))),
        );
        package
    }

    /// `pi <args>` in a tmux pane of 160 by 50 in the project, on a tmux
    /// server of its own called `socket`.
    pub fn start_pi(&self, socket: String, args: &str) -> Pane {
        let pane = Pane { socket };
        // The new tmux server inherits this environment; the command sets
        // it again because a login shell may rewrite PATH.
        let assignments: Vec<String> = self
            .env
            .iter()
            .map(|(key, value)| {
                format!("{key}='{}'", value.to_string_lossy().replace('\'', "'\\''"))
            })
            .collect();
        // The shell keeps the pane after pi exits, so a failure shows its
        // output.
        let command = format!(
            "env {} pi{args}; echo \"[pi exited $?]\"; sleep 86400",
            assignments.join(" ")
        );
        let status = Command::new("tmux")
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .args(["-L", &pane.socket, "-f", "/dev/null", "new-session", "-d"])
            .args(["-x", "160", "-y", "50", "-c"])
            .arg(&self.project)
            .arg(command)
            .status()
            .unwrap();
        assert!(status.success(), "tmux new-session failed");
        pane
    }
}

/// Fails unless tmux is on `PATH`: the terminal tests need it.
pub fn assert_tmux() {
    assert!(
        Command::new("tmux").arg("-V").output().is_ok(),
        "the terminal test needs tmux on PATH"
    );
}

/// A tmux pane on a server of its own, killed when dropped.
pub struct Pane {
    socket: String,
}

impl Drop for Pane {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .status();
    }
}

impl Pane {
    /// What the pane shows.
    pub fn text(&self) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket, "capture-pane", "-p", "-t", "0"])
            .output()
            .expect("tmux capture-pane");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Sends tmux keys: `["-l", text]` types text, `["Tab"]` a key.
    pub fn keys(&self, keys: &[&str]) {
        let status = Command::new("tmux")
            .args(["-L", &self.socket, "send-keys", "-t", "0"])
            .args(keys)
            .status()
            .expect("tmux send-keys");
        assert!(status.success());
    }

    /// Types `text`, then Enter.
    pub fn type_line(&self, text: &str) {
        self.keys(&["-l", text]);
        self.keys(&["Enter"]);
    }

    /// Waits until `done` holds for the pane's lines (trailing blanks
    /// trimmed).
    pub fn wait_for_lines(&self, what: &str, done: impl Fn(&[&str]) -> bool) {
        self.wait_for(what, |text| {
            let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
            done(&lines)
        });
    }

    /// Waits until `done` holds for what the pane shows, re-checking as Pi
    /// works; fails if pi exits or after [`PATIENCE`].
    pub fn wait_for(&self, what: &str, done: impl Fn(&str) -> bool) {
        let start = std::time::Instant::now();
        loop {
            let text = self.text();
            if done(&text) {
                return;
            }
            assert!(!text.contains("[pi exited "), "pi exited:\n{text}");
            assert!(
                start.elapsed() < PATIENCE,
                "Pi never reached: {what}\n--- pane ---\n{text}"
            );
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
}

/// The fake OpenAI-compatible endpoint (`fake_openai.mjs`) on 127.0.0.1,
/// serving `script` and logging every request to `requests.jsonl`; ended
/// when dropped.
pub struct Endpoint {
    server: notesoup_test_support::child::Reaped,
    log: PathBuf,
    port: String,
}

impl Endpoint {
    /// Starts it with its script, port file and log in `root`, and waits
    /// (at most [`PATIENCE`]) until it listens.
    pub fn start(pi: &Pi, root: &Path, script: &Value) -> Self {
        std::fs::write(root.join("script.json"), script.to_string()).unwrap();
        let port_file = root.join("port");
        let log = root.join("requests.jsonl");
        let server = notesoup_test_support::child::Reaped(
            Command::new(&pi.node)
                .arg(adapter_dir().join("tests/real_pi/fake_openai.mjs"))
                .arg(root.join("script.json"))
                .arg(&port_file)
                .arg(&log)
                .spawn()
                .unwrap(),
        );
        let mut endpoint = Self {
            server,
            log,
            port: String::new(),
        };
        endpoint.port = wait_for_port(&port_file, &mut endpoint.server.0, PATIENCE);
        endpoint
    }

    /// Pi's `models.json` naming this endpoint as provider `fake` with
    /// `models` (`id`, `name`).
    pub fn models_json(&self, models: &[(&str, &str)]) -> Value {
        let models: Vec<Value> = models
            .iter()
            .map(|(id, name)| json!({"id": id, "name": name, "contextWindow": 200000, "maxTokens": 8192}))
            .collect();
        json!({"providers": {"fake": {
            "baseUrl": format!("http://127.0.0.1:{}/v1", self.port),
            "api": "openai-completions",
            "apiKey": "test-key",
            "models": models,
        }}})
    }

    /// Every request it received.
    pub fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|line| serde_json::from_str(line).expect("a logged request"))
            .collect()
    }
}

/// `(role, text)` of every message of a request.
pub fn message_texts(request: &Value) -> Vec<(String, String)> {
    request["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| {
            let text =
                notesoup_test_support::fake_model::content_text(&m["content"]).unwrap_or_default();
            (m["role"].as_str().unwrap_or("?").to_owned(), text)
        })
        .collect()
}
