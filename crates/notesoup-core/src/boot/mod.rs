//! Boot: the snapshot of the five homes and the pure renderer of the boot text.
//!
//! A boot is built once per window: [`BootSnapshot`] reads the homes, then
//! `render_boot` turns the snapshot, the window identity and the host's
//! [`ToolBindings`] into the text the model reads
//! first. The continuation that follows a reset boot is here too
//! ([`ToolBindings::continuation_text`]); the budget's close-out texts are in
//! [`crate::budget`].

mod render;
mod shelf;
mod shelves;
mod snapshot;
#[cfg(test)]
mod tests;
mod text;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use typeshare::typeshare;

pub use crate::wire::ToolBindings;
pub use render::BootSections;
pub(crate) use render::{DEFAULT_BOOT_MAX_CHARS, MIN_BOOT_MAX_CHARS};
pub use shelves::ShelfIndex;
pub use snapshot::BootSnapshot;

#[cfg(test)]
pub(crate) use shelf::{FreshPage, HomeShelf, MapPage};
// What the crate's own tests name beside the public surface.
#[cfg(test)]
pub(crate) use render::relative_time;
#[cfg(test)]
pub(crate) use render::{render_boot, render_boot_within};
#[cfg(test)]
pub(crate) use shelf::page_title;

/// The identity block's inputs: who is booting, into which window.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BootIdentity {
    /// The agent slug; also names the `@agents/<agent>` home.
    pub agent: String,
    /// The model slug (the "brain"); also names the `@models/<model>` home.
    pub model: String,
    /// The session's first window id.
    pub root_window_id: String,
    /// The window this boot opens.
    pub window_id: String,
    /// The window before this one, after a reset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_window_id: Option<String>,
}
