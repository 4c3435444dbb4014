//! Budget: constants, thresholds, the countdown and the reminder and warning texts.
//!
//! Pure: the host supplies the reserve, the reminder margin and the measured
//! usage; nothing here reads settings, the clock or the transcript.

mod policy;
#[cfg(test)]
pub(crate) mod tests;
mod text;

pub(crate) use policy::DEFAULT_REMINDER_MARGIN_TOKENS;
#[cfg(test)]
pub(crate) use policy::ReserveWarning;
pub use policy::{BudgetPolicy, BudgetStage, ClampedReserve, ContextRemaining};
#[cfg(test)]
pub(crate) use policy::{MAX_RESERVE_TOKENS, WARNING_RUNWAY_TOKENS};
