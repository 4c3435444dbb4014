//! `notes_search`: a recent-first snapshot of the notes whose body lines
//! contain any query literal, with the matching lines.

use std::fmt::Write;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use typeshare::typeshare;

use super::render::{plural, push_row_head, push_snapshot_footer};
use super::{
    FIRST_ROW_TOO_LARGE, RowHead, SNAPSHOT_TOO_LARGE, fit_or, limit, list_query, run_over_store,
    store_error,
};
use crate::notes::NoteStore;
use crate::tools::definition::{Tool, ToolFamily};
use crate::tools::output::pack;
use crate::tools::params::at_least;
use crate::tools::window::to_u32;
use crate::tools::{
    Refusal, RefusalCode, SearchQuery, ToolData, ToolOutcome, ToolOutput, fill_best, fits,
    prefix_fit,
};

/// `notes_search`.
pub(crate) const NOTES_SEARCH: Tool = Tool::reading::<NotesSearchParams, NotesSearchData>(
    "notes_search",
    ToolFamily::Notes,
    "Search note bodies line by line for literal text, case-insensitively; several queries match any \
    of them. The result is a recent-first snapshot, not paginated: each note shows its matching lines \
    with their line numbers and offset_chars, which notes_read takes to read from the match. Narrow \
    with pattern; crumpled notes are searched only with wastebasket. {addresses}",
    |context, arguments| run_over_store(context, arguments, notes_search),
);

/// Parameters of `notes_search`.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NotesSearchParams {
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

/// Result of `notes_search`: a recent-first snapshot of matching notes.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct NotesSearchData {
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
pub(crate) struct SearchedNote {
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
pub(crate) struct NoteMatch {
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

// Writing to a String cannot fail, so `write!` results are ignored below.
impl ToolData for NotesSearchData {
    fn render(&self) -> String {
        let mut text = plural(self.files.len() as u32, "file", "files");
        for file in &self.files {
            push_row_head(
                &mut text,
                &file.address,
                file.project_key.as_deref(),
                &file.updated_at,
                file.crumpled_at.as_deref(),
            );
            let _ = write!(
                text,
                " | {}",
                plural(file.matches_total, "match", "matches")
            );
            if (file.matches.len() as u32) < file.matches_total {
                let _ = write!(text, " ({} shown)", file.matches.len());
            }
            for found in &file.matches {
                let _ = write!(
                    text,
                    "\n  line {} at offset_chars {}: {}",
                    found.line, found.offset_chars, found.text
                );
                if found.truncated {
                    text.push_str(" [line shortened]");
                }
            }
        }
        push_snapshot_footer(
            &mut text,
            self.more,
            self.crumpled_excluded,
            &self.homes_unavailable,
        );
        text
    }
}

/// `notes_search`: a recent-first snapshot of notes whose body lines contain
/// any query literal, with the matching lines.
pub(crate) fn notes_search(store: &NoteStore, params: &NotesSearchParams) -> ToolOutput {
    ToolOutput::from_packed(search(store, params))
}

/// Every note `notes_search` would show, with every matching line up to
/// the limits alone: no response budget, for a person at a terminal (the
/// command line's `notes search`). The agent's tool is [`notes_search`],
/// which keeps to the budget.
pub(super) fn notes_search_unbounded(
    store: &NoteStore,
    params: &NotesSearchParams,
) -> ToolOutcome<NotesSearchData> {
    searched(store, params, |files, data| Ok(data(files.collect())))
}

fn search(store: &NoteStore, params: &NotesSearchParams) -> ToolOutcome<ToolOutput> {
    searched(store, params, search_page)
}

/// The searched notes (to the limits) and how a page of them is made,
/// handed to `page`.
fn searched<T>(
    store: &NoteStore,
    params: &NotesSearchParams,
    page: impl FnOnce(
        &mut dyn Iterator<Item = SearchedNote>,
        &dyn Fn(Vec<SearchedNote>) -> NotesSearchData,
    ) -> ToolOutcome<T>,
) -> ToolOutcome<T> {
    let literals = params.query.literals()?;
    at_least("limit", params.limit, 1)?;
    at_least("max_matches_per_file", params.max_matches_per_file, 1)?;
    let status = store
        .search(
            &literals,
            &list_query(params.pattern.as_deref(), params.wastebasket),
        )
        .map_err(store_error)?;
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
    let mut files = rows.iter().take(limit(params.limit)).map(|row| {
        let head = RowHead::of(store, &row.location, &row.meta);
        SearchedNote {
            address: head.address,
            project_key: head.project_key,
            updated_at: head.updated_at,
            crumpled_at: head.crumpled_at,
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
        }
    });
    let data = |files: Vec<SearchedNote>| NotesSearchData {
        more: to_u32(total - files.len()),
        files,
        crumpled_excluded: to_u32(status.crumpled_excluded),
        homes_unavailable: status.homes_unavailable.clone(),
    };
    page(&mut files, &data)
}

/// The `notes_search` page of `files`: as many as fit, the first shrunk to
/// fit when it alone does not.
fn search_page(
    files: &mut dyn Iterator<Item = SearchedNote>,
    data: &dyn Fn(Vec<SearchedNote>) -> NotesSearchData,
) -> ToolOutcome<ToolOutput> {
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
    fit_or(data(kept), SNAPSHOT_TOO_LARGE)
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
