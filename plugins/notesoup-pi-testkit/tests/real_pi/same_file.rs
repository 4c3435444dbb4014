//! The same script on real Pi (with the package and the sidecar) and on the
//! reference host (`notesoup-pi-testkit`, notesoup embedded directly): the session files
//! hold the same entries in the same order, and every entry notesoup wrote
//! or caused has the same keys and values. What legitimately differs is
//! normalised first: entry ids and timestamps, window ids (random in the
//! sidecar, sequential on the reference host), tool-call ids, and what the
//! model provider and Pi's own prompt put into messages (usage, response
//! metadata, the system prompt and tool declarations, Pi's token estimates).

use std::collections::HashMap;

use notesoup_pi::extension::{Notesoup, NotesoupConfig};
use notesoup_pi::host::{PiApiLevel, SessionStartReason};
use notesoup_pi_testkit::{
    Clock, Harness, HostState, IdSource, ScriptedModel, SessionManager, Step,
};
use serde_json::{Map, Value, json};

use super::support::{World, text, tool};

/// Replaces the session id, window ids (`pcw:<8 hex>:<root|8 hex>`), ISO times and dates by
/// stable placeholders, window ids numbered in order of first appearance.
struct Normalizer {
    session_id: String,
    windows: HashMap<String, String>,
}

impl Normalizer {
    fn text(&mut self, text: &str) -> String {
        let text = text.replace(&self.session_id, "<session>");
        let mut out = String::new();
        let mut rest = text.as_str();
        while let Some(at) = rest.find("pcw:") {
            out.push_str(&rest[..at]);
            let tail = &rest[at..];
            let len = window_id_len(tail);
            if len == 0 {
                out.push_str("pcw:");
                rest = &tail[4..];
                continue;
            }
            let next = self.windows.len();
            let name = self
                .windows
                .entry(tail[..len].to_owned())
                .or_insert_with(|| format!("<window {next}>"))
                .clone();
            out.push_str(&name);
            rest = &tail[len..];
        }
        out.push_str(rest);
        times(&out)
    }

    fn value(&mut self, value: &Value) -> Value {
        match value {
            Value::String(text) => Value::String(self.text(text)),
            Value::Array(items) => Value::Array(items.iter().map(|v| self.value(v)).collect()),
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), self.value(v)))
                    .collect::<Map<_, _>>(),
            ),
            other => other.clone(),
        }
    }
}

/// The length of a window id at the start of `text`, 0 if there is none.
fn window_id_len(text: &str) -> usize {
    let bytes = text.as_bytes();
    let hex = |range: std::ops::Range<usize>| {
        bytes.len() >= range.end && bytes[range].iter().all(u8::is_ascii_hexdigit)
    };
    if !(hex(4..12) && bytes.get(12) == Some(&b':')) {
        return 0;
    }
    if text[13..].starts_with("root") {
        17
    } else if hex(13..21) {
        21
    } else {
        0
    }
}

/// ISO timestamps (`2026-03-01T09:00:00.000Z`) and bare dates become placeholders.
fn times(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    let digit = |c: Option<&char>| c.is_some_and(char::is_ascii_digit);
    while i < chars.len() {
        let date = (0..10).all(|k| {
            let c = chars.get(i + k);
            if k == 4 || k == 7 {
                c == Some(&'-')
            } else {
                digit(c)
            }
        });
        if date {
            let mut end = i + 10;
            if chars.get(end) == Some(&'T') || chars.get(end) == Some(&' ') {
                let mut j = end + 1;
                while j < chars.len() && (chars[j].is_ascii_digit() || ":.Z+-".contains(chars[j])) {
                    j += 1;
                }
                if j > end + 1 {
                    end = j;
                }
            }
            out.push_str("<time>");
            i = end;
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

/// One entry with what may differ removed.
fn comparable(entry: &Value, normalizer: &mut Normalizer) -> Value {
    let mut entry = entry.as_object().cloned().unwrap_or_default();
    let own = entry.get("id").cloned();
    for key in ["id", "parentId", "timestamp"] {
        entry.remove(key);
    }
    match entry.get("type").and_then(Value::as_str) {
        Some("compaction") => {
            // Retain-none: the checkpoint keeps nothing before itself.
            let first = entry.remove("firstKeptEntryId");
            entry.insert("keepsNothing".into(), json!(first == own));
            // Pi's estimate over its own prompt, and the replayed system
            // message holding that prompt.
            entry.remove("tokensBefore");
            entry.remove("systemMessage");
        }
        Some("message") => {
            if let Some(Value::Object(message)) = entry.get_mut("message") {
                message.remove("timestamp");
                match message.get("role").and_then(Value::as_str) {
                    Some("assistant") => {
                        for key in [
                            "usage",
                            "api",
                            "provider",
                            "model",
                            "responseId",
                            "responseModel",
                            "durationMs",
                            "rawStopReason",
                            "endTurn",
                            "thinkingLevel",
                            "providerThinkingLevel",
                        ] {
                            message.remove(key);
                        }
                        if let Some(Value::Array(blocks)) = message.get_mut("content") {
                            for block in blocks {
                                if let Some(block) = block.as_object_mut() {
                                    block.remove("id");
                                }
                            }
                        }
                    }
                    Some("toolResult") => {
                        message.remove("toolCallId");
                        message.remove("durationMs");
                    }
                    Some("system") => {
                        // Pi's prompt and tool declarations, not notesoup's.
                        message.clear();
                        message.insert("role".into(), json!("system"));
                    }
                    _ => {}
                }
            }
        }
        Some("model_change" | "thinking_level_change") => {
            return Value::Null;
        }
        _ => {}
    }
    normalizer.value(&Value::Object(entry))
}

fn comparable_file(path: &std::path::Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).expect("a session file");
    let header: Value = serde_json::from_str(text.lines().next().expect("a header")).unwrap();
    let mut normalizer = Normalizer {
        session_id: header["id"].as_str().expect("a session id").to_owned(),
        windows: HashMap::new(),
    };
    text.lines()
        .skip(1)
        .map(|line| serde_json::from_str::<Value>(line).expect("JSON"))
        .map(|entry| comparable(&entry, &mut normalizer))
        // Pi records the model and thinking level it starts with; the
        // reference host starts without them.
        .filter(|entry| !entry.is_null())
        .collect()
}

/// A line for the session: a prompt or a command.
enum Input {
    Prompt(&'static str),
}

/// Runs `inputs` with the model answering `replies` on real Pi and on the
/// reference host, and compares the two session files.
fn same_session(replies: &[(&str, Value)], inputs: &[Input]) {
    let world = World::new(200_000);
    let fauxs: Vec<Value> = replies
        .iter()
        .map(|(name, args)| match *name {
            "text" => text(args.as_str().unwrap()),
            tool_name => tool(tool_name, args.clone()),
        })
        .collect();
    let mut steps = vec![json!({"respond": fauxs})];
    for Input::Prompt(line) in inputs {
        steps.push(json!({"prompt": line}));
    }
    let real = world.start(Value::Array(steps));
    real.assert_finished(0);

    // The reference host: the same cwd (the project key is part of tool
    // receipts), its own notes home, the faux model's identity.
    let reference_dir = world.path("reference");
    let sessions = reference_dir.join("sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    let cwd = world.path("project");
    let session = SessionManager::create(
        &sessions,
        &cwd,
        "0195f000-0000-7000-8000-00000000abcd",
        Clock::stepping_from("2026-03-01T09:00:00.000Z"),
        IdSource::sequential(),
    );
    let mut model = ScriptedModel::new(200_000);
    model.info.provider = "faux".to_owned();
    model.info.id = "faux-1".to_owned();
    for (name, args) in replies {
        match *name {
            "text" => model.push(Step::text(args.as_str().unwrap())),
            tool_name => model.push(Step::tool(tool_name, args.clone())),
        };
    }
    let host = HostState::new(session, None, &cwd);
    let extension = Notesoup::new(
        NotesoupConfig {
            notes_home: reference_dir.join("notes"),
            agent: "tester".to_owned(),
        },
        PiApiLevel::V0_87,
    )
    .unwrap();
    let mut harness = Harness::new(host, extension, model);
    harness.start(SessionStartReason::Startup);
    for Input::Prompt(line) in inputs {
        if line.starts_with('/') {
            harness.command(line).unwrap();
        } else {
            harness.prompt(line);
        }
    }
    assert_eq!(harness.model.steps_left(), 0);
    let reference_file = harness.host.session.file().unwrap().to_owned();

    let real_entries = comparable_file(&real.session_file);
    let reference_entries = comparable_file(&reference_file);
    let kinds =
        |entries: &[Value]| -> Vec<String> { entries.iter().map(super::support::kind).collect() };
    assert_eq!(kinds(&real_entries), kinds(&reference_entries));
    for (index, (real, reference)) in real_entries.iter().zip(&reference_entries).enumerate() {
        assert_eq!(
            real,
            reference,
            "entry {index} ({}) differs",
            super::support::kind(real)
        );
    }
}

#[test]
fn a_note_and_a_wipe_write_the_same_session_on_real_pi_and_the_reference_host() {
    same_session(
        &[
            (
                "notes_write",
                json!({"address": "@project/plan.md", "content": "# Plan\nFix the lexer.\n"}),
            ),
            ("text", json!("Noted.")),
            ("wipe_memory", json!({})),
            ("text", json!("Fresh and ready.")),
            ("history_search", json!({"query": "tokenizer"})),
            ("text", json!("Found it.")),
        ],
        &[
            Input::Prompt("Remember: the tokenizer bug is in lexer.rs."),
            Input::Prompt("Please wipe."),
            Input::Prompt("Where was the bug?"),
        ],
    );
}

#[test]
fn fresh_window_with_text_writes_the_same_session_on_real_pi_and_the_reference_host() {
    same_session(
        &[
            ("text", json!("Hello.")),
            (
                "notes_write",
                json!({"address": "checkpoint.md", "content": "# Checkpoint\nGoal: lexer.\n"}),
            ),
            ("text", json!("Notes saved.")),
            ("text", json!("Porting the lexer.")),
        ],
        &[
            Input::Prompt("Hi."),
            Input::Prompt("/fresh-window Now port the lexer, tokens first."),
        ],
    );
}
