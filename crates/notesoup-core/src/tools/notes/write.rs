//! `notes_write`: creates a note or replaces its whole body, keeping its
//! metadata.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use typeshare::typeshare;

use super::render::push_identity;
use super::{fit_or, parse_origin, project_key, run_over_store, store_error};
use crate::notes::{NoteOrigin, NoteStore, WriteOutcome};
use crate::tools::definition::{Tool, ToolFamily};
use crate::tools::{ToolData, ToolOutcome, ToolOutput};

/// `notes_write`.
pub(crate) const NOTES_WRITE: Tool = Tool::reading::<NotesWriteParams, NotesWriteData>(
    "notes_write",
    ToolFamily::Notes,
    "Create a note or replace its whole body. Its metadata is kept (createdAt and every other \
    frontmatter key), and writing a crumpled note uncrumples it. Name a note for what it holds and \
    when to reach for it: a fresh window sees only the name. Store only what git and the history \
    cannot give back. The receipt says created, overwritten or uncrumpled. {addresses}",
    |context, arguments| run_over_store(context, arguments, notes_write),
)
.writing();

/// Parameters of `notes_write`.
#[typeshare]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NotesWriteParams {
    /// The note's address.
    pub address: String,
    /// The whole new body (any leading frontmatter is dropped).
    pub content: String,
    /// Optional. Where the content came from: user (the human said it), self
    /// (you wrote it; the default) or external (tool output, fetched text,
    /// third parties).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<NoteOrigin>")]
    #[typeshare(typescript(type = "\"user\" | \"self\" | \"external\""))]
    pub origin: Option<String>,
}

/// Result of `notes_write`.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct NotesWriteData {
    /// The note's rendered address.
    pub address: String,
    /// The project the note belongs to, when it belongs to one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_key: Option<String>,
    /// created, overwritten or uncrumpled.
    #[typeshare(typescript(type = "\"created\" | \"overwritten\" | \"uncrumpled\""))]
    pub outcome: WriteOutcome,
}

impl ToolData for NotesWriteData {
    fn render(&self) -> String {
        let mut text = format!("{} ", self.outcome.as_str());
        push_identity(&mut text, &self.address, self.project_key.as_deref());
        text
    }
}

/// `notes_write`: creates or replaces a note's body, keeping its metadata.
pub(crate) fn notes_write(store: &NoteStore, params: &NotesWriteParams) -> ToolOutput {
    ToolOutput::from_packed(write(store, params))
}

fn write(store: &NoteStore, params: &NotesWriteParams) -> ToolOutcome<ToolOutput> {
    let origin = parse_origin(params.origin.as_deref())?;
    let written = store
        .write(&params.address, &params.content, origin)
        .map_err(store_error)?;
    let data = NotesWriteData {
        project_key: project_key(written.location.scope, &written.meta, store.identity()),
        address: written.location.address,
        outcome: written.outcome,
    };
    fit_or(
        data,
        "The note was written, but its receipt exceeds the response budget.",
    )
}
