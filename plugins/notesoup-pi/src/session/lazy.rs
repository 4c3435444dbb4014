//! A long session file read lazily: one buffer, every line indexed by byte
//! range with only what the tree needs (type, id, parent), and an entry
//! decoded in full only when something asks for it — once, then cached.
//!
//! It answers the read-only questions (the branch to a leaf, the provider
//! context) exactly as [`SessionFile`] does: every line is still checked to
//! be a JSON object, so a garbage, torn or non-object line is skipped just
//! as Pi skips it, and any line the quick index cannot settle is read by
//! [`SessionFile`]'s own rules. What it does not do is rewrite: a writer
//! keeps using [`SessionFile`].

use std::borrow::Cow;
use std::cell::OnceCell;
use std::collections::HashMap;
use std::ops::Range;
use std::path::Path;

use serde::Deserialize;

use super::SessionError;
use super::entry::{Entry, SessionHeader};
use super::reader::{Diagnostic, SessionFile};
use super::tree::Leaf;

/// A small, fast hash for entry ids (FxHash's multiply-rotate): the ids
/// come from the file, and a collision costs only a slower lookup.
#[derive(Default, Clone, Copy)]
struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(word))
                .wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

type IdMap = HashMap<Box<str>, usize, std::hash::BuildHasherDefault<IdHasher>>;

/// What the index knows of an entry line without decoding it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Message,
    Compaction,
    /// Any other entry type (small entries: settings changes, custom
    /// entries, labels, markers); always decoded when on the branch.
    Other,
}

/// Where an id's text is: a span of the buffer (an id without escapes, the
/// common case, costs no allocation) or an owned copy.
#[derive(Debug, Clone)]
enum IdRef {
    Span(Range<usize>),
    Owned(Box<str>),
}

impl IdRef {
    /// `text` as found in `line`, which starts at `offset` in the buffer.
    fn of(text: Cow<'_, str>, line: &[u8], offset: usize) -> Self {
        let within = (text.as_ptr() as usize).checked_sub(line.as_ptr() as usize);
        match (text, within) {
            (Cow::Borrowed(text), Some(at)) if at + text.len() <= line.len() => {
                IdRef::Span(offset + at..offset + at + text.len())
            }
            (text, _) => IdRef::Owned(text.into()),
        }
    }
}

#[derive(Debug)]
struct IndexedLine {
    /// The line's bytes in the buffer (without its newline).
    bytes: Range<usize>,
    /// 1-based line number in the file.
    number: usize,
    kind: Kind,
    id: IdRef,
    parent: Option<IdRef>,
    /// Whether the entry needs the v2 → v3 migration (the header read
    /// before it was older).
    legacy: bool,
    /// Filled by a line the quick index could not settle, or on first use
    /// (boxed: most lines are never decoded, and an `Entry` is large).
    entry: OnceCell<Box<Entry>>,
}

/// The top-level fields the tree needs; every other field is skipped
/// (still validated as JSON).
#[derive(Deserialize)]
struct Skeleton<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(rename = "parentId", borrow, default)]
    parent_id: Option<Cow<'a, str>>,
}

/// A session file indexed for reading; see the module documentation.
#[derive(Debug)]
pub struct LazySession {
    bytes: Vec<u8>,
    header: Option<SessionHeader>,
    lines: Vec<IndexedLine>,
    by_id: IdMap,
    diagnostics: Vec<Diagnostic>,
}

impl LazySession {
    /// Reads and indexes a session file.
    pub fn read(path: &Path) -> Result<Self, SessionError> {
        let bytes = std::fs::read(path).map_err(|error| SessionError::Io {
            path: path.to_owned(),
            error,
        })?;
        Ok(Self::parse(bytes))
    }

    /// Indexes the bytes of a session file. Never fails.
    pub fn parse(bytes: Vec<u8>) -> Self {
        let mut session = Self {
            bytes: Vec::new(),
            header: None,
            lines: Vec::new(),
            by_id: IdMap::default(),
            diagnostics: Vec::new(),
        };
        // Lines the index cannot settle are parsed by the eager reader, one
        // at a time, in file order, with the state it keeps (header seen,
        // first parsed line), so its rules and diagnostics apply unchanged.
        let mut eager = SessionFile::empty();
        let mut start = 0;
        let mut number = 0;
        while start < bytes.len() {
            number += 1;
            let end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |at| start + at);
            let torn = end == bytes.len();
            let line = &bytes[start..end];
            let quick = if eager.settled_header() {
                quick_entry(line)
            } else {
                None
            };
            match quick {
                Some((kind, id, parent)) => {
                    eager.note_parsed_line();
                    if torn {
                        eager.diagnose_missing_final_newline(number);
                    }
                    // Like Pi's `byId`, a later duplicate id replaces the earlier one.
                    session
                        .by_id
                        .insert(id.as_ref().into(), session.lines.len());
                    session.lines.push(IndexedLine {
                        bytes: start..end,
                        number,
                        kind,
                        id: IdRef::of(id, line, start),
                        parent: parent.map(|parent| IdRef::of(parent, line, start)),
                        legacy: eager.is_legacy(),
                        entry: OnceCell::new(),
                    });
                }
                None => {
                    if let Some(entry) = eager.read_one_line(number, line, torn) {
                        let kind = match &entry {
                            Entry::Message(_) => Kind::Message,
                            Entry::Compaction(_) => Kind::Compaction,
                            _ => Kind::Other,
                        };
                        session.by_id.insert(entry.id().into(), session.lines.len());
                        session.lines.push(IndexedLine {
                            bytes: start..end,
                            number,
                            kind,
                            id: IdRef::Owned(entry.id().into()),
                            parent: entry.parent_id().map(|parent| IdRef::Owned(parent.into())),
                            legacy: false,
                            entry: OnceCell::from(Box::new(entry)),
                        });
                    }
                }
            }
            start = end + 1;
        }
        session.header = eager.header().cloned();
        session.diagnostics = eager.diagnostics().to_vec();
        session.bytes = bytes;
        session
    }

    /// The text of an id.
    fn text<'s>(&'s self, id: &'s IdRef) -> &'s str {
        match id {
            IdRef::Span(range) => std::str::from_utf8(&self.bytes[range.clone()]).unwrap_or(""),
            IdRef::Owned(text) => text,
        }
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

    /// Whether an entry has this id.
    pub fn contains(&self, id: &str) -> bool {
        self.by_id.contains_key(id)
    }

    /// The entry at `position` (file order), decoded on first use.
    pub fn entry(&self, position: usize) -> &Entry {
        let line = &self.lines[position];
        line.entry.get_or_init(|| {
            let raw = &self.bytes[line.bytes.clone()];
            Box::new(SessionFile::decode_entry_line(raw, line.legacy))
        })
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
                .by_id
                .get(id)
                .copied()
                .or_else(|| self.lines.len().checked_sub(1)),
            Leaf::Last => self.lines.len().checked_sub(1),
        };
        let Some(mut position) = start else {
            return Vec::new();
        };
        let mut path = vec![position];
        let mut seen = vec![false; self.lines.len()];
        seen[position] = true;
        while let Some(parent) = &self.lines[position].parent {
            match self.by_id.get(self.text(parent)) {
                Some(&next) if !seen[next] => {
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
            self.lines[position].kind == Kind::Message
                && matches!(
                    self.entry(position),
                    Entry::Message(message)
                        if matches!(message.message, crate::session::AgentMessage::Assistant(_))
                )
        });
        positions
            .iter()
            .enumerate()
            .filter(|&(at, &position)| {
                at >= from
                    || assistant_before == Some(at)
                    || self.lines[position].kind != Kind::Message
            })
            .map(|(_, &position)| self.entry(position))
            .collect()
    }

    /// Where on the path the messages the context can use begin: the newest
    /// compaction's first kept entry (the compaction itself when it keeps
    /// none), or the start.
    fn context_start(&self, positions: &[usize]) -> usize {
        let Some(at) = positions
            .iter()
            .rposition(|&position| self.lines[position].kind == Kind::Compaction)
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

/// The type, id and parent of a plain entry line, or `None` when the line
/// needs the eager reader's rules (not UTF-8, not a JSON object, a header,
/// an id or parent that is not a string, an unknown entry type).
fn quick_entry(line: &[u8]) -> Option<(Kind, Cow<'_, str>, Option<Cow<'_, str>>)> {
    let skeleton: Skeleton<'_> = serde_json::from_slice(line).ok()?;
    let kind = match skeleton.kind.as_deref()? {
        "message" => Kind::Message,
        "compaction" => Kind::Compaction,
        "thinking_level_change"
        | "model_change"
        | "branch_summary"
        | "custom"
        | "custom_message"
        | "label"
        | "session_info"
        | "usage"
        | "context_edit" => Kind::Other,
        _ => return None,
    };
    Some((kind, skeleton.id.unwrap_or_default(), skeleton.parent_id))
}
