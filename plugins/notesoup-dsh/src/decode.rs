//! Serde models of the dsh JSON notesoup reads: the session log envelope, the
//! surface operation, messages and their sources, and the JSONL file layout.
//!
//! Unknown fields are tolerated everywhere: dsh grows its vocabulary, and
//! notesoup reads only what its decisions need. The pinned dsh version is
//! recorded here, in one place.

use std::io::BufRead;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The one dsh version this crate is built and tested against.
pub const PINNED_DSH_VERSION: &str = "0.1.0-rc.8";
/// The session-log format version of the pinned dsh.
pub const SESSION_FORMAT_VERSION: u64 = 0;
/// The `source.plugin` of messages notesoup appends (reset markers, notices).
pub const NOTESOUP_PLUGIN: &str = "notesoup";
/// The `source.plugin` of dsh's runtime-context snapshots.
pub const SYSTEM_PROMPT_PLUGIN: &str = "@deepseek-ai/dsh-system-prompt";
/// The prompt-context (and snapshot section) name of the boot.
pub const BOOT_SECTION: &str = "notesoup:boot";

/// A refusal to decode dsh JSON.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    /// A line or value is not the JSON shape dsh writes.
    #[error("line {line}: {message}")]
    Malformed {
        /// 1-based line number (0 for a value that came from no file).
        line: usize,
        /// What was wrong.
        message: String,
    },
    /// The log was written by another session format.
    #[error(
        "session format version {found} is not {SESSION_FORMAT_VERSION} (dsh {PINNED_DSH_VERSION})"
    )]
    Version {
        /// The version in the header.
        found: u64,
    },
    /// The file could not be read.
    #[error("reading the session log: {0}")]
    Io(#[from] std::io::Error),
}

/// How a surface event entered the model-visible surface.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RawSurfaceOp", into = "RawSurfaceOp")]
pub enum SurfaceOp {
    /// Added at the tail.
    Append,
    /// Replaced the surface nodes from `start` through `end` (inclusive seqs).
    Replace {
        /// First shadowed surface node.
        start: u64,
        /// Last shadowed surface node.
        end: u64,
    },
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
enum RawSurfaceOp {
    Word(String),
    Replace { op: String, start: u64, end: u64 },
}

impl TryFrom<RawSurfaceOp> for SurfaceOp {
    type Error = String;

    fn try_from(raw: RawSurfaceOp) -> Result<Self, Self::Error> {
        match raw {
            RawSurfaceOp::Word(word) if word == "append" => Ok(SurfaceOp::Append),
            RawSurfaceOp::Replace { op, start, end } if op == "replace" => {
                Ok(SurfaceOp::Replace { start, end })
            }
            other => Err(format!("unknown surfaceOp {other:?}")),
        }
    }
}

impl From<SurfaceOp> for RawSurfaceOp {
    fn from(op: SurfaceOp) -> Self {
        match op {
            SurfaceOp::Append => RawSurfaceOp::Word("append".into()),
            SurfaceOp::Replace { start, end } => RawSurfaceOp::Replace {
                op: "replace".into(),
                start,
                end,
            },
        }
    }
}

/// One entry of a dsh session log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionEvent {
    /// The event type, e.g. `user/message`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The append-only sequence number, from 0.
    pub seq: u64,
    /// Epoch milliseconds.
    #[serde(default)]
    pub time: Option<i64>,
    /// The type-specific payload, kept as JSON.
    #[serde(default)]
    pub data: Value,
    /// Present on surface events.
    #[serde(rename = "surfaceOp", default, skip_serializing_if = "Option::is_none")]
    pub surface_op: Option<SurfaceOp>,
    /// Earlier events this one cites.
    #[serde(
        rename = "sourceEventSeqs",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub source_event_seqs: Option<Vec<u64>>,
}

/// Where a message came from (`source` on dsh messages).
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
pub struct MessageSource {
    /// `user`, `plugin`, `model` or `tool`.
    #[serde(default)]
    pub kind: String,
    /// The producing plugin, for `kind: plugin`.
    #[serde(default)]
    pub plugin: Option<String>,
    /// The declared context form (`snapshot`, `notice`, …).
    #[serde(default)]
    pub form: Option<String>,
    /// A snapshot's named sections.
    #[serde(default)]
    pub sections: Vec<SnapshotSection>,
    /// notesoup's own marker field: the window a reset opened.
    #[serde(rename = "windowId", default)]
    pub window_id: Option<String>,
    /// notesoup's own marker field: `normal` or `forced`.
    #[serde(default)]
    pub origin: Option<String>,
    /// notesoup's own notice field: `reminder`, `warning`, `close-out` or
    /// `continuation`.
    #[serde(default)]
    pub notice: Option<String>,
}

impl MessageSource {
    /// Whether notesoup produced the message.
    pub fn is_notesoup(&self) -> bool {
        self.kind == "plugin" && self.plugin.as_deref() == Some(NOTESOUP_PLUGIN)
    }

    /// The text of the named snapshot section.
    pub fn section(&self, name: &str) -> Option<&str> {
        self.sections
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.text.as_str())
    }
}

/// One named contribution of a snapshot-form context.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct SnapshotSection {
    /// The contributing subsystem.
    pub name: String,
    /// Its model-facing text.
    pub text: String,
}

/// A tool call requested by the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCallBlock {
    /// The provider-issued call id.
    pub id: String,
    /// The tool name.
    pub name: String,
    /// The raw JSON arguments string.
    pub arguments: String,
}

/// A tool result as logged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolResultView {
    /// The call it answers.
    pub call_id: String,
    /// The text blocks of the result, joined.
    pub text: String,
    /// Whether the call failed.
    pub is_error: bool,
}

impl SessionEvent {
    /// An event of the tests: no time, no cited events.
    #[cfg(test)]
    pub(crate) fn test_event(seq: u64, kind: &str, data: Value, op: Option<SurfaceOp>) -> Self {
        Self {
            kind: kind.into(),
            seq,
            time: None,
            data,
            surface_op: op,
            source_event_seqs: None,
        }
    }

    /// The message of a `user/message`, `assistant/message` or `tool/result`.
    fn message(&self) -> Option<&Value> {
        match self.kind.as_str() {
            "user/message" => Some(&self.data),
            "assistant/message" | "tool/result" => self.data.get("message"),
            _ => None,
        }
    }

    /// The message source, for message events.
    pub fn source(&self) -> Option<MessageSource> {
        let source = self.message()?.get("source")?;
        MessageSource::deserialize(source).ok()
    }

    /// The message's text blocks joined with blank lines (reasoning and tool
    /// blocks excluded).
    pub fn text(&self) -> String {
        let blocks = self
            .message()
            .and_then(|m| m.get("content"))
            .and_then(Value::as_array);
        join_text(blocks.map(Vec::as_slice).unwrap_or_default())
    }

    /// The tool calls of an `assistant/message`.
    pub fn tool_calls(&self) -> Vec<ToolCallBlock> {
        if self.kind != "assistant/message" {
            return Vec::new();
        }
        let Some(blocks) = self
            .message()
            .and_then(|m| m.get("content"))
            .and_then(Value::as_array)
        else {
            return Vec::new();
        };
        blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool-call"))
            .map(|b| ToolCallBlock {
                id: str_field(b, "id"),
                name: str_field(b, "name"),
                arguments: str_field(b, "arguments"),
            })
            .collect()
    }

    /// The result of a `tool/result`.
    pub fn tool_result(&self) -> Option<ToolResultView> {
        if self.kind != "tool/result" {
            return None;
        }
        let block = self.message()?.get("content")?.as_array()?.first()?;
        let inner = block.get("content").and_then(Value::as_array);
        Some(ToolResultView {
            call_id: str_field(block, "toolCallId"),
            text: join_text(inner.map(Vec::as_slice).unwrap_or_default()),
            is_error: block
                .get("isError")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        })
    }

    /// The change in open tool calls this surface event makes: `+calls` for
    /// an assistant message, `-1` for a tool result (dsh's pairing balance).
    pub fn pairing_delta(&self) -> i64 {
        match self.kind.as_str() {
            "assistant/message" => self.tool_calls().len() as i64,
            "tool/result" => -1,
            _ => 0,
        }
    }
}

fn str_field(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

fn join_text(blocks: &[Value]) -> String {
    let mut out = String::new();
    for block in blocks {
        if block.get("type").and_then(Value::as_str) != Some("text") {
            continue;
        }
        if let Some(text) = block.get("text").and_then(Value::as_str) {
            if !out.is_empty() {
                out.push_str("\n\n");
            }
            out.push_str(text);
        }
    }
    out
}

/// The first line of a JSONL session log.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct DshSessionHeader {
    /// The session format version.
    pub version: u64,
    /// `session-<uuid>`.
    pub id: String,
    /// The working directory.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Epoch milliseconds.
    #[serde(rename = "createdAt", default)]
    pub created_at: Option<i64>,
    /// The forked-from session.
    #[serde(rename = "parentSession", default)]
    pub parent_session: Option<String>,
    /// Subagent depth; 0 for a top-level session.
    #[serde(rename = "delegationDepth", default)]
    pub delegation_depth: u64,
}

/// A whole session log read from disk.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionLog {
    /// The header line.
    pub header: DshSessionHeader,
    /// Every event, packed chunk runs expanded, in seq order.
    pub events: Vec<SessionEvent>,
}

/// Reads an uncompressed `session.jsonl` (`compression: none`).
///
/// Packed `*-chunks` storage rows expand to one `assistant/chunk` placeholder
/// per member (notesoup never reads chunk payloads, only their seqs). A torn
/// last line (a crash mid-append) is dropped, as dsh's repair does.
pub fn read_session_jsonl(reader: impl BufRead) -> Result<SessionLog, DecodeError> {
    let mut header = None;
    let mut events = Vec::new();
    let mut lines = reader.lines().enumerate().peekable();
    while let Some((index, line)) = lines.next() {
        let line = line?;
        let number = index + 1;
        if line.trim().is_empty() {
            continue;
        }
        let value: Value = match serde_json::from_str(&line) {
            Ok(value) => value,
            Err(_) if lines.peek().is_none() => break,
            Err(err) => return Err(malformed(number, err)),
        };
        if header.is_none() {
            let parsed = DshSessionHeader::deserialize(&value).map_err(|e| malformed(number, e))?;
            if parsed.version != SESSION_FORMAT_VERSION {
                return Err(DecodeError::Version {
                    found: parsed.version,
                });
            }
            header = Some(parsed);
            continue;
        }
        match value.get("type").and_then(Value::as_str) {
            Some("text-chunks" | "reasoning-chunks" | "tool-call-chunks") => {
                expand_chunk_row(&value, number, &mut events)?
            }
            _ => events.push(SessionEvent::deserialize(&value).map_err(|e| malformed(number, e))?),
        }
    }
    let header = header.ok_or_else(|| DecodeError::Malformed {
        line: 1,
        message: "the log has no session header".into(),
    })?;
    Ok(SessionLog { header, events })
}

fn expand_chunk_row(
    row: &Value,
    line: usize,
    events: &mut Vec<SessionEvent>,
) -> Result<(), DecodeError> {
    let seq0 = row
        .get("seq0")
        .and_then(Value::as_u64)
        .ok_or_else(|| malformed(line, "packed chunk row without seq0"))?;
    let data = row.get("data");
    let members = ["texts", "args"]
        .iter()
        .find_map(|key| data?.get(key)?.as_array())
        .ok_or_else(|| malformed(line, "packed chunk row without members"))?;
    let time = row.get("time0").and_then(Value::as_i64);
    for k in 0..members.len() as u64 {
        events.push(SessionEvent {
            kind: "assistant/chunk".into(),
            seq: seq0 + k,
            time,
            data: Value::Null,
            surface_op: None,
            source_event_seqs: None,
        });
    }
    Ok(())
}

fn malformed(line: usize, err: impl std::fmt::Display) -> DecodeError {
    DecodeError::Malformed {
        line,
        message: err.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event(value: Value) -> SessionEvent {
        serde_json::from_value(value).expect("event")
    }

    #[test]
    fn surface_ops_round_trip() {
        for (raw, op) in [
            (json!("append"), SurfaceOp::Append),
            (
                json!({"op": "replace", "start": 7, "end": 29}),
                SurfaceOp::Replace { start: 7, end: 29 },
            ),
        ] {
            let parsed: SurfaceOp = serde_json::from_value(raw.clone()).expect("parse");
            assert_eq!(parsed, op);
            assert_eq!(serde_json::to_value(parsed).expect("serialize"), raw);
        }
        assert!(serde_json::from_value::<SurfaceOp>(json!("prepend")).is_err());
        assert!(
            serde_json::from_value::<SurfaceOp>(json!({"op": "cut", "start": 1, "end": 2}))
                .is_err()
        );
    }

    #[test]
    fn messages_expose_text_sources_and_tools() {
        let user = event(json!({"type": "user/message", "seq": 8, "time": 1,
            "data": {"role": "user", "id": "m", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
                     "source": {"kind": "plugin", "plugin": "@deepseek-ai/dsh-system-prompt", "form": "snapshot",
                                "sections": [{"name": "notesoup:boot", "text": "BOOT"}], "extra": 1}},
            "surfaceOp": "append"}));
        assert_eq!(user.text(), "a\n\nb");
        let source = user.source().expect("source");
        assert_eq!(source.section(BOOT_SECTION), Some("BOOT"));
        assert!(!source.is_notesoup());

        let assistant = event(json!({"type": "assistant/message", "seq": 18,
            "data": {"message": {"role": "assistant", "content": [
                {"type": "text", "text": "calling"},
                {"type": "tool-call", "id": "call_1", "name": "notes_write", "arguments": "{}"}],
                "source": {"kind": "model", "provider": "p", "model": "m"}}},
            "surfaceOp": "append"}));
        assert_eq!(assistant.pairing_delta(), 1);
        assert_eq!(assistant.tool_calls()[0].name, "notes_write");

        let result = event(json!({"type": "tool/result", "seq": 21,
            "data": {"message": {"source": {"kind": "tool", "callId": "call_1"},
                "content": [{"type": "tool-result", "toolCallId": "call_1", "isError": true,
                             "content": [{"type": "text", "text": "boom"}]}]}},
            "surfaceOp": "append"}));
        assert_eq!(
            result.tool_result(),
            Some(ToolResultView {
                call_id: "call_1".into(),
                text: "boom".into(),
                is_error: true
            })
        );
        assert_eq!(result.pairing_delta(), -1);
    }

    #[test]
    fn jsonl_expands_chunk_rows_and_drops_a_torn_tail() {
        let text = concat!(
            r#"{"type":"session","version":0,"id":"session-1","createdAt":5,"cwd":"/p","delegationDepth":0}"#,
            "\n",
            r#"{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}"#,
            "\n",
            r#"{"type":"text-chunks","seq0":1,"time0":2,"data":{"turn":1,"step":1,"index":0,"dt":[0,0],"texts":["a","b","c"]}}"#,
            "\n",
            r#"{"type":"turn/end","seq":4,"time":3,"data":{"turn":1}}"#,
            "\n",
            r#"{"type":"turn/sta"#,
        );
        let log = read_session_jsonl(text.as_bytes()).expect("log");
        assert_eq!(log.header.id, "session-1");
        let seqs: Vec<u64> = log.events.iter().map(|e| e.seq).collect();
        assert_eq!(seqs, [0, 1, 2, 3, 4]);
    }

    #[test]
    fn jsonl_refuses_other_versions_and_garbage() {
        let newer = r#"{"type":"session","version":3,"id":"s"}"#;
        assert!(matches!(
            read_session_jsonl(newer.as_bytes()),
            Err(DecodeError::Version { found: 3 })
        ));
        let garbage = "{\"type\":\"session\",\"version\":0,\"id\":\"s\"}\nnot json\n{}\n";
        assert!(matches!(
            read_session_jsonl(garbage.as_bytes()),
            Err(DecodeError::Malformed { line: 2, .. })
        ));
    }
}
