//! Benchmarks of the notes store over a generated store of 10,000 notes
//! across the five homes, measured as a host pays them: `notes_list` and
//! `notes_search` through core's tool router (the listing, the rows and the
//! bounded result), with and without kept note heads, and the boot's
//! listing of each home; then `notes_search` side by side with `rg -i -F`
//! over the same files, printing both times and the ratio.
//!
//! Run with `cargo bench -p notesoup-core --bench notes`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use jiff::tz::TimeZone;
use notesoup_core::boot::BootSnapshot;
use notesoup_core::history::History;
use notesoup_core::notes::{HeadCache, Home, NoteStore, NotesIdentity};
use notesoup_core::tools::{Refusal, RefusalCode, Tool, ToolContext, ToolOutput, call_tool};
use serde_json::{Value, json};

const NOTES: usize = 10_000;
const QUERY: &str = "zephyr";

struct Fixture {
    _dir: tempfile::TempDir,
    store: NoteStore,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(generate)
}

/// A deterministic word stream (xorshift), so every run sees the same store.
struct Words(u64);

impl Words {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn word(&mut self) -> &'static str {
        const WORDS: [&str; 24] = [
            "note",
            "store",
            "flock",
            "rename",
            "budget",
            "window",
            "reset",
            "boot",
            "memory",
            "agent",
            "model",
            "project",
            "human",
            "session",
            "decision",
            "because",
            "the",
            "and",
            "of",
            "größe",
            "naïve",
            "résumé",
            "ΟΔΟΣ",
            "データ",
        ];
        WORDS[(self.next() % WORDS.len() as u64) as usize]
    }
}

fn generate() -> Fixture {
    let dir = tempfile::tempdir().expect("temp dir");
    let identity = NotesIdentity::new(
        dir.path(),
        "bench-session",
        "bench-1234abcd",
        "alice",
        "gpt",
    )
    .expect("identity");
    let store = NoteStore::new(identity.clone()).with_time_zone(TimeZone::UTC);
    let homes = Home::own(&identity);
    let mut words = Words(0x9e37_79b9_7f4a_7c15);
    for index in 0..NOTES {
        let home = &homes[index % homes.len()];
        let rel = format!("topic-{}/note-{index}.md", index % 17);
        let path = store.home_dir(home).expect("a session home").join(rel);
        let mut body = format!("# Note {index}\n\n");
        let lines = 10 + words.next() % 50;
        for line in 0..lines {
            let count = 4 + words.next() % 12;
            for _ in 0..count {
                body.push_str(words.word());
                body.push(' ');
            }
            // About one note in fifty mentions the query, in varying case.
            if (index + line as usize).is_multiple_of(997) {
                body.push_str(["Zephyr", "ZEPHYR", "zephyr"][index % 3]);
            }
            body.push('\n');
        }
        // Written as a note on disk reads, frontmatter first, so the store
        // parses what a user's notes hold.
        let at = jiff::Timestamp::from_millisecond(1_700_000_000_000 + index as i64 * 1000)
            .expect("in range")
            .strftime("%Y-%m-%dT%H:%M:%S%.3f+00:00");
        let note = format!(
            "---\norigin: self\ncreatedAt: {at}\nupdatedAt: {at}\nlastAccessed: {at}\naccessCount: 0\nproject: bench-1234abcd\n---\n\n{body}"
        );
        std::fs::create_dir_all(path.parent().expect("parent")).expect("dirs");
        std::fs::write(&path, note).expect("write");
    }
    Fixture { _dir: dir, store }
}

fn root() -> &'static Path {
    fixture().store.root()
}

/// A host lending one store to each call, as a running server does.
struct Host(NoteStore);

impl ToolContext for Host {
    fn notes(&mut self) -> Result<NoteStore, Refusal> {
        Ok(self.0.clone())
    }

    fn history(&mut self) -> Result<History, Refusal> {
        Err(Refusal::new(RefusalCode::NoSession, "no history here"))
    }
}

/// One call through core's router over `store`, arguments as the host
/// receives them.
fn call(store: &NoteStore, tool: Tool, arguments: Value) -> ToolOutput {
    let output = call_tool(&mut Host(store.clone()), tool.name, arguments);
    assert!(!output.is_error, "{}", output.text);
    output
}

/// How many notes a listing or search matched: those shown and those left
/// out (the limit or the response budget).
fn matched(output: &ToolOutput) -> usize {
    let json = output.json.to_value();
    let shown = json["files"].as_array().map_or(0, Vec::len);
    let more = json["more"].as_u64().unwrap_or_default();
    shown + usize::try_from(more).unwrap_or(usize::MAX)
}

fn list(store: &NoteStore, arguments: Value) -> usize {
    matched(&call(store, Tool::NOTES_LIST, arguments))
}

/// Every note listed: only each note's frontmatter head is read, then the
/// rows that fit the result are rendered.
#[divan::bench(sample_count = 10)]
fn list_all() -> usize {
    list(&fixture().store, json!({}))
}

/// A head cache of every note (its notes settled first: heads are kept only
/// once a note is 2 s old), and where it is saved.
fn kept_heads() -> &'static (Arc<HeadCache>, PathBuf) {
    static KEPT: OnceLock<(Arc<HeadCache>, PathBuf)> = OnceLock::new();
    KEPT.get_or_init(|| {
        std::thread::sleep(HeadCache::DEFAULT_SETTLE + Duration::from_millis(100));
        let heads = Arc::new(HeadCache::new());
        let store = fixture().store.clone().with_head_cache(Arc::clone(&heads));
        assert_eq!(list(&store, json!({})), NOTES);
        let saved = root().join("bench-heads/note-heads.bin");
        heads.save(&saved).expect("save");
        (heads, saved)
    })
}

/// `list_all` through a warm cache of a long-lived host (stamp checked, no
/// change notification).
#[divan::bench(sample_count = 10)]
fn list_all_kept_heads() -> usize {
    let (heads, _) = kept_heads();
    list(
        &fixture().store.clone().with_head_cache(Arc::clone(heads)),
        json!({}),
    )
}

/// A hook's listing: the saved heads loaded, then `list_all` through them.
#[divan::bench(sample_count = 10)]
fn list_all_through_saved_heads() -> usize {
    let (_, saved) = kept_heads();
    list(
        &fixture()
            .store
            .clone()
            .with_head_cache(Arc::new(HeadCache::load(saved))),
        json!({}),
    )
}

/// The boot's listing: one scoped listing of note heads per home, then the
/// few bodies the boot shows (see the boot bench for the render).
#[divan::bench(sample_count = 10)]
fn list_each_home_like_the_boot() -> BootSnapshot {
    BootSnapshot::load(&fixture().store).expect("snapshot")
}

#[divan::bench(sample_count = 10)]
fn list_with_pattern() -> usize {
    list(&fixture().store, json!({"pattern": "**/topic-3/*.md"}))
}

#[divan::bench(sample_count = 10)]
fn search_one_query() -> usize {
    search(&[QUERY])
}

#[divan::bench(sample_count = 10)]
fn search_two_queries() -> usize {
    search(&[QUERY, "résumé flock"])
}

#[divan::bench(sample_count = 10)]
fn ripgrep_one_query() -> bool {
    ripgrep(QUERY)
}

fn search(queries: &[&str]) -> usize {
    matched(&call(
        &fixture().store,
        Tool::NOTES_SEARCH,
        json!({ "query": queries }),
    ))
}

fn ripgrep(query: &str) -> bool {
    Command::new("rg")
        .args(["-i", "-F", query])
        .arg(root())
        .stdout(Stdio::null())
        .status()
        .map(|status| status.success())
        .unwrap_or(false)
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// Times `notes_list`, `notes_search` and `rg -i -F` in turn over the same
/// files, so load on the machine hits all three alike.
fn compare_with_ripgrep() {
    if !ripgrep(QUERY) {
        println!("\nrg is not installed (or found nothing); skipping the side-by-side comparison");
        return;
    }
    let rounds = 15;
    let (mut listed, mut ours, mut theirs) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        let start = Instant::now();
        assert_eq!(list_all(), NOTES);
        listed.push(start.elapsed());
        let start = Instant::now();
        assert!(
            search(&[QUERY]) > 0,
            "the generated store mentions the query"
        );
        ours.push(start.elapsed());
        let start = Instant::now();
        ripgrep(QUERY);
        theirs.push(start.elapsed());
    }
    let (listed, ours, theirs) = (median(listed), median(ours), median(theirs));
    let files = count_files(root());
    println!("\nside by side over {files} files ({rounds} rounds, medians):");
    println!("  notesoup list    {listed:>10.2?}");
    println!("  notesoup search  {ours:>10.2?}");
    println!("  rg -i -F         {theirs:>10.2?}");
    println!(
        "  search / rg      {:>10.2}x",
        ours.as_secs_f64() / theirs.as_secs_f64()
    );
}

fn count_files(dir: &Path) -> usize {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_file())
        .count()
}

fn main() {
    let started = Instant::now();
    root();
    println!("generated {NOTES} notes in {:.2?}", started.elapsed());
    divan::main();
    compare_with_ripgrep();
}
