//! Typed payloads and results of the Pi events notesoup handles (pi-host.md §5.3).
//! Names and JSON shapes mirror Pi's TypeScript, so a shim can forward
//! `pi.on(…)` events as JSON without a translation layer.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::boundary::BoundaryState;
use crate::session::{
    AgentMessage, BranchSummaryEntry, CompactionEntry, Content, ContentBlock, CustomMessage, Entry,
    ImageContent, ToolResultMessage, Usage,
};

/// Why a session started (≥ 0.87; v0.58 sends no reason).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SessionStartReason {
    /// `"startup"`
    Startup,
    /// `"reload"`
    Reload,
    /// `"new"`
    New,
    /// `"resume"`
    Resume,
    /// `"fork"`
    Fork,
}

/// `session_start`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionStartEvent {
    /// Why; absent on v0.58.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<SessionStartReason>,
    /// The session file before a switch or fork.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_session_file: Option<String>,
}

/// Why a session shut down.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SessionShutdownReason {
    /// `"quit"`
    Quit,
    /// `"reload"`
    Reload,
    /// `"new"`
    New,
    /// `"resume"`
    Resume,
    /// `"fork"`
    Fork,
}

/// `session_shutdown`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionShutdownEvent {
    /// Why; absent on v0.58.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<SessionShutdownReason>,
    /// The session file switched to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_session_file: Option<String>,
}

/// `TreePreparation` of `session_before_tree`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TreePreparation {
    /// The entry navigated to.
    pub target_id: String,
    /// The leaf before navigation.
    pub old_leaf_id: Option<String>,
    /// The common ancestor of both.
    pub common_ancestor_id: Option<String>,
    /// The abandoned entries a summary would cover.
    pub entries_to_summarize: Vec<Entry>,
    /// Whether the user asked for a summary.
    pub user_wants_summary: bool,
    /// Extra summary instructions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_instructions: Option<String>,
    /// Whether those instructions replace the default ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replace_instructions: Option<bool>,
    /// A label for the target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

/// `session_before_tree`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionBeforeTreeEvent {
    /// What the navigation would do.
    pub preparation: TreePreparation,
}

/// A summary supplied by an extension.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TreeSummary {
    /// The text; empty writes no `branch_summary` (1.6.0).
    pub summary: String,
    /// Implementation data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    /// Usage of its generation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

/// The result of `session_before_tree`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionBeforeTreeResult {
    /// Cancel the navigation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel: Option<bool>,
    /// Use this summary (only when the user asked for one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<TreeSummary>,
    /// Replacement instructions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_instructions: Option<String>,
    /// Whether the instructions replace the default ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replace_instructions: Option<bool>,
    /// A label for the target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

/// `session_tree`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionTreeEvent {
    /// The new leaf.
    pub new_leaf_id: Option<String>,
    /// The old leaf.
    pub old_leaf_id: Option<String>,
    /// The summary written, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary_entry: Option<BranchSummaryEntry>,
    /// Whether an extension supplied the summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_extension: Option<bool>,
}

/// Why a compaction runs (≥ 0.79.10).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CompactionReason {
    /// `/compact`.
    Manual,
    /// The threshold was crossed.
    Threshold,
    /// A context overflow.
    Overflow,
}

/// `session_before_compact`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionBeforeCompactEvent {
    /// Pi's `CompactionPreparation`, kept opaque.
    pub preparation: Value,
    /// The branch being compacted.
    pub branch_entries: Vec<Entry>,
    /// `/compact <instructions>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_instructions: Option<String>,
    /// Why; absent before 0.79.10.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<CompactionReason>,
    /// Whether Pi retries the request after compacting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub will_retry: Option<bool>,
}

/// A compaction supplied by an extension (`CompactionResult`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionSupplied {
    /// The summary.
    pub summary: String,
    /// The first kept entry.
    pub first_kept_entry_id: String,
    /// Tokens before.
    pub tokens_before: u64,
    /// Implementation data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
}

/// The result of `session_before_compact`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionBeforeCompactResult {
    /// Cancel the compaction (notesoup does while it owns the window).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel: Option<bool>,
    /// Use this compaction instead of Pi's summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compaction: Option<CompactionSupplied>,
}

/// `session_compact`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionCompactEvent {
    /// The entry written.
    pub compaction_entry: CompactionEntry,
    /// Whether an extension supplied it.
    pub from_extension: bool,
    /// Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<CompactionReason>,
    /// Whether Pi retries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub will_retry: Option<bool>,
}

/// The model a host runs: identity and limits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelInfo {
    /// Provider id.
    pub provider: String,
    /// Model id.
    pub id: String,
    /// Context window in tokens.
    pub context_window: u64,
    /// Output limit in tokens.
    pub max_tokens: u64,
}

/// `model_select`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelSelectEvent {
    /// The new model.
    pub model: ModelInfo,
    /// The previous model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_model: Option<ModelInfo>,
    /// `set`, `cycle` or `restore`.
    pub source: String,
}

/// What started an agent run (1.6.0 `messageType`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "messageType", rename_all = "lowercase")]
pub enum AgentStartInput {
    /// A user prompt.
    User {
        /// The prompt text.
        prompt: String,
        /// Attached images.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        images: Option<Vec<ImageContent>>,
    },
    /// An idle `sendMessage(…, {triggerTurn:true})`.
    Custom {
        /// The custom message.
        message: CustomMessage,
    },
}

/// `before_agent_start`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BeforeAgentStartEvent {
    /// The effective system prompt.
    pub system_prompt: String,
    /// What started the run.
    #[serde(flatten)]
    pub input: AgentStartInput,
}

/// A custom message an extension sends (`sendMessage`, `before_agent_start`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomMessageDraft {
    /// The extension's type name.
    pub custom_type: String,
    /// Text or blocks.
    pub content: Content,
    /// Whether the TUI shows it.
    pub display: bool,
    /// Extension metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
}

/// The result of `before_agent_start`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BeforeAgentStartResult {
    /// A message to add before the prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<CustomMessageDraft>,
    /// A replacement system prompt for this run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
}

/// `turn_start`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnStartEvent {
    /// 0-based turn index within the run.
    pub turn_index: u64,
    /// Milliseconds since the epoch.
    pub timestamp: i64,
}

/// `turn_end`: the turn plus, from 0.87, the boundary state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnEndEvent {
    /// 0-based turn index within the run.
    pub turn_index: u64,
    /// The assistant message.
    pub message: AgentMessage,
    /// Its tool results.
    pub tool_results: Vec<ToolResultMessage>,
    /// The saved assistant entry (≥ 0.87).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_entry_id: Option<String>,
    /// The saved tool-result entries (≥ 0.87).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_result_entry_ids: Option<Vec<String>>,
    /// The boundary state (≥ 0.87); `None` on older hosts.
    #[serde(default, flatten, skip_serializing_if = "Option::is_none")]
    pub boundary: Option<BoundaryState>,
}

/// `agent_settled`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentSettledEvent {
    /// True when the run ended through an actual abort (1.6.0).
    #[serde(default)]
    pub aborted: bool,
}

/// `tool_result`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultEvent {
    /// The call id.
    pub tool_call_id: String,
    /// The tool.
    pub tool_name: String,
    /// The call's arguments.
    pub input: Value,
    /// The result blocks.
    pub content: Vec<ContentBlock>,
    /// Tool details.
    #[serde(default)]
    pub details: Value,
    /// Whether the tool failed.
    pub is_error: bool,
    /// Usage of the tool's execution.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

/// The result of `tool_result`: fields replace the result's, one by one.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultPatch {
    /// Replacement blocks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Vec<ContentBlock>>,
    /// Replacement details.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    /// Replacement error flag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
}

/// Where input came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InputSource {
    /// The TUI.
    Interactive,
    /// RPC mode.
    Rpc,
    /// An extension.
    Extension,
}

/// How queued input joins a running turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum DeliverAs {
    /// Into the running turn, after its tool calls.
    Steer,
    /// After the run finishes its pending work.
    FollowUp,
    /// With the next prompt.
    NextTurn,
}

/// `input`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputEvent {
    /// The text typed or sent.
    pub text: String,
    /// Attached images.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub images: Option<Vec<ImageContent>>,
    /// Where it came from.
    pub source: InputSource,
    /// Steer or follow-up while streaming.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streaming_behavior: Option<DeliverAs>,
}

/// The result of `input`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "lowercase")]
pub enum InputResult {
    /// Let Pi handle the input.
    #[default]
    Continue,
    /// Replace the input.
    Transform {
        /// The new text.
        text: String,
        /// The new images.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        images: Option<Vec<ImageContent>>,
    },
    /// The extension consumed it.
    Handled,
}
