//! Reading session files the way Pi does, without ever losing a byte.
//!
//! Pi skips blank and malformed lines, decodes invalid UTF-8 with
//! replacement characters and accepts a last line without a newline. This
//! reader does the same, reports every irregular line as a [`Diagnostic`]
//! with its line number, and keeps each line's original bytes so that a
//! rewrite reproduces them exactly.

use std::fmt;
use std::path::Path;

use notesoup_core::plumbing::{Links, open_regular};
use serde_json::{Map, Value};

use super::SessionError;
use super::entry::{CURRENT_SESSION_VERSION, Entry, SessionHeader, UnknownEntry};
use super::message::from_map;
use super::tree::EntryIndex;

/// What is irregular about a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DiagnosticCode {
    /// The line is not JSON (Pi skips it).
    InvalidJson,
    /// The line is JSON but not an object (Pi would index it as a nameless entry).
    NotAnObject,
    /// The line holds invalid UTF-8; it was read with replacement characters, as Pi does.
    InvalidUtf8,
    /// The last line has no newline and is not JSON: a torn write.
    TruncatedLine,
    /// The last line is valid but has no newline; Pi appends one on load.
    MissingFinalNewline,
    /// The first parsed line is not a `session` header; Pi refuses such a file.
    MissingHeader,
    /// A `session` header after the first one (Pi ignores it).
    ExtraHeader,
    /// The header's version predates v2 (no entry ids); Pi would migrate and rewrite the file.
    LegacyVersion,
    /// An entry `type` this crate does not know; kept as an untyped entry.
    UnknownEntryType,
    /// A known entry type whose fields do not match Pi's shape; kept as an untyped entry.
    MalformedEntry,
    /// A line longer than notesoup reads (core's `LineRead::MAX_BYTES`), passed
    /// over unread by the streaming reader.
    LineTooLong,
}

impl DiagnosticCode {
    /// A stable snake_case code.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidJson => "invalid_json",
            Self::NotAnObject => "not_an_object",
            Self::InvalidUtf8 => "invalid_utf8",
            Self::TruncatedLine => "truncated_line",
            Self::MissingFinalNewline => "missing_final_newline",
            Self::MissingHeader => "missing_header",
            Self::ExtraHeader => "extra_header",
            Self::LegacyVersion => "legacy_version",
            Self::UnknownEntryType => "unknown_entry_type",
            Self::MalformedEntry => "malformed_entry",
            Self::LineTooLong => "line_too_long",
        }
    }
}

/// One irregular line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub code: DiagnosticCode,
    /// Details for a human.
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}: {}: {}",
            self.line,
            self.code.as_str(),
            self.message
        )
    }
}

/// A physical line of the file, for rewriting.
#[derive(Debug, Clone)]
pub(crate) enum Line {
    /// The header; `raw` is `None` when it was created in memory.
    Header { raw: Option<Box<[u8]>> },
    /// `entries[index]`; `raw` is `None` when it was appended in memory.
    Entry {
        index: usize,
        raw: Option<Box<[u8]>>,
    },
    /// A blank, garbage, non-object or extra-header line, kept verbatim.
    Foreign(Box<[u8]>),
}

/// A session file: header, entries in file order, diagnostics, and the
/// original lines for a lossless rewrite.
#[derive(Debug, Clone)]
pub struct SessionFile {
    pub(crate) header: Option<SessionHeader>,
    pub(crate) entries: Vec<Entry>,
    pub(crate) lines: Vec<Line>,
    pub(crate) diagnostics: Vec<Diagnostic>,
    header_first: bool,
    /// Whether a line has parsed as JSON yet (the first one must be the header).
    seen_parsed: bool,
}

impl SessionFile {
    /// An empty file with this header (nothing is written yet).
    pub fn new(header: SessionHeader) -> Self {
        Self {
            header: Some(header),
            entries: Vec::new(),
            lines: vec![Line::Header { raw: None }],
            diagnostics: Vec::new(),
            header_first: true,
            seen_parsed: true,
        }
    }

    /// A reader with nothing read yet, fed one line at a time by
    /// [`super::LazySession`].
    pub(crate) fn empty() -> Self {
        Self {
            header: None,
            entries: Vec::new(),
            lines: Vec::new(),
            diagnostics: Vec::new(),
            header_first: false,
            seen_parsed: false,
        }
    }

    /// Reads and parses a session file.
    pub fn read(path: &Path) -> Result<Self, SessionError> {
        let mut file = open_session_file(path)?;
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut file, &mut bytes).map_err(|error| SessionError::Io {
            path: path.to_owned(),
            error,
        })?;
        Ok(Self::parse(&bytes))
    }

    /// Parses the bytes of a session file. Never fails: irregular lines
    /// become diagnostics and are kept verbatim.
    pub fn parse(bytes: &[u8]) -> Self {
        let mut file = Self::empty();
        let mut segments: Vec<&[u8]> = bytes.split(|byte| *byte == b'\n').collect();
        // A file ending in "\n" leaves an empty last segment, which is no line.
        let torn = match segments.last() {
            Some([]) => {
                segments.pop();
                false
            }
            Some(_) => true,
            None => false,
        };
        let count = segments.len();
        for (index, raw) in segments.into_iter().enumerate() {
            let is_torn = torn && index + 1 == count;
            file.read_line(index + 1, raw, is_torn);
        }
        file
    }

    /// Whether lines from here on are entries by the plain rules: the first
    /// parsed line was the header.
    pub(crate) fn settled_header(&self) -> bool {
        self.seen_parsed && self.header_first
    }

    /// A line over `max_line` bytes, passed over unread elsewhere.
    pub(crate) fn diagnose_too_long(&mut self, line: usize, bytes: u64, max_line: usize) {
        self.diagnose(
            line,
            DiagnosticCode::LineTooLong,
            format!("{bytes} bytes, over the limit of {max_line}; skipped unread"),
        );
    }

    /// A valid last line without its newline, indexed elsewhere.
    pub(crate) fn diagnose_missing_final_newline(&mut self, line: usize) {
        self.diagnose(
            line,
            DiagnosticCode::MissingFinalNewline,
            "the last line has no newline",
        );
    }

    /// Reads one line by this reader's rules; returns the entry it became,
    /// if any (and keeps no copy of it or of the line).
    pub(crate) fn read_one_line(&mut self, number: usize, raw: &[u8], torn: bool) -> Option<Entry> {
        let before = self.entries.len();
        self.read_line(number, raw, torn);
        self.lines.clear();
        (self.entries.len() > before)
            .then(|| self.entries.pop())
            .flatten()
    }

    /// Decodes a line the lazy index found to be a plain entry: a JSON
    /// object of a known type with string (or absent) id and parent.
    /// `legacy` applies the v2 → v3 migration.
    pub(crate) fn decode_entry_line(raw: &[u8], legacy: bool) -> Entry {
        let mut scratch = Self::empty();
        scratch.seen_parsed = true;
        scratch.header_first = true;
        let text = String::from_utf8_lossy(raw);
        let map: Map<String, Value> = serde_json::from_str(&text).unwrap_or_default();
        scratch.read_entry(0, raw, &text, map, legacy);
        scratch
            .entries
            .pop()
            .unwrap_or_else(|| Entry::Unknown(UnknownEntry(Map::new())))
    }

    fn diagnose(&mut self, line: usize, code: DiagnosticCode, message: impl Into<String>) {
        self.diagnostics.push(Diagnostic {
            line,
            code,
            message: message.into(),
        });
    }

    /// A line that is not read: diagnosed, and kept as it is for a rewrite.
    fn keep_foreign(
        &mut self,
        number: usize,
        raw: &[u8],
        code: DiagnosticCode,
        message: impl Into<String>,
    ) {
        self.diagnose(number, code, message);
        self.lines.push(Line::Foreign(raw.into()));
    }

    fn read_line(&mut self, number: usize, raw: &[u8], torn: bool) {
        let text = match std::str::from_utf8(raw) {
            Ok(text) => std::borrow::Cow::Borrowed(text),
            Err(err) => {
                self.diagnose(
                    number,
                    DiagnosticCode::InvalidUtf8,
                    format!(
                        "invalid UTF-8 at byte {}; read with replacement characters",
                        err.valid_up_to()
                    ),
                );
                String::from_utf8_lossy(raw)
            }
        };
        if text.trim().is_empty() {
            self.lines.push(Line::Foreign(raw.into()));
            return;
        }
        let value: Value = match serde_json::from_str(&text) {
            Ok(value) => value,
            Err(err) => {
                let code = if torn {
                    DiagnosticCode::TruncatedLine
                } else {
                    DiagnosticCode::InvalidJson
                };
                self.keep_foreign(
                    number,
                    raw,
                    code,
                    format!("not JSON ({err}); skipped as Pi does, kept on rewrite"),
                );
                return;
            }
        };
        if torn {
            self.diagnose(
                number,
                DiagnosticCode::MissingFinalNewline,
                "the last line has no newline",
            );
        }
        let Value::Object(map) = value else {
            self.keep_foreign(
                number,
                raw,
                DiagnosticCode::NotAnObject,
                "a JSON value that is not an object; ignored",
            );
            return;
        };
        let first_parsed = !std::mem::replace(&mut self.seen_parsed, true);
        if map.get("type").and_then(Value::as_str) == Some("session") {
            self.read_header(number, raw, map, first_parsed);
            return;
        }
        if first_parsed {
            self.diagnose(
                number,
                DiagnosticCode::MissingHeader,
                "the first line is not a session header; Pi refuses this file",
            );
        }
        let legacy = self.is_legacy();
        self.read_entry(number, raw, &text, map, legacy);
    }

    /// Whether entries read now need the v2 → v3 migration.
    pub(crate) fn is_legacy(&self) -> bool {
        self.header
            .as_ref()
            .is_some_and(|header| header.version() < 3)
    }

    fn read_header(
        &mut self,
        number: usize,
        raw: &[u8],
        mut map: Map<String, Value>,
        first_parsed: bool,
    ) {
        if self.header.is_some() {
            self.keep_foreign(
                number,
                raw,
                DiagnosticCode::ExtraHeader,
                "a second session header; ignored as Pi does",
            );
            return;
        }
        map.shift_remove("type");
        match from_map::<SessionHeader>(map) {
            Ok(header) => {
                if header.version() < 2 {
                    self.diagnose(
                        number,
                        DiagnosticCode::LegacyVersion,
                        format!("session version {} has no entry ids; Pi migrates it to v{CURRENT_SESSION_VERSION} and rewrites the file", header.version()),
                    );
                }
                self.header = Some(header);
                self.header_first = first_parsed;
                self.lines.push(Line::Header {
                    raw: Some(raw.into()),
                });
            }
            Err(err) => {
                let (code, outcome) = if first_parsed {
                    (DiagnosticCode::MissingHeader, "Pi refuses this file")
                } else {
                    (DiagnosticCode::ExtraHeader, "ignored")
                };
                self.keep_foreign(
                    number,
                    raw,
                    code,
                    format!("malformed session header ({err}); {outcome}"),
                );
            }
        }
    }

    fn read_entry(
        &mut self,
        number: usize,
        raw: &[u8],
        text: &str,
        mut map: Map<String, Value>,
        legacy: bool,
    ) {
        // v2 → v3: the role `hookMessage` became `custom`.
        if legacy {
            migrate_hook_message(&mut map);
        }
        let entry = match from_map::<Entry>(map) {
            Ok(Entry::Unknown(unknown)) => {
                let kind = unknown
                    .entry_type()
                    .map_or_else(|| "(none)".to_owned(), |kind| format!("{kind:?}"));
                self.diagnose(
                    number,
                    DiagnosticCode::UnknownEntryType,
                    format!("entry type {kind} is not known; kept untyped"),
                );
                Entry::Unknown(unknown)
            }
            Ok(entry) => entry,
            Err(err) => {
                // Only on this rare path is the line parsed a second time, to keep it whole.
                let mut map: Map<String, Value> = serde_json::from_str(text).unwrap_or_default();
                let kind = map
                    .get("type")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned();
                if legacy {
                    migrate_hook_message(&mut map);
                }
                self.diagnose(
                    number,
                    DiagnosticCode::MalformedEntry,
                    format!("{kind} entry does not match Pi's shape ({err}); kept untyped"),
                );
                Entry::Unknown(UnknownEntry(map))
            }
        };
        self.lines.push(Line::Entry {
            index: self.entries.len(),
            raw: Some(raw.into()),
        });
        self.entries.push(entry);
    }

    /// The header, if the file has one.
    pub fn header(&self) -> Option<&SessionHeader> {
        self.header.as_ref()
    }

    /// Every entry in file order (Pi's `getEntries()`).
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// Every irregular line, in file order.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    /// Whether Pi would load this file: its first parsed line is a session header.
    pub fn is_loadable_by_pi(&self) -> bool {
        self.header.is_some() && self.header_first
    }

    /// An id index over the entries.
    pub fn index(&self) -> EntryIndex<'_> {
        EntryIndex::new(&self.entries)
    }

    /// Adds an entry at the end, as a new line.
    pub fn push(&mut self, entry: Entry) {
        self.lines.push(Line::Entry {
            index: self.entries.len(),
            raw: None,
        });
        self.entries.push(entry);
    }
}

fn migrate_hook_message(map: &mut Map<String, Value>) {
    if map.get("type").and_then(Value::as_str) != Some("message") {
        return;
    }
    if let Some(Value::Object(message)) = map.get_mut("message")
        && message.get("role").and_then(Value::as_str) == Some("hookMessage")
    {
        message.insert("role".into(), Value::String("custom".into()));
    }
}

/// Opens a session file for reading. A FIFO or device under the name is
/// refused unopened, never waited on (core's non-blocking open); a missing
/// file is named in the OS's own words.
pub(crate) fn open_session_file(path: &Path) -> Result<std::fs::File, SessionError> {
    let failed = |error| SessionError::Io {
        path: path.to_owned(),
        error,
    };
    match open_regular(path, Links::Follow) {
        Ok(Some(file)) => Ok(file),
        Ok(None) => {
            Err(failed(std::fs::metadata(path).err().unwrap_or_else(|| {
                std::io::Error::from(std::io::ErrorKind::NotFound)
            })))
        }
        Err(error) => Err(failed(error.into_io())),
    }
}
