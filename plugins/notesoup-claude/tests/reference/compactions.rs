//! Compactions as real Claude Code 2.1.332 writes them (a preserved segment
//! on the boundary): each scenario runs against the fake Messages API, then
//! the decoder's windows are checked against the transcript and its active
//! branch against what Claude Code sends the model when the session is
//! resumed.
//!
//! With `NOTESOUP_RECORD_DIR` set, each scenario's transcript is copied
//! there as `<scenario>.jsonl` (the recordings under
//! `tests/claude/fixtures/compactions/` were made so).

use notesoup_claude::transcript::decode::{ChainFile, decode_chain};
use notesoup_core::history::{ItemKind, Transcript, TranscriptWindow};
use serde_json::json;

use crate::claude::turn;
use crate::fake_api::{FakeApi, Reply, texts};
use crate::support::Sandbox;

const PREFIX: &str = "mcp__plugin_notesoup_notesoup__";

/// One step: the prompt and the model's scripted replies to it.
struct Step {
    prompt: &'static str,
    replies: Vec<Reply>,
}

fn step(prompt: &'static str, replies: Vec<Reply>) -> Step {
    Step { prompt, replies }
}

/// Runs `steps` in one session (the first starts it, the rest resume it)
/// and returns the session id and the requests of the last step.
fn run(sb: &Sandbox, api: &FakeApi, steps: Vec<Step>) -> (String, Vec<serde_json::Value>) {
    let plugin = sb.plugin_copy();
    let allowed = format!("{PREFIX}notes_list,{PREFIX}history_windows");
    let mut session: Option<String> = None;
    let mut last = Vec::new();
    for Step { prompt, replies } in steps {
        api.script(replies);
        let mut extra = vec!["--allowedTools", allowed.as_str()];
        if let Some(id) = &session {
            extra.push("--resume");
            extra.push(id);
        }
        let result = turn(sb, &api.url, &plugin, prompt, &extra);
        session.get_or_insert_with(|| result["session_id"].as_str().unwrap().to_owned());
        last = api.take_requests();
    }
    (session.unwrap(), last)
}

fn decode(sb: &Sandbox, session: &str) -> Transcript {
    decode_chain(
        session,
        &[ChainFile {
            session_id: session.to_owned(),
            path: sb.transcript(session),
        }],
    )
    .unwrap()
}

fn record(sb: &Sandbox, session: &str, name: &str) {
    if let Some(dir) = std::env::var_os("NOTESOUP_RECORD_DIR") {
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(
            sb.transcript(session),
            std::path::Path::new(&dir).join(format!("{name}.jsonl")),
        )
        .unwrap();
    }
}

/// The message texts of `windows`, trimmed, in order.
fn message_texts<'a>(windows: impl IntoIterator<Item = &'a TranscriptWindow>) -> Vec<String> {
    windows
        .into_iter()
        .flat_map(|window| &window.items)
        .filter_map(|item| match &item.kind {
            ItemKind::Message { text, .. } => Some(text.trim().to_owned()),
            _ => None,
        })
        .collect()
}

/// The conversation texts Claude Code sent (hook context, reminders and
/// local-command rows left out), trimmed.
fn sent_conversation(request: &serde_json::Value) -> Vec<String> {
    texts(request)
        .into_iter()
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.starts_with('<') && !t.contains("hook additional context"))
        .collect()
}

/// Runs a scenario and checks: one window per compaction (ids counted on),
/// every text Claude Code sent the model on the decoded active branch, and
/// the last summary in the last window. Messages a compaction kept verbatim
/// (its preserved segment) were written before the boundary, so their seqs
/// stay in the window they were written in.
fn check(name: &str, steps: Vec<Step>, windows: usize) {
    let _terminal = crate::hosts::shared();
    let sb = Sandbox::new();
    let api = FakeApi::start();
    let (session, last) = run(&sb, &api, steps);
    record(&sb, &session, name);
    let transcript = decode(&sb, &session);
    let ids: Vec<&str> = transcript.windows.iter().map(|w| w.id.as_str()).collect();
    assert_eq!(ids.len(), windows, "{name}: {ids:?}");
    for (n, id) in ids.iter().enumerate() {
        assert_eq!(*id, format!("claude:{session}:{}", n + 1), "{name}");
    }
    let sent = sent_conversation(&last[0]);
    let on_branch = message_texts(&transcript.windows);
    for text in &sent {
        assert!(
            on_branch.contains(text),
            "{name}: sent {text:?}, not on the decoded branch"
        );
    }
    let summary = sent
        .iter()
        .find(|t| t.starts_with("This session is being continued"))
        .unwrap_or_else(|| panic!("{name}: no summary sent: {sent:#?}"));
    let last_window = message_texts(transcript.windows.last());
    assert!(last_window.contains(summary), "{name}: {last_window:#?}");
}

#[test]
fn a_compact_after_one_exchange_opens_a_window() {
    check(
        "compact-after-one-exchange",
        vec![
            step("hello", vec![Reply::text("Hi there.")]),
            step("/compact", vec![Reply::text("SUMMARY: said hello.")]),
            step("and now", vec![Reply::text("Still here.")]),
        ],
        2,
    );
}

#[test]
fn a_compact_after_tool_calls_opens_a_window() {
    let list = format!("{PREFIX}notes_list");
    let windows = format!("{PREFIX}history_windows");
    check(
        "compact-after-tool-calls",
        vec![
            step(
                "look around",
                vec![
                    Reply::tool("toolu_rec_1", &list, json!({})),
                    Reply::tool("toolu_rec_2", &windows, json!({})),
                    Reply::tool("toolu_rec_3", &list, json!({"pattern": "@human/**"})),
                    Reply::text("Looked."),
                ],
            ),
            step("/compact", vec![Reply::text("SUMMARY: looked around.")]),
            step("next", vec![Reply::text("Next done.")]),
        ],
        2,
    );
}

#[test]
fn two_compacts_open_two_windows() {
    check(
        "compact-twice",
        vec![
            step("one", vec![Reply::text("First.")]),
            step("/compact", vec![Reply::text("SUMMARY: one.")]),
            step("two", vec![Reply::text("Second.")]),
            step("/compact", vec![Reply::text("SUMMARY: one, two.")]),
            step("three", vec![Reply::text("Third.")]),
        ],
        3,
    );
}

#[test]
fn an_automatic_compaction_opens_a_window() {
    check(
        "automatic-compaction",
        vec![
            // The reply leaves the window over Claude Code's automatic line;
            // notesoup's Stop hook asks for the close-out, and before that
            // continuation Claude Code compacts on its own (the summary).
            step(
                "fill up",
                vec![
                    Reply::text("Filled.").tokens(990_000),
                    Reply::text("SUMMARY: filled up."),
                    Reply::text("Closed out."),
                ],
            ),
            step("after", vec![Reply::text("After.")]),
        ],
        2,
    );
}
