//! Decoding the transcripts of a `/clear` chain into core's history model.
//!
//! - Rows used: `user`, `assistant` (not synthetic), `system/compact_boundary`
//!   and `attachment/hook_additional_context`, with a uuid and not on a
//!   sidechain. Everything else (bookkeeping, other attachments, unknown
//!   types, lines that do not parse) is skipped.
//! - Seqs run over the used rows of the whole chain in file order, oldest
//!   file first. A row takes one seq, plus one per `tool_use` block; a user
//!   row takes one per `tool_result` block (plus one when it also has text).
//!   A seq depends only on row and block kinds, so it is stable as files grow.
//! - The active branch of each file is what the newest main-thread row
//!   reaches through `parentUuid`, following `logicalParentUuid` across a
//!   compact boundary, with the rows each compaction kept relinked as Claude
//!   Code's loader relinks them (see `relink.rs`). Rows off it take
//!   seqs but answer `not_on_branch`.
//! - A tool result Claude Code persisted to a file (`<persisted-output>`)
//!   is marked truncated with the file's path; the result of a call that
//!   spawned a sub-agent carries the sub-agent's calls (from
//!   `<session>/subagents/`) as nested calls.
//! - Windows split at each compact boundary and between files. A window's id
//!   is the one its own notesoup boot names; a window without a boot counts
//!   on from the window before it.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::collections::{HashMap, HashSet};
use std::convert::Infallible;
use std::io::{self, Read};
use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};

use notesoup_core::history::{
    EndReason, ItemKind, MessageRole, NestedArguments, NestedCall, NestedCalls, SeqSpan,
    ToolStatus, Transcript, TranscriptItem, TranscriptToolCall, TranscriptToolResult,
    TranscriptWindow, WindowSignals,
};
use notesoup_core::plumbing::LineRead;
use serde_json::Value;

use super::fnv::{FastMap, FastSet};
use super::relink::{Lookup, Relink};
use super::row::{Block, BlockRef, Preserved, Row, RowRef};
use crate::files::{is_absent, open_regular, read_regular};
use crate::window::{WindowId, boot_ids};

/// One transcript file of a chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainFile {
    /// The Claude session id the file belongs to.
    pub session_id: String,
    /// The JSONL file.
    pub path: PathBuf,
}

/// Decodes `files` (oldest first) into one transcript for `notes_session_id`.
/// A missing file decodes as empty (Claude Code creates a transcript lazily),
/// and so does a path that names no regular file (a FIFO would block).
pub fn decode_chain(notes_session_id: &str, files: &[ChainFile]) -> io::Result<Transcript> {
    Ok(decode_chain_with_signals(notes_session_id, files)?.0)
}

/// [`decode_chain`], with what the rows record about each window beyond its
/// items (each reply's usage and model window, the compactions and their
/// summaries, the `/clear` between files): the window ledger's input.
pub fn decode_chain_with_signals(
    notes_session_id: &str,
    files: &[ChainFile],
) -> io::Result<(Transcript, Vec<WindowSignals>)> {
    let mut decoder = Decoder::new(notes_session_id);
    for file in files {
        let rows = read_rows(&file.path)?;
        let nested = subagent_calls(&file.path);
        decoder.file(&file.session_id, rows, &nested);
    }
    Ok((decoder.transcript, decoder.signals))
}

/// The used rows of the file at `path`, its last line read even without
/// its newline: none when there is no regular file there.
pub(super) fn read_rows(path: &std::path::Path) -> io::Result<Vec<Parsed>> {
    let mut file = match open_regular(path) {
        Ok(file) => file,
        Err(err) if is_absent(&err) => return Ok(Vec::new()),
        Err(err) => return Err(err),
    };
    let expected = file.metadata()?.len();
    let mut rows = Vec::new();
    let take = |parsed, _| {
        rows.extend(parsed);
        true
    };
    let last = parse_stream(&mut file, STREAM_CHUNK_BYTES, expected, |_| true, take)?;
    rows.extend(Parsed::of_line(&last));
    Ok(rows)
}

/// What Claude Code writes for a tool output too large to keep inline: the
/// result holds a preview, the whole output is in a file.
const PERSISTED_OUTPUT: &str = "<persisted-output>";
const SAVED_TO: &str = "Full output saved to: ";

/// The path a persisted output names, when the result is one.
fn persisted_output_path(output: &str) -> Option<Option<String>> {
    if !output.trim_start().starts_with(PERSISTED_OUTPUT) {
        return None;
    }
    Some(output.find(SAVED_TO).map(|at| {
        let rest = &output[at + SAVED_TO.len()..];
        rest.lines().next().unwrap_or_default().trim().to_owned()
    }))
}

/// The calls each sub-agent made, by the `tool_use` id of the call that
/// spawned it. Claude Code keeps a sub-agent's transcript beside the
/// session's, `<session>/subagents/agent-<id>.jsonl`, with
/// `agent-<id>.meta.json` naming the spawning call (`toolUseId`) and
/// whether it finished.
pub(super) fn subagent_calls(transcript: &std::path::Path) -> HashMap<String, NestedCalls> {
    let mut found = HashMap::new();
    let dir = transcript.with_extension("").join("subagents");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return found;
    };
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(agent) = name.strip_suffix(".meta.json") else {
            continue;
        };
        let Ok(meta) = read_regular(&entry.path()) else {
            continue;
        };
        let Ok(meta) = serde_json::from_slice::<Value>(&meta) else {
            continue;
        };
        let Some(spawned_by) = meta.get("toolUseId").and_then(Value::as_str) else {
            continue;
        };
        let complete = meta.get("finished").and_then(Value::as_bool) == Some(true);
        let bytes = read_regular(&dir.join(format!("{agent}.jsonl"))).unwrap_or_default();
        found.insert(
            spawned_by.to_owned(),
            NestedCalls {
                calls: nested_calls(&bytes),
                complete,
            },
        );
    }
    found
}

/// A sub-agent transcript's tool calls, in order, each with the status of
/// its result (`unfinished` without one).
fn nested_calls(bytes: &[u8]) -> Vec<NestedCall> {
    let rows: Vec<Row> = bytes
        .split(|&b| b == b'\n')
        .filter(|line| !line.is_empty() && worth_parsing(line))
        .filter_map(Row::parse)
        .collect();
    let mut results: HashMap<&str, (bool, &str)> = HashMap::new();
    for row in rows.iter().filter(|row| row.kind == "user") {
        for block in row.message.iter().flat_map(|m| &m.content.0) {
            if let Block::ToolResult {
                tool_use_id,
                content,
                is_error,
            } = block
            {
                results.insert(tool_use_id, (*is_error, content.0.as_str()));
            }
        }
    }
    let mut calls = Vec::new();
    for row in rows.iter().filter(|row| row.kind == "assistant") {
        for block in row.message.iter().flat_map(|m| &m.content.0) {
            if let Block::ToolUse { id, name, input } = block {
                let (status, error) = match results.get(id.as_str()) {
                    Some((true, output)) => ("error", Some((*output).to_owned())),
                    Some((false, _)) => ("ok", None),
                    None => ("unfinished", None),
                };
                calls.push(NestedCall {
                    name: name.clone(),
                    status: status.to_owned(),
                    duration_ms: None,
                    error,
                    arguments: NestedArguments::Recorded(input.to_string()),
                });
            }
        }
    }
    calls
}

pub(super) struct Decoder {
    pub(super) transcript: Transcript,
    pub(super) used_ids: HashSet<String>,
    pub(super) last_ordinal: u64,
    /// One per closed window, beside the transcript's windows.
    pub(super) signals: Vec<WindowSignals>,
}

/// Row kinds worth parsing; a line whose leading `"type"` names anything else
/// is bookkeeping and skipped unparsed (these can be large).
const MESSAGE_KINDS: [&str; 4] = ["user", "assistant", "system", "attachment"];

pub(super) fn worth_parsing(line: &[u8]) -> bool {
    let Some(rest) = line.strip_prefix(b"{\"type\":\"") else {
        return true;
    };
    let end = rest.iter().position(|&b| b == b'"').unwrap_or(rest.len());
    MESSAGE_KINDS
        .iter()
        .any(|kind| kind.as_bytes() == &rest[..end])
}

/// Below this many bytes the rows are parsed on the calling thread.
const PARALLEL_PARSE_BYTES: usize = 1 << 20;

/// A used row (with a uuid, not on a sidechain) as the decode keeps it:
/// what the branch walk needs, and the row's items, their texts copied out
/// of the line once.
#[derive(Debug)]
pub(super) struct Parsed {
    pub(super) uuid: String,
    pub(super) parent: Option<String>,
    /// Set on a compact boundary (whose walk goes on at this parent when
    /// `parent` is null).
    pub(super) logical_parent: Option<String>,
    pub(super) boundary: bool,
    pub(super) compact_summary: bool,
    /// A user or assistant row (the rows a compaction's relinking moves
    /// off a dropped parent).
    pub(super) message: bool,
    /// What a boundary preserved (boxed: most rows are no boundary).
    pub(super) preserved: Option<Box<Preserved>>,
    pub(super) timestamp: Option<String>,
    /// A main-thread reply's context tokens, and whether its model has the
    /// long (`[1m]`) window.
    pub(super) usage: Option<(u64, bool)>,
    /// A compact boundary's `preTokens`: the window's fill when it was
    /// compacted.
    pub(super) pre_tokens: Option<u64>,
    /// The seqs and items the row takes; `None` when it takes none.
    pub(super) decoded: Option<Decoded>,
}

impl Parsed {
    /// The used row of one line, if the line is one.
    pub(super) fn of_line(line: &[u8]) -> Option<Self> {
        if line.is_empty() || !worth_parsing(line) {
            return None;
        }
        Self::of_row(RowRef::parse(line)?)
    }

    /// [`Parsed::of_line`] of a line already known to be UTF-8, whose
    /// strings are then not checked again one by one.
    fn of_text(line: &str) -> Option<Self> {
        if line.is_empty() || !worth_parsing(line.as_bytes()) {
            return None;
        }
        Self::of_row(RowRef::parse_text(line)?)
    }

    fn of_row(row: RowRef<'_>) -> Option<Self> {
        let uuid = row.uuid.as_ref()?.0.to_string();
        if row.is_sidechain {
            return None;
        }
        let boundary = row.is_compact_boundary();
        let usage = match &row.message {
            Some(message) if row.kind.0 == "assistant" && !row.is_synthetic() => {
                message.usage.as_ref().map(|usage| {
                    let long = [row.requested_model.as_ref(), message.model.as_ref()]
                        .into_iter()
                        .flatten()
                        .any(|id| id.0.to_ascii_lowercase().ends_with("[1m]"));
                    (usage.context_tokens(), long)
                })
            }
            _ => None,
        }
        .filter(|&(tokens, _)| tokens > 0);
        let pre_tokens = row
            .compact_metadata
            .as_ref()
            .and_then(|metadata| metadata.pre_tokens)
            .filter(|_| boundary);
        Some(Self {
            usage,
            pre_tokens,
            uuid,
            parent: row.parent_uuid.as_ref().map(|p| p.0.to_string()),
            logical_parent: row.logical_parent_uuid.as_ref().map(|p| p.0.to_string()),
            boundary,
            compact_summary: row.is_compact_summary,
            message: matches!(row.kind.0.as_ref(), "user" | "assistant"),
            preserved: row.preserved().filter(|_| boundary).map(Box::new),
            timestamp: row.timestamp.as_ref().map(|t| t.0.to_string()),
            decoded: decode_row(row),
        })
    }

    /// The anchor a boundary's kept rows hang off.
    pub(super) fn anchor(&self) -> Option<&str> {
        self.preserved.as_deref()?.anchor.as_deref()
    }

    /// A user row that holds a tool result.
    pub(super) fn has_tool_result(&self) -> bool {
        self.decoded.as_ref().is_some_and(|decoded| {
            decoded
                .items
                .iter()
                .any(|(_, kind)| matches!(kind, ItemKind::ToolResult(_)))
        })
    }
}

/// The used rows of the lines of `chunk`, pushed onto `rows`.
fn parse_chunk(chunk: &[u8], rows: &mut Vec<Parsed>) {
    let mut start = 0;
    // One check of the whole chunk (it nearly always passes) spares the
    // parser a check of every string.
    let text = std::str::from_utf8(chunk).ok();
    for end in memchr::memchr_iter(b'\n', chunk).chain([chunk.len()]) {
        rows.extend(match text {
            Some(text) => Parsed::of_text(&text[start..end]),
            None => Parsed::of_line(&chunk[start..end]),
        });
        start = end + 1;
    }
}

/// The used rows of the complete lines in `bytes`, in file order.
#[cfg(test)]
fn parse_rows(bytes: &[u8]) -> Vec<Parsed> {
    let mut rows = Vec::new();
    parse_chunk(bytes, &mut rows);
    rows
}

/// What a core reads and parses at a time of a streamed transcript: small
/// enough that its buffer stays in the core's cache while it is parsed.
pub(super) const STREAM_CHUNK_BYTES: usize = 64 << 10;

/// Reads `reader` to its end and parses its rows, in chunks of whole lines
/// of about `chunk` bytes that every available core (up to four, one when
/// about `expected` bytes are too few to share) reads and parses in turn.
/// Each core reads its chunk into its own buffer, which stays in its cache
/// while it is parsed: copying a long transcript through one large buffer
/// costs more than parsing it on a machine short of memory bandwidth.
///
/// `read` sees every byte read, in order, and says whether to go on;
/// `take` gets each chunk's rows and byte count in file order, on the
/// calling thread, and says whether to go on. Returns the bytes after the
/// last newline (when the stream was stopped, what was not handed out).
pub(super) fn parse_stream<R: Read + Send>(
    reader: &mut R,
    chunk: usize,
    expected: u64,
    read: impl FnMut(&[u8]) -> bool + Send,
    mut take: impl FnMut(Vec<Parsed>, usize) -> bool,
) -> io::Result<Vec<u8>> {
    let feed = Mutex::new(Feed {
        reader,
        read,
        carry: Vec::new(),
        next: 0,
        ended: false,
        error: None,
    });
    let parsed: Mutex<BTreeMap<usize, (Vec<Parsed>, usize)>> = Mutex::new(BTreeMap::new());
    let chunk = chunk.max(1);
    // Reads and parses the next chunk into `buffer`; false at the end.
    let parse_next = |buffer: &mut Vec<u8>| {
        let Some(index) = next_chunk(&feed, buffer, chunk) else {
            return false;
        };
        let mut rows = Vec::new();
        parse_chunk(buffer, &mut rows);
        lock(&parsed).insert(index, (rows, buffer.len()));
        true
    };
    // Chunks taken so far, and whether `take` stopped the stream.
    let (mut taken, mut stopped) = (0, false);
    let mut take_ready = || {
        while !stopped {
            let Some((rows, bytes)) = lock(&parsed).remove(&taken) else {
                return;
            };
            taken += 1;
            if !take(rows, bytes) {
                stopped = true;
                lock(&feed).ended = true;
            }
        }
    };
    // A short stream (an append) is parsed on this thread alone, without
    // asking how many cores there are.
    let threads = if expected < PARALLEL_PARSE_BYTES as u64 {
        1
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get().min(4))
    };
    let joined = std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..threads)
            .map(|_| {
                scope.spawn(move || {
                    let mut buffer = Vec::new();
                    while parse_next(&mut buffer) {}
                })
            })
            .collect();
        let mut buffer = Vec::new();
        while parse_next(&mut buffer) {
            take_ready();
        }
        // A parse never panics; if a helper did, its chunk is missing and
        // the stream fails.
        helpers.into_iter().all(|helper| helper.join().is_ok())
    });
    take_ready();
    let feed = feed.into_inner().unwrap_or_else(PoisonError::into_inner);
    if let Some(err) = feed.error {
        return Err(err);
    }
    if !joined {
        return Err(io::Error::other("a parse thread failed"));
    }
    Ok(feed.carry)
}

/// The reader a stream's cores share, and what it has handed out.
struct Feed<'r, R, F> {
    reader: &'r mut R,
    read: F,
    /// The bytes after the last newline handed out.
    carry: Vec<u8>,
    /// The index of the next chunk.
    next: usize,
    /// At the reader's end, stopped, or failed.
    ended: bool,
    error: Option<io::Error>,
}

impl<R: Read, F> Feed<'_, R, F> {
    /// One read into `buffer`, an interrupted read retried: how many bytes
    /// came (0 at the end); `None` on a read error, kept, the feed ended.
    fn read_some(&mut self, buffer: &mut [u8]) -> Option<usize> {
        loop {
            match self.reader.read(buffer) {
                Ok(read) => return Some(read),
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => {
                    self.error = Some(err);
                    self.ended = true;
                    return None;
                }
            }
        }
    }

    /// Hands out `buffer` up to `end` (just past its last newline) as the
    /// next chunk, carrying the bytes after it: the chunk's index.
    fn hand_out(&mut self, buffer: &mut Vec<u8>, end: usize) -> usize {
        self.carry.extend_from_slice(&buffer[end..]);
        buffer.truncate(end);
        let index = self.next;
        self.next += 1;
        index
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Fills `buffer` with the next chunk of whole lines (the carried bytes,
/// then at least `chunk` more up to a newline) and returns its index;
/// `None` at the end, when stopped, or on a read error (kept in the feed).
/// A line longer than core's `LineRead::MAX_BYTES` is passed over as it streams
/// past, never kept whole: it is a bad line like one that does not parse
/// (`read` still sees its bytes, so offsets stay true).
fn next_chunk<R: Read, F: FnMut(&[u8]) -> bool>(
    feed: &Mutex<Feed<'_, R, F>>,
    buffer: &mut Vec<u8>,
    chunk: usize,
) -> Option<usize> {
    let mut feed = lock(feed);
    let feed = &mut *feed;
    if feed.ended {
        return None;
    }
    buffer.clear();
    buffer.append(&mut feed.carry);
    loop {
        let start = buffer.len();
        buffer.resize(start + chunk, 0);
        let mut filled = start;
        while filled < buffer.len() {
            match feed.read_some(&mut buffer[filled..])? {
                0 => break,
                n => filled += n,
            }
        }
        buffer.truncate(filled);
        if filled == start || !(feed.read)(&buffer[start..]) {
            // The end (or a stop): what is left is the tail.
            feed.ended = true;
            std::mem::swap(&mut feed.carry, buffer);
            return None;
        }
        // Only the new bytes can hold a newline the carried ones lacked.
        if let Some(at) = memchr::memrchr(b'\n', &buffer[start..]) {
            return Some(feed.hand_out(buffer, start + at + 1));
        }
        // No newline yet, so the buffer is one line's start: past the cap,
        // the line is read to its end and dropped, and what follows it goes
        // on as usual.
        if buffer.len() > LineRead::MAX_BYTES {
            buffer.clear();
            buffer.shrink_to(chunk);
            loop {
                buffer.resize(chunk, 0);
                let read = feed.read_some(&mut buffer[..])?;
                buffer.truncate(read);
                if read == 0 || !(feed.read)(buffer) {
                    // The end (or a stop) inside the dropped line: no tail.
                    feed.ended = true;
                    buffer.clear();
                    return None;
                }
                if let Some(at) = memchr::memchr(b'\n', buffer) {
                    buffer.drain(..=at);
                    break;
                }
            }
            if let Some(at) = memchr::memrchr(b'\n', buffer) {
                return Some(feed.hand_out(buffer, at + 1));
            }
        }
    }
}

impl Decoder {
    /// A decoder with nothing decoded yet.
    pub(super) fn new(notes_session_id: &str) -> Self {
        Self {
            transcript: Transcript {
                session_id: notes_session_id.to_owned(),
                ..Transcript::default()
            },
            used_ids: HashSet::new(),
            last_ordinal: 0,
            signals: Vec::new(),
        }
    }

    /// Decodes the used rows of one finished file of the chain.
    pub(super) fn file(
        &mut self,
        session_id: &str,
        rows: Vec<Parsed>,
        nested: &HashMap<String, NestedCalls>,
    ) {
        let branch = active_branch(&rows);
        let on_branch: Vec<bool> = rows
            .iter()
            .map(|row| branch.contains(row.uuid.as_str()))
            .collect();
        drop(branch);
        self.begin_file();
        let mut window = self.open_window(session_id, first_timestamp(&rows));
        // The rows are consumed: their items move into the windows.
        for (mut row, on_branch) in rows.into_iter().zip(on_branch) {
            let Some(decoded) = row.decoded.take() else {
                continue;
            };
            let Some(base) = self.number_row(decoded.seqs, on_branch) else {
                continue;
            };
            self.add_row(&mut window, session_id, row, decoded, base, nested);
        }
        self.close_window(window);
    }

    /// A file of the chain begins: a file after another is the session a
    /// `/clear` started, which ended the window before it.
    pub(super) fn begin_file(&mut self) {
        if let Some(ended) = self.signals.last_mut()
            && ended.ended_by.is_none()
        {
            ended.ended_by = Some(EndReason::Clear);
        }
    }

    /// Adds the row `row` of the session `session_id`, numbered from
    /// `base` (its items `decoded`, taken out of it), to `window`, with
    /// what it says about the windows: a boundary ends `window` (by a
    /// compaction, at its `preTokens`) and opens the next in its place; a
    /// reply's usage fills the window; a compaction's summary is the
    /// compacted window's loss. Whether a boundary opened a window.
    pub(super) fn add_row(
        &mut self,
        window: &mut OpenWindow,
        session_id: &str,
        row: Parsed,
        mut decoded: Decoded,
        base: u32,
        nested: &HashMap<String, NestedCalls>,
    ) -> bool {
        if row.boundary {
            window.signals.ended_by = Some(EndReason::HostCompaction);
            window.signals.tokens_before_end = row.pre_tokens;
            let next = self.open_window(session_id, row.timestamp.clone());
            let ended = std::mem::replace(window, next);
            self.close_window(ended);
        }
        if let Some((tokens, long)) = row.usage {
            window.signals.fill.push((base, tokens));
            window.signals.context_window = Some(if long {
                crate::budget::LONG_CONTEXT_WINDOW
            } else {
                crate::budget::DEFAULT_CONTEXT_WINDOW
            });
        }
        // A compaction's summary opens the window after its boundary;
        // it is the compacted window's loss.
        if row.compact_summary
            && let Some(compacted) = self.signals.last_mut()
        {
            let chars = decoded
                .items
                .iter()
                .map(|(_, kind)| match kind {
                    ItemKind::Message { text, .. } => text.chars().count(),
                    _ => 0,
                })
                .sum::<usize>();
            compacted
                .compaction_summaries
                .push(u64::try_from(chars).unwrap_or(u64::MAX));
        }
        attach_nested_calls(&mut decoded.items, nested);
        window.push_items(base, row.timestamp, decoded.items);
        row.boundary
    }

    /// Gives a decoded row its `seqs` seqs, which depend only on the row,
    /// never on the branch: a row off the branch has its span recorded as
    /// such and gives `None`; one on it gives its first seq.
    pub(super) fn number_row(&mut self, seqs: u32, on_branch: bool) -> Option<u32> {
        let base = self.transcript.highest_seq + 1;
        self.transcript.highest_seq += seqs;
        if !on_branch {
            self.transcript.off_branch.push(SeqSpan {
                first: base,
                last: self.transcript.highest_seq,
            });
            return None;
        }
        Some(base)
    }

    /// Where the decode stands, to come back to with [`Decoder::rewind`].
    pub(super) fn mark(&self) -> DecoderMark {
        DecoderMark {
            highest_seq: self.transcript.highest_seq,
            off_branch: self.transcript.off_branch.len(),
            windows: self.transcript.windows.len(),
            used_ids: self.used_ids.clone(),
            last_ordinal: self.last_ordinal,
            signals: self.signals.len(),
        }
    }

    /// Forgets everything decoded since `mark`.
    pub(super) fn rewind(&mut self, mark: DecoderMark) {
        self.transcript.highest_seq = mark.highest_seq;
        self.transcript.off_branch.truncate(mark.off_branch);
        self.transcript.windows.truncate(mark.windows);
        self.used_ids = mark.used_ids;
        self.last_ordinal = mark.last_ordinal;
        self.signals.truncate(mark.signals);
    }

    pub(super) fn open_window(&self, session_id: &str, created_at: Option<String>) -> OpenWindow {
        OpenWindow {
            session_id: session_id.to_owned(),
            created_at,
            boot_id: None,
            items: Vec::new(),
            signals: WindowSignals::default(),
        }
    }

    /// The id `window` gets when it is closed now: its boot's, unless
    /// taken, else the next free ordinal of its session.
    pub(super) fn window_id(&self, window: &OpenWindow) -> WindowId {
        match window
            .boot_id
            .clone()
            .filter(|id| !self.used_ids.contains(&id.to_string()))
        {
            Some(id) => id,
            None => {
                let mut id = WindowId::new(window.session_id.clone(), self.last_ordinal + 1);
                while self.used_ids.contains(&id.to_string()) {
                    id.ordinal += 1;
                }
                id
            }
        }
    }

    pub(super) fn close_window(&mut self, window: OpenWindow) {
        let id = self.window_id(&window);
        self.last_ordinal = id.ordinal;
        let id = id.to_string();
        self.used_ids.insert(id.clone());
        self.signals.push(window.signals);
        self.transcript.windows.push(TranscriptWindow {
            id,
            created_at: window.created_at,
            items: window.items,
        });
    }
}

/// A point of a decode (see [`Decoder::mark`]).
pub(super) struct DecoderMark {
    highest_seq: u32,
    off_branch: usize,
    windows: usize,
    used_ids: HashSet<String>,
    last_ordinal: u64,
    signals: usize,
}

/// A window being filled.
#[derive(Debug, Clone)]
pub(super) struct OpenWindow {
    pub(super) session_id: String,
    pub(super) created_at: Option<String>,
    /// The id named by the first notesoup boot in the window.
    pub(super) boot_id: Option<WindowId>,
    pub(super) items: Vec<TranscriptItem>,
    /// What the rows say about the window beyond its items.
    pub(super) signals: WindowSignals,
}

impl OpenWindow {
    /// Pushes a row's items, each `created_at` (the last one takes it).
    pub(super) fn push_items(
        &mut self,
        base: u32,
        mut created_at: Option<String>,
        items: Vec<(u32, ItemKind)>,
    ) {
        let last = items.len().saturating_sub(1);
        for (index, (offset, kind)) in items.into_iter().enumerate() {
            if self.boot_id.is_none()
                && let ItemKind::Message {
                    role: MessageRole::Context,
                    text,
                } = &kind
                && text.starts_with(SESSION_START_CONTEXT)
            {
                self.boot_id = boot_ids(text).map(|ids| ids.current);
            }
            let created_at = if index == last {
                created_at.take()
            } else {
                created_at.clone()
            };
            self.items.push(TranscriptItem {
                seq: base + offset,
                created_at,
                kind,
            });
        }
    }
}

/// How hook context reads in the history: as the model saw it.
const SESSION_START_CONTEXT: &str = "SessionStart hook additional context: ";

fn first_timestamp(rows: &[Parsed]) -> Option<String> {
    rows.iter().find_map(|row| row.timestamp.clone())
}

/// Gives each tool result the calls of the sub-agent its call spawned.
pub(super) fn attach_nested_calls(
    items: &mut [(u32, ItemKind)],
    nested: &HashMap<String, NestedCalls>,
) {
    if nested.is_empty() {
        return;
    }
    for (_, kind) in items {
        if let ItemKind::ToolResult(result) = kind
            && let Some(id) = &result.call_id
        {
            result.nested_calls = nested.get(id).cloned();
        }
    }
}

/// A used row: how many seqs it takes and the items at their offsets.
#[derive(Debug)]
pub(super) struct Decoded {
    pub(super) seqs: u32,
    pub(super) items: Vec<(u32, ItemKind)>,
}

fn context(text: String) -> ItemKind {
    ItemKind::Message {
        role: MessageRole::Context,
        text,
    }
}

/// The items of one row, its texts copied out of the line (sub-agent calls
/// are attached later).
pub(super) fn decode_row(row: RowRef<'_>) -> Option<Decoded> {
    match row.kind.0.as_ref() {
        "user" => Some(decode_user(row)),
        "assistant" if !row.is_synthetic() => Some(decode_assistant(row)),
        "system" if row.is_compact_boundary() => {
            let text = match row.content {
                Some(Value::String(text)) => text,
                _ => "Conversation compacted".to_owned(),
            };
            Some(Decoded {
                seqs: 1,
                items: vec![(0, context(text))],
            })
        }
        "attachment" => {
            let (event, texts) = row.hook_context()?;
            let text = format!("{event} hook additional context: {}", texts.join("\n"));
            Some(Decoded {
                seqs: 1,
                items: vec![(0, context(text))],
            })
        }
        _ => None,
    }
}

/// Local command rows (`/compact`, `/clear`, their caveat and output) are
/// harness context, not something the human typed to the model.
fn is_local_command(text: &str) -> bool {
    let text = text.trim_start();
    [
        "<command-name>",
        "<local-command-",
        "<command-message>",
        "<bash-input>",
        "<bash-stdout>",
        "<bash-stderr>",
    ]
    .iter()
    .any(|tag| text.starts_with(tag))
}

/// Texts joined by newlines, copied once.
fn join_texts(texts: &[Cow<'_, str>]) -> String {
    match texts {
        [one] => one.as_ref().to_owned(),
        _ => texts.join("\n"),
    }
}

fn decode_user(row: RowRef<'_>) -> Decoded {
    let context_only = row.is_compact_summary || row.is_meta;
    let mut texts: Vec<Cow<'_, str>> = Vec::new();
    let blocks = row.message.map(|m| m.content.0).unwrap_or_default();
    let results = blocks
        .iter()
        .filter(|block| matches!(block, BlockRef::ToolResult { .. }))
        .count();
    // The results at seqs 1.., moved down to 0.. when there is no text.
    let mut items = Vec::with_capacity(results + 1);
    for block in blocks {
        match block {
            BlockRef::Text { text } => texts.push(text.0),
            BlockRef::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => {
                let persisted = persisted_output_path(&content.0);
                let seq = u32::try_from(items.len() + 1).unwrap_or(u32::MAX);
                items.push((
                    seq,
                    ItemKind::from(TranscriptToolResult {
                        call_id: Some(tool_use_id.into_owned()),
                        name: None,
                        arguments: None,
                        status: if is_error {
                            ToolStatus::Error
                        } else {
                            ToolStatus::Ok
                        },
                        output_truncated: persisted.is_some(),
                        full_output_path: persisted.flatten().filter(|p| !p.is_empty()),
                        output: content.0.into_owned(),
                        nested_calls: None,
                    }),
                ));
            }
            BlockRef::ToolUse { .. } | BlockRef::Other => {}
        }
    }
    if !texts.is_empty() || items.is_empty() {
        let text = join_texts(&texts);
        let role = if context_only || is_local_command(&text) {
            MessageRole::Context
        } else {
            MessageRole::User
        };
        items.insert(0, (0, ItemKind::Message { role, text }));
    } else {
        for (seq, _) in &mut items {
            *seq -= 1;
        }
    }
    Decoded {
        seqs: u32::try_from(items.len()).unwrap_or(u32::MAX),
        items,
    }
}

fn decode_assistant(row: RowRef<'_>) -> Decoded {
    let mut texts: Vec<Cow<'_, str>> = Vec::new();
    let mut calls = Vec::new();
    for block in row.message.into_iter().flat_map(|m| m.content.0) {
        match block {
            BlockRef::Text { text } => texts.push(text.0),
            BlockRef::ToolUse { id, name, input } => {
                calls.push(ItemKind::from(TranscriptToolCall {
                    name: name.into_owned(),
                    call_id: id.into_owned(),
                    arguments: Some(input.to_string()),
                }))
            }
            BlockRef::ToolResult { .. } | BlockRef::Other => {}
        }
    }
    let mut items = Vec::with_capacity(calls.len() + 1);
    let text = join_texts(&texts);
    if !text.is_empty() {
        items.push((
            0,
            ItemKind::Message {
                role: MessageRole::Assistant,
                text,
            },
        ));
    }
    let seqs = 1 + u32::try_from(calls.len()).unwrap_or(u32::MAX - 1);
    items.extend((1..).zip(calls));
    Decoded { seqs, items }
}

/// The uuids on a file's active branch: everything the newest row reaches
/// through its parents, following a boundary's logical parent across it, an
/// anchor that names no row to the summary (or boundary) standing in for
/// it, and the relinking of each preserved boundary in its epoch.
pub(super) fn active_branch(rows: &[Parsed]) -> FastSet<&str> {
    let mut by_uuid: FastMap<&str, usize> = FastMap::default();
    by_uuid.reserve(rows.len());
    by_uuid.extend(
        rows.iter()
            .enumerate()
            .map(|(at, row)| (row.uuid.as_str(), at)),
    );
    let stand_ins = stand_ins(rows);
    let epochs = epochs(rows, &by_uuid);
    let relinking = epochs.iter().any(|epoch| epoch.relink.is_some());
    let mut branch: FastSet<&str> = FastSet::default();
    // Rows visited as kept rows, by epoch; each may be visited once there
    // and once in file order.
    let mut kept_visits: FastSet<(usize, &str)> = FastSet::default();
    let mut next = rows.last().map(|row| row.uuid.as_str());
    // The epoch the walk comes from (`None` after crossing a boundary).
    let mut from: Option<usize> = None;
    while let Some(id) = next {
        let Some(&at) = by_uuid.get(id) else {
            next = stand_ins.get(id).copied();
            continue;
        };
        let row = &rows[at];
        // The row's own copy of the id, which outlives the walk.
        let uuid = row.uuid.as_str();
        let kept =
            from.and_then(|epoch| Some((epoch, epochs[epoch].relink.as_ref()?.place(uuid)?)));
        let epoch = match kept {
            Some((epoch, _)) => Some(epoch),
            None if relinking => epochs
                .partition_point(|epoch| epoch.at <= at)
                .checked_sub(1),
            None => None,
        };
        let first = match kept {
            Some((epoch, _)) => kept_visits.insert((epoch, uuid)),
            None => branch.insert(uuid),
        };
        if !first {
            break;
        }
        let own = row.parent.as_deref();
        let parent = match epoch.map(|epoch| &epochs[epoch]) {
            Some(Epoch {
                at: boundary,
                relink: Some(relink),
            }) => {
                let dropped =
                    |id: &str| Ok::<_, Infallible>(by_uuid.get(id).is_some_and(|at| at < boundary));
                let Ok(parent) = relink.parent(uuid, kept.map(|k| k.1), own, row.message, dropped);
                parent
            }
            _ => own,
        };
        (next, from) = match parent {
            Some(parent) => (Some(parent), epoch),
            None if row.boundary => (row.logical_parent.as_deref(), None),
            None => (None, None),
        };
    }
    branch.extend(kept_visits.into_iter().map(|(_, uuid)| uuid));
    branch
}

/// A boundary row: where it stands, and how it relinks its epoch.
struct Epoch {
    at: usize,
    relink: Option<Relink>,
}

/// The file's boundaries in file order, each with its relinking.
fn epochs(rows: &[Parsed], by_uuid: &FastMap<&str, usize>) -> Vec<Epoch> {
    rows.iter()
        .enumerate()
        .filter(|(_, row)| row.boundary)
        .map(|(at, row)| {
            let relink = row.preserved.as_deref().and_then(|preserved| {
                let lookup = |uuid: &str| {
                    Ok::<_, Infallible>(match by_uuid.get(uuid) {
                        Some(&at) => Lookup::Row(rows[at].parent.as_deref()),
                        None => Lookup::Missing,
                    })
                };
                let Ok(relink) = Relink::of(preserved, lookup);
                relink
            });
            Epoch { at, relink }
        })
        .collect()
}

/// For each anchor that names no row, the row standing in for it: the
/// boundary's first summary, else the boundary.
fn stand_ins(rows: &[Parsed]) -> FastMap<&str, &str> {
    let mut stand_ins: FastMap<&str, &str> = FastMap::default();
    for row in rows.iter().filter(|row| row.boundary) {
        let Some(anchor) = row.anchor() else {
            continue;
        };
        let summary = rows
            .iter()
            .find(|r| r.compact_summary && r.parent.as_deref() == Some(row.uuid.as_str()))
            .map(|r| r.uuid.as_str());
        stand_ins.insert(anchor, summary.unwrap_or(row.uuid.as_str()));
    }
    stand_ins
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out at most `step` bytes a call, and is
    /// interrupted once before each.
    struct Trickle<'a> {
        bytes: &'a [u8],
        step: usize,
        interrupted: bool,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.interrupted = !self.interrupted;
            if self.interrupted {
                return Err(io::ErrorKind::Interrupted.into());
            }
            let n = self.step.min(buf.len()).min(self.bytes.len());
            buf[..n].copy_from_slice(&self.bytes[..n]);
            self.bytes = &self.bytes[n..];
            Ok(n)
        }
    }

    /// What [`parse_stream`] showed of a stream read to its end.
    struct Streamed {
        seen: Vec<u8>,
        uuids: Vec<String>,
        taken: usize,
        tail: Vec<u8>,
    }

    fn stream(reader: &mut (impl Read + Send), chunk: usize, expected: usize) -> Streamed {
        let (mut seen, mut uuids, mut taken) = (Vec::new(), Vec::new(), 0);
        let read = |bytes: &[u8]| {
            seen.extend_from_slice(bytes);
            true
        };
        let take = |rows: Vec<Parsed>, bytes| {
            taken += bytes;
            uuids.extend(rows.into_iter().map(|row| row.uuid));
            true
        };
        let tail = parse_stream(reader, chunk, expected as u64, read, take).unwrap();
        Streamed {
            seen,
            uuids,
            taken,
            tail,
        }
    }

    /// A stream read and parsed by every core in chunks of any size hands
    /// over the rows of a parse in one pass, in order, sees every byte in
    /// order, leaves what follows the last newline, and stops when asked.
    #[test]
    fn a_stream_parsed_in_chunks_by_every_core_is_one_pass() {
        let mut text = String::new();
        let mut n = 0;
        while text.len() < PARALLEL_PARSE_BYTES + 200_000 {
            let pad = "p".repeat((n * 7919) % 20_000);
            text.push_str(&format!(
                r#"{{"type":"user","uuid":"u{n}","message":{{"role":"user","content":"{pad}"}}}}"#
            ));
            text.push_str(if n % 7 == 3 { "\nnot json\n" } else { "\n" });
            n += 1;
        }
        // One line longer than many chunks, and than a core's share.
        text.push_str(&format!(
            r#"{{"type":"user","uuid":"long","message":{{"role":"user","content":"{}"}}}}"#,
            "y".repeat(2 * PARALLEL_PARSE_BYTES)
        ));
        text.push('\n');
        text.push_str(r#"{"type":"user","uuid":"torn""#);
        let whole: Vec<String> = parse_rows(text.as_bytes())
            .into_iter()
            .map(|row| row.uuid)
            .collect();
        for chunk in [1, 1_000, 64 << 10, 4 << 20] {
            let streamed = stream(&mut text.as_bytes(), chunk, text.len());
            assert_eq!(streamed.uuids, whole, "chunks of {chunk}");
            assert_eq!(streamed.seen, text.as_bytes());
            assert_eq!(streamed.tail, br#"{"type":"user","uuid":"torn""#);
            assert_eq!(streamed.taken + streamed.tail.len(), text.len());
        }
        // Stopped by `take`: nothing more is taken.
        let (mut reader, mut calls) = (text.as_bytes(), 0);
        parse_stream(
            &mut reader,
            1_000,
            text.len() as u64,
            |_| true,
            |_, _| {
                calls += 1;
                calls < 3
            },
        )
        .unwrap();
        assert_eq!(calls, 3);
        // Stopped by `read`: the stream ends with what it read last.
        let mut reader = text.as_bytes();
        let mut reads = 0;
        let mut taken = 0;
        let tail = parse_stream(
            &mut reader,
            1_000,
            text.len() as u64,
            |_| {
                reads += 1;
                reads < 5
            },
            |rows, _| {
                taken += rows.len();
                true
            },
        )
        .unwrap();
        assert!(taken < whole.len() && !tail.is_empty());
        // A reader that is interrupted and hands out a few bytes a call.
        let mut trickle = Trickle {
            bytes: text.as_bytes(),
            step: 4_099,
            interrupted: false,
        };
        assert_eq!(stream(&mut trickle, 50_000, text.len()).uuids, whole);
        // A reader that fails fails the stream, with its error.
        let failing = parse_stream(&mut FailingReader, 10, 1 << 30, |_| true, |_, _| true);
        assert_eq!(failing.unwrap_err().kind(), io::ErrorKind::PermissionDenied);
    }

    /// Streamed on one core in chunks of any size, however the reader
    /// hands out its bytes, every byte is seen once, each chunk is whole
    /// lines, and what follows the last newline is left.
    #[test]
    fn a_short_stream_is_read_in_chunks_of_whole_lines() {
        let text = b"{\"type\":\"user\",\"uuid\":\"a\"}\n\nnot a row, longer than a chunk\n{\"type\":\"user\",\"uuid\":\"b\"}\nunfinished";
        for chunk in [1, 2, 3, 7, 64] {
            for step in [1, 5, 100] {
                let mut reader = Trickle {
                    bytes: text,
                    step,
                    interrupted: false,
                };
                let streamed = stream(&mut reader, chunk, text.len());
                assert_eq!(streamed.seen, text, "{chunk} {step}");
                assert_eq!(streamed.uuids, ["a", "b"], "{chunk} {step}");
                assert_eq!(streamed.taken, text.len() - 10, "{chunk} {step}");
                assert_eq!(streamed.tail, b"unfinished", "{chunk} {step}");
            }
        }
    }

    /// A line past the cap is passed over as it streams, the rows after it
    /// parsed; a line of exactly the cap is a row like any other, and one
    /// past it at the end leaves no tail.
    #[test]
    fn a_line_past_the_cap_is_passed_over() {
        let row = |uuid: &str| format!(r#"{{"type":"user","uuid":"{uuid}"}}"#);
        let head = r#"{"type":"user","uuid":"cap","message":{"role":"user","content":""#;
        let end = r#""}}"#;
        let at_cap = format!(
            "{head}{}{end}",
            "y".repeat(LineRead::MAX_BYTES - head.len() - end.len())
        );
        assert_eq!(at_cap.len(), LineRead::MAX_BYTES);
        // Past the cap by more than a chunk, so the buffer passes the cap
        // before the line's newline comes.
        let past = "x".repeat(LineRead::MAX_BYTES + (2 << 20));
        let text = [&at_cap, &row("a"), &past, &row("b"), &row("c"), &past]
            .map(String::as_str)
            .join("\n");
        // Chunks that fill the buffer to exactly the cap at the first line.
        for chunk in [1 << 20, 64 << 10] {
            let streamed = stream(&mut text.as_bytes(), chunk, text.len());
            assert_eq!(streamed.uuids, ["cap", "a", "b", "c"], "chunks of {chunk}");
            assert!(streamed.seen == text.as_bytes(), "chunks of {chunk}");
            assert!(streamed.tail.is_empty(), "chunks of {chunk}");
        }
    }

    /// A missing file and one that is not regular read as empty; a path
    /// that cannot be looked up is an error, never an empty transcript.
    #[test]
    fn only_an_absent_file_reads_as_empty() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("file");
        std::fs::write(&file, "{\"type\":\"user\",\"uuid\":\"u\"}").unwrap();
        assert_eq!(read_rows(&file).unwrap().len(), 1);
        assert!(read_rows(&dir.path().join("missing")).unwrap().is_empty());
        assert!(read_rows(dir.path()).unwrap().is_empty());
        assert!(read_rows(&file.join("below")).is_err());
    }

    struct FailingReader;

    impl Read for FailingReader {
        fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
            Err(io::ErrorKind::PermissionDenied.into())
        }
    }

    /// Only lines worth parsing become rows: a bookkeeping row with a uuid
    /// never joins the branch walk (were it the newest, it would cut the
    /// branch off).
    #[test]
    fn bookkeeping_rows_with_a_uuid_are_not_rows() {
        assert!(Parsed::of_line(br#"{"type":"queue-operation","uuid":"q"}"#).is_none());
        assert!(Parsed::of_line(b"").is_none());
        let row = Parsed::of_line(br#"{"type":"user","uuid":"u","message":{"content":"x"}}"#);
        assert_eq!(row.map(|row| row.uuid).as_deref(), Some("u"));
    }

    /// Every line of a piece is judged on its own bytes: a bookkeeping row
    /// after another line is skipped too.
    #[test]
    fn each_line_of_a_piece_is_judged_alone() {
        let text = concat!(
            r#"{"type":"user","uuid":"u","message":{"content":"x"}}"#,
            "\n",
            r#"{"type":"queue-operation","uuid":"q"}"#,
            "\n\n",
            r#"{"type":"user","uuid":"v","message":{"content":"y"}}"#,
        );
        let uuids: Vec<String> = parse_rows(text.as_bytes())
            .into_iter()
            .map(|row| row.uuid)
            .collect();
        assert_eq!(uuids, ["u", "v"]);
        // A piece with a byte that is not UTF-8 is read line by line: only
        // that line's row is lost, its strings decoded as before.
        let mut bytes = text.as_bytes().to_vec();
        bytes.extend_from_slice(
            b"\n{\"type\":\"user\",\"uuid\":\"w\",\"message\":{\"content\":\"\xff\"}}",
        );
        bytes.extend_from_slice(
            b"\n{\"type\":\"user\",\"uuid\":\"\\u0078\",\"message\":{\"content\":\"z\"}}",
        );
        let uuids: Vec<String> = parse_rows(&bytes).into_iter().map(|row| row.uuid).collect();
        assert_eq!(uuids, ["u", "v", "x"]);
    }

    /// Every item of a row takes the row's time and its seq at its offset.
    #[test]
    fn a_rows_items_each_take_its_time() {
        let decoder = Decoder::new("s");
        let mut window = decoder.open_window("s", None);
        let message = |text: &str| ItemKind::Message {
            role: MessageRole::User,
            text: text.to_owned(),
        };
        let items = vec![(0, message("a")), (1, message("b")), (2, message("c"))];
        window.push_items(7, Some("t".to_owned()), items);
        window.push_items(10, None, vec![(0, message("d"))]);
        let taken: Vec<_> = window
            .items
            .iter()
            .map(|item| (item.seq, item.created_at.as_deref()))
            .collect();
        assert_eq!(
            taken,
            [(7, Some("t")), (8, Some("t")), (9, Some("t")), (10, None)]
        );
    }

    /// A user row's text comes first and takes its own seq beside its
    /// results; a row with neither still takes one (an empty message).
    #[test]
    fn user_rows_take_a_seq_for_their_text_and_each_result() {
        let seqs = |line: &str| {
            let decoded = decode_row(RowRef::parse(line.as_bytes()).unwrap()).unwrap();
            let kinds: Vec<&str> = decoded
                .items
                .iter()
                .map(|(_, kind)| match kind {
                    ItemKind::Message { .. } => "message",
                    ItemKind::ToolCall(_) => "call",
                    ItemKind::ToolResult(_) => "result",
                })
                .collect();
            (decoded.seqs, kinds)
        };
        assert_eq!(
            seqs(
                r#"{"type":"user","message":{"content":[{"type":"text","text":"t"},{"type":"tool_result","tool_use_id":"a","content":"r"}]}}"#
            ),
            (2, vec!["message", "result"])
        );
        assert_eq!(
            seqs(r#"{"type":"user","message":{"content":[]}}"#),
            (1, vec!["message"])
        );
        assert_eq!(
            seqs(
                r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"a","content":"r"}]}}"#
            ),
            (1, vec!["result"])
        );
    }

    /// Only a compact boundary's walk goes on at its logical parent.
    #[test]
    fn only_a_boundary_walks_on_to_its_logical_parent() {
        let rows: Vec<Parsed> = [
            r#"{"type":"user","uuid":"a","message":{"content":"x"}}"#,
            r#"{"type":"user","uuid":"b","parentUuid":null,"logicalParentUuid":"a","message":{"content":"y"}}"#,
        ]
        .iter()
        .filter_map(|line| Parsed::of_line(line.as_bytes()))
        .collect();
        let branch = active_branch(&rows);
        assert!(branch.contains("b") && !branch.contains("a"));
    }

    #[test]
    fn bookkeeping_lines_are_skipped_unparsed() {
        assert!(worth_parsing(br#"{"type":"user","x":1}"#));
        assert!(worth_parsing(br#"{"parentUuid":null,"type":"assistant"}"#));
        assert!(!worth_parsing(
            br#"{"type":"api-request-blob","message":{}}"#
        ));
        assert!(!worth_parsing(br#"{"type":"queue-operation"}"#));
    }

    #[test]
    fn local_commands_are_context() {
        assert!(is_local_command("<command-name>/compact</command-name>"));
        assert!(is_local_command(
            "<local-command-stdout>x</local-command-stdout>"
        ));
        assert!(!is_local_command("please run <command-name>"));
    }
}
