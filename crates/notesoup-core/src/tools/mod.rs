//! Tools: every tool notesoup offers, defined once, and the shared
//! operations behind them, with bounded results.
//!
//! Each tool is one constant ([`Tool`]) in its own file, `<family>/<tool>.rs`
//! (`notes/write.rs`, `history/read.rs`, `budget/wipe.rs`), holding its
//! name, description, read-only and sequential flags, parameter and result
//! types and handler, and registered in its family's list (`TOOLS` in the
//! family's `mod.rs`). The table hosts list ([`tool_table`], [`tools_for`]),
//! the JSON Schemas and TypeScript `cargo xtask codegen` writes, and the
//! boot's tool names ([`crate::wire::ToolBindings::named`]) all derive from
//! those constants, and one router, [`call_tool`], runs a call by name over
//! the host's [`ToolContext`].
//!
//! Each operation takes its parameter struct (decoded from the host's JSON with
//! `parse_arguments`) and returns a [`ToolOutput`]: the model-facing text, the
//! flat JSON result (the data itself on success, `{error, code, details?}` on a
//! refusal) and an error flag. Both the text and the JSON fit
//! `TOOL_OUTPUT_MAX_BYTES`, whatever the input. Hosts never re-page or
//! re-render: they forward `text` (and `json`, a [`CompactJson`] serialized
//! once, where the host carries structured results, embedding it as it is).
//!
//! Internally an operation builds a typed data struct (`ToolData`: serde for
//! the wire, a renderer for the text) as an `ToolOutcome`, bounding it with the
//! shared pieces here: `read_window` for code-point read windows,
//! `fill_while_fits` for "add rows while the result fits", `prefix_fit` for
//! the longest fitting prefix. Those only measure candidates; the result an
//! operation settles on is packaged once (rendered, serialized and checked
//! against the budget in one step), and hosts get that packaging as it is.

pub(crate) mod budget;
mod context;
mod definition;
mod fill;
pub(crate) mod history;
mod measure;
pub(crate) mod notes;
mod outcome;
mod output;
mod params;
mod schema;
mod table;
#[cfg(test)]
mod tests;
mod window;

pub use context::{BudgetHost, ResetRequest, ToolContext};
pub use definition::{HostWording, Tool, ToolFamily};
pub(crate) use fill::fill_best;
pub(crate) use outcome::ToolOutcome;
pub use outcome::{Refusal, RefusalCode};
pub(crate) use output::ToolData;
pub(crate) use output::fits;
pub use output::{CompactJson, ToolOutput};
pub(crate) use params::{SearchQuery, json_kind};
pub(crate) use params::{parse_arguments, with_arguments};
pub use table::{ListedTool, call_tool, tool_table, tools_for};
pub(crate) use window::{LimitedBy, prefix_fit, render_window};

// What the area's own tests name beside the public surface.
#[cfg(test)]
pub(crate) use crate::tools::{
    definition::ADDRESSES_SENTENCE,
    table::{call_offered_tool, tool_definitions},
};
#[cfg(test)]
pub(crate) use fill::fill_while_fits;
#[cfg(test)]
pub(crate) use window::{TextWindow, read_window};

/// Both the rendered text (UTF-8 bytes) and the compact JSON of a result must
/// fit this many bytes.
pub(crate) const TOOL_OUTPUT_MAX_BYTES: usize = 32 * 1024;
/// Default read window, in code points.
pub(crate) const DEFAULT_READ_WINDOW_CHARS: usize = 12_000;
/// Largest read window (`limit_chars` maximum), in code points.
pub(crate) const MAX_READ_WINDOW_CHARS: usize = 50_000;
/// Default history preview per item, in code points.
pub(crate) const HISTORY_PREVIEW_CHARS: usize = 1200;
/// Longer refusal messages are clipped with `…[truncated N chars]`.
pub(crate) const ERROR_MESSAGE_MAX_CHARS: usize = 2000;
/// Larger refusal details become `{truncated: true, details_bytes: N}`.
pub(crate) const ERROR_DETAILS_MAX_BYTES: usize = 4096;
/// Largest single note extra shown by `notes_read`.
pub(crate) const MAX_METADATA_ENTRY_BYTES: usize = 1024;
/// Largest total of note extras shown by `notes_read`.
pub(crate) const MAX_METADATA_EXTRA_BYTES: usize = 2048;
/// Line numbers listed in an `ambiguous_edit` refusal.
pub(crate) const MAX_ERROR_LINE_FACTS: usize = 20;
