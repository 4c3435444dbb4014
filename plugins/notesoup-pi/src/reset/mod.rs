//! The reset lifecycle on Pi: the pure reducer, window ids and boundaries.
//!
//! A reset is an empty retain-none compaction (the checkpoint), then a
//! `notesoup/reset-marker` `{windowId, origin}`, the fresh window's hidden
//! boot and a hidden continuation (and, after `/fresh-window <text>`, the
//! text as a visible `notesoup/reset-prompt`). The checkpoint cuts Pi's
//! canonical context; the marker is the durable window identity; the raw
//! branch stays for the history tools.
//!
//! - [`reducer`]: phases, transitions and effects, pure.
//! - [`window`]: window ids, the active window, commit confirmation and the
//!   repairable tail.
//! - [`boundary`]: the ordered drafts.
//! - [`kinds`]: notesoup's custom types and their legacy names.

pub mod boundary;
pub mod kinds;
pub mod reducer;
pub mod window;

pub(crate) use boundary::is_boot_of;
pub use boundary::{Boundary, boot_details, origin_str};
pub use kinds::Kind;
pub use reducer::{
    CloseOutSource, CommitPlan, OverflowPhase, RequestPhase, ResetControl, ResetEffect, ResetEvent,
    SettleFacts, ToolSource, TurnEndFacts, TurnOutcome, reduce, settle_matters,
};
