//! Wire: the serialized types hosts see, with JSON Schemas and TypeScript declarations.
//!
//! Every type a host or a host-side script exchanges with the core derives
//! `Serialize + Deserialize + JsonSchema` and carries `#[typeshare]`, wherever
//! it lives in the crate. `cargo xtask codegen` turns them into the committed
//! `generated/notesoup.d.ts` and `generated/schemas/*.json`. This module holds
//! the wire types that belong to no single area.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use typeshare::typeshare;

/// The tool names a host gives the model, as the boot protocol, the budget
/// texts and the drawer line mention them.
///
/// Each host binds the logical names to what its model actually calls: Pi and
/// dsh use the plain tool names ([`ToolBindings::plain`]); Claude Code uses
/// its MCP names and says which tools it lacks. The keys are exactly those of
/// the boot bindings: `notes, notesList, history, historyWindows, historyList,
/// historySearch, historyRead, remaining, wipe`.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolBindings {
    /// The notes tools as a family, in place of `notes_*`.
    pub notes: String,
    /// In place of `notes_list`.
    pub notes_list: String,
    /// The history tools as a family, in place of `history_*`.
    pub history: String,
    /// In place of `history_windows`.
    pub history_windows: String,
    /// In place of `history_list`.
    pub history_list: String,
    /// In place of `history_search`.
    pub history_search: String,
    /// In place of `history_read`.
    pub history_read: String,
    /// In place of `get_context_remaining`.
    pub remaining: String,
    /// In place of `wipe_memory`.
    pub wipe: String,
}

impl ToolBindings {
    /// The plain tool names, as Pi and dsh register them.
    pub fn plain() -> Self {
        Self {
            notes: "notes_*".into(),
            notes_list: "notes_list".into(),
            history: "history_*".into(),
            history_windows: "history_windows".into(),
            history_list: "history_list".into(),
            history_search: "history_search".into(),
            history_read: "history_read".into(),
            remaining: "get_context_remaining".into(),
            wipe: "wipe_memory".into(),
        }
    }
}
