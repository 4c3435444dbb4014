//! Compactions as real Claude Code 2.1.332 writes them: each scenario runs
//! against the fake Messages API, then the decoder's windows are checked
//! against the transcript and its active branch against what Claude Code
//! sends the model when the session is resumed.
//!
//! Claude Code writes three shapes. A compaction that keeps nothing; one
//! that keeps the old window's last rows (a preserved segment) with the
//! rows after it hanging off the anchor, the compact summary; and, when the
//! session it resumed ended in a turn cut off before the model answered
//! (Claude Code then adds a `<synthetic>` "No response requested."), one
//! whose kept head is that synthetic row and whose later rows hang off the
//! head. The last one's boundary is on the branch only through Claude
//! Code's relinking (the kept head hangs off the summary).
//!
//! With `NOTESOUP_RECORD_DIR` set, each scenario's transcript is copied
//! there as `<scenario>.jsonl` (the recordings under
//! `tests/claude/fixtures/compactions/` were made so); the `kept-*` ones
//! with the bulk Claude Code writes for itself cut down (see [`shrink`]).

use std::io::Write as _;
use std::process::Stdio;
use std::time::{Duration, Instant};

use notesoup_claude::transcript::decode::{ChainFile, decode_chain};
use notesoup_claude::transcript::incremental::ChainDecoder;
use notesoup_core::history::{ItemKind, Transcript, TranscriptWindow};
use serde_json::{Value, json};

use crate::claude::{PREFIX, mcp_tool, turn, turn_command};
use crate::support::{Sandbox, json_rows, spawn};
use notesoup_test_support::fake_anthropic::{FakeApi, Reply, texts};

/// One step: the prompt and the model's scripted replies to it.
struct Step {
    prompt: &'static str,
    replies: Vec<Reply>,
    /// Claude Code is ended while the model answers the last request.
    cut_off: bool,
}

fn step(prompt: &'static str, replies: Vec<Reply>) -> Step {
    Step {
        prompt,
        replies,
        cut_off: false,
    }
}

/// A turn cut off: the model answers `replies`, then Claude Code is ended
/// while it waits for the next answer (a session closed mid-turn).
fn cut_off(prompt: &'static str, mut replies: Vec<Reply>) -> Step {
    replies.push(Reply::hang());
    Step {
        prompt,
        replies,
        cut_off: true,
    }
}

/// The longest a cut-off turn may take to reach its held request.
const CUT_OFF_LIMIT: Duration = Duration::from_secs(120);

/// Runs `claude -p <prompt>` and ends it once the fake holds a request open
/// and the transcript holds the row that request answers (the result of
/// `last_call`, else the prompt; Claude Code writes rows asynchronously):
/// the transcript ends in a turn the model never answered.
fn run_cut_off(
    sb: &Sandbox,
    api: &FakeApi,
    plugin: &std::path::Path,
    prompt: &str,
    last_call: Option<&str>,
    extra: &[&str],
) {
    let held = api.held();
    let mut child = spawn(
        turn_command(sb, &api.url, plugin, prompt, extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    );
    let started = Instant::now();
    while api.held() == held || !written(sb, prompt, last_call) {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("claude -p {prompt:?} ended ({status}) before its turn was cut off");
        }
        if started.elapsed() > CUT_OFF_LIMIT {
            // The child is ours; end it so the test fails instead of hanging.
            let _ = child.kill();
            let _ = child.wait();
            panic!("claude -p {prompt:?} never reached the held request");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

/// Whether a transcript of the sandbox's project holds the result of
/// `last_call`, or (without one) a user row whose text is `prompt`.
fn written(sb: &Sandbox, prompt: &str, last_call: Option<&str>) -> bool {
    let dir = sb.transcript("x").parent().unwrap().to_owned();
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return false;
    };
    let answers = |row: &Value| match last_call {
        Some(call) => row["message"]["content"]
            .as_array()
            .is_some_and(|blocks| blocks.iter().any(|b| b["tool_use_id"] == call)),
        None => row["message"]["content"] == prompt,
    };
    entries
        .filter_map(Result::ok)
        .filter(|entry| entry.path().extension().is_some_and(|ext| ext == "jsonl"))
        .filter_map(|entry| std::fs::read_to_string(entry.path()).ok())
        .any(|text| {
            text.lines()
                .filter_map(|line| serde_json::from_str::<Value>(line).ok())
                .any(|row| row["type"] == "user" && answers(&row))
        })
}

/// The one session of the sandbox's project (for a session whose first
/// turn was cut off, so it printed no id).
fn only_session(sb: &Sandbox) -> String {
    let dir = sb.transcript("x").parent().unwrap().to_owned();
    let sessions: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|entry| {
            let name = entry.unwrap().file_name().into_string().unwrap();
            name.strip_suffix(".jsonl").map(str::to_owned)
        })
        .collect();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    sessions[0].clone()
}

/// Runs `steps` in one session (the first starts it, the rest resume it)
/// and returns the session id and the requests of the last step.
fn run(sb: &Sandbox, api: &FakeApi, steps: Vec<Step>) -> (String, Vec<serde_json::Value>) {
    let plugin = sb.plugin_copy();
    let allowed = format!("{PREFIX}notes_list,{PREFIX}history_windows");
    let mut session: Option<String> = None;
    let mut last = Vec::new();
    for Step {
        prompt,
        replies,
        cut_off,
    } in steps
    {
        let last_call = replies
            .iter()
            .rev()
            .find_map(|reply| reply.tool_uses.last())
            .map(|(id, _, _)| id.clone());
        api.script(replies);
        let mut extra = vec!["--allowedTools", allowed.as_str()];
        if let Some(id) = &session {
            extra.push("--resume");
            extra.push(id);
        }
        if cut_off {
            run_cut_off(sb, api, &plugin, prompt, last_call.as_deref(), &extra);
            session.get_or_insert_with(|| only_session(sb));
        } else {
            let result = turn(sb, &api.url, &plugin, prompt, &extra);
            session.get_or_insert_with(|| result["session_id"].as_str().unwrap().to_owned());
        }
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

fn record(sb: &Sandbox, session: &str, name: &str, shrunk: bool) {
    if let Some(dir) = std::env::var_os("NOTESOUP_RECORD_DIR") {
        std::fs::create_dir_all(&dir).unwrap();
        let target = std::path::Path::new(&dir).join(format!("{name}.jsonl"));
        if shrunk {
            let text = std::fs::read_to_string(sb.transcript(session)).unwrap();
            std::fs::write(target, shrink(&text)).unwrap();
        } else {
            std::fs::copy(sb.transcript(session), target).unwrap();
        }
    }
}

/// Bookkeeping Claude Code writes for itself that no part of notesoup
/// reads: request snapshots (bookkeeping rows without a uuid).
const DROPPED_KINDS: [&str; 2] = ["api-request-shape", "api-request-blob"];

/// Longest string kept whole in a row notesoup does not decode (the system
/// prompt snapshots, skill and agent listings).
const KEPT_STRING_CHARS: usize = 160;

/// A transcript cut down for a fixture: every message row, boundary and hook
/// context as written; the bookkeeping request snapshots dropped; the
/// system prompt snapshots (attachments kept for their place in the chain)
/// down to their type; and in the other rows long strings cut short.
fn shrink(text: &str) -> String {
    fn cut(value: &mut Value) {
        match value {
            Value::String(text) if text.chars().count() > KEPT_STRING_CHARS => {
                let kept: String = text.chars().take(KEPT_STRING_CHARS).collect();
                *text = format!("{kept}…[cut for the fixture]");
            }
            Value::Array(items) => items.iter_mut().for_each(cut),
            Value::Object(fields) => fields.values_mut().for_each(cut),
            _ => {}
        }
    }
    let mut out = String::new();
    for line in text.lines() {
        let Ok(mut row) = serde_json::from_str::<Value>(line) else {
            out.push_str(line);
            out.push('\n');
            continue;
        };
        let kind = row["type"].as_str().unwrap_or_default().to_owned();
        if DROPPED_KINDS.contains(&kind.as_str()) {
            continue;
        }
        let decoded = matches!(kind.as_str(), "user" | "assistant" | "system")
            || row["attachment"]["type"] == "hook_additional_context";
        if row["attachment"]["type"] == "prompt_snapshot" {
            row["attachment"] = json!({"type": "prompt_snapshot"});
        } else if !decoded {
            cut(&mut row);
        }
        out.push_str(&row.to_string());
        out.push('\n');
    }
    out
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

/// Texts Claude Code sends that are not conversation rows of the history:
/// its synthetic answer to a turn cut off (the history skips synthetic
/// rows) and the date it attaches.
const NOT_CONVERSATION: [&str; 2] = ["No response requested.", "Today's date is "];

/// The conversation texts Claude Code sent (hook context, reminders,
/// local-command rows and [`NOT_CONVERSATION`] left out), trimmed.
fn sent_conversation(request: &serde_json::Value) -> Vec<String> {
    texts(request)
        .into_iter()
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.starts_with('<') && !t.contains("hook additional context"))
        .filter(|t| !NOT_CONVERSATION.iter().any(|prefix| t.starts_with(prefix)))
        .collect()
}

/// What a scenario's compactions kept, and what the rows after them hang
/// off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kept {
    /// Nothing (no preserved segment).
    Nothing,
    /// A segment; the rows after the boundary hang off its anchor, the
    /// compact summary.
    OffTheAnchor,
    /// A segment whose head is Claude Code's synthetic answer to the
    /// cut-off turn; the rows after the boundary hang off that head.
    OffTheHead,
}

/// Checks that every compaction of `rows` has the shape `kept` says.
fn check_shape(name: &str, rows: &[Value], kept: Kept) {
    let by_uuid = |uuid: &Value| rows.iter().position(|r| r["uuid"] == *uuid);
    let boundaries: Vec<usize> = (0..rows.len())
        .filter(|&at| rows[at]["subtype"] == "compact_boundary")
        .collect();
    assert!(!boundaries.is_empty(), "{name}: no compaction");
    for at in boundaries {
        let meta = &rows[at]["compactMetadata"];
        let segment = &meta["preservedSegment"];
        if kept == Kept::Nothing {
            assert!(segment.is_null(), "{name}: {meta}");
            continue;
        }
        let anchor = by_uuid(&meta["preservedMessages"]["anchorUuid"])
            .unwrap_or_else(|| panic!("{name}: the anchor names no row: {meta}"));
        assert!(anchor > at, "{name}: {meta}");
        assert_eq!(rows[anchor]["isCompactSummary"], true, "{name}");
        let head = by_uuid(&segment["headUuid"]).unwrap();
        assert!(head < at, "{name}: the head stands after the boundary");
        let after = |parent: &Value| rows[at + 1..].iter().any(|r| r["parentUuid"] == *parent);
        match kept {
            Kept::OffTheHead => {
                assert_eq!(rows[head]["message"]["model"], "<synthetic>", "{name}");
                assert!(
                    after(&segment["headUuid"]),
                    "{name}: nothing hangs off the head"
                );
            }
            _ => assert!(
                after(&meta["preservedMessages"]["anchorUuid"]),
                "{name}: nothing hangs off the anchor"
            ),
        }
    }
}

/// Runs a scenario and checks: the compactions' shape, one window per
/// compaction (ids counted on, each window's boot naming the one before),
/// every text Claude Code sent the model on the decoded active branch, and
/// the last summary in the last window, and the running server's kept decode
/// equal to a fresh one after each line Claude Code wrote. Messages a
/// compaction kept verbatim (its preserved segment) were written before the
/// boundary, so their seqs stay in the window they were written in.
/// `shrunk`: the recording is cut down (see [`shrink`]); the older
/// recordings were committed whole.
fn check(name: &str, steps: Vec<Step>, windows: usize, kept: Kept, shrunk: bool) {
    let _terminal = crate::hosts::shared();
    let sb = Sandbox::new();
    let api = FakeApi::start();
    let (session, last) = run(&sb, &api, steps);
    record(&sb, &session, name, shrunk);
    let rows = json_rows(&sb.transcript(&session));
    check_shape(name, &rows, kept);
    let transcript = decode(&sb, &session);
    let ids: Vec<&str> = transcript.windows.iter().map(|w| w.id.as_str()).collect();
    assert_eq!(ids.len(), windows, "{name}: {ids:?}");
    for (n, id) in ids.iter().enumerate() {
        assert_eq!(*id, format!("claude:{session}:{}", n + 1), "{name}");
        if n > 0 {
            let previous = format!("Previous context window id: claude:{session}:{n}\n");
            assert!(
                message_texts(&transcript.windows[n..=n])
                    .iter()
                    .any(|text| text.contains(&previous)),
                "{name}: window {} has no boot naming {previous:?}",
                n + 1
            );
        }
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
    check_kept_decode(name, &sb.transcript(&session), &session, &transcript);
}

/// Grows a copy of the transcript at `path` a line at a time: the kept
/// decode equals a fresh one after each line, and `whole` at the end.
fn check_kept_decode(name: &str, path: &std::path::Path, session: &str, whole: &Transcript) {
    let text = std::fs::read_to_string(path).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("t.jsonl");
    std::fs::write(&copy, "").unwrap();
    let files = [ChainFile {
        session_id: session.to_owned(),
        path: copy.clone(),
    }];
    let mut kept = ChainDecoder::decode(session, &files).unwrap();
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&copy)
        .unwrap();
    for line in text.lines() {
        writeln!(file, "{line}").unwrap();
        kept.update(session, &files).unwrap();
        assert_eq!(
            kept.transcript(),
            decode_chain(session, &files).unwrap(),
            "{name}: after {line}"
        );
    }
    assert_eq!(&kept.transcript(), whole, "{name}");
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
        Kept::Nothing,
        false,
    );
}

#[test]
fn a_compact_after_tool_calls_opens_a_window() {
    let list = mcp_tool("notes_list");
    let windows = mcp_tool("history_windows");
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
        Kept::OffTheAnchor,
        false,
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
        Kept::Nothing,
        false,
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
        Kept::Nothing,
        false,
    );
}

// A turn cut off before the model answered, then `/compact` on resume: the
// compaction keeps Claude Code's synthetic answer to it, and the command's
// rows and everything after hang off that head.

#[test]
fn a_compact_keeping_a_cut_off_turn_after_one_exchange_opens_a_window() {
    check(
        "kept-head-after-one-exchange",
        vec![
            step("hello", vec![Reply::text("Hi there.")]),
            cut_off("and then", vec![]),
            step("/compact", vec![Reply::text("SUMMARY: said hello.")]),
            step("and now", vec![Reply::text("Still here.")]),
        ],
        2,
        Kept::OffTheHead,
        true,
    );
}

#[test]
fn a_compact_keeping_a_turn_cut_off_after_tool_calls_opens_a_window() {
    let list = mcp_tool("notes_list");
    let windows = mcp_tool("history_windows");
    check(
        "kept-head-after-tool-calls",
        vec![
            cut_off(
                "look around",
                vec![
                    Reply::tool("toolu_rec_1", &list, json!({})),
                    Reply::tool("toolu_rec_2", &windows, json!({})),
                ],
            ),
            step("/compact", vec![Reply::text("SUMMARY: looked around.")]),
            step("next", vec![Reply::text("Next done.")]),
        ],
        2,
        Kept::OffTheHead,
        true,
    );
}

#[test]
fn two_compacts_keeping_cut_off_turns_open_two_windows() {
    check(
        "kept-head-twice",
        vec![
            step("one", vec![Reply::text("First.")]),
            cut_off("two", vec![]),
            step("/compact", vec![Reply::text("SUMMARY: one.")]),
            cut_off("three", vec![]),
            step("/compact", vec![Reply::text("SUMMARY: one, two, three.")]),
            step("four", vec![Reply::text("Fourth.")]),
        ],
        3,
        Kept::OffTheHead,
        true,
    );
}

/// Claude Code compacts on its own at the start of a turn when the last
/// reply's usage (which the fake reports) is past its automatic line; it
/// keeps the last exchange and the new prompt, and the rows after the
/// summary hang off it. notesoup's Stop hook asks for the close-out once per
/// window, in the first turn, so the full reply ends its turn quietly.
#[test]
fn an_automatic_compaction_keeping_the_last_exchange_opens_a_window() {
    check(
        "kept-automatic-compaction",
        vec![
            step(
                "hello",
                vec![
                    Reply::text("Hi.").tokens(170_000),
                    Reply::text("Closed out.").tokens(170_000),
                ],
            ),
            step("fill up", vec![Reply::text("Filled.").tokens(990_000)]),
            step(
                "more",
                vec![Reply::text("SUMMARY: filled up."), Reply::text("More.")],
            ),
            step("after", vec![Reply::text("After.")]),
        ],
        2,
        Kept::OffTheAnchor,
        true,
    );
}
