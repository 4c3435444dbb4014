//! Budget: constants, thresholds, the countdown and the reminder and warning texts.
//!
//! Pure: the host supplies the reserve, the reminder margin and the measured
//! usage; nothing here reads settings, the clock or the transcript.

mod policy;
mod text;

pub use policy::{
    BudgetPolicy, BudgetStage, ClampedReserve, ContextRemaining, DEFAULT_REMINDER_MARGIN_TOKENS,
    DEFAULT_RESERVE_TOKENS, MAX_RESERVE_TOKENS, ReserveWarning, WARNING_RUNWAY_TOKENS,
    clamp_reserve, remaining_tokens,
};
pub use text::{manual_close_out_text, reminder_text, warning_text};
