//! `notes_update`: body edits, a metadata change, or (alone) a rename.

use std::fmt::Write;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use typeshare::typeshare;

use super::render::{plural, push_identity};
use super::{
    fit_or, note_line_diff, parse_origin, project_key, rename_diff, run_over_store, store_error,
};
use crate::notes::{Change, ChangeKind, Edit, NoteError, NoteOrigin, NoteStore, UpdateRequest};
use crate::tools::definition::{Tool, ToolFamily};
use crate::tools::output::pack;
use crate::tools::window::to_u32;
use crate::tools::{
    Refusal, RefusalCode, ToolContext, ToolData, ToolOutcome, ToolOutput, fits, prefix_fit,
};

/// `notes_update`.
pub(crate) const NOTES_UPDATE: Tool = Tool::reading::<NotesUpdateParams, NotesUpdateData>(
    "notes_update",
    ToolFamily::Notes,
    "Change one note: exact-text body edits (each oldText must occur exactly once unless \
    replace_all is set), a metadata-only change (origin, crumpled), or a move with rename_to, which \
    is used alone. An ambiguous edit fails with its match line numbers and a missing one with its \
    edit index; nothing is written unless every edit applies. The receipt gives the number of edits \
    that changed text, the change kind and the diff. {addresses}",
    run,
).writing();

fn run(context: &mut dyn ToolContext, arguments: Value) -> ToolOutput {
    run_over_store(context, arguments, |store, params| {
        notes_update(store, params, &note_line_diff)
    })
}

/// Parameters of `notes_update`.
#[typeshare]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NotesUpdateParams {
    /// The note's address.
    pub address: String,
    /// Optional. Exact-text body edits, applied in order, all or nothing.
    /// Each oldText must occur exactly once unless replace_all is set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edits: Option<Vec<NoteEditParam>>,
    /// Optional. Set where the content came from: user, self or external.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<NoteOrigin>")]
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
pub(crate) struct NoteEditParam {
    /// Text that occurs in the body (exactly once unless replace_all).
    pub old_text: String,
    /// Its replacement.
    // Decoded loosely so that a non-string is refused as `no_match` with its
    // edit index, as the store's contract says.
    #[schemars(with = "String")]
    #[typeshare(typescript(type = "string"))]
    pub new_text: Value,
}

/// Result of `notes_update`: the receipt of an applied update or rename.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct NotesUpdateData {
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

/// The label before a diff that had to be shortened.
const SHORTENED_DIFF_LABEL: &str = "diff (this receipt's diff was shortened to fit the output budget; the update itself was applied):";

// Writing to a String cannot fail, so `write!` results are ignored below.
impl ToolData for NotesUpdateData {
    fn render(&self) -> String {
        let mut text = String::with_capacity(self.diff.len() + 128);
        match &self.rename_from {
            Some(from) => {
                let _ = write!(text, "moved {from} -> {}", self.address);
                if self.replaced_crumpled_target == Some(true) {
                    text.push_str(" (replaced a crumpled note)");
                }
            }
            None => {
                text.push_str(if self.change_kind == ChangeKind::None {
                    "unchanged "
                } else {
                    "updated "
                });
                push_identity(&mut text, &self.address, self.project_key.as_deref());
                // A crumple, smoothing or origin change edits no text: say
                // what did change rather than "0 edits".
                if self.applied == 0 && self.change_kind != ChangeKind::None {
                    text.push_str(": metadata only");
                } else {
                    let _ = write!(text, ": {}", plural(self.applied, "edit", "edits"));
                }
            }
        }
        if self.diff_truncated == Some(true) {
            text.push('\n');
            text.push_str(SHORTENED_DIFF_LABEL);
        } else if !self.diff.is_empty() {
            text.push_str("\ndiff:");
        }
        if !self.diff.is_empty() {
            text.push('\n');
            text.push_str(&self.diff);
        }
        text
    }
}

/// `notes_update`: body edits, a metadata change, or (alone) a rename.
/// `diff` renders the store's change in the host's style (e.g.
/// [`super::note_kind_diff`]); a rename's diff is always [`rename_diff`].
pub(crate) fn notes_update(
    store: &NoteStore,
    params: &NotesUpdateParams,
    diff: &dyn Fn(&Change) -> String,
) -> ToolOutput {
    ToolOutput::from_packed(update(store, params, diff))
}

fn update(
    store: &NoteStore,
    params: &NotesUpdateParams,
    diff: &dyn Fn(&Change) -> String,
) -> ToolOutcome<ToolOutput> {
    let edits = params.edits.as_deref().unwrap_or_default();
    if let Some(target) = params.rename_to.as_deref().filter(|to| !to.is_empty()) {
        if !edits.is_empty()
            || params.origin.is_some()
            || params.crumpled.is_some()
            || params.replace_all == Some(true)
        {
            return Err(Refusal::new(
                RefusalCode::InvalidScope,
                "rename_to is used alone: do not combine it with edits, origin, crumpled, or replace_all",
            ));
        }
        let moved = store.rename(&params.address, target).map_err(store_error)?;
        return bound_receipt(NotesUpdateData {
            project_key: project_key(moved.location.scope, &moved.meta, store.identity()),
            applied: 0,
            change_kind: ChangeKind::File,
            diff: rename_diff(&moved.from, &moved.location.address),
            diff_truncated: None,
            rename_from: Some(moved.from),
            replaced_crumpled_target: Some(moved.replaced_crumpled_target),
            address: moved.location.address,
        });
    }
    let mut request = UpdateRequest {
        edits: Vec::with_capacity(edits.len()),
        origin: parse_origin(params.origin.as_deref())?,
        crumpled: params.crumpled,
        replace_all: params.replace_all.unwrap_or(false),
    };
    for (index, edit) in edits.iter().enumerate() {
        let Some(new_text) = edit.new_text.as_str() else {
            return Err(store_error(NoteError::no_match(
                index,
                format!("edit {index}: newText must be a string"),
            )));
        };
        request.edits.push(Edit {
            old_text: edit.old_text.clone(),
            new_text: new_text.to_owned(),
        });
    }
    let updated = store
        .update(&params.address, &request)
        .map_err(store_error)?;
    bound_receipt(NotesUpdateData {
        project_key: project_key(updated.location.scope, &updated.meta, store.identity()),
        applied: to_u32(updated.applied),
        change_kind: updated.change.kind,
        diff: diff(&updated.change),
        diff_truncated: None,
        rename_from: None,
        replaced_crumpled_target: None,
        address: updated.location.address,
    })
}

/// A receipt whose diff is cut to the longest fitting prefix when needed.
fn bound_receipt(data: NotesUpdateData) -> ToolOutcome<ToolOutput> {
    if let Some(output) = pack(&data)? {
        return Ok(output);
    }
    let mut shortened = NotesUpdateData {
        diff_truncated: Some(true),
        diff: String::new(),
        ..data.clone()
    };
    let diff = prefix_fit(&data.diff, |prefix| {
        shortened.diff = prefix.to_owned();
        fits(&shortened)
    });
    shortened.diff = diff.to_owned();
    fit_or(
        shortened,
        "The update was applied, but its receipt metadata exceeds the response budget.",
    )
}
