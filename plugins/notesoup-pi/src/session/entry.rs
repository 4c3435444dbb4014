//! Session file version 3: the header and every entry type, exact to Pi's JSON.
//!
//! Key order follows `SessionManager`'s object literals: most entries start
//! with `type, id, parentId, timestamp`; `custom` and `custom_message` put the
//! base fields last.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::message::{AgentMessage, Content, SystemMessage, Usage, deserialize_tagged};
use crate::json::{pi_object, present};

/// Pi's `CURRENT_SESSION_VERSION`.
pub const CURRENT_SESSION_VERSION: u64 = 3;

pi_object! {
    /// The first line of a session file: `{type:"session", version, id, timestamp, cwd, parentSession?}`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(tag = "type", rename = "session", rename_all = "camelCase")]
    pub struct SessionHeader {
        /// Format version; a header without one counts as version 1.
        pub version?: u64,
        /// Session id (UUIDv7 in current Pi).
        pub id: String,
        /// ISO creation time.
        pub timestamp?: String,
        /// Working directory.
        pub cwd?: String,
        /// Source file of a fork or branched session.
        pub parent_session?: String,
        ..extra,
    }
}

impl SessionHeader {
    /// The header's format version (1 when absent).
    pub fn version(&self) -> u64 {
        self.version.unwrap_or(1)
    }
}

/// One session entry (every line after the header).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type")]
pub enum Entry {
    /// `message`
    #[serde(rename = "message")]
    Message(MessageEntry),
    /// `thinking_level_change`
    #[serde(rename = "thinking_level_change")]
    ThinkingLevelChange(ThinkingLevelChangeEntry),
    /// `model_change`
    #[serde(rename = "model_change")]
    ModelChange(ModelChangeEntry),
    /// `compaction`
    #[serde(rename = "compaction")]
    Compaction(CompactionEntry),
    /// `branch_summary`
    #[serde(rename = "branch_summary")]
    BranchSummary(BranchSummaryEntry),
    /// `custom`: extension state, never in context.
    #[serde(rename = "custom")]
    Custom(CustomEntry),
    /// `custom_message`: in context as a user message.
    #[serde(rename = "custom_message")]
    CustomMessage(CustomMessageEntry),
    /// `label`
    #[serde(rename = "label")]
    Label(LabelEntry),
    /// `session_info`
    #[serde(rename = "session_info")]
    SessionInfo(SessionInfoEntry),
    /// `usage` (≥ 0.86): cost accounting only.
    #[serde(rename = "usage")]
    Usage(UsageEntry),
    /// `context_edit` (≥ 0.87)
    #[serde(rename = "context_edit")]
    ContextEdit(ContextEditEntry),
    /// An entry this crate cannot type: an unknown `type`, or a known type
    /// whose shape does not match. Kept whole; it still takes part in the
    /// tree through its `id` and `parentId`, like in Pi.
    #[serde(untagged)]
    Unknown(UnknownEntry),
}

/// The raw JSON of an entry that is not typed.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct UnknownEntry(pub Map<String, Value>);

impl UnknownEntry {
    /// The `type` string, when there is one.
    pub fn entry_type(&self) -> Option<&str> {
        self.0.get("type").and_then(Value::as_str)
    }
}

macro_rules! for_each_entry {
    ($entry:expr, $bound:ident => $body:expr, $unknown:ident => $fallback:expr) => {
        match $entry {
            Entry::Message($bound) => $body,
            Entry::ThinkingLevelChange($bound) => $body,
            Entry::ModelChange($bound) => $body,
            Entry::Compaction($bound) => $body,
            Entry::BranchSummary($bound) => $body,
            Entry::Custom($bound) => $body,
            Entry::CustomMessage($bound) => $body,
            Entry::Label($bound) => $body,
            Entry::SessionInfo($bound) => $body,
            Entry::Usage($bound) => $body,
            Entry::ContextEdit($bound) => $body,
            Entry::Unknown($unknown) => $fallback,
        }
    };
}

impl Entry {
    /// The entry id (`""` for an untyped entry without a string id).
    pub fn id(&self) -> &str {
        for_each_entry!(self, e => e.id.as_str(), u => u.0.get("id").and_then(Value::as_str).unwrap_or(""))
    }

    /// The parent id; `None` for a root.
    pub fn parent_id(&self) -> Option<&str> {
        for_each_entry!(self, e => e.parent_id.as_deref(), u => u.0.get("parentId").and_then(Value::as_str))
    }

    /// The ISO timestamp (`""` for an untyped entry without one).
    pub fn timestamp(&self) -> &str {
        for_each_entry!(self, e => e.timestamp.as_str(), u => u.0.get("timestamp").and_then(Value::as_str).unwrap_or(""))
    }

    /// The `type` string.
    pub fn entry_type(&self) -> &str {
        match self {
            Self::Unknown(unknown) => unknown.entry_type().unwrap_or(""),
            known => known.known_tag().unwrap_or(""),
        }
    }

    /// The message of a `message` entry.
    pub fn message(&self) -> Option<&AgentMessage> {
        match self {
            Self::Message(entry) => Some(&entry.message),
            _ => None,
        }
    }

    /// A `message` entry holding a system message.
    pub fn is_system_message(&self) -> bool {
        matches!(
            self,
            Self::Message(MessageEntry {
                message: AgentMessage::System(_),
                ..
            })
        )
    }
}

deserialize_tagged! {
    Entry by "type" {
        "message" => Message,
        "thinking_level_change" => ThinkingLevelChange,
        "model_change" => ModelChange,
        "compaction" => Compaction,
        "branch_summary" => BranchSummary,
        "custom" => Custom,
        "custom_message" => CustomMessage,
        "label" => Label,
        "session_info" => SessionInfo,
        "usage" => Usage,
        "context_edit" => ContextEdit,
    }
    else |map| Self::Unknown(UnknownEntry(map)), known_tag
}

pi_object! {
    /// `{type:"message", id, parentId, timestamp, message}`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct MessageEntry {
        ..entry,
        /// The message.
        pub message: AgentMessage,
        ..extra,
    }
}

pi_object! {
    /// `{type:"thinking_level_change", …, thinkingLevel}`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct ThinkingLevelChangeEntry {
        ..entry,
        /// `off`, `minimal`, `low`, `medium`, `high`, `xhigh`, …
        pub thinking_level: String,
        ..extra,
    }
}

pi_object! {
    /// `{type:"model_change", …, provider, modelId}`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct ModelChangeEntry {
        ..entry,
        /// Provider id.
        pub provider: String,
        /// Model id.
        pub model_id: String,
        ..extra,
    }
}

pi_object! {
    /// `{type:"compaction", …, summary, firstKeptEntryId, tokensBefore, details?, usage?, fromHook?, systemMessage?}`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct CompactionEntry {
        ..entry,
        /// The summary (empty for notesoup's checkpoint).
        pub summary: String,
        /// First entry kept from before the compaction; the compaction's own id
        /// means retain-none.
        pub first_kept_entry_id: String,
        /// Estimated context tokens before the compaction.
        pub tokens_before: u64,
        /// Implementation data; `null` is kept.
        #[serde(deserialize_with = "present")]
        pub details?: Value,
        /// Usage of the summary generation.
        pub usage?: Usage,
        /// True when an extension produced the compaction.
        pub from_hook?: bool,
        /// The replayed prompt and tools at the compaction (1.6.0), written
        /// with its `role`.
        #[serde(with = "system_with_role")]
        pub system_message?: SystemMessage,
        ..extra,
    }
}

impl CompactionEntry {
    /// A retain-none compaction keeps nothing before itself.
    pub fn is_retain_none(&self) -> bool {
        self.first_kept_entry_id == self.id
    }
}

pi_object! {
    /// `{type:"branch_summary", …, fromId, summary, details?, usage?, fromHook?}`;
    /// its parent is the entry the new branch continues from.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct BranchSummaryEntry {
        ..entry,
        /// The abandoned leaf, or `"root"`.
        pub from_id: String,
        /// The summary.
        pub summary: String,
        /// Implementation data; `null` is kept.
        #[serde(deserialize_with = "present")]
        pub details?: Value,
        /// Usage of the summary generation.
        pub usage?: Usage,
        /// True when an extension produced the summary.
        pub from_hook?: bool,
        ..extra,
    }
}

pi_object! {
    /// `{type:"custom", customType, data, id, parentId, timestamp}`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct CustomEntry {
        /// The extension's type name, e.g. `notesoup/reset-marker`.
        pub custom_type: String,
        /// Extension data; absent when undefined, `null` kept.
        #[serde(deserialize_with = "present")]
        pub data?: Value,
        ..entry,
        ..extra,
    }
}

pi_object! {
    /// `{type:"custom_message", customType, content, display, details, id, parentId, timestamp}`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct CustomMessageEntry {
        /// The extension's type name, e.g. `notesoup/boot`.
        pub custom_type: String,
        /// Text or blocks; Pi projects a missing content as an empty list.
        pub content?: Content,
        /// Whether the TUI shows it.
        pub display: bool,
        /// Extension metadata; absent when undefined, `null` kept.
        #[serde(deserialize_with = "present")]
        pub details?: Value,
        ..entry,
        ..extra,
    }
}

pi_object! {
    /// `{type:"label", …, targetId, label?}`; no `label` clears it.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct LabelEntry {
        ..entry,
        /// The labelled entry.
        pub target_id: String,
        /// The label; absent or empty clears it.
        pub label?: String,
        ..extra,
    }
}

pi_object! {
    /// `{type:"session_info", …, name}`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct SessionInfoEntry {
        ..entry,
        /// Display name; empty clears it.
        pub name?: String,
        ..extra,
    }
}

pi_object! {
    /// `{type:"usage", …, kind, provider, model, usage, note?}`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct UsageEntry {
        ..entry,
        /// What the usage was for, e.g. `cache_warm`.
        pub kind: String,
        /// Provider id.
        pub provider: String,
        /// Model id.
        pub model: String,
        /// The usage.
        pub usage: Usage,
        /// Free text.
        pub note?: String,
        ..extra,
    }
}

pi_object! {
    /// `{type:"context_edit", …, targetId, replacement}`; `replacement` is always written.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct ContextEditEntry {
        ..entry,
        /// The edited entry.
        pub target_id: String,
        /// `None` (`null`) removes the target from context.
        pub replacement: Option<ContextReplacement>,
        ..extra,
    }
}

pi_object! {
    /// The `{content}` of a context edit.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct ContextReplacement {
        /// The new content.
        pub content: Content,
        ..extra,
    }
}

/// A standalone system message keeps its `"role":"system"` first.
mod system_with_role {
    use serde::de::Error as _;
    use serde::{Deserializer, Serialize, Serializer};

    use crate::session::message::{SystemMessage, from_map, tagged_object};

    #[derive(Serialize)]
    #[serde(tag = "role")]
    enum WithRole<'a> {
        #[serde(rename = "system")]
        System(&'a SystemMessage),
    }

    pub(super) fn serialize<S: Serializer>(
        message: &Option<SystemMessage>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        message.as_ref().map(WithRole::System).serialize(serializer)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<SystemMessage>, D::Error> {
        let (role, map) = tagged_object(deserializer, "role")?;
        if role.as_deref() != Some("system") {
            return Err(D::Error::custom("systemMessage must have role \"system\""));
        }
        from_map(map).map(Some).map_err(D::Error::custom)
    }
}
