//! The notes tools: `notes_write`, `notes_update`, `notes_read`, `notes_list`
//! and `notes_search`, over a [`NoteStore`].

mod diff;
mod render;
mod types;

pub use diff::line_diff;

use serde_json::{Map, Value, json};

pub use types::{
    ExtraFields, ListedNote, NoteEditParam, NoteMatch, NoteMetadata, NotesListData,
    NotesListParams, NotesReadData, NotesReadParams, NotesSearchData, NotesSearchParams,
    NotesUpdateData, NotesUpdateParams, NotesWriteData, NotesWriteParams, OmittedExtra,
    SearchedNote,
};

use super::fill::fill_best_from;
use super::measure::json_bytes;
use super::output::{pack, pack_or};
use super::params::at_least;
use super::window::{read_window_packed, to_u32};
use super::{
    MAX_ERROR_LINE_FACTS, MAX_METADATA_ENTRY_BYTES, MAX_METADATA_EXTRA_BYTES, Outcome, Refusal,
    RefusalCode, TOOL_OUTPUT_MAX_BYTES, ToolData, ToolOutput, fill_best, fits, prefix_fit,
};
use crate::notes::{
    Change, Edit, ListQuery, NoteError, NoteMeta, NoteStore, NotesIdentity, Origin, Scope,
    UpdateRequest, local_iso,
};
use crate::wire::OrderedMap;

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

/// `notes_write`: creates or replaces a note's body, keeping its metadata.
pub fn notes_write(store: &NoteStore, params: &NotesWriteParams) -> ToolOutput {
    ToolOutput::from_packed(write(store, params))
}

/// `notes_update`: body edits, a metadata change, or (alone) a rename.
/// `diff` renders the store's change in the host's style (e.g.
/// [`note_kind_diff`]); a rename's diff is always [`rename_diff`].
pub fn notes_update(
    store: &NoteStore,
    params: &NotesUpdateParams,
    diff: &dyn Fn(&Change) -> String,
) -> ToolOutput {
    ToolOutput::from_packed(update(store, params, diff))
}

/// `notes_read`: one window of a note's body, with its metadata.
pub fn notes_read(store: &NoteStore, params: &NotesReadParams) -> ToolOutput {
    ToolOutput::from_packed(read(store, params))
}

/// `notes_list`: a recent-first snapshot of notes, as many as fit.
pub fn notes_list(store: &NoteStore, params: &NotesListParams) -> ToolOutput {
    ToolOutput::from_packed(list(store, params))
}

/// `notes_search`: a recent-first snapshot of notes whose body lines contain
/// any query literal, with the matching lines.
pub fn notes_search(store: &NoteStore, params: &NotesSearchParams) -> ToolOutput {
    ToolOutput::from_packed(search(store, params))
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

fn write(store: &NoteStore, params: &NotesWriteParams) -> Outcome<ToolOutput> {
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

fn update(
    store: &NoteStore,
    params: &NotesUpdateParams,
    diff: &dyn Fn(&Change) -> String,
) -> Outcome<ToolOutput> {
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
            change_kind: crate::notes::ChangeKind::File,
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
fn bound_receipt(data: NotesUpdateData) -> Outcome<ToolOutput> {
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

/// The one size check of a result, packaging it.
fn fit_or<T: super::ToolData>(data: T, message: &str) -> Outcome<ToolOutput> {
    pack_or(&data, message)
}

fn read(store: &NoteStore, params: &NotesReadParams) -> Outcome<ToolOutput> {
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

fn list(store: &NoteStore, params: &NotesListParams) -> Outcome<ToolOutput> {
    at_least("limit", params.limit, 1)?;
    let status = store
        .list_headers(&list_query(params.pattern.as_deref(), params.wastebasket))
        .map_err(store_error)?;
    let tz = store.time_zone();
    let total = status.rows.len();
    let rows = status
        .rows
        .iter()
        .take(limit(params.limit))
        .map(|row| ListedNote {
            address: row.location.address.clone(),
            project_key: project_key(row.location.scope, &row.meta, store.identity()),
            updated_at: local_iso(row.meta.updated_at, tz),
            crumpled_at: row.meta.crumpled_at.map(|at| local_iso(at, tz)),
        });
    list_page(
        rows,
        total,
        status.crumpled_excluded,
        &status.homes_unavailable,
    )
}

/// The `notes_list` page of `rows` (of `total` listed): as many as fit.
fn list_page(
    mut rows: impl Iterator<Item = ListedNote>,
    total: usize,
    crumpled_excluded: usize,
    homes_unavailable: &[String],
) -> Outcome<ToolOutput> {
    let data = |files: Vec<ListedNote>| NotesListData {
        more: to_u32(total - files.len()),
        files,
        crumpled_excluded: to_u32(crumpled_excluded),
        homes_unavailable: homes_unavailable.to_vec(),
    };
    let (first, guess) = fitting_rows(rows.by_ref(), &data(Vec::new()));
    let (filled, packed) = fill_best_from(first.into_iter().chain(rows), guess, |kept| {
        pack(&data(kept.to_vec())).ok().flatten()
    });
    if filled.kept.is_empty() && filled.rejected.is_some() {
        return Err(Refusal::new(
            RefusalCode::OutputTooLarge,
            FIRST_ROW_TOO_LARGE,
        ));
    }
    match packed {
        Some(output) => Ok(output),
        None => fit_or(
            data(filled.kept),
            "The notes snapshot metadata exceeds the response budget.",
        ),
    }
}

/// The rows of a `notes_list` page taken from `rows` until their sizes (a
/// row's text and its JSON, added to those of the `empty` page) pass the
/// budget, and how many of them fit by that sum: the guess the page's
/// measurements start from. The sum leaves out only how the counts'
/// digits change, so it is off by a row at most.
fn fitting_rows(
    rows: impl Iterator<Item = ListedNote>,
    empty: &NotesListData,
) -> (Vec<ListedNote>, usize) {
    let (mut text, mut json) = (empty.render().len(), json_bytes(empty));
    let mut taken = Vec::new();
    let mut line = String::new();
    for row in rows {
        line.clear();
        render::push_listed(&mut line, &row);
        text += line.len();
        // With the comma before it.
        json += json_bytes(&row) + 1;
        taken.push(row);
        if text > TOOL_OUTPUT_MAX_BYTES || json > TOOL_OUTPUT_MAX_BYTES {
            let guess = taken.len() - 1;
            return (taken, guess);
        }
    }
    let guess = taken.len();
    (taken, guess)
}

fn search(store: &NoteStore, params: &NotesSearchParams) -> Outcome<ToolOutput> {
    let literals = params.query.literals()?;
    at_least("limit", params.limit, 1)?;
    at_least("max_matches_per_file", params.max_matches_per_file, 1)?;
    let status = store
        .search(
            &literals,
            &list_query(params.pattern.as_deref(), params.wastebasket),
        )
        .map_err(store_error)?;
    let tz = store.time_zone();
    let mut rows = status.rows;
    // The store sorts by address; the tool shows the most recent first.
    rows.sort_by(|a, b| {
        b.meta
            .updated_at
            .cmp(&a.meta.updated_at)
            .then_with(|| a.location.address.cmp(&b.location.address))
    });
    let total = rows.len();
    let per_file = limit(params.max_matches_per_file);
    let files = rows
        .iter()
        .take(limit(params.limit))
        .map(|row| SearchedNote {
            address: row.location.address.clone(),
            project_key: project_key(row.location.scope, &row.meta, store.identity()),
            updated_at: local_iso(row.meta.updated_at, tz),
            crumpled_at: row.meta.crumpled_at.map(|at| local_iso(at, tz)),
            matches_total: to_u32(row.matches.len()),
            matches: row
                .matches
                .iter()
                .take(per_file)
                .map(|found| NoteMatch {
                    line: to_u32(found.line),
                    text: found.text.clone(),
                    truncated: false,
                    offset_chars: to_u32(found.offset_chars),
                })
                .collect(),
        });
    let data = |files: Vec<SearchedNote>| NotesSearchData {
        more: to_u32(total - files.len()),
        files,
        crumpled_excluded: to_u32(status.crumpled_excluded),
        homes_unavailable: status.homes_unavailable.clone(),
    };
    let (filled, packed) = fill_best(files, |kept| pack(&data(kept.to_vec())).ok().flatten());
    if let Some(output) = packed {
        return Ok(output);
    }
    let mut kept = filled.kept;
    if kept.is_empty()
        && let Some(first) = filled.rejected
    {
        let shrunk = shrink_first(first, |file| fits(&data(vec![file.clone()])))
            .ok_or_else(|| Refusal::new(RefusalCode::OutputTooLarge, FIRST_ROW_TOO_LARGE))?;
        kept.push(shrunk);
    }
    fit_or(
        data(kept),
        "The notes snapshot metadata exceeds the response budget.",
    )
}

/// The first search row at its largest fitting size: as many whole match
/// lines as fit, else the first line cut and flagged `truncated`.
fn shrink_first(file: SearchedNote, fits: impl Fn(&SearchedNote) -> bool) -> Option<SearchedNote> {
    let with_matches = |count: usize| SearchedNote {
        matches: file.matches[..count].to_vec(),
        ..file.clone()
    };
    let (mut low, mut high) = (0, file.matches.len());
    while low < high {
        let mid = (low + high).div_ceil(2);
        if fits(&with_matches(mid)) {
            low = mid;
        } else {
            high = mid - 1;
        }
    }
    if low > 0 {
        return Some(with_matches(low));
    }
    let first = file.matches.first()?.clone();
    let mut trial = SearchedNote {
        matches: vec![NoteMatch {
            text: String::new(),
            truncated: true,
            ..first.clone()
        }],
        ..file.clone()
    };
    if !fits(&trial) {
        return None;
    }
    let text = prefix_fit(&first.text, |prefix| {
        trial.matches[0].text = prefix.to_owned();
        fits(&trial)
    })
    .to_owned();
    trial.matches[0].text = text;
    Some(trial)
}

fn limit(limit: Option<u32>) -> usize {
    limit.map_or(usize::MAX, |limit| limit as usize)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

    use super::*;
    use proptest::prelude::*;

    /// The page the rule reads as: rows added one by one while the page
    /// fits.
    fn linear_page(rows: &[ListedNote], total: usize) -> Option<ToolOutput> {
        let data = |files: &[ListedNote]| NotesListData {
            more: to_u32(total - files.len()),
            files: files.to_vec(),
            crumpled_excluded: 2,
            homes_unavailable: vec!["@human".to_owned()],
        };
        let mut page = None;
        for len in 0..=rows.len() {
            match pack(&data(&rows[..len])).unwrap() {
                Some(output) => page = Some(output),
                None => break,
            }
        }
        page.filter(|_| rows.is_empty() || fits(&data(&rows[..1])))
    }

    fn listed_note() -> impl Strategy<Value = ListedNote> {
        (
            "[a-z\"\u{1}é😀/]{1,120}",
            proptest::option::of("[a-z0-9-]{1,30}"),
            proptest::option::of("[0-9:T-]{1,30}"),
        )
            .prop_map(|(address, project_key, crumpled_at)| ListedNote {
                address,
                project_key,
                updated_at: "2026-01-01T00:00:00.000+00:00".to_owned(),
                crumpled_at,
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        /// The guessed and measured page is the one the linear rule keeps,
        /// byte for byte.
        #[test]
        fn a_list_page_is_the_longest_that_fits(
            rows in proptest::collection::vec(listed_note(), 0..700),
            hidden in 0usize..3,
        ) {
            let total = rows.len() + hidden;
            let page = list_page(rows.clone().into_iter(), total, 2, &["@human".to_owned()]);
            match linear_page(&rows, total) {
                Some(expected) => prop_assert_eq!(page.unwrap(), expected),
                None => prop_assert!(page.is_err()),
            }
        }
    }

    #[test]
    fn a_first_row_past_the_budget_is_refused() {
        let huge = ListedNote {
            address: "a".repeat(TOOL_OUTPUT_MAX_BYTES),
            project_key: None,
            updated_at: String::new(),
            crumpled_at: None,
        };
        let refused = list_page([huge].into_iter(), 1, 0, &[]).unwrap_err();
        assert_eq!(refused.code(), RefusalCode::OutputTooLarge);
        let empty = list_page(std::iter::empty(), 0, 0, &[]).unwrap();
        assert_eq!(empty.text, "0 notes");
    }
}
