//! What a host's format records about its windows beyond their events,
//! handed to the history with its transcript: below both the history model
//! that keeps it and the ledger that reads it.

use serde::{Deserialize, Serialize};

/// How a window ended.
#[typeshare::typeshare]
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// The agent called `wipe_memory`.
    Tool,
    /// A person asked for a fresh window (`/fresh-window`).
    Manual,
    /// The budget closed the window out after its warning.
    Budget,
    /// The window reached the hard reserve and was reset by force.
    HardReserve,
    /// The provider refused a request as too long and notesoup reset.
    Overflow,
    /// The host compacted the window itself.
    HostCompaction,
    /// A person ran `/clear`.
    Clear,
    /// The window was reset and the host recorded no reason (a legacy
    /// marker, or a history the host handed no signals).
    Reset,
    /// The window is the session's last and is still open.
    Open,
}

impl EndReason {
    /// The reason as texts show it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Tool => "tool",
            Self::Manual => "manual",
            Self::Budget => "budget",
            Self::HardReserve => "hard_reserve",
            Self::Overflow => "overflow",
            Self::HostCompaction => "host_compaction",
            Self::Clear => "clear",
            Self::Reset => "reset",
            Self::Open => "open",
        }
    }
}

/// A budget notice the agent was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoticeKind {
    /// The reminder: the window is getting full.
    Reminder,
    /// The warning: close out now.
    Warning,
}

/// What a host's format records about one window beyond its events.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowSignals {
    /// Context tokens after each model turn, as `(seq of the turn, tokens)`
    /// in seq order: what the next request would carry.
    pub fill: Vec<(u32, u64)>,
    /// The context window in tokens, when the host records it.
    pub context_window: Option<u64>,
    /// How the host's boundary after this window names its end: `Budget`
    /// for a normal reset (the ledger tells a `wipe_memory` or a manual
    /// close-out from it), `HardReserve`, `Overflow`, `HostCompaction`,
    /// `Clear`; `None` when no boundary follows or it names no reason.
    pub ended_by: Option<EndReason>,
    /// A person asked for the fresh window that ended this one.
    pub manual: bool,
    /// Budget notices given, as `(seq, kind)`.
    pub notices: Vec<(u32, NoticeKind)>,
    /// The summary length, in chars, of each host compaction in or at the
    /// end of this window (0: the compaction kept no summary).
    pub compaction_summaries: Vec<u64>,
    /// The context tokens the host measured just before the boundary, when
    /// it records them (a Pi compaction's `tokensBefore`).
    pub tokens_before_end: Option<u64>,
}
