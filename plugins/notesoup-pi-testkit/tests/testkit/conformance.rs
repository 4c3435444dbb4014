//! The reference host against real Pi: the `notesoup-boundary` and
//! `notesoup-settle` goldens were written by Pi 1.6.0's own agent loop with
//! notesoup itself loaded, the Pi package's shim and the `notesoup-pi serve`
//! sidecar (`cargo xtask golden-pi`): a direct `wipe_memory` committed at
//! `turn_end`, and `/fresh-window <text>` committed at `agent_before_settle`.
//! The same script with `Notesoup` embedded in the reference host must write
//! the same entries, in the same order, with the same keys in the same order
//! and the same values (notesoup's texts included), and project to the same
//! roles.

use notesoup_pi::host::SessionStartReason;
use notesoup_pi::session::SessionFile;
use notesoup_pi_testkit::{Clock, HostState, IdSource, SessionManager, Step};
use serde_json::{Map, Value, json};

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

fn check(name: &str, input: &str, steps: Vec<Step>) {
    let golden = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../notesoup-pi/tests/golden")
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
    let mut host = HostState::new(session, None, cwd);
    // The generator's settings: automatic resets off, no retries.
    if let Ok(settings) = &mut host.settings {
        settings.compaction.enabled = false;
    }
    let mut model = notesoup_pi_testkit::ScriptedModel::new(200_000);
    model.info.provider = "faux".to_owned();
    model.info.id = "faux-1".to_owned();
    for step in steps {
        model.push(step);
    }
    let mut harness =
        notesoup_pi_testkit::Harness::new(host, crate::support::extension(dir.path()), model);
    harness.start(SessionStartReason::Startup);
    if input.starts_with('/') {
        harness.command(input).unwrap();
    } else {
        harness.prompt(input);
    }
    assert_eq!(
        harness.model.steps_left(),
        0,
        "{name}: the script was used up"
    );
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
            .join("../notesoup-pi/tests/golden")
            .join(format!("{name}.jsonl")),
    )
    .unwrap();
    let our_file = SessionFile::read(harness.host.session.file().unwrap()).unwrap();
    assert_eq!(roles(&our_file), roles(&golden_file), "{name}: projection");
}

#[test]
fn a_direct_wipe_is_saved_at_turn_end_like_pi_saves_it() {
    check(
        "notesoup-boundary",
        "Please wipe.",
        vec![
            Step::tool("wipe_memory", json!({})),
            Step::text("Fresh window."),
        ],
    );
}

#[test]
fn fresh_window_with_text_is_saved_at_settle_like_pi_saves_it() {
    check(
        "notesoup-settle",
        "/fresh-window Carry on with the refactor.",
        vec![
            Step::text("Notes saved."),
            Step::text("Carrying on with the refactor."),
        ],
    );
}
