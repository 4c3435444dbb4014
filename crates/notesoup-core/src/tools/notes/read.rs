//! `notes_read`: one window of a note's body, with its metadata.

use std::borrow::Cow;
use std::fmt::Write;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use typeshare::typeshare;

use super::render::push_identity;
use super::{project_key, run_over_store, store_error};
use crate::notes::{NoteMeta, NoteOrigin, NoteStore, local_iso};
use crate::tools::definition::{Tool, ToolFamily};
use crate::tools::measure::json_bytes;
use crate::tools::window::{read_window_packed, to_u32};
use crate::tools::{
    LimitedBy, MAX_METADATA_ENTRY_BYTES, MAX_METADATA_EXTRA_BYTES, Refusal, RefusalCode, ToolData,
    ToolOutcome, ToolOutput, render_window,
};
use crate::wire::OrderedMap;

/// `notes_read`.
pub(crate) const NOTES_READ: Tool = Tool::reading::<NotesReadParams, NotesReadData>(
    "notes_read",
    ToolFamily::Notes,
    "Read a window of one note's body (the frontmatter is not part of it) with the note's metadata. \
    offset_chars counts code points into the body (negative counts back from the end); limit_chars \
    caps the window (default 12000, at most 50000). When more remains, the last line names the \
    offset_chars to continue with; successive windows join back into the exact body. {addresses}",
    |context, arguments| run_over_store(context, arguments, notes_read),
);

/// Parameters of `notes_read`.
#[typeshare]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NotesReadParams {
    /// The note's address.
    pub address: String,
    /// Optional. Code-point offset into the body (default 0; the frontmatter
    /// is not part of it); a negative value counts back from the end. Pass
    /// next_offset_chars here to continue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset_chars: Option<i32>,
    /// Optional. Most code points to return (default 12000, at most 50000);
    /// the response byte budget may stop the window earlier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 50000))]
    pub limit_chars: Option<u32>,
}

/// Result of `notes_read`: the note's metadata and one window of its body.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct NotesReadData {
    /// The note's rendered address.
    pub address: String,
    /// The project the note belongs to, when it belongs to one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_key: Option<String>,
    /// The note's metadata.
    pub metadata: NoteMetadata,
    /// The delivered slice of the body, verbatim.
    pub text: String,
    /// Code-point offset into the body the slice starts at.
    pub offset_chars: u32,
    /// Code-point length of the body.
    pub total_chars: u32,
    /// Pass as offset_chars to continue; null at the true end.
    #[typeshare(typescript(type = "number | null"))]
    pub next_offset_chars: Option<u32>,
    /// Why the slice stopped early (the limit or the byte budget); null when
    /// nothing was withheld.
    #[typeshare(typescript(type = "LimitedBy | null"))]
    pub limited_by: Option<LimitedBy>,
}

/// A note's metadata as `notes_read` shows it.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct NoteMetadata {
    /// user, self or external.
    #[typeshare(typescript(type = "\"user\" | \"self\" | \"external\""))]
    pub origin: NoteOrigin,
    /// Creation time, local ISO with offset.
    pub created_at: String,
    /// Last content change, local ISO with offset.
    pub updated_at: String,
    /// When the note was crumpled, if it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crumpled_at: Option<String>,
    /// The project key of a session note.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// Every other frontmatter key, in file order, as far as they fit.
    #[typeshare(typescript(type = "Record<string, unknown>"))]
    pub extra: ExtraFields,
    /// Extras left in the file because they are too large to show.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub omitted_extra: Option<OmittedExtra>,
}

/// Extras too large to show: how many, and their serialized size.
#[typeshare]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct OmittedExtra {
    /// Number of extras left out.
    pub keys: u32,
    /// Their serialized size in bytes.
    pub bytes: u32,
}

/// Frontmatter extras in file order, serialized as a JSON object.
pub(crate) type ExtraFields = OrderedMap<Value>;

impl JsonSchema for ExtraFields {
    fn schema_name() -> Cow<'static, str> {
        "ExtraFields".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "object" })
    }
}

impl ToolData for NotesReadData {
    fn render(&self) -> String {
        let mut text = String::with_capacity(self.text.len() + 256);
        push_identity(&mut text, &self.address, self.project_key.as_deref());
        text.push('\n');
        push_metadata(&mut text, &self.metadata);
        text.push_str("\n\n");
        render_window(
            &mut text,
            &self.text,
            self.offset_chars,
            self.total_chars,
            self.next_offset_chars,
            self.limited_by,
        );
        text
    }
}

// Writing to a String cannot fail, so `write!` results are ignored below.
/// `origin X | created T | updated T[ | crumpled T][ | project P][ | extra {json}][ | N more metadata values (B bytes) are in the note file but too large to show]`
fn push_metadata(text: &mut String, metadata: &NoteMetadata) {
    let _ = write!(
        text,
        "origin {} | created {} | updated {}",
        metadata.origin.as_str(),
        metadata.created_at,
        metadata.updated_at
    );
    if let Some(crumpled) = &metadata.crumpled_at {
        let _ = write!(text, " | crumpled {crumpled}");
    }
    if let Some(project) = &metadata.project {
        let _ = write!(text, " | project {project}");
    }
    if !metadata.extra.0.is_empty() {
        let extra = serde_json::to_string(&metadata.extra).unwrap_or_default();
        let _ = write!(text, " | extra {extra}");
    }
    if let Some(omitted) = metadata.omitted_extra {
        let _ = write!(
            text,
            " | {} more metadata values ({} bytes) are in the note file but too large to show",
            omitted.keys, omitted.bytes
        );
    }
}

/// `notes_read`: one window of a note's body, with its metadata.
pub(crate) fn notes_read(store: &NoteStore, params: &NotesReadParams) -> ToolOutput {
    ToolOutput::from_packed(read(store, params))
}

fn read(store: &NoteStore, params: &NotesReadParams) -> ToolOutcome<ToolOutput> {
    let note = store
        .read(&params.address)
        .map_err(store_error)?
        .ok_or_else(|| Refusal::new(RefusalCode::NotFound, "note not found"))?;
    let project_key = project_key(note.location.scope, &note.meta, store.identity());
    let metadata = metadata(&note.meta, store);
    read_window_packed(
        &note.body,
        params.offset_chars.map(i64::from),
        params.limit_chars,
        |window| NotesReadData {
            address: note.location.address.clone(),
            project_key: project_key.clone(),
            metadata: metadata.clone(),
            text: window.text,
            offset_chars: window.offset_chars,
            total_chars: window.total_chars,
            next_offset_chars: window.next_offset_chars,
            limited_by: window.limited_by,
        },
    )
}

/// The metadata `notes_read` shows: extras in file order while each stays
/// within [`MAX_METADATA_ENTRY_BYTES`] and all within
/// [`MAX_METADATA_EXTRA_BYTES`]; the rest are counted.
fn metadata(meta: &NoteMeta, store: &NoteStore) -> NoteMetadata {
    let tz = store.time_zone();
    let mut extra = Vec::new();
    let (mut shown_bytes, mut omitted_keys, mut omitted_bytes) = (0, 0, 0);
    for entry in &meta.extras {
        // The key counts too: hand-written frontmatter can have long keys.
        let bytes = json_bytes(entry.key()) + 1 + json_bytes(entry.value());
        if bytes > MAX_METADATA_ENTRY_BYTES || shown_bytes + bytes > MAX_METADATA_EXTRA_BYTES {
            omitted_keys += 1;
            omitted_bytes += bytes;
            continue;
        }
        shown_bytes += bytes;
        extra.push((entry.key().to_owned(), entry.value().clone()));
    }
    NoteMetadata {
        origin: meta.origin,
        created_at: local_iso(meta.created_at, tz),
        updated_at: local_iso(meta.updated_at, tz),
        crumpled_at: meta.crumpled_at.map(|at| local_iso(at, tz)),
        project: meta.project.clone(),
        extra: OrderedMap(extra),
        omitted_extra: (omitted_keys > 0).then(|| OmittedExtra {
            keys: to_u32(omitted_keys),
            bytes: to_u32(omitted_bytes),
        }),
    }
}
