//! The decoded transcript a host hands to the history tools.
//!
//! Each host decodes its own native transcript (Pi session entries, Claude Code
//! JSONL rows, dsh session events) into these types: it allocates seqs over
//! every entry in append order (other branches included), marks which seq spans
//! belong to entries off the active branch, and lists the active branch's
//! windows with their decoded items. Nothing here knows a host format.

use serde::{Deserialize, Serialize};
use typeshare::typeshare;

/// One session's decoded history.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Transcript {
    /// The session id `history_windows` reports.
    pub session_id: String,
    /// The last seq allocated over all entries, other branches included.
    pub highest_seq: u32,
    /// Seq spans allocated to entries that are not on the active branch, in any
    /// order. Seqs in them answer `not_on_branch`.
    #[serde(default)]
    pub off_branch: Vec<SeqSpan>,
    /// The active branch's windows, oldest first; the first is the root window.
    pub windows: Vec<TranscriptWindow>,
}

/// An inclusive range of seqs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeqSpan {
    /// First seq of the span.
    pub first: u32,
    /// Last seq of the span (inclusive).
    pub last: u32,
}

impl SeqSpan {
    /// True when `seq` is inside the span.
    pub fn contains(&self, seq: u32) -> bool {
        self.first <= seq && seq <= self.last
    }
}

/// One window of the active branch and the items decoded in it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TranscriptWindow {
    /// The window id (Pi: the root window id or a marker's `windowId`).
    pub id: String,
    /// When the window began (a marker's or boundary's timestamp), if known.
    #[serde(default)]
    pub created_at: Option<String>,
    /// Decoded items, in ascending seq order, each seq above every seq of the
    /// previous windows.
    pub items: Vec<TranscriptItem>,
}

/// One decoded item at its seq.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TranscriptItem {
    /// The item's stable address.
    pub seq: u32,
    /// When the item was recorded, as the host formats timestamps.
    #[serde(default)]
    pub created_at: Option<String>,
    /// What the item is.
    pub kind: ItemKind,
}

/// What a decoded item is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemKind {
    /// A user, assistant or context message and its text.
    Message {
        /// Who speaks.
        role: MessageRole,
        /// The message text (possibly empty, e.g. an assistant turn that only
        /// called tools).
        text: String,
    },
    /// A tool call made by the assistant.
    ToolCall(Box<TranscriptToolCall>),
    /// A tool result, or a standalone tool run (Pi's `bashExecution`).
    ToolResult(Box<TranscriptToolResult>),
}

// The tool variants are boxed: a result is five times a message's size,
// and a long transcript's items are moved from vector to vector.

impl From<TranscriptToolCall> for ItemKind {
    fn from(call: TranscriptToolCall) -> Self {
        Self::ToolCall(Box::new(call))
    }
}

impl From<TranscriptToolResult> for ItemKind {
    fn from(result: TranscriptToolResult) -> Self {
        Self::ToolResult(Box::new(result))
    }
}

/// The roles a message item can have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageRole {
    /// Typed by the human.
    User,
    /// Written by the model.
    Assistant,
    /// Injected context: custom messages, summaries, hook context, boots.
    Context,
}

/// A tool call as recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TranscriptToolCall {
    /// The tool name.
    pub name: String,
    /// The call id results refer to.
    pub call_id: String,
    /// Compact JSON text of the arguments as recorded; `None` when not recorded.
    #[serde(default)]
    pub arguments: Option<String>,
}

/// A tool result, or a standalone run that carries its own outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TranscriptToolResult {
    /// The call id this result answers; `None` for a standalone run, which
    /// never pairs.
    #[serde(default)]
    pub call_id: Option<String>,
    /// The tool name when the result records one (used when it stays unpaired).
    #[serde(default)]
    pub name: Option<String>,
    /// Compact JSON arguments recorded by a standalone run (e.g. `{"command":…}`
    /// for bash); a paired call's own arguments take precedence.
    #[serde(default)]
    pub arguments: Option<String>,
    /// How the run ended (`is_error` → error, else ok; a bash run with no exit
    /// code is unfinished).
    pub status: ToolStatus,
    /// The output text.
    #[serde(default)]
    pub output: String,
    /// The host truncated the recorded output.
    #[serde(default)]
    pub output_truncated: bool,
    /// Where the host saved the full output, when it did.
    #[serde(default)]
    pub full_output_path: Option<String>,
    /// Calls the tool made to other tools, as the host recorded them.
    #[serde(default)]
    pub nested_calls: Option<NestedCalls>,
}

/// How a tool run ended.
#[typeshare]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ToolStatus {
    /// Finished without error.
    Ok,
    /// Finished with an error (or was cancelled).
    Error,
    /// No result was recorded.
    Unfinished,
}

impl ToolStatus {
    /// The status as texts show it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Error => "error",
            Self::Unfinished => "unfinished",
        }
    }
}

/// The nested calls a tool run recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NestedCalls {
    /// The recorded calls, in order.
    pub calls: Vec<NestedCall>,
    /// The host's completeness flag, as recorded.
    pub complete: bool,
}

/// One nested call. It never gets a seq of its own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NestedCall {
    /// The tool called.
    pub name: String,
    /// Its status as the host recorded it.
    pub status: String,
    /// How long it ran, when recorded.
    #[serde(default)]
    pub duration_ms: Option<u64>,
    /// Its error message, when recorded.
    #[serde(default)]
    pub error: Option<String>,
    /// Its arguments.
    pub arguments: NestedArguments,
}

/// A nested call's arguments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NestedArguments {
    /// Compact JSON text of the arguments.
    Recorded(String),
    /// The host left them out; their serialized size.
    Omitted {
        /// Serialized size in bytes.
        bytes: u64,
    },
    /// Nothing was recorded.
    NotRecorded,
}
