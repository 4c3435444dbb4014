//! `cargo bench -p notesoup-pi --bench lazy [-- ENTRIES [RUNS]]`: the lazy
//! session reader against the eager one on a long session written here in
//! Pi's shapes (user prompts, assistant replies with tool calls and usage,
//! tool results, a compaction every 5,000 entries, a branch near the end),
//! without Node, or on the session file `NOTESOUP_PI_BENCH_SESSION` names
//! (one Pi wrote, say). Prints the median time of the lazy reader's index
//! alone (every line scanned, no kept index), and of each reader for the
//! provider context and for the history transcript at the last entry.
//! Real Pi's own cost on a session it wrote is `cargo xtask pi-bench
//! context`.

use std::error::Error;
use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use notesoup_pi::history::{decode, decode_lazy};
use notesoup_pi::projection::project_path;
use notesoup_pi::session::{LazySession, Leaf, SessionFile};
use serde_json::{Value, json};

/// One way of reading the session: how many entries, messages or items it
/// gave.
type Reader = fn(&Path) -> Result<usize, Box<dyn Error>>;

fn main() -> Result<(), Box<dyn Error>> {
    // `cargo bench` passes `--bench`; the numbers are the arguments.
    let numbers: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|arg| arg.parse().ok())
        .collect();
    let entries = numbers.first().copied().unwrap_or(100_000);
    let runs = numbers.get(1).copied().unwrap_or(5).max(1);
    let dir = tempfile::tempdir()?;
    let path = match std::env::var_os("NOTESOUP_PI_BENCH_SESSION") {
        Some(given) => given.into(),
        None => {
            let path = dir.path().join("long.jsonl");
            std::fs::write(&path, session(entries)?)?;
            path
        }
    };
    let size = std::fs::metadata(&path)?.len();
    println!(
        "session: {} ({} entries), {:.1} MB; medians of {runs} runs",
        path.display(),
        LazySession::read(&path)?.len(),
        size as f64 / 1e6
    );
    let rows: [(&str, Reader); 5] = [
        ("index, lazy", lazy_index),
        ("context, lazy", lazy_context),
        ("context, eager", eager_context),
        ("history, lazy", lazy_history),
        ("history, eager", eager_history),
    ];
    for (name, run) in rows {
        let mut times = Vec::new();
        let mut size = 0;
        for _ in 0..runs {
            let start = Instant::now();
            size = run(&path)?;
            times.push(start.elapsed());
        }
        times.sort();
        let median: Duration = times[times.len() / 2];
        println!(
            "{name:<16} {:>9.1} ms  ({size} entries, messages or items)",
            median.as_secs_f64() * 1e3
        );
    }
    Ok(())
}

fn lazy_index(path: &Path) -> Result<usize, Box<dyn Error>> {
    Ok(LazySession::read(path)?.len())
}

fn lazy_context(path: &Path) -> Result<usize, Box<dyn Error>> {
    let session = LazySession::read(path)?;
    let branch = session.context_path(Leaf::Last);
    session.check()?;
    Ok(project_path(&branch).messages.len())
}

fn eager_context(path: &Path) -> Result<usize, Box<dyn Error>> {
    let session = SessionFile::read(path)?;
    let index = session.index();
    Ok(project_path(&index.path(Leaf::Last)).messages.len())
}

fn lazy_history(path: &Path) -> Result<usize, Box<dyn Error>> {
    let session = LazySession::read(path)?;
    let transcript = decode_lazy(&session, Leaf::Last);
    session.check()?;
    Ok(transcript.windows.iter().map(|w| w.items.len()).sum())
}

fn eager_history(path: &Path) -> Result<usize, Box<dyn Error>> {
    let session = SessionFile::read(path)?;
    let header = session.header();
    let transcript = decode(
        header.map_or("", |h| h.id.as_str()),
        header.and_then(|h| h.timestamp.as_deref()),
        session.entries(),
        &session.index().path(Leaf::Last),
    );
    Ok(transcript.windows.iter().map(|w| w.items.len()).sum())
}

/// A session of about `entries` entries, as Pi's `SessionManager` writes it.
fn session(entries: usize) -> Result<Vec<u8>, Box<dyn Error>> {
    let mut out = String::new();
    writeln!(
        out,
        r#"{{"type":"session","version":3,"id":"0197a1b2-0000-7000-8000-000000000001","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work/project"}}"#
    )?;
    let words = "the cart total is wrong when a coupon and a gift card meet at checkout ".repeat(4);
    let mut n = 0u64;
    let mut leaf: Option<String> = None;
    let mut push = |out: &mut String, leaf: &mut Option<String>, value: Value| {
        n += 1;
        let id = format!("{n:08x}");
        let mut entry = serde_json::Map::new();
        if let Value::Object(mut fields) = value {
            entry.insert("type".into(), fields.remove("type").unwrap_or(Value::Null));
            entry.insert("id".into(), json!(id));
            entry.insert("parentId".into(), json!(leaf));
            entry.insert("timestamp".into(), json!("2026-01-01T00:00:00.000Z"));
            entry.extend(fields);
        }
        out.push_str(&Value::Object(entry).to_string());
        out.push('\n');
        *leaf = Some(id.clone());
        id
    };
    let usage = |input: u64, output: u64| {
        json!({"input": input, "output": output, "cacheRead": 0, "cacheWrite": 0, "totalTokens": input + output,
            "cost": {"input": 0.001, "output": 0.002, "cacheRead": 0, "cacheWrite": 0, "total": 0.003}})
    };
    push(
        &mut out,
        &mut leaf,
        json!({"type": "model_change", "provider": "faux", "modelId": "faux-1"}),
    );
    let turns = entries / 4;
    let mut branch_from = None;
    for turn in 0..turns {
        let t = 1_767_225_600_000u64 + turn as u64;
        push(
            &mut out,
            &mut leaf,
            json!({"type": "message", "message": {"role": "user", "content": format!("Step {turn}: {words}"), "timestamp": t}}),
        );
        let call = format!("call_{turn}");
        push(
            &mut out,
            &mut leaf,
            json!({"type": "message", "message": {"role": "assistant", "content": [
                {"type": "text", "text": format!("Working on step {turn}. {words}")},
                {"type": "toolCall", "id": call, "name": "read", "arguments": {"path": format!("src/file_{}.rs", turn % 97)}}],
                "api": "faux", "provider": "faux", "model": "faux-1", "usage": usage(1000 + turn as u64, 50),
                "stopReason": "toolUse", "timestamp": t}}),
        );
        push(
            &mut out,
            &mut leaf,
            json!({"type": "message", "message": {"role": "toolResult", "toolCallId": call, "toolName": "read",
                "content": [{"type": "text", "text": format!("fn step_{turn}() {{}}\n// {words}\n").repeat(2)}],
                "details": {"lines": 4}, "isError": false, "timestamp": t}}),
        );
        let reply = push(
            &mut out,
            &mut leaf,
            json!({"type": "message", "message": {"role": "assistant", "content": [{"type": "text", "text": format!("Done with step {turn}.")}],
                "api": "faux", "provider": "faux", "model": "faux-1", "usage": usage(1100 + turn as u64, 20),
                "stopReason": "stop", "timestamp": t}}),
        );
        if turn % 1250 == 1249 {
            push(
                &mut out,
                &mut leaf,
                json!({"type": "compaction", "summary": format!("Summary up to step {turn}."), "firstKeptEntryId": reply, "tokensBefore": 1000 + turn}),
            );
        }
        if turn + 10 == turns {
            branch_from = Some(reply);
        }
    }
    if let Some(from) = branch_from {
        leaf = Some(from);
        push(
            &mut out,
            &mut leaf,
            json!({"type": "message", "message": {"role": "user", "content": "A different question on a branch.", "timestamp": 0}}),
        );
    }
    Ok(out.into_bytes())
}
