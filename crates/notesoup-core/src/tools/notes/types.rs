//! Parameters and result data of the notes tools, as they travel on the wire.
//!
//! A few parameters decode loosely (`origin` as a string, `newText` as any
//! JSON value) so that a bad value gets the store's own refusal
//! (`invalid_origin`, `no_match` with its edit index) rather than a decoding
//! error; their schemas still say what is expected.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use typeshare::typeshare;

use crate::notes::{ChangeKind, Origin, WriteOutcome};
use crate::tools::{LimitedBy, SearchQuery};
use crate::wire::OrderedMap;

/// Parameters of `notes_write`.
#[typeshare]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NotesWriteParams {
    /// The note's address.
    pub address: String,
    /// The whole new body (any leading frontmatter is dropped).
    pub content: String,
    /// Optional. Where the content came from: user (the human said it), self
    /// (you wrote it; the default) or external (tool output, fetched text,
    /// third parties).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Origin>")]
    #[typeshare(typescript(type = "\"user\" | \"self\" | \"external\""))]
    pub origin: Option<String>,
}

/// Parameters of `notes_update`.
#[typeshare]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NotesUpdateParams {
    /// The note's address.
    pub address: String,
    /// Optional. Exact-text body edits, applied in order, all or nothing.
    /// Each oldText must occur exactly once unless replace_all is set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edits: Option<Vec<NoteEditParam>>,
    /// Optional. Set where the content came from: user, self or external.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Origin>")]
    #[typeshare(typescript(type = "\"user\" | \"self\" | \"external\""))]
    pub origin: Option<String>,
    /// Optional. true crumples the note (it leaves the boot, list and search
    /// but stays readable by address and listable with wastebasket); false
    /// smooths it back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crumpled: Option<bool>,
    /// Optional. Replace every occurrence of each oldText.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replace_all: Option<bool>,
    /// Optional. Move the note to this address with all its metadata. Used
    /// alone: never with edits, origin, crumpled or replace_all. A live note
    /// at the target refuses; a crumpled one is replaced. An empty value is
    /// ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rename_to: Option<String>,
}

/// One exact-text edit.
#[typeshare]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NoteEditParam {
    /// Text that occurs in the body (exactly once unless replace_all).
    pub old_text: String,
    /// Its replacement.
    // Decoded loosely so that a non-string is refused as `no_match` with its
    // edit index, as the store's contract says.
    #[schemars(with = "String")]
    #[typeshare(typescript(type = "string"))]
    pub new_text: Value,
}

/// Parameters of `notes_read`.
#[typeshare]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NotesReadParams {
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

/// Parameters of `notes_list`.
#[typeshare]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NotesListParams {
    /// Optional. A glob over full addresses: `*` within a segment, `**`
    /// across segments, `?` one character; e.g. "@project/**" or "**/*.md".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// Optional. Most notes to list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub limit: Option<u32>,
    /// Optional. true lists only crumpled notes instead of live ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wastebasket: Option<bool>,
}

/// Parameters of `notes_search`.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NotesSearchParams {
    /// One literal, or several (any may match), matched case-insensitively
    /// against each body line.
    #[typeshare(typescript(type = "string | string[]"))]
    pub query: SearchQuery,
    /// Optional. A glob over full addresses, as in notes_list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// Optional. Most notes to return.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub limit: Option<u32>,
    /// Optional. Most matching lines shown per note (matches_total still
    /// counts them all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub max_matches_per_file: Option<u32>,
    /// Optional. true searches only crumpled notes instead of live ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wastebasket: Option<bool>,
}

/// Result of `notes_write`.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NotesWriteData {
    /// The note's rendered address.
    pub address: String,
    /// The project the note belongs to, when it belongs to one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_key: Option<String>,
    /// created, overwritten or uncrumpled.
    #[typeshare(typescript(type = "\"created\" | \"overwritten\" | \"uncrumpled\""))]
    pub outcome: WriteOutcome,
}

/// Result of `notes_update`: the receipt of an applied update or rename.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NotesUpdateData {
    /// The note's rendered address (the new one after a rename).
    pub address: String,
    /// The project the note belongs to, when it belongs to one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_key: Option<String>,
    /// Edits that changed text.
    pub applied: u32,
    /// What changed: none, body, metadata or file.
    #[typeshare(typescript(type = "\"none\" | \"body\" | \"metadata\" | \"file\""))]
    pub change_kind: ChangeKind,
    /// The change as a diff (possibly shortened, see diff_truncated).
    pub diff: String,
    /// The diff was shortened to fit the response; the update was applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff_truncated: Option<bool>,
    /// After a rename: the address the note moved from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rename_from: Option<String>,
    /// After a rename: whether a crumpled note at the target was replaced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replaced_crumpled_target: Option<bool>,
}

/// Result of `notes_read`: the note's metadata and one window of its body.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NotesReadData {
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
pub struct NoteMetadata {
    /// user, self or external.
    #[typeshare(typescript(type = "\"user\" | \"self\" | \"external\""))]
    pub origin: Origin,
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
pub struct OmittedExtra {
    /// Number of extras left out.
    pub keys: u32,
    /// Their serialized size in bytes.
    pub bytes: u32,
}

/// Frontmatter extras in file order, serialized as a JSON object.
pub type ExtraFields = OrderedMap<Value>;

impl JsonSchema for ExtraFields {
    fn schema_name() -> Cow<'static, str> {
        "ExtraFields".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "object" })
    }
}

/// Result of `notes_list`: a recent-first snapshot.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NotesListData {
    /// The notes shown, most recently updated first.
    pub files: Vec<ListedNote>,
    /// Matching notes not shown (the limit or the response budget).
    pub more: u32,
    /// Crumpled notes that matched but are hidden (pass wastebasket).
    pub crumpled_excluded: u32,
    /// Homes that could not be read.
    pub homes_unavailable: Vec<String>,
}

/// One note in `notes_list`.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ListedNote {
    /// The note's rendered address.
    pub address: String,
    /// The project the note belongs to, when it belongs to one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_key: Option<String>,
    /// Last content change, local ISO with offset.
    pub updated_at: String,
    /// When the note was crumpled, if it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crumpled_at: Option<String>,
}

/// Result of `notes_search`: a recent-first snapshot of matching notes.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NotesSearchData {
    /// The matching notes shown, most recently updated first.
    pub files: Vec<SearchedNote>,
    /// Matching notes not shown (the limit or the response budget).
    pub more: u32,
    /// Crumpled notes that matched but are hidden (pass wastebasket).
    pub crumpled_excluded: u32,
    /// Homes that could not be read.
    pub homes_unavailable: Vec<String>,
}

/// One note in `notes_search`, with its matching lines.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SearchedNote {
    /// The note's rendered address.
    pub address: String,
    /// The project the note belongs to, when it belongs to one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_key: Option<String>,
    /// Last content change, local ISO with offset.
    pub updated_at: String,
    /// When the note was crumpled, if it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crumpled_at: Option<String>,
    /// Matching lines in the note, shown or not.
    pub matches_total: u32,
    /// The matching lines shown.
    pub matches: Vec<NoteMatch>,
}

/// One matching line.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NoteMatch {
    /// 1-based line number in the body.
    pub line: u32,
    /// The line (possibly shortened, see truncated).
    pub text: String,
    /// The line was shortened to fit the response.
    pub truncated: bool,
    /// Code-point offset into the body of the earliest match on the line:
    /// pass it to notes_read to read from there.
    pub offset_chars: u32,
}
