//! The three hosts, each configured the way it is in production (its
//! environment, given here as a lookup, never the process environment) and
//! driven through its public entry point.

use std::path::{Path, PathBuf};

use notesoup_claude::env::HostEnv;
use notesoup_claude::hook::{self, io::Event};
use notesoup_claude::mcp::{ServerInfo, serve};
use notesoup_claude::tools::ClaudeTools;
use notesoup_core::notes::NotesIdentity;
use notesoup_dsh::boot::NotesPlace;
use notesoup_dsh::server::Sidecar;
use notesoup_pi::extension::{Notesoup, NotesoupConfig};
use notesoup_pi::host::SessionStartReason;
use notesoup_pi::session::AgentMessage;
use notesoup_pi_testkit::{
    Clock, Harness, HostState, IdSource, ScriptedModel, SessionManager, Step, message_text,
};
use serde_json::{Value, json};

/// The agent slug dsh's sidecar runs as (`PI_NOTES_AGENT`).
pub const DSH_AGENT: &str = "dsh";
/// The agent slug the Pi extension runs as (`PI_NOTES_AGENT`).
pub const PI_AGENT: &str = "pi";
/// Claude's agent slug, fixed by the plugin.
pub const CLAUDE_AGENT: &str = "claude";

/// One machine: a home, one notes root, one git project, Claude's plugin data
/// and a folder for Pi's session files.
pub struct HostMachine {
    _dir: tempfile::TempDir,
    pub home: PathBuf,
    pub notes: PathBuf,
    pub project: PathBuf,
    pub claude_data: PathBuf,
    pub pi_sessions: PathBuf,
}

impl HostMachine {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let home = root.join("home");
        let notes = root.join("notes");
        let project = root.join("work").join("shop");
        let claude_data = home.join(".claude/plugins/data/notesoup-e2e");
        let pi_sessions = home.join(".pi/sessions");
        for dir in [&notes, &project.join(".git"), &claude_data, &pi_sessions] {
            std::fs::create_dir_all(dir).unwrap();
        }
        Self {
            _dir: dir,
            home,
            notes,
            project,
            claude_data,
            pi_sessions,
        }
    }

    /// The environment a host process sees; `agent` is its `PI_NOTES_AGENT`.
    pub fn env(&self, agent: Option<&str>) -> impl Fn(&str) -> Option<String> {
        let path = |p: &Path| p.to_string_lossy().into_owned();
        let vars = [
            ("HOME", path(&self.home)),
            ("PI_NOTES_HOME", path(&self.notes)),
            ("CLAUDE_PLUGIN_DATA", path(&self.claude_data)),
            ("CLAUDE_PROJECT_DIR", path(&self.project)),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .chain(agent.map(|a| ("PI_NOTES_AGENT".to_owned(), a.to_owned())))
        .collect::<Vec<_>>();
        move |name| {
            vars.iter()
                .find(|(key, _)| key == name)
                .map(|(_, v)| v.clone())
        }
    }
}

/// A tool answer as the model sees it, whatever the host.
#[derive(Debug, Clone, PartialEq)]
pub struct HostAnswer {
    pub text: String,
    pub is_error: bool,
}

impl HostAnswer {
    /// Asserts a successful answer and returns its text.
    pub fn ok(self) -> String {
        assert!(!self.is_error, "{}", self.text);
        self.text
    }

    /// Asserts a refusal with `code` (core's `error: <code>: ...` text).
    pub fn refused(&self, code: &str) {
        assert!(self.is_error, "not refused: {}", self.text);
        assert!(
            self.text.starts_with(&format!("error: {code}: ")),
            "{}",
            self.text
        );
    }
}

/// Claude Code's side: the `notesoup mcp` server and the hooks.
pub struct Claude {
    env: HostEnv,
    project: PathBuf,
    next_id: u64,
}

impl Claude {
    pub fn new(world: &HostMachine) -> Self {
        let env = HostEnv::from_lookup(world.env(None));
        Self {
            env,
            project: world.project.clone(),
            next_id: 1,
        }
    }

    /// One JSON-RPC request through the MCP server, after the handshake a
    /// client makes; its `result`.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let lines = [
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "notesoup-e2e", "version": "1"}}}),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        ];
        let input: String = lines.iter().map(|line| format!("{line}\n")).collect();
        let info = ServerInfo {
            name: "notesoup",
            version: "e2e",
        };
        let tools = ClaudeTools::serving(self.env.clone(), self.project.clone());
        let mut output = Vec::new();
        serve(input.as_bytes(), &mut output, &info, tools).expect("the server runs");
        let reply = String::from_utf8(output)
            .expect("UTF-8")
            .lines()
            .map(|line| serde_json::from_str::<Value>(line).expect("a JSON reply"))
            .find(|reply| reply["id"] == id)
            .expect("the request is answered");
        assert!(reply.get("error").is_none(), "{reply}");
        reply["result"].clone()
    }

    /// `tools/call`.
    pub fn call(&mut self, name: &str, arguments: Value) -> HostAnswer {
        let result = self.request("tools/call", json!({"name": name, "arguments": arguments}));
        let content = result["content"].as_array().expect("content");
        assert_eq!(content.len(), 1, "{result}");
        HostAnswer {
            text: content[0]["text"].as_str().expect("text").to_owned(),
            is_error: result["isError"] == true,
        }
    }

    /// The boot the SessionStart(startup) hook gives a new session.
    pub fn boot(&self, world: &HostMachine, session_id: &str) -> String {
        let payload = json!({
            "session_id": session_id,
            "transcript_path": world.home.join(".claude/projects/e2e").join(format!("{session_id}.jsonl")),
            "cwd": world.project,
            "hook_event_name": "SessionStart",
            "source": "startup",
        });
        let out = hook::run(
            Event::SessionStart,
            payload.to_string().as_bytes(),
            &self.env,
        );
        let out: Value = serde_json::from_str(&out.to_stdout()).expect("one JSON object");
        assert_eq!(out["hookSpecificOutput"]["hookEventName"], "SessionStart");
        out["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .expect("a boot")
            .to_owned()
    }
}

/// dsh's side: the sidecar, spoken to in its JSON lines.
pub struct Dsh {
    sidecar: Sidecar,
    cwd: String,
    next_id: u64,
}

impl Dsh {
    pub fn new(world: &HostMachine) -> Self {
        let env = world.env(Some(DSH_AGENT));
        let place = NotesPlace {
            root: NotesIdentity::default_root(&env).expect("a notes root"),
            agent: NotesIdentity::agent_slug(&env),
            cache: None,
        };
        let mut dsh = Self {
            sidecar: Sidecar::new(place),
            cwd: world.project.to_string_lossy().into_owned(),
            next_id: 1,
        };
        dsh.request(
            "hello",
            json!({"protocol": 1, "bundle": "0.1.0", "dsh": "0.1.0-rc.8", "settings": {}}),
        );
        dsh
    }

    /// One request line; its `result`.
    pub fn request(&mut self, op: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let line = json!({"id": id, "op": op, "params": params}).to_string();
        let answer: Value = serde_json::from_str(&self.sidecar.answer_line(&line)).unwrap();
        assert_eq!(answer["id"], id, "{answer}");
        assert!(answer.get("error").is_none(), "{op}: {answer}");
        answer["result"].clone()
    }

    fn session(&self, id: &str) -> Value {
        json!({"id": id, "cwd": self.cwd, "model": "deepseek/deepseek-v4", "from": 0, "events": []})
    }

    /// A `tool` request of session `session_id`.
    pub fn call(&mut self, session_id: &str, name: &str, arguments: Value) -> HostAnswer {
        let params =
            json!({"session": self.session(session_id), "name": name, "arguments": arguments});
        let result = self.request("tool", params);
        HostAnswer {
            text: result["text"].as_str().expect("text").to_owned(),
            is_error: result["is_error"] == true,
        }
    }

    /// The boot `window.open` gives a session's first window.
    pub fn boot(&mut self, session_id: &str) -> String {
        let opened = self.request("window.open", json!({"session": self.session(session_id)}));
        assert_eq!(opened["window_id"], format!("dsh:{session_id}:1"));
        opened["context_text"].as_str().expect("text").to_owned()
    }
}

/// A Pi session on the reference host in the project, with the extension
/// configured from the environment, run to the end of one prompt: the model
/// takes `steps` (each a batch of tool calls), then answers `done`.
pub fn pi_session(
    world: &HostMachine,
    session_id: &str,
    steps: Vec<Vec<(&str, Value)>>,
) -> Harness<Notesoup> {
    let config = NotesoupConfig::from_env(world.env(Some(PI_AGENT))).expect("a notes root");
    let session = SessionManager::create(
        &world.pi_sessions,
        &world.project,
        session_id,
        Clock::System,
        IdSource::Random,
    );
    let host = HostState::new(session, None, &world.project);
    let extension = Notesoup::new(config, host.api_level).expect("Pi's API level is supported");
    let mut model = ScriptedModel::new(200_000);
    for calls in steps {
        model.push(Step::tools(None, calls));
    }
    model.push(Step::text("done"));
    let mut harness = Harness::new(host, extension, model);
    harness.start(SessionStartReason::Startup);
    harness.prompt("Work on the shop.");
    assert_eq!(harness.model.steps_left(), 0, "the script ran to its end");
    harness
}

/// The tool results the model received in the session's last request, in
/// call order.
pub fn pi_answers(harness: &Harness<Notesoup>) -> Vec<HostAnswer> {
    let last = harness.host.requests.last().expect("a request");
    last.messages
        .iter()
        .filter_map(|message| match message {
            AgentMessage::ToolResult(result) => Some(HostAnswer {
                text: message_text(message),
                is_error: result.is_error,
            }),
            _ => None,
        })
        .collect()
}

/// The boot the model received in the session's first request.
pub fn pi_boot(harness: &Harness<Notesoup>) -> String {
    let first = harness.host.requests.first().expect("a request");
    first
        .messages
        .iter()
        .map(message_text)
        .find(|text| text.starts_with("<context_window>"))
        .expect("the first request carries the boot")
}
