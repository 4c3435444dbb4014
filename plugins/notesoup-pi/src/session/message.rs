//! Pi's message shapes (pi-ai and coding-agent), exact to their JSON.
//!
//! Field order follows the object literals Pi builds them with (faux
//! provider, agent loop, session manager); fields Pi added that notesoup does
//! not read stay in `extra`, so nothing a newer Pi wrote is lost.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use crate::json::{nullable, pi_object, present};

/// Unknown keys of a Pi object, kept in file order.
pub type Extra = Map<String, Value>;

/// `string | (TextContent | ImageContent)[]`: user, custom and system content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Content {
    /// Plain text.
    Text(String),
    /// Content blocks.
    Blocks(Vec<ContentBlock>),
}

impl Default for Content {
    fn default() -> Self {
        Self::Blocks(Vec::new())
    }
}

impl Content {
    /// The content as blocks: a string becomes one text block, as Pi's
    /// `convertToLlm` and `context_edit` do.
    pub fn into_blocks(self) -> Vec<ContentBlock> {
        match self {
            Self::Text(text) => vec![ContentBlock::text(text)],
            Self::Blocks(blocks) => blocks,
        }
    }

    /// pi-ai `contentText`: the text blocks joined with `separator`.
    pub fn text(&self, separator: &str) -> String {
        match self {
            Self::Text(text) => text.clone(),
            Self::Blocks(blocks) => blocks_text(blocks, separator),
        }
    }
}

/// pi-ai `contentText` of blocks: their text blocks joined with `separator`.
pub fn blocks_text(blocks: &[ContentBlock], separator: &str) -> String {
    let texts: Vec<&str> = blocks
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(text) => Some(text.text.as_str()),
            _ => None,
        })
        .collect();
    texts.join(separator)
}

/// Session files are parsed without validation by Pi, which projects a
/// missing or `null` content as an empty list.
fn content_or_empty<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Content, D::Error> {
    Ok(Option::<Content>::deserialize(deserializer)?.unwrap_or_default())
}

fn blocks_or_empty<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<ContentBlock>, D::Error> {
    Ok(Option::<Vec<ContentBlock>>::deserialize(deserializer)?.unwrap_or_default())
}

fn system_content<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Content, D::Error> {
    Ok(Option::<Content>::deserialize(deserializer)?
        .unwrap_or_else(|| Content::Text(String::new())))
}

/// A content block of any message.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type")]
pub enum ContentBlock {
    /// `{type:"text", text, textSignature?}`
    #[serde(rename = "text")]
    Text(TextContent),
    /// `{type:"thinking", thinking, thinkingSignature?, redacted?}`
    #[serde(rename = "thinking")]
    Thinking(ThinkingContent),
    /// `{type:"image", data, mimeType}`
    #[serde(rename = "image")]
    Image(ImageContent),
    /// `{type:"toolCall", id, name, arguments, …}`
    #[serde(rename = "toolCall")]
    ToolCall(ToolCall),
    /// A block type this crate does not know, kept whole (with its `type`).
    #[serde(untagged)]
    Unknown(Map<String, Value>),
}

impl ContentBlock {
    /// A plain text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text(TextContent {
            text: text.into(),
            text_signature: None,
            extra: Extra::new(),
        })
    }

    /// A plain tool call, as a provider that sends only the call's id, name
    /// and arguments makes it.
    pub fn tool_call(id: String, name: String, arguments: Value) -> Self {
        Self::ToolCall(ToolCall {
            id,
            name,
            arguments,
            thought_signature: None,
            namespace: None,
            arguments_error: None,
            extra: Extra::new(),
        })
    }
}

deserialize_tagged! {
    ContentBlock by "type" {
        "text" => Text,
        "thinking" => Thinking,
        "image" => Image,
        "toolCall" => ToolCall,
    }
    else Self::Unknown
}

pi_object! {
    /// `TextContent`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct TextContent {
        /// The text.
        pub text: String,
        /// Provider signature of the text.
        pub text_signature?: String,
        ..extra,
    }
}

pi_object! {
    /// `ThinkingContent`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct ThinkingContent {
        /// The reasoning text.
        pub thinking: String,
        /// Provider signature (the opaque payload when redacted).
        pub thinking_signature?: String,
        /// True when the provider redacted the thinking.
        pub redacted?: bool,
        ..extra,
    }
}

pi_object! {
    /// `ImageContent`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct ImageContent {
        /// Base64 data.
        pub data: String,
        /// MIME type, e.g. `image/png`.
        pub mime_type: String,
        ..extra,
    }
}

pi_object! {
    /// `ToolCall`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct ToolCall {
        /// Call id, paired with `ToolResultMessage::tool_call_id`.
        pub id: String,
        /// Tool name.
        pub name: String,
        /// Arguments object.
        pub arguments: Value,
        /// Provider signature.
        pub thought_signature?: String,
        /// OpenAI Responses namespace (1.6.0).
        pub namespace?: String,
        /// Set when the model's arguments were not a JSON object (1.6.0).
        pub arguments_error?: String,
        ..extra,
    }
}

pi_object! {
    /// Token usage and cost of one response.
    #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct Usage {
        /// Input tokens.
        pub input: u64,
        /// Output tokens.
        pub output: u64,
        /// Cache-read tokens.
        pub cache_read: u64,
        /// Cache-write tokens.
        pub cache_write: u64,
        /// Subset of `cache_write` with 1h retention (Anthropic only).
        #[serde(rename = "cacheWrite1h")]
        pub cache_write_1h?: u64,
        /// Reasoning tokens, a subset of `output`.
        pub reasoning?: u64,
        /// Total tokens as the provider reports them.
        pub total_tokens: u64,
        /// Cost in dollars.
        pub cost: Cost,
        ..extra,
    }
}

pi_object! {
    /// The `cost` of a [`Usage`].
    #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct Cost {
        /// Input cost.
        pub input: f64,
        /// Output cost.
        pub output: f64,
        /// Cache-read cost.
        pub cache_read: f64,
        /// Cache-write cost.
        pub cache_write: f64,
        /// Best available total.
        pub total: f64,
        /// True when `total` is the provider's billed cost (1.6.0).
        pub total_from_provider?: bool,
        ..extra,
    }
}

/// Why an assistant response ended.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum StopReason {
    /// `"stop"`
    Stop,
    /// `"length"`
    Length,
    /// `"toolUse"`
    ToolUse,
    /// `"error"`
    Error,
    /// `"aborted"`
    Aborted,
    /// `"pending"`: partial streaming messages only.
    Pending,
    /// `"deferred"`: terminal, result fetched later.
    Deferred,
    /// A reason this crate does not know.
    Other(String),
}

impl StopReason {
    /// The JSON string.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Stop => "stop",
            Self::Length => "length",
            Self::ToolUse => "toolUse",
            Self::Error => "error",
            Self::Aborted => "aborted",
            Self::Pending => "pending",
            Self::Deferred => "deferred",
            Self::Other(other) => other,
        }
    }
}

impl From<String> for StopReason {
    fn from(value: String) -> Self {
        match value.as_str() {
            "stop" => Self::Stop,
            "length" => Self::Length,
            "toolUse" => Self::ToolUse,
            "error" => Self::Error,
            "aborted" => Self::Aborted,
            "pending" => Self::Pending,
            "deferred" => Self::Deferred,
            _ => Self::Other(value),
        }
    }
}

impl Serialize for StopReason {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for StopReason {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Self::from)
    }
}

/// `SystemMessage` (≥ 0.86): the prompt and tool loadout at one point.
#[derive(Debug, Clone, PartialEq)]
pub struct SystemMessage {
    /// Instruction text.
    pub content: Content,
    /// Named sections; `null` removes a section.
    pub sections: Option<Map<String, Value>>,
    /// Tools declared from this point on.
    pub tools_added: Option<Vec<ToolDeclaration>>,
    /// Tools no longer available from this point on.
    pub tools_removed: Option<Vec<ToolReference>>,
    /// Milliseconds since the epoch.
    pub timestamp: i64,
    /// Where the tool lists sit relative to `timestamp`.
    pub layout: SystemLayout,
    /// Unknown keys.
    pub extra: Extra,
}

/// Pi writes system messages in two key orders: `getCurrentSystemMessage`
/// (compaction checkpoints, replayed heads) puts the tool lists before
/// `timestamp`; the agent loop's tool patches put them after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SystemLayout {
    /// `role, content, sections?, toolsAdded?, toolsRemoved?, timestamp`.
    #[default]
    ToolsBeforeTimestamp,
    /// `role, content, sections?, timestamp, toolsAdded?, toolsRemoved?`.
    ToolsAfterTimestamp,
}

/// The fields of a [`SystemMessage`] as serde reads them.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SystemFields {
    #[serde(default = "empty_text", deserialize_with = "system_content")]
    content: Content,
    #[serde(default)]
    sections: Option<Map<String, Value>>,
    #[serde(default)]
    tools_added: Option<Vec<ToolDeclaration>>,
    #[serde(default)]
    tools_removed: Option<Vec<ToolReference>>,
    timestamp: i64,
    #[serde(flatten)]
    extra: Extra,
}

impl<'de> Deserialize<'de> for SystemMessage {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let map = Map::<String, Value>::deserialize(deserializer)?;
        let position = |key: &str| map.keys().position(|candidate| candidate == key);
        let tools = position("toolsAdded").or_else(|| position("toolsRemoved"));
        let layout = match (tools, position("timestamp")) {
            (Some(tools), Some(timestamp)) if tools > timestamp => {
                SystemLayout::ToolsAfterTimestamp
            }
            _ => SystemLayout::ToolsBeforeTimestamp,
        };
        let fields: SystemFields = from_map(map).map_err(D::Error::custom)?;
        Ok(Self {
            content: fields.content,
            sections: fields.sections,
            tools_added: fields.tools_added,
            tools_removed: fields.tools_removed,
            timestamp: fields.timestamp,
            layout,
            extra: fields.extra,
        })
    }
}

impl Serialize for SystemMessage {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("content", &self.content)?;
        if let Some(sections) = &self.sections {
            map.serialize_entry("sections", sections)?;
        }
        let tools = |map: &mut S::SerializeMap| -> Result<(), S::Error> {
            if let Some(added) = &self.tools_added {
                map.serialize_entry("toolsAdded", added)?;
            }
            if let Some(removed) = &self.tools_removed {
                map.serialize_entry("toolsRemoved", removed)?;
            }
            Ok(())
        };
        if self.layout == SystemLayout::ToolsBeforeTimestamp {
            tools(&mut map)?;
        }
        map.serialize_entry("timestamp", &self.timestamp)?;
        if self.layout == SystemLayout::ToolsAfterTimestamp {
            tools(&mut map)?;
        }
        for (key, value) in &self.extra {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

fn empty_text() -> Content {
    Content::Text(String::new())
}

pi_object! {
    /// A tool as declared to the model.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct ToolDeclaration {
        /// Tool name.
        pub name: String,
        /// Description.
        pub description: String,
        /// JSON Schema of the arguments.
        pub parameters: Value,
        /// Provider-side constrained sampling.
        pub constrained_sampling?: Value,
        ..extra,
    }
}

pi_object! {
    /// A tool named in `toolsRemoved`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct ToolReference {
        /// Tool name.
        pub name: String,
        ..extra,
    }
}

pi_object! {
    /// `UserMessage`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct UserMessage {
        /// Text or text and image blocks.
        #[serde(default, deserialize_with = "content_or_empty")]
        pub content: Content,
        /// Milliseconds since the epoch.
        pub timestamp: i64,
        ..extra,
    }
}

pi_object! {
    /// `AssistantMessage`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct AssistantMessage {
        /// Text, thinking and tool-call blocks.
        #[serde(default, deserialize_with = "blocks_or_empty")]
        pub content: Vec<ContentBlock>,
        /// Provider API, e.g. `anthropic-messages`.
        pub api: String,
        /// Provider id.
        pub provider: String,
        /// Model id.
        pub model: String,
        /// Token usage.
        pub usage: Usage,
        /// Why the response ended.
        pub stop_reason: StopReason,
        /// Handle of a deferred response.
        pub deferred?: Value,
        /// Error text for `error` and `aborted`.
        pub error_message?: String,
        /// Provider response id.
        pub response_id?: String,
        /// Milliseconds since the epoch when the request started.
        pub timestamp: i64,
        /// Response duration (1.6.0).
        pub duration_ms?: u64,
        /// Pi thinking level requested for this response (1.6.0).
        pub thinking_level?: String,
        /// Unknown keys (`responseModel`, `providerThinkingLevel`, `diagnostics`, …).
        #[serde(flatten)]
        pub extra: Extra,
    }
}

pi_object! {
    /// `ToolResultMessage`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct ToolResultMessage {
        /// The call this answers.
        pub tool_call_id: String,
        /// Tool name.
        pub tool_name: String,
        /// Text and image blocks.
        #[serde(default, deserialize_with = "blocks_or_empty")]
        pub content: Vec<ContentBlock>,
        /// Tool-specific details; `null` is kept.
        #[serde(deserialize_with = "present")]
        pub details?: Value,
        /// Usage of the tool's own execution.
        pub usage?: Usage,
        /// Whether the tool failed.
        pub is_error: bool,
        /// Execution time (1.6.0).
        pub duration_ms?: u64,
        /// Milliseconds since the epoch.
        pub timestamp: i64,
        /// Calls the tool made through `executeTool()` (1.6.0); never sent to the model.
        pub nested_calls?: NestedToolCalls,
        ..extra,
    }
}

pi_object! {
    /// `NestedToolCalls`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct NestedToolCalls {
        /// The recorded calls.
        pub calls: Vec<NestedToolCall>,
        /// False when calls were dropped, arguments omitted, or calls unfinished.
        pub complete: bool,
        ..extra,
    }
}

pi_object! {
    /// `NestedToolCallRecord`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct NestedToolCall {
        /// Call id.
        pub id: String,
        /// Tool name.
        pub name: String,
        /// Arguments, omitted when over the size limits.
        pub arguments?: Value,
        /// UTF-8 size of the omitted arguments.
        pub arguments_bytes?: u64,
        /// `ok`, `error` or `unfinished`.
        pub status: String,
        /// Duration.
        pub duration_ms?: u64,
        /// Truncated error text.
        pub error?: String,
        ..extra,
    }
}

pi_object! {
    /// `BashExecutionMessage`: a `!command` the user ran.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct BashExecutionMessage {
        /// The command line.
        pub command: String,
        /// Its output.
        pub output: String,
        /// Exit code; absent or `null` when the command did not finish.
        #[serde(deserialize_with = "nullable")]
        pub exit_code?: Option<i64>,
        /// Whether it was cancelled.
        pub cancelled: bool,
        /// Whether the output was truncated.
        pub truncated: bool,
        /// Where the full output was saved.
        pub full_output_path?: String,
        /// Milliseconds since the epoch.
        pub timestamp: i64,
        /// `!!command`: never sent to the model.
        pub exclude_from_context?: bool,
        ..extra,
    }
}

pi_object! {
    /// `CustomMessage`: an extension message; the model sees it as a user message.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct CustomMessage {
        /// The extension's type name, e.g. `notesoup/boot`.
        pub custom_type: String,
        /// Text or text and image blocks.
        #[serde(default, deserialize_with = "content_or_empty")]
        pub content: Content,
        /// Whether the TUI shows it.
        pub display: bool,
        /// Extension metadata, never sent to the model; `null` is kept.
        #[serde(deserialize_with = "present")]
        pub details?: Value,
        /// Milliseconds since the epoch.
        pub timestamp: i64,
        ..extra,
    }
}

pi_object! {
    /// `BranchSummaryMessage`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct BranchSummaryMessage {
        /// The summary text.
        pub summary: String,
        /// The leaf whose abandoned path was summarised, or `"root"`.
        pub from_id: String,
        /// Milliseconds since the epoch.
        pub timestamp: i64,
        ..extra,
    }
}

pi_object! {
    /// `CompactionSummaryMessage`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct CompactionSummaryMessage {
        /// The summary text (empty for notesoup's retain-none checkpoint).
        pub summary: String,
        /// Estimated tokens before the compaction.
        pub tokens_before: u64,
        /// Milliseconds since the epoch.
        pub timestamp: i64,
        ..extra,
    }
}

/// Pi's `AgentMessage`: pi-ai messages plus the coding agent's own roles.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "role")]
pub enum AgentMessage {
    /// `role:"system"`
    #[serde(rename = "system")]
    System(SystemMessage),
    /// `role:"user"`
    #[serde(rename = "user")]
    User(UserMessage),
    /// `role:"assistant"`
    #[serde(rename = "assistant")]
    Assistant(AssistantMessage),
    /// `role:"toolResult"`
    #[serde(rename = "toolResult")]
    ToolResult(ToolResultMessage),
    /// `role:"bashExecution"`
    #[serde(rename = "bashExecution")]
    BashExecution(BashExecutionMessage),
    /// `role:"custom"`
    #[serde(rename = "custom")]
    Custom(CustomMessage),
    /// `role:"branchSummary"`
    #[serde(rename = "branchSummary")]
    BranchSummary(BranchSummaryMessage),
    /// `role:"compactionSummary"`
    #[serde(rename = "compactionSummary")]
    CompactionSummary(CompactionSummaryMessage),
    /// A role this crate does not know, kept whole (with its `role`).
    #[serde(untagged)]
    Unknown(Map<String, Value>),
}

impl AgentMessage {
    /// The `role` string.
    pub fn role(&self) -> &str {
        match self {
            Self::Unknown(map) => map.get("role").and_then(Value::as_str).unwrap_or(""),
            known => known.known_tag().unwrap_or(""),
        }
    }

    /// The message's `timestamp` in milliseconds, when it has one.
    pub fn timestamp(&self) -> Option<i64> {
        match self {
            Self::System(m) => Some(m.timestamp),
            Self::User(m) => Some(m.timestamp),
            Self::Assistant(m) => Some(m.timestamp),
            Self::ToolResult(m) => Some(m.timestamp),
            Self::BashExecution(m) => Some(m.timestamp),
            Self::Custom(m) => Some(m.timestamp),
            Self::BranchSummary(m) => Some(m.timestamp),
            Self::CompactionSummary(m) => Some(m.timestamp),
            Self::Unknown(map) => map.get("timestamp").and_then(Value::as_i64),
        }
    }
}

deserialize_tagged! {
    AgentMessage by "role" {
        "system" => System,
        "user" => User,
        "assistant" => Assistant,
        "toolResult" => ToolResult,
        "bashExecution" => BashExecution,
        "custom" => Custom,
        "branchSummary" => BranchSummary,
        "compactionSummary" => CompactionSummary,
    }
    else Self::Unknown, known_tag
}

/// `Deserialize` for an enum tagged by one key (`type`, `role`) whose
/// variants each hold one object type: the tag is taken out and the rest read
/// as the variant's type, and an object with any other tag goes to the
/// fallback variant whole (its tag put back in front). With `known_tag`, also
/// gives the enum that method: the tag of a typed variant.
macro_rules! deserialize_tagged {
    ($name:ident by $key:literal { $($tag:literal => $variant:ident),* $(,)? } else $unknown:expr) => {
        $crate::session::message::deserialize_tagged!(@deserialize $name $key [$($tag $variant)*] $unknown);
    };
    ($name:ident by $key:literal { $($tag:literal => $variant:ident),* $(,)? } else $unknown:expr, known_tag) => {
        $crate::session::message::deserialize_tagged!(@deserialize $name $key [$($tag $variant)*] $unknown);

        impl $name {
            /// The tag of a typed variant; `None` for one kept whole.
            fn known_tag(&self) -> Option<&'static str> {
                match self {
                    $(Self::$variant(_) => Some($tag),)*
                    _ => None,
                }
            }
        }
    };
    (@deserialize $name:ident $key:literal [$($tag:literal $variant:ident)*] $unknown:expr) => {
        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                use $crate::session::message::{from_map, restore_tag, tagged_object};
                let (tag, map) = tagged_object(deserializer, $key)?;
                let parsed = match tag.as_deref() {
                    $(Some($tag) => from_map(map).map(Self::$variant),)*
                    _ => return Ok($unknown(restore_tag(map, $key, tag))),
                };
                parsed.map_err(<D::Error as serde::de::Error>::custom)
            }
        }
    };
}
pub(crate) use deserialize_tagged;

/// A JSON object with its string tag taken out.
pub(crate) type Tagged = (Option<String>, Map<String, Value>);

/// Reads a JSON object and takes out its string tag, keeping the other keys
/// in order (the tag is written again by the enum's serialiser).
pub(crate) fn tagged_object<'de, D: Deserializer<'de>>(
    deserializer: D,
    tag_key: &str,
) -> Result<Tagged, D::Error> {
    let mut map = Map::<String, Value>::deserialize(deserializer)?;
    let tag = match map.get(tag_key) {
        Some(Value::String(_)) => match map.shift_remove(tag_key) {
            Some(Value::String(tag)) => Some(tag),
            _ => None,
        },
        _ => None,
    };
    Ok((tag, map))
}

/// Puts a removed tag back at the front, for the `Unknown` variants.
pub(crate) fn restore_tag(
    map: Map<String, Value>,
    tag_key: &str,
    tag: Option<String>,
) -> Map<String, Value> {
    match tag {
        None => map,
        Some(tag) => {
            let mut whole = Map::with_capacity(map.len() + 1);
            whole.insert(tag_key.to_owned(), Value::String(tag));
            whole.extend(map);
            whole
        }
    }
}

pub(crate) fn from_map<T: serde::de::DeserializeOwned>(
    map: Map<String, Value>,
) -> Result<T, serde_json::Error> {
    serde_json::from_value(Value::Object(map))
}

#[cfg(test)]
mod tests {
    use super::{Content, StopReason, SystemMessage};

    /// Every reason Pi writes reads as its own variant (the overflow check
    /// matches on `Stop`, `Length` and `Error`) and is written back as read;
    /// one this crate does not know is kept as it came.
    #[test]
    fn stop_reasons_read_as_their_variants_and_write_back_as_read() {
        let known = [
            ("stop", StopReason::Stop),
            ("length", StopReason::Length),
            ("toolUse", StopReason::ToolUse),
            ("error", StopReason::Error),
            ("aborted", StopReason::Aborted),
            ("pending", StopReason::Pending),
            ("deferred", StopReason::Deferred),
            ("refusal", StopReason::Other("refusal".to_owned())),
        ];
        for (text, reason) in known {
            let json = format!("\"{text}\"");
            let read: StopReason = serde_json::from_str(&json).expect("a stop reason");
            assert_eq!(read, reason, "{text}");
            assert_eq!(serde_json::to_string(&read).expect("written"), json);
        }
    }

    /// A system message without content, or with `null`, reads as empty
    /// text and is written back as `""`, as Pi writes one.
    #[test]
    fn a_system_message_without_content_is_empty_text() {
        for json in [r#"{"timestamp":1}"#, r#"{"content":null,"timestamp":1}"#] {
            let message: SystemMessage = serde_json::from_str(json).expect("a system message");
            assert_eq!(message.content, Content::Text(String::new()), "{json}");
            let written = serde_json::to_string(&message).expect("written");
            assert_eq!(written, r#"{"content":"","timestamp":1}"#);
        }
    }
}
