//! Writing session lines with Pi's key order and number format.

use std::fs::OpenOptions;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

use serde::Serialize;

use super::SessionError;
use super::entry::{Entry, SessionHeader};
use super::reader::{Line, SessionFile};
use crate::json::to_js_writer;

/// One entry as Pi's `JSON.stringify(entry)` writes it (no newline).
pub fn entry_line(entry: &Entry) -> Result<String, SessionError> {
    js_line(entry)
}

/// The header as Pi writes it (no newline).
pub fn header_line(header: &SessionHeader) -> Result<String, SessionError> {
    js_line(header)
}

fn js_line<T: Serialize>(value: &T) -> Result<String, SessionError> {
    let mut out = Vec::with_capacity(256);
    to_js_writer(&mut out, value).map_err(SessionError::Serialize)?;
    String::from_utf8(out)
        .map_err(|err| SessionError::Serialize(serde::ser::Error::custom(err.to_string())))
}

impl SessionFile {
    /// The whole file. Lines read from disk are written back byte for byte
    /// (garbage and unknown entries included); lines added in memory are
    /// serialised like Pi. Every line ends with a newline, which repairs a
    /// torn last line the way Pi does.
    pub fn to_jsonl(&self) -> Result<Vec<u8>, SessionError> {
        let mut out = Vec::new();
        for line in &self.lines {
            match line {
                Line::Header { raw: Some(raw) }
                | Line::Entry { raw: Some(raw), .. }
                | Line::Foreign(raw) => {
                    out.extend_from_slice(raw);
                }
                Line::Header { raw: None } => {
                    if let Some(header) = &self.header {
                        out.extend_from_slice(header_line(header)?.as_bytes());
                    }
                }
                Line::Entry { index, raw: None } => {
                    if let Some(entry) = self.entries.get(*index) {
                        out.extend_from_slice(entry_line(entry)?.as_bytes());
                    }
                }
            }
            out.push(b'\n');
        }
        Ok(out)
    }

    /// Writes the whole file with core's durable write (a temporary file in
    /// the same directory, fsync, rename, directory fsync), so a crash leaves
    /// either the old or the new file.
    pub fn write_to(&self, path: &Path) -> Result<(), SessionError> {
        let bytes = self.to_jsonl()?;
        notesoup_core::durable::write(path, &bytes).map_err(|error| SessionError::Io {
            path: path.to_owned(),
            error,
        })
    }
}

/// Appends one entry to an existing session file, as Pi's `appendFileSync`
/// does. A torn last line first gets its newline, so the new line stays whole.
pub fn append_entry(path: &Path, entry: &Entry) -> Result<(), SessionError> {
    let line = entry_line(entry)?;
    let io = |error| SessionError::Io {
        path: path.to_owned(),
        error,
    };
    let mut file = OpenOptions::new()
        .read(true)
        .append(true)
        .open(path)
        .map_err(io)?;
    let length = file.metadata().map_err(io)?.len();
    let mut buffer = Vec::with_capacity(line.len() + 2);
    if length > 0 {
        let mut last = [0u8; 1];
        file.seek(SeekFrom::End(-1)).map_err(io)?;
        file.read_exact(&mut last).map_err(io)?;
        if last[0] != b'\n' {
            buffer.push(b'\n');
        }
    }
    buffer.extend_from_slice(line.as_bytes());
    buffer.push(b'\n');
    file.write_all(&buffer).map_err(io)
}
