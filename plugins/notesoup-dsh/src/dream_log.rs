//! The dreamer's session log, followed while dsh writes it: headless dsh
//! prints only its last answer, so its session log (`compression: none`,
//! appended in whole lines, a batch at most every 200 ms) is where the
//! dreamer's tool calls show as they happen. Each `tool/call` is told to
//! the dream's progress as it is read, and every `write`, `edit` and
//! `delete` is kept for the report, as is the last assistant text.
//!
//! Bounded: a line is read in pieces and never held past the cap (an
//! over-long one is discarded as it streams past); an incomplete last line
//! waits for the rest while dsh runs. A line that cannot be read (over the
//! cap, not JSON, too many tokens, a header of another format) or a torn
//! last line once dsh has ended is a refusal: the run fails naming it,
//! since a write it held would be missing from the report.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use notesoup_core::dream::{DreamResult, DreamWrite};
use notesoup_core::plumbing::LineRead;
use serde::Deserialize;
use serde_json::Value;

use crate::decode::{DshSessionHeader, SESSION_FORMAT_VERSION, SessionEvent};

/// The log's file name under `<root>/--<cwd>--/<session>/`.
const LOG_NAME: &str = "session.jsonl";

/// How much is read from the log at a time.
const READ_CHUNK: usize = 64 * 1024;

/// A session log being followed.
#[derive(Debug)]
pub struct LogFollower {
    /// The sessions root the dreamer's overlay names.
    root: PathBuf,
    /// The log, once dsh has published it.
    file: Option<File>,
    /// The bytes of the line being read, up to the cap.
    line: Vec<u8>,
    /// The length so far of an over-long line being discarded.
    discarding: Option<u64>,
    /// The longest line kept.
    cap: usize,
    /// The number of the line being read, from 1.
    line_number: usize,
    /// Whether the header has been read.
    header_read: bool,
    /// The writes and the report so far.
    result: DreamResult,
    /// Why a line was refused, the first time one was.
    refused: Option<String>,
}

impl LogFollower {
    /// Follows the one session log dsh will write under `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self::with_cap(root, LineRead::MAX_BYTES)
    }

    /// [`new`](Self::new) with lines capped at `cap` bytes, so tests need
    /// not write 16 MiB.
    pub fn with_cap(root: impl Into<PathBuf>, cap: usize) -> Self {
        Self {
            root: root.into(),
            file: None,
            line: Vec::new(),
            discarding: None,
            cap,
            line_number: 1,
            header_read: false,
            result: DreamResult::default(),
            refused: None,
        }
    }

    /// Reads what dsh has appended since the last read, telling
    /// `on_tool_call` of each tool call in it. Before dsh has published the
    /// log this finds nothing; a read that fails is tried again next time.
    pub fn poll(&mut self, on_tool_call: &dyn Fn(&str, &Value)) {
        if self.file.is_none() {
            self.file = find_log(&self.root).and_then(|path| File::open(path).ok());
        }
        let Some(mut file) = self.file.take() else {
            return;
        };
        let mut chunk = vec![0; READ_CHUNK];
        loop {
            match file.read(&mut chunk) {
                Ok(0) => break,
                Ok(read) => self.take(chunk.get(..read).unwrap_or_default(), on_tool_call),
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            }
        }
        self.file = Some(file);
    }

    /// Once dsh has ended: the rest of the log read, and what it held (the
    /// writes, the last assistant text as the report) with the refusal, if
    /// a line was refused.
    pub fn finish(mut self, on_tool_call: &dyn Fn(&str, &Value)) -> FollowedLog {
        self.poll(on_tool_call);
        if let Some(bytes) = self.discarding.take() {
            self.refuse_too_long(bytes);
        } else if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            if serde_json::from_slice::<Value>(&line).is_ok() {
                self.read_line(&line, on_tool_call);
            } else {
                let number = self.line_number;
                self.refuse(format!(
                    "line {number} of dsh's session log is torn ({} bytes without an end); the dreamer's last event is missing",
                    line.len()
                ));
            }
        }
        FollowedLog {
            found: self.file.is_some(),
            result: self.result,
            refused: self.refused,
        }
    }

    /// Takes newly read bytes: whole lines are read, the rest waits.
    fn take(&mut self, mut bytes: &[u8], on_tool_call: &dyn Fn(&str, &Value)) {
        while !bytes.is_empty() {
            let newline = bytes.iter().position(|byte| *byte == b'\n');
            let (piece, rest) = match newline {
                Some(at) => (&bytes[..at], &bytes[at + 1..]),
                None => (bytes, &[][..]),
            };
            bytes = rest;
            match self.discarding.as_mut() {
                Some(discarded) => *discarded = discarded.saturating_add(piece.len() as u64),
                None if self.line.len().saturating_add(piece.len()) > self.cap => {
                    self.discarding = Some((self.line.len() + piece.len()) as u64);
                    self.line = Vec::new();
                }
                None => self.line.extend_from_slice(piece),
            }
            if newline.is_none() {
                break;
            }
            if let Some(bytes) = self.discarding.take() {
                self.refuse_too_long(bytes);
            } else {
                let line = std::mem::take(&mut self.line);
                self.read_line(&line, on_tool_call);
            }
            self.line_number += 1;
        }
    }

    /// Reads one whole line.
    fn read_line(&mut self, line: &[u8], on_tool_call: &dyn Fn(&str, &Value)) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        let number = self.line_number;
        if LineRead::too_many_tokens(line, LineRead::MAX_TOKENS) {
            return self.refuse(format!(
                "line {number} of dsh's session log holds more than {} JSON values",
                LineRead::MAX_TOKENS
            ));
        }
        let value: Value = match serde_json::from_slice(line) {
            Ok(value) => value,
            Err(error) => {
                return self.refuse(format!(
                    "line {number} of dsh's session log is not JSON: {error}"
                ));
            }
        };
        if !self.header_read {
            self.header_read = true;
            match DshSessionHeader::deserialize(&value) {
                Ok(header) if header.version == SESSION_FORMAT_VERSION => {}
                Ok(header) => self.refuse(format!(
                    "dsh's session log has format version {}; notesoup reads version {SESSION_FORMAT_VERSION}",
                    header.version
                )),
                Err(error) => self.refuse(format!(
                    "dsh's session log does not start with a session header: {error}"
                )),
            }
            return;
        }
        match value.get("type").and_then(Value::as_str) {
            Some("tool/call") => {
                let data = value.get("data");
                let name = data
                    .and_then(|data| data.get("name"))
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let arguments = data
                    .and_then(|data| data.get("arguments"))
                    .and_then(Value::as_str)
                    .and_then(|raw| serde_json::from_str::<Value>(raw).ok())
                    .unwrap_or(Value::Null);
                on_tool_call(name, &arguments);
                self.result
                    .writes
                    .extend(DreamWrite::from_tool_event(name, &arguments));
            }
            Some("assistant/message") => {
                if let Ok(event) = SessionEvent::deserialize(&value) {
                    let text = event.text();
                    if !text.trim().is_empty() {
                        self.result.report = text;
                    }
                }
            }
            _ => {}
        }
    }

    fn refuse_too_long(&mut self, bytes: u64) {
        let number = self.line_number;
        let cap = self.cap;
        self.refuse(format!(
            "line {number} of dsh's session log is {bytes} bytes, over the limit of {cap}; it was skipped"
        ));
    }

    fn refuse(&mut self, reason: String) {
        self.refused.get_or_insert(reason);
    }
}

/// What a followed log held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FollowedLog {
    /// Whether dsh wrote a log at all.
    pub found: bool,
    /// The writes the dreamer asked for and its last assistant text as the
    /// report (no error set).
    pub result: DreamResult,
    /// Why a line of it was refused: the writes may be incomplete.
    pub refused: Option<String>,
}

/// The session log under `root` (`<root>/--<cwd>--/<session>/session.jsonl`;
/// the dreamer creates one session), once dsh has published it.
fn find_log(root: &Path) -> Option<PathBuf> {
    let projects = std::fs::read_dir(root).ok()?;
    let mut found: Vec<PathBuf> = projects
        .flatten()
        .filter_map(|project| std::fs::read_dir(project.path()).ok())
        .flat_map(|sessions| sessions.flatten())
        .map(|session| session.path().join(LOG_NAME))
        .filter(|log| log.is_file())
        .collect();
    found.sort();
    found.into_iter().next()
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::io::Write;

    use super::*;

    const HEADER: &str = r#"{"type":"session","version":0,"id":"session-1","delegationDepth":0}"#;

    fn call(seq: u64, name: &str, path: &str) -> String {
        let arguments = serde_json::json!({"path": path}).to_string();
        serde_json::json!({"type": "tool/call", "seq": seq, "data": {"callId": format!("c{seq}"), "name": name, "arguments": arguments}}).to_string()
    }

    fn answer(seq: u64, text: &str) -> String {
        serde_json::json!({"type": "assistant/message", "seq": seq, "data": {"message": {"content": [{"type": "text", "text": text}]}}}).to_string()
    }

    struct Log {
        dir: tempfile::TempDir,
        file: Option<File>,
    }

    impl Log {
        fn new() -> Self {
            Self {
                dir: tempfile::tempdir().expect("tempdir"),
                file: None,
            }
        }

        fn root(&self) -> PathBuf {
            self.dir.path().join("sessions")
        }

        fn append(&mut self, bytes: &[u8]) {
            let file = self.file.get_or_insert_with(|| {
                let dir = self.dir.path().join("sessions/--work--/session-1");
                std::fs::create_dir_all(&dir).expect("mkdir");
                File::create(dir.join(LOG_NAME)).expect("create")
            });
            file.write_all(bytes).expect("append");
        }
    }

    #[test]
    fn calls_are_told_as_they_are_appended_and_a_line_waits_for_its_end() {
        let mut log = Log::new();
        let mut follower = LogFollower::new(log.root());
        let told = RefCell::new(Vec::new());
        let tell = |name: &str, arguments: &Value| {
            told.borrow_mut().push(format!(
                "{name} {}",
                arguments["path"].as_str().unwrap_or("")
            ));
        };
        follower.poll(&tell);
        assert!(told.borrow().is_empty(), "no log yet");

        log.append(format!("{HEADER}\n{}\n", call(0, "ls", "human")).as_bytes());
        follower.poll(&tell);
        assert_eq!(*told.borrow(), ["ls human"]);

        // Half a line is not read until the rest comes.
        let write = call(1, "write", "human/a.md");
        let (first, second) = write.split_at(20);
        log.append(first.as_bytes());
        follower.poll(&tell);
        assert_eq!(told.borrow().len(), 1);
        log.append(format!("{second}\n{}\n", answer(2, "Report: done.")).as_bytes());
        follower.poll(&tell);
        assert_eq!(*told.borrow(), ["ls human", "write human/a.md"]);

        let followed = follower.finish(&tell);
        assert!(followed.found);
        assert_eq!(followed.refused, None);
        assert_eq!(followed.result.report, "Report: done.");
        assert_eq!(followed.result.writes.len(), 1);
        assert_eq!(told.borrow().len(), 2, "each call told once");
    }

    #[test]
    fn an_over_long_line_is_skipped_unheld_and_refused() {
        let mut log = Log::new();
        let mut follower = LogFollower::with_cap(log.root(), 200);
        let told = RefCell::new(0);
        let tell = |_: &str, _: &Value| *told.borrow_mut() += 1;
        log.append(format!("{HEADER}\n").as_bytes());
        let long = call(0, "write", &"x".repeat(1000));
        // Streamed past in pieces, none held whole.
        for piece in long.as_bytes().chunks(150) {
            log.append(piece);
            follower.poll(&tell);
            assert!(follower.line.len() <= 200);
        }
        log.append(format!("\n{}\n", call(1, "delete", "human/old.md")).as_bytes());
        let followed = follower.finish(&tell);
        assert_eq!(*told.borrow(), 1, "the line after it is read");
        assert_eq!(
            followed.refused.as_deref(),
            Some(format!(
                "line 2 of dsh's session log is {} bytes, over the limit of 200; it was skipped",
                long.len()
            ))
            .as_deref()
        );
        assert_eq!(followed.result.writes.len(), 1);
    }

    #[test]
    fn a_line_of_the_cap_s_length_is_read_and_one_byte_more_is_not() {
        let line = call(
            0,
            "write",
            &format!("human/{}.md", "a".repeat(HEADER.len())),
        );
        for (cap, read) in [(line.len(), true), (line.len() - 1, false)] {
            let mut log = Log::new();
            let follower = LogFollower::with_cap(log.root(), cap);
            log.append(format!("{HEADER}\n{line}\n").as_bytes());
            let followed = follower.finish(&|_, _| {});
            assert_eq!(followed.refused.is_none(), read, "cap {cap}");
            assert_eq!(followed.result.writes.len(), usize::from(read), "cap {cap}");
        }
    }

    #[test]
    fn a_torn_end_bad_json_and_a_foreign_header_are_refused() {
        let quiet = |_: &str, _: &Value| {};

        let mut log = Log::new();
        let follower = LogFollower::new(log.root());
        let torn = r#"{"type":"tool/c"#;
        log.append(format!("{HEADER}\n{}\n{torn}", call(0, "ls", "x")).as_bytes());
        let followed = follower.finish(&quiet);
        assert_eq!(
            followed.refused,
            Some(format!(
                "line 3 of dsh's session log is torn ({} bytes without an end); the dreamer's last event is missing",
                torn.len()
            ))
        );

        let mut log = Log::new();
        let follower = LogFollower::new(log.root());
        log.append(format!("{HEADER}\nnot json\n{}\n", answer(1, "Report.")).as_bytes());
        let followed = follower.finish(&quiet);
        assert!(
            followed
                .refused
                .as_deref()
                .is_some_and(|r| r.starts_with("line 2 of dsh's session log is not JSON: ")),
            "{followed:?}"
        );
        assert_eq!(followed.result.report, "Report.", "read on past it");

        let mut log = Log::new();
        let follower = LogFollower::new(log.root());
        log.append(b"{\"type\":\"session\",\"version\":3,\"id\":\"s\"}\n");
        let followed = follower.finish(&quiet);
        assert_eq!(
            followed.refused.as_deref(),
            Some("dsh's session log has format version 3; notesoup reads version 0")
        );

        let log = Log::new();
        let followed = LogFollower::new(log.root()).finish(&quiet);
        assert!(!followed.found);
        assert_eq!(followed.refused, None);
    }

    #[test]
    fn a_line_of_many_values_is_refused_before_it_is_parsed() {
        let mut log = Log::new();
        let follower = LogFollower::new(log.root());
        let values = vec!["0"; LineRead::MAX_TOKENS + 2].join(",");
        log.append(format!("{HEADER}\n[{values}]\n").as_bytes());
        let followed = follower.finish(&|_, _| {});
        assert_eq!(
            followed.refused.as_deref(),
            Some(format!(
                "line 2 of dsh's session log holds more than {} JSON values",
                LineRead::MAX_TOKENS
            ))
            .as_deref()
        );
    }
}
