//! The reference host against real Pi: the `notesoup-boundary` and
//! `notesoup-settle` goldens were written by Pi 1.6.0's own agent loop with
//! an inline extension returning notesoup's boundary drafts. The same
//! extension, in Rust, on the reference host must write the same entries,
//! in the same order, with the same keys in the same order, and project to
//! the same roles.

use notesoup_pi::host::{
    AgentToolResult, BoundaryOutcome, BoundaryResult, BoundaryState, CustomMessageDraft,
    PiExtension, PiHost, SendOptions, SessionBoundaryDraft, SessionStartEvent, SessionStartReason,
    ToolDescriptor, ToolInvocation, TurnEndEvent,
};
use notesoup_pi::session::{Content, ContentBlock, SessionFile};
use notesoup_pi::testkit::{Clock, HostState, IdSource, SessionManager, Step};
use serde_json::{Map, Value, json};

/// The golden generator's inline extension, in Rust.
struct MiniBoundary {
    settle: bool,
    requested: bool,
}

impl MiniBoundary {
    fn boundary(&self, host: &dyn PiHost, entries: &[SessionBoundaryDraft]) -> BoundaryResult {
        let session_id = host.session_id().to_owned();
        let (window_id, prompt) = if self.settle {
            ("pcw:0195f000:bbbb2222", Some("Carry on with the refactor."))
        } else {
            ("pcw:0195f000:aaaa1111", None)
        };
        let mut drafts = entries.to_vec();
        drafts.push(SessionBoundaryDraft::retain_none_checkpoint());
        drafts.push(SessionBoundaryDraft::Custom {
            custom_type: "notesoup/reset-marker".into(),
            data: Some(json!({"windowId": window_id, "origin": "normal"})),
        });
        drafts.push(SessionBoundaryDraft::CustomMessage {
            custom_type: "notesoup/boot".into(),
            content: Content::Text(format!("Boot of {window_id}.")),
            display: false,
            details: Some(json!({"windowId": window_id, "sessionId": session_id})),
        });
        drafts.push(SessionBoundaryDraft::CustomMessage {
            custom_type: "notesoup/continuation".into(),
            content: Content::Text("You wake up blank, puffy-eyed, and clearly robbed.".into()),
            display: false,
            details: None,
        });
        if let Some(prompt) = prompt {
            drafts.push(SessionBoundaryDraft::CustomMessage {
                custom_type: "notesoup/reset-prompt".into(),
                content: Content::Text(prompt.into()),
                display: true,
                details: None,
            });
        }
        BoundaryResult {
            entries: Some(drafts),
            continue_run: Some(true),
        }
    }

    fn commit(&mut self, host: &dyn PiHost, state: &BoundaryState) -> BoundaryResult {
        if !self.requested || state.outcome != BoundaryOutcome::Completed {
            return BoundaryResult::keep();
        }
        self.requested = false;
        self.boundary(host, &state.entries)
    }
}

impl PiExtension for MiniBoundary {
    fn tools(&self) -> Vec<ToolDescriptor> {
        vec![ToolDescriptor {
            name: "wipe_memory".into(),
            label: "Wipe memory".into(),
            description: "Clear your in-context memory and start a fresh context window. Your session, notes, and history survive.".into(),
            prompt_snippet: None,
            prompt_guidelines: None,
            parameters: json!({"type": "object", "properties": {}, "additionalProperties": false}),
            execution_mode: None,
        }]
    }

    fn execute_tool(&mut self, _host: &mut dyn PiHost, _call: &ToolInvocation) -> AgentToolResult {
        self.requested = true;
        AgentToolResult {
            content: vec![ContentBlock::text(r#"{"status":"rollover_requested"}"#)],
            details: json!({}),
            usage: None,
            terminate: Some(true),
            is_error: None,
            structured_content: None,
        }
    }

    fn session_start(&mut self, host: &mut dyn PiHost, _event: &SessionStartEvent) {
        let details = json!({"windowId": "pcw:0195f000:root", "sessionId": host.session_id()});
        host.send_message(
            CustomMessageDraft {
                custom_type: "notesoup/boot".into(),
                content: Content::Text("Root boot.".into()),
                display: false,
                details: Some(details),
            },
            SendOptions::default(),
        )
        .unwrap();
    }

    fn turn_end(&mut self, host: &mut dyn PiHost, event: &TurnEndEvent) -> BoundaryResult {
        match (&event.boundary, self.settle) {
            (Some(state), false) => self.commit(host, state),
            _ => BoundaryResult::keep(),
        }
    }

    fn agent_before_settle(
        &mut self,
        host: &mut dyn PiHost,
        state: &BoundaryState,
    ) -> BoundaryResult {
        if self.settle {
            self.commit(host, state)
        } else {
            BoundaryResult::keep()
        }
    }
}

/// The shape of a line: its keys in order (nested message keys too), with
/// what differs by construction (the system prompt's sections) left out.
fn shape(value: &Value) -> Vec<String> {
    let mut keys = Vec::new();
    if let Value::Object(object) = value {
        for (key, nested) in object {
            if key == "sections" {
                continue;
            }
            keys.push(key.clone());
            if matches!(
                key.as_str(),
                "message" | "data" | "details" | "systemMessage"
            ) && let Value::Object(_) = nested
            {
                keys.extend(shape(nested).into_iter().map(|k| format!("{key}.{k}")));
            }
        }
    }
    keys
}

/// What must be equal: everything but ids, times, usage, the model's
/// identity, the system prompt (content and sections) and Pi's token
/// estimate (it depends on the provider's usage).
fn stable(value: &Value) -> Value {
    const VOLATILE: [&str; 15] = [
        "id",
        "parentId",
        "timestamp",
        "usage",
        "api",
        "provider",
        "model",
        "tokensBefore",
        "systemMessage",
        "toolCallId",
        "sessionId",
        "content",
        "thinkingLevel",
        "sections",
        "firstKeptEntryId",
    ];
    match value {
        Value::Object(object) => {
            let mut kept = Map::new();
            for (key, nested) in object {
                let is_system = object.get("role") == Some(&json!("system"));
                // Only a system message's content is volatile here.
                if (is_system || key != "content") && VOLATILE.contains(&key.as_str()) {
                    continue;
                }
                kept.insert(key.clone(), stable(nested));
            }
            Value::Object(kept)
        }
        Value::Array(items) => Value::Array(items.iter().map(stable).collect()),
        other => other.clone(),
    }
}

fn lines(bytes: &[u8]) -> Vec<Value> {
    String::from_utf8(bytes.to_vec())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        // The SDK's session creation records the model and thinking level;
        // the reference host starts without them.
        .filter(|v| {
            !matches!(
                v["type"].as_str(),
                Some("model_change" | "thinking_level_change")
            )
        })
        .skip(1)
        .collect()
}

fn check(name: &str, settle: bool) {
    let golden = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/golden")
            .join(format!("{name}.jsonl")),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cwd = std::path::Path::new("/work/project");
    let session = SessionManager::create(
        dir.path(),
        cwd,
        "0195f000-0000-7000-8000-000000000009",
        Clock::stepping_from("2026-03-01T09:00:00.000Z"),
        IdSource::sequential(),
    );
    let host = HostState::new(session, None, cwd);
    let mut model = notesoup_pi::testkit::ScriptedModel::new(200_000);
    model
        .push(Step::tool("wipe_memory", json!({})))
        .push(Step::text("Fresh window."));
    let mut harness = notesoup_pi::testkit::Harness::new(
        host,
        MiniBoundary {
            settle,
            requested: false,
        },
        model,
    );
    harness.start(SessionStartReason::Startup);
    harness.prompt("Please wipe.");
    let ours = std::fs::read(harness.host.session.file().unwrap()).unwrap();

    let (golden, ours) = (lines(&golden), lines(&ours));
    let kinds = |lines: &[Value]| -> Vec<String> {
        lines
            .iter()
            .map(|l| {
                format!(
                    "{} {}",
                    l["type"].as_str().unwrap(),
                    l["customType"]
                        .as_str()
                        .or(l["message"]["role"].as_str())
                        .unwrap_or("")
                )
            })
            .collect()
    };
    assert_eq!(kinds(&ours), kinds(&golden), "{name}: entries in order");
    for (ours, golden) in ours.iter().zip(&golden) {
        assert_eq!(shape(ours), shape(golden), "{name}: key order of {golden}");
        assert_eq!(stable(ours), stable(golden), "{name}: values of {golden}");
    }
    // Both checkpoints keep nothing before themselves and carry the system state.
    for lines in [&ours, &golden] {
        let checkpoint = lines.iter().find(|l| l["type"] == "compaction").unwrap();
        assert_eq!(checkpoint["firstKeptEntryId"], checkpoint["id"]);
        assert!(checkpoint["systemMessage"]["toolsAdded"].is_array());
    }

    // Both files project to the same roles at their leaves.
    let roles = |file: &SessionFile| -> Vec<String> {
        let index = file.index();
        let projection = notesoup_pi::projection::project(&index, notesoup_pi::session::Leaf::Last);
        projection
            .message_refs()
            .map(|m| m.role().to_owned())
            .collect()
    };
    let golden_file = SessionFile::read(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/golden")
            .join(format!("{name}.jsonl")),
    )
    .unwrap();
    let our_file = SessionFile::read(harness.host.session.file().unwrap()).unwrap();
    assert_eq!(roles(&our_file), roles(&golden_file), "{name}: projection");
}

#[test]
fn a_turn_end_boundary_is_saved_like_pi_saves_it() {
    check("notesoup-boundary", false);
}

#[test]
fn a_settle_boundary_with_a_reset_prompt_is_saved_like_pi_saves_it() {
    check("notesoup-settle", true);
}
