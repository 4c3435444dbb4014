//! Transcript decoding into core's history model, on transcripts recorded
//! from Claude Code 2.1.332.

use std::collections::BTreeMap;
use std::fmt::Write;

use notesoup_claude::transcript::decode::{ChainFile, decode_chain};
use notesoup_claude::transcript::incremental::{ChainDecoder, ChainHistory};
use notesoup_claude::transcript::scan::{boot_scan, last_reply};
use notesoup_cli::CommandTools;
use notesoup_core::history::{History, ItemKind, Transcript};
use notesoup_core::tools::{Tool, call_tool};

use crate::support::{CHAIN_1, CHAIN_2, fixture, hook_context_row, json_rows, user_row};

fn chain() -> Vec<ChainFile> {
    vec![
        ChainFile {
            session_id: CHAIN_1.into(),
            path: fixture("chain-1-compact.jsonl"),
        },
        ChainFile {
            session_id: CHAIN_2.into(),
            path: fixture("chain-2-after-clear.jsonl"),
        },
    ]
}

/// One line per window and event: what the history tools will see.
fn table(history: &History) -> String {
    let mut out = String::new();
    for (index, window) in history.windows().iter().enumerate() {
        writeln!(
            out,
            "window {} | {:?} | seqs {:?}-{:?} | {} events",
            window.id, window.created_at, window.first_seq, window.last_seq, window.event_count
        )
        .unwrap();
        for event in history.events().iter().filter(|e| e.window == index) {
            let head: String = event.document.chars().take(70).collect();
            let tool = event
                .tool
                .as_ref()
                .map(|t| format!(" [{} {}]", t.name, t.status.as_str()))
                .unwrap_or_default();
            writeln!(
                out,
                "  {:>3} {:<9}{tool} {head:?}",
                event.seq,
                event.role.as_str()
            )
            .unwrap();
        }
    }
    writeln!(out, "highest seq {}", history.highest_seq()).unwrap();
    out
}

#[test]
fn the_recorded_chain_decodes_into_three_windows() {
    let history = History::new(decode_chain(CHAIN_1, &chain()).unwrap()).unwrap();
    insta::assert_snapshot!(table(&history));
}

/// How each window of the recorded chain ended, and at how many tokens:
/// the compaction in the first file, the `/clear` between the files, the
/// second file's window open.
#[test]
fn the_kept_history_says_how_each_window_ended() {
    let kept = ChainHistory::decode(CHAIN_1, &chain()).unwrap();
    let mut tools = CommandTools {
        history: Some(kept.history().clone()),
        ..CommandTools::default()
    };
    let windows = call_tool(
        &mut tools,
        Tool::HISTORY_WINDOWS.name,
        serde_json::json!({}),
    )
    .json
    .to_value();
    let ends: Vec<(String, Option<u64>)> = windows["windows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|window| {
            (
                window["end"].as_str().unwrap().to_owned(),
                window["tokens_at_end"].as_u64(),
            )
        })
        .collect();
    assert_eq!(
        ends,
        [
            ("host_compaction".to_owned(), Some(19)),
            ("clear".to_owned(), Some(15_100)),
            ("open".to_owned(), ends[2].1),
        ]
    );
    assert_eq!(kept.history().window_signals().len(), 3);
}

#[test]
fn tool_results_are_paired_slots_of_their_calls() {
    let history = History::new(decode_chain(CHAIN_1, &chain()).unwrap()).unwrap();
    assert_eq!(history.paired_call(6), Some(5));
    assert_eq!(history.event(6), None);
    let bash = history.event(5).unwrap();
    assert_eq!(
        bash.document,
        "Bash {\"command\":\"echo hello\",\"description\":\"say hello\"}\n--- output ---\nhello"
    );
}

/// Writes `rows` (one JSON object per line, `""` for a raw line) to a temp
/// transcript and decodes it as a one-file chain.
fn decode_rows(rows: &[&str]) -> History {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    std::fs::write(&path, rows.join("\n")).unwrap();
    let files = [ChainFile {
        session_id: "s".into(),
        path,
    }];
    History::new(decode_chain("s", &files).unwrap()).unwrap()
}

fn user(uuid: &str, parent: Option<&str>, text: &str) -> String {
    let parent = parent.map_or("null".to_owned(), |p| format!("\"{p}\""));
    format!(
        r#"{{"type":"user","uuid":"{uuid}","parentUuid":{parent},"isSidechain":false,"timestamp":"2026-01-01T00:00:00Z","message":{{"role":"user","content":"{text}"}}}}"#
    )
}

fn assistant(uuid: &str, parent: &str, content: &str, model: &str, sidechain: bool) -> String {
    format!(
        r#"{{"type":"assistant","uuid":"{uuid}","parentUuid":"{parent}","isSidechain":{sidechain},"message":{{"id":"m-{uuid}","model":"{model}","role":"assistant","content":{content}}}}}"#
    )
}

#[test]
fn sidechains_synthetic_rows_garbage_and_unknown_types_are_skipped() {
    let rows = [
        user("u1", None, "hello"),
        "{\"type\":\"mystery-row\",\"uuid\":\"x\"}".to_owned(),
        "not json at all".to_owned(),
        assistant(
            "a1",
            "u1",
            r#"[{"type":"text","text":"hi"}]"#,
            "claude-x",
            false,
        ),
        assistant(
            "a2",
            "a1",
            r#"[{"type":"text","text":"sub"}]"#,
            "claude-x",
            true,
        ),
        assistant(
            "a3",
            "a1",
            r#"[{"type":"text","text":"No response requested."}]"#,
            "<synthetic>",
            false,
        ),
        user("u2", Some("a3"), "again"),
        "{\"type\":\"user\",\"uuid\":\"u3\",\"message\":{\"content\":\"tor".to_owned(),
    ];
    let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
    let history = decode_rows(&rows);
    let events: Vec<(u32, &str, &str)> = history
        .events()
        .iter()
        .map(|e| (e.seq, e.role.as_str(), e.document.as_str()))
        .collect();
    assert_eq!(
        events,
        [
            (1, "user", "hello"),
            (2, "assistant", "hi"),
            (3, "user", "again")
        ]
    );
    assert_eq!(history.windows().len(), 1);
    assert_eq!(history.windows()[0].id, "claude:s:1");
}

#[test]
fn rows_off_the_active_branch_keep_their_seqs_but_are_not_on_it() {
    // A rewind: the second prompt hangs off the first assistant reply's
    // parent, so the first reply's branch is abandoned.
    let rows = [
        user("u1", None, "first"),
        assistant(
            "a1",
            "u1",
            r#"[{"type":"text","text":"reply one"},{"type":"tool_use","id":"t1","name":"Read","input":{}}]"#,
            "claude-x",
            false,
        ),
        user("u2", Some("u1"), "edited"),
        assistant(
            "a2",
            "u2",
            r#"[{"type":"text","text":"reply two"}]"#,
            "claude-x",
            false,
        ),
    ];
    let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
    let history = decode_rows(&rows);
    assert_eq!(history.highest_seq(), 5);
    assert!(history.is_off_branch(2));
    assert!(history.is_off_branch(3));
    assert!(!history.is_off_branch(4));
    let seqs: Vec<u32> = history.events().iter().map(|e| e.seq).collect();
    assert_eq!(seqs, [1, 4, 5]);
}

#[test]
fn an_unpaired_call_is_unfinished_and_errors_are_errors() {
    let rows = [
        user("u1", None, "go"),
        assistant("a1", "u1", r#"[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"false"}},{"type":"tool_use","id":"t2","name":"Bash","input":{"command":"sleep 9"}}]"#, "claude-x", false),
        r#"{"type":"user","uuid":"r1","parentUuid":"a1","isSidechain":false,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"exit 1"}],"is_error":true}]}}"#.to_owned(),
    ];
    let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
    let history = decode_rows(&rows);
    let statuses: Vec<(u32, &str)> = history
        .events()
        .iter()
        .filter_map(|e| Some((e.seq, e.tool.as_ref()?.status.as_str())))
        .collect();
    assert_eq!(statuses, [(3, "error"), (4, "unfinished")]);
    assert_eq!(history.paired_call(5), Some(3));
}

/// Compactions recorded from Claude Code 2.1.332 against the fake Messages
/// API (see tests/reference/compactions.rs), with the windows each must
/// decode into. The `kept-*` ones keep rows across the compaction (a
/// preserved segment) that only Claude Code's relinking puts on the new
/// window's branch: `kept-head-*` after a turn cut off (the kept head is
/// Claude Code's synthetic answer to it, the rows after the compaction hang
/// off it), `kept-automatic-compaction` when Claude Code compacts on its
/// own at a prompt (the rows after the summary hang off it).
pub const COMPACTIONS: [(&str, usize); 9] = [
    ("compact-after-one-exchange", 2),
    ("compact-after-tool-calls", 2),
    ("compact-twice", 3),
    ("automatic-compaction", 2),
    ("automatic-compaction-with-mod", 2),
    ("kept-head-after-one-exchange", 2),
    ("kept-head-after-tool-calls", 2),
    ("kept-head-twice", 3),
    ("kept-automatic-compaction", 2),
];

/// The recorded compaction `name`: its session and its file.
pub fn compaction(name: &str) -> (String, ChainFile) {
    let path = fixture(&format!("compactions/{name}.jsonl"));
    let session = notesoup_claude::transcript::scan::session_id_of(&path)
        .unwrap()
        .unwrap();
    let file = ChainFile {
        session_id: session.clone(),
        path,
    };
    (session, file)
}

#[test]
fn recorded_compactions_open_one_window_each() {
    for (name, windows) in COMPACTIONS {
        let (session, file) = compaction(name);
        let files = [file];
        let history = History::new(decode_chain(&session, &files).unwrap()).unwrap();
        assert_eq!(history.windows().len(), windows, "{name}");
        for (n, window) in history.windows().iter().enumerate() {
            assert_eq!(window.id, format!("claude:{session}:{}", n + 1), "{name}");
            if n == 0 {
                continue;
            }
            // The window's own boot names the window before it.
            let previous = format!("Previous context window id: claude:{session}:{n}\n");
            assert!(
                history
                    .events()
                    .iter()
                    .any(|e| e.window == n && e.document.contains(&previous)),
                "{name}: window {} has no boot naming {previous:?}",
                n + 1
            );
        }
        let table = table(&history).replace(&session, "S");
        insta::assert_snapshot!(format!("compaction_{name}"), table);
    }
}

/// Recorded from Claude Code 2.1.332 against the fake Messages API (see
/// tests/reference/history_records.rs): a Bash call whose 1.9 MB output
/// Claude Code persisted to a file, and an Agent call whose sub-agent ran
/// one Bash call of its own.
const SUBAGENT_SESSION: &str = "82b232c0-2a2f-40a3-ab23-c6865a637a58";

#[test]
fn persisted_outputs_and_sub_agent_calls_are_recorded_on_their_events() {
    let files = [ChainFile {
        session_id: SUBAGENT_SESSION.into(),
        path: fixture(&format!("subagent/{SUBAGENT_SESSION}.jsonl")),
    }];
    let transcript = decode_chain(SUBAGENT_SESSION, &files).unwrap();
    // The sub-agent's one call, paired with its result in its own
    // transcript.
    let calls: Vec<_> = transcript
        .windows
        .iter()
        .flat_map(|window| &window.items)
        .filter_map(|item| match &item.kind {
            ItemKind::ToolResult(result) => result.nested_calls.as_ref(),
            _ => None,
        })
        .flat_map(|nested| &nested.calls)
        .map(|call| {
            (
                call.name.as_str(),
                call.status.as_str(),
                call.error.as_deref(),
            )
        })
        .collect();
    assert_eq!(calls, [("Bash", "ok", None)]);
    let history = History::new(transcript).unwrap();
    let tools: Vec<_> = history
        .events()
        .iter()
        .filter_map(|event| event.tool.as_ref())
        .collect();
    assert_eq!(tools.len(), 2, "{tools:?}");
    let bash = tools[0];
    assert_eq!(bash.name, "Bash");
    assert!(bash.output_truncated);
    // The path as the result names it (where Claude Code saved it while
    // recording).
    assert_eq!(
        bash.full_output_path.as_deref(),
        Some(concat!(
            "/tmp/.tmpgFztLN/home/.claude/projects/-tmp--tmpgFztLN-work-proj/",
            "82b232c0-2a2f-40a3-ab23-c6865a637a58/tool-results/b10qxwn3j.txt"
        ))
    );
    let agent = tools[1];
    assert_eq!(agent.name, "Agent");
    assert!(!agent.output_truncated);
    let nested = agent.nested_calls.as_ref().unwrap();
    assert_eq!((nested.call_count, nested.complete), (1, true));
}

/// The complete lines of `bytes`, each with its newline, as cumulative
/// prefixes' ends.
pub fn line_ends(bytes: &[u8]) -> Vec<usize> {
    bytes
        .iter()
        .enumerate()
        .filter(|(_, byte)| **byte == b'\n')
        .map(|(at, _)| at + 1)
        .collect()
}

/// Every recorded compaction, decoded after each line Claude Code wrote:
/// the windows are the ones the hooks count (the newest boot's window, one
/// more per boundary after it), named as they count them, and every event
/// keeps its seq, its window and its text as the file grows: the rows a
/// compaction kept stay where they stand in the file.
#[test]
fn windows_and_seqs_hold_as_each_recorded_compaction_grows() {
    for (name, _) in COMPACTIONS {
        let (session, file) = compaction(name);
        let bytes = std::fs::read(&file.path).unwrap();
        let full = decode_chain(&session, std::slice::from_ref(&file)).unwrap();
        let placed = |transcript: &Transcript| -> BTreeMap<u32, (usize, String)> {
            transcript
                .windows
                .iter()
                .enumerate()
                .flat_map(|(window, w)| {
                    w.items
                        .iter()
                        .map(move |item| (item.seq, (window, format!("{:?}", item.kind))))
                })
                .collect()
        };
        let everything = placed(&full);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let grown = [ChainFile {
            session_id: session.clone(),
            path: path.clone(),
        }];
        for end in line_ends(&bytes) {
            std::fs::write(&path, &bytes[..end]).unwrap();
            let transcript = decode_chain(&session, &grown).unwrap();
            let scan = boot_scan(&path).unwrap();
            let counted = scan.last_boot.as_ref().map_or(1, |ids| ids.current.ordinal)
                + scan.boundaries_after;
            let ids: Vec<&str> = transcript.windows.iter().map(|w| w.id.as_str()).collect();
            assert_eq!(
                ids.len() as u64,
                counted,
                "{name} after {end} bytes: {ids:?} against {scan:?}"
            );
            assert_eq!(
                ids.last().copied(),
                Some(format!("claude:{session}:{counted}").as_str()),
                "{name} after {end} bytes"
            );
            for (seq, place) in placed(&transcript) {
                assert_eq!(
                    everything.get(&seq),
                    Some(&place),
                    "{name} after {end} bytes: seq {seq}"
                );
            }
        }
    }
}

/// The rows a compaction kept (its `preservedMessages`) stand before its
/// boundary: they keep their seqs in the window before it, and are on the
/// branch.
#[test]
fn kept_rows_keep_their_place_before_the_boundary() {
    for name in ["kept-head-after-tool-calls", "kept-automatic-compaction"] {
        let (session, file) = compaction(name);
        let transcript = decode_chain(&session, std::slice::from_ref(&file)).unwrap();
        let rows = json_rows(&file.path);
        let boundary = rows
            .iter()
            .position(|row| row["subtype"] == "compact_boundary")
            .unwrap();
        let kept = rows[boundary]["compactMetadata"]["preservedMessages"]["uuids"]
            .as_array()
            .unwrap();
        assert!(!kept.is_empty(), "{name}");
        for uuid in kept {
            let at = rows.iter().position(|row| row["uuid"] == *uuid).unwrap();
            assert!(at < boundary, "{name}: {uuid}");
        }
        // Every seq up to the boundary's is in the first window and on the
        // branch; the boundary's opens the second.
        let first = &transcript.windows[0];
        let boundary_seq = transcript.windows[1].items[0].seq;
        assert_eq!(first.items.last().map(|i| i.seq < boundary_seq), Some(true));
        assert!(
            transcript.off_branch.is_empty(),
            "{name}: {:?}",
            transcript.off_branch
        );
    }
    // The automatic compaction kept the full reply and the prompt it
    // compacted at: both answer in the first window.
    let (session, file) = compaction("kept-automatic-compaction");
    let history = History::new(decode_chain(&session, &[file]).unwrap()).unwrap();
    let window_of = |text: &str| {
        history
            .events()
            .iter()
            .find(|event| event.document == text)
            .map(|event| event.window)
    };
    assert_eq!(window_of("Filled."), Some(0));
    assert_eq!(window_of("more"), Some(0));
    assert_eq!(window_of("After."), Some(1));
}

/// `@previous` names the window before the live one: after a compaction
/// that kept rows, the conversation before it.
#[test]
fn previous_names_the_window_before_each_recorded_compaction() {
    let expected: [(&str, &[&str], &[&str]); 4] = [
        (
            "kept-head-after-one-exchange",
            &["hello", "Hi there.", "and then"],
            &["and now"],
        ),
        ("kept-head-after-tool-calls", &["look around"], &["next"]),
        ("kept-head-twice", &["three"], &["one", "two", "four"]),
        (
            "kept-automatic-compaction",
            &["hello", "fill up", "Filled.", "more"],
            &["After."],
        ),
    ];
    for (name, inside, outside) in expected {
        let (session, file) = compaction(name);
        let history = History::new(decode_chain(&session, &[file]).unwrap()).unwrap();
        let previous = &history.windows()[history.windows().len() - 2];
        let mut tools = CommandTools {
            history: Some(history.clone()),
            ..CommandTools::default()
        };
        let arguments = serde_json::json!({
            "window_id": "@previous",
            "roles": ["user", "assistant"],
            "limit": 100,
        });
        let page = call_tool(&mut tools, Tool::HISTORY_LIST.name, arguments)
            .json
            .to_value();
        let items = page["items"].as_array().unwrap();
        let texts: Vec<&str> = items
            .iter()
            .filter_map(|item| item["content"].as_str())
            .collect();
        for item in items {
            assert_eq!(item["window_id"], previous.id.as_str(), "{name}: {item}");
            let seq = item["seq"].as_u64().unwrap() as u32;
            assert!(
                previous.first_seq <= Some(seq) && Some(seq) <= previous.last_seq,
                "{name}: {item}"
            );
        }
        for text in inside {
            assert!(texts.contains(text), "{name}: {text:?} not in {texts:?}");
        }
        for text in outside {
            assert!(!texts.contains(text), "{name}: {text:?} in {texts:?}");
        }
    }
}

/// Rows of a compaction written by hand, for the relinking rules
/// (claude-code.md section 2.6), each pinned where only that rule puts a
/// row on the branch.
mod relinking {
    use super::{History, decode_rows, user};

    fn assistant(uuid: &str, parent: &str, text: &str) -> String {
        super::assistant(
            uuid,
            parent,
            &format!(r#"[{{"type":"text","text":"{text}"}}]"#),
            "claude-x",
            false,
        )
    }

    fn synthetic(uuid: &str, parent: &str) -> String {
        super::assistant(
            uuid,
            parent,
            r#"[{"type":"text","text":"No response requested."}]"#,
            "<synthetic>",
            false,
        )
    }

    /// A boundary keeping `kept` (listed, or by its ends only) with
    /// `anchor`, its logical parent `logical`.
    fn boundary(
        uuid: &str,
        logical: &str,
        anchor: Option<&str>,
        kept: &[&str],
        listed: bool,
    ) -> String {
        let quote = |id: Option<&str>| id.map_or("null".to_owned(), |id| format!("\"{id}\""));
        let segment = format!(
            r#""preservedSegment":{{"headUuid":{},"anchorUuid":{},"tailUuid":{}}}"#,
            quote(kept.first().copied()),
            quote(anchor),
            quote(kept.last().copied())
        );
        let list = if listed {
            let uuids: Vec<String> = kept.iter().map(|uuid| format!("\"{uuid}\"")).collect();
            format!(
                r#","preservedMessages":{{"anchorUuid":{},"uuids":[{}]}}"#,
                quote(anchor),
                uuids.join(",")
            )
        } else {
            String::new()
        };
        format!(
            r#"{{"type":"system","subtype":"compact_boundary","uuid":"{uuid}","parentUuid":null,"logicalParentUuid":{},"content":"Conversation compacted","compactMetadata":{{{segment}{list}}}}}"#,
            quote(Some(logical).filter(|l| !l.is_empty()))
        )
    }

    fn summary(uuid: &str, parent: &str) -> String {
        format!(
            r#"{{"type":"user","uuid":"{uuid}","parentUuid":"{parent}","isCompactSummary":true,"message":{{"role":"user","content":"summary"}}}}"#
        )
    }

    fn decode(rows: &[String]) -> History {
        let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
        decode_rows(&rows)
    }

    /// The texts on the branch, by window.
    fn on_branch(history: &History) -> Vec<Vec<String>> {
        let mut windows = vec![Vec::new(); history.windows().len()];
        for event in history.events() {
            windows[event.window].push(event.document.clone());
        }
        windows
    }

    /// The head shape: the kept head is a synthetic answer to a turn cut
    /// off, the rows after the compaction hang off it. Relinked (listed or
    /// walked), the head hangs off the summary, and the compaction opens a
    /// window; a listed row missing or a walk that breaks relinks nothing.
    #[test]
    fn a_compaction_that_kept_its_head_opens_a_window() {
        let transcript = |boundary: String| {
            vec![
                user("u1", None, "first"),
                assistant("a1", "u1", "reply"),
                user("u2", Some("a1"), "cut off"),
                synthetic("h", "u2"),
                boundary,
                summary("s", "b"),
                user("c", Some("h"), "next"),
            ]
        };
        let two = vec![
            vec!["first".to_owned(), "reply".into(), "cut off".into()],
            vec![
                "Conversation compacted".into(),
                "summary".into(),
                "next".into(),
            ],
        ];
        for listed in [true, false] {
            let history = decode(&transcript(boundary("b", "h", Some("s"), &["h"], listed)));
            assert_eq!(on_branch(&history), two, "listed: {listed}");
            assert_eq!(history.highest_seq(), 6);
        }
        // Nothing relinked: the walk from the newest row never meets the
        // boundary, which is off the branch with its summary.
        for broken in [
            boundary("b", "h", Some("s"), &["h", "gone"], true),
            boundary("b", "h", Some("s"), &["gone", "h"], false),
        ] {
            let history = decode(&transcript(broken));
            assert_eq!(history.windows().len(), 1);
            assert!(history.is_off_branch(4) && history.is_off_branch(5));
        }
    }

    /// A row hanging off the anchor hangs off the last kept row: the kept
    /// rows are on the branch even when the boundary's logical parent
    /// leads elsewhere.
    #[test]
    fn rows_off_the_anchor_hang_off_the_last_kept_row() {
        let history = decode(&[
            user("u1", None, "first"),
            assistant("a1", "u1", "dropped"),
            user("u2", Some("a1"), "kept prompt"),
            assistant("a2", "u2", "kept reply"),
            boundary("b", "u1", Some("s"), &["u2", "a2"], true),
            summary("s", "b"),
            user("c", Some("s"), "next"),
        ]);
        assert_eq!(
            on_branch(&history),
            vec![
                vec![
                    "first".to_owned(),
                    "kept prompt".into(),
                    "kept reply".into()
                ],
                vec![
                    "Conversation compacted".into(),
                    "summary".into(),
                    "next".into()
                ],
            ]
        );
        assert!(history.is_off_branch(2));
    }

    /// A user or assistant row hanging off a row the compaction dropped
    /// hangs off the last kept row; other rows do not move.
    #[test]
    fn messages_off_a_dropped_row_hang_off_the_last_kept_row() {
        let before = [
            user("u1", None, "first"),
            assistant("a1", "u1", "reply"),
            user("u2", Some("a1"), "second"),
            assistant("a2", "u2", "kept"),
            boundary("b", "a2", Some("s"), &["a2"], true),
            summary("s", "b"),
        ];
        let mut message = before.to_vec();
        message.push(user("c", Some("a1"), "next"));
        let history = decode(&message);
        assert_eq!(history.windows().len(), 2);
        assert_eq!(history.events().iter().filter(|e| e.window == 1).count(), 3);
        let mut context = before.to_vec();
        context.push(
            serde_json::json!({
                "type": "attachment", "uuid": "c", "parentUuid": "a1", "isSidechain": false,
                "attachment": {"type": "hook_additional_context", "content": ["ctx"], "hookEvent": "UserPromptSubmit"}
            })
            .to_string(),
        );
        assert_eq!(decode(&context).windows().len(), 1);
    }

    /// An anchor that names no row stands for the boundary's summary; a
    /// boundary with no anchor leaves its first kept row a root.
    #[test]
    fn anchors_that_name_no_row() {
        let rows = |anchor: Option<&str>, parent: &str| {
            vec![
                user("u1", None, "first"),
                assistant("a1", "u1", "kept"),
                boundary("b", "u1", anchor, &["a1"], true),
                summary("s", "b"),
                user("c", Some(parent), "next"),
            ]
        };
        let history = decode(&rows(Some("gone"), "gone"));
        assert_eq!(history.windows().len(), 2);
        assert!(!history.is_off_branch(2) && !history.is_off_branch(4));
        // No anchor: the row after hangs off the kept row, which hangs off
        // nothing, so the walk stops there.
        let history = decode(&rows(None, "a1"));
        assert_eq!(history.windows().len(), 1);
        assert!(history.is_off_branch(3) && history.is_off_branch(4));
    }

    /// Relinkings that loop (an anchor among the kept rows, a kept row
    /// listed twice, a walk round a cycle) end the walk; the decode ends.
    #[test]
    fn relinkings_that_loop_end_the_walk() {
        for boundary in [
            boundary("b", "a1", Some("a1"), &["a1"], true),
            boundary("b", "a1", Some("s"), &["a1", "u1", "a1"], true),
            boundary("b", "a1", Some("s"), &["s", "c"], true),
            boundary("b", "a1", Some("s"), &["x", "y"], false),
        ] {
            let history = decode(&[
                user("u1", None, "first"),
                assistant("a1", "u1", "kept"),
                user("x", Some("y"), "loop x"),
                user("y", Some("x"), "loop y"),
                boundary,
                summary("s", "b"),
                user("c", Some("a1"), "next"),
            ]);
            assert!(history.highest_seq() >= 6);
        }
    }
}

/// The live window's usage (the hooks' budget) skips the rows a compaction
/// kept, as Claude Code counts kept replies at zero: right after the
/// automatic compaction there is none, though the reply it kept (past the
/// automatic line) stands just before the boundary; then the new window's
/// own replies count.
#[test]
fn the_live_usage_skips_the_rows_a_compaction_kept() {
    let (_, file) = compaction("kept-automatic-compaction");
    let bytes = std::fs::read(&file.path).unwrap();
    let text = String::from_utf8(bytes.clone()).unwrap();
    let summary = text
        .lines()
        .position(|line| line.contains(r#""isCompactSummary":true"#))
        .unwrap();
    let end = line_ends(&bytes)[summary];
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    std::fs::write(&path, &bytes[..end]).unwrap();
    assert_eq!(last_reply(&path).unwrap(), None);
    let usage = last_reply(&file.path).unwrap().unwrap().usage;
    assert_eq!(usage.context_tokens(), 20_000);
}

/// A chain of one transcript of session `s1` in `dir`, holding `lines`.
fn one_transcript(dir: &std::path::Path, lines: &[impl AsRef<str>]) -> [ChainFile; 1] {
    let path = dir.join("s1.jsonl");
    let text: String = lines
        .iter()
        .map(|line| format!("{}\n", line.as_ref()))
        .collect();
    std::fs::write(&path, text).unwrap();
    [ChainFile {
        session_id: "s1".into(),
        path,
    }]
}

/// Only a reply from the model fills its window: a synthetic assistant
/// row, a reply that used no tokens and a user row carrying usage do not.
#[test]
fn only_the_model_s_replies_fill_the_window() {
    let row = |kind: &str, uuid: &str, parent: &str, model: &str, input: u64| {
        format!(
            r#"{{"type":"{kind}","uuid":"{uuid}","parentUuid":"{parent}","timestamp":"2026-01-01T00:00:00Z","message":{{"role":"{kind}","model":"{model}","content":[{{"type":"text","text":"{uuid}"}}],"usage":{{"input_tokens":{input},"output_tokens":0}}}}}}"#
        )
    };
    let prompt = r#"{"type":"user","uuid":"u1","parentUuid":null,"timestamp":"2026-01-01T00:00:00Z","message":{"content":"go"}}"#;
    let dir = tempfile::tempdir().unwrap();
    let files = one_transcript(
        dir.path(),
        &[
            prompt.to_owned(),
            row("assistant", "a1", "u1", "claude-sonnet-4-5", 1000),
            row("assistant", "a2", "a1", "<synthetic>", 700),
            row("assistant", "a3", "a2", "claude-sonnet-4-5", 0),
            row("user", "u2", "a3", "claude-sonnet-4-5", 300),
        ],
    );
    let decoder = ChainDecoder::decode("s1", &files).unwrap();
    let signals = decoder.signals();
    let fills: Vec<u64> = signals
        .iter()
        .flat_map(|window| &window.fill)
        .map(|&(_, tokens)| tokens)
        .collect();
    assert_eq!(fills, [1000]);
}

/// A compaction's summary is the compacted window's loss, counted in
/// characters of its text; the boundary reads as its content and records
/// the tokens before it.
#[test]
fn a_compaction_s_summary_is_the_compacted_window_s_loss() {
    let dir = tempfile::tempdir().unwrap();
    let files = one_transcript(
        dir.path(),
        &[
            r#"{"type":"user","uuid":"u1","parentUuid":null,"timestamp":"2026-01-01T00:00:00Z","message":{"content":"go"}}"#,
            r#"{"type":"system","subtype":"compact_boundary","uuid":"b","parentUuid":null,"logicalParentUuid":"u1","timestamp":"2026-01-01T00:01:00Z","content":"Compacted by hand","compactMetadata":{"trigger":"manual","preTokens":5000}}"#,
            r#"{"type":"user","uuid":"s","parentUuid":"b","isCompactSummary":true,"timestamp":"2026-01-01T00:01:00Z","message":{"content":"résumé: 12345"}}"#,
        ],
    );
    let decoder = ChainDecoder::decode("s1", &files).unwrap();
    // The boundary reads as its own content.
    let texts: Vec<String> = decoder
        .transcript()
        .windows
        .iter()
        .flat_map(|window| &window.items)
        .filter_map(|item| match &item.kind {
            ItemKind::Message { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(texts, ["go", "Compacted by hand", "résumé: 12345"]);
    let signals = decoder.signals();
    assert_eq!(signals.len(), 2, "{signals:?}");
    assert_eq!(signals[0].compaction_summaries, [13]);
    assert_eq!(signals[0].tokens_before_end, Some(5000));
    assert!(signals[1].compaction_summaries.is_empty());
}

/// A window booted by notesoup takes the id its boot names, whatever
/// ordinal the decode counted; a later window whose boot names a taken id
/// takes the next free ordinal.
#[test]
fn a_booted_window_takes_its_boot_s_id() {
    use notesoup_claude::window::{CURRENT_WINDOW_LINE, FIRST_WINDOW_LINE};
    // Claude Code's SessionStart context row of a boot naming `current`,
    // hung off `parent`.
    let context = |uuid: &str, parent: Option<&str>, current: &str| {
        // The ids stand on lines of their own, below the boot's first.
        let boot =
            format!("notesoup\n{FIRST_WINDOW_LINE}claude:s1:1\n{CURRENT_WINDOW_LINE}{current}\n");
        let mut row: serde_json::Value =
            serde_json::from_str(&hook_context_row(uuid, &boot)).unwrap();
        row["parentUuid"] = parent.into();
        row.to_string()
    };
    let boundary = r#"{"type":"system","subtype":"compact_boundary","uuid":"b","parentUuid":null,"logicalParentUuid":"u1","content":"Conversation compacted"}"#;
    let dir = tempfile::tempdir().unwrap();
    let files = one_transcript(
        dir.path(),
        &[
            context("h1", None, "claude:s1:4"),
            user_row("u1", "h1", "one"),
            boundary.to_owned(),
            context("h2", Some("b"), "claude:s1:4"),
            user_row("u2", "h2", "two"),
        ],
    );
    let ids: Vec<String> = decode_chain("s1", &files)
        .unwrap()
        .windows
        .iter()
        .map(|window| window.id.clone())
        .collect();
    assert_eq!(ids, ["claude:s1:4", "claude:s1:5"]);
}
