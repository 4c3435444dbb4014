//! The lazy reader against the eager one: for every golden written by real
//! Pi and for random sessions (branches, compactions, retain-none resets,
//! legacy markers, model changes, bad lines), the branch, the provider
//! context, Pi's token estimate of it and the history transcript it gives
//! are the eager reader's,
//! while it decodes only a part of a long session; and a session read from
//! its file, streamed in chunks or from an index kept by an earlier read,
//! is the session read from its bytes.

use std::io::Write;
use std::path::Path;

use notesoup_core::history::Transcript;
use notesoup_pi::estimate::coding_agent::estimate_projected_context_tokens;
use notesoup_pi::history::{decode, decode_lazy};
use notesoup_pi::json::to_js_string;
use notesoup_pi::projection::{WindowProjection, convert_to_llm, project_path, window_projection};
use notesoup_pi::session::{Entry, EntryIndex, LazySession, Leaf, SessionFile};
use proptest::prelude::*;
use serde_json::{Value, json};

/// What the provider would be sent at `leaf`, as JSON text, from a path.
fn context_json(path: &[&Entry]) -> String {
    let projection = project_path(path);
    let messages: Vec<_> = match window_projection(&projection, path) {
        WindowProjection::LegacySlice { messages, .. } => {
            messages.iter().map(|m| m.as_ref().clone()).collect()
        }
        _ => projection.message_refs().cloned().collect(),
    };
    let llm: Vec<_> = convert_to_llm(&messages)
        .into_iter()
        .map(std::borrow::Cow::into_owned)
        .collect();
    format!(
        "{} | thinking {} | model {:?}",
        to_js_string(&llm).unwrap(),
        projection.thinking_level,
        projection.model
    )
}

/// Lazy and eager agree on the branch ids and the context at `leaf`.
fn check_same(bytes: &[u8], leaf: Leaf<'_>) {
    let eager = SessionFile::parse(bytes);
    let lazy = LazySession::parse(bytes.to_vec());
    let index = eager.index();
    let eager_path = index.path(leaf);
    let eager_ids: Vec<&str> = eager_path.iter().map(|e| e.id()).collect();
    let lazy_ids: Vec<&str> = lazy
        .path_positions(leaf)
        .into_iter()
        .map(|position| lazy.entry(position).id())
        .collect();
    assert_eq!(lazy_ids, eager_ids, "the branch");
    let lazy_path = lazy.context_path(leaf);
    assert_eq!(
        context_json(&lazy_path),
        context_json(&eager_path),
        "the context"
    );
    assert_eq!(
        estimate_projected_context_tokens(&project_path(&lazy_path), &lazy_path),
        estimate_projected_context_tokens(&project_path(&eager_path), &eager_path),
        "the estimate"
    );
    assert_eq!(lazy.len(), eager.entries().len());
    assert_eq!(lazy.header(), eager.header());
    // Both readers' diagnostics but the malformed entries'.
    let others = |diagnostics: &[notesoup_pi::session::Diagnostic]| -> Vec<_> {
        diagnostics
            .iter()
            .filter(|d| d.code != notesoup_pi::session::DiagnosticCode::MalformedEntry)
            .map(|d| (d.line, d.code))
            .collect()
    };
    assert_eq!(
        others(lazy.diagnostics()),
        others(eager.diagnostics()),
        "the diagnostics"
    );
    assert_eq!(
        decode_lazy(&lazy, leaf),
        eager_history(&eager, leaf),
        "the history"
    );
}

/// The history transcript the eager reader gives at `leaf`.
fn eager_history(eager: &SessionFile, leaf: Leaf<'_>) -> Transcript {
    let header = eager.header();
    decode(
        header.map_or("", |h| h.id.as_str()),
        header.and_then(|h| h.timestamp.as_deref()),
        eager.entries(),
        &eager.index().path(leaf),
    )
}

#[test]
fn every_golden_reads_the_same() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let scenarios = std::fs::read_to_string(dir.join("scenarios.txt")).unwrap();
    for name in scenarios.lines() {
        let bytes = std::fs::read(dir.join(format!("{name}.jsonl"))).unwrap();
        let eager = SessionFile::parse(&bytes);
        check_same(&bytes, Leaf::Last);
        for entry in eager.entries() {
            check_same(&bytes, Leaf::Id(entry.id()));
        }
        check_same(&bytes, Leaf::Null);
    }
}

const HEADER: &str = r#"{"type":"session","version":3,"id":"0197a1b2-0000-7000-8000-000000000001","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work"}"#;

/// One random line of a session.
#[derive(Debug, Clone)]
enum Step {
    User,
    Assistant(u8),
    ToolResult,
    ModelChange(u8),
    Thinking(u8),
    /// A compaction keeping from the `n`-th entry back (0: retain none).
    Compaction(u8),
    /// A notesoup reset marker and its boot.
    Reset,
    /// A legacy notesoup marker and boot (no compaction).
    LegacyReset,
    Label,
    /// Go back `n` entries and continue from there (a branch).
    Branch(u8),
    /// A line that is not an entry.
    Garbage(u8),
    /// An entry of an unknown type, or a known type with a bad shape.
    Odd(u8),
    /// An entry under the id of the entry `n` back (a later duplicate
    /// wins, as in Pi's id map), the new leaf.
    Duplicate(u8),
    /// Two entries, each naming the other as its parent.
    Cycle,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => Just(Step::User),
        4 => (0u8..3).prop_map(Step::Assistant),
        2 => Just(Step::ToolResult),
        1 => (0u8..3).prop_map(Step::ModelChange),
        1 => (0u8..3).prop_map(Step::Thinking),
        1 => (0u8..8).prop_map(Step::Compaction),
        1 => Just(Step::Reset),
        1 => Just(Step::LegacyReset),
        1 => Just(Step::Label),
        1 => (1u8..6).prop_map(Step::Branch),
        1 => (0u8..6).prop_map(Step::Garbage),
        1 => (0u8..10).prop_map(Step::Odd),
        1 => (1u8..6).prop_map(Step::Duplicate),
        1 => Just(Step::Cycle),
    ]
}

const LEVELS: [&str; 3] = ["off", "low", "high"];

/// A session being written: its text, entry ids, leaf and counter.
struct Builder {
    out: Vec<u8>,
    ids: Vec<String>,
    leaf: Option<String>,
    n: u32,
}

impl Builder {
    fn push(&mut self, mut value: Value) {
        self.n += 1;
        let id = format!("e{:05}", self.n);
        let object = value.as_object_mut().unwrap();
        let mut entry = serde_json::Map::new();
        entry.insert("type".into(), object.remove("type").unwrap());
        entry.insert("id".into(), json!(id));
        entry.insert("parentId".into(), json!(self.leaf.clone()));
        entry.insert(
            "timestamp".into(),
            json!(format!(
                "2026-01-01T00:{:02}:{:02}.000Z",
                self.n / 60 % 60,
                self.n % 60
            )),
        );
        entry.extend(object.clone());
        self.out
            .extend_from_slice(serde_json::to_string(&entry).unwrap().as_bytes());
        self.out.push(b'\n');
        self.ids.push(id.clone());
        self.leaf = Some(id);
    }

    /// A custom entry under `id` whose parent is the leaf, written as it
    /// is (no id of its own, the leaf left alone).
    fn custom(&mut self, id: &str) {
        let line = json!({"type": "custom", "customType": "x", "id": id, "parentId": self.leaf, "timestamp": "2026-01-01T00:00:00.000Z"});
        self.out.extend_from_slice(line.to_string().as_bytes());
        self.out.push(b'\n');
    }
}

/// Builds the session text of `steps`.
fn session(steps: &[Step]) -> Vec<u8> {
    let mut b = Builder {
        out: format!("{HEADER}\n").into_bytes(),
        ids: Vec::new(),
        leaf: None,
        n: 0,
    };
    for (turn, step) in steps.iter().enumerate() {
        let t = 1_767_225_600_000u64 + turn as u64 * 1000;
        match step {
            Step::User => b.push(json!({"type": "message", "message": {"role": "user", "content": format!("question {turn}"), "timestamp": t}}),
            ),
            Step::Assistant(model) => b.push(json!({"type": "message", "message": {"role": "assistant", "content": [{"type": "text", "text": format!("answer {turn}")}, {"type": "toolCall", "id": format!("c{turn}"), "name": "read", "arguments": {"path": "a"}}], "api": "faux", "provider": "faux", "model": format!("m{model}"), "usage": {"input": 100, "output": 10, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 110, "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}, "stopReason": "toolUse", "timestamp": t}}),
            ),
            Step::ToolResult => b.push(json!({"type": "message", "message": {"role": "toolResult", "toolCallId": format!("c{turn}"), "toolName": "read", "content": [{"type": "text", "text": "ok"}], "isError": false, "timestamp": t}}),
            ),
            Step::ModelChange(model) => b.push(json!({"type": "model_change", "provider": "faux", "modelId": format!("m{model}")}),
            ),
            Step::Thinking(level) => b.push(json!({"type": "thinking_level_change", "thinkingLevel": LEVELS[usize::from(*level)]}),
            ),
            Step::Compaction(back) => {
                let first_kept = if *back == 0 || b.ids.is_empty() {
                    format!("e{:05}", b.n + 1)
                } else {
                    b.ids[b.ids.len().saturating_sub(usize::from(*back))].clone()
                };
                b.push(json!({"type": "compaction", "summary": format!("summary {turn}"), "firstKeptEntryId": first_kept, "tokensBefore": 1000}),
                );
            }
            Step::Reset => {
                let window = format!("pcw:0197a1b2:{turn:08x}");
                b.push(json!({"type": "compaction", "summary": "", "firstKeptEntryId": format!("e{:05}", b.n + 1), "tokensBefore": 1000, "details": {"notesoup": {"windowId": window}}}),
                );
                b.push(json!({"type": "custom_message", "customType": "notesoup/boot", "content": "boot", "display": false, "details": {"windowId": window}}),
                );
            }
            Step::LegacyReset => {
                let window = format!("pcw:0197a1b2:{turn:08x}");
                b.push(json!({"type": "custom", "customType": "pi-context/window", "data": {"windowId": window, "previousWindowId": null}}),
                );
                b.push(json!({"type": "custom_message", "customType": "pi-context/boot", "content": "boot", "display": false, "details": {"windowId": window}}),
                );
            }
            Step::Label => {
                if let Some(target) = b.ids.last().cloned() {
                    b.push(json!({"type": "label", "targetId": target, "label": format!("l{turn}")}),
                    );
                }
            }
            Step::Branch(back) => {
                if !b.ids.is_empty() {
                    b.leaf = Some(b.ids[b.ids.len().saturating_sub(usize::from(*back))].clone());
                }
            }
            Step::Garbage(kind) => {
                let line: &[u8] = match kind {
                    0 => b"not json at all",
                    1 => b"[1, 2, 3]",
                    2 => b"",
                    3 => b"{\"type\":\"message\",\"id\":\"torn\"",
                    4 => b"{\"type\":\"message\",\"id\":\"bad\xff\",\"parentId\":null}",
                    _ => HEADER.as_bytes(),
                };
                b.out.extend_from_slice(line);
                b.out.push(b'\n');
            }
            Step::Duplicate(back) => {
                if let Some(at) = b.ids.len().checked_sub(usize::from(*back)) {
                    let id = b.ids[at].clone();
                    b.custom(&id);
                    b.leaf = Some(id);
                }
            }
            Step::Cycle => {
                let (first, second) = (format!("e{:05}", b.n + 1), format!("e{:05}", b.n + 2));
                b.n += 2;
                b.leaf = Some(second.clone());
                b.custom(&first);
                b.leaf = Some(first.clone());
                b.custom(&second);
                b.leaf = Some(second.clone());
                b.ids.extend([first, second]);
            }
            Step::Odd(kind) => match kind {
                0 => b.push(json!({"type": "future_kind", "x": 1}),
                ),
                1 => b.push(json!({"type": "message", "message": {"role": "user"}}),
                ),
                2 => b.push(json!({"type": "compaction", "summary": 7}),
                ),
                4 => {
                    // An escaped id (the scan leaves it to the eager rules)
                    // that the next entry names as its parent.
                    b.n += 1;
                    let id = format!("e{:05}", b.n);
                    let escaped = id.replacen('e', "\\u0065", 1);
                    b.out.extend_from_slice(format!("{{\"type\":\"custom\",\"customType\":\"x\",\"id\":\"{escaped}\",\"parentId\":{},\"timestamp\":\"2026-01-01T00:00:00.000Z\"}}\n", json!(b.leaf)).as_bytes());
                    b.ids.push(id.clone());
                    b.leaf = Some(id);
                }
                5 => {
                    // A number no double holds: serde_json refuses the line.
                    b.n += 1;
                    b.out.extend_from_slice(format!("{{\"type\":\"custom\",\"customType\":\"x\",\"id\":\"big{}\",\"parentId\":{},\"n\":1e400}}\n", b.n, json!(b.leaf)).as_bytes());
                }
                6 => {
                    // Nesting past serde_json's limit: refused.
                    b.n += 1;
                    b.out.extend_from_slice(format!("{{\"type\":\"custom\",\"customType\":\"x\",\"id\":\"deep{}\",\"parentId\":{},\"n\":{}1{}}}\n", b.n, json!(b.leaf), "[".repeat(130), "]".repeat(130)).as_bytes());
                }
                7 => {
                    // The id given twice: the later one counts.
                    b.n += 1;
                    let id = format!("e{:05}", b.n);
                    b.out.extend_from_slice(format!("{{\"type\":\"custom\",\"customType\":\"x\",\"id\":\"first\",\"parentId\":{},\"id\":\"{id}\"}}\n", json!(b.leaf)).as_bytes());
                    b.ids.push(id.clone());
                    b.leaf = Some(id);
                }
                8 | 9 => {
                    // A message or a compaction (keeping the entry before
                    // it) under an escaped id: the eager rules read it.
                    b.n += 1;
                    let id = format!("e{:05}", b.n);
                    let escaped = id.replacen('e', "\\u0065", 1);
                    let body = if *kind == 8 {
                        format!(r#""type":"message","message":{{"role":"user","content":"escaped {turn}","timestamp":{t}}}"#)
                    } else {
                        let kept = b.leaf.clone().unwrap_or_else(|| id.clone());
                        format!(r#""type":"compaction","summary":"escaped {turn}","firstKeptEntryId":"{kept}","tokensBefore":1000"#)
                    };
                    b.out.extend_from_slice(format!("{{{body},\"id\":\"{escaped}\",\"parentId\":{},\"timestamp\":\"2026-01-01T00:00:00.000Z\"}}\n", json!(b.leaf)).as_bytes());
                    b.ids.push(id.clone());
                    b.leaf = Some(id);
                }
                _ => {
                    // An id that is not a string: only the eager rules settle it.
                    b.n += 1;
                    b.out.extend_from_slice(format!("{{\"type\":\"custom\",\"customType\":\"x\",\"id\":{},\"parentId\":{}}}\n", b.n, json!(b.leaf)).as_bytes());
                }
            },
        }
    }
    b.out
}

/// The session read from a file, in chunks of `chunk` bytes, is the session
/// parsed from its bytes: entries, line numbers, diagnostics and branches.
fn check_file_read(bytes: &[u8], chunk: usize) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.jsonl");
    std::fs::write(&path, bytes).unwrap();
    let read = LazySession::read_chunked(&path, chunk).unwrap();
    assert_reads_the_same(&read, &LazySession::parse(bytes.to_vec()));
}

/// `read` (from a file) holds what `parsed` (from its bytes) holds.
fn assert_reads_the_same(read: &LazySession, parsed: &LazySession) {
    assert_eq!(read.len(), parsed.len());
    assert_eq!(read.header(), parsed.header());
    assert_eq!(read.diagnostics(), parsed.diagnostics());
    for position in 0..read.len() {
        assert_eq!(
            read.entry(position),
            parsed.entry(position),
            "entry {position}"
        );
        assert_eq!(read.line_number(position), parsed.line_number(position));
    }
    assert_eq!(
        read.path_positions(Leaf::Last),
        parsed.path_positions(Leaf::Last)
    );
    read.check().unwrap();
}

/// The first `cut` bytes of a session written and read, their index kept,
/// the rest appended to the same file (as Pi appends), and the file read
/// again with the kept index: the session read is the session parsed from
/// its bytes, and every entry of the kept run was restored, not read. The
/// same index with byte `flip` changed, or cut short there, restores
/// nothing, and a file rewritten under it is read whole.
fn check_kept_read(bytes: &[u8], cut: usize, flip: usize) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.jsonl");
    std::fs::write(&path, &bytes[..cut]).unwrap();
    let first = LazySession::read(&path).unwrap();
    let kept = first.keep();
    append(&path, &bytes[cut..]);
    let parsed = LazySession::parse(bytes.to_vec());
    let read = LazySession::read_kept(&path, kept.as_deref()).unwrap();
    assert_reads_the_same(&read, &parsed);
    let Some(mut kept) = kept else {
        assert_eq!(read.restored(), 0);
        return;
    };
    assert_eq!(
        read.restored(),
        first.keepable(),
        "the kept run is restored"
    );
    let at = flip % kept.len();
    kept[at] ^= 0x20;
    let damaged = LazySession::read_kept(&path, Some(&kept)).unwrap();
    assert_eq!(damaged.restored(), 0, "a changed byte at {at}");
    assert_reads_the_same(&damaged, &parsed);
    kept[at] ^= 0x20;
    let short = LazySession::read_kept(&path, Some(&kept[..at])).unwrap();
    assert_eq!(short.restored(), 0, "cut at {at}");
    // Rewritten in place (the same inode): the kept run's last line changed.
    if first.keepable() > 0 {
        let mut other = bytes.to_vec();
        let last_kept = first.line_number(first.keepable() - 1);
        let run_end = other
            .split(|&byte| byte == b'\n')
            .take(last_kept)
            .map(|line| line.len() + 1)
            .sum::<usize>();
        other[run_end - 2] = b' ';
        std::fs::write(&path, &other).unwrap();
        let rewritten = LazySession::read_kept(&path, Some(&kept)).unwrap();
        assert_eq!(rewritten.restored(), 0, "a rewritten file");
        assert_reads_the_same(&rewritten, &LazySession::parse(other));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_sessions_read_the_same(steps in proptest::collection::vec(step(), 0..60), torn in any::<bool>(), chunk in 1usize..400) {
        let mut bytes = session(&steps);
        if torn && bytes.len() > 10 {
            bytes.pop();
        }
        let eager = SessionFile::parse(&bytes);
        check_same(&bytes, Leaf::Last);
        check_same(&bytes, Leaf::Null);
        check_same(&bytes, Leaf::Id("no-such-entry"));
        let index = EntryIndex::new(eager.entries());
        for entry in eager.entries().iter().step_by(3) {
            check_same(&bytes, Leaf::Id(entry.id()));
        }
        let _ = index;
        check_file_read(&bytes, chunk);
    }

    /// A kept index whose lines' records were changed, its checksum made to
    /// match (no accident makes one: someone wrote it), may restore what it
    /// says, but never panics the reader, nor a walk or a decode of what it
    /// restored.
    #[test]
    fn a_forged_kept_index_never_panics(steps in proptest::collection::vec(step(), 1..40), edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4)) {
        let bytes = session(&steps);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session.jsonl");
        std::fs::write(&path, &bytes).unwrap();
        let Some(mut kept) = LazySession::read(&path).unwrap().keep() else {
            return Ok(());
        };
        let body = kept.len() - 4;
        // The lines' records follow the magic, five numbers and the two
        // probes (each its length, then its bytes).
        let number = |at: usize| u64::from_le_bytes(kept[at..at + 8].try_into().unwrap()) as usize;
        let tail = 56 + 8 + number(56);
        let records = tail + 8 + number(tail);
        if records == body {
            return Ok(());
        }
        for (at, byte) in edits {
            kept[records + at.index(body - records)] = byte;
        }
        let sum = crc32fast::hash(&kept[..body]).to_le_bytes();
        kept[body..].copy_from_slice(&sum);
        let read = LazySession::read_kept(&path, Some(&kept)).unwrap();
        let _ = read.context_path(Leaf::Last);
        if !read.is_empty() {
            let _ = read.path_positions(Leaf::Id(read.id(read.len() / 2)));
        }
        for position in 0..read.len() {
            let _ = read.entry(position);
        }
        let _ = read.check();
    }

    #[test]
    fn a_kept_index_reads_the_same(steps in proptest::collection::vec(step(), 0..60), cut in any::<prop::sample::Index>(), flip in any::<usize>()) {
        let bytes = session(&steps);
        check_kept_read(&bytes, cut.index(bytes.len() + 1), flip);
    }
}

/// Lines far longer than a chunk, and a torn last line, read from the file
/// as from the bytes.
#[test]
fn long_lines_straddle_chunks() {
    let mut bytes = session(&[Step::User, Step::Assistant(0), Step::ToolResult]);
    let long = "x".repeat(3 << 20);
    bytes.extend_from_slice(
        format!(
            "{{\"type\":\"custom_message\",\"customType\":\"big\",\"content\":\"{long}\",\"display\":true,\"id\":\"big\",\"parentId\":\"e00003\",\"timestamp\":\"2026-01-01T00:00:00.000Z\"}}\n"
        )
        .as_bytes(),
    );
    bytes.extend_from_slice(b"{\"type\":\"label\",\"id\":\"torn\"");
    for chunk in [1 << 20, 4096, 7] {
        check_file_read(&bytes, chunk);
    }
    check_same(&bytes, Leaf::Last);
}

/// A file whose first parsed line is not its header (none at all, an entry
/// before it, or only garbage before it): both readers say the same of it,
/// read from its bytes or its file.
#[test]
fn a_file_whose_header_is_not_first_reads_the_same() {
    let bytes = session(&[Step::User, Step::Assistant(0), Step::ToolResult]);
    let lines: Vec<&[u8]> = bytes.split_inclusive(|byte| *byte == b'\n').collect();
    let (header, entries) = lines.split_first().expect("a header");
    let files = [
        entries.concat(),
        [&entries[..1], &[*header], &entries[1..]].concat().concat(),
        [&[&b"not json\n"[..], *header][..], entries]
            .concat()
            .concat(),
    ];
    for bytes in &files {
        check_same(bytes, Leaf::Last);
        check_file_read(bytes, 4096);
    }
    let no_header = SessionFile::parse(&files[0]);
    assert!(no_header.header().is_none());
    assert_eq!(
        no_header.diagnostics()[0].code,
        notesoup_pi::session::DiagnosticCode::MissingHeader
    );
    assert!(SessionFile::parse(&files[2]).header().is_some());
}

/// A file that shrinks after it was indexed: the entry that can no longer
/// be read back is reported as a session I/O failure, never a panic.
#[test]
fn a_file_that_shrank_is_reported() {
    let bytes = session(&[Step::User, Step::Assistant(0), Step::ToolResult]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.jsonl");
    std::fs::write(&path, &bytes).unwrap();
    let lazy = LazySession::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let _ = lazy.context_path(Leaf::Last);
    let error = lazy.check().unwrap_err();
    assert_eq!(error.code(), "session_io");
    assert!(
        error.to_string().contains("changed while it was read"),
        "{error}"
    );
}

/// 2,000 turns of a prompt, a tool call and its result, and an answer, with
/// a compaction every 500 turns; with `branch_at`, a branch after that turn.
fn long_session(branch_at: Option<u32>) -> Vec<Step> {
    let mut steps = Vec::new();
    for turn in 0..2_000 {
        steps.extend([
            Step::User,
            Step::Assistant(0),
            Step::ToolResult,
            Step::Assistant(1),
        ]);
        if turn % 500 == 499 {
            steps.push(Step::Compaction(4));
        }
        if Some(turn) == branch_at {
            steps.push(Step::Branch(5));
        }
    }
    steps
}

/// On a long session with compactions, only the entries after the newest
/// compaction's kept range are decoded.
#[test]
fn a_long_session_decodes_only_its_active_part() {
    let bytes = session(&long_session(None));
    let lazy = LazySession::parse(bytes.clone());
    assert_eq!(lazy.decoded(), 0, "indexing decodes nothing");
    let path = lazy.context_path(Leaf::Last);
    assert!(lazy.decoded() < 100, "decoded {}", lazy.decoded());
    assert_eq!(
        context_json(&path),
        context_json(&SessionFile::parse(&bytes).index().path(Leaf::Last))
    );
}

/// The whole long session read from its file (several chunks, many
/// entries decoded side by side for the history): the same branch,
/// context and history as the eager reader.
#[test]
fn a_long_session_file_reads_the_same() {
    let bytes = session(&long_session(Some(1_990)));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.jsonl");
    std::fs::write(&path, &bytes).unwrap();
    let eager = SessionFile::parse(&bytes);
    for chunk in [1 << 20, 1 << 16] {
        let lazy = LazySession::read_chunked(&path, chunk).unwrap();
        assert_long_session_reads_the_same(&lazy, &eager);
    }
}

/// A long session (`long_session(Some(1_990))` and more) read lazily from
/// its file: the eager reader's entries, and its branch, context and
/// history at the last entry and on the branch.
fn assert_long_session_reads_the_same(lazy: &LazySession, eager: &SessionFile) {
    assert_eq!(lazy.len(), eager.entries().len());
    for leaf in [Leaf::Last, Leaf::Id("e04000")] {
        assert_eq!(
            context_json(&lazy.context_path(leaf)),
            context_json(&eager.index().path(leaf))
        );
        assert_eq!(decode_lazy(lazy, leaf), eager_history(eager, leaf));
    }
    lazy.check().unwrap();
}

/// Appends `bytes` to the file at `path`, as Pi appends.
fn append(path: &Path, bytes: &[u8]) {
    std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .unwrap()
        .write_all(bytes)
        .unwrap();
}

/// A long session's index kept, the session grown as Pi grows it (turns
/// appended to the same file): the next read restores every entry of the
/// first read and reads only the new turns, with the same branch, context
/// and history as the eager reader.
#[test]
fn a_long_session_kept_reads_only_what_was_appended() {
    let steps = long_session(Some(1_990));
    let bytes = session(&steps);
    let grown = session(&[steps.clone(), long_session(None)[..40].to_vec()].concat());
    assert!(grown.starts_with(&bytes));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.jsonl");
    std::fs::write(&path, &bytes).unwrap();
    let first = LazySession::read(&path).unwrap();
    assert_eq!(first.restored(), 0);
    assert_eq!(first.keepable(), first.len(), "every line is plain");
    let kept = first.keep().unwrap();
    append(&path, &grown[bytes.len()..]);
    let lazy = LazySession::read_kept(&path, Some(&kept)).unwrap();
    assert_eq!(lazy.restored(), first.len());
    assert_eq!(lazy.keepable(), lazy.len());
    assert!(lazy.len() > first.len());
    assert_long_session_reads_the_same(&lazy, &SessionFile::parse(&grown));
    // Of another file (a copy: another inode), nothing is restored.
    let copy = dir.path().join("copy.jsonl");
    std::fs::copy(&path, &copy).unwrap();
    assert_eq!(
        LazySession::read_kept(&copy, Some(&kept))
            .unwrap()
            .restored(),
        0
    );
    // Cut under the run, nothing is restored.
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    assert_eq!(
        LazySession::read_kept(&path, Some(&kept))
            .unwrap()
            .restored(),
        0
    );
}
