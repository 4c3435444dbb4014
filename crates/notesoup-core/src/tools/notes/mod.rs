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

pub(super) use diff::line_diff;
pub(super) use list::NOTES_LIST;
pub(crate) use list::NotesListParams;
use list::notes_list_unbounded;
pub(super) use read::NOTES_READ;
pub(super) use search::NOTES_SEARCH;
pub(crate) use search::NotesSearchParams;
use search::notes_search_unbounded;
pub(crate) use update::NOTES_UPDATE;
pub(crate) use write::NOTES_WRITE;

// What the crate's own tests name: each operation over a store.
#[cfg(test)]
pub(crate) use list::notes_list;
#[cfg(test)]
pub(crate) use read::{NotesReadParams, notes_read};
#[cfg(test)]
pub(crate) use search::notes_search;
#[cfg(test)]
pub(crate) use update::{NotesUpdateParams, notes_update};
#[cfg(test)]
pub(crate) use write::{NotesWriteParams, notes_write};

use super::definition::Tool;
use super::output::pack_or;
use super::{
    MAX_ERROR_LINE_FACTS, Refusal, ToolContext, ToolData, ToolOutcome, ToolOutput, parse_arguments,
    with_arguments,
};
use crate::notes::{
    Change, ListQuery, NoteError, NoteLocation, NoteMeta, NoteOrigin, NoteStore, NotesIdentity,
    Scope, local_iso,
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
    with_arguments(arguments, |params: P| match context.notes() {
        Ok(store) => run(&store, &params),
        Err(refusal) => ToolOutput::refusal(&refusal),
    })
}

/// The receipt diff every host shows: the numbered line diff of the body
/// ([`line_diff`]).
pub(super) fn note_line_diff(change: &Change) -> String {
    line_diff(&change.before, &change.after)
}

#[cfg(test)]
/// The simple diff: `note <kind>` (what the original Claude plugin showed).
pub(super) fn note_kind_diff(change: &Change) -> String {
    format!("note {}", change.kind.as_str())
}

/// The diff of a rename: `rename A -> B`.
pub(super) fn rename_diff(from: &str, to: &str) -> String {
    format!("rename {from} -> {to}")
}

/// Maps a store error to its refusal: the code passes through, line numbers
/// (at most [`MAX_ERROR_LINE_FACTS`], with the total) and the edit index go
/// into details, and a filesystem failure is `io_error` "notes operation
/// failed" (the path stays out of the model's view).
pub(crate) fn note_refusal(error: &NoteError) -> Refusal {
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

fn parse_origin(origin: Option<&str>) -> ToolOutcome<Option<NoteOrigin>> {
    origin
        .map(NoteOrigin::parse)
        .transpose()
        .map_err(store_error)
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

/// A snapshot row's head as `notes_list` and `notes_search` show it: the
/// address, the project, and the times in the store's zone.
struct RowHead {
    address: String,
    project_key: Option<String>,
    updated_at: String,
    crumpled_at: Option<String>,
}

impl RowHead {
    fn of(store: &NoteStore, location: &NoteLocation, meta: &NoteMeta) -> RowHead {
        let tz = store.time_zone();
        RowHead {
            address: location.address.clone(),
            project_key: project_key(location.scope, meta, store.identity()),
            updated_at: local_iso(meta.updated_at, tz),
            crumpled_at: meta.crumpled_at.map(|at| local_iso(at, tz)),
        }
    }
}

/// The one size check of a result, packaging it.
fn fit_or<T: ToolData>(data: T, message: &str) -> ToolOutcome<ToolOutput> {
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

/// The refusal of a `notes_list` or `notes_search` snapshot when no page of
/// it fits: its metadata (the counts and the unreadable homes) is past the
/// budget.
const SNAPSHOT_TOO_LARGE: &str = "The notes snapshot metadata exceeds the response budget.";

fn limit(limit: Option<u32>) -> usize {
    limit.map_or(usize::MAX, |limit| limit as usize)
}

impl Refusal {
    /// A store error as the notes tools refuse with it (its code, the line
    /// numbers and edit index as details, a filesystem failure without its
    /// path), for a host that calls the store itself.
    pub fn of_note_error(error: &NoteError) -> Self {
        note_refusal(error)
    }
}

impl crate::tools::Tool {
    /// Runs `notes_list` or `notes_search` for a person at a terminal: every
    /// row up to the call's own limits, without the response budget that
    /// bounds the agent's result. `None` for any other tool.
    pub fn call_unbounded(
        context: &mut dyn ToolContext,
        name: &str,
        arguments: Value,
    ) -> Option<ToolOutput> {
        fn packed<P: DeserializeOwned, T: ToolData>(
            context: &mut dyn ToolContext,
            arguments: Value,
            run: fn(&NoteStore, &P) -> ToolOutcome<T>,
        ) -> ToolOutput {
            let data = parse_arguments::<P>(arguments)
                .and_then(|params| context.notes().and_then(|store| run(&store, &params)));
            match data {
                Ok(data) => ToolOutput::unbounded(&data),
                Err(refusal) => ToolOutput::refusal(&refusal),
            }
        }
        if name == NOTES_LIST.name {
            Some(packed::<NotesListParams, _>(
                context,
                arguments,
                notes_list_unbounded,
            ))
        } else if name == NOTES_SEARCH.name {
            Some(packed::<NotesSearchParams, _>(
                context,
                arguments,
                notes_search_unbounded,
            ))
        } else {
            None
        }
    }
}
