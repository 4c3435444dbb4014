//! How the sidecar's history calls scale with the session log: a synthetic
//! dsh log of 1,000, 10,000 and 100,000 events (turns of a user message,
//! streamed chunks, a tool call and its result, an answer; a reset marker
//! every 2,000 events) is fed to one sidecar in `session.sync` batches, as
//! the bundle feeds it, then each history tool is called through the
//! protocol. A call after the log grew by one turn and a call on an
//! unchanged log are timed separately (medians of 15).
//!
//! `cargo bench -p notesoup-dsh --bench history`

use notesoup_core::tools::Tool;
use std::time::{Duration, Instant};

use notesoup_dsh::boot::NotesPlace;
use notesoup_dsh::decode::SessionEvent;
use notesoup_dsh::server::Sidecar;
use serde_json::{Value, json};

const SESSION: &str = "session-bench";

/// Builds a log of about `count` events with a valid surface.
struct LogBuilder {
    events: Vec<SessionEvent>,
    surface_first: Option<u64>,
    surface_last: u64,
    turn: u64,
}

impl LogBuilder {
    fn new() -> Self {
        Self {
            events: Vec::new(),
            surface_first: None,
            surface_last: 0,
            turn: 0,
        }
    }

    fn push(&mut self, kind: &str, data: Value, surface: Option<Value>) {
        let seq = self.events.len() as u64;
        let mut event = json!({"type": kind, "seq": seq, "time": 1_796_086_296_000_i64 + seq as i64, "data": data});
        if let Some(op) = surface {
            event["surfaceOp"] = op;
            self.surface_first.get_or_insert(seq);
            self.surface_last = seq;
        }
        self.events
            .push(serde_json::from_value(event).expect("event"));
    }

    fn marker(&mut self) {
        let seq = self.events.len() as u64;
        let start = self.surface_first.unwrap_or(seq);
        let window = format!("dsh:{SESSION}:{}", self.turn / 200 + 1);
        let text = format!(
            "<context_window>\nCurrent context window id: {window}\n</context_window>\n{}",
            "boot line\n".repeat(200)
        );
        let data = json!({"role": "user", "id": format!("m{seq}"), "content": [{"type": "text", "text": text}],
            "source": {"kind": "plugin", "plugin": "notesoup", "form": "snapshot", "windowId": window, "origin": "normal",
                       "sections": [{"name": "notesoup:boot", "text": text}]}});
        let end = self.surface_last;
        self.surface_first = None;
        self.push(
            "user/message",
            data,
            Some(json!({"op": "replace", "start": start, "end": end})),
        );
        self.events.last_mut().expect("marker").source_event_seqs = Some(vec![start, end]);
        self.surface_first = Some(seq);
    }

    fn turn(&mut self) {
        self.turn += 1;
        let n = self.turn;
        self.push("turn/start", json!({"turn": n}), None);
        self.push(
            "user/message",
            json!({"role": "user", "id": format!("u{n}"), "content": [{"type": "text", "text": format!("please look at module {n}: {}", "the parser keeps failing on nested input; ".repeat(4))}], "source": {"kind": "user"}}),
            Some(json!("append")),
        );
        for _ in 0..3 {
            self.push("assistant/chunk", Value::Null, None);
        }
        let call = format!("call_{n}");
        self.push(
            "assistant/message",
            json!({"message": {"role": "assistant", "content": [{"type": "text", "text": "Reading it."},
                {"type": "tool-call", "id": call, "name": "read", "arguments": format!("{{\"path\":\"src/module_{n}.rs\"}}")}]}}),
            Some(json!("append")),
        );
        self.push(
            "tool/call",
            json!({"callId": call, "name": "read", "arguments": format!("{{\"path\":\"src/module_{n}.rs\"}}")}),
            None,
        );
        self.push(
            "tool/result",
            json!({"message": {"source": {"kind": "tool", "callId": call}, "content": [{"type": "tool-result", "toolCallId": call, "isError": false,
                "content": [{"type": "text", "text": format!("fn module_{n}() {{\n{}}}\n", "    let x = parse(input)?;\n".repeat(30))}]}]}}),
            Some(json!("append")),
        );
        self.push(
            "assistant/message",
            json!({"message": {"role": "assistant", "content": [{"type": "text", "text": format!("Module {n} parses nested input with recursion; the fix is a depth limit.")}]}}),
            Some(json!("append")),
        );
        self.push("turn/end", json!({"turn": n}), None);
    }

    fn grow_to(&mut self, count: usize) {
        while self.events.len() < count {
            self.turn();
            if self.turn.is_multiple_of(200) {
                self.marker();
            }
        }
    }
}

struct Bench {
    sidecar: Sidecar,
    next_id: u64,
    sent: usize,
    _notes: tempfile::TempDir,
}

impl Bench {
    fn new() -> Self {
        let notes = tempfile::tempdir().expect("tempdir");
        let mut sidecar = Sidecar::new(NotesPlace {
            root: notes.path().to_path_buf(),
            agent: "anonymous".into(),
            cache: None,
        });
        let hello = json!({"id": 1, "op": "hello", "params": {"protocol": 1, "bundle": "0.1.0", "dsh": "0.1.0-rc.8", "settings": {}}});
        sidecar.answer_line(&hello.to_string());
        Self {
            sidecar,
            next_id: 2,
            sent: 0,
            _notes: notes,
        }
    }

    fn request(&mut self, op: &str, mut params: Value, log: &[SessionEvent]) -> Value {
        let events = &log[self.sent..];
        params["session"] = json!({"id": SESSION, "cwd": "/work", "model": "bench/model", "from": self.sent, "events": events});
        self.sent = log.len();
        let line = json!({"id": self.next_id, "op": op, "params": params}).to_string();
        self.next_id += 1;
        let answer: Value = serde_json::from_str(&self.sidecar.answer_line(&line)).expect("answer");
        assert!(answer.get("error").is_none(), "{answer}");
        answer
    }

    fn sync(&mut self, log: &[SessionEvent]) {
        while self.sent < log.len() {
            let end = (self.sent + 5_000).min(log.len());
            self.request("session.sync", json!({}), &log[..end]);
        }
    }

    fn tool(&mut self, name: &str, arguments: Value, log: &[SessionEvent]) -> Duration {
        let started = Instant::now();
        let answer = self.request("tool", json!({"name": name, "arguments": arguments}), log);
        let took = started.elapsed();
        assert_eq!(answer["result"]["is_error"], false, "{answer}");
        took
    }
}

/// The process's resident memory in MB (Linux), to see what the decoded
/// model costs next to the mirrored log.
fn rss_mb() -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("VmRSS:"))
                .and_then(|kb| kb.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        })
        .map_or_else(|| "n/a".to_owned(), |kb| format!("{:.0}", kb / 1024.0))
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(duration: Duration) -> String {
    format!("{:.2}", duration.as_secs_f64() * 1000.0)
}

fn main() {
    println!("events   MB    tool             grown ms  unchanged ms");
    for count in [1_000, 10_000, 100_000] {
        let mut builder = LogBuilder::new();
        builder.grow_to(count);
        let bytes: usize = builder
            .events
            .iter()
            .map(|e| serde_json::to_string(e).map_or(0, |t| t.len() + 1))
            .sum();
        let mut bench = Bench::new();
        bench.sync(&builder.events);
        let synced = rss_mb();
        // A user message half way in (history seqs are dsh seqs plus one).
        let readable = builder
            .events
            .iter()
            .skip(builder.events.len() / 2)
            .find(|e| e.kind == "user/message" && e.source().is_some_and(|s| s.kind == "user"))
            .map_or(1, |e| e.seq + 1);
        let calls: [(&str, Value); 4] = [
            (Tool::HISTORY_WINDOWS.name, json!({})),
            (Tool::HISTORY_LIST.name, json!({"limit": 20})),
            (
                Tool::HISTORY_SEARCH.name,
                json!({"query": ["depth limit"], "limit": 10}),
            ),
            (Tool::HISTORY_READ.name, json!({"seq": readable})),
        ];
        // Where a call's time goes: decoding the log, then core's model.
        let started = Instant::now();
        let transcript =
            notesoup_dsh::history::transcript(SESSION, &builder.events).expect("transcript");
        let decoded = started.elapsed();
        let started = Instant::now();
        let _history = notesoup_core::history::History::new(transcript).expect("history");
        println!(
            "{count:<8} decode {} ms, History::new {} ms",
            ms(decoded),
            ms(started.elapsed())
        );
        for (name, arguments) in calls {
            let mut grown = Vec::new();
            let mut unchanged = Vec::new();
            for _ in 0..15 {
                builder.turn();
                grown.push(bench.tool(name, arguments.clone(), &builder.events));
                unchanged.push(bench.tool(name, arguments.clone(), &builder.events));
            }
            println!(
                "{count:<8} {:<5.1} {name:<16} {:>8} {:>13}",
                bytes as f64 / 1e6,
                ms(median(grown)),
                ms(median(unchanged))
            );
        }
        println!(
            "{count:<8} resident MB: {synced} with the log mirrored, {} after the history calls",
            rss_mb()
        );
    }
}
