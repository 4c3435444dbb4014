//! Pi history decoding: seqs over all entries, branch visibility, windows at
//! markers, tool facts, and the core history tools over the result.

use std::path::Path;

use notesoup_cli::CommandTools;
use notesoup_core::history::{History, Role, ToolStatus};
use notesoup_core::tools::{Tool, ToolOutput, call_tool};
use notesoup_pi::history::decode;
use notesoup_pi::session::SessionFile;
use serde_json::json;

fn golden(name: &str) -> SessionFile {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(format!("{name}.jsonl"));
    SessionFile::read(&path).unwrap()
}

/// The history along the branch to the file's last entry.
fn history_at_last(file: &SessionFile) -> History {
    history_at(file, file.entries().last().unwrap().id())
}

fn history_at(file: &SessionFile, leaf: &str) -> History {
    let index = file.index();
    let branch = index.branch(leaf);
    let header = file.header().unwrap();
    History::new(decode(
        &header.id,
        header.timestamp.as_deref(),
        file.entries(),
        &branch,
    ))
    .unwrap()
}

/// One line per event: `seq window role [tool status] document`.
fn events(history: &History) -> Vec<String> {
    history
        .events()
        .iter()
        .map(|event| {
            let window = &history.windows()[event.window].id;
            let tool = event.tool.as_ref().map_or(String::new(), |tool| {
                format!(" [{} {}]", tool.name, tool.status.as_str())
            });
            format!(
                "{} {window} {}{tool} {}",
                event.seq,
                event.role.as_str(),
                event.document.replace('\n', "⏎")
            )
        })
        .collect()
}

fn check_events(history: &History, expect: &[&str]) {
    assert_eq!(events(history), expect);
}

/// `history_read` of `seq` is refused with `code`.
#[track_caller]
fn assert_read_refused(history: &History, seq: u64, code: &str) {
    let read = history_tool(history, Tool::HISTORY_READ, json!({ "seq": seq }));
    assert!(read.is_error);
    assert!(read.text.contains(code), "{}", read.text);
}

#[test]
fn seqs_cover_every_branch_in_file_order() {
    let file = golden("branches");
    let history = history_at(&file, "abb9cce9");
    assert_eq!(history.highest_seq(), 13);
    check_events(
        &history,
        &[
            "1 pcw:0195f000:root user Start.",
            "2 pcw:0195f000:root assistant Started.",
            "7 pcw:0195f000:root context Approach A failed; approach B works.",
            "8 pcw:0195f000:root user Continue after the summary.",
            "9 pcw:0195f000:root assistant Continuing.",
        ],
    );
    for seq in [3, 4, 5, 6, 10, 11, 12, 13] {
        assert!(history.is_off_branch(seq), "seq {seq}");
    }
    // The same seqs from another leaf: stable across branches.
    let other = history_at(&file, "0d3a88d3");
    check_events(
        &other,
        &[
            "1 pcw:0195f000:root user Start.",
            "2 pcw:0195f000:root assistant Started.",
            "3 pcw:0195f000:root user Try approach A.",
            "4 pcw:0195f000:root assistant A failed.",
        ],
    );
    let second_root = history_at(&file, "907ea829");
    check_events(
        &second_root,
        &[
            "12 pcw:0195f000:root user A second root.",
            "13 pcw:0195f000:root assistant Second root answer.",
        ],
    );
    // An abandoned branch is unreadable here.
    assert_read_refused(&history, 4, "not_on_branch");
}

#[test]
fn tool_calls_take_seqs_after_their_message_and_pair_with_results() {
    let file = golden("agent-loop");
    let history = history_at_last(&file);
    check_events(
        &history,
        &[
            "1 pcw:0195f000:root user Please echo something.",
            "2 pcw:0195f000:root assistant ",
            "3 pcw:0195f000:root tool [echo ok] echo {\"text\":\"héllo 😀\"}⏎--- output ---⏎echo: héllo 😀",
            "5 pcw:0195f000:root assistant The tool said: echo: héllo 😀",
            "6 pcw:0195f000:root user And once more.",
            "7 pcw:0195f000:root assistant Second answer.",
        ],
    );
    assert_read_refused(&history, 4, "not_an_event");
}

#[test]
fn windows_split_at_current_and_legacy_markers() {
    let legacy = golden("legacy-marker");
    let history = history_at_last(&legacy);
    check_events(
        &history,
        &[
            "1 pcw:0195f000:root user Old window work.",
            "2 pcw:0195f000:root assistant Old answer.",
            "3 pcw:legacy:0001 context Legacy boot.",
            "4 pcw:legacy:0001 context Legacy continuation.",
            "5 pcw:legacy:0001 user New window work.",
            "6 pcw:legacy:0001 assistant New answer.",
        ],
    );
    let windows = history_tool(&history, Tool::HISTORY_WINDOWS, json!({}));
    assert_eq!(
        windows.text,
        "session 0195f000-0000-7000-8000-000000000007\n\
         window pcw:0195f000:root | seqs 1-2 | 2 events | ended: reset\n\
         window pcw:legacy:0001 | seqs 3-6 | 4 events | open"
    );

    let reset = golden("retain-none");
    let history = history_at_last(&reset);
    let ids: Vec<&str> = history.windows().iter().map(|w| w.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "pcw:0195f000:root",
            "pcw:0195f000:aaaa1111",
            "pcw:0195f000:bbbb2222"
        ]
    );
    // A marker's timestamp dates its window; the header dates the root.
    assert_eq!(
        history.windows()[0].created_at.as_deref(),
        Some("2026-03-01T09:01:46.000Z")
    );
    assert_eq!(
        history.windows()[1].created_at.as_deref(),
        reset
            .entries()
            .iter()
            .find(|e| e.entry_type() == "custom")
            .map(|e| e.timestamp())
    );
    // The checkpoint is a context event of the window it closes.
    let checkpoint = history
        .events()
        .iter()
        .find(|e| e.role == Role::Context && e.document.is_empty())
        .unwrap();
    assert_eq!(history.windows()[checkpoint.window].id, "pcw:0195f000:root");
    // @previous names the second-to-last window.
    let page = history_tool(
        &history,
        Tool::HISTORY_LIST,
        json!({"window_id": "@previous", "roles": ["context"]}),
    );
    assert!(!page.is_error, "{}", page.text);
    assert!(page.text.contains("window pcw:0195f000:aaaa1111"));
    assert!(!page.text.contains("window pcw:0195f000:bbbb2222"));
}

const SYNTHETIC: &str = r#"{"type":"session","version":3,"id":"s-1234567890","timestamp":"2026-03-01T09:00:00.000Z","cwd":"/w"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2026-03-01T09:00:01.000Z","message":{"role":"bashExecution","command":"cargo test","output":"ok","exitCode":0,"cancelled":false,"truncated":false,"timestamp":1}}
{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-03-01T09:00:02.000Z","message":{"role":"bashExecution","command":"sleep 9","output":"","cancelled":true,"truncated":true,"fullOutputPath":"/tmp/out.txt","timestamp":2}}
{"type":"message","id":"a3","parentId":"a2","timestamp":"2026-03-01T09:00:03.000Z","message":{"role":"bashExecution","command":"make","output":"boom","exitCode":2,"cancelled":false,"truncated":false,"timestamp":3}}
{"type":"message","id":"a4","parentId":"a3","timestamp":"2026-03-01T09:00:04.000Z","message":{"role":"bashExecution","command":"watch","output":"","exitCode":null,"cancelled":false,"truncated":false,"timestamp":4}}
{"type":"message","id":"a5","parentId":"a4","timestamp":"2026-03-01T09:00:05.000Z","message":{"role":"assistant","content":[{"type":"text","text":"Two calls."},{"type":"toolCall","id":"c1","name":"run","arguments":{"cmd":"x"}},{"type":"toolCall","id":"c2","name":"edit","arguments":{}}],"api":"a","provider":"p","model":"m","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","timestamp":5}}
{"type":"message","id":"a6","parentId":"a5","timestamp":"2026-03-01T09:00:06.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"run","content":[{"type":"text","text":"failed"}],"details":{"truncation":{"truncated":true},"fullOutputPath":"/tmp/run.log"},"isError":true,"timestamp":6,"nestedCalls":{"calls":[{"id":"n1","name":"read","arguments":{"path":"a"},"status":"ok","durationMs":3},{"id":"n2","name":"write","argumentsBytes":9000,"status":"error","error":"denied"}],"complete":false}}}
{"type":"message","id":"a7","parentId":"a6","timestamp":"2026-03-01T09:00:07.000Z","message":{"role":"toolResult","toolCallId":"zz","toolName":"orphan","content":[{"type":"text","text":"lost"}],"isError":false,"timestamp":7}}
{"type":"custom","customType":"notesoup/reset-marker","data":{"windowId":"pcw:s-123456:w2","origin":"forced"},"id":"a8","parentId":"a7","timestamp":"2026-03-01T09:00:08.000Z"}
{"type":"custom_message","customType":"notesoup/boot","content":[{"type":"text","text":"Boot"},{"type":"image","data":"AA","mimeType":"image/png"}],"display":false,"details":{"windowId":"pcw:s-123456:w2"},"id":"a9","parentId":"a8","timestamp":"2026-03-01T09:00:09.000Z"}
{"type":"custom","customType":"notesoup/reset-marker","data":{"windowId":"pcw:s-123456:w2","origin":"normal"},"id":"b1","parentId":"a9","timestamp":"2026-03-01T09:00:10.000Z"}
{"type":"message","id":"b2","parentId":"b1","timestamp":"2026-03-01T09:00:11.000Z","message":{"role":"custom","customType":"x","content":"custom role","display":true,"timestamp":11}}
{"type":"message","id":"b3","parentId":"b2","timestamp":"2026-03-01T09:00:12.000Z","message":{"role":"system","content":"prompt","timestamp":12}}
{"type":"message","id":"b4","parentId":"b3","timestamp":"2026-03-01T09:00:13.000Z","message":{"role":"compactionSummary","summary":"compacted","tokensBefore":5,"timestamp":13}}
"#;

#[test]
fn bash_runs_nested_calls_unpaired_results_and_repeated_windows() {
    let file = SessionFile::parse(SYNTHETIC.as_bytes());
    let history = history_at(&file, "b4");
    check_events(
        &history,
        &[
            "1 pcw:s-123456:root tool [bash ok] bash {\"command\":\"cargo test\"}⏎--- output ---⏎ok",
            "2 pcw:s-123456:root tool [bash error] bash {\"command\":\"sleep 9\"}",
            "3 pcw:s-123456:root tool [bash error] bash {\"command\":\"make\"}⏎--- output ---⏎boom",
            "4 pcw:s-123456:root tool [bash unfinished] bash {\"command\":\"watch\"}",
            "5 pcw:s-123456:root assistant Two calls.",
            "6 pcw:s-123456:root tool [run error] run {\"cmd\":\"x\"}⏎--- output ---⏎failed⏎--- nested calls (incomplete, 2 recorded) ---⏎- read [ok] 3ms {\"path\":\"a\"}⏎- write [error] error: denied (arguments omitted: 9000 bytes)",
            "7 pcw:s-123456:root tool [edit unfinished] edit {}",
            "9 pcw:s-123456:root tool [orphan ok] orphan (arguments not recorded)⏎--- output ---⏎lost",
            "10 pcw:s-123456:w2 context Boot",
            "11 pcw:s-123456:w2 context custom role",
            "12 pcw:s-123456:w2 context compacted",
        ],
    );
    let run = history.event(6).unwrap().tool.as_ref().unwrap();
    assert!(run.output_truncated);
    assert_eq!(run.full_output_path.as_deref(), Some("/tmp/run.log"));
    assert_eq!(
        run.nested_calls.map(|n| (n.call_count, n.complete)),
        Some((2, false))
    );
    let sleep = history.event(2).unwrap().tool.as_ref().unwrap();
    assert_eq!(sleep.status, ToolStatus::Error);
    assert!(sleep.output_truncated);
    assert_eq!(sleep.full_output_path.as_deref(), Some("/tmp/out.txt"));
    // A repeated window id does not open a second window of that id.
    assert_eq!(history.windows().len(), 2);
    assert_eq!(history.highest_seq(), 12);
}

/// Calls a history tool over `history` through core's one router, as a
/// command line does.
fn history_tool(history: &History, tool: Tool, arguments: serde_json::Value) -> ToolOutput {
    let mut tools = CommandTools {
        history: Some(history.clone()),
        ..CommandTools::default()
    };
    call_tool(&mut tools, tool.name, arguments)
}

mod properties {
    use std::collections::HashMap;

    use notesoup_core::history::History;
    use notesoup_pi::history::decode;
    use notesoup_pi::session::SessionFile;
    use proptest::prelude::*;

    /// One entry: its kind and the index of its parent among the earlier
    /// entries (`None` for a root).
    #[derive(Debug, Clone)]
    enum Kind {
        User,
        Assistant { calls: usize },
        ToolResult { call: usize },
        Custom,
        Marker { window: usize },
        Checkpoint,
        Label,
    }

    fn kind() -> impl Strategy<Value = Kind> {
        prop_oneof![
            Just(Kind::User),
            (0usize..3).prop_map(|calls| Kind::Assistant { calls }),
            (0usize..6).prop_map(|call| Kind::ToolResult { call }),
            Just(Kind::Custom),
            (0usize..3).prop_map(|window| Kind::Marker { window }),
            Just(Kind::Checkpoint),
            Just(Kind::Label),
        ]
    }

    fn session() -> impl Strategy<Value = Vec<(Kind, Option<usize>)>> {
        prop::collection::vec((kind(), any::<prop::sample::Index>(), any::<bool>()), 1..40)
            .prop_map(|specs| {
                specs
                    .into_iter()
                    .enumerate()
                    .map(|(position, (kind, parent, root))| {
                        let parent = (position > 0 && !root).then(|| parent.index(position));
                        (kind, parent)
                    })
                    .collect()
            })
    }

    fn jsonl(spec: &[(Kind, Option<usize>)]) -> String {
        let mut lines = vec![r#"{"type":"session","version":3,"id":"0195f000-prop","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}"#.to_owned()];
        let usage = r#"{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}"#;
        for (position, (kind, parent)) in spec.iter().enumerate() {
            let parent = parent.map_or("null".to_owned(), |p| format!("\"e{p}\""));
            let base = format!(
                r#""id":"e{position}","parentId":{parent},"timestamp":"2026-01-01T00:00:01.000Z""#
            );
            lines.push(match kind {
                Kind::User => format!(r#"{{"type":"message",{base},"message":{{"role":"user","content":"u{position}","timestamp":1}}}}"#),
                Kind::Assistant { calls } => {
                    let calls: Vec<String> = (0..*calls)
                        .map(|c| {
                            let id = position * 10 + c;
                            format!(r#"{{"type":"toolCall","id":"c{id}","name":"t","arguments":{{"n":{id}}}}}"#)
                        })
                        .collect();
                    let content = std::iter::once(format!(r#"{{"type":"text","text":"a{position}"}}"#)).chain(calls).collect::<Vec<_>>().join(",");
                    format!(r#"{{"type":"message",{base},"message":{{"role":"assistant","content":[{content}],"api":"a","provider":"p","model":"m","usage":{usage},"stopReason":"stop","timestamp":1}}}}"#)
                }
                Kind::ToolResult { call } => format!(r#"{{"type":"message",{base},"message":{{"role":"toolResult","toolCallId":"c{call}","toolName":"t","content":[{{"type":"text","text":"r{position}"}}],"isError":false,"timestamp":1}}}}"#),
                Kind::Custom => format!(r#"{{"type":"custom_message","customType":"x","content":"m{position}","display":false,{base}}}"#),
                Kind::Marker { window } => format!(r#"{{"type":"custom","customType":"notesoup/reset-marker","data":{{"windowId":"pcw:0195f000:w{window}"}},{base}}}"#),
                // Summaries name their entry so every event document is unique.
                Kind::Checkpoint => format!(r#"{{"type":"compaction",{base},"summary":"s{position}","firstKeptEntryId":"e{position}","tokensBefore":1}}"#),
                Kind::Label => format!(r#"{{"type":"label",{base},"targetId":"e0","label":"l"}}"#),
            });
        }
        lines.join("\n")
    }

    proptest! {
        #[test]
        fn every_leaf_decodes_and_shared_entries_keep_their_seqs(spec in session()) {
            let file = SessionFile::parse(jsonl(&spec).as_bytes());
            let index = file.index();
            // (document, seq) of every event, per leaf.
            let mut seen: HashMap<String, u32> = HashMap::new();
            let mut highest = None;
            for leaf in file.entries() {
                let branch = index.branch(leaf.id());
                let history = History::new(decode("0195f000-prop", None, file.entries(), &branch));
                prop_assert!(history.is_ok(), "{:?}", history.err());
                let history = history.unwrap();
                prop_assert_eq!(*highest.get_or_insert(history.highest_seq()), history.highest_seq());
                for event in history.events() {
                    let key = format!("{:?}:{}", event.role, event.document);
                    let seq = *seen.entry(key).or_insert(event.seq);
                    prop_assert_eq!(seq, event.seq, "an entry's seq never depends on the leaf");
                }
                for window in history.windows() {
                    prop_assert!(window.id.starts_with("pcw:0195f000:"));
                }
            }
        }
    }
}
