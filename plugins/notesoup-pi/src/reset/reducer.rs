//! The pure reset reducer (`reduceResetControl` of the reset-lifecycle seed).
//!
//! The runtime supplies every lifecycle fact; the reducer returns the next
//! state and one named effect. It reads no clock, no session and no settings,
//! so every transition is a table row (see the tests).
//!
//! State is a request phase plus a bounded overflow phase:
//! - `none`: no close-out or tool request is pending;
//! - `close-out{windowId, source, prompt?}`: a manual (`/fresh-window`) or
//!   automatic (budget warning) close-out stays armed across ordinary
//!   note/tool turns;
//! - `stop-pending{windowId}`: a bare manual close-out met the hard reserve;
//!   its boundary was committed for `windowId` and the run stops at
//!   settlement without a second wipe;
//! - `tool-requested{windowId, source}`: `wipe_memory` commits at `turn_end`
//!   after the whole tool batch and continues in the fresh window.
//!
//! Overflow phases: `idle`, `pending` (one recovery may run at
//! pre-settlement), `pending-spent` (the chain already spent it), `spent`.

use crate::projection::MarkerOrigin;

/// Who armed a close-out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CloseOutSource {
    /// `/fresh-window`: commits at settlement and stops (or continues with
    /// the command's text).
    Manual,
    /// The budget warning: only an explicit `wipe_memory` commits it.
    Automatic,
}

/// Who asked for a turn-end reset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolSource {
    /// A direct `wipe_memory` call.
    Tool,
    /// `wipe_memory` inside a budget close-out.
    Automatic,
}

/// The request phase.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum RequestPhase {
    /// Nothing pending.
    #[default]
    None,
    /// A close-out armed for a window.
    CloseOut {
        /// The window to close.
        window_id: String,
        /// Who armed it.
        source: CloseOutSource,
        /// `/fresh-window <text>`: the text the fresh window continues with.
        prompt: Option<String>,
    },
    /// A manual hard-reserve reset of `window_id` was committed; settle stops.
    StopPending {
        /// The window the reset closed.
        window_id: String,
    },
    /// `wipe_memory` was called in `window_id`.
    ToolRequested {
        /// The window to close.
        window_id: String,
        /// Direct call or inside a budget close-out.
        source: ToolSource,
    },
}

/// The bounded overflow-recovery phase.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OverflowPhase {
    /// No overflow recovery is pending.
    #[default]
    Idle,
    /// An overflow failure may recover once at pre-settlement.
    Pending,
    /// A further overflow after the one recovery of this chain was spent.
    PendingSpent,
    /// The one recovery was used; it stays used until the chain settles.
    Spent,
}

/// The reducer's state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResetControl {
    /// The request phase.
    pub request: RequestPhase,
    /// The overflow phase.
    pub overflow: OverflowPhase,
}

/// How the turn or run that reached a boundary ended, as the reducer needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurnOutcome {
    /// A normal response (stop, tool use).
    Completed,
    /// `stopReason: "aborted"` (an actual abort or a synthetic one).
    Aborted,
    /// An error response, or a length/silent overflow; `overflow` when
    /// pi-ai's `isContextOverflow` or `isRecoverableLength` says so.
    Error {
        /// The failure is a context overflow.
        overflow: bool,
    },
}

/// The facts of a `turn_end`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnEndFacts {
    /// The active window when the turn ended.
    pub window_id: String,
    /// How the turn ended.
    pub outcome: TurnOutcome,
    /// Steering or follow-up work is queued.
    pub queued: bool,
    /// notesoup is on.
    pub enabled: bool,
    /// Automatic resets are on (Pi's `compaction.enabled`).
    pub automatic: bool,
    /// The completed turn left no more than the reserve.
    pub hard_reserve: bool,
}

/// The facts of an `agent_before_settle`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettleFacts {
    /// The active window at settlement.
    pub window_id: String,
    /// How the last activity ended.
    pub outcome: TurnOutcome,
    /// The run ended through an actual abort.
    pub aborted: bool,
    /// Steering or follow-up work is still queued.
    pub queued: bool,
    /// notesoup is on.
    pub enabled: bool,
}

/// What happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResetEvent {
    /// `/fresh-window` (manual) or the budget warning (automatic).
    CloseOut {
        /// The active window.
        window_id: String,
        /// Who.
        source: CloseOutSource,
        /// `/fresh-window <text>`.
        prompt: Option<String>,
    },
    /// `wipe_memory`.
    ToolRequest {
        /// The active window.
        window_id: String,
    },
    /// `turn_end`.
    TurnEnd(TurnEndFacts),
    /// `agent_before_settle`.
    BeforeSettle(SettleFacts),
    /// `agent_settled`, a session transition, `/notesoup off` or an abort:
    /// transient state goes; durable markers stay authoritative.
    Clear,
}

/// What a commit writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitPlan {
    /// `"normal"` or `"forced"` (hard reserve, overflow recovery).
    pub origin: MarkerOrigin,
    /// The `/fresh-window <text>` carried verbatim as `notesoup/reset-prompt`.
    pub prompt: Option<String>,
}

impl CommitPlan {
    fn new(origin: MarkerOrigin, prompt: Option<String>) -> Self {
        Self { origin, prompt }
    }
}

/// The named effect of one transition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResetEffect {
    /// Nothing to do.
    None,
    /// A request was armed (`wipe_memory` answers `rollover_requested`).
    CloseOutArmed,
    /// A request for this window is already pending; nothing changed.
    AlreadyPending,
    /// Commit the boundary and continue in the fresh window.
    CommitBoundary(CommitPlan),
    /// Commit the boundary and stop.
    CommitBoundaryStop(CommitPlan),
    /// The boundary is already committed: stop the run.
    Stop,
    /// Bounded overflow recovery: commit a forced boundary and continue once.
    RecoverOverflow(CommitPlan),
}

/// One transition: the next state and its effect.
pub fn reduce(state: &ResetControl, event: &ResetEvent) -> (ResetControl, ResetEffect) {
    match event {
        ResetEvent::CloseOut {
            window_id,
            source,
            prompt,
        } => close_out(state, window_id, *source, prompt),
        ResetEvent::ToolRequest { window_id } => tool_request(state, window_id),
        ResetEvent::TurnEnd(facts) => turn_end(state, facts),
        ResetEvent::BeforeSettle(facts) => before_settle(state, facts),
        ResetEvent::Clear => (ResetControl::default(), ResetEffect::None),
    }
}

/// Whether an `agent_before_settle` could change `state` or have an effect,
/// whatever Pi reports at settlement (how the run ended, an abort, queued
/// work, the window then active, notesoup on or off): everywhere but in
/// the idle state, which every settlement leaves as it is (a table test
/// checks both against every settlement). While it cannot, the host need
/// not deliver the event at all.
pub fn settle_matters(state: &ResetControl) -> bool {
    *state != ResetControl::default()
}

fn with_request(state: &ResetControl, request: RequestPhase) -> ResetControl {
    ResetControl {
        request,
        overflow: state.overflow,
    }
}

fn unchanged(state: &ResetControl, effect: ResetEffect) -> (ResetControl, ResetEffect) {
    (state.clone(), effect)
}

fn close_out(
    state: &ResetControl,
    window: &str,
    source: CloseOutSource,
    prompt: &Option<String>,
) -> (ResetControl, ResetEffect) {
    let armed = RequestPhase::CloseOut {
        window_id: window.to_owned(),
        source,
        prompt: prompt.clone(),
    };
    match &state.request {
        RequestPhase::StopPending { .. } => unchanged(state, ResetEffect::AlreadyPending),
        RequestPhase::CloseOut {
            window_id,
            source: existing,
            ..
        } if window_id == window => {
            // Only a manual request upgrades an automatic one; everything
            // else repeats what is already armed.
            if *existing == CloseOutSource::Automatic && source == CloseOutSource::Manual {
                (with_request(state, armed), ResetEffect::CloseOutArmed)
            } else {
                unchanged(state, ResetEffect::AlreadyPending)
            }
        }
        RequestPhase::ToolRequested { window_id, .. } if window_id == window => match source {
            // A manual request turns a pending tool request into a
            // settle-committed close-out.
            CloseOutSource::Manual => (with_request(state, armed), ResetEffect::CloseOutArmed),
            CloseOutSource::Automatic => unchanged(state, ResetEffect::AlreadyPending),
        },
        _ => (with_request(state, armed), ResetEffect::CloseOutArmed),
    }
}

fn tool_request(state: &ResetControl, window: &str) -> (ResetControl, ResetEffect) {
    let requested = |source| RequestPhase::ToolRequested {
        window_id: window.to_owned(),
        source,
    };
    match &state.request {
        RequestPhase::StopPending { .. } => unchanged(state, ResetEffect::AlreadyPending),
        RequestPhase::ToolRequested { window_id, .. } if window_id == window => {
            unchanged(state, ResetEffect::AlreadyPending)
        }
        RequestPhase::CloseOut {
            window_id, source, ..
        } if window_id == window => match source {
            // Context pressure cannot wait for settlement.
            CloseOutSource::Automatic => (
                with_request(state, requested(ToolSource::Automatic)),
                ResetEffect::CloseOutArmed,
            ),
            // A manual close-out decides itself at settlement; a turn-end
            // commit would be overrun by Pi's tool-batch continuation.
            CloseOutSource::Manual => unchanged(state, ResetEffect::AlreadyPending),
        },
        _ => (
            with_request(state, requested(ToolSource::Tool)),
            ResetEffect::CloseOutArmed,
        ),
    }
}

fn turn_end(state: &ResetControl, facts: &TurnEndFacts) -> (ResetControl, ResetEffect) {
    match facts.outcome {
        TurnOutcome::Aborted => (ResetControl::default(), ResetEffect::None),
        TurnOutcome::Error { overflow: true } => {
            let chained = match state.overflow {
                OverflowPhase::Idle | OverflowPhase::Pending => OverflowPhase::Pending,
                OverflowPhase::Spent | OverflowPhase::PendingSpent => OverflowPhase::PendingSpent,
            };
            let manual = matches!(
                state.request,
                RequestPhase::CloseOut {
                    source: CloseOutSource::Manual,
                    ..
                }
            );
            let next = if manual {
                ResetControl {
                    request: state.request.clone(),
                    overflow: chained,
                }
            } else if !facts.queued && facts.enabled && facts.automatic {
                ResetControl {
                    request: RequestPhase::None,
                    overflow: chained,
                }
            } else {
                with_request(state, RequestPhase::None)
            };
            (next, ResetEffect::None)
        }
        TurnOutcome::Error { overflow: false } => {
            (with_request(state, RequestPhase::None), ResetEffect::None)
        }
        TurnOutcome::Completed => completed_turn(state, facts),
    }
}

fn completed_turn(state: &ResetControl, facts: &TurnEndFacts) -> (ResetControl, ResetEffect) {
    // A success clears a pending overflow failure; a spent recovery stays
    // spent until the chain settles.
    let overflow = match state.overflow {
        OverflowPhase::Pending => OverflowPhase::Idle,
        OverflowPhase::PendingSpent => OverflowPhase::Spent,
        other => other,
    };
    let keep = |request: RequestPhase| ResetControl { request, overflow };
    if !facts.enabled {
        return (keep(state.request.clone()), ResetEffect::None);
    }
    let hard = facts.hard_reserve && facts.automatic;
    let origin = if hard {
        MarkerOrigin::Forced
    } else {
        MarkerOrigin::Normal
    };
    match &state.request {
        // Further turns cannot reset a stopped run again.
        RequestPhase::StopPending { .. } => (keep(state.request.clone()), ResetEffect::None),
        RequestPhase::ToolRequested { window_id, .. } if *window_id == facts.window_id => (
            keep(RequestPhase::None),
            ResetEffect::CommitBoundary(CommitPlan::new(origin, None)),
        ),
        RequestPhase::CloseOut {
            window_id,
            source: CloseOutSource::Manual,
            prompt,
        } if hard && *window_id == facts.window_id => match prompt {
            None => (
                keep(RequestPhase::StopPending {
                    window_id: window_id.clone(),
                }),
                ResetEffect::CommitBoundaryStop(CommitPlan::new(MarkerOrigin::Forced, None)),
            ),
            Some(text) => (
                keep(RequestPhase::None),
                ResetEffect::CommitBoundary(CommitPlan::new(
                    MarkerOrigin::Forced,
                    Some(text.clone()),
                )),
            ),
        },
        _ if hard => (
            keep(RequestPhase::None),
            ResetEffect::CommitBoundary(CommitPlan::new(MarkerOrigin::Forced, None)),
        ),
        // A tool request of a window that is no longer active is stale.
        RequestPhase::ToolRequested { .. } => (keep(RequestPhase::None), ResetEffect::None),
        // A close-out alone stays armed.
        other => (keep(other.clone()), ResetEffect::None),
    }
}

fn before_settle(state: &ResetControl, facts: &SettleFacts) -> (ResetControl, ResetEffect) {
    if facts.aborted {
        return (ResetControl::default(), ResetEffect::None);
    }
    let runnable = facts.enabled && !facts.queued;
    let overflowed = matches!(
        state.overflow,
        OverflowPhase::Pending | OverflowPhase::PendingSpent
    );
    let cleared = |overflow| ResetControl {
        request: RequestPhase::None,
        overflow,
    };
    match &state.request {
        // The committed stop needs only a stop; while its window is still
        // active the commit failed and is retried.
        RequestPhase::StopPending { window_id } => {
            if *window_id != facts.window_id {
                (cleared(state.overflow), ResetEffect::Stop)
            } else if facts.enabled {
                (
                    cleared(state.overflow),
                    ResetEffect::CommitBoundaryStop(CommitPlan::new(MarkerOrigin::Forced, None)),
                )
            } else {
                (cleared(state.overflow), ResetEffect::None)
            }
        }
        // Manual overflow commits without retry; it needs no automatic reset.
        RequestPhase::CloseOut {
            source: CloseOutSource::Manual,
            prompt,
            ..
        } if overflowed => {
            if !runnable {
                return unchanged(state, ResetEffect::None);
            }
            let plan = CommitPlan::new(MarkerOrigin::Forced, prompt.clone());
            let effect = match prompt {
                None => ResetEffect::CommitBoundaryStop(plan),
                Some(_) => ResetEffect::CommitBoundary(plan),
            };
            (cleared(OverflowPhase::Spent), effect)
        }
        _ if state.overflow == OverflowPhase::Pending => {
            if runnable {
                (
                    cleared(OverflowPhase::Spent),
                    ResetEffect::RecoverOverflow(CommitPlan::new(MarkerOrigin::Forced, None)),
                )
            } else {
                unchanged(state, ResetEffect::None)
            }
        }
        RequestPhase::CloseOut {
            window_id,
            source: CloseOutSource::Manual,
            prompt,
        } => {
            if *window_id != facts.window_id {
                return (cleared(state.overflow), ResetEffect::None);
            }
            if facts.outcome != TurnOutcome::Completed || !runnable {
                // Queued work runs first; the close-out stays armed.
                return unchanged(state, ResetEffect::None);
            }
            let plan = CommitPlan::new(MarkerOrigin::Normal, prompt.clone());
            let effect = match prompt {
                None => ResetEffect::CommitBoundaryStop(plan),
                Some(_) => ResetEffect::CommitBoundary(plan),
            };
            (cleared(state.overflow), effect)
        }
        // A budget close-out alone is discarded: budget warnings create no
        // reset state. A leftover tool request had its turn.
        RequestPhase::CloseOut { .. } | RequestPhase::ToolRequested { .. } => {
            (cleared(state.overflow), ResetEffect::None)
        }
        RequestPhase::None => unchanged(state, ResetEffect::None),
    }
}
