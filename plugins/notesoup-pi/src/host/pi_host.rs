//! `PiHost`: what the extension may ask of the host (pi-host.md §9.1).

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::api_level::PiApiLevel;
use super::events::{CustomMessageDraft, DeliverAs, ModelInfo};
use crate::json::pi_object;
use crate::projection::{Projection, project};
use crate::session::{Entry, EntryIndex, Leaf, SessionError, SessionHeader};

/// A host refused an action.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// The host does not offer this action at its API level.
    #[error("the host does not support {action} at {level:?}")]
    Unsupported {
        /// The action.
        action: &'static str,
        /// The host's level.
        level: PiApiLevel,
    },
    /// The host refused the action.
    #[error("{message}")]
    Rejected {
        /// The refusal.
        message: String,
    },
    /// The session file could not be written.
    #[error(transparent)]
    Session(#[from] SessionError),
}

impl HostError {
    /// A stable code for the refusal.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Unsupported { .. } => "host_unsupported",
            Self::Rejected { .. } => "host_rejected",
            Self::Session(err) => err.code(),
        }
    }
}

/// `ctx.ui.notify` levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NotifyLevel {
    /// `"info"`
    Info,
    /// `"warning"`
    Warning,
    /// `"error"`
    Error,
}

pi_object! {
    /// Options of `pi.sendMessage`.
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct SendOptions {
        /// Start a turn when idle (or steer while streaming).
        #[serde(default)]
        pub trigger_turn: bool,
        /// How to deliver while streaming.
        pub deliver_as?: DeliverAs,
    }
}

/// `ctx.getContextUsage()`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextUsage {
    /// Estimated context tokens; `None` right after a compaction.
    pub tokens: Option<u64>,
    /// The model's context window.
    pub context_window: u64,
    /// `tokens / context_window * 100`.
    pub percent: Option<f64>,
}

/// Pi's compaction settings for the current model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionSettings {
    /// `compaction.enabled` (notesoup's automatic resets follow it).
    pub enabled: bool,
    /// `compaction.reserveTokens`.
    pub reserve_tokens: u64,
    /// `compaction.keepRecentTokens`.
    pub keep_recent_tokens: u64,
}

impl Default for CompactionSettings {
    /// Pi's defaults: enabled, 16384 reserved, 20000 kept.
    fn default() -> Self {
        Self {
            enabled: true,
            reserve_tokens: 16_384,
            keep_recent_tokens: 20_000,
        }
    }
}

/// The settings records a host exposes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostSettings {
    /// `~/.pi/agent/settings.json`, unknown keys kept.
    pub global: Value,
    /// `<cwd>/.pi/settings.json` (`{}` when the project is not trusted).
    pub project: Value,
    /// Compaction settings resolved for the current model.
    pub compaction: CompactionSettings,
}

/// The actions an extension may call, and read-only session access. Names
/// mirror Pi's `ExtensionAPI`, `ctx` and `ReadonlySessionManager`.
pub trait PiHost {
    /// The API generation this host implements.
    fn api_level(&self) -> PiApiLevel;
    /// Pi's `VERSION` (e.g. `"1.6.0"`), as `/notesoup` reports it.
    fn pi_version(&self) -> &str;

    /// `pi.appendEntry(customType, data?)`: a `custom` entry; returns its id.
    fn append_entry(&mut self, custom_type: &str, data: Option<Value>)
    -> Result<String, HostError>;
    /// `pi.sendMessage(message, {triggerTurn, deliverAs})`.
    fn send_message(
        &mut self,
        message: CustomMessageDraft,
        options: SendOptions,
    ) -> Result<(), HostError>;
    /// `ctx.ui.notify(message, level)`.
    fn notify(&mut self, message: &str, level: NotifyLevel);
    /// `ctx.abort()`.
    fn abort(&mut self);
    /// `ctx.isIdle()`.
    fn is_idle(&self) -> bool;
    /// `ctx.signal?.aborted`: the current operation was aborted.
    fn signal_aborted(&self) -> bool;
    /// `ctx.hasPendingMessages()`: queued user steer/follow-up prompts.
    fn has_pending_messages(&self) -> bool;
    /// `ctx.getContextUsage()`.
    fn context_usage(&self) -> Option<ContextUsage>;
    /// `ctx.model`: identity and limits.
    fn model(&self) -> Option<ModelInfo>;
    /// Global and project settings and the compaction settings
    /// (`pi.getSettings()`, `getCompactionSettings(model)`); an error when
    /// they cannot be read (Pi throws on an invalid compaction value).
    fn settings(&self) -> Result<HostSettings, HostError>;
    /// `ctx.isProjectTrusted()`.
    fn is_project_trusted(&self) -> bool;

    /// `getSessionId()`.
    fn session_id(&self) -> &str;
    /// `getHeader()`.
    fn header(&self) -> Option<&SessionHeader>;
    /// `getCwd()`.
    fn cwd(&self) -> &Path;
    /// `getSessionFile()`; `None` for an in-memory session.
    fn session_file(&self) -> Option<&Path>;
    /// `getEntries()`: every entry in append order, each decoded. Only
    /// the history tools read them all; a handler reads a narrower view.
    fn entries(&self) -> Vec<&Entry>;
    /// `getLeafId()`.
    fn leaf_id(&self) -> Option<&str>;

    /// `getEntry(id)`; a later duplicate id wins, like Pi's index.
    fn entry(&self, id: &str) -> Option<&Entry>;

    /// `getBranch(fromId?)`: root to `from` (default: the leaf), every
    /// entry decoded.
    fn branch(&self, from: Option<&str>) -> Vec<&Entry>;

    /// The branch to `from` (default: the leaf) as the window rules
    /// (`crate::reset::window`, `crate::projection::reset_markers`) read
    /// it: every entry that is not a `message` is the branch's own, and a
    /// `message` entry may be a stand-in (an untyped entry of type
    /// `message`, which those rules treat as they treat a message), so a
    /// host that reads its session lazily need not decode the messages.
    /// The default is [`Self::branch`].
    fn window_branch(&self, from: Option<&str>) -> Vec<&Entry> {
        self.branch(from)
    }

    /// `buildSessionProjection()` at the current leaf.
    fn build_projection(&self) -> Projection<'_>;
}

/// The session accessors of [`PiHost`] over entries a host holds decoded
/// in memory, in append order, with its leaf.
#[derive(Debug, Clone, Copy)]
pub struct HeldEntries<'a> {
    /// Every entry, in append order.
    pub entries: &'a [Entry],
    /// `getLeafId()`.
    pub leaf: Option<&'a str>,
}

impl<'a> HeldEntries<'a> {
    /// [`PiHost::entries`].
    pub fn all(self) -> Vec<&'a Entry> {
        self.entries.iter().collect()
    }

    /// [`PiHost::entry`]: a later duplicate id wins.
    pub fn entry(self, id: &str) -> Option<&'a Entry> {
        self.entries.iter().rev().find(|entry| entry.id() == id)
    }

    /// [`PiHost::branch`].
    pub fn branch(self, from: Option<&str>) -> Vec<&'a Entry> {
        match from.or(self.leaf) {
            Some(from) => EntryIndex::new(self.entries).branch(from),
            None => Vec::new(),
        }
    }

    /// [`PiHost::build_projection`].
    pub fn projection(self) -> Projection<'a> {
        let leaf = self.leaf.map_or(Leaf::Null, Leaf::Id);
        project(&EntryIndex::new(self.entries), leaf)
    }
}
