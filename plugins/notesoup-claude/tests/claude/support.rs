//! Shared helpers: fixtures recorded from Claude Code 2.1.332, and a
//! sandbox that runs the built `notesoup` binary like Claude Code does.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Output, Stdio};

use notesoup_test_support::child::assert_succeeded;
use notesoup_test_support::files::put;
use serde_json::{Value, json};

/// The first session of the recorded chain: startup, a Bash call, an MCP
/// `history_list` call, a reminder, a Stop block, `/compact`, then `/clear`.
pub const CHAIN_1: &str = "b692a2c7-03fa-4b17-808f-de9efe7f18df";
/// The second session: the chain after `/clear`, with an MCP
/// `history_windows` call.
pub const CHAIN_2: &str = "0eed47c1-e495-4b2e-94a8-752513f12e74";

/// A file under `tests/claude/fixtures/`.
pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/claude/fixtures")
        .join(name)
}

/// A GitHub-token-shaped string, built here so no credential-looking
/// literal sits in the source.
pub fn fake_token() -> String {
    format!("ghp_{}", "aB3dE5gH7jK9mN1pQ2rS4tU6vW8xY0zAbCdE")
}

/// The built binary.
pub fn notesoup_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_notesoup"))
}

/// A temporary world for one test: a home with Claude Code's directory, the
/// plugin data directory, a notes root and a git project.
pub struct Sandbox {
    _dir: tempfile::TempDir,
    /// `$HOME`.
    pub home: PathBuf,
    /// `${CLAUDE_PLUGIN_DATA}`.
    pub data: PathBuf,
    /// `~/.cache/notesoup`: the boots' and hooks' caches.
    pub cache: PathBuf,
    /// `PI_NOTES_HOME`.
    pub notes: PathBuf,
    /// The project (a git repository root).
    pub project: PathBuf,
    /// Extra environment for every run.
    pub env: Vec<(String, String)>,
}

impl Sandbox {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let home = root.join("home");
        let data = home.join(".claude/plugins/data/notesoup-test");
        let notes = root.join("notes");
        let project = root.join("work").join("proj");
        for d in [&home, &data, &notes, &project.join(".git")] {
            std::fs::create_dir_all(d).unwrap();
        }
        Self {
            _dir: dir,
            cache: home.join(".cache/notesoup"),
            home,
            data,
            notes,
            project,
            env: Vec::new(),
        }
    }

    /// Sets `name` to `value` in the environment of every later run.
    pub fn set_env(&mut self, name: &str, value: impl Into<String>) {
        self.env.push((name.to_owned(), value.into()));
    }

    /// The record notesoup keeps of `session`, as JSON.
    pub fn session_record(&self, session: &str) -> Value {
        let path = self.data.join(format!("sessions/{session}.json"));
        serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
    }

    /// The file of `kind` (`note-heads`, `boot-shelves`) the boots of the
    /// sandbox's project keep.
    pub fn kept_file(&self, kind: &str) -> PathBuf {
        let key = notesoup_core::notes::project_key(&self.project);
        notesoup_test_support::files::kept_file(&self.cache, kind, &key)
    }

    /// The kept shelves' file once it lists `note`, waited for at most
    /// `within` (`None` then).
    pub fn shelves_listing(
        &self,
        note: &str,
        within: std::time::Duration,
    ) -> Option<std::fs::Metadata> {
        let until = std::time::Instant::now() + within;
        let key = notesoup_core::notes::project_key(&self.project);
        loop {
            // None kept yet: no folder for them, or the folder without
            // the file.
            let shelves =
                notesoup_test_support::files::find_kept_file(&self.cache, "boot-shelves", &key);
            let listed = shelves
                .as_ref()
                .and_then(|file| std::fs::read(file).ok())
                .is_some_and(|index| String::from_utf8_lossy(&index).contains(note));
            if let Some(file) = shelves.filter(|_| listed) {
                return std::fs::metadata(file).ok();
            }
            if std::time::Instant::now() > until {
                return None;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }

    /// Asserts that the kept shelves' file is the one `kept` describes
    /// (same inode and modification time): a boot served from the shelves
    /// leaves it, one that lists saves it anew.
    pub fn assert_shelves_as_kept(&self, kept: &std::fs::Metadata) {
        use std::os::unix::fs::MetadataExt;
        let now = std::fs::metadata(self.kept_file("boot-shelves")).unwrap();
        assert_eq!(
            (now.ino(), now.mtime(), now.mtime_nsec()),
            (kept.ino(), kept.mtime(), kept.mtime_nsec()),
            "the shelves were saved anew"
        );
    }

    /// Where Claude Code would write `session`'s transcript.
    pub fn transcript(&self, session: &str) -> PathBuf {
        let slug: String = self
            .project
            .to_string_lossy()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        self.home
            .join(".claude/projects")
            .join(slug)
            .join(format!("{session}.jsonl"))
    }

    /// Runs `notesoup <args>` with `stdin`, in Claude Code's environment for
    /// plugin processes.
    pub fn run(&self, args: &[&str], stdin: &[u8]) -> Output {
        self.run_bin(&notesoup_bin(), args, stdin)
    }

    pub fn command(&self, bin: &Path, args: &[&str]) -> Command {
        let mut cmd = Command::new(bin);
        cmd.args(args)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("PI_NOTES_HOME", &self.notes)
            .env("CLAUDE_PLUGIN_DATA", &self.data)
            .env("CLAUDE_PROJECT_DIR", &self.project)
            .current_dir(&self.project);
        for (key, value) in &self.env {
            cmd.env(key, value);
        }
        cmd
    }

    pub fn run_bin(&self, bin: &Path, args: &[&str], stdin: &[u8]) -> Output {
        let mut child = spawn(
            self.command(bin, args)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped()),
        );
        child.stdin.take().unwrap().write_all(stdin).unwrap();
        child.wait_with_output().unwrap()
    }

    /// A recorded hook payload with its paths moved into this sandbox and
    /// its session id replaced by `session`.
    pub fn payload(&self, name: &str, session: &str) -> Value {
        let text = std::fs::read_to_string(fixture(&format!("hooks/{name}.json"))).unwrap();
        let mut value: Value = serde_json::from_str(&text).unwrap();
        value["session_id"] = session.into();
        value["cwd"] = self.project.to_string_lossy().into();
        value["transcript_path"] = self.transcript(session).to_string_lossy().into();
        value
    }

    /// Runs `notesoup hook <event>` on `payload`; the hook must exit 0 and
    /// print nothing or one JSON object.
    pub fn hook(&self, event: &str, payload: &Value) -> Option<Value> {
        let output = self.run(&["hook", event], payload.to_string().as_bytes());
        assert!(
            output.status.success(),
            "hook {event} exited {}",
            output.status
        );
        let stdout = String::from_utf8(output.stdout).unwrap();
        if stdout.is_empty() {
            return None;
        }
        assert!(
            stdout.ends_with('\n') && stdout.lines().count() == 1,
            "{stdout}"
        );
        Some(serde_json::from_str(&stdout).unwrap())
    }

    /// A copy of the plugin directory with the built binary in `bin/`, as
    /// `cargo xtask claude-plugin` lays it out.
    pub fn plugin_copy(&self) -> PathBuf {
        self.laid_out_copy("plugin")
    }

    /// A copy of the crate's `folder` (`plugin`, or `mod`: the reset mod)
    /// with the built binary in `bin/`, as `cargo xtask claude-plugin` lays
    /// it out.
    pub fn laid_out_copy(&self, folder: &str) -> PathBuf {
        let copy = self.home.join(format!("{folder}-copy"));
        copy_dir(
            &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(folder),
            &copy,
        );
        std::fs::create_dir_all(copy.join("bin")).unwrap();
        std::fs::copy(notesoup_bin(), copy.join("bin/notesoup")).unwrap();
        copy
    }

    /// Starts `session` as Claude Code does (its SessionStart hook on
    /// startup), then writes the row of the boot's context and `rows` to its
    /// transcript. Returns the boot.
    pub fn start_session(&self, session: &str, rows: &[String]) -> String {
        let boot = context_of(
            &self
                .hook(
                    "session-start",
                    &self.payload("SessionStart-startup", session),
                )
                .unwrap(),
            "SessionStart",
        );
        let mut all = vec![hook_context_row("h1", &boot)];
        all.extend_from_slice(rows);
        self.append_transcript(session, &all);
        boot
    }

    /// Appends transcript rows for `session`.
    pub fn append_transcript(&self, session: &str, rows: &[String]) {
        let path = self.transcript(session);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .unwrap();
        for row in rows {
            writeln!(file, "{row}").unwrap();
        }
    }
}

/// The rows of the JSONL file at `path` that parse (a torn line left out).
pub fn json_rows(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

/// Appends `bytes` to the file at `path` (made when missing), in one write,
/// as a host appends to a transcript it is writing.
pub fn append(path: &Path, bytes: &[u8]) {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    file.write_all(bytes).unwrap();
    file.flush().unwrap();
}

/// Spawns `cmd`, retrying while a freshly copied executable is still open
/// for writing in a child another test thread forked ("text file busy").
pub fn spawn(cmd: &mut Command) -> std::process::Child {
    for _ in 0..50 {
        match cmd.spawn() {
            Err(err) if err.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            other => return other.unwrap(),
        }
    }
    cmd.spawn().unwrap()
}

/// A main-thread model reply whose request used `context_tokens` in all.
pub fn reply_row(uuid: &str, context_tokens: u64) -> String {
    format!(
        r#"{{"type":"assistant","uuid":"{uuid}","parentUuid":null,"isSidechain":false,"requestedModel":"claude-opus-5-5","message":{{"id":"msg-{uuid}","model":"claude-opus-5-5","role":"assistant","content":[{{"type":"text","text":"ok"}}],"usage":{{"input_tokens":{},"cache_creation_input_tokens":0,"cache_read_input_tokens":{},"output_tokens":10}}}}}}"#,
        context_tokens / 2,
        context_tokens - context_tokens / 2 - 10
    )
}

/// A main-thread user prompt row.
pub fn user_row(uuid: &str, parent: &str, text: &str) -> String {
    json!({"type":"user","uuid":uuid,"parentUuid":parent,"isSidechain":false,"message":{"role":"user","content":text}}).to_string()
}

/// A main-thread reply row `uuid` (`a<N>`, its message `m<N>`) after
/// `parent` calling the plugin's MCP tool `tool` as `tool_use_id`.
pub fn mcp_call_row(uuid: &str, parent: Option<&str>, tool_use_id: &str, tool: &str) -> String {
    let message = format!("m{}", uuid.trim_start_matches('a'));
    json!({"type":"assistant","uuid":uuid,"parentUuid":parent,"isSidechain":false,
        "message":{"id":message,"model":"claude-opus-5-5","role":"assistant","content":[
            {"type":"tool_use","id":tool_use_id,"name":format!("mcp__plugin_notesoup_notesoup__{tool}"),"input":{}}]}})
    .to_string()
}

/// A compact boundary row.
pub fn boundary_row(uuid: &str) -> String {
    format!(
        r#"{{"type":"system","subtype":"compact_boundary","uuid":"{uuid}","parentUuid":null,"isSidechain":false,"content":"Conversation compacted"}}"#
    )
}

/// The row Claude Code writes for a SessionStart hook's context.
pub fn hook_context_row(uuid: &str, text: &str) -> String {
    serde_json::json!({
        "type": "attachment", "uuid": uuid, "parentUuid": null, "isSidechain": false,
        "attachment": {"type": "hook_additional_context", "content": [text], "hookName": "SessionStart", "hookEvent": "SessionStart"}
    })
    .to_string()
}

/// The additional context of a hook output, checking its event name.
pub fn context_of(output: &Value, event: &str) -> String {
    assert_eq!(
        output["hookSpecificOutput"]["hookEventName"], event,
        "{output}"
    );
    output["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// The message a hook output shows the user (`systemMessage`), which must
/// be there.
pub fn system_message(output: &Value) -> &str {
    output["systemMessage"]
        .as_str()
        .unwrap_or_else(|| panic!("no systemMessage: {output}"))
}

/// Copies a directory tree.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// A running `notesoup mcp`, spoken to in lines as Claude Code does.
pub struct McpServer {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl McpServer {
    pub fn start(sb: &Sandbox) -> Self {
        let mut child = spawn(
            sb.command(&notesoup_bin(), &["mcp"])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit()),
        );
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Self {
            child,
            stdin,
            stdout,
        }
    }

    /// Sends `line` as it is, then a newline.
    pub fn send_line(&mut self, line: &[u8]) {
        self.stdin.write_all(line).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }

    pub fn send(&mut self, message: &Value) {
        self.send_line(message.to_string().as_bytes());
    }

    /// The next line the server writes, without its newline.
    pub fn read_line(&mut self) -> String {
        let mut line = String::new();
        let read = self.stdout.read_line(&mut line).unwrap();
        assert!(read > 0, "the server closed its output");
        assert!(line.ends_with('\n'), "{line}");
        line.pop();
        line
    }

    /// Sends `message` and reads the next line as JSON.
    pub fn request(&mut self, message: &Value) -> Value {
        self.send(message);
        serde_json::from_str(&self.read_line()).unwrap()
    }

    /// The server's process id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Closes stdin; the server must end with success.
    pub fn finish(mut self) {
        drop(self.stdin);
        assert!(self.child.wait().unwrap().success());
    }
}

/// A `tools/call` of `name` with request id `id` as Claude Code 2.1.332
/// sends it, its `_meta` naming the model's tool use `tool_use_id`.
pub fn tools_call(id: u64, name: &str, arguments: Value, tool_use_id: &str) -> Value {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": name, "arguments": arguments, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "claude-code", "version": "2.1.332"},
            "io.modelcontextprotocol/clientCapabilities": {},
            "claudecode/toolUseId": tool_use_id}}
    })
}

/// A model turn calling notesoup's `name` with `input`, and its result,
/// recorded `at`.
pub fn tool_rows(id: &str, name: &str, input: &Value, at: &str) -> [String; 2] {
    [
        serde_json::json!({"type": "assistant", "uuid": format!("a-{id}"), "parentUuid": null,
            "isSidechain": false, "timestamp": at, "requestedModel": "claude-opus-5-5",
            "message": {"id": format!("msg-{id}"), "model": "claude-opus-5-5", "role": "assistant",
                "content": [{"type": "tool_use", "id": format!("toolu_{id}"),
                    "name": format!("mcp__plugin_notesoup_notesoup__{name}"), "input": input}],
                "usage": {"input_tokens": 1000, "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 60_000, "output_tokens": 10}}})
        .to_string(),
        serde_json::json!({"type": "user", "uuid": format!("u-{id}"), "parentUuid": format!("a-{id}"),
            "isSidechain": false, "timestamp": at,
            "message": {"role": "user", "content": [{"type": "tool_result",
                "tool_use_id": format!("toolu_{id}"), "content": "{}"}]}})
        .to_string(),
    ]
}

impl Sandbox {
    /// Writes the project's `.claude/notesoup.json`.
    pub fn project_settings(&self, json: &str) {
        let settings = self.project.join(".claude");
        put(&settings.join("notesoup.json"), json);
    }

    /// Runs `notesoup <args>` with no input, asserts it succeeded and
    /// returns its stdout.
    pub fn run_ok(&self, args: &[&str]) -> String {
        let output = self.run(args, b"");
        assert_succeeded(&output, format_args!("notesoup {args:?}"));
        String::from_utf8(output.stdout).unwrap()
    }

    /// A notes root whose Git history holds `@project/MAP.md` as `# Map\n
    /// alpha beta\n`, the note changed since (`# Map\nchanged since\n`) so
    /// only Git can say what a later update applied to. Returns a time a
    /// minute from now, for the calls of a session recorded after it.
    pub fn map_in_git_history(&self) -> String {
        self.run_ok(&["notes", "write", "@project/MAP.md", "# Map\nalpha beta\n"]);
        notesoup_core::dream::audit_commit(&self.notes, "baseline one").unwrap();
        self.run_ok(&[
            "notes",
            "write",
            "@project/MAP.md",
            "# Map\nchanged since\n",
        ]);
        jiff::Timestamp::from_second(jiff::Timestamp::now().as_second() + 60)
            .unwrap()
            .to_string()
    }
}

/// A `notes_update` of `@project/MAP.md` replacing `old` with `new`.
pub fn map_update(old: &str, new: &str) -> Value {
    json!({"address": "@project/MAP.md", "edits": [{"oldText": old, "newText": new}]})
}

/// The ledger of the recorded session of `files` (`(session id, fixture)`,
/// a `/clear` chain in order, under the first one's id).
pub fn recorded_ledger(files: &[(&str, &str)]) -> notesoup_core::history::SessionLedger {
    use notesoup_claude::transcript::decode::{ChainFile, decode_chain_with_signals};
    let chain: Vec<ChainFile> = files
        .iter()
        .map(|(session, name)| ChainFile {
            session_id: (*session).into(),
            path: fixture(name),
        })
        .collect();
    let (transcript, signals) = decode_chain_with_signals(files[0].0, &chain).unwrap();
    let history = notesoup_core::history::History::new(transcript).unwrap();
    notesoup_core::history::session_ledger(&history, &signals)
}

/// The ledger of the recorded `/clear` chain: a compaction, a `/clear`, an
/// open window.
pub fn chain_ledger() -> notesoup_core::history::SessionLedger {
    recorded_ledger(&[
        (CHAIN_1, "chain-1-compact.jsonl"),
        (CHAIN_2, "chain-2-after-clear.jsonl"),
    ])
}
