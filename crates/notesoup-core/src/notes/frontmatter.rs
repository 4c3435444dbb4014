//! The note file format: `---\n<key>: <scalar>\n…\n---\n\n<body>`.
//!
//! Parsing is tolerant (BOM, CRLF, block sequences, JSON scalars, a missing
//! or unclosed block reads as all body). Serialization writes the known keys
//! first in a fixed order, then every unknown key verbatim and in its
//! original order.

use jiff::tz::TimeZone;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::NoteError;
use super::time::{local_iso, parse_iso_ms_zoned};
use crate::wire::RefusalCode;

/// Who wrote a note's content.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum NoteOrigin {
    /// The human said it.
    User,
    /// The agent wrote it (the default).
    #[default]
    #[serde(rename = "self")]
    SelfAuthored,
    /// It came from an external source.
    External,
}

impl NoteOrigin {
    /// The stored form: `user`, `self` or `external`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::SelfAuthored => "self",
            Self::External => "external",
        }
    }

    /// Parses `user`, `self` or `external`; anything else is `invalid_origin`.
    pub fn parse(text: &str) -> Result<NoteOrigin, NoteError> {
        match text {
            "user" => Ok(Self::User),
            "self" => Ok(Self::SelfAuthored),
            "external" => Ok(Self::External),
            _ => Err(NoteError::new(
                RefusalCode::InvalidOrigin,
                format!("origin must be user, self, or external (got {text:?})"),
            )),
        }
    }
}

/// An unknown frontmatter key, kept verbatim: its parsed value (for display)
/// and the raw line(s) it was read from (for writing back unchanged).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrontmatterExtra {
    key: String,
    value: Value,
    raw: String,
}

impl FrontmatterExtra {
    /// An extra built from a value, written with the bare-or-JSON rule.
    /// The key must match `^[A-Za-z_][A-Za-z0-9_-]*$` and must not be a known key.
    pub fn new(key: &str, value: Value) -> Option<FrontmatterExtra> {
        if !is_key(key) || KNOWN_KEYS.contains(&key) || key == LEGACY_SCOPE_KEY {
            return None;
        }
        let raw = format!("{key}: {}", scalar_text(&value));
        Some(FrontmatterExtra {
            key: key.to_owned(),
            value,
            raw,
        })
    }

    /// The key.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The parsed value (a block sequence is an array).
    pub fn value(&self) -> &Value {
        &self.value
    }

    /// The exact line(s) written for this key, without a trailing newline.
    pub fn raw(&self) -> &str {
        &self.raw
    }
}

/// A note's metadata. Times are epoch milliseconds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteMeta {
    /// `origin`: who wrote the content.
    pub origin: NoteOrigin,
    /// `createdAt`.
    pub created_at: i64,
    /// `updatedAt`: bumped when the body or origin changes.
    pub updated_at: i64,
    /// `lastAccessed`: set by reads.
    pub last_accessed: i64,
    /// `accessCount`: incremented by reads.
    pub access_count: u64,
    /// `crumpledAt`: present means the note is in the wastebasket.
    pub crumpled_at: Option<i64>,
    /// `project`: the project key of a session note.
    pub project: Option<String>,
    /// Every other key, in file order.
    pub extras: Vec<FrontmatterExtra>,
}

impl NoteMeta {
    /// Metadata of a brand-new note: every time is `now`, no accesses.
    pub fn new_at(now_ms: i64) -> NoteMeta {
        NoteMeta {
            origin: NoteOrigin::SelfAuthored,
            created_at: now_ms,
            updated_at: now_ms,
            last_accessed: now_ms,
            access_count: 0,
            crumpled_at: None,
            project: None,
            extras: Vec::new(),
        }
    }

    /// Whether the note is crumpled (in the wastebasket).
    pub fn is_crumpled(&self) -> bool {
        self.crumpled_at.is_some()
    }

    /// The value of an extra key, if present (the last one wins).
    pub fn extra(&self, key: &str) -> Option<&Value> {
        self.extras
            .iter()
            .rev()
            .find(|extra| extra.key == key)
            .map(|extra| &extra.value)
    }
}

/// The known keys, in the order they are written.
pub(crate) const KNOWN_KEYS: [&str; 7] = [
    "origin",
    "createdAt",
    "updatedAt",
    "lastAccessed",
    "accessCount",
    "crumpledAt",
    "project",
];

/// The legacy `scope` key: read past, never written.
const LEGACY_SCOPE_KEY: &str = "scope";

/// A parsed note file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParsedNote<'a> {
    /// The metadata, with defaults for missing known keys.
    pub meta: NoteMeta,
    /// The body: everything after the frontmatter block and the one blank
    /// line that follows it (the whole text, less a BOM, when there is no
    /// closed block).
    pub body: &'a str,
    /// Whether a closed frontmatter block was found.
    pub has_frontmatter: bool,
}

/// Parses a note file. Missing times default to `now_ms`; times without an
/// offset are read in `tz`.
pub(crate) fn parse_note<'a>(text: &'a str, now_ms: i64, tz: &TimeZone) -> ParsedNote<'a> {
    let split = split_note(text);
    ParsedNote {
        meta: split.meta(now_ms, tz),
        body: split.body,
        has_frontmatter: split.block.is_some(),
    }
}

/// The body of `content`: any leading frontmatter block is stripped.
pub fn strip_frontmatter(content: &str) -> &str {
    split_note(content).body
}

/// Whether `content` leaves a blank body once written: nothing but
/// whitespace and byte order marks after any leading frontmatter block is
/// stripped (what `strip_frontmatter` gives). The human command lines
/// refuse such content unless asked for an empty note.
pub fn is_blank_body(content: &str) -> bool {
    strip_frontmatter(content)
        .chars()
        .all(|c| c.is_whitespace() || c == '\u{feff}')
}

/// A note file cut into its frontmatter block and body, with the metadata
/// not yet parsed (search reads metadata only for notes that match).
#[derive(Debug, Clone, Copy)]
pub(crate) struct SplitNote<'a> {
    /// The lines between the `---` fences, when the block is closed.
    block: Option<&'a str>,
    /// Everything after the block and the one blank line that follows it.
    pub(crate) body: &'a str,
}

impl SplitNote<'_> {
    /// Whether the note has a closed frontmatter block.
    pub(crate) fn has_block(&self) -> bool {
        self.block.is_some()
    }

    /// The lines between the fences, when the block is closed.
    pub(crate) fn block_text(&self) -> Option<&str> {
        self.block
    }

    /// Parses the metadata of the block (defaults when there is none).
    pub(crate) fn meta(&self, now_ms: i64, tz: &TimeZone) -> NoteMeta {
        self.meta_and_inputs(now_ms, tz).0
    }

    /// [`Self::meta`], and which of its times the time of the call and the
    /// zone decided: what a cache must know to keep the parse.
    pub(crate) fn meta_and_inputs(&self, now_ms: i64, tz: &TimeZone) -> (NoteMeta, TimeInputs) {
        let mut meta = NoteMeta::new_at(now_ms);
        let mut inputs = TimeInputs {
            clock: [true, true, true, false],
            zone: [false; 4],
        };
        if let Some(block) = self.block {
            let mut rest = block;
            let mut lines = Vec::new();
            while let Some(line) = next_line(&mut rest) {
                lines.push(line);
            }
            for field in read_fields(&lines) {
                apply_field(&mut meta, &mut inputs, field, now_ms, tz);
            }
        }
        (meta, inputs)
    }
}

/// What decided the times of a parse, each of `createdAt`, `updatedAt`,
/// `lastAccessed` and `crumpledAt` in that order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TimeInputs {
    /// The time is the time of the call (missing or unreadable).
    pub(crate) clock: [bool; 4],
    /// The zone decided it (a date-time without offset).
    pub(crate) zone: [bool; 4],
}

/// Finds the frontmatter block: a BOM is skipped, the first line must be
/// `---` and a later `---` line closes it; otherwise all is body.
pub(crate) fn split_note(text: &str) -> SplitNote<'_> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let unfenced = SplitNote {
        block: None,
        body: text,
    };
    let mut rest = text;
    if next_line(&mut rest) != Some("---") {
        return unfenced;
    }
    let block_start = text.len() - rest.len();
    loop {
        let line_start = text.len() - rest.len();
        let Some(line) = next_line(&mut rest) else {
            return unfenced;
        };
        if line == "---" {
            let body = rest
                .strip_prefix("\r\n")
                .or_else(|| rest.strip_prefix('\n'))
                .unwrap_or(rest);
            return SplitNote {
                block: Some(&text[block_start..line_start]),
                body,
            };
        }
    }
}

/// How many leading bytes of a note file settle its metadata, or `None`
/// when `head` (the start of a longer file) does not yet: the first line
/// when it is not `---`, else through the closing `---` line. Only lines
/// ended by `\n` count, so a longer file can never read differently; the
/// cut is on a line boundary, so it never splits a character.
pub(crate) fn settled_head_len(head: &[u8]) -> Option<usize> {
    let start = if head.starts_with(b"\xEF\xBB\xBF") {
        3
    } else {
        0
    };
    let mut at = start;
    let mut fence_open = false;
    while let Some(end) = memchr::memchr(b'\n', &head[at..]) {
        let line = &head[at..at + end];
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        at += end + 1;
        let is_fence = line == b"---";
        if !fence_open {
            if !is_fence {
                return Some(at);
            }
            fence_open = true;
        } else if is_fence {
            return Some(at);
        }
    }
    None
}

/// `text` with its access recorded and nothing else changed: in its
/// frontmatter block, every `lastAccessed` and `accessCount` line given the
/// new value in place (each added just before the closing fence when the
/// block lacks it); every other byte, field, order and the body kept as
/// they are. `None` when the note has no closed frontmatter block: a read
/// never gives a note a block it did not have, so it records no access
/// there.
pub(crate) fn with_access(text: &str, last_accessed: &str, access_count: u64) -> Option<String> {
    let start = if text.starts_with('\u{feff}') {
        '\u{feff}'.len_utf8()
    } else {
        0
    };
    let mut lines = LineSpans { text, at: start };
    let fence = lines.next()?;
    if fence.content != "---" {
        return None;
    }
    let newline = if fence.ending.is_empty() {
        "\n"
    } else {
        fence.ending
    };
    let mut out = String::with_capacity(text.len() + 64);
    out.push_str(&text[..fence.end]);
    let (mut set_accessed, mut set_count) = (false, false);
    // A replaced key's sequence items (`key:` then `- item` lines) go with it.
    let mut dropping_items = false;
    loop {
        let line = lines.next()?;
        if line.content == "---" {
            if !set_accessed {
                out.push_str(&format!("lastAccessed: {last_accessed}{newline}"));
            }
            if !set_count {
                out.push_str(&format!("accessCount: {access_count}{newline}"));
            }
            out.push_str(&text[line.start..]);
            return Some(out);
        }
        if dropping_items && sequence_item(line.content).is_some() {
            continue;
        }
        dropping_items = false;
        let ending = if line.ending.is_empty() {
            newline
        } else {
            line.ending
        };
        match split_key(line.content) {
            Some(("lastAccessed", value)) => {
                out.push_str(&format!("lastAccessed: {last_accessed}{ending}"));
                set_accessed = true;
                dropping_items = value.trim().is_empty();
            }
            Some(("accessCount", value)) => {
                out.push_str(&format!("accessCount: {access_count}{ending}"));
                set_count = true;
                dropping_items = value.trim().is_empty();
            }
            _ => out.push_str(&text[line.start..line.end]),
        }
    }
}

/// One line of a text: where it starts, its content (without its ending),
/// its ending (`\n`, `\r\n` or none at the end) and where the next starts.
struct LineSpan<'a> {
    start: usize,
    content: &'a str,
    ending: &'a str,
    end: usize,
}

/// The lines of `text` from byte `at`.
struct LineSpans<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Iterator for LineSpans<'a> {
    type Item = LineSpan<'a>;

    fn next(&mut self) -> Option<LineSpan<'a>> {
        let start = self.at;
        let rest = &self.text[start..];
        if rest.is_empty() {
            return None;
        }
        let (line, end) = match memchr::memchr(b'\n', rest.as_bytes()) {
            Some(newline) => (&rest[..newline], start + newline + 1),
            None => (rest, self.text.len()),
        };
        self.at = end;
        let content = line.strip_suffix('\r').unwrap_or(line);
        Some(LineSpan {
            start,
            content,
            ending: &self.text[start + content.len()..end],
            end,
        })
    }
}

/// Takes the next line off `rest` (without `\n` or `\r\n`); `None` at the end.
fn next_line<'a>(rest: &mut &'a str) -> Option<&'a str> {
    if rest.is_empty() {
        return None;
    }
    let (line, tail) = match memchr::memchr(b'\n', rest.as_bytes()) {
        Some(end) => (&rest[..end], &rest[end + 1..]),
        None => (*rest, ""),
    };
    *rest = tail;
    Some(line.strip_suffix('\r').unwrap_or(line))
}

struct Field {
    key: String,
    value: Value,
    raw: String,
}

fn read_fields(lines: &[&str]) -> Vec<Field> {
    let mut fields: Vec<Field> = Vec::new();
    let mut index = 0;
    while index < lines.len() {
        let line = lines[index];
        index += 1;
        let Some((key, value_text)) = split_key(line) else {
            // A line before the first key cannot belong to anything; later
            // stray lines stay attached to the key above them verbatim.
            if let Some(field) = fields.last_mut() {
                field.raw.push('\n');
                field.raw.push_str(line);
            }
            continue;
        };
        let mut raw = line.to_owned();
        let value_text = value_text.trim();
        let value = if value_text.is_empty() {
            let mut items = Vec::new();
            while let Some(item) = lines.get(index).and_then(|line| sequence_item(line)) {
                items.push(parse_scalar(item));
                raw.push('\n');
                raw.push_str(lines[index]);
                index += 1;
            }
            Value::Array(items)
        } else {
            parse_scalar(value_text)
        };
        fields.push(Field {
            key: key.to_owned(),
            value,
            raw,
        });
    }
    fields
}

/// Splits a key line `^([A-Za-z_][A-Za-z0-9_-]*):(.*)$`.
fn split_key(line: &str) -> Option<(&str, &str)> {
    let colon = line.find(':')?;
    let key = &line[..colon];
    is_key(key).then(|| (key, &line[colon + 1..]))
}

fn is_key(key: &str) -> bool {
    let mut bytes = key.bytes();
    bytes
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The item text of a block-sequence line `- item` (leading indentation allowed).
fn sequence_item(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix('-')?;
    if rest.is_empty() {
        return Some("");
    }
    rest.starts_with([' ', '\t']).then(|| rest.trim())
}

/// A scalar is JSON-parsed; failing that, surrounding quotes are stripped;
/// failing that, the trimmed text is used.
fn parse_scalar(text: &str) -> Value {
    let text = text.trim();
    if could_be_json(text)
        && let Ok(value) = serde_json::from_str::<Value>(text)
    {
        return value;
    }
    for quote in ['"', '\''] {
        if text.len() >= 2
            && let Some(inner) = text
                .strip_prefix(quote)
                .and_then(|inner| inner.strip_suffix(quote))
        {
            return Value::String(inner.to_owned());
        }
    }
    Value::String(text.to_owned())
}

/// A cheap test that skips the JSON parser for text it must reject
/// (timestamps, words, paths): JSON starts with a quote, a bracket, a brace,
/// `true`/`false`/`null`, or is a number.
fn could_be_json(text: &str) -> bool {
    match text.as_bytes().first() {
        Some(b'"' | b'[' | b'{') => true,
        Some(b'-' | b'0'..=b'9') => text
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E')),
        Some(_) => matches!(text, "true" | "false" | "null"),
        None => false,
    }
}

fn apply_field(
    meta: &mut NoteMeta,
    inputs: &mut TimeInputs,
    field: Field,
    now_ms: i64,
    tz: &TimeZone,
) {
    // The time of field `index` (of `TimeInputs`), noting what decided it.
    let mut time = |index: usize, value: &Value| {
        let (ms, zoned) = time_ms(value, tz);
        inputs.clock[index] = ms.is_none();
        inputs.zone[index] = zoned;
        ms.unwrap_or(now_ms)
    };
    match field.key.as_str() {
        "origin" => {
            meta.origin = field
                .value
                .as_str()
                .and_then(|text| NoteOrigin::parse(text).ok())
                .unwrap_or_default();
        }
        "createdAt" => meta.created_at = time(0, &field.value),
        "updatedAt" => meta.updated_at = time(1, &field.value),
        "lastAccessed" => meta.last_accessed = time(2, &field.value),
        "accessCount" => meta.access_count = count(&field.value).unwrap_or(0),
        "crumpledAt" => {
            meta.crumpled_at = match &field.value {
                Value::String(text) if !text.is_empty() => Some(time(3, &field.value)),
                Value::Number(_) => Some(time(3, &field.value)),
                _ => {
                    (inputs.clock[3], inputs.zone[3]) = (false, false);
                    None
                }
            };
        }
        "project" => {
            meta.project = match field.value {
                Value::String(text) if !text.is_empty() => Some(text),
                Value::Number(number) => Some(number.to_string()),
                _ => None,
            };
        }
        LEGACY_SCOPE_KEY => {}
        _ => meta.extras.push(FrontmatterExtra {
            key: field.key,
            value: field.value,
            raw: field.raw,
        }),
    }
}

/// A time field's value in epoch milliseconds, and whether `tz` decided
/// it (see [`parse_iso_ms_zoned`]).
fn time_ms(value: &Value, tz: &TimeZone) -> (Option<i64>, bool) {
    match value {
        Value::String(text) => parse_iso_ms_zoned(text, tz),
        Value::Number(number) => (
            number
                .as_i64()
                .or_else(|| number.as_f64().map(|ms| ms as i64)),
            false,
        ),
        _ => (None, false),
    }
}

fn count(value: &Value) -> Option<u64> {
    match value {
        Value::Number(number) => number.as_u64(),
        Value::String(text) if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) => {
            text.parse().ok()
        }
        _ => None,
    }
}

/// The frontmatter block `---\n…\n---\n` for `meta`, times written as local
/// ISO in `tz`.
pub(crate) fn serialize_frontmatter(meta: &NoteMeta, tz: &TimeZone) -> String {
    let mut out = String::with_capacity(256);
    out.push_str("---\n");
    let mut line = |key: &str, value: &str| {
        out.push_str(key);
        out.push_str(": ");
        out.push_str(value);
        out.push('\n');
    };
    line("origin", meta.origin.as_str());
    line("createdAt", &local_iso(meta.created_at, tz));
    line("updatedAt", &local_iso(meta.updated_at, tz));
    line("lastAccessed", &local_iso(meta.last_accessed, tz));
    line("accessCount", &meta.access_count.to_string());
    if let Some(crumpled_at) = meta.crumpled_at {
        line("crumpledAt", &local_iso(crumpled_at, tz));
    }
    if let Some(project) = &meta.project {
        line("project", &scalar_text(&Value::String(project.clone())));
    }
    for extra in &meta.extras {
        out.push_str(&extra.raw);
        out.push('\n');
    }
    out.push_str("---\n");
    out
}

/// The whole file: the frontmatter block, one blank line, the body.
pub(crate) fn serialize_note(meta: &NoteMeta, body: &str, tz: &TimeZone) -> String {
    let mut out = serialize_frontmatter(meta, tz);
    out.reserve(body.len() + 1);
    out.push('\n');
    out.push_str(body);
    out
}

/// A value as written after `key: `: a string matching
/// `^[A-Za-z0-9_.+\-:/]+$` that is not `true false null yes no on off ~`
/// (any case) is written bare; everything else as compact JSON. A bare form
/// that would read back as a JSON number (e.g. `"123"`) is quoted as well,
/// so the value keeps its type.
pub(crate) fn scalar_text(value: &Value) -> String {
    if let Value::String(text) = value
        && is_bare(text)
    {
        return text.clone();
    }
    value.to_string()
}

fn is_bare(text: &str) -> bool {
    const RESERVED: [&str; 8] = ["true", "false", "null", "yes", "no", "on", "off", "~"];
    !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.+-:/".contains(&b))
        && !RESERVED.iter().any(|word| word.eq_ignore_ascii_case(text))
        && serde_json::from_str::<Value>(text).is_err()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn blank_bodies_are_blank_after_the_bom_and_frontmatter() {
        for blank in [
            "",
            " \t",
            "\n",
            "\r\n\r\n",
            "\u{feff}",
            "\u{feff}\u{feff} ",
            "---\na: 1\n---\n",
            "---\na: 1\n---\n\n  \n",
            "\u{feff}---\r\na: 1\r\n---\r\n",
            "\u{a0}\u{3000}",
        ] {
            assert!(is_blank_body(blank), "{blank:?}");
        }
        for text in [
            "x",
            " x ",
            "---\na: 1\n---\n\nx",
            "---\nunclosed",
            "\u{200b}",
        ] {
            assert!(!is_blank_body(text), "{text:?}");
        }
    }

    #[test]
    fn the_no_session_refusal_is_a_whole_sentence() {
        let message = crate::notes::error::NO_SESSION_MESSAGE;
        assert!(message.ends_with("@model/ are available."), "{message}");
    }

    #[test]
    fn settled_heads() {
        for (head, expect) in [
            ("", None),
            ("--", None),
            ("---", None),
            ("---\nupdatedAt: 1\n", None),
            ("---\nupdatedAt: 1\n---", None),
            ("---\nupdatedAt: 1\n---\n\nbody", Some(21)),
            ("---\r\na: 1\r\n---\r\nbody", Some(16)),
            ("\u{feff}---\na: 1\n---\n", Some(16)),
            ("# Title\n---\n", Some(8)),
            ("# Title", None),
            ("----\n---\n", Some(5)),
        ] {
            assert_eq!(settled_head_len(head.as_bytes()), expect, "{head:?}");
        }
    }

    /// Lines the frontmatter splitter treats specially, so generated notes
    /// hit fences, CRLF and BOMs often.
    fn note_text() -> impl Strategy<Value = String> {
        let line = prop_oneof![
            Just("---".to_owned()),
            Just("---\r".to_owned()),
            Just("\u{feff}---".to_owned()),
            Just(String::new()),
            "[a-zA-Z]{1,6}: [a-z0-9 -]{0,8}",
            "[ -~é]{0,12}",
        ];
        prop::collection::vec(line, 0..8).prop_map(|lines| lines.join("\n"))
    }

    proptest! {
        /// Whatever prefix of a note settles its head, the metadata read
        /// from that head is the metadata of the whole note.
        #[test]
        fn a_settled_head_reads_like_the_whole_note(text in note_text(), cut in 0usize..200) {
            let bytes = text.as_bytes();
            let head = &bytes[..cut.min(bytes.len())];
            if let Some(len) = settled_head_len(head) {
                let tz = TimeZone::UTC;
                let head = std::str::from_utf8(&bytes[..len]).expect("a line boundary");
                prop_assert_eq!(split_note(head).meta(0, &tz), split_note(&text).meta(0, &tz));
                prop_assert_eq!(split_note(head).block, split_note(&text).block);
            }
        }
    }

    #[test]
    fn bare_or_quoted() {
        for (value, expect) in [
            ("self", "self"),
            (
                "2026-09-15T17:31:45.392+08:00",
                "2026-09-15T17:31:45.392+08:00",
            ),
            ("a b", "\"a b\""),
            ("Yes", "\"Yes\""),
            ("~", "\"~\""),
            ("123", "\"123\""),
            ("", "\"\""),
            ("naïve", "\"naïve\""),
        ] {
            assert_eq!(
                scalar_text(&Value::String(value.into())),
                expect,
                "{value:?}"
            );
        }
    }

    /// A read sets the access lines and changes no other byte.
    #[test]
    fn recording_access_changes_only_the_access_lines() {
        let at = "2026-02-02T00:00:00.000+00:00";
        for (note, expect) in [
            (
                "---\nzeta: 1\nlastAccessed: old\norigin: self\naccessCount: 4\n---\n\nbody\n",
                Some(format!(
                    "---\nzeta: 1\nlastAccessed: {at}\norigin: self\naccessCount: 5\n---\n\nbody\n"
                )),
            ),
            // Lacking them, the two lines are added at the block's end.
            (
                "---\ntitle: x\n---\nbody",
                Some(format!(
                    "---\ntitle: x\nlastAccessed: {at}\naccessCount: 5\n---\nbody"
                )),
            ),
            // Line endings and a byte order mark are kept.
            (
                "\u{feff}---\r\naccessCount: 1\r\nx: y\r\n---\r\nbody\r\n",
                Some(format!(
                    "\u{feff}---\r\naccessCount: 5\r\nx: y\r\nlastAccessed: {at}\r\n---\r\nbody\r\n"
                )),
            ),
            // A sequence under a replaced key goes with it.
            (
                "---\naccessCount:\n  - 1\n  - 2\nlastAccessed: a\n---\n",
                Some(format!("---\naccessCount: 5\nlastAccessed: {at}\n---\n")),
            ),
            // No block, or an unclosed one: never given a block.
            ("plain text\n", None),
            ("---\nunclosed: 1\n", None),
            ("", None),
        ] {
            assert_eq!(with_access(note, at, 5), expect, "{note:?}");
        }
    }

    proptest! {
        /// Whatever the block holds, the note reads back with the new
        /// access and every other field as it was.
        #[test]
        fn recorded_access_reads_back(
            fields in proptest::collection::vec(
                ("[a-z]{1,8}", "[a-z0-9 ]{0,12}"),
                0..6,
            ),
            body in "[a-z\n]{0,40}",
        ) {
            let tz = TimeZone::UTC;
            let mut note = String::from("---\n");
            for (key, value) in &fields {
                note.push_str(&format!("{key}: {value}\n"));
            }
            note.push_str("---\n\n");
            note.push_str(&body);
            let at = 1_770_000_000_000;
            let recorded = with_access(&note, &local_iso(at, &tz), 9);
            prop_assert!(recorded.is_some());
            let recorded = recorded.unwrap_or_default();
            let before = parse_note(&note, 0, &tz);
            let after = parse_note(&recorded, 0, &tz);
            prop_assert_eq!(after.body, before.body);
            prop_assert_eq!(after.meta.last_accessed, at);
            prop_assert_eq!(after.meta.access_count, 9);
            prop_assert_eq!(&after.meta.extras, &before.meta.extras);
            prop_assert_eq!(after.meta.created_at, before.meta.created_at);
            prop_assert_eq!(after.meta.origin, before.meta.origin);
        }
    }
}
