//! The reset lifecycle wired to Pi's boundary events: `turn_end` composes
//! incoming drafts, budget drafts and a boundary; `agent_before_settle`
//! commits manual close-outs and overflow recovery; notices wait for a
//! verified commit.

use notesoup_core::boot::ToolBindings;

use super::{Notesoup, texts};
use crate::host::{
    BoundaryOutcome, BoundaryResult, BoundaryState, CompactionReason, ModelInfo, NotifyLevel,
    PiHost, SessionBeforeCompactEvent, SessionBeforeCompactResult, SessionBeforeTreeEvent,
    SessionBeforeTreeResult, SessionBoundaryDraft, TreeSummary, TurnEndEvent,
};
use crate::overflow::{is_context_overflow, is_recoverable_length};
use crate::reset::window::{
    active_window, boundary_committed, custom_message_of, has_marker, mint_window_id,
    window_entries,
};
use crate::reset::{
    Boundary, CommitPlan, Kind, OverflowPhase, ResetEffect, ResetEvent, SettleFacts, TurnEndFacts,
    TurnOutcome,
};
use crate::session::{AgentMessage, Content};

/// How a turn ended, for the reducer: an overflow-like response (pi-ai's
/// `isContextOverflow`, or a length stop below the model's output limit)
/// counts as an overflow error whatever Pi's outcome says.
fn classify(
    message: &AgentMessage,
    outcome: BoundaryOutcome,
    model: Option<&ModelInfo>,
) -> TurnOutcome {
    if outcome == BoundaryOutcome::Aborted {
        return TurnOutcome::Aborted;
    }
    let overflow = match (message, model) {
        (AgentMessage::Assistant(assistant), Some(model)) => {
            is_context_overflow(assistant, model.context_window)
                || is_recoverable_length(assistant, model.max_tokens)
        }
        (AgentMessage::Assistant(assistant), None) => is_context_overflow(assistant, 0),
        _ => false,
    };
    match (overflow, outcome) {
        (true, _) => TurnOutcome::Error { overflow: true },
        (false, BoundaryOutcome::Error) => TurnOutcome::Error { overflow: false },
        _ => TurnOutcome::Completed,
    }
}

fn queued(host: &dyn PiHost, state: &BoundaryState) -> bool {
    !state.context.pending_messages.is_empty() || host.has_pending_messages()
}

impl Notesoup {
    /// `turn_end`: the sole composer for completed turns. Incoming drafts are
    /// kept, this window's staged budget drafts follow, then the boundary
    /// when the reducer commits (a tool request or the hard reserve). A
    /// failed or aborted turn returns nothing: Pi would save it anyway.
    pub(super) fn on_turn_end(
        &mut self,
        host: &mut dyn PiHost,
        event: &TurnEndEvent,
    ) -> BoundaryResult {
        let Some(state) = &event.boundary else {
            return BoundaryResult::keep();
        };
        let model = host.model();
        let outcome = classify(&event.message, state.outcome, model.as_ref());
        if outcome != TurnOutcome::Completed {
            self.staged.clear();
        }
        let policy = self.policy(host);
        let (window_id, hard_reserve) = {
            let branch = host.window_branch(None);
            let window = active_window(&branch, host.session_id());
            let remaining = Self::remaining(host, &branch, &window);
            (
                window.id.clone(),
                remaining.is_some_and(|r| r <= policy.budget.reserve_line()),
            )
        };
        let effect = self.apply(ResetEvent::TurnEnd(TurnEndFacts {
            window_id: window_id.clone(),
            outcome,
            queued: queued(host, state),
            enabled: self.enabled,
            automatic: policy.automatic,
            hard_reserve,
        }));
        if outcome != TurnOutcome::Completed {
            return BoundaryResult::keep();
        }
        let mut entries = state.entries.clone();
        let budget = self.take_staged(&window_id);
        let mut changed = !budget.is_empty();
        entries.extend(budget);
        let mut continue_run = None;
        if let ResetEffect::CommitBoundary(plan) | ResetEffect::CommitBoundaryStop(plan) = &effect
            && let Some(drafts) = self.commit(host, plan)
        {
            entries.extend(drafts);
            changed = true;
            continue_run = Some(matches!(effect, ResetEffect::CommitBoundary(_)));
        }
        BoundaryResult {
            entries: changed.then_some(entries),
            continue_run,
        }
    }

    /// `agent_before_settle`: after Pi drained queued work. Commits a manual
    /// close-out (stopping, or continuing with the command's text), retries
    /// a committed stop, or recovers from an overflow once.
    pub(super) fn on_before_settle(
        &mut self,
        host: &mut dyn PiHost,
        state: &BoundaryState,
    ) -> BoundaryResult {
        let window_id = active_window(&host.window_branch(None), host.session_id()).id;
        let overflowed = matches!(
            self.control.overflow,
            OverflowPhase::Pending | OverflowPhase::PendingSpent
        );
        let outcome = match state.outcome {
            BoundaryOutcome::Completed => TurnOutcome::Completed,
            BoundaryOutcome::Aborted => TurnOutcome::Aborted,
            BoundaryOutcome::Error => TurnOutcome::Error {
                overflow: overflowed,
            },
        };
        let effect = self.apply(ResetEvent::BeforeSettle(SettleFacts {
            window_id,
            outcome,
            aborted: host.signal_aborted(),
            queued: queued(host, state),
            enabled: self.enabled,
        }));
        let (plan, continue_run) = match &effect {
            ResetEffect::CommitBoundary(plan) | ResetEffect::RecoverOverflow(plan) => (plan, true),
            ResetEffect::CommitBoundaryStop(plan) => (plan, false),
            ResetEffect::Stop => {
                return BoundaryResult {
                    entries: None,
                    continue_run: Some(false),
                };
            }
            _ => return BoundaryResult::keep(),
        };
        match self.commit(host, plan) {
            Some(drafts) => {
                let mut entries = state.entries.clone();
                entries.extend(drafts);
                BoundaryResult {
                    entries: Some(entries),
                    continue_run: Some(continue_run),
                }
            }
            None => BoundaryResult::keep(),
        }
    }

    /// The boundary drafts for a commit, remembering the new window for its
    /// success notice. On a construction failure the window stays: a warning
    /// is shown and nothing is written.
    fn commit(
        &mut self,
        host: &mut dyn PiHost,
        plan: &CommitPlan,
    ) -> Option<Vec<SessionBoundaryDraft>> {
        match self.build_boundary(host, plan) {
            Ok((window_id, drafts)) => {
                self.pending_resets.push(window_id);
                // The close-out's notes go out in the background (`auto`).
                self.notes_sync().auto_background();
                Some(drafts)
            }
            Err(error) => {
                host.notify(&texts::reset_failed(&error), NotifyLevel::Warning);
                None
            }
        }
    }

    fn build_boundary(
        &mut self,
        host: &mut dyn PiHost,
        plan: &CommitPlan,
    ) -> Result<(String, Vec<SessionBoundaryDraft>), String> {
        let session_id = host.session_id().to_owned();
        let (window_id, previous) = {
            let branch = host.window_branch(None);
            let previous = active_window(&branch, &session_id).id;
            (
                mint_window_id(&session_id, &branch, &mut self.random_hex8),
                previous,
            )
        };
        let boot = self.render_boot(host, &window_id, Some(&previous))?;
        let continuation = ToolBindings::continuation_text(&self.bindings);
        let drafts = Boundary {
            window_id: &window_id,
            session_id: &session_id,
            origin: plan.origin,
            boot: &boot,
            continuation: &continuation,
            prompt: plan.prompt.as_deref(),
        }
        .drafts();
        Ok((window_id, drafts))
    }

    /// This window's staged budget drafts, as hidden custom messages; staged
    /// drafts of any other window are dropped.
    fn take_staged(&mut self, window_id: &str) -> Vec<SessionBoundaryDraft> {
        self.staged
            .drain(..)
            .filter(|staged| staged.window_id == window_id)
            .map(|staged| SessionBoundaryDraft::CustomMessage {
                custom_type: staged.kind.custom_type().to_owned(),
                content: Content::Text(staged.text),
                display: false,
                details: None,
            })
            .collect()
    }

    /// Whether a notice waits for a durable fact ([`Self::announce_verified`]).
    pub(super) fn announcement_pending(&self) -> bool {
        self.pending_warning.is_some() || !self.pending_resets.is_empty()
    }

    /// Notices that wait for durable facts (checked at `turn_start` and
    /// `agent_settled`): `memory cleared` once the boundary is verified as
    /// committed, `context almost full` once the warning is durable in the
    /// window that produced it.
    pub(super) fn announce_verified(&mut self, host: &mut dyn PiHost) {
        if !self.announcement_pending() {
            return;
        }
        let mut notices = Vec::new();
        {
            let branch = host.window_branch(None);
            // In the order they happened: the warning, then the reset.
            if let Some(window_id) = &self.pending_warning {
                let durable =
                    window_entries(&branch, window_id, host.session_id()).is_some_and(|entries| {
                        entries
                            .iter()
                            .any(|e| custom_message_of(e, Kind::Warning).is_some())
                    });
                if durable {
                    notices.push((texts::CONTEXT_ALMOST_FULL.to_owned(), NotifyLevel::Warning));
                    self.pending_warning = None;
                }
            }
            self.pending_resets.retain(|window_id| {
                let committed = boundary_committed(&branch, window_id);
                if committed {
                    notices.push((texts::memory_cleared(window_id), NotifyLevel::Info));
                }
                !committed
            });
        }
        for (text, level) in notices {
            host.notify(&text, level);
        }
    }

    /// `session_before_compact`: Pi's compaction could summarize pre-reset
    /// history back into the window, so it is cancelled while notesoup is on
    /// or a marker is on the branch.
    pub(super) fn before_compact(
        &mut self,
        host: &mut dyn PiHost,
        event: &SessionBeforeCompactEvent,
    ) -> SessionBeforeCompactResult {
        if !self.enabled && !has_marker(&host.window_branch(None)) {
            return SessionBeforeCompactResult::default();
        }
        if event.reason == Some(CompactionReason::Manual) {
            host.notify(texts::COMPACT_CANCELLED, NotifyLevel::Info);
        }
        SessionBeforeCompactResult {
            cancel: Some(true),
            compaction: None,
        }
    }

    /// `session_before_tree`: a requested summary across a reset would be
    /// generated from raw, erased history; it becomes an empty summary (Pi
    /// then writes no `branch_summary`) and navigation goes on.
    pub(super) fn before_tree(
        &mut self,
        host: &mut dyn PiHost,
        event: &SessionBeforeTreeEvent,
    ) -> SessionBeforeTreeResult {
        let preparation = &event.preparation;
        if !preparation.user_wants_summary {
            return SessionBeforeTreeResult::default();
        }
        let crosses =
            |from: Option<&str>| from.is_some_and(|id| has_marker(&host.window_branch(Some(id))));
        if !(crosses(preparation.old_leaf_id.as_deref()) || crosses(Some(&preparation.target_id))) {
            return SessionBeforeTreeResult::default();
        }
        host.notify(texts::TREE_SUMMARY_SKIPPED, NotifyLevel::Info);
        SessionBeforeTreeResult {
            summary: Some(TreeSummary {
                summary: String::new(),
                details: None,
                usage: None,
            }),
            ..SessionBeforeTreeResult::default()
        }
    }
}
