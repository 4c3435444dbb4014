//! Snapshots for review: the session file and the provider contexts of a
//! full reset (budget warning, `wipe_memory`, the boundary, the fresh
//! window) on the reference host.

use notesoup_pi::session::AgentMessage;
use notesoup_pi_testkit::{Step, message_text};
use serde_json::{Value, json};

use crate::support::Scene;

/// Tool declarations shown by name only; the header's temporary cwd hidden.
fn readable(value: &mut Value) {
    match value {
        Value::Object(object) => {
            for key in ["toolsAdded", "toolsRemoved"] {
                if let Some(Value::Array(tools)) = object.get_mut(key) {
                    let names: Vec<Value> = tools.iter().map(|t| t["name"].clone()).collect();
                    *tools = names;
                }
            }
            if object.get("type") == Some(&json!("session")) {
                object.insert("cwd".to_owned(), json!("<tmp>/project"));
            }
            object.values_mut().for_each(readable);
        }
        Value::Array(items) => items.iter_mut().for_each(readable),
        _ => {}
    }
}

fn full_reset() -> Scene {
    let mut scene = Scene::scripted(
        100_000,
        [
            Step::text("Read the whole module.").with_input_tokens(70_000),
            Step::tools(Some("Closing out."), vec![("wipe_memory", json!({}))]),
            Step::text("Fresh window, reading my notes."),
        ],
    );
    scene.prompt_each(&["Refactor the parser.", "Go on."]);
    scene
}

#[test]
fn the_session_file_of_a_full_reset() {
    let scene = full_reset();
    let bytes = std::fs::read(scene.session_file()).unwrap();
    let text = String::from_utf8(bytes).unwrap();
    let lines: Vec<String> = text
        .lines()
        .map(|line| {
            let mut value: Value = serde_json::from_str(line).unwrap();
            readable(&mut value);
            serde_json::to_string(&value).unwrap()
        })
        .collect();
    insta::assert_snapshot!("full_reset_jsonl", lines.join("\n"));
}

fn render(messages: &[AgentMessage]) -> String {
    messages
        .iter()
        .map(|message| {
            let head = match message {
                AgentMessage::System(system) => format!(
                    "── system (tools: {})",
                    system
                        .tools_added
                        .iter()
                        .flatten()
                        .map(|t| t.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                AgentMessage::Assistant(assistant) => {
                    format!("── assistant ({})", assistant.stop_reason.as_str())
                }
                other => format!("── {}", other.role()),
            };
            format!("{head}\n{}", message_text(message))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_provider_contexts_around_a_reset() {
    let scene = full_reset();
    let requests = &scene.harness.host.requests;
    assert_eq!(requests.len(), 3);
    // The closing request (its big usage is reported, not written out) and
    // the fresh window's first request.
    insta::assert_snapshot!("closing_window_request", render(&requests[1].messages));
    insta::assert_snapshot!("fresh_window_request", render(&requests[2].messages));
}
