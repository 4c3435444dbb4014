//! The budget on Claude Code: occupancy from transcript usage, the context
//! window from the model id, the reserve rule, and which notice a hook owes.
//! The lines themselves and the texts are core's.

use notesoup_core::budget::{BudgetPolicy, BudgetStage, ClampedReserve};

use crate::state::WindowFlags;
use crate::transcript::scan::LastReply;

/// Claude Code's default context window.
pub const DEFAULT_CONTEXT_WINDOW: u64 = 200_000;
/// The window a model id with the `[1m]` suffix selects.
pub const LONG_CONTEXT_WINDOW: u64 = 1_000_000;
/// Claude Code auto-compacts at roughly 85% of the window and a plugin
/// cannot read the user's threshold, so the reserve covers the top 15%.
pub const RESERVE_PERCENT: u64 = 15;

/// User overrides (the plugin's `userConfig`, which Claude Code hands hooks
/// as `CLAUDE_PLUGIN_OPTION_<KEY>`) and the one Claude Code switch that
/// changes the window.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BudgetConfig {
    /// `context_window_tokens`.
    pub context_window: Option<u64>,
    /// `reserve_tokens`, as configured (clamped by core before use).
    pub reserve: Option<f64>,
    /// `reminder_margin_tokens`.
    pub reminder_margin: Option<u64>,
    /// `CLAUDE_CODE_DISABLE_1M_CONTEXT` is set.
    pub disable_1m: bool,
}

/// The context window of the model that produced `reply`: the user's
/// override, else 1,000,000 for a model id with the `[1m]` suffix (unless
/// Claude Code's 1M context is disabled), else 200,000.
pub fn context_window(reply: &LastReply, config: &BudgetConfig) -> u64 {
    if let Some(window) = config.context_window {
        return window;
    }
    let long = [reply.requested_model.as_deref(), reply.model.as_deref()]
        .into_iter()
        .flatten()
        .any(|id| id.to_ascii_lowercase().ends_with("[1m]"));
    if long && !config.disable_1m {
        LONG_CONTEXT_WINDOW
    } else {
        DEFAULT_CONTEXT_WINDOW
    }
}

/// The budget of one live window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// The lines.
    pub policy: BudgetPolicy,
    /// Tokens left in the window.
    pub remaining: u64,
}

impl Budget {
    /// The budget after `reply`: `remaining = window - context_tokens`, the
    /// reserve the larger of the default and 15% of the window (or the
    /// user's, clamped by core).
    pub fn measure(reply: &LastReply, config: &BudgetConfig) -> Self {
        let window = context_window(reply, config);
        Self {
            policy: policy(window, config),
            remaining: BudgetPolicy::remaining_tokens(window, reply.usage.context_tokens()),
        }
    }

    /// The stage the live window is in (Claude has no automatic reset, but
    /// the warning is the close-out request, so the stages are the full ones).
    pub fn stage(&self) -> BudgetStage {
        self.policy.stage(Some(self.remaining), true)
    }

    /// The countdown the reminder freezes into its text.
    pub fn countdown(&self) -> u64 {
        self.policy.countdown(Some(self.remaining)).unwrap_or(0)
    }
}

/// The lines in a window of `window` tokens: the reserve the larger of the
/// default and 15% of the window (or the user's, clamped by core), the
/// user's reminder margin or the default.
pub fn policy(window: u64, config: &BudgetConfig) -> BudgetPolicy {
    let reserve = match config.reserve {
        Some(raw) => ClampedReserve::of(raw, Some(window)).tokens,
        None => BudgetPolicy::DEFAULT_RESERVE_TOKENS.max(window * RESERVE_PERCENT / 100),
    };
    let margin = config
        .reminder_margin
        .filter(|m| *m > 0)
        .unwrap_or(BudgetPolicy::DEFAULT_REMINDER_MARGIN_TOKENS);
    BudgetPolicy::new(reserve, margin)
}

/// What a prompt-time hook (UserPromptSubmit, PostToolBatch) delivers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BudgetNotice {
    /// The reminder, with its countdown.
    Reminder(u64),
    /// The close-out warning.
    Warning,
}

/// The notice owed now, once per window each: the warning at or below the
/// warning line, else the reminder at or below the reminder line (never
/// after the warning).
pub fn notice_due(budget: &Budget, flags: &WindowFlags) -> Option<BudgetNotice> {
    match budget.stage() {
        BudgetStage::Warning | BudgetStage::HardReserve if !flags.warning_shown => {
            Some(BudgetNotice::Warning)
        }
        BudgetStage::Reminder if !flags.reminder_shown && !flags.warning_shown => {
            Some(BudgetNotice::Reminder(budget.countdown()))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::row::TokenUsage;

    fn reply(tokens: u64, model: &str) -> LastReply {
        LastReply {
            usage: TokenUsage {
                input_tokens: tokens,
                ..TokenUsage::default()
            },
            model: Some("claude-x".into()),
            requested_model: Some(model.into()),
        }
    }

    #[test]
    fn the_window_follows_the_suffix_and_the_overrides() {
        let cfg = BudgetConfig::default();
        assert_eq!(context_window(&reply(0, "claude-x"), &cfg), 200_000);
        assert_eq!(context_window(&reply(0, "claude-x[1M]"), &cfg), 1_000_000);
        let off = BudgetConfig {
            disable_1m: true,
            ..cfg.clone()
        };
        assert_eq!(context_window(&reply(0, "claude-x[1m]"), &off), 200_000);
        let set = BudgetConfig {
            context_window: Some(500_000),
            ..cfg
        };
        assert_eq!(context_window(&reply(0, "claude-x"), &set), 500_000);
    }

    fn check(tokens: u64, flags: WindowFlags, expect: Option<BudgetNotice>) {
        let budget = Budget::measure(&reply(tokens, "claude-x"), &BudgetConfig::default());
        assert_eq!(notice_due(&budget, &flags), expect, "{tokens} {flags:?}");
    }

    #[test]
    fn lines_on_a_200k_window() {
        // Reserve 30,000 (15%), warning at 46,384 remaining, reminder at 54,576.
        let none = WindowFlags::default();
        check(145_423, none, None);
        check(145_424, none, Some(BudgetNotice::Reminder(8_192)));
        check(153_615, none, Some(BudgetNotice::Reminder(1)));
        check(153_616, none, Some(BudgetNotice::Warning));
        check(199_000, none, Some(BudgetNotice::Warning));
        let reminded = WindowFlags {
            reminder_shown: true,
            ..none
        };
        check(150_000, reminded, None);
        check(160_000, reminded, Some(BudgetNotice::Warning));
        let warned = WindowFlags {
            warning_shown: true,
            ..none
        };
        check(150_000, warned, None);
        check(190_000, warned, None);
    }

    #[test]
    fn the_reserve_is_at_least_the_default() {
        let small = BudgetConfig {
            context_window: Some(50_000),
            ..BudgetConfig::default()
        };
        let budget = Budget::measure(&reply(0, "m"), &small);
        assert_eq!(
            budget.policy.reserve_line(),
            BudgetPolicy::DEFAULT_RESERVE_TOKENS
        );
        let custom = BudgetConfig {
            reserve: Some(20_000.0),
            reminder_margin: Some(1_000),
            ..BudgetConfig::default()
        };
        let budget = Budget::measure(&reply(0, "m"), &custom);
        assert_eq!(budget.policy.reserve_line(), 20_000);
        assert_eq!(budget.policy.reminder_line(), 21_000);
        // A margin of 0 is no margin the user chose: the default stands.
        let zero = BudgetConfig {
            reminder_margin: Some(0),
            ..custom
        };
        let budget = Budget::measure(&reply(0, "m"), &zero);
        assert_eq!(
            budget.policy.reminder_line(),
            20_000 + BudgetPolicy::DEFAULT_REMINDER_MARGIN_TOKENS
        );
    }
}
