//! The shared adversarial corpus (`tests/adversarial/` at the workspace
//! root) against the real `notesoup` binary: MCP lines, hook and mod
//! inputs, and note addresses through `notes_write`. Every case gets a
//! bounded, coded refusal or a correct answer; the MCP server answers the
//! next request after each case, in the same process; hooks exit 0 with
//! their normal output; nothing outside the notes root changes.
//!
//! A regression that blocks (a FIFO opened for reading) hangs its test
//! instead of failing it; the harness reports tests that run too long.

use std::collections::BTreeMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};

use serde_json::value::RawValue;
use serde_json::{Value, json};

use notesoup_test_support::adversarial::corpus;
use notesoup_test_support::files::put;

use crate::support::{McpServer, Sandbox, reply_row, tools_call};

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

/// The bytes a case sends: `line`, `line_hex` or `parts`.
fn line_of(case: &Value) -> Vec<u8> {
    if let Some(line) = case["line"].as_str() {
        return line.as_bytes().to_vec();
    }
    if let Some(hex) = case["line_hex"].as_str() {
        return unhex(hex);
    }
    let mut bytes = Vec::new();
    for part in case["parts"].as_array().unwrap() {
        let piece = match part["text"].as_str() {
            Some(text) => text.as_bytes().to_vec(),
            None => unhex(part["hex"].as_str().unwrap()),
        };
        for _ in 0..part["times"].as_u64().unwrap() {
            bytes.extend_from_slice(&piece);
        }
    }
    bytes
}

/// Every entry under `root` except those under `skip`, with what it is and
/// a digest of its content, so any change shows.
fn tree(root: &Path, skip: &[&Path]) -> BTreeMap<PathBuf, String> {
    fn walk(dir: &Path, skip: &[&Path], out: &mut BTreeMap<PathBuf, String>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            if skip.contains(&path.as_path()) {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let kind = meta.file_type();
            let what = if kind.is_symlink() {
                format!("link to {}", std::fs::read_link(&path).unwrap().display())
            } else if kind.is_dir() {
                walk(&path, skip, out);
                "directory".to_owned()
            } else if kind.is_file() {
                let mut hasher = DefaultHasher::new();
                std::fs::read(&path).unwrap().hash(&mut hasher);
                format!("file {} {:x}", meta.len(), hasher.finish())
            } else {
                // FIFOs and sockets are never opened here.
                "special".to_owned()
            };
            out.insert(path, what);
        }
    }
    let mut out = BTreeMap::new();
    walk(root, skip, &mut out);
    out
}

/// The sandbox's root (home, notes, project and plugin data lie in it).
fn root_of(sb: &Sandbox) -> PathBuf {
    sb.notes.parent().unwrap().to_owned()
}

/// Tallies per class: how many cases were answered how.
#[derive(Default)]
struct Tally(BTreeMap<String, BTreeMap<String, usize>>);

impl Tally {
    fn add(&mut self, class: &str, answer: String) {
        *self
            .0
            .entry(class.to_owned())
            .or_default()
            .entry(answer)
            .or_default() += 1;
    }

    fn print(&self, what: &str) {
        println!("{what}:");
        for (class, answers) in &self.0 {
            let total: usize = answers.values().sum();
            let answers: Vec<String> = answers.iter().map(|(a, n)| format!("{n} {a}")).collect();
            println!("  {class}: {total} cases: {}", answers.join(", "));
        }
    }
}

/// A running `notesoup mcp`, spoken to in raw lines.
struct Server(McpServer);

impl Server {
    fn start(sb: &Sandbox) -> Self {
        Self(McpServer::start(sb))
    }

    fn send_line(&mut self, line: &[u8]) {
        self.0.send_line(line);
    }

    /// Sends a ping with id `probe` and returns every line answered before
    /// its reply; the reply itself must be the ping's.
    fn answers_before_probe(&mut self, probe: &str) -> Vec<String> {
        self.0
            .send(&json!({"jsonrpc": "2.0", "id": probe, "method": "ping"}));
        let probe_id = json!(probe).to_string();
        let mut before = Vec::new();
        loop {
            let line = self.0.read_line();
            // Raw members: a reply may carry an id no number type holds.
            let reply: BTreeMap<String, Box<RawValue>> = serde_json::from_str(&line).unwrap();
            if reply.get("id").map(|id| id.get()) == Some(probe_id.as_str()) {
                assert_eq!(reply["result"].get(), "{}", "{line}");
                return before;
            }
            before.push(line);
        }
    }

    /// `tools/call` of `name`, as Claude Code sends it.
    fn call(&mut self, id: u64, name: &str, arguments: Value) -> Value {
        let reply = self
            .0
            .request(&tools_call(id, name, arguments, &format!("toolu_adv_{id}")));
        assert_eq!(reply["id"], id, "{reply}");
        reply["result"].clone()
    }

    fn finish(self) {
        self.0.finish();
    }
}

/// The longest reply line any case may get: tool results are bounded to
/// 32 KiB of text, and errors repeat at most a short piece of the request.
const MAX_REPLY_BYTES: usize = 64 * 1024;

/// The text of a tool result.
fn tool_text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap()
}

/// Checks one MCP case's answers; returns how it was answered.
fn check_mcp_case(case: &Value, answers: &[String]) -> String {
    let expect = &case["expect"];
    let name = &case["case"];
    if expect["none"] == true {
        assert!(answers.is_empty(), "{name}: answered {answers:?}");
        return "no answer".to_owned();
    }
    assert_eq!(answers.len(), 1, "{name}: {answers:?}");
    let line = &answers[0];
    assert!(
        line.len() <= MAX_REPLY_BYTES,
        "{name}: {} bytes",
        line.len()
    );
    let mut raw: BTreeMap<String, Box<RawValue>> = serde_json::from_str(line).unwrap();
    let id = raw.remove("id");
    // Everything but the id reads as plain JSON.
    let reply: Value = serde_json::from_str(&serde_json::to_string(&raw).unwrap()).unwrap();
    assert_eq!(reply["jsonrpc"], "2.0", "{name}");
    assert_eq!(
        id.as_deref().map(RawValue::get),
        Some(expect["id"].as_str().unwrap()),
        "{name}: the id must come back as sent: {line:.300}"
    );
    if let Some(code) = expect["error"].as_i64() {
        assert_eq!(reply["error"]["code"], code, "{name}: {line:.300}");
        assert!(
            !reply["error"]["message"].as_str().unwrap().is_empty(),
            "{name}"
        );
        assert!(reply.get("result").is_none(), "{name}");
        return format!("JSON-RPC {code}");
    }
    let result = &reply["result"];
    assert!(
        reply.get("error").is_none() && result.is_object(),
        "{name}: {line:.300}"
    );
    if let Some(code) = expect["tool_error"].as_str() {
        assert_eq!(result["isError"], true, "{name}: {line:.300}");
        let text = tool_text(result);
        let got = text
            .strip_prefix("error: ")
            .and_then(|rest| rest.split(':').next())
            .unwrap_or_else(|| panic!("{name}: not a coded refusal: {text:.300}"));
        if code != "*" {
            assert_eq!(got, code, "{name}: {text:.300}");
        }
        return format!("tool refusal {got}");
    }
    assert_ne!(result["isError"], true, "{name}: {line:.300}");
    "result".to_owned()
}

#[test]
fn mcp_lines_corpus() {
    let sb = Sandbox::new();
    let root = root_of(&sb);
    let before = tree(&root, &[&sb.notes]);
    let mut server = Server::start(&sb);
    let mut tally = Tally::default();
    for (n, case) in corpus("mcp-lines.jsonl").iter().enumerate() {
        let line = line_of(case);
        assert!(!line.contains(&b'\n'), "{}: one line only", case["case"]);
        server.send_line(&line);
        let answers = server.answers_before_probe(&format!("probe-{n}"));
        let answer = check_mcp_case(case, &answers);
        tally.add(case["class"].as_str().unwrap(), answer);
    }
    server.finish();
    assert_eq!(tree(&root, &[&sb.notes]), before);
    tally.print("mcp-lines.jsonl");
}

#[test]
fn address_corpus_through_notes_write() {
    let sb = Sandbox::new();
    // A recorded session, so bare addresses are this session's notes.
    let mut start = sb.payload("SessionStart-startup", "adv-addresses");
    start["transcript_path"] = root_of(&sb)
        .join("no-transcript.jsonl")
        .to_string_lossy()
        .into();
    assert!(sb.hook("session-start", &start).is_some());
    let root = root_of(&sb);
    let before = tree(&root, &[&sb.notes]);
    let mut server = Server::start(&sb);
    let mut tally = Tally::default();
    let mut wrong = Vec::new();
    for (n, case) in corpus("addresses.jsonl").iter().enumerate() {
        let address = case["address"].as_str().unwrap();
        let expected = case["code"].as_str().unwrap();
        let result = server.call(
            n as u64,
            "notes_write",
            json!({"address": address, "content": "adversarial\n"}),
        );
        let text = tool_text(&result);
        assert!(text.len() <= 32 * 1024, "{address:?}: unbounded answer");
        let got = if result["isError"] == true {
            text.strip_prefix("error: ")
                .and_then(|rest| rest.split(':').next())
                .unwrap_or_else(|| panic!("{address:?}: not a coded refusal: {text:.300}"))
                .to_owned()
        } else {
            "ok".to_owned()
        };
        if got != expected {
            wrong.push(format!(
                "{address:?} ({}): expected {expected}, got {got}: {text:.200}",
                case["why"]
            ));
        }
        tally.add(expected, got);
    }
    // The server still serves after the whole corpus.
    assert!(server.answers_before_probe("probe-end").is_empty());
    server.finish();
    assert_eq!(tree(&root, &[&sb.notes]), before);
    tally.print("addresses.jsonl (expected code: answers)");
    assert!(
        wrong.is_empty(),
        "{} of the address corpus answered otherwise:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// Special files and transcripts the hook cases name.
struct Specials {
    dir: PathBuf,
    _socket: std::os::unix::net::UnixListener,
}

const MIB: usize = 1024 * 1024;

impl Specials {
    fn new(root: &Path) -> Self {
        let dir = root.join("special");
        std::fs::create_dir_all(dir.join("directory")).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(dir.join("fifo"))
            .status()
            .unwrap();
        assert!(made.success());
        std::os::unix::fs::symlink(dir.join("fifo"), dir.join("symlink-to-fifo")).unwrap();
        let socket = std::os::unix::net::UnixListener::bind(dir.join("socket")).unwrap();
        std::fs::write(dir.join("empty"), b"").unwrap();
        let usage = reply_row("u1", 150_000) + "\n";
        std::fs::write(dir.join("usage"), &usage).unwrap();
        let mut huge = usage.into_bytes();
        huge.extend_from_slice(br#"{"type":"user","uuid":"big","message":{"content":""#);
        huge.resize(huge.len() + 20 * MIB, b'A');
        huge.extend_from_slice(b"\"}}\n");
        std::fs::write(dir.join("usage-then-huge"), &huge).unwrap();
        std::fs::write(dir.join("huge-only"), vec![b'{'; 17 * MIB]).unwrap();
        let mut garbage = b"\xff\xfe{\"type\":\"assistant\"\n\n{torn\nnot json at all\n".to_vec();
        garbage.extend_from_slice(
            b"{\"type\":\"assistant\",\"message\":{\"usage\":\"lots\"}}\n\x00\x01",
        );
        std::fs::write(dir.join("garbage"), garbage).unwrap();
        Self {
            dir,
            _socket: socket,
        }
    }

    /// The transcript path of `kind` for case `n`.
    fn transcript(&self, kind: &str, n: usize) -> PathBuf {
        match kind {
            "missing" => self.dir.join(format!("missing-{n}.jsonl")),
            _ => {
                let path = self.dir.join(kind);
                assert!(
                    std::fs::symlink_metadata(&path).is_ok(),
                    "unknown transcript kind {kind}"
                );
                path
            }
        }
    }
}

fn mkfifo(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    // An earlier case may have left a hand-off marker here.
    let _ = std::fs::remove_file(path);
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(made.success());
}

/// Replaces the placeholders in every string of `value`.
fn fill(value: &mut Value, fill_in: &dyn Fn(&str) -> String) {
    match value {
        Value::String(text) => *text = fill_in(text),
        Value::Array(items) => items.iter_mut().for_each(|v| fill(v, fill_in)),
        Value::Object(map) => map.values_mut().for_each(|v| fill(v, fill_in)),
        _ => {}
    }
}

/// Checks one hook case's output; returns how it was answered.
fn check_hook_case(case: &Value, output: &std::process::Output) -> String {
    let name = &case["case"];
    assert!(
        output.status.success(),
        "{name}: exit {}: {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        output.stderr.is_empty(),
        "{name}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8(output.stdout.clone()).unwrap();
    assert!(stdout.len() <= MAX_REPLY_BYTES, "{name}: unbounded output");
    if let Some(text) = case["contains"].as_str() {
        assert!(stdout.contains(text), "{name}: {stdout:.500}");
    }
    let expect = case["expect"].as_str().unwrap();
    if expect == "empty" {
        assert_eq!(stdout, "", "{name}");
        return "no output".to_owned();
    }
    assert!(
        stdout.ends_with('\n') && stdout.lines().count() == 1,
        "{name}: {stdout:.500}"
    );
    let out: Value = serde_json::from_str(&stdout).unwrap();
    let context = out["hookSpecificOutput"]["additionalContext"].as_str();
    let notice = out["systemMessage"].as_str();
    match expect {
        "boot" | "boot-warned" => {
            assert_eq!(out["hookSpecificOutput"]["hookEventName"], "SessionStart");
            assert!(
                context.is_some_and(|c| c.contains("Current context window id: claude:")),
                "{name}: {stdout:.500}"
            );
            if expect == "boot" {
                assert_eq!(notice, None, "{name}");
            } else {
                assert!(
                    notice.is_some_and(|n| n.starts_with("notesoup: ")),
                    "{name}: {stdout:.500}"
                );
            }
        }
        "boot-failed" => {
            assert!(
                context.is_some_and(|c| c.starts_with("# notesoup\n")),
                "{name}: {stdout:.500}"
            );
            assert!(
                notice.is_some_and(|n| n.contains("Notes boot failed")),
                "{name}: {stdout:.500}"
            );
        }
        "context" => {
            assert!(
                context.is_some_and(|c| !c.is_empty()),
                "{name}: {stdout:.500}"
            );
        }
        "notice" => {
            assert!(
                notice.is_some_and(|n| n.starts_with("notesoup: ")),
                "{name}: {stdout:.500}"
            );
            assert_eq!(context, None, "{name}");
            assert!(out.get("decision").is_none(), "{name}");
        }
        "mod-ok" => assert_eq!(out["ok"], true, "{name}: {stdout:.500}"),
        "mod-error" => {
            assert_eq!(out["ok"], false, "{name}: {stdout:.500}");
            assert!(out["error"].is_string(), "{name}");
        }
        other => panic!("{name}: unknown expectation {other}"),
    }
    expect.to_owned()
}

#[test]
fn hook_inputs_corpus() {
    let sb = Sandbox::new();
    let root = root_of(&sb);
    let specials = Specials::new(&root);
    let plugin_data = sb.data.parent().unwrap().to_owned();
    let mod_data = plugin_data.join("notesoup-reset-test");
    let key = notesoup_core::notes::project_key(&sb.project);
    // `~/.cache`, made by the first boot for the caches.
    let caches = sb.cache.parent().unwrap().to_owned();
    let before = tree(&root, &[&sb.notes, &plugin_data, &caches]);
    let mut tally = Tally::default();
    for (n, case) in corpus("hook-inputs.jsonl").iter().enumerate() {
        let session = format!("adv-{n:04}");
        let transcript = specials.transcript(case["transcript"].as_str().unwrap_or("missing"), n);
        let fill_in = |text: &str| {
            text.replace("{session}", &session)
                .replace("{cwd}", &sb.project.to_string_lossy())
                .replace("{transcript}", &transcript.to_string_lossy())
                .replace("{mod_data}", &mod_data.to_string_lossy())
        };
        let stdin = if let Some(text) = case["stdin_text"].as_str() {
            fill_in(text).into_bytes()
        } else if let Some(hex) = case["stdin_hex"].as_str() {
            unhex(hex)
        } else {
            let mut value = case["stdin"].clone();
            fill(&mut value, &fill_in);
            if let Some(pad) = case["pad_bytes"].as_u64() {
                value["pad"] = "z".repeat(usize::try_from(pad).unwrap()).into();
            }
            value.to_string().into_bytes()
        };
        match case["record"].as_str() {
            None => {}
            Some("fifo-record") => mkfifo(&sb.data.join(format!("sessions/{session}.json"))),
            Some("directory-record") => {
                std::fs::create_dir_all(sb.data.join(format!("sessions/{session}.json"))).unwrap();
            }
            Some("garbage-record") => put(
                &sb.data.join(format!("sessions/{session}.json")),
                b"{\"sessionId\": [",
            ),
            Some("fifo-handoff") => {
                mkfifo(&sb.data.join(format!("projects/{key}/handoff.json")));
            }
            Some(other) => panic!("unknown record {other}"),
        }
        let args: Vec<&str> = case["run"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        let output = sb.run(&args, &stdin);
        let answer = check_hook_case(case, &output);
        tally.add(case["class"].as_str().unwrap(), answer);
    }
    assert_eq!(tree(&root, &[&sb.notes, &plugin_data, &caches]), before);
    // In the caches' directory only the hooks' caches.
    for path in tree(&sb.cache, &[]).keys() {
        let rel = path.strip_prefix(&sb.cache).unwrap().to_string_lossy();
        assert!(
            rel.is_empty()
                || rel.starts_with("transcript-scans")
                || rel.starts_with("boot-shelves")
                || rel.starts_with("note-heads"),
            "unexpected cache {rel}"
        );
    }
    // In the plugin data only records, planted files and hand-off markers.
    for path in tree(&plugin_data, &[]).keys() {
        let rel = path.strip_prefix(&plugin_data).unwrap().to_string_lossy();
        let name = path.file_name().unwrap().to_string_lossy();
        assert!(
            !name.starts_with('.'),
            "a temporary file was left behind: {rel}"
        );
        assert!(
            rel.starts_with("notesoup-test/sessions")
                || rel.starts_with("notesoup-test/projects")
                || rel == "notesoup-test",
            "unexpected {rel}"
        );
    }
    tally.print("hook-inputs.jsonl");
}

#[test]
fn history_over_special_transcripts_answers() {
    // A session recorded with a device or a FIFO as its transcript: the
    // history tools read it as empty and never block or stream forever.
    let sb = Sandbox::new();
    let root = root_of(&sb);
    let specials = Specials::new(&root);
    for (n, transcript) in [
        PathBuf::from("/dev/zero"),
        specials.transcript("fifo", 0),
        specials.transcript("directory", 0),
    ]
    .into_iter()
    .enumerate()
    {
        let mut start = sb.payload("SessionStart-startup", &format!("adv-hist-{n}"));
        start["transcript_path"] = transcript.to_string_lossy().into();
        assert!(sb.hook("session-start", &start).is_some());
        let mut server = Server::start(&sb);
        let result = server.call(1, "history_windows", json!({}));
        assert_ne!(result["isError"], true, "{transcript:?}: {result}");
        let result = server.call(2, "history_list", json!({}));
        assert_ne!(result["isError"], true, "{transcript:?}: {result}");
        server.finish();
    }
}
