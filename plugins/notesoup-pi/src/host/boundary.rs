//! The boundary API (≥ 0.87): drafts an extension proposes at `turn_end` and
//! `agent_before_settle`, the state it sees, and what it returns.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::json::pi_object;
use crate::session::{AgentMessage, Content, ContextReplacement, Entry, Usage};

/// `SessionBoundaryDraft`: one entry Pi appends after the last handler.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum SessionBoundaryDraft {
    /// `{type:"custom", customType, data?}`
    #[serde(rename = "custom", rename_all = "camelCase")]
    Custom {
        /// The extension's type name.
        custom_type: String,
        /// Extension data.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        data: Option<Value>,
    },
    /// `{type:"custom_message", customType, content, display, details?}`
    #[serde(rename = "custom_message", rename_all = "camelCase")]
    CustomMessage {
        /// The extension's type name.
        custom_type: String,
        /// Text or blocks.
        content: Content,
        /// Whether the TUI shows it.
        display: bool,
        /// Extension metadata.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        details: Option<Value>,
    },
    /// `{type:"context_edit", targetId, replacement}`
    #[serde(rename = "context_edit", rename_all = "camelCase")]
    ContextEdit {
        /// The edited entry.
        target_id: String,
        /// `None` (`null`) omits the target.
        replacement: Option<ContextReplacement>,
    },
    /// `{type:"compaction", summary, firstKeptEntryId, details?, usage?}`;
    /// saved with `fromHook: true` and a `tokensBefore` Pi estimates.
    #[serde(rename = "compaction", rename_all = "camelCase")]
    Compaction {
        /// The summary (empty for notesoup's checkpoint).
        summary: String,
        /// `None` (`null`) means retain-none: Pi stores the entry's own id.
        first_kept_entry_id: Option<String>,
        /// Implementation data.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        details: Option<Value>,
        /// Usage of a summary generation (boxed: it is rare and large).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<Box<Usage>>,
    },
}

impl SessionBoundaryDraft {
    /// notesoup's reset checkpoint: an empty, retain-none compaction.
    pub fn retain_none_checkpoint() -> Self {
        Self::Compaction {
            summary: String::new(),
            first_kept_entry_id: None,
            details: None,
            usage: None,
        }
    }
}

/// How the activity that reached the boundary ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BoundaryOutcome {
    /// `"completed"`
    Completed,
    /// `"aborted"`
    Aborted,
    /// `"error"`
    Error,
}

/// `ProjectedSessionEntry`: a context entry and the messages it produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProjectedSessionEntry {
    /// The session entry.
    pub source_entry: Entry,
    /// Its model-visible messages.
    pub messages: Vec<AgentMessage>,
}

/// `BoundaryContextPreview`: the context as it would be after the drafts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BoundaryContextPreview {
    /// The projected context entries. Empty when a bridge left them out
    /// (`notesoup-pi serve` does: notesoup reads the session instead).
    #[serde(default)]
    pub context_entries: Vec<ProjectedSessionEntry>,
    /// The projected agent messages (empty when a bridge left them out).
    #[serde(default)]
    pub context_messages: Vec<AgentMessage>,
    /// The messages after `convertToLlm` (empty when a bridge left them out).
    #[serde(default)]
    pub llm_messages: Vec<AgentMessage>,
    /// Messages waiting to be appended.
    pub pending_messages: Vec<AgentMessage>,
    /// Whether a `continue` could make another request.
    pub can_continue: bool,
}

/// `BoundaryState`: what `turn_end` and `agent_before_settle` handlers see.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BoundaryState {
    /// The drafts proposed so far.
    pub entries: Vec<SessionBoundaryDraft>,
    /// Whether a continuation is proposed so far.
    #[serde(rename = "continue")]
    pub continue_run: bool,
    /// The context preview.
    pub context: BoundaryContextPreview,
    /// How the activity ended.
    pub outcome: BoundaryOutcome,
}

pi_object! {
    /// `BoundaryResult`: returned `entries` replace the proposal (return
    /// `[...state.entries, draft]` to add); `None` keeps it.
    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
    pub struct BoundaryResult {
        /// The new draft list.
        pub entries?: Vec<SessionBoundaryDraft>,
        /// Request (or withdraw) one more provider request.
        #[serde(rename = "continue")]
        pub continue_run?: bool,
    }
}

impl BoundaryResult {
    /// Keeps the proposal unchanged.
    pub fn keep() -> Self {
        Self::default()
    }
}
