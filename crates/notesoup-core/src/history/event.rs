//! One public event of the history: its role, its tool facts and its
//! document. Below the model and the folded documents, which both hold
//! events.

use serde::{Deserialize, Serialize};
use typeshare::typeshare;

use super::transcript::ToolStatus;

/// The public role of an event.
#[typeshare]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Typed by the human.
    User,
    /// Written by the model.
    Assistant,
    /// A tool call with its result.
    Tool,
    /// Injected context: custom messages and summaries.
    Context,
}

impl Role {
    /// The role as texts show it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Assistant => "assistant",
            Self::Tool => "tool",
            Self::Context => "context",
        }
    }
}

/// How many nested calls a tool event recorded, and whether the host marked
/// the record complete.
#[typeshare]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NestedCallSummary {
    /// Nested call records carried on the event.
    pub call_count: u32,
    /// The host's completeness flag, as recorded.
    pub complete: bool,
}

/// The facts of a tool event beside its document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolFacts {
    /// The tool name (`unknown` for an unpaired result that records none).
    pub name: String,
    /// How the run ended.
    pub status: ToolStatus,
    /// The host truncated the recorded output.
    pub output_truncated: bool,
    /// Where the full output is, when the host saved it.
    pub full_output_path: Option<String>,
    /// The nested-call record, when there is one.
    pub nested_calls: Option<NestedCallSummary>,
}

/// One public event at its seq.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryEvent {
    /// The stable address.
    pub seq: u32,
    /// Index of the event's window in [`History::windows`](super::History::windows).
    pub window: usize,
    /// The public role.
    pub role: Role,
    /// When it was recorded, if known.
    pub created_at: Option<String>,
    /// Tool facts, for tool events.
    pub tool: Option<ToolFacts>,
    /// The text search matches, previews show and reads return.
    pub document: String,
}

impl HistoryEvent {
    /// Code-point length of the document (counted on demand: only shown
    /// events need it).
    pub fn total_chars(&self) -> usize {
        if self.document.is_ascii() {
            self.document.len()
        } else {
            self.document.chars().count()
        }
    }
}
