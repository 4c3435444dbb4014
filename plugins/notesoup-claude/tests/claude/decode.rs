//! Transcript decoding into core's history model, on transcripts recorded
//! from Claude Code 2.1.332.

use std::fmt::Write;

use notesoup_claude::transcript::decode::{ChainFile, decode_chain};
use notesoup_core::history::History;

use crate::support::{CHAIN_1, CHAIN_2, fixture};

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
/// decode into.
const COMPACTIONS: [(&str, usize); 5] = [
    ("compact-after-one-exchange", 2),
    ("compact-after-tool-calls", 2),
    ("compact-twice", 3),
    ("automatic-compaction", 2),
    ("automatic-compaction-with-mod", 2),
];

#[test]
fn recorded_compactions_open_one_window_each() {
    for (name, windows) in COMPACTIONS {
        let path = fixture(&format!("compactions/{name}.jsonl"));
        let session = notesoup_claude::transcript::scan::session_id_of(&path)
            .unwrap()
            .unwrap();
        let files = [ChainFile {
            session_id: session.clone(),
            path,
        }];
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
    let history = History::new(decode_chain(SUBAGENT_SESSION, &files).unwrap()).unwrap();
    let tools: Vec<_> = history
        .events()
        .iter()
        .filter_map(|event| event.tool.as_ref())
        .collect();
    assert_eq!(tools.len(), 2, "{tools:?}");
    let bash = tools[0];
    assert_eq!(bash.name, "Bash");
    assert!(bash.output_truncated);
    let saved = bash.full_output_path.as_deref().unwrap();
    assert!(
        saved.ends_with(".txt") && saved.contains("tool-results"),
        "{saved}"
    );
    let agent = tools[1];
    assert_eq!(agent.name, "Agent");
    assert!(!agent.output_truncated);
    let nested = agent.nested_calls.as_ref().unwrap();
    assert_eq!((nested.call_count, nested.complete), (1, true));
}
