//! A chain's decode kept between calls and extended from the last decoded
//! byte as the newest transcript grows (Claude Code only appends to it).
//!
//! - The earlier files of a `/clear` chain are finished; they are decoded
//!   once and only stat-checked afterwards. The newest file keeps what its
//!   branch walk and its open window need: every kept row's uuid and
//!   parents, the compact anchors, the active branch, and the last window.
//! - A complete line is decoded once. A last line without its newline is
//!   left for later unless it already parses as a row (then it is decoded,
//!   and the next bytes must start with its newline).
//! - New rows extend the decode when the newest row's ancestry reaches the
//!   previous newest row through new rows only, and nothing the earlier walk
//!   used changes (no new row reuses a uuid or fills a parent the walk
//!   missed, no compact anchor is redefined, no summary arrives for an
//!   earlier boundary). Anything else (a rewind, a fork, a shrink, another
//!   inode, a changed head, a rewrite of the same length, an earlier file
//!   changed) decodes the chain again.
//!
//! The result equals [`decode_chain`](super::decode::decode_chain) of the
//! same bytes; the property tests in `tests/claude/incremental.rs` check it
//! after every append, appends ending mid-line included.

use std::collections::HashMap;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use notesoup_core::history::{History, NestedCalls, SeqSpan, Transcript, WindowView};

use super::decode::{
    ChainFile, Decoder, FastMap, FastSet, OpenWindow, decode_row, parse_rows, subagent_calls,
    worth_parsing,
};
use super::row::{Block, Row};
use crate::files::{is_absent, open_regular, read_regular};

/// Bytes from the start of the newest file kept to notice a replaced head.
const HEAD_BYTES: usize = 4096;

/// What tells a file changed: its length, modification time, inode and
/// device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStamp {
    len: u64,
    modified: Option<std::time::SystemTime>,
    inode: u64,
    device: u64,
}

impl FileStamp {
    /// The stamp of `path`, `None` when there is no regular file (it decodes
    /// as empty).
    pub fn of(path: &Path) -> Option<Self> {
        let meta = std::fs::metadata(path)
            .ok()
            .filter(std::fs::Metadata::is_file)?;
        Some(Self::from_meta(&meta))
    }

    fn from_meta(meta: &std::fs::Metadata) -> Self {
        use std::os::unix::fs::MetadataExt;
        Self {
            len: meta.len(),
            modified: meta.modified().ok(),
            inode: meta.ino(),
            device: meta.dev(),
        }
    }

    fn same_file(&self, other: &Self) -> bool {
        self.inode == other.inode && self.device == other.device
    }
}

/// What [`ChainDecoder::update`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Update {
    /// No file changed.
    Unchanged,
    /// The newest file grew and its new bytes were decoded onto the kept
    /// state.
    Extended,
    /// The chain was decoded again from its first byte.
    Decoded,
}

/// A chain's kept decode.
#[derive(Debug)]
pub struct ChainDecoder {
    notes_session_id: String,
    files: Vec<ChainFile>,
    /// Stamps of the files before the newest, as decoded.
    earlier: Vec<Option<FileStamp>>,
    decoder: Decoder,
    newest: Option<Newest>,
    /// Counts changes of the decoded transcript.
    generation: u64,
    /// The generation of the last decode from the first byte: every later
    /// generation only extended it.
    decoded_at: u64,
}

impl std::fmt::Debug for Decoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Decoder")
            .field("highest_seq", &self.transcript.highest_seq)
            .field("windows", &self.transcript.windows.len())
            .finish_non_exhaustive()
    }
}

/// A reason to decode the chain again instead of extending it.
struct Redecode;

impl ChainDecoder {
    /// Decodes `files` (oldest first) for `notes_session_id`; missing files
    /// decode as empty.
    pub fn decode(notes_session_id: &str, files: &[ChainFile]) -> io::Result<Self> {
        let mut decoder = Decoder::new(notes_session_id);
        let mut earlier = Vec::new();
        let (last, before) = match files.split_last() {
            Some((last, before)) => (Some(last), before),
            None => (None, files),
        };
        for file in before {
            let stamp = FileStamp::of(&file.path);
            let bytes = read_or_empty(&file.path)?;
            let nested = subagent_calls(&file.path);
            decoder.file(&file.session_id, &bytes, &nested);
            earlier.push(stamp);
        }
        let newest = match last {
            Some(file) => Some(Newest::decode(file, &mut decoder)?),
            None => None,
        };
        Ok(Self {
            notes_session_id: notes_session_id.to_owned(),
            files: files.to_vec(),
            earlier,
            decoder,
            newest,
            generation: 0,
            decoded_at: 0,
        })
    }

    /// A number that changes whenever the decoded transcript does (an
    /// append of bookkeeping rows or of half a line leaves it as it was).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Brings the decode up to date with `files` for `notes_session_id`:
    /// unchanged, extended from the last decoded byte, or decoded again.
    pub fn update(&mut self, notes_session_id: &str, files: &[ChainFile]) -> io::Result<Update> {
        if notes_session_id != self.notes_session_id
            || files != self.files.as_slice()
            || self
                .files
                .iter()
                .zip(&self.earlier)
                .any(|(file, stamp)| FileStamp::of(&file.path) != *stamp)
        {
            return self.redecode(notes_session_id, files);
        }
        let Some(newest) = &mut self.newest else {
            return Ok(Update::Unchanged);
        };
        let rows = newest.rows.len();
        let seqs = self.decoder.transcript.highest_seq;
        match newest.grow(&mut self.decoder) {
            Ok(Some(true)) => {
                if newest.rows.len() != rows || self.decoder.transcript.highest_seq != seqs {
                    self.generation += 1;
                }
                Ok(Update::Extended)
            }
            Ok(Some(false)) => Ok(Update::Unchanged),
            Ok(None) => self.redecode(notes_session_id, files),
            Err(err) => {
                // The kept state may be half extended: never serve it.
                *self = Self::decode(notes_session_id, &[])?;
                self.files.clear();
                Err(err)
            }
        }
    }

    fn redecode(&mut self, notes_session_id: &str, files: &[ChainFile]) -> io::Result<Update> {
        let generation = self.generation + 1;
        // The old state goes first, so two decodes never sit in memory.
        *self = Self::decode(notes_session_id, &[])?;
        *self = Self::decode(notes_session_id, files)?;
        self.generation = generation;
        self.decoded_at = generation;
        Ok(Update::Decoded)
    }

    /// Brings `history`, built from this decode at generation `built`, up
    /// to the current one without copying the transcript: only the items
    /// decoded since are projected ([`History::extend`]). `false`, with
    /// `history` as it was, when the chain was decoded again since `built`
    /// or the decode does not continue the history; build it again then.
    pub fn extend_history(&self, history: &mut History, built: u64) -> bool {
        if built < self.decoded_at {
            return false;
        }
        let transcript = &self.decoder.transcript;
        let open = self
            .newest
            .as_ref()
            .map(|newest| (self.decoder.window_id(&newest.window).to_string(), newest));
        let mut windows: Vec<WindowView<'_>> =
            transcript.windows.iter().map(WindowView::from).collect();
        if let Some((id, newest)) = &open {
            windows.push(WindowView {
                id,
                created_at: newest.window.created_at.as_deref(),
                items: &newest.window.items,
            });
        }
        history
            .extend(transcript.highest_seq, &transcript.off_branch, &windows)
            .is_ok()
    }

    /// The decoded transcript (a copy: the kept state goes on growing).
    pub fn transcript(&self) -> Transcript {
        let mut decoder = Decoder {
            transcript: self.decoder.transcript.clone(),
            used_ids: self.decoder.used_ids.clone(),
            last_ordinal: self.decoder.last_ordinal,
        };
        if let Some(newest) = &self.newest {
            decoder.close_window(newest.window.clone());
        }
        decoder.transcript
    }

    /// The decoded transcript, consuming the kept state.
    pub fn into_transcript(self) -> Transcript {
        let mut decoder = self.decoder;
        if let Some(newest) = self.newest {
            decoder.close_window(newest.window);
        }
        decoder.transcript
    }
}

/// The stamp of a file read up to `read` bytes: its own when nothing came
/// after the read, else one that differs from any later stamp, so the next
/// look reads on from `read`.
fn read_stamp(handle: &std::fs::File, read: u64) -> io::Result<FileStamp> {
    let after = FileStamp::from_meta(&handle.metadata()?);
    Ok(if after.len == read {
        after
    } else {
        FileStamp {
            len: read,
            modified: None,
            ..after
        }
    })
}

fn read_or_empty(path: &Path) -> io::Result<Vec<u8>> {
    match read_regular(path) {
        Ok(bytes) => Ok(bytes),
        Err(err) if is_absent(&err) => Ok(Vec::new()),
        Err(err) => Err(err),
    }
}

/// What the newest file's branch walk needs of one kept row.
#[derive(Debug)]
struct Kept {
    parent: Option<String>,
    /// Set on a compact boundary (whose walk goes on at this parent when
    /// `parent` is null).
    logical_parent: Option<String>,
    boundary: bool,
}

/// The newest file of the chain and its kept decode.
#[derive(Debug)]
struct Newest {
    session_id: String,
    path: PathBuf,
    /// The file as last read (`None`: none was there).
    stamp: Option<FileStamp>,
    /// Its first bytes, to notice a replaced head.
    head: Vec<u8>,
    /// Bytes read so far.
    read: u64,
    /// Bytes decoded so far (at most `read`): a line without its newline
    /// waits unless it parsed.
    decoded: u64,
    /// The decoded bytes end in a row whose newline is not there yet.
    open_line: bool,
    /// Kept rows (with a uuid, not on a sidechain) by uuid; the last wins.
    rows: FastMap<String, Kept>,
    /// The first summary row under each parent uuid.
    summaries: FastMap<String, String>,
    /// Boundaries whose anchor stands for the boundary itself (no summary
    /// seen yet).
    unsummarized: FastSet<String>,
    /// Preserved-segment anchor -> the row that stands in for it.
    anchors: FastMap<String, String>,
    /// Uuids on the active branch.
    branch: FastSet<String>,
    /// Ids the walk looked up and found no row for.
    missed: FastSet<String>,
    /// The newest kept row.
    tip: Option<String>,
    /// Whether the file has a timestamped kept row yet.
    timestamped: bool,
    /// The file's first window is still the open one.
    first_window_open: bool,
    /// The last window, open while the file grows.
    window: OpenWindow,
    /// Sub-agent calls by spawning `tool_use` id.
    nested: HashMap<String, NestedCalls>,
}

impl Newest {
    fn decode(file: &ChainFile, decoder: &mut Decoder) -> io::Result<Self> {
        let mut newest = Self {
            session_id: file.session_id.clone(),
            path: file.path.clone(),
            stamp: None,
            head: Vec::new(),
            read: 0,
            decoded: 0,
            open_line: false,
            rows: FastMap::default(),
            summaries: FastMap::default(),
            unsummarized: FastSet::default(),
            anchors: FastMap::default(),
            branch: FastSet::default(),
            missed: FastSet::default(),
            tip: None,
            timestamped: false,
            first_window_open: true,
            window: decoder.open_window(&file.session_id, None),
            nested: HashMap::new(),
        };
        let file_handle = match open_regular(&file.path) {
            Ok(handle) => Some(handle),
            Err(err) if is_absent(&err) => None,
            Err(err) => return Err(err),
        };
        if let Some(mut handle) = file_handle {
            let len = handle.metadata()?.len();
            let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
            handle.read_to_end(&mut bytes)?;
            newest.stamp = Some(read_stamp(&handle, bytes.len() as u64)?);
            if newest.extend(&bytes, decoder).is_err() {
                // Nothing was decoded before, so nothing can be contradicted.
                return Err(io::Error::other("a fresh decode cannot conflict"));
            }
        }
        Ok(newest)
    }

    /// Decodes what was appended since the last read: `Some(true)` when
    /// there were new bytes, `Some(false)` when the file is as it was,
    /// `None` when the chain must be decoded again.
    fn grow(&mut self, decoder: &mut Decoder) -> io::Result<Option<bool>> {
        let now = FileStamp::of(&self.path);
        if now == self.stamp {
            return Ok(Some(false));
        }
        let (Some(before), Some(now)) = (self.stamp, now) else {
            return Ok(None);
        };
        if !before.same_file(&now) || now.len <= self.read {
            // Replaced, shrunk, or rewritten at the same length.
            return Ok(None);
        }
        let mut handle = match open_regular(&self.path) {
            Ok(handle) => handle,
            Err(err) if is_absent(&err) => return Ok(None),
            Err(err) => return Err(err),
        };
        let opened = FileStamp::from_meta(&handle.metadata()?);
        if !opened.same_file(&before) || opened.len < self.read {
            return Ok(None);
        }
        let mut head = vec![0; self.head.len()];
        handle.read_exact(&mut head)?;
        if head != self.head {
            return Ok(None);
        }
        handle.seek(SeekFrom::Start(self.decoded))?;
        let mut bytes = Vec::new();
        handle.read_to_end(&mut bytes)?;
        self.stamp = Some(read_stamp(&handle, self.decoded + bytes.len() as u64)?);
        if self.extend(&bytes, decoder).is_err() {
            return Ok(None);
        }
        Ok(Some(true))
    }

    /// Decodes `bytes`, which follow the decoded ones.
    fn extend(&mut self, bytes: &[u8], decoder: &mut Decoder) -> Result<(), Redecode> {
        let start = self.decoded;
        self.read = start + bytes.len() as u64;
        // The head covers the file's first bytes; `bytes` starts at `start`.
        let start_at = usize::try_from(start).unwrap_or(usize::MAX);
        if self.head.len() < HEAD_BYTES && start_at <= self.head.len() {
            let from = self.head.len() - start_at;
            let to = (HEAD_BYTES - start_at).min(bytes.len());
            if from < to {
                self.head.extend_from_slice(&bytes[from..to]);
            }
        }
        let mut bytes = bytes;
        if self.open_line {
            match bytes.first() {
                None => return Ok(()),
                Some(b'\n') => {
                    bytes = &bytes[1..];
                    self.decoded += 1;
                    self.open_line = false;
                }
                // The row decoded without its newline went on: it is
                // another line now.
                Some(_) => return Err(Redecode),
            }
        }
        let (complete, tail) = match memchr::memrchr(b'\n', bytes) {
            Some(at) => (&bytes[..=at], &bytes[at + 1..]),
            None => (&bytes[..0], bytes),
        };
        let mut rows = parse_rows(complete);
        let mut consumed = complete.len();
        if !tail.is_empty()
            && worth_parsing(tail)
            && let Some(row) = Row::parse(tail)
        {
            rows.push(row);
            consumed += tail.len();
            self.open_line = true;
        }
        rows.retain(|row| row.uuid.is_some() && !row.is_sidechain);
        self.add_rows(rows, decoder)?;
        self.decoded += consumed as u64;
        Ok(())
    }

    fn add_rows(&mut self, rows: Vec<Row>, decoder: &mut Decoder) -> Result<(), Redecode> {
        let Some(tip) = rows.last().and_then(|row| row.uuid.clone()) else {
            return Ok(());
        };
        let was_empty = self.tip.is_none();
        // Nothing the kept walk used may change.
        for row in &rows {
            let uuid = row.uuid.as_deref().unwrap_or_default();
            if !was_empty && (self.rows.contains_key(uuid) || self.missed.contains(uuid)) {
                return Err(Redecode);
            }
            if row.is_compact_summary
                && let Some(parent) = row.parent_uuid.as_deref()
                && self.unsummarized.contains(parent)
                && !self.summaries.contains_key(parent)
            {
                return Err(Redecode);
            }
        }
        if !self.timestamped
            && let Some(stamp) = rows.iter().find_map(|row| row.timestamp.clone())
        {
            if !self.first_window_open {
                return Err(Redecode);
            }
            self.window.created_at = Some(stamp);
            self.timestamped = true;
        }
        let old_tip = self.tip.take();
        self.rows.reserve(rows.len());
        let mut added: FastSet<&str> = FastSet::default();
        added.reserve(rows.len());
        for row in &rows {
            let uuid = row.uuid.clone().unwrap_or_default();
            if row.is_compact_summary
                && let Some(parent) = &row.parent_uuid
            {
                self.summaries
                    .entry(parent.clone())
                    .or_insert_with(|| uuid.clone());
            }
            added.insert(row.uuid.as_deref().unwrap_or_default());
            self.rows.insert(
                uuid,
                Kept {
                    parent: row.parent_uuid.clone(),
                    logical_parent: row.logical_parent_uuid.clone(),
                    boundary: row.is_compact_boundary(),
                },
            );
        }
        for row in rows.iter().filter(|row| row.is_compact_boundary()) {
            let (Some(uuid), Some(anchor)) = (
                row.uuid.as_deref(),
                row.compact_metadata
                    .as_ref()
                    .and_then(|m| m.preserved_segment.as_ref())
                    .and_then(|s| s.anchor_uuid.as_deref()),
            ) else {
                continue;
            };
            if !was_empty && (self.anchors.contains_key(anchor) || self.missed.contains(anchor)) {
                return Err(Redecode);
            }
            let stand_in = match self.summaries.get(uuid) {
                Some(summary) => summary.clone(),
                None => {
                    self.unsummarized.insert(uuid.to_owned());
                    uuid.to_owned()
                }
            };
            self.anchors.insert(anchor.to_owned(), stand_in);
        }
        // The new newest row's ancestry, through new rows, to the old tip.
        let mut next = Some(tip.clone());
        let mut walked: Vec<String> = Vec::with_capacity(rows.len());
        let mut walked_set: FastSet<String> = FastSet::default();
        walked_set.reserve(rows.len());
        let mut missed: Vec<String> = Vec::new();
        let reached = loop {
            let Some(uuid) = next else { break false };
            if old_tip.as_deref() == Some(uuid.as_str()) {
                break true;
            }
            let Some(row) = self.rows.get(&uuid) else {
                next = self.anchors.get(&uuid).cloned();
                missed.push(uuid);
                continue;
            };
            if !added.contains(uuid.as_str()) {
                // An earlier row off the old tip's line: a fork or rewind.
                return Err(Redecode);
            }
            if !walked_set.insert(uuid.clone()) {
                break false;
            }
            next = match &row.parent {
                Some(parent) => Some(parent.clone()),
                None if row.boundary => row.logical_parent.clone(),
                None => None,
            };
            walked.push(uuid);
        };
        if !reached && old_tip.is_some() {
            return Err(Redecode);
        }
        self.branch.reserve(walked.len());
        self.branch.extend(walked);
        self.missed.extend(missed);
        self.tip = Some(tip);
        if rows.iter().any(has_tool_result) {
            self.nested = subagent_calls(&self.path);
        }
        // The rows are consumed: their texts move into the items.
        for mut row in rows {
            let on_branch = self
                .branch
                .contains(row.uuid.as_deref().unwrap_or_default());
            let boundary = row.is_compact_boundary();
            let timestamp = row.timestamp.take();
            let Some(decoded) = decode_row(row, &self.nested) else {
                continue;
            };
            let base = decoder.transcript.highest_seq + 1;
            decoder.transcript.highest_seq += decoded.seqs;
            if !on_branch {
                decoder.transcript.off_branch.push(SeqSpan {
                    first: base,
                    last: decoder.transcript.highest_seq,
                });
                continue;
            }
            if boundary {
                let next = decoder.open_window(&self.session_id, timestamp.clone());
                let closed = std::mem::replace(&mut self.window, next);
                decoder.close_window(closed);
                self.first_window_open = false;
            }
            self.window
                .push_items(base, timestamp.as_deref(), decoded.items);
        }
        Ok(())
    }
}

fn has_tool_result(row: &Row) -> bool {
    row.kind == "user"
        && row
            .message
            .iter()
            .flat_map(|m| &m.content.0)
            .any(|block| matches!(block, Block::ToolResult { .. }))
}
