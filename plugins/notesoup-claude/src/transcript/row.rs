//! One row of a Claude Code transcript (JSONL), read tolerantly: only the
//! fields notesoup uses are typed, everything else is ignored, and a row
//! that does not parse is skipped by the caller rather than failing a read.

use serde::Deserialize;
use serde_json::Value;

/// The model name Claude Code writes on rows it made up itself
/// ("No response requested."); they carry all-zero usage.
pub const SYNTHETIC_MODEL: &str = "<synthetic>";

/// A transcript row.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Row {
    /// `user`, `assistant`, `system`, `attachment`, or a bookkeeping kind.
    #[serde(rename = "type")]
    pub kind: String,
    /// For `system` rows: `compact_boundary`, `stop_hook_summary`, …
    pub subtype: Option<String>,
    /// Message rows have one; bookkeeping rows do not.
    pub uuid: Option<String>,
    /// The previous row of the thread (null at a root and after a boundary).
    pub parent_uuid: Option<String>,
    /// On a compact boundary: the last row before it.
    pub logical_parent_uuid: Option<String>,
    /// Subagent (sidechain) rows are not part of the main thread.
    pub is_sidechain: bool,
    /// Harness-made rows (caveats and the like).
    pub is_meta: bool,
    /// The summary row that follows a compact boundary.
    pub is_compact_summary: bool,
    /// ISO time the row was written.
    pub timestamp: Option<String>,
    /// The Claude session id.
    pub session_id: Option<String>,
    /// `user` and `assistant` rows: the API message.
    pub message: Option<Message>,
    /// `attachment` rows.
    pub attachment: Option<Attachment>,
    /// `system` rows: their text.
    pub content: Option<Value>,
    /// `assistant` rows: the model id the user asked for (may carry `[1m]`).
    pub requested_model: Option<String>,
    /// On a compact boundary: what it preserved.
    pub compact_metadata: Option<CompactMetadata>,
}

impl Row {
    /// Parses one JSONL line; `None` for anything that is not a JSON object
    /// of the expected shape (garbage, a torn last line).
    pub fn parse(line: &[u8]) -> Option<Self> {
        serde_json::from_slice(line).ok()
    }

    /// A `system/compact_boundary` row.
    pub fn is_compact_boundary(&self) -> bool {
        self.kind == "system" && self.subtype.as_deref() == Some("compact_boundary")
    }

    /// An assistant row Claude Code made up itself.
    pub fn is_synthetic(&self) -> bool {
        self.message
            .as_ref()
            .is_some_and(|m| m.model.as_deref() == Some(SYNTHETIC_MODEL))
    }

    /// A main-thread assistant row from the model (not synthetic, not a
    /// sidechain).
    pub fn is_model_reply(&self) -> bool {
        self.kind == "assistant" && !self.is_sidechain && !self.is_synthetic()
    }

    /// The texts of a `hook_additional_context` attachment.
    pub fn hook_context(&self) -> Option<(&str, Vec<&str>)> {
        let attachment = self.attachment.as_ref()?;
        if attachment.kind != "hook_additional_context" {
            return None;
        }
        let texts = match &attachment.content {
            Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).collect(),
            Some(Value::String(text)) => vec![text.as_str()],
            _ => Vec::new(),
        };
        Some((attachment.hook_event.as_deref().unwrap_or(""), texts))
    }
}

/// The API message of a `user` or `assistant` row.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Message {
    /// The API message id; several assistant rows may share one.
    pub id: Option<String>,
    /// The model that answered.
    pub model: Option<String>,
    /// A string (a typed prompt) or content blocks.
    pub content: Option<Value>,
    /// Token usage of the request that produced this message.
    pub usage: Option<Usage>,
}

/// Token usage of one API response.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Usage {
    /// Uncached input tokens.
    pub input_tokens: u64,
    /// Input tokens written to the cache.
    pub cache_creation_input_tokens: u64,
    /// Input tokens read from the cache.
    pub cache_read_input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
}

impl Usage {
    /// The size of the next request: everything sent plus what came back.
    /// This is the figure Claude Code reports as `context_tokens`.
    pub fn context_tokens(&self) -> u64 {
        self.input_tokens
            .saturating_add(self.cache_creation_input_tokens)
            .saturating_add(self.cache_read_input_tokens)
            .saturating_add(self.output_tokens)
    }
}

/// The payload of an `attachment` row.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Attachment {
    /// `hook_additional_context`, `hook_success`, `environment`, …
    #[serde(rename = "type")]
    pub kind: String,
    /// For hook context: the injected texts.
    pub content: Option<Value>,
    /// For hook rows: the event (`SessionStart`, `UserPromptSubmit`, …).
    pub hook_event: Option<String>,
}

/// What a compact boundary kept of the old window.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct CompactMetadata {
    /// The preserved segment, when messages were kept verbatim.
    pub preserved_segment: Option<PreservedSegment>,
}

/// Rows kept verbatim across a compaction; rows after the summary hang off
/// `anchor_uuid`, an id that names no row.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct PreservedSegment {
    /// The id later rows use as their parent.
    pub anchor_uuid: Option<String>,
}

/// A content block of a message.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Block {
    /// Text.
    Text {
        /// The text.
        #[serde(default)]
        text: String,
    },
    /// A tool call.
    ToolUse {
        /// The `tool_use` id.
        #[serde(default)]
        id: String,
        /// The tool's name.
        #[serde(default)]
        name: String,
        /// Its arguments.
        #[serde(default)]
        input: Value,
    },
    /// A tool's result.
    ToolResult {
        /// The call it answers.
        #[serde(default)]
        tool_use_id: String,
        /// A string or blocks.
        #[serde(default)]
        content: Value,
        /// Whether the tool failed.
        #[serde(default)]
        is_error: bool,
    },
    /// Thinking, images, server tools and anything newer.
    #[serde(other)]
    Other,
}

/// The blocks of a message's content; a string content is one text block.
/// Blocks that do not parse are dropped one by one.
pub fn blocks(content: Option<&Value>) -> Vec<Block> {
    match content {
        Some(Value::String(text)) => vec![Block::Text { text: text.clone() }],
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|item| Block::deserialize(item).ok())
            .collect(),
        _ => Vec::new(),
    }
}

/// The text of a tool result's content (a string, or text blocks joined by
/// newlines; other blocks are named by their type).
pub fn result_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(items) => {
            let parts: Vec<String> = items
                .iter()
                .map(|item| match item.get("text").and_then(Value::as_str) {
                    Some(text) => text.to_owned(),
                    None => format!(
                        "[{}]",
                        item.get("type")
                            .and_then(Value::as_str)
                            .unwrap_or("content")
                    ),
                })
                .collect();
            parts.join("\n")
        }
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_parse_tolerantly() {
        let row = Row::parse(br#"{"type":"assistant","uuid":"u","isSidechain":false,"message":{"id":"m","model":"claude-x","content":[{"type":"text","text":"hi"},{"type":"thinking","thinking":"hm"},{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}],"usage":{"input_tokens":12,"cache_creation_input_tokens":30000,"cache_read_input_tokens":5000,"output_tokens":7,"service_tier":"standard"}},"unknownField":[1,2]}"#).unwrap();
        assert!(row.is_model_reply());
        let message = row.message.as_ref().unwrap();
        assert_eq!(message.usage.unwrap().context_tokens(), 35_019);
        let kinds: Vec<_> = blocks(message.content.as_ref())
            .iter()
            .map(|b| match b {
                Block::Text { .. } => "text",
                Block::ToolUse { .. } => "tool_use",
                Block::ToolResult { .. } => "tool_result",
                Block::Other => "other",
            })
            .collect();
        assert_eq!(kinds, ["text", "other", "tool_use"]);
        assert!(Row::parse(b"{\"type\":\"user\",\"message\":{\"con").is_none());
        assert!(Row::parse(b"garbage").is_none());
        let synthetic =
            Row::parse(br#"{"type":"assistant","message":{"model":"<synthetic>"}}"#).unwrap();
        assert!(!synthetic.is_model_reply());
    }

    #[test]
    fn hook_context_reads_its_texts() {
        let row = Row::parse(br#"{"type":"attachment","uuid":"a","attachment":{"type":"hook_additional_context","content":["one","two"],"hookEvent":"SessionStart"}}"#).unwrap();
        assert_eq!(
            row.hook_context(),
            Some(("SessionStart", vec!["one", "two"]))
        );
        let other = Row::parse(br#"{"type":"attachment","attachment":{"type":"date"}}"#).unwrap();
        assert_eq!(other.hook_context(), None);
    }

    #[test]
    fn result_text_joins_text_blocks() {
        let content = serde_json::json!([{"type":"text","text":"a"},{"type":"image"},{"type":"text","text":"b"}]);
        assert_eq!(result_text(&content), "a\n[image]\nb");
        assert_eq!(result_text(&serde_json::json!("plain")), "plain");
    }
}
