//! The budget lines, the countdown and the staging decision: pure numbers in,
//! decisions out. Hosts measure usage and read settings; they never re-derive
//! a line.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use typeshare::typeshare;

/// The hard safety line when settings name none: a reset is forced when no
/// more than this many tokens remain.
pub(crate) const DEFAULT_RESERVE_TOKENS: u64 = 16_384;

/// How far above the reserve the one-time reminder fires, unless
/// `notesoup.reminderMarginTokens` says otherwise.
pub(crate) const DEFAULT_REMINDER_MARGIN_TOKENS: u64 = 24_576;

/// How far above the reserve the close-out warning fires. A constant, not a
/// setting: the countdown the model sees ends here.
pub(crate) const WARNING_RUNWAY_TOKENS: u64 = 16_384;

/// The largest reserve accepted when the context window is unknown (1 Mi
/// tokens, the size of today's largest common windows). See [`ClampedReserve::of`].
pub(crate) const MAX_RESERVE_TOKENS: u64 = 1_048_576;

/// The three budget lines of one session, derived from the reserve and the
/// reminder margin.
///
/// - reserve: the hard safety line;
/// - warning = reserve + `WARNING_RUNWAY_TOKENS`;
/// - reminder = reserve + reminder margin.
///
/// The lines are measured in tokens *remaining*: a line is reached when the
/// remaining tokens are at or below it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BudgetPolicy {
    reserve_tokens: u64,
    reminder_margin_tokens: u64,
}

impl Default for BudgetPolicy {
    /// Reserve 16,384, reminder at 40,960, warning at 32,768.
    fn default() -> Self {
        Self::new(DEFAULT_RESERVE_TOKENS, DEFAULT_REMINDER_MARGIN_TOKENS)
    }
}

impl BudgetPolicy {
    /// The hard safety line when settings name none: a reset is forced when
    /// no more than this many tokens remain.
    pub const DEFAULT_RESERVE_TOKENS: u64 = DEFAULT_RESERVE_TOKENS;

    /// How far above the reserve the one-time reminder fires, unless
    /// `notesoup.reminderMarginTokens` says otherwise.
    pub const DEFAULT_REMINDER_MARGIN_TOKENS: u64 = DEFAULT_REMINDER_MARGIN_TOKENS;

    /// Tokens still free in the active window: `max(0, context_window - used)`.
    pub fn remaining_tokens(context_window: u64, used_tokens: u64) -> u64 {
        context_window.saturating_sub(used_tokens)
    }

    /// A policy from an already sane reserve (see [`ClampedReserve::of`]) and a
    /// validated margin (see [`crate::settings`]).
    pub const fn new(reserve_tokens: u64, reminder_margin_tokens: u64) -> Self {
        Self {
            reserve_tokens,
            reminder_margin_tokens,
        }
    }

    /// The hard safety line.
    pub const fn reserve_line(&self) -> u64 {
        self.reserve_tokens
    }

    /// The reminder line: reserve + margin.
    pub const fn reminder_line(&self) -> u64 {
        self.reserve_tokens
            .saturating_add(self.reminder_margin_tokens)
    }

    /// The warning line: reserve + runway.
    pub const fn warning_line(&self) -> u64 {
        self.reserve_tokens.saturating_add(WARNING_RUNWAY_TOKENS)
    }

    /// The countdown shown to the model: `max(0, remaining - warning)`, or
    /// `None` when usage is unknown.
    ///
    /// A deliberate fiction: it reaches zero at the warning line, not at the
    /// hard reserve, so the runway below it is hidden overdraft for the
    /// close-out.
    pub fn countdown(&self, remaining: Option<u64>) -> Option<u64> {
        remaining.map(|r| r.saturating_sub(self.warning_line()))
    }

    /// The result of `get_context_remaining`: the countdown, `null` when
    /// usage is unknown.
    pub fn context_remaining(&self, remaining: Option<u64>) -> ContextRemaining {
        ContextRemaining {
            remaining_tokens: self.countdown(remaining),
        }
    }

    /// Which budget stage applies before a request, given the remaining tokens
    /// (`None` when unknown) and whether automatic resets are enabled.
    ///
    /// With automatic resets off, no warning is staged and no reset is forced:
    /// anything at or below the reminder line is only a reminder.
    pub fn stage(&self, remaining: Option<u64>, automatic: bool) -> BudgetStage {
        let Some(remaining) = remaining else {
            return BudgetStage::Clear;
        };
        if automatic && remaining <= self.reserve_line() {
            BudgetStage::HardReserve
        } else if automatic && remaining <= self.warning_line() {
            BudgetStage::Warning
        } else if remaining <= self.reminder_line() {
            BudgetStage::Reminder
        } else {
            BudgetStage::Clear
        }
    }
}

/// The result of the `get_context_remaining` tool, sent to the model as plain
/// JSON text (`{"remaining_tokens":N}` or `{"remaining_tokens":null}`), not
/// through the flat refusal protocol.
#[typeshare]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ContextRemaining {
    /// The countdown to the warning line; `null` when usage is unknown.
    #[typeshare(serialized_as = "Option<U53>")]
    pub remaining_tokens: Option<u64>,
}

impl fmt::Display for ContextRemaining {
    /// The compact JSON text the tool returns.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.remaining_tokens {
            Some(tokens) => write!(f, "{{\"remaining_tokens\":{tokens}}}"),
            None => f.write_str("{\"remaining_tokens\":null}"),
        }
    }
}

/// What the budget asks of the host before a request.
///
/// Whether the reminder or warning was already delivered in this window is
/// host state; the host stages a text only when its window has none yet.
/// Stages are ordered by urgency.
#[typeshare]
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum BudgetStage {
    /// Nothing to do (also when usage is unknown).
    Clear,
    /// At or below the reminder line: stage the reminder once per window.
    Reminder,
    /// At or below the warning line with automatic resets on: stage the
    /// warning once per window and arm the close-out; a pending reminder is
    /// dropped.
    Warning,
    /// At or below the reserve with automatic resets on: everything
    /// [`BudgetStage::Warning`] does, and commit a forced reset at the end of
    /// the turn.
    HardReserve,
}

/// A reserve after [`ClampedReserve::of`], with the warning to show once when the
/// configured value was replaced.
#[derive(Debug, Clone, PartialEq)]
pub struct ClampedReserve {
    /// The reserve to use.
    pub tokens: u64,
    /// Why the configured value was not used as is.
    pub warning: Option<ReserveWarning>,
}

/// Why a configured reserve was replaced.
#[derive(Debug, Clone, PartialEq)]
pub enum ReserveWarning {
    /// Not a positive integer (negative, zero, fractional, NaN or infinite):
    /// replaced by `DEFAULT_RESERVE_TOKENS`.
    NotPositive {
        /// The configured value.
        raw: f64,
    },
    /// Larger than the cap: replaced by the cap.
    TooLarge {
        /// The configured value.
        raw: f64,
        /// The reserve used instead.
        cap: u64,
        /// The window the cap was derived from, when known.
        context_window: Option<u64>,
    },
}

impl fmt::Display for ReserveWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotPositive { raw } => write!(
                f,
                "notesoup: reserveTokens must be a positive integer (got {raw}); using the default reserve of {DEFAULT_RESERVE_TOKENS} tokens."
            ),
            Self::TooLarge {
                raw,
                cap,
                context_window: Some(window),
            } => write!(
                f,
                "notesoup: reserveTokens {raw} leaves too little of the {window}-token context window; clamped to {cap} tokens."
            ),
            Self::TooLarge {
                raw,
                cap,
                context_window: None,
            } => write!(
                f,
                "notesoup: reserveTokens {raw} is too large; clamped to {cap} tokens."
            ),
        }
    }
}

impl ClampedReserve {
    /// Makes a configured reserve safe before the lines are derived from it.
    ///
    /// This goes beyond the original, which clamped nothing (`docs/behavior.md`
    /// §6): a garbage reserve either disables the hard safety line or
    /// forces a reset on every request. The rule:
    ///
    /// 1. Not a positive integer (negative, zero, fractional, NaN, infinite):
    ///    `DEFAULT_RESERVE_TOKENS`. A zero reserve would let the window overflow
    ///    before the forced reset.
    /// 2. Above the cap: the cap. With a known context window the cap is half
    ///    the window, but never below `DEFAULT_RESERVE_TOKENS` (so the default
    ///    is never clamped, even on small windows); with an unknown window it is
    ///    `MAX_RESERVE_TOKENS`. A reserve past half the window leaves the
    ///    warning and hard lines firing almost from the first request.
    /// 3. Otherwise the value as is, with no warning.
    pub fn of(raw: f64, context_window: Option<u64>) -> Self {
        if !raw.is_finite() || raw.fract() != 0.0 || raw <= 0.0 {
            return Self {
                tokens: DEFAULT_RESERVE_TOKENS,
                warning: Some(ReserveWarning::NotPositive { raw }),
            };
        }
        let cap = match context_window {
            Some(window) => (window / 2).max(DEFAULT_RESERVE_TOKENS),
            None => MAX_RESERVE_TOKENS,
        };
        // Both sides are exact below 2^53; anything above is over every cap.
        #[allow(clippy::cast_precision_loss)]
        if raw > cap as f64 {
            return Self {
                tokens: cap,
                warning: Some(ReserveWarning::TooLarge {
                    raw,
                    cap,
                    context_window,
                }),
            };
        }
        // `raw` is a positive integer no larger than `cap`, so the cast is exact.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let tokens = raw as u64;
        Self {
            tokens,
            warning: None,
        }
    }
}
