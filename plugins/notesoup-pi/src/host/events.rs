//! Typed payloads and results of the Pi events notesoup handles (pi-host.md §5.3).
//! Names and JSON shapes mirror Pi's TypeScript, so a shim can forward
//! `pi.on(…)` events as JSON without a translation layer.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::boundary::BoundaryState;
use crate::json::pi_object;
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

pi_object! {
    /// `session_start`.
    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct SessionStartEvent {
        /// Why; absent on v0.58.
        pub reason?: SessionStartReason,
        /// The session file before a switch or fork.
        pub previous_session_file?: String,
    }
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

pi_object! {
    /// `session_shutdown`.
    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct SessionShutdownEvent {
        /// Why; absent on v0.58.
        pub reason?: SessionShutdownReason,
        /// The session file switched to.
        pub target_session_file?: String,
    }
}

pi_object! {
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
        pub custom_instructions?: String,
        /// Whether those instructions replace the default ones.
        pub replace_instructions?: bool,
        /// A label for the target.
        pub label?: String,
    }
}

/// `session_before_tree`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionBeforeTreeEvent {
    /// What the navigation would do.
    pub preparation: TreePreparation,
}

pi_object! {
    /// A summary supplied by an extension.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct TreeSummary {
        /// The text; empty writes no `branch_summary` (1.6.0).
        pub summary: String,
        /// Implementation data.
        pub details?: Value,
        /// Usage of its generation.
        pub usage?: Usage,
    }
}

pi_object! {
    /// The result of `session_before_tree`.
    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct SessionBeforeTreeResult {
        /// Cancel the navigation.
        pub cancel?: bool,
        /// Use this summary (only when the user asked for one).
        pub summary?: TreeSummary,
        /// Replacement instructions.
        pub custom_instructions?: String,
        /// Whether the instructions replace the default ones.
        pub replace_instructions?: bool,
        /// A label for the target.
        pub label?: String,
    }
}

pi_object! {
    /// `session_tree`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct SessionTreeEvent {
        /// The new leaf.
        pub new_leaf_id: Option<String>,
        /// The old leaf.
        pub old_leaf_id: Option<String>,
        /// The summary written, if any.
        pub summary_entry?: BranchSummaryEntry,
        /// Whether an extension supplied the summary.
        pub from_extension?: bool,
    }
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

pi_object! {
    /// `session_before_compact`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct SessionBeforeCompactEvent {
        /// Pi's `CompactionPreparation`, kept opaque.
        pub preparation: Value,
        /// The branch being compacted.
        pub branch_entries: Vec<Entry>,
        /// `/compact <instructions>`.
        pub custom_instructions?: String,
        /// Why; absent before 0.79.10.
        pub reason?: CompactionReason,
        /// Whether Pi retries the request after compacting.
        pub will_retry?: bool,
    }
}

pi_object! {
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
        pub details?: Value,
    }
}

pi_object! {
    /// The result of `session_before_compact`.
    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
    pub struct SessionBeforeCompactResult {
        /// Cancel the compaction (notesoup does while it owns the window).
        pub cancel?: bool,
        /// Use this compaction instead of Pi's summary.
        pub compaction?: CompactionSupplied,
    }
}

pi_object! {
    /// `session_compact`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct SessionCompactEvent {
        /// The entry written.
        pub compaction_entry: CompactionEntry,
        /// Whether an extension supplied it.
        pub from_extension: bool,
        /// Why.
        pub reason?: CompactionReason,
        /// Whether Pi retries.
        pub will_retry?: bool,
    }
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

pi_object! {
    /// `model_select`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct ModelSelectEvent {
        /// The new model.
        pub model: ModelInfo,
        /// The previous model.
        pub previous_model?: ModelInfo,
        /// `set`, `cycle` or `restore`.
        pub source: String,
    }
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

pi_object! {
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
        pub details?: Value,
    }
}

pi_object! {
    /// The result of `before_agent_start`.
    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct BeforeAgentStartResult {
        /// A message to add before the prompt.
        pub message?: CustomMessageDraft,
        /// A replacement system prompt for this run.
        pub system_prompt?: String,
    }
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

pi_object! {
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
        pub message_entry_id?: String,
        /// The saved tool-result entries (≥ 0.87).
        pub tool_result_entry_ids?: Vec<String>,
        /// The boundary state (≥ 0.87); `None` on older hosts.
        #[serde(flatten)]
        pub boundary?: BoundaryState,
    }
}

/// `agent_settled`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentSettledEvent {
    /// True when the run ended through an actual abort (1.6.0).
    #[serde(default)]
    pub aborted: bool,
}

pi_object! {
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
        pub usage?: Usage,
    }
}

pi_object! {
    /// The result of `tool_result`: fields replace the result's, one by one.
    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct ToolResultPatch {
        /// Replacement blocks.
        pub content?: Vec<ContentBlock>,
        /// Replacement details.
        pub details?: Value,
        /// Replacement error flag.
        pub is_error?: bool,
    }
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

pi_object! {
    /// `input`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct InputEvent {
        /// The text typed or sent.
        pub text: String,
        /// Attached images.
        pub images?: Vec<ImageContent>,
        /// Where it came from.
        pub source: InputSource,
        /// Steer or follow-up while streaming.
        pub streaming_behavior?: DeliverAs,
    }
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
