//! Benchmarks of the history tools over 100,000 decoded events: building the
//! history (pairing, documents), listing pages, searching and reading.
//!
//! Run with `cargo bench -p notesoup-core --bench history`.

use std::sync::LazyLock;

use divan::Bencher;
use notesoup_core::history::{
    History, ItemKind, MessageRole, ToolStatus, Transcript, TranscriptItem, TranscriptToolCall,
    TranscriptToolResult, TranscriptWindow,
};
use notesoup_core::notes::NoteStore;
use notesoup_core::tools::{Refusal, RefusalCode, Tool, ToolContext, ToolOutput, call_tool};
use serde_json::{Value, json};

fn main() {
    divan::main();
}

/// Events in the benchmark session.
const EVENTS: usize = 100_000;
/// Events per context window.
const WINDOW_EVENTS: usize = 5_000;

/// A deterministic session of `EVENTS` events: turns of a user prompt, an
/// assistant reply and tool calls with their results, some context, in
/// windows of `WINDOW_EVENTS` events.
fn transcript() -> Transcript {
    let words = [
        "parser", "token", "cargo", "test", "build", "module", "refactor", "deploy", "schema",
        "window", "note", "history", "bounded", "budget", "source", "naive", "fixture",
    ];
    // Every tenth text carries non-ASCII words (the matcher's slower path).
    let unicode = ["résumé", "naïve", "日本語"];
    let text = |seed: usize, len: usize| -> String {
        let mut text = (0..len)
            .map(|i| words[(seed * 7 + i * 13) % words.len()])
            .collect::<Vec<_>>()
            .join(" ");
        if seed.is_multiple_of(10) {
            text.push(' ');
            text.push_str(&unicode.join(" "));
        }
        text
    };
    let mut windows: Vec<TranscriptWindow> = Vec::new();
    let mut seq = 0u32;
    let mut events = 0;
    let mut turn = 0usize;
    while events < EVENTS {
        if events / WINDOW_EVENTS >= windows.len() {
            windows.push(TranscriptWindow {
                id: format!("pcw:{}", windows.len()),
                created_at: Some("2026-09-15T10:00:00.000+00:00".to_owned()),
                items: Vec::new(),
            });
        }
        let items = &mut windows.last_mut().expect("a window").items;
        let mut push = |kind: ItemKind| {
            seq += 1;
            items.push(TranscriptItem {
                seq,
                created_at: Some("2026-09-15T10:00:00.000+00:00".to_owned()),
                kind,
            });
        };
        turn += 1;
        if turn.is_multiple_of(10) {
            push(ItemKind::Message {
                role: MessageRole::Context,
                text: text(turn, 60),
            });
            events += 1;
        }
        push(ItemKind::Message {
            role: MessageRole::User,
            text: text(turn, 30),
        });
        // The assistant turn and its two tool calls (seqs base, base+1, base+2).
        push(ItemKind::Message {
            role: MessageRole::Assistant,
            text: text(turn + 1, 80),
        });
        for call in 0..2 {
            push(ItemKind::from(TranscriptToolCall {
                name: ["bash", "read"][call].to_owned(),
                call_id: format!("call-{turn}-{call}"),
                arguments: Some(format!(r#"{{"command":"cargo test -p crate{turn}"}}"#)),
            }));
        }
        for call in 0..2 {
            push(ItemKind::from(TranscriptToolResult {
                call_id: Some(format!("call-{turn}-{call}")),
                name: None,
                arguments: None,
                status: if turn.is_multiple_of(17) {
                    ToolStatus::Error
                } else {
                    ToolStatus::Ok
                },
                output: text(turn + call, 150),
                output_truncated: false,
                full_output_path: None,
                nested_calls: None,
            }));
        }
        events += 4;
    }
    Transcript {
        session_id: "bench-session".to_owned(),
        highest_seq: seq,
        off_branch: Vec::new(),
        windows,
    }
}

static TRANSCRIPT: LazyLock<Transcript> = LazyLock::new(transcript);
static HISTORY: LazyLock<History> =
    LazyLock::new(|| History::new(TRANSCRIPT.clone()).expect("a consistent transcript"));

#[divan::bench(sample_count = 20)]
fn build_100k(bencher: Bencher<'_, '_>) {
    bencher
        .with_inputs(|| TRANSCRIPT.clone())
        .bench_values(|transcript| History::new(transcript).expect("consistent"));
}

/// A host holding the benchmark history, as a running server lends its
/// kept history to each call.
struct Host;

impl ToolContext for Host {
    fn notes(&mut self) -> Result<NoteStore, Refusal> {
        Err(Refusal::new(RefusalCode::InternalError, "no notes here"))
    }

    fn history(&mut self) -> Result<History, Refusal> {
        Ok(HISTORY.clone())
    }

    fn with_history(&mut self, run: &mut dyn FnMut(&History) -> ToolOutput) -> ToolOutput {
        run(&HISTORY)
    }
}

/// One call through core's router, arguments as the host receives them.
fn call(tool: Tool, arguments: Value) -> ToolOutput {
    call_tool(&mut Host, tool.name, arguments)
}

#[divan::bench]
fn list_newest_conversation() -> ToolOutput {
    call(Tool::HISTORY_LIST, json!({}))
}

#[divan::bench]
fn list_middle_conversation() -> ToolOutput {
    call(
        Tool::HISTORY_LIST,
        json!({"before": HISTORY.highest_seq() / 2}),
    )
}

#[divan::bench]
fn list_oldest_tools_after() -> ToolOutput {
    call(
        Tool::HISTORY_LIST,
        json!({"after": 0, "roles": ["tool"], "limit": 50}),
    )
}

#[divan::bench]
fn list_previous_window() -> ToolOutput {
    call(Tool::HISTORY_LIST, json!({"window_id": "@previous"}))
}

fn search(query: Vec<&str>) -> ToolOutput {
    call(Tool::HISTORY_SEARCH, json!({ "query": query }))
}

/// A common word: the newest page fills after a few events.
#[divan::bench]
fn search_common() -> ToolOutput {
    search(vec!["PARSER"])
}

/// A word in no event: every document is scanned.
#[divan::bench(sample_count = 20)]
fn search_absent_full_scan() -> ToolOutput {
    search(vec!["zebra"])
}

/// Three literals, one of them non-ASCII, none present: a full scan.
#[divan::bench(sample_count = 20)]
fn search_absent_or_unicode_full_scan() -> ToolOutput {
    search(vec!["zebra", "ÉLAN", "北京"])
}

/// A literal found only in the oldest events: a full scan that fills a page.
#[divan::bench(sample_count = 20)]
fn search_rare_oldest() -> ToolOutput {
    search(vec!["crate1\""])
}

#[divan::bench]
fn read_tool_event() -> ToolOutput {
    call(
        Tool::HISTORY_READ,
        json!({"seq": HISTORY.highest_seq() / 2}),
    )
}
