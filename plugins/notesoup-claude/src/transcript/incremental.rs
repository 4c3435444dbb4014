//! A chain's decode kept between calls and extended from the last decoded
//! byte as the newest transcript grows (Claude Code only appends to it).
//!
//! - The earlier files of a `/clear` chain are finished; they are decoded
//!   once and only stat-checked afterwards. The newest file keeps what its
//!   next branch walk and its open window need: every kept row's uuid, the
//!   compact anchors and summaries, the ids the walk missed, how the last
//!   boundary relinks the rows after it, the rows nearest the tip on its
//!   branch (a compaction keeps rows from there), and the last window.
//! - [`ChainHistory`] (the MCP server's) hands the decoded items over to
//!   core's [`History`] as they come, so their texts are kept once.
//! - A complete line is decoded once. A last line without its newline is
//!   left for later unless it already parses as a row (then it is decoded,
//!   and the next bytes must start with its newline).
//! - New rows extend the decode when the newest row's ancestry reaches the
//!   previous newest row through new rows only (relinked, a compaction's
//!   kept rows among the rows nearest the tip are passed again), and nothing
//!   the earlier walk used changes (no new row reuses a uuid or fills a
//!   parent, kept row or anchor the walk missed, no compact anchor is
//!   redefined). Anything else (a rewind, a fork, a shrink, another inode, a
//!   changed head, a rewrite of the same length, an earlier file changed, a
//!   relinking that needs earlier rows than those kept) decodes the chain
//!   again.
//!
//! The result equals [`decode_chain`](super::decode::decode_chain) of the
//! same bytes; the property tests in `tests/claude/incremental.rs` check it
//! after every append, appends ending mid-line included.

use std::collections::{HashMap, VecDeque};
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use notesoup_core::history::{
    History, NestedCalls, Transcript, TranscriptError, TranscriptWindow, WindowSignals,
};

use super::decode::{
    ChainFile, Decoder, OpenWindow, Parsed, STREAM_CHUNK_BYTES, parse_stream, read_rows,
    subagent_calls, worth_parsing,
};
use super::fnv::{FastMap, FastSet, Fnv};
use super::relink::{Lookup, Relink};
use super::row::RowRef;
use crate::files::{is_absent, open_regular};

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
        Self::decode_in_pieces(notes_session_id, files, STREAM_CHUNK_BYTES)
    }

    /// [`ChainDecoder::decode`], the newest file streamed in chunks of
    /// about `chunk_bytes` (its rows are added as each chunk comes): for
    /// tests.
    #[doc(hidden)]
    pub fn decode_in_pieces(
        notes_session_id: &str,
        files: &[ChainFile],
        chunk_bytes: usize,
    ) -> io::Result<Self> {
        let mut decoder = Decoder::new(notes_session_id);
        let mut earlier = Vec::new();
        let (last, before) = match files.split_last() {
            Some((last, before)) => (Some(last), before),
            None => (None, files),
        };
        for file in before {
            let stamp = FileStamp::of(&file.path);
            let rows = read_rows(&file.path)?;
            let nested = subagent_calls(&file.path);
            decoder.file(&file.session_id, rows, &nested);
            earlier.push(stamp);
        }
        let newest = match last {
            Some(file) => Some(Newest::decode(file, chunk_bytes.max(1), &mut decoder)?),
            None => None,
        };
        Ok(Self {
            notes_session_id: notes_session_id.to_owned(),
            files: files.to_vec(),
            earlier,
            decoder,
            newest,
            generation: 0,
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
        Ok(Update::Decoded)
    }

    /// The items decoded since the last call, moved out of the kept state,
    /// in a transcript that names every window (the kept state keeps each
    /// window's id and start, and what the branch walk needs, but no text).
    fn take_items(&mut self) -> Transcript {
        let transcript = &mut self.decoder.transcript;
        let mut windows: Vec<TranscriptWindow> = transcript
            .windows
            .iter_mut()
            .map(|window| TranscriptWindow {
                id: window.id.clone(),
                created_at: window.created_at.clone(),
                items: std::mem::take(&mut window.items),
            })
            .collect();
        if let Some(newest) = &mut self.newest {
            windows.push(TranscriptWindow {
                id: self.decoder.window_id(&newest.window).to_string(),
                created_at: newest.window.created_at.clone(),
                items: std::mem::take(&mut newest.window.items),
            });
        }
        let transcript = &self.decoder.transcript;
        Transcript {
            session_id: transcript.session_id.clone(),
            highest_seq: transcript.highest_seq,
            off_branch: transcript.off_branch.clone(),
            windows,
        }
    }

    /// What the rows say about each window beyond its items (the window
    /// ledger's input), the newest window's as it stands.
    pub fn signals(&self) -> Vec<WindowSignals> {
        let mut signals = self.decoder.signals.clone();
        signals.extend(
            self.newest
                .as_ref()
                .map(|newest| newest.window.signals.clone()),
        );
        signals
    }

    /// The decoded transcript (a copy: the kept state goes on growing).
    pub fn transcript(&self) -> Transcript {
        let mut decoder = Decoder {
            transcript: self.decoder.transcript.clone(),
            used_ids: self.decoder.used_ids.clone(),
            last_ordinal: self.decoder.last_ordinal,
            signals: Vec::new(),
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

/// A chain's kept decode projected into a [`History`] as it goes: decoded
/// items move into the history (core's [`History::extend_owned`] after an
/// append), so the kept state holds no text and nothing is copied. What
/// the MCP server keeps between calls.
#[derive(Debug)]
pub struct ChainHistory {
    decoder: ChainDecoder,
    history: History,
    /// The decoder generation the history is at.
    built: u64,
}

/// Why a chain's history could not be brought up to date.
#[derive(Debug, thiserror::Error)]
pub enum ChainError {
    /// A transcript could not be read.
    #[error("transcript unreadable: {0}")]
    Io(#[from] io::Error),
    /// The decode broke one of the history's rules (a decoder bug).
    #[error(transparent)]
    Transcript(#[from] TranscriptError),
}

impl ChainHistory {
    /// Decodes `files` (oldest first) for `notes_session_id` and builds
    /// their history; missing files decode as empty.
    pub fn decode(notes_session_id: &str, files: &[ChainFile]) -> Result<Self, ChainError> {
        let mut decoder = ChainDecoder::decode(notes_session_id, files)?;
        let mut history = History::new(decoder.take_items())?;
        history.set_window_signals(decoder.signals());
        Ok(Self {
            built: decoder.generation(),
            decoder,
            history,
        })
    }

    /// Brings the history up to date with `files` for `notes_session_id`
    /// (see [`ChainDecoder::update`]): only what the newest transcript
    /// gained is decoded and projected; any other change decodes and builds
    /// it again.
    pub fn update(
        &mut self,
        notes_session_id: &str,
        files: &[ChainFile],
    ) -> Result<(), ChainError> {
        let update = self.decoder.update(notes_session_id, files)?;
        let generation = self.decoder.generation();
        match update {
            Update::Unchanged => Ok(()),
            Update::Extended if generation == self.built => Ok(()),
            Update::Extended => {
                if self.history.extend_owned(self.decoder.take_items()).is_ok() {
                    self.history.set_window_signals(self.decoder.signals());
                    self.built = generation;
                    return Ok(());
                }
                // The items went with the refused transcript: decode again,
                // the old state first, so two decodes never sit in memory.
                *self = Self::decode(notes_session_id, &[])?;
                *self = Self::decode(notes_session_id, files)?;
                Ok(())
            }
            Update::Decoded => {
                let transcript = self.decoder.take_items();
                // The old history goes before the new one is built.
                self.history = History::new(Transcript::default())?;
                self.history = History::new(transcript)?;
                self.history.set_window_signals(self.decoder.signals());
                self.built = generation;
                Ok(())
            }
        }
    }

    /// The history.
    pub fn history(&self) -> &History {
        &self.history
    }
}

/// How a decode adds the rows it parses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Adding {
    /// Each chunk's rows (of about this many bytes) as it comes, while the
    /// other cores parse on: a first decode.
    ByChunk(usize),
    /// Every row once the last chunk is parsed.
    AtOnce,
}

/// Room for the rows of `expected` bytes at the density of a first chunk
/// of `bytes` bytes that held `rows`, reserved once: a long decode that
/// adds its rows at once then fills one vector instead of doubling it a
/// dozen times. At most a
/// million rows (room not filled is never touched).
fn expected_rows(rows: usize, bytes: usize, expected: u64) -> usize {
    const MOST: u64 = 1 << 20;
    let bytes = u64::try_from(bytes.max(1)).unwrap_or(u64::MAX);
    let rows = u64::try_from(rows).unwrap_or(u64::MAX);
    let estimate = rows.saturating_mul(expected) / bytes;
    usize::try_from(estimate.saturating_add(estimate / 16).min(MOST)).unwrap_or(0)
}

/// The key of a kept row's uuid in [`Newest::rows`].
fn uuid_key(uuid: &str) -> u64 {
    Fnv::of(uuid.as_bytes())
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

/// How many rows nearest the tip a kept decode knows by their ids (see
/// [`Newest::recent`]); a compaction that keeps rows past them decodes the
/// chain again.
const RECENT_ROWS: usize = 512;

/// A row on the tip's branch, as a later relinking walk needs it.
#[derive(Debug, Clone)]
struct Recent {
    uuid: String,
    parent: Option<String>,
    /// A user or assistant row.
    message: bool,
    /// How many boundaries stand up to it (itself included).
    epoch: u64,
}

/// The newest file of the chain and its kept decode.
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
    /// The hashes of the kept rows' uuids (rows with a uuid, not on a
    /// sidechain). A walk over new rows that reaches one of them other than
    /// the tip is a fork, so their parents are not needed again. Two uuids
    /// sharing a hash can only make an append look like a fork, which
    /// decodes again.
    rows: FastSet<u64>,
    /// The first summary row under each parent uuid.
    summaries: FastMap<String, String>,
    /// Boundaries whose anchor the boundary itself stands in for (no
    /// summary seen yet), with that anchor.
    unsummarized: FastMap<String, String>,
    /// Preserved-segment anchor -> the row that stands in for it.
    anchors: FastMap<String, String>,
    /// Ids the walk looked up and found no row for.
    missed: FastSet<String>,
    /// The newest kept row.
    tip: Option<String>,
    /// Boundary rows so far (the epoch of the rows after the last).
    boundaries: u64,
    /// How the last boundary relinks the rows after it.
    relink: Option<Relink>,
    /// The rows nearest the tip on its branch (the tip first), as far as
    /// [`RECENT_ROWS`]: the rows a compaction keeps, which a walk from a
    /// later row passes again once relinked.
    recent: VecDeque<Recent>,
    /// Whether the file has a timestamped kept row yet.
    timestamped: bool,
    /// The file's first window is still the open one.
    first_window_open: bool,
    /// The last window, open while the file grows.
    window: OpenWindow,
    /// Sub-agent calls by spawning `tool_use` id.
    nested: HashMap<String, NestedCalls>,
}

impl std::fmt::Debug for Newest {
    /// Where the decode stands, without the head's bytes or the open
    /// window's items.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Newest")
            .field("path", &self.path)
            .field("stamp", &self.stamp)
            .field("read", &self.read)
            .field("decoded", &self.decoded)
            .field("rows", &self.rows.len())
            .field("tip", &self.tip)
            .field("boundaries", &self.boundaries)
            .field("window_items", &self.window.items.len())
            .finish_non_exhaustive()
    }
}

impl Newest {
    /// Nothing of `file` decoded yet.
    fn empty(file: &ChainFile, decoder: &Decoder) -> Self {
        Self {
            session_id: file.session_id.clone(),
            path: file.path.clone(),
            stamp: None,
            head: Vec::new(),
            read: 0,
            decoded: 0,
            open_line: false,
            rows: FastSet::default(),
            summaries: FastMap::default(),
            unsummarized: FastMap::default(),
            anchors: FastMap::default(),
            missed: FastSet::default(),
            tip: None,
            boundaries: 0,
            relink: None,
            recent: VecDeque::new(),
            timestamped: false,
            first_window_open: true,
            window: decoder.open_window(&file.session_id, None),
            nested: HashMap::new(),
        }
    }

    /// Decodes `file` from its first byte. Its rows are added chunk by
    /// chunk as they are parsed; a chunk that does not follow on from the
    /// rows before it (a fork back into rows already added)
    /// sends the decode back to the first byte, to add every row at once.
    fn decode(file: &ChainFile, chunk_bytes: usize, decoder: &mut Decoder) -> io::Result<Self> {
        decoder.begin_file();
        let mut newest = Self::empty(file, decoder);
        let mut handle = match open_regular(&file.path) {
            Ok(handle) => handle,
            Err(err) if is_absent(&err) => return Ok(newest),
            Err(err) => return Err(err),
        };
        let expected = handle.metadata()?.len();
        let mark = decoder.mark();
        if newest
            .extend(&mut handle, expected, Adding::ByChunk(chunk_bytes), decoder)?
            .is_err()
        {
            decoder.rewind(mark);
            newest = Self::empty(file, decoder);
            handle.seek(SeekFrom::Start(0))?;
            if newest
                .extend(&mut handle, expected, Adding::AtOnce, decoder)?
                .is_err()
            {
                // Nothing was decoded before, so nothing can be contradicted.
                return Err(io::Error::other("a fresh decode cannot conflict"));
            }
        }
        newest.stamp = Some(read_stamp(&handle, newest.read)?);
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
        let (Some(before), Some(_)) = (self.stamp, now) else {
            return Ok(None);
        };
        let mut handle = match open_regular(&self.path) {
            Ok(handle) => handle,
            Err(err) if is_absent(&err) => return Ok(None),
            Err(err) => return Err(err),
        };
        let opened = FileStamp::from_meta(&handle.metadata()?);
        if !opened.same_file(&before) || opened.len <= self.read {
            // Replaced, shrunk, or rewritten at the same length.
            return Ok(None);
        }
        let mut head = vec![0; self.head.len()];
        handle.read_exact(&mut head)?;
        if head != self.head {
            return Ok(None);
        }
        handle.seek(SeekFrom::Start(self.decoded))?;
        let expected = opened.len.saturating_sub(self.decoded);
        let extended = self.extend(&mut handle, expected, Adding::AtOnce, decoder)?;
        self.stamp = Some(read_stamp(&handle, self.read)?);
        Ok(extended.is_ok().then_some(true))
    }

    /// Reads and decodes what follows the decoded bytes, to the end of
    /// `reader` (placed at the first byte not decoded, with about
    /// `expected` bytes to read), adding the rows as `adding` says. A
    /// refusal leaves a decode by chunks half added: decode again.
    fn extend(
        &mut self,
        reader: &mut (impl Read + Send),
        expected: u64,
        adding: Adding,
        decoder: &mut Decoder,
    ) -> io::Result<Result<(), Redecode>> {
        let start = self.decoded;
        let mut at = start;
        // The row decoded without its newline must be followed by it; if
        // it went on, it is another line now.
        let mut open_line = self.open_line;
        let mut went_on = false;
        let mut rows = Vec::new();
        let mut added = Ok(());
        let chunk = match adding {
            Adding::ByChunk(chunk) => {
                self.nested = subagent_calls(&self.path);
                chunk
            }
            Adding::AtOnce => STREAM_CHUNK_BYTES,
        };
        let mut head = std::mem::take(&mut self.head);
        let read = |bytes: &[u8]| {
            if open_line {
                went_on = bytes.first() != Some(&b'\n');
                open_line = false;
            }
            // The head covers the file's first bytes: add those it lacks.
            let offset = usize::try_from(at).unwrap_or(usize::MAX);
            if let Some(known) = head.len().checked_sub(offset) {
                let new = bytes.get(known..).unwrap_or_default();
                let lacking = HEAD_BYTES.saturating_sub(head.len());
                head.extend_from_slice(&new[..lacking.min(new.len())]);
            }
            at += bytes.len() as u64;
            !went_on
        };
        let take = |parsed: Vec<Parsed>, bytes: usize| match adding {
            Adding::ByChunk(_) => {
                added = self.add_rows(parsed, decoder, false);
                added.is_ok()
            }
            Adding::AtOnce => {
                if rows.is_empty() {
                    rows.reserve(expected_rows(parsed.len(), bytes, expected));
                }
                rows.extend(parsed);
                true
            }
        };
        let tail = parse_stream(reader, chunk, expected, read, take);
        self.head = head;
        let tail = tail?;
        self.read = at;
        if went_on || added.is_err() {
            return Ok(Err(Redecode));
        }
        if at == start {
            return Ok(Ok(()));
        }
        self.open_line = false;
        let mut consumed = at - start - tail.len() as u64;
        if !tail.is_empty() && worth_parsing(&tail) && RowRef::parse(&tail).is_some() {
            rows.extend(Parsed::of_line(&tail));
            consumed += tail.len() as u64;
            self.open_line = true;
        }
        let added = self.add_rows(rows, decoder, adding == Adding::AtOnce);
        if added.is_ok() {
            self.decoded += consumed;
        }
        Ok(added)
    }

    /// A kept row on the tip's branch.
    fn recent(&self, uuid: &str) -> Option<&Recent> {
        self.recent.iter().find(|recent| recent.uuid == uuid)
    }

    /// The epoch of the row `uuid` names (`None`: no row has it, noted in
    /// `missed`), found among the new rows (`added`, with their `epochs`)
    /// and the recent ones; any other earlier row cannot be told.
    fn epoch_of(
        &self,
        uuid: &str,
        added: &FastMap<&str, usize>,
        epochs: &[u64],
        missed: &mut Vec<String>,
    ) -> Result<Option<u64>, Redecode> {
        if let Some(&index) = added.get(uuid) {
            return Ok(Some(epochs[index]));
        }
        if let Some(recent) = self.recent(uuid) {
            return Ok(Some(recent.epoch));
        }
        if self.rows.contains(&uuid_key(uuid)) {
            return Err(Redecode);
        }
        missed.push(uuid.to_owned());
        Ok(None)
    }

    /// How each new boundary of `rows` relinks its epoch, its rows looked
    /// up among the new rows and the recent ones (any other earlier row
    /// cannot be told).
    fn new_relinks(
        &self,
        rows: &[Parsed],
        added: &FastMap<&str, usize>,
        missed: &mut Vec<String>,
    ) -> Result<Vec<Option<Relink>>, Redecode> {
        let mut relinks = Vec::new();
        for row in rows.iter().filter(|row| row.boundary) {
            let Some(preserved) = row.preserved.as_deref() else {
                relinks.push(None);
                continue;
            };
            let lookup = |uuid: &str| {
                if let Some(&index) = added.get(uuid) {
                    return Ok(Lookup::Row(rows[index].parent.as_deref()));
                }
                if let Some(recent) = self.recent(uuid) {
                    return Ok(Lookup::Row(recent.parent.as_deref()));
                }
                if self.rows.contains(&uuid_key(uuid)) {
                    return Err(Redecode);
                }
                missed.push(uuid.to_owned());
                Ok(Lookup::Missing)
            };
            relinks.push(Relink::of(preserved, lookup)?);
        }
        Ok(relinks)
    }

    /// Adds `rows` after the kept ones; `load_nested` reads the sub-agent
    /// calls again when they hold a tool result.
    fn add_rows(
        &mut self,
        rows: Vec<Parsed>,
        decoder: &mut Decoder,
        load_nested: bool,
    ) -> Result<(), Redecode> {
        let Some(tip) = rows.last().map(|row| row.uuid.clone()) else {
            return Ok(());
        };
        let was_empty = self.tip.is_none();
        // Nothing the kept walk used may change.
        for row in &rows {
            let uuid = row.uuid.as_str();
            if !was_empty && (self.rows.contains(&uuid_key(uuid)) || self.missed.contains(uuid)) {
                return Err(Redecode);
            }
            // A first summary moves its boundary's stand-in: a walk that
            // used the old one must be walked again.
            if row.compact_summary
                && let Some(parent) = row.parent.as_deref()
                && let Some(anchor) = self.unsummarized.get(parent)
                && self.missed.contains(anchor)
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
        // Each new uuid's last row (the one a parent names), and for each
        // row the index of the last row with its uuid.
        let mut added: FastMap<&str, usize> = FastMap::default();
        added.reserve(rows.len());
        let mut last: Vec<usize> = (0..rows.len()).collect();
        for (index, row) in rows.iter().enumerate() {
            if row.compact_summary
                && let Some(parent) = &row.parent
                && !self.summaries.contains_key(parent)
            {
                self.summaries.insert(parent.clone(), row.uuid.clone());
                if let Some(anchor) = self.unsummarized.remove(parent) {
                    self.anchors.insert(anchor, row.uuid.clone());
                }
            }
            if let Some(before) = added.insert(row.uuid.as_str(), index) {
                last[before] = index;
            }
            self.rows.insert(uuid_key(&row.uuid));
        }
        // A later row of the same uuid is resolved first.
        for index in (0..last.len()).rev() {
            last[index] = last[last[index]];
        }
        for row in &rows {
            let Some(anchor) = row.anchor() else {
                continue;
            };
            if !was_empty && (self.anchors.contains_key(anchor) || self.missed.contains(anchor)) {
                return Err(Redecode);
            }
            let uuid = row.uuid.as_str();
            let stand_in = match self.summaries.get(uuid) {
                Some(summary) => summary.clone(),
                None => {
                    self.unsummarized.insert(uuid.to_owned(), anchor.to_owned());
                    uuid.to_owned()
                }
            };
            self.anchors.insert(anchor.to_owned(), stand_in);
        }
        // Each new row's epoch: how many boundaries stand up to it (itself
        // included), the kept ones first.
        let mut epochs = Vec::with_capacity(rows.len());
        let mut boundaries = self.boundaries;
        for row in &rows {
            boundaries += u64::from(row.boundary);
            epochs.push(boundaries);
        }
        let mut missed: Vec<String> = Vec::new();
        let relinks = self.new_relinks(&rows, &added, &mut missed)?;
        // The relinking of the epoch that many boundaries open. The walk of
        // the new rows never comes from an epoch before the last kept
        // boundary's: every new row stands after it.
        let relink_of = |epoch: u64| match epoch.checked_sub(self.boundaries) {
            Some(0) => self.relink.as_ref(),
            Some(new) => usize::try_from(new - 1)
                .ok()
                .and_then(|new| relinks.get(new)?.as_ref()),
            None => None,
        };
        // The new newest row's ancestry, through new rows (and the rows an
        // epoch's relinking keeps), to the old tip in file order; `on_branch`
        // marks the new rows on it by index, `path` lists the first of them
        // as met (the recent rows to keep).
        let mut on_branch = vec![false; rows.len()];
        let mut visited = vec![false; rows.len()];
        let mut kept_visits: FastSet<(u64, &str)> = FastSet::default();
        let mut path: Vec<usize> = Vec::new();
        let mut next = Some(tip.as_str());
        // The epoch the walk comes from (`None` after crossing a boundary).
        let mut from: Option<u64> = None;
        let reached = loop {
            let Some(id) = next else { break false };
            let kept = from.and_then(|epoch| Some((epoch, relink_of(epoch)?.place(id)?)));
            // The row: its own parent, whether it is a message and a
            // boundary, and its epoch.
            let (parent, message, boundary, epoch) = if let Some(&index) = added.get(id) {
                let row = &rows[index];
                let first = match kept {
                    Some((epoch, _)) => kept_visits.insert((epoch, row.uuid.as_str())),
                    None => !std::mem::replace(&mut visited[index], true),
                };
                if !first {
                    break false;
                }
                if !std::mem::replace(&mut on_branch[index], true) && path.len() < RECENT_ROWS {
                    path.push(index);
                }
                let epoch = kept.map_or(epochs[index], |(epoch, _)| epoch);
                (
                    row.parent.as_deref(),
                    row.message,
                    row.boundary.then_some(index),
                    epoch,
                )
            } else if let Some((epoch, _)) = kept {
                // A kept row written before: the walk may pass it only when it
                // is known to be on the branch.
                let Some(recent) = self.recent(id) else {
                    return Err(Redecode);
                };
                if !kept_visits.insert((epoch, recent.uuid.as_str())) {
                    break false;
                }
                (recent.parent.as_deref(), recent.message, None, epoch)
            } else if old_tip.as_deref() == Some(id) {
                break true;
            } else if self.rows.contains(&uuid_key(id)) {
                // An earlier row off the old tip's line: a fork or rewind.
                return Err(Redecode);
            } else {
                next = self.anchors.get(id).map(String::as_str);
                missed.push(id.to_owned());
                continue;
            };
            let parent = match relink_of(epoch) {
                Some(relink) => {
                    let dropped = |id: &str| {
                        self.epoch_of(id, &added, &epochs, &mut missed)
                            .map(|at| at.is_some_and(|at| at < epoch))
                    };
                    relink.parent(id, kept.map(|k| k.1), parent, message, dropped)?
                }
                None => parent,
            };
            (next, from) = match (parent, boundary) {
                (Some(parent), _) => (Some(parent), Some(epoch)),
                (None, Some(index)) => (rows[index].logical_parent.as_deref(), None),
                (None, None) => (None, None),
            };
        };
        if !reached && old_tip.is_some() {
            return Err(Redecode);
        }
        // The rows met, nearest the tip first, go before the ones met before.
        let met: Vec<Recent> = path
            .iter()
            .map(|&index| {
                let row = &rows[index];
                Recent {
                    uuid: row.uuid.clone(),
                    parent: row.parent.clone(),
                    message: row.message,
                    epoch: epochs[index],
                }
            })
            .collect();
        drop(added);
        self.missed.extend(missed);
        self.tip = Some(tip);
        self.boundaries = boundaries;
        if let Some(relink) = relinks.into_iter().last() {
            self.relink = relink;
        }
        for recent in met.into_iter().rev() {
            self.recent.push_front(recent);
        }
        self.recent.truncate(RECENT_ROWS);
        if load_nested && rows.iter().any(Parsed::has_tool_result) {
            self.nested = subagent_calls(&self.path);
        }
        // The rows are consumed: their items move into the windows. A row
        // is on the branch when the last row of its uuid was walked.
        let items = rows.iter().flat_map(|row| &row.decoded);
        self.window
            .items
            .reserve(items.map(|decoded| decoded.items.len()).sum());
        for (index, mut row) in rows.into_iter().enumerate() {
            let Some(decoded) = row.decoded.take() else {
                continue;
            };
            let Some(base) = decoder.number_row(decoded.seqs, on_branch[last[index]]) else {
                continue;
            };
            let session_id = &self.session_id;
            if decoder.add_row(
                &mut self.window,
                session_id,
                row,
                decoded,
                base,
                &self.nested,
            ) {
                self.first_window_open = false;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::expected_rows;

    /// The room reserved is the first chunk's density over the expected
    /// bytes, a sixteenth over, and never past a million rows.
    #[test]
    fn rows_are_reserved_at_the_first_chunks_density() {
        assert_eq!(expected_rows(100, 1_000, 10_000), 1_062);
        assert_eq!(expected_rows(3, 7, 70), 31);
        assert_eq!(expected_rows(0, 1_000, 10_000), 0);
        assert_eq!(expected_rows(5, 0, 10), 53);
        assert_eq!(expected_rows(1_000, 1, u64::MAX), 1 << 20);
    }
}
