//! A long session file read lazily: the file is streamed once in fixed
//! chunks (a reader thread finds the lines and scans half of them while
//! the calling thread scans the rest and indexes them), every line indexed by byte range with only what
//! the tree needs (type, id, parent), and an entry decoded in full only when
//! something asks for it — its line read back from the file, decoded once
//! (many at once are decoded side by side), then cached. Memory follows the
//! index and the decoded entries, not the size of the file.
//!
//! It answers the read-only questions (the branch to a leaf, the provider
//! context, the history) exactly as [`SessionFile`] does: every line is
//! still checked to be a JSON object the eager reader would accept (a
//! structural scan, see `scan.rs`), so a garbage, torn or non-object line
//! is skipped just as Pi skips it, and any line the scan cannot settle is
//! read by [`SessionFile`]'s own rules. What it does not do is rewrite: a
//! writer keeps using [`SessionFile`]. The index of the file's plain lines
//! can be kept for the next reader, which then reads only the lines Pi
//! appended since (`kept.rs`).

use std::borrow::Cow;
use std::cell::{Cell, OnceCell};
use std::fs::File;
use std::hash::BuildHasher;
use std::io::Read;
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use notesoup_core::plumbing::LineRead;
use serde_json::Map;

use super::SessionError;
use super::entry::{Entry, SessionHeader, UnknownEntry};
use super::reader::{Diagnostic, SessionFile, open_session_file};
use super::scan::{Skeleton, scan};
use super::tree::Leaf;

mod kept;
#[cfg(test)]
mod tests;

/// How much of the file is read at a time while indexing.
const CHUNK: usize = 1 << 20;

/// The entry types the index knows by name, in a fixed order.
const TYPES: [&str; 11] = [
    "message",
    "compaction",
    "thinking_level_change",
    "model_change",
    "branch_summary",
    "custom",
    "custom_message",
    "label",
    "session_info",
    "usage",
    "context_edit",
];
const MESSAGE: u8 = 0;
const COMPACTION: u8 = 1;
/// A type the index does not know (only lines the eager rules read).
const UNKNOWN: u8 = u8::MAX;

fn type_code(name: &[u8]) -> Option<u8> {
    TYPES
        .iter()
        .position(|known| known.as_bytes() == name)
        .and_then(|at| u8::try_from(at).ok())
}

/// Below this many items, work is done on one thread.
pub(crate) const PARALLEL_MIN: usize = 256;

/// How many threads share the scan and the decoding: asked of the system
/// once (on Linux it reads the cgroup's files each time).
fn workers() -> usize {
    static WORKERS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *WORKERS.get_or_init(|| {
        std::thread::available_parallelism()
            .map_or(1, std::num::NonZero::get)
            .min(4)
    })
}

/// `items.iter().map(f)`, in order, on up to `workers` threads.
fn parallel_map<T: Sync, R: Send>(
    items: &[T],
    workers: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    if workers < 2 || items.len() < PARALLEL_MIN {
        return items.iter().map(f).collect();
    }
    let part = items.len().div_ceil(workers);
    std::thread::scope(|scope| {
        let f = &f;
        let mut parts = items.chunks(part);
        let first = parts.next().unwrap_or_default();
        let others: Vec<_> = parts
            .map(|items| scope.spawn(move || items.iter().map(f).collect::<Vec<R>>()))
            .collect();
        let mut all: Vec<R> = first.iter().map(f).collect();
        for other in others {
            match other.join() {
                Ok(results) => all.extend(results),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        all
    })
}

/// Reads back and decodes the line at `offset`.
fn decode_line(
    source: &Source,
    offset: u64,
    len: usize,
    legacy: bool,
) -> Result<Entry, std::io::Error> {
    let raw = line_bytes(source, offset, len)?;
    Ok(SessionFile::decode_entry_line(&raw, legacy))
}

/// The bytes of the line at `offset`, `len` long, as the source holds them now.
fn line_bytes(source: &Source, offset: u64, len: usize) -> Result<Cow<'_, [u8]>, std::io::Error> {
    Ok(match source {
        Source::Bytes(bytes) => {
            let start = usize::try_from(offset).unwrap_or(usize::MAX);
            Cow::Borrowed(
                bytes
                    .get(start..start.saturating_add(len))
                    .unwrap_or_default(),
            )
        }
        Source::File { file, .. } => {
            let mut raw = vec![0; len];
            file.read_exact_at(&mut raw, offset)?;
            Cow::Owned(raw)
        }
    })
}

/// Whole lines read from the file, and their scans when the reader made them.
struct Block {
    data: Vec<u8>,
    /// The whole lines (without their newlines).
    lines: Vec<Range<usize>>,
    /// Made for every other block; the indexer scans the others itself, so
    /// both threads share the scanning.
    scans: Option<Vec<Option<Skeleton>>>,
    /// The last line of the file when it has no newline.
    torn: Option<Range<usize>>,
    /// A line over [`LineRead::MAX_BYTES`] just before this block's lines,
    /// passed over without being kept.
    skipped: Option<SkippedLine>,
}

/// A line too long to keep: its length, and whether it ended the file
/// without a newline.
#[derive(Debug, Clone, Copy)]
struct SkippedLine {
    bytes: u64,
    torn: bool,
}

/// Reads past the rest of an over-long line whose first bytes fill `data`,
/// keeping none of it; leaves in `data` what follows its newline.
fn discard_line(
    file: &mut File,
    data: &mut Vec<u8>,
    chunk: usize,
) -> Result<SkippedLine, std::io::Error> {
    let mut bytes = data.len() as u64;
    data.clear();
    data.shrink_to(chunk);
    loop {
        data.resize(chunk, 0);
        let read = loop {
            match file.read(&mut data[..]) {
                Ok(read) => break read,
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Err(error) => return Err(error),
            }
        };
        data.truncate(read);
        if read == 0 {
            return Ok(SkippedLine { bytes, torn: true });
        }
        if let Some(at) = memchr::memchr(b'\n', data) {
            bytes += at as u64;
            data.drain(..=at);
            return Ok(SkippedLine { bytes, torn: false });
        }
        bytes += read as u64;
    }
}

/// Reads `file` in chunks of `chunk` bytes and sends its whole lines,
/// scanned, in order; a line longer than a chunk is carried over, and one
/// longer than `max_line` is passed over without being kept (reported in
/// its block). Stops at the end of the file, on an error (sent), or when
/// nobody listens.
fn read_blocks(
    file: &mut File,
    chunk: usize,
    max_line: usize,
    full: &std::sync::mpsc::SyncSender<Result<Block, std::io::Error>>,
    buffers: &std::sync::mpsc::Receiver<Vec<u8>>,
) {
    let mut carry: Vec<u8> = Vec::new();
    let mut scan_this = false;
    loop {
        let mut data = buffers.try_recv().unwrap_or_default();
        data.clear();
        data.extend_from_slice(&carry);
        let mut skipped = None;
        // Read until a newline arrives (a long line grows the buffer, up to
        // `max_line`) or the file ends (`read` is 0 only then).
        let read = loop {
            let start = data.len();
            data.resize(start + chunk, 0);
            let read = match file.read(&mut data[start..]) {
                Ok(read) => read,
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {
                    data.truncate(start);
                    continue;
                }
                Err(error) => {
                    let _ = full.send(Err(error));
                    return;
                }
            };
            data.truncate(start + read);
            if read == 0 || memchr::memchr(b'\n', &data[start..]).is_some() {
                break read;
            }
            // No newline yet: `data` is one line's start (the carry holds no
            // newline either).
            if data.len() > max_line {
                match discard_line(file, &mut data, chunk) {
                    Ok(line) => {
                        skipped = Some(line);
                        // What follows the line is read as usual; `read`
                        // stands for "not the end" unless the line was.
                        break usize::from(!line.torn);
                    }
                    Err(error) => {
                        let _ = full.send(Err(error));
                        return;
                    }
                }
            }
        };
        let mut lines = Vec::new();
        let mut at = 0;
        while let Some(found) = memchr::memchr(b'\n', &data[at..]) {
            lines.push(at..at + found);
            at += found + 1;
        }
        carry.clear();
        let torn = if read == 0 {
            (at < data.len()).then_some(at..data.len())
        } else {
            carry.extend_from_slice(&data[at..]);
            None
        };
        scan_this = !scan_this;
        let scans = scan_this.then(|| {
            lines
                .iter()
                .map(|range| scan(&data[range.clone()]))
                .collect()
        });
        let block = Block {
            data,
            lines,
            scans,
            torn,
            skipped,
        };
        if full.send(Ok(block)).is_err() || read == 0 {
            return;
        }
    }
}

/// Where the lines are read back from.
#[derive(Debug)]
enum Source {
    /// The whole file in memory (sessions given as bytes).
    Bytes(Vec<u8>),
    /// The file, read at an entry's offset when it is decoded.
    File { file: File, path: PathBuf },
}

#[derive(Debug)]
struct IndexedLine {
    /// Byte offset of the line in the file.
    offset: u64,
    /// Its length in bytes (without its newline).
    len: usize,
    /// 1-based line number in the file.
    number: usize,
    /// The `type`, as an index into [`TYPES`] or [`UNKNOWN`].
    kind: u8,
    /// Whether the entry needs the v2 → v3 migration (the header read
    /// before it was older).
    legacy: bool,
    /// The id's text in [`LazySession::ids`].
    id: Range<usize>,
    /// The parent id's text in [`LazySession::ids`].
    parent: Option<Range<usize>>,
    /// The parent's position when it was already indexed (usually the line
    /// before); valid while no id repeats.
    parent_hint: Option<usize>,
    /// Filled by a line the scan could not settle, or on first use (boxed:
    /// most lines are never decoded, and an `Entry` is large).
    entry: OnceCell<Box<Entry>>,
}

/// An open-addressing table from entry id to position: the ids' text lives
/// once, in [`LazySession::ids`], and the table holds only positions.
#[derive(Debug, Default)]
struct IdTable {
    /// A position and its id's hash, or `EMPTY`; the length is a power of two.
    slots: Vec<(u64, usize)>,
    len: usize,
    hasher: std::collections::hash_map::RandomState,
}

const EMPTY: (u64, usize) = (0, usize::MAX);

/// A session file indexed for reading; see the module documentation.
#[derive(Debug)]
pub struct LazySession {
    source: Source,
    header: Option<SessionHeader>,
    lines: Vec<IndexedLine>,
    /// Every id and parent id, one after another.
    ids: Vec<u8>,
    by_id: IdTable,
    /// Whether some id names more than one entry (the later one wins).
    duplicates: bool,
    diagnostics: Vec<Diagnostic>,
    /// The first failure to read a line back from the file.
    read_error: OnceCell<std::io::Error>,
    /// A line read back held an entry whose id is not the one indexed
    /// there: the file changed since it was indexed.
    id_changed: Cell<bool>,
    /// The lines from the start of the file that an index kept for the
    /// next reader may cover (see `kept.rs`).
    plain: Plain,
    /// How many entries were restored from a kept index instead of read.
    restored: usize,
}

/// The longest run of lines from the start of the file that are a header
/// followed by plain entries, every one settled by the structural scan,
/// with no diagnostic: what a reader may restore instead of reading, since
/// indexing those lines leaves nothing but the index behind.
#[derive(Debug, Clone, Copy, Default)]
struct Plain {
    /// How many entries it holds.
    entries: usize,
    /// Where its last line's newline ends.
    end: u64,
    /// The header line's length, once the header began the run. The run's
    /// lines are that header and its entries, one after another.
    header_len: Option<usize>,
}

/// Indexes lines one at a time, in file order.
struct Indexer {
    session: LazySession,
    /// Lines the scan cannot settle are parsed by the eager reader, one at a
    /// time, with the state it keeps (header seen, first parsed line), so its
    /// rules and diagnostics apply unchanged.
    eager: SessionFile,
    number: usize,
    /// Whether every line so far has extended [`LazySession::plain`].
    plain_open: bool,
}

impl Indexer {
    fn new(source: Source) -> Self {
        Self {
            session: LazySession {
                source,
                header: None,
                lines: Vec::new(),
                ids: Vec::new(),
                by_id: IdTable::default(),
                duplicates: false,
                diagnostics: Vec::new(),
                read_error: OnceCell::new(),
                id_changed: Cell::new(false),
                plain: Plain::default(),
                restored: 0,
            },
            eager: SessionFile::empty(),
            number: 0,
            plain_open: true,
        }
    }

    /// Extends the plain run over the line just indexed when it is plain
    /// (`plain`) and nothing was diagnosed; ends the run for good otherwise.
    fn extend_plain(&mut self, plain: bool, end: u64) {
        if !self.plain_open {
            return;
        }
        if !plain || !self.eager.diagnostics().is_empty() {
            self.plain_open = false;
            return;
        }
        let run = &mut self.session.plain;
        run.entries = self.session.lines.len();
        run.end = end;
    }

    /// Indexes one line; `scanned` is its scan when it was made already.
    fn line(&mut self, offset: u64, line: &[u8], torn: bool, scanned: Option<Option<Skeleton>>) {
        self.number += 1;
        let number = self.number;
        let quick = if self.eager.settled_header() {
            scanned.unwrap_or_else(|| scan(line)).and_then(|skeleton| {
                type_code(&line[skeleton.kind.clone()]).map(|kind| (kind, skeleton))
            })
        } else {
            None
        };
        let (kind, legacy, id, parent, entry) = if let Some((kind, skeleton)) = quick {
            if torn {
                self.eager.diagnose_missing_final_newline(number);
            }
            let id = self
                .session
                .push_id(skeleton.id.map_or(&[][..], |range| &line[range]));
            let parent = skeleton
                .parent
                .map(|range| self.session.push_id(&line[range]));
            (kind, self.eager.is_legacy(), id, parent, OnceCell::new())
        } else if let Some(entry) = self.eager.read_one_line(number, line, torn) {
            self.plain_open = false;
            // By the `type` alone, as for a line the scan settles: an entry
            // of a known type that does not match Pi's shape still counts
            // as that type (the mirror reads appended entries the same way).
            let kind = type_code(entry.entry_type().as_bytes()).unwrap_or(UNKNOWN);
            let id = self.session.push_id(entry.id().as_bytes());
            let parent = entry
                .parent_id()
                .map(|parent| self.session.push_id(parent.as_bytes()));
            (kind, false, id, parent, OnceCell::from(Box::new(entry)))
        } else {
            // Only a header read as the first line keeps the run open.
            let header = number == 1 && !torn && self.eager.settled_header();
            self.extend_plain(header, offset + line.len() as u64 + 1);
            if header && self.plain_open {
                self.session.plain.header_len = Some(line.len());
            }
            return;
        };
        self.session.push_line(IndexedLine {
            offset,
            len: line.len(),
            number,
            kind,
            legacy,
            id,
            parent,
            parent_hint: None,
            entry,
        });
        self.extend_plain(!torn, offset + line.len() as u64 + 1);
    }

    /// [`Self::line`], or [`Self::skipped_line`] for a line over
    /// `max_line`. The reader passes over a line that outgrows the cap
    /// before its newline comes; one whose newline came in the read that
    /// took it past the cap, or that fits a chunk, is passed over here, so
    /// the rule does not hang on where the chunks fall (nor on where a kept
    /// index let reading start).
    fn capped_line(
        &mut self,
        offset: u64,
        line: &[u8],
        torn: bool,
        scanned: Option<Option<Skeleton>>,
        max_line: usize,
    ) {
        if line.len() > max_line {
            self.skipped_line(line.len() as u64, max_line);
        } else {
            self.line(offset, line, torn, scanned);
        }
    }

    /// Counts a line over the cap, passed over unread: a bad line, as Pi
    /// skips a line it cannot parse.
    fn skipped_line(&mut self, bytes: u64, max_line: usize) {
        self.number += 1;
        self.eager.diagnose_too_long(self.number, bytes, max_line);
        self.plain_open = false;
    }

    fn finish(mut self) -> LazySession {
        self.session.header = self.eager.header().cloned();
        self.session.diagnostics = self.eager.diagnostics().to_vec();
        self.session
    }
}

impl LazySession {
    /// Reads and indexes a session file, streaming it in fixed chunks.
    pub fn read(path: &Path) -> Result<Self, SessionError> {
        Self::read_chunked(path, CHUNK)
    }

    /// [`Self::read`] with chunks of `chunk` bytes (at least 1), for tests
    /// of lines that straddle chunks.
    #[doc(hidden)]
    pub fn read_chunked(path: &Path, chunk: usize) -> Result<Self, SessionError> {
        Self::read_capped(path, chunk, LineRead::MAX_BYTES)
    }

    /// [`Self::read_chunked`] with lines over `max_line` bytes passed over
    /// (each a `line_too_long` diagnostic), for tests that need not write
    /// 16 MiB lines.
    #[doc(hidden)]
    pub fn read_capped(path: &Path, chunk: usize, max_line: usize) -> Result<Self, SessionError> {
        Self::read_from(path, None, chunk, max_line)
    }

    /// [`Self::read`], restoring the index `kept` holds ([`Self::keep`]'s
    /// bytes, from an earlier reader of this file) when the file still
    /// holds the lines it was made of, and reading only the lines after
    /// them; any other `kept` (damaged, of another file, of lines the file
    /// no longer holds) is passed over and the file read whole.
    /// [`Self::restored`] tells which happened.
    pub fn read_kept(path: &Path, kept: Option<&[u8]>) -> Result<Self, SessionError> {
        Self::read_from(path, kept, CHUNK, LineRead::MAX_BYTES)
    }

    fn read_from(
        path: &Path,
        kept: Option<&[u8]>,
        chunk: usize,
        max_line: usize,
    ) -> Result<Self, SessionError> {
        let failed = |error| SessionError::Io {
            path: path.to_owned(),
            error,
        };
        let mut file = open_session_file(path)?;
        let source = || -> Result<Source, SessionError> {
            Ok(Source::File {
                file: file.try_clone().map_err(failed)?,
                path: path.to_owned(),
            })
        };
        let (mut indexer, start) = match kept.and_then(|kept| {
            let mut indexer = Indexer::new(source().ok()?);
            let end = kept::restore(&mut indexer, kept, &file)?;
            Some((indexer, end))
        }) {
            Some(restored) => restored,
            None => (Indexer::new(source()?), 0),
        };
        std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(start)).map_err(failed)?;
        // Two stages run side by side: a thread reads the file in chunks,
        // finds the whole lines and scans every other chunk's; this one
        // scans the rest and indexes them all in file order. Buffers go back to the reader, so memory stays a few
        // chunks (and the longest line).
        let (full, blocks) = std::sync::mpsc::sync_channel::<Result<Block, std::io::Error>>(2);
        let (empty, buffers) = std::sync::mpsc::channel::<Vec<u8>>();
        std::thread::scope(|scope| {
            scope.spawn(move || {
                read_blocks(&mut file, chunk.max(1), max_line, &full, &buffers);
            });
            let mut line_start = start;
            for block in blocks {
                let block = block.map_err(failed)?;
                if let Some(line) = block.skipped {
                    indexer.skipped_line(line.bytes, max_line);
                    line_start += line.bytes + u64::from(!line.torn);
                }
                let mut scans = block.scans.map(Vec::into_iter);
                for range in &block.lines {
                    let scanned = scans.as_mut().and_then(Iterator::next);
                    let line = &block.data[range.clone()];
                    indexer.capped_line(line_start, line, false, scanned, max_line);
                    line_start += range.len() as u64 + 1;
                }
                if let Some(range) = block.torn {
                    indexer.capped_line(line_start, &block.data[range], true, None, max_line);
                }
                // The reader may be gone already; the buffer is then dropped.
                let _ = empty.send(block.data);
            }
            Ok(indexer.finish())
        })
    }

    /// Indexes the bytes of a session file (kept in memory). Never fails.
    pub fn parse(bytes: Vec<u8>) -> Self {
        let mut indexer = Indexer::new(Source::Bytes(Vec::new()));
        let mut start = 0;
        while start < bytes.len() {
            let end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |at| start + at);
            indexer.line(start as u64, &bytes[start..end], end == bytes.len(), None);
            start = end + 1;
        }
        let mut session = indexer.finish();
        session.source = Source::Bytes(bytes);
        session
    }

    fn push_id(&mut self, text: &[u8]) -> Range<usize> {
        let start = self.ids.len();
        self.ids.extend_from_slice(text);
        start..self.ids.len()
    }

    /// Adds an indexed line, finding its parent's position.
    fn push_line(&mut self, mut line: IndexedLine) {
        let position = self.lines.len();
        line.parent_hint = line.parent.as_ref().and_then(|parent| {
            let parent = self.id_bytes(parent);
            match self.lines.last() {
                Some(last) if self.id_bytes(&last.id) == parent => Some(position - 1),
                _ => self.position_of(std::str::from_utf8(parent).ok()?),
            }
        });
        self.lines.push(line);
        // Like Pi's `byId`, a later duplicate id replaces the earlier one.
        self.insert_id(position);
    }

    /// The bytes of an id.
    fn id_bytes(&self, range: &Range<usize>) -> &[u8] {
        &self.ids[range.clone()]
    }

    /// The text of an id (always UTF-8: it was read from valid JSON text).
    fn text(&self, range: &Range<usize>) -> &str {
        std::str::from_utf8(self.id_bytes(range)).unwrap_or("")
    }

    fn hash(&self, id: &[u8]) -> u64 {
        // A random seed keeps crafted ids from piling up.
        self.by_id.hasher.hash_one(id)
    }

    /// The slot holding `id` (whose hash is `hash`), or the empty slot where
    /// it would go.
    fn find_slot(&self, id: &[u8], hash: u64) -> Result<usize, usize> {
        let slots = &self.by_id.slots;
        let mask = slots.len() - 1;
        let mut slot = (hash as usize) & mask;
        loop {
            match slots[slot] {
                EMPTY => return Err(slot),
                (held, position)
                    if held == hash && self.id_bytes(&self.lines[position].id) == id =>
                {
                    return Ok(slot);
                }
                _ => slot = (slot + 1) & mask,
            }
        }
    }

    fn insert_id(&mut self, position: usize) {
        if (self.by_id.len + 1) * 2 > self.by_id.slots.len() {
            let size = (self.by_id.slots.len() * 2).max(1024);
            let old = std::mem::replace(&mut self.by_id.slots, vec![EMPTY; size]);
            let mask = size - 1;
            for (hash, held) in old.into_iter().filter(|&slot| slot != EMPTY) {
                // Every id held is distinct: the first empty slot is its place.
                let mut slot = (hash as usize) & mask;
                while self.by_id.slots[slot] != EMPTY {
                    slot = (slot + 1) & mask;
                }
                self.by_id.slots[slot] = (hash, held);
            }
        }
        let id = self.lines[position].id.clone();
        let hash = self.hash(self.id_bytes(&id));
        match self.find_slot(self.id_bytes(&id), hash) {
            Ok(slot) => {
                self.by_id.slots[slot] = (hash, position);
                self.duplicates = true;
            }
            Err(slot) => {
                self.by_id.slots[slot] = (hash, position);
                self.by_id.len += 1;
            }
        }
    }

    /// The position of the entry with this id (a later duplicate wins).
    pub(crate) fn position_of(&self, id: &str) -> Option<usize> {
        if self.by_id.slots.is_empty() {
            return None;
        }
        let id = id.as_bytes();
        self.find_slot(id, self.hash(id))
            .ok()
            .map(|slot| self.by_id.slots[slot].1)
    }

    /// The position of the entry at `position`'s parent (Pi's `byId` of its
    /// `parentId`).
    pub(crate) fn parent_of(&self, position: usize) -> Option<usize> {
        let line = &self.lines[position];
        match line.parent_hint {
            // Without a repeated id, the parent found while indexing is still
            // the entry that id names.
            Some(parent) if !self.duplicates => Some(parent),
            _ => self.position_of(self.text(line.parent.as_ref()?)),
        }
    }

    /// The `parentId` of the entry at `position`, without decoding it.
    pub(crate) fn parent_id(&self, position: usize) -> Option<&str> {
        self.lines[position]
            .parent
            .as_ref()
            .map(|range| self.text(range))
    }

    /// Whether the entry at `position` is a `message`, without decoding it.
    pub(crate) fn is_message(&self, position: usize) -> bool {
        self.lines[position].kind == MESSAGE
    }

    /// Whether the entry at `position` is a `compaction` by its type,
    /// without decoding it.
    pub(crate) fn is_compaction(&self, position: usize) -> bool {
        self.lines[position].kind == COMPACTION
    }

    /// The header, if the file has one.
    pub fn header(&self) -> Option<&SessionHeader> {
        self.header.as_ref()
    }

    /// The irregular lines the index met (every line that is not a plain
    /// entry, and entries it decoded while indexing).
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    /// How many entries the file holds (header excluded).
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// Whether the file holds no entry.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// The last entry's id (Pi's leaf after loading).
    pub fn last_id(&self) -> Option<&str> {
        self.lines.last().map(|line| self.text(&line.id))
    }

    /// The id of the entry at `position` (file order), without decoding it.
    pub fn id(&self, position: usize) -> &str {
        self.text(&self.lines[position].id)
    }

    /// Whether an entry has this id.
    pub fn contains(&self, id: &str) -> bool {
        self.position_of(id).is_some()
    }

    /// The `type` of the entry at `position`, without decoding it.
    pub fn entry_type(&self, position: usize) -> &str {
        let line = &self.lines[position];
        match TYPES.get(usize::from(line.kind)) {
            Some(name) => name,
            None => line.entry.get().map_or("", |entry| entry.entry_type()),
        }
    }

    /// The entry at `position` (file order), decoded on first use.
    pub fn entry(&self, position: usize) -> &Entry {
        self.lines[position]
            .entry
            .get_or_init(|| Box::new(self.decode(position)))
    }

    /// The entry at `position`, decoded for this use only unless it is
    /// already cached (for one pass over many entries that keeps none).
    pub fn entry_uncached(&self, position: usize) -> Cow<'_, Entry> {
        match self.lines[position].entry.get() {
            Some(entry) => Cow::Borrowed(entry),
            None => Cow::Owned(self.decode(position)),
        }
    }

    /// The line of the entry at `position` as the file holds it now (to
    /// see that the file still holds what was indexed).
    pub(crate) fn line_now(&self, position: usize) -> std::io::Result<Vec<u8>> {
        let line = &self.lines[position];
        line_bytes(&self.source, line.offset, line.len).map(Cow::into_owned)
    }

    fn decode(&self, position: usize) -> Entry {
        let line = &self.lines[position];
        match decode_line(&self.source, line.offset, line.len, line.legacy) {
            Ok(entry) => self.read_back(position, entry),
            Err(error) => self.unreadable(error),
        }
    }

    /// `entry`, read back from the line at `position`, noting when its id
    /// is not the one indexed there ([`Self::id_changed`]).
    fn read_back(&self, position: usize, entry: Entry) -> Entry {
        if entry.id().as_bytes() != self.id_bytes(&self.lines[position].id) {
            self.id_changed.set(true);
        }
        entry
    }

    /// Whether some entry read back since the file was indexed had another
    /// id than the one indexed at its place: the file changed under the
    /// index. Checked as each entry is decoded, so reading a cached entry
    /// costs nothing.
    pub(crate) fn id_changed(&self) -> bool {
        self.id_changed.get()
    }

    /// An entry that could not be read back (the file shrank since it was
    /// indexed) reads as an empty untyped one, and `check` reports it.
    fn unreadable(&self, error: std::io::Error) -> Entry {
        let _ = self.read_error.set(error);
        Entry::Unknown(UnknownEntry(Map::new()))
    }

    /// The entries at `positions`, those not cached decoded side by side
    /// for this use only: cached ones are borrowed, the others owned.
    pub fn entries_uncached(&self, positions: &[usize]) -> Vec<Cow<'_, Entry>> {
        let fresh: Vec<(usize, u64, usize, bool)> = positions
            .iter()
            .enumerate()
            .filter_map(|(at, &position)| {
                let line = &self.lines[position];
                line.entry
                    .get()
                    .is_none()
                    .then_some((at, line.offset, line.len, line.legacy))
            })
            .collect();
        let decoded = self.decode_many(&fresh);
        let mut decoded = fresh.iter().map(|fresh| fresh.0).zip(decoded).peekable();
        positions
            .iter()
            .enumerate()
            .map(
                |(at, &position)| match decoded.next_if(|(next, _)| *next == at) {
                    Some((_, Ok(entry))) => Cow::Owned(self.read_back(position, entry)),
                    Some((_, Err(error))) => Cow::Owned(self.unreadable(error)),
                    None => Cow::Borrowed(self.entry(position)),
                },
            )
            .collect()
    }

    /// Decodes lines `(_, offset, len, legacy)` side by side. From a file,
    /// lines that lie close together are read back with one read.
    fn decode_many(
        &self,
        lines: &[(usize, u64, usize, bool)],
    ) -> Vec<Result<Entry, std::io::Error>> {
        /// Lines at most this far apart share a read.
        const GAP: u64 = 64 << 10;
        /// The most one read takes.
        const RUN_MAX: u64 = 16 << 20;
        let source = &self.source;
        let Source::File { file, .. } = source else {
            return parallel_map(lines, workers(), |&(_, offset, len, legacy)| {
                decode_line(source, offset, len, legacy)
            });
        };
        // Each line's run of the file and its start within the run.
        let mut runs: Vec<(u64, u64)> = Vec::new();
        let mut places: Vec<(usize, usize, usize, bool)> = Vec::with_capacity(lines.len());
        for &(_, offset, len, legacy) in lines {
            let end = offset + len as u64;
            match runs.last_mut() {
                Some((start, run_end))
                    if offset >= *start
                        && offset <= run_end.saturating_add(GAP)
                        && end - *start <= RUN_MAX =>
                {
                    *run_end = (*run_end).max(end);
                    let within = usize::try_from(offset - *start).unwrap_or(usize::MAX);
                    places.push((runs.len() - 1, within, len, legacy));
                }
                _ => {
                    runs.push((offset, end));
                    places.push((runs.len() - 1, 0, len, legacy));
                }
            }
        }
        let buffers: Vec<Result<Vec<u8>, std::io::Error>> = runs
            .iter()
            .map(|&(start, end)| {
                let mut buffer = vec![0; usize::try_from(end - start).unwrap_or(0)];
                file.read_exact_at(&mut buffer, start).map(|()| buffer)
            })
            .collect();
        parallel_map(
            &places,
            workers(),
            |&(run, within, len, legacy)| match &buffers[run] {
                Ok(buffer) => match buffer.get(within..within.saturating_add(len)) {
                    Some(raw) => Ok(SessionFile::decode_entry_line(raw, legacy)),
                    None => Err(std::io::ErrorKind::UnexpectedEof.into()),
                },
                Err(error) => Err(std::io::Error::new(error.kind(), error.to_string())),
            },
        )
    }

    /// Whether the entry at `position` is decoded and kept.
    pub(crate) fn is_decoded(&self, position: usize) -> bool {
        self.lines[position].entry.get().is_some()
    }

    /// Decodes and caches the entries at `positions`, side by side.
    pub(crate) fn prefetch(&self, positions: &[usize]) {
        let fresh: Vec<usize> = positions
            .iter()
            .copied()
            .filter(|&position| !self.is_decoded(position))
            .collect();
        for (&position, entry) in fresh.iter().zip(self.entries_uncached(&fresh)) {
            if let Cow::Owned(entry) = entry {
                let _ = self.lines[position].entry.set(Box::new(entry));
            }
        }
    }

    /// Whether every line decoded so far could be read back from the file
    /// (it can fail only when the file shrank since it was indexed).
    pub fn check(&self) -> Result<(), SessionError> {
        match (self.read_error.get(), &self.source) {
            (Some(error), Source::File { path, .. }) => Err(SessionError::Io {
                path: path.clone(),
                error: std::io::Error::new(
                    error.kind(),
                    format!("changed while it was read ({error})"),
                ),
            }),
            _ => Ok(()),
        }
    }

    /// How many entries have been decoded so far.
    pub fn decoded(&self) -> usize {
        self.lines
            .iter()
            .filter(|line| line.entry.get().is_some())
            .count()
    }

    /// The positions of the path from the root to `leaf`, root first (Pi's
    /// `getBranch`, by the same rules as [`super::EntryIndex::path`]).
    pub fn path_positions(&self, leaf: Leaf<'_>) -> Vec<usize> {
        let start = match leaf {
            Leaf::Null => return Vec::new(),
            Leaf::Id(id) => self
                .position_of(id)
                .or_else(|| self.lines.len().checked_sub(1)),
            Leaf::Last => self.lines.len().checked_sub(1),
        };
        let Some(mut position) = start else {
            return Vec::new();
        };
        let mut path = vec![position];
        let mut seen = vec![false; self.lines.len()];
        seen[position] = true;
        while self.lines[position].parent.is_some() {
            match self.parent_of(position) {
                Some(next) if !seen[next] => {
                    seen[next] = true;
                    path.push(next);
                    position = next;
                }
                _ => break,
            }
        }
        path.reverse();
        path
    }

    /// The path to `leaf` with only what the provider context needs decoded:
    /// every entry that is not a message, and the messages from the newest
    /// compaction's first kept entry on (and back to the newest assistant
    /// message, which names the model). Feeding it to
    /// [`crate::projection::project_path`] gives the same projection as the
    /// whole path.
    pub fn context_path(&self, leaf: Leaf<'_>) -> Vec<&Entry> {
        let positions = self.path_positions(leaf);
        let from = self.context_start(&positions);
        // The model comes from the newest assistant message or model change
        // on the whole path.
        let assistant_before = positions[..from].iter().rposition(|&position| {
            self.lines[position].kind == MESSAGE
                && matches!(
                    self.entry(position),
                    Entry::Message(message)
                        if matches!(message.message, crate::session::AgentMessage::Assistant(_))
                )
        });
        let needed: Vec<usize> = positions
            .iter()
            .enumerate()
            .filter(|&(at, &position)| {
                at >= from || assistant_before == Some(at) || self.lines[position].kind != MESSAGE
            })
            .map(|(_, &position)| position)
            .collect();
        self.prefetch(&needed);
        needed
            .into_iter()
            .map(|position| self.entry(position))
            .collect()
    }

    /// Where on the path the messages the context can use begin: the newest
    /// compaction's first kept entry (the compaction itself when it keeps
    /// none), or the start.
    fn context_start(&self, positions: &[usize]) -> usize {
        let Some(at) = positions
            .iter()
            .rposition(|&position| self.lines[position].kind == COMPACTION)
        else {
            return 0;
        };
        let Entry::Compaction(compaction) = self.entry(positions[at]) else {
            // A malformed compaction is no compaction: keep everything.
            return 0;
        };
        positions[..at]
            .iter()
            .position(|&position| {
                self.text(&self.lines[position].id) == compaction.first_kept_entry_id
            })
            .unwrap_or(at)
    }

    /// The 1-based file line of the entry at `position`.
    pub fn line_number(&self, position: usize) -> usize {
        self.lines[position].number
    }
}
