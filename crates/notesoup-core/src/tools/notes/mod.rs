//! The notes tools, over a [`NoteStore`]: one file per tool, each
//! registered in `TOOLS`; what they share (the refusal of a store error,
//! a note's project, the receipt diffs, the row texts) is here and in
//! `render.rs`.

mod diff;
mod list;
mod read;
mod render;
mod search;
mod update;
mod write;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

pub use diff::line_diff;
pub use list::{
    ListedNote, NOTES_LIST, NotesListData, NotesListParams, notes_list, notes_list_unbounded,
};
pub use read::{
    ExtraFields, NOTES_READ, NoteMetadata, NotesReadData, NotesReadParams, OmittedExtra, notes_read,
};
pub use search::{
    NOTES_SEARCH, NoteMatch, NotesSearchData, NotesSearchParams, SearchedNote, notes_search,
    notes_search_unbounded,
};
pub use update::{NOTES_UPDATE, NoteEditParam, NotesUpdateData, NotesUpdateParams, notes_update};
pub use write::{NOTES_WRITE, NotesWriteData, NotesWriteParams, notes_write};

use super::definition::Tool;
use super::output::pack_or;
use super::{
    MAX_ERROR_LINE_FACTS, Outcome, Refusal, ToolContext, ToolData, ToolOutput, parse_arguments,
};
use crate::notes::{
    Change, ListQuery, NoteError, NoteMeta, NoteStore, NotesIdentity, Origin, Scope,
};

/// The notes tools, in the order hosts list them.
pub(crate) const TOOLS: &[&Tool] = &[
    &NOTES_WRITE,
    &NOTES_UPDATE,
    &NOTES_READ,
    &NOTES_LIST,
    &NOTES_SEARCH,
];

/// Runs a notes tool: the arguments are parsed before the store is opened,
/// so a malformed call costs no disk access.
fn run_over_store<P: DeserializeOwned>(
    context: &mut dyn ToolContext,
    arguments: Value,
    run: fn(&NoteStore, &P) -> ToolOutput,
) -> ToolOutput {
    let params = match parse_arguments(arguments) {
        Ok(params) => params,
        Err(refusal) => return ToolOutput::refusal(&refusal),
    };
    match context.notes() {
        Ok(store) => run(&store, &params),
        Err(refusal) => ToolOutput::refusal(&refusal),
    }
}

/// The receipt diff every host shows: the numbered line diff of the body
/// ([`line_diff`]).
pub fn note_line_diff(change: &Change) -> String {
    line_diff(&change.before, &change.after)
}

/// The simple diff: `note <kind>` (what the original Claude plugin showed).
pub fn note_kind_diff(change: &Change) -> String {
    format!("note {}", change.kind.as_str())
}

/// The diff of a rename: `rename A -> B`.
pub fn rename_diff(from: &str, to: &str) -> String {
    format!("rename {from} -> {to}")
}

/// Maps a store error to its refusal: the code passes through, line numbers
/// (at most [`MAX_ERROR_LINE_FACTS`], with the total) and the edit index go
/// into details, and a filesystem failure is `io_error` "notes operation
/// failed" (the path stays out of the model's view).
pub fn note_refusal(error: &NoteError) -> Refusal {
    let code = error.code();
    if error.is_filesystem() {
        return Refusal::new(code, "notes operation failed");
    }
    let mut details = Map::new();
    if let Some(lines) = error.line_numbers() {
        let shown: Vec<usize> = lines.iter().copied().take(MAX_ERROR_LINE_FACTS).collect();
        details.insert("line_numbers".to_owned(), json!(shown));
        if lines.len() > MAX_ERROR_LINE_FACTS {
            details.insert("line_numbers_total".to_owned(), json!(lines.len()));
        }
    }
    if let Some(index) = error.edit_index() {
        details.insert("edit_index".to_owned(), json!(index));
    }
    let refusal = Refusal::new(code, error.message());
    if details.is_empty() {
        refusal
    } else {
        refusal.with_details(Value::Object(details))
    }
}

fn parse_origin(origin: Option<&str>) -> Outcome<Option<Origin>> {
    origin.map(Origin::parse).transpose().map_err(store_error)
}

fn store_error(error: NoteError) -> Refusal {
    note_refusal(&error)
}

/// The project a note belongs to: the key of the `@project` home, or a
/// session note's `project` metadata.
fn project_key(scope: Scope, meta: &NoteMeta, identity: &NotesIdentity) -> Option<String> {
    match scope {
        Scope::Project => Some(identity.project_key().to_owned()),
        Scope::Session => meta.project.clone(),
        _ => None,
    }
}

/// The one size check of a result, packaging it.
fn fit_or<T: ToolData>(data: T, message: &str) -> Outcome<ToolOutput> {
    pack_or(&data, message)
}

fn list_query(pattern: Option<&str>, wastebasket: Option<bool>) -> ListQuery {
    ListQuery {
        pattern: pattern
            .filter(|pattern| !pattern.is_empty())
            .map(str::to_owned),
        scope: None,
        who: None,
        wastebasket: wastebasket.unwrap_or(false),
    }
}

const FIRST_ROW_TOO_LARGE: &str =
    "The first matching note cannot fit in a response without losing its identity.";

fn limit(limit: Option<u32>) -> usize {
    limit.map_or(usize::MAX, |limit| limit as usize)
}
