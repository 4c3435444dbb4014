//! The backward transcript reader over files whose last line is 1, 10 and
//! 50 MB (a Read of a large image or PDF writes such a row), next to a
//! plain `std::fs::read` of the same file. The reader must pass the whole
//! last line to reach the row before it, so it cannot beat the plain read;
//! it must stay within a small factor of it at every size (linear time).
//! The 50 MB line is over the reader's 16 MiB cap, so it is skipped rather
//! than assembled.
//!
//! Run with `cargo bench -p notesoup-claude --bench tail`; the ratio table
//! is printed before divan's own figures.

use std::fs;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use notesoup_claude::transcript::tail::ReverseLines;
use tempfile::TempDir;

const SIZES_MB: [usize; 3] = [1, 10, 50];

/// The generated files, one per size, made once in `main`.
static FILES: OnceLock<Vec<PathBuf>> = OnceLock::new();

fn main() {
    let dir = TempDir::new().expect("temp dir");
    let files: Vec<PathBuf> = SIZES_MB
        .iter()
        .map(|&mb| generate(dir.path(), mb))
        .collect();
    // Flush the generated files now, or their writeback lands in whichever
    // measurement runs first; `sync` is best effort.
    let _ = std::process::Command::new("sync").status();
    ratio_table(&files);
    FILES.get_or_init(|| files);
    divan::main();
    drop(dir);
}

/// A transcript of a few ordinary rows, then one row of `mb` megabytes
/// (a base64-like payload in a tool result), then a torn last line.
fn generate(dir: &Path, mb: usize) -> PathBuf {
    let path = dir.join(format!("last-line-{mb}mb.jsonl"));
    let mut content = Vec::with_capacity(mb * 1_000_000 + 4096);
    for i in 0..20 {
        content.extend_from_slice(
            format!(r#"{{"type":"assistant","uuid":"u{i}","message":{{"usage":{{"input_tokens":{i}}}}}}}"#)
                .as_bytes(),
        );
        content.push(b'\n');
    }
    let head = br#"{"type":"user","message":{"content":[{"type":"tool_result","content":[{"type":"image","source":{"data":""#;
    content.extend_from_slice(head);
    let payload = mb * 1_000_000 - head.len() - 8;
    content.extend(
        (0..payload)
            .map(|i| b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"[i % 64]),
    );
    content.extend_from_slice(b"\"}}]}]}}\n");
    fs::write(&path, content).expect("write transcript");
    path
}

/// What a hook does: read lines from the end until the row before the big
/// one.
fn reverse(path: &Path) -> usize {
    let mut lines = ReverseLines::open(path).expect("open");
    let mut seen = 0;
    while let Some(line) = lines.next_line().expect("read") {
        seen += line.len();
        if line.starts_with(br#"{"type":"assistant""#) {
            break;
        }
    }
    seen + usize::try_from(lines.skipped()).unwrap_or(0)
}

fn plain(path: &Path) -> usize {
    fs::read(path).expect("read").len()
}

/// The best of a few runs of `f`.
fn best(f: impl Fn() -> usize) -> Duration {
    (0..7)
        .map(|_| {
            let start = Instant::now();
            black_box(f());
            start.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn ratio_table(files: &[PathBuf]) {
    println!("last line   reverse reader   fs::read   ratio");
    for (mb, path) in SIZES_MB.iter().zip(files) {
        let reverse = best(|| reverse(path));
        let plain = best(|| plain(path));
        println!(
            "{mb:>6} MB   {:>11.2} ms   {:>6.2} ms   {:>5.2}",
            reverse.as_secs_f64() * 1e3,
            plain.as_secs_f64() * 1e3,
            reverse.as_secs_f64() / plain.as_secs_f64()
        );
    }
    println!();
}

fn file(index: usize) -> &'static Path {
    &FILES.get().expect("generated in main")[index]
}

#[divan::bench(args = [0, 1, 2])]
fn reverse_reader(index: usize) -> usize {
    reverse(file(index))
}

#[divan::bench(args = [0, 1, 2])]
fn plain_read(index: usize) -> usize {
    plain(file(index))
}
