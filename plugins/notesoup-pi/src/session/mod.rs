//! Pi's session file (version 3): data model, reader, writer and tree.

mod entry;
mod lazy;
mod message;
mod reader;
mod scan;
mod tree;
mod writer;

use std::path::PathBuf;

pub use entry::{
    BranchSummaryEntry, CURRENT_SESSION_VERSION, CompactionEntry, ContextEditEntry,
    ContextReplacement, CustomEntry, CustomMessageEntry, Entry, LabelEntry, MessageEntry,
    ModelChangeEntry, SessionHeader, SessionInfoEntry, ThinkingLevelChangeEntry, UnknownEntry,
    UsageEntry,
};
pub use lazy::LazySession;
pub(crate) use lazy::PARALLEL_MIN;
pub use message::{
    AgentMessage, AssistantMessage, BashExecutionMessage, BranchSummaryMessage,
    CompactionSummaryMessage, Content, ContentBlock, Cost, CustomMessage, Extra, ImageContent,
    NestedToolCall, NestedToolCalls, StopReason, SystemLayout, SystemMessage, TextContent,
    ThinkingContent, ToolCall, ToolDeclaration, ToolReference, ToolResultMessage, Usage,
    UserMessage, blocks_text,
};
pub use reader::{Diagnostic, DiagnosticCode, SessionFile};
pub use tree::{EntryIndex, Leaf};
pub use writer::{append_entry, entry_line, header_line};

/// A session file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The file system refused. The OS error is part of the message, not a
    /// separate source, so a chain of causes prints it once.
    #[error("session file {path}: {error}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        error: std::io::Error,
    },
    /// A value could not be serialised as JSON.
    #[error("could not serialise a session line: {0}")]
    Serialize(serde_json::Error),
    /// The first parsed line is not a session header: Pi refuses the file.
    #[error("session file {path}: the first line is not a session header")]
    NotLoadable {
        /// The file.
        path: PathBuf,
    },
}

impl SessionError {
    /// A stable code for the refusal.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Io { .. } => "session_io",
            Self::Serialize(_) => "session_serialize",
            Self::NotLoadable { .. } => "session_not_loadable",
        }
    }
}
