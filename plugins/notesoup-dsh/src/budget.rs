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
    use serde_json::{Value, json};

    use super::*;
    use crate::messages::{human_prompt, notice};

    #[test]
    fn a_window_s_notices_are_notesoup_s_own_user_messages_since_it_began() {
        let event = |seq, kind: &str, data| SessionEvent::test_event(seq, kind, data, None);
        let told = |seq, kind| event(seq, "user/message", notice(kind, "text", "summary"));
        let answer = |seq| {
            let message = json!({"role": "assistant", "content": [{"type": "text", "text": "ok"}]});
            event(seq, "assistant/message", json!({ "message": message }))
        };
        let since = |events: &[SessionEvent]| WindowNotices::since(events, 2);
        let none = WindowNotices::default();

        let before = [
            told(0, DshNotice::Warning),
            told(1, DshNotice::Reminder),
            answer(1),
        ];
        assert_eq!(since(&before), none, "the window begins at seq 2");
        assert_eq!(
            since(&[answer(2)]),
            WindowNotices {
                answered: true,
                ..none
            }
        );
        let reminded = WindowNotices {
            reminder: true,
            ..none
        };
        assert_eq!(since(&[told(2, DshNotice::Reminder)]), reminded);
        let warned = WindowNotices {
            warning: true,
            ..none
        };
        assert_eq!(since(&[told(3, DshNotice::Warning)]), warned);
        assert_eq!(since(&[told(3, DshNotice::CloseOut)]), warned);
        assert_eq!(
            since(&[
                told(2, DshNotice::Reminder),
                answer(3),
                told(4, DshNotice::Warning)
            ]),
            WindowNotices {
                reminder: true,
                warning: true,
                answered: true,
            }
        );

        let mut foreign = told(3, DshNotice::Warning);
        foreign.data["source"]["plugin"] = Value::from("another-plugin");
        let not_user = event(
            3,
            "tool/result",
            json!({ "message": notice(DshNotice::Warning, "t", "s") }),
        );
        let others = [
            told(3, DshNotice::Continuation),
            foreign,
            not_user,
            event(3, "user/message", human_prompt("warning")),
            event(3, "user/message", json!({"role": "user", "content": []})),
        ];
        assert_eq!(since(&others), none, "no reminder, warning or answer");
    }

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
