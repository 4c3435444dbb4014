//! The MCP server's history over a 50 MB transcript (the shape
//! `cargo xtask claude-bench` writes: prompt, tool call, 2,000-character
//! result), split into its parts:
//! - `first_decode`: the chain decoded from its first byte;
//! - `first_history`: that decode projected into core's `History` (what
//!   the first history call costs, without the process round trip);
//! - `grown`: one exchange appended, the kept decode and its history
//!   extended (what a call after a turn costs);
//! - `unchanged`: the stat checks of a call with nothing new.
//!
//! Run with `cargo bench -p notesoup-claude --bench history`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use notesoup_claude::transcript::decode::ChainFile;
use notesoup_claude::transcript::incremental::{ChainDecoder, ChainHistory};
use tempfile::TempDir;

const BYTES: usize = 50 * 1024 * 1024;

static FILE: OnceLock<(PathBuf, u64)> = OnceLock::new();

fn main() {
    let dir = TempDir::new().expect("temp dir");
    let path = dir.path().join("s1.jsonl");
    let exchanges = generate(&path);
    let _ = std::process::Command::new("sync").status();
    FILE.get_or_init(|| (path, exchanges));
    divan::main();
    drop(dir);
}

fn exchange(i: u64) -> String {
    let output = "x".repeat(2_000);
    format!(
        concat!(
            r#"{{"type":"user","uuid":"u{i}","parentUuid":"r{p}","isSidechain":false,"timestamp":"2026-01-01T00:00:00Z","message":{{"role":"user","content":"prompt {i}"}}}}"#,
            "\n",
            r#"{{"type":"assistant","uuid":"a{i}","parentUuid":"u{i}","isSidechain":false,"message":{{"id":"m{i}","model":"claude-opus-5-5","role":"assistant","content":[{{"type":"tool_use","id":"t{i}","name":"Bash","input":{{"command":"ls"}}}}],"usage":{{"input_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":100000,"output_tokens":10}}}}}}"#,
            "\n",
            r#"{{"type":"user","uuid":"r{i}","parentUuid":"a{i}","isSidechain":false,"message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"t{i}","content":"{output}","is_error":false}}]}}}}"#,
            "\n"
        ),
        i = i,
        p = i.saturating_sub(1),
        output = output
    )
}

fn generate(path: &Path) -> u64 {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).expect("create"));
    let (mut bytes, mut i) = (0, 0);
    while bytes < BYTES {
        let rows = exchange(i);
        bytes += rows.len();
        out.write_all(rows.as_bytes()).expect("write");
        i += 1;
    }
    out.flush().expect("flush");
    i
}

fn files() -> Vec<ChainFile> {
    let (path, _) = FILE.get().expect("generated");
    vec![ChainFile {
        session_id: "s1".into(),
        path: path.clone(),
    }]
}

#[divan::bench(sample_count = 5)]
fn first_decode() -> ChainDecoder {
    ChainDecoder::decode("s1", &files()).expect("decode")
}

#[divan::bench(sample_count = 5)]
fn first_history() -> ChainHistory {
    ChainHistory::decode("s1", &files()).expect("history")
}

#[divan::bench(sample_count = 5)]
fn grown(bencher: divan::Bencher<'_, '_>) {
    let dir = TempDir::new().expect("temp dir");
    let (source, exchanges) = FILE.get().expect("generated");
    let path = dir.path().join("s1.jsonl");
    std::fs::copy(source, &path).expect("copy");
    let files = vec![ChainFile {
        session_id: "s1".into(),
        path: path.clone(),
    }];
    let mut history = ChainHistory::decode("s1", &files).expect("history");
    let mut next = *exchanges;
    bencher.bench_local(|| {
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .expect("open");
        file.write_all(exchange(next).as_bytes()).expect("append");
        next += 1;
        history.update("s1", &files).expect("update");
        history.history().highest_seq()
    });
}

#[divan::bench]
fn unchanged(bencher: divan::Bencher<'_, '_>) {
    let files = files();
    let mut decoder = ChainDecoder::decode("s1", &files).expect("decode");
    bencher.bench_local(|| decoder.update("s1", &files).expect("update"));
}
