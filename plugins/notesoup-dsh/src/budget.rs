//! The budget decision on dsh: core's thresholds over dsh's token meter, with
//! what the current window already received read from the session log.
//!
//! `remaining = contextWindow - totalTokens`. The reminder and the warning are
//! each given once per window as notesoup notices inside the step they were
//! decided for; at the hard reserve the bundle resets before the step.
//!
//! Nothing is decided in a window the model has not answered in yet: dsh's
//! meter re-anchors on a window's first provider usage, so until then its
//! figure is the last window's usage less the estimate of what the reset
//! shadowed, and a reset of a window holding only its boot frees nothing (it
//! would repeat at every step).

use notesoup_core::budget::{BudgetPolicy, BudgetStage};

use crate::decode::SessionEvent;
use crate::messages::DshNotice;
use crate::protocol::BudgetAction;

/// What the current window has already been told.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WindowNotices {
    /// A reminder is in the window.
    pub reminder: bool,
    /// A warning or a manual close-out is in the window.
    pub warning: bool,
    /// The model has answered in the window (an `assistant/message`).
    pub answered: bool,
}

impl WindowNotices {
    /// Reads the notices logged since the window began at `from_seq`.
    pub fn since(events: &[SessionEvent], from_seq: u64) -> Self {
        let mut notices = Self::default();
        for event in events.iter().filter(|e| e.seq >= from_seq) {
            if event.kind == "assistant/message" {
                notices.answered = true;
                continue;
            }
            if event.kind != "user/message" {
                continue;
            }
            let Some(source) = event.source() else {
                continue;
            };
            if !source.is_notesoup() {
                continue;
            }
            match source.notice.as_deref().and_then(DshNotice::parse) {
                Some(DshNotice::Reminder) => notices.reminder = true,
                Some(DshNotice::Warning | DshNotice::CloseOut) => notices.warning = true,
                _ => {}
            }
        }
        notices
    }
}

/// The decision for one step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    /// What the bundle does.
    pub action: BudgetAction,
    /// Tokens left, when usage and capacity are known.
    pub remaining: Option<u64>,
}

/// Decides the step's budget action.
///
/// Unknown usage or capacity decides nothing, and neither does a window the
/// model has not answered in. A window that already holds a warning gets no
/// reminder; each text is given once per window.
pub fn decide(
    policy: &BudgetPolicy,
    automatic: bool,
    total_tokens: Option<u64>,
    context_window: Option<u64>,
    notices: WindowNotices,
) -> Decision {
    let remaining = match (context_window, total_tokens) {
        (Some(window), Some(used)) => Some(BudgetPolicy::remaining_tokens(window, used)),
        _ => None,
    };
    let action = match policy.stage(remaining, automatic) {
        _ if !notices.answered => BudgetAction::None,
        BudgetStage::HardReserve => BudgetAction::Reset,
        BudgetStage::Warning if !notices.warning => BudgetAction::Warning,
        BudgetStage::Reminder if !notices.warning && !notices.reminder => BudgetAction::Reminder,
        _ => BudgetAction::None,
    };
    Decision { action, remaining }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_and_once_per_window() {
        let policy = BudgetPolicy::default();
        let none = WindowNotices {
            answered: true,
            ..WindowNotices::default()
        };
        let unanswered = WindowNotices::default();
        let warned = WindowNotices {
            warning: true,
            ..none
        };
        let reminded = WindowNotices {
            reminder: true,
            ..none
        };
        let window = Some(131_072);
        let check =
            |used: Option<u64>, capacity: Option<u64>, notices, automatic, action, remaining| {
                assert_eq!(
                    decide(&policy, automatic, used, capacity, notices),
                    Decision { action, remaining },
                    "used {used:?} of {capacity:?}"
                );
            };
        check(
            Some(10_000),
            window,
            none,
            true,
            BudgetAction::None,
            Some(121_072),
        );
        check(
            Some(131_072 - 40_960),
            window,
            none,
            true,
            BudgetAction::Reminder,
            Some(40_960),
        );
        check(
            Some(131_072 - 40_960),
            window,
            reminded,
            true,
            BudgetAction::None,
            Some(40_960),
        );
        check(
            Some(131_072 - 32_768),
            window,
            reminded,
            true,
            BudgetAction::Warning,
            Some(32_768),
        );
        check(
            Some(131_072 - 32_768),
            window,
            warned,
            true,
            BudgetAction::None,
            Some(32_768),
        );
        check(
            Some(131_072 - 32_768),
            window,
            none,
            false,
            BudgetAction::Reminder,
            Some(32_768),
        );
        check(
            Some(131_072 - 16_384),
            window,
            warned,
            true,
            BudgetAction::Reset,
            Some(16_384),
        );
        check(
            Some(200_000),
            window,
            none,
            false,
            BudgetAction::Reminder,
            Some(0),
        );
        check(
            Some(131_072 - 100),
            window,
            unanswered,
            true,
            BudgetAction::None,
            Some(100),
        );
        check(Some(10), None, none, true, BudgetAction::None, None);
        check(None, window, none, true, BudgetAction::None, None);
    }
}
