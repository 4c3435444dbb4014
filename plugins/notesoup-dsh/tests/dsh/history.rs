//! The history tools over the recorded session, through the sidecar: two
//! windows split at the reset marker, seqs one above dsh's, tool calls paired
//! with their results.

use notesoup_dsh::history::transcript;
use serde_json::{Value, json};

use crate::{Client, fixture_log, hello, session};

const LOG: &str = "wipe-reset.session.jsonl";

/// Answers one history tool call on the whole recorded log.
fn history_call(name: &str, arguments: Value) -> Value {
    let log = fixture_log(LOG);
    let notes = tempfile::tempdir().expect("tempdir");
    let mut client = Client::new(notes.path());
    client.ok("hello", hello());
    let cwd = log.header.cwd.clone().expect("cwd");
    client.ok(
        "tool",
        json!({"session": session(&log.header.id, &cwd, 0, &log.events), "name": name, "arguments": arguments}),
    )
}

fn text(answer: &Value) -> &str {
    answer["text"].as_str().expect("text")
}

#[test]
fn windows_split_at_the_marker() {
    let log = fixture_log(LOG);
    let decoded = transcript(&log.header.id, &log.events).expect("decodes");
    assert_eq!(decoded.highest_seq, 49, "one seq per dsh event, from 1");
    let firsts: Vec<u32> = decoded.windows.iter().map(|w| w.items[0].seq).collect();
    // The task (dsh seq 7), then the marker (dsh seq 34) opens window 2.
    assert_eq!(firsts, [8, 35]);

    let answer = history_call("history_windows", json!({}));
    assert_eq!(answer["is_error"], false);
    assert_eq!(answer["result"]["windows"][1]["first_seq"], 35);
    insta::assert_snapshot!(text(&answer));
}

#[test]
fn the_conversation_view_and_a_role_filter() {
    let conversation = history_call("history_list", json!({}));
    insta::assert_snapshot!("conversation", text(&conversation));
    let tools = history_call("history_list", json!({"roles": ["tool"]}));
    insta::assert_snapshot!("tools", text(&tools));
}

#[test]
fn reads_search_and_refusals() {
    // The wipe_memory call (dsh seq 30) with its result (dsh seq 31) inside.
    let read = history_call("history_read", json!({"seq": 31}));
    assert_eq!(read["result"]["tool"], "wipe_memory");
    assert_eq!(read["result"]["tool_status"], "ok");
    assert_eq!(
        read["result"]["text"],
        "wipe_memory {}\n--- output ---\n{\"status\":\"rollover_requested\"}"
    );
    let slot = history_call("history_read", json!({"seq": 32}));
    assert_eq!(slot["is_error"], true);
    assert_eq!(slot["result"]["code"], "not_an_event");
    assert_eq!(slot["result"]["details"]["read_seq"], 31);
    let past = history_call("history_read", json!({"seq": 50}));
    assert_eq!(past["result"]["code"], "unknown_seq");
    let bad = history_call("history_list", json!({"limit": "many"}));
    assert_eq!(bad["result"]["code"], "invalid_arguments");

    let found = history_call("history_search", json!({"query": "fresh window answer"}));
    insta::assert_snapshot!("search", text(&found));
}

#[test]
fn a_log_sent_again_from_its_start_replaces_what_history_read() {
    let mut log = fixture_log(LOG);
    let cwd = log.header.cwd.clone().expect("cwd");
    let notes = tempfile::tempdir().expect("tempdir");
    let mut client = Client::greeted(notes.path());
    let prompt = log
        .events
        .iter()
        .position(|event| {
            event.kind == "user/message"
                && event.source().is_some_and(|source| source.kind == "user")
        })
        .expect("a prompt");
    let seq = prompt + 1;
    let mut read = |events: &[_]| {
        let answer = client.ok(
            "tool",
            json!({"session": session(&log.header.id, &cwd, 0, events),
                   "name": "history_read", "arguments": {"seq": seq}}),
        );
        answer["result"]["text"].as_str().expect("text").to_owned()
    };
    let first = read(&log.events);
    assert_eq!(first, log.events[prompt].text());

    // The same number of events, one prompt's text another: the sidecar's
    // history must not keep what it decoded from the first copy.
    log.events[prompt].data["content"] = json!([{"type": "text", "text": "another prompt"}]);
    assert_eq!(read(&log.events), "another prompt");
}
