//! The backward transcript reader over files whose last line is 1, 10 and
//! 50 MB (a Read of a large image or PDF writes such a row), next to a
//! plain `std::fs::read` of the same file. The reader must pass the whole
//! last line to reach the row before it, so it cannot beat the plain read;
//! it must stay within a small factor of it at every size (linear time).
//! The 50 MB line is over the reader's 16 MiB cap, so it is skipped rather
//! than assembled.
//!
//! Also the boot scan a `session-start` hook runs on `resume` of a session
//! it has never seen, over a 50 MB transcript of ordinary exchanges that
//! holds no boot and no compaction (so it is read whole, backwards), next
//! to a plain read of the same file: as the hook runs it (the scan to keep,
//! the file read by two threads) and on one thread.
//!
//! Run with `cargo bench -p notesoup-claude --bench tail`; the ratio table
//! is printed before divan's own figures.

use std::fs;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use notesoup_claude::transcript::scan::{boot_scan, boot_scan_kept};
use notesoup_claude::transcript::tail::ReverseLines;
use tempfile::TempDir;

const SIZES_MB: [usize; 3] = [1, 10, 50];

/// The generated files, one per size, made once in `main`.
static FILES: OnceLock<Vec<PathBuf>> = OnceLock::new();

fn main() {
    let dir = TempDir::new().expect("temp dir");
    let mut files: Vec<PathBuf> = SIZES_MB
        .iter()
        .map(|&mb| generate(dir.path(), mb))
        .collect();
    files.push(exchanges(dir.path(), 50));
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

/// A transcript of `mb` megabytes of ordinary exchanges (a prompt, a tool
/// call, its 2,000-byte result), none of them a boot or a compaction.
fn exchanges(dir: &Path, mb: usize) -> PathBuf {
    let path = dir.join(format!("exchanges-{mb}mb.jsonl"));
    let output = "x".repeat(2_000);
    let mut content = String::with_capacity(mb * 1_000_000 + 4096);
    let mut i = 0;
    while content.len() < mb * 1_000_000 {
        content += &format!(
            r#"{{"type":"user","uuid":"u{i}","isSidechain":false,"message":{{"role":"user","content":"prompt {i}"}}}}
{{"type":"assistant","uuid":"a{i}","isSidechain":false,"message":{{"role":"assistant","content":[{{"type":"tool_use","id":"t{i}","name":"Bash","input":{{"command":"ls"}}}}]}}}}
{{"type":"user","uuid":"r{i}","isSidechain":false,"message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"t{i}","content":"{output}"}}]}}}}
"#
        );
        i += 1;
    }
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
        row(&format!("{mb:>6} MB"), reverse, plain);
    }
    let path = &files[SIZES_MB.len()];
    println!("\ntranscript   boot scan        fs::read   ratio");
    row("     50 MB", best(|| scan_kept(path)), best(|| plain(path)));
    row("one thread", best(|| scan(path)), best(|| plain(path)));
    println!();
}

fn row(label: &str, reader: Duration, plain: Duration) {
    println!(
        "{label}   {:>11.2} ms   {:>6.2} ms   {:>5.2}",
        reader.as_secs_f64() * 1e3,
        plain.as_secs_f64() * 1e3,
        reader.as_secs_f64() / plain.as_secs_f64()
    );
}

/// The boot scan of a new session's `resume`: the whole file, backwards.
fn scan(path: &Path) -> usize {
    let scan = boot_scan(path).expect("scan");
    assert!(
        scan.last_boot.is_none(),
        "the bench transcript holds no boot"
    );
    usize::from(scan.in_live_window)
}

/// The same scan as the hook runs it: nothing kept yet, the scan to keep
/// made too.
fn scan_kept(path: &Path) -> usize {
    let (scan, kept) = boot_scan_kept(path, None).expect("scan");
    assert!(kept.is_some() && scan.last_boot.is_none());
    usize::from(scan.in_live_window)
}

fn file(index: usize) -> &'static Path {
    &FILES.get().expect("generated in main")[index]
}

#[divan::bench(args = [0, 1, 2])]
fn reverse_reader(index: usize) -> usize {
    reverse(file(index))
}

#[divan::bench(args = [0, 1, 2, 3])]
fn plain_read(index: usize) -> usize {
    plain(file(index))
}

#[divan::bench]
fn boot_scan_of_exchanges() -> usize {
    scan_kept(file(SIZES_MB.len()))
}

#[divan::bench]
fn boot_scan_of_exchanges_one_thread() -> usize {
    scan(file(SIZES_MB.len()))
}
