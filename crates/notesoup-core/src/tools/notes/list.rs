//! `notes_list`: a recent-first snapshot of notes, as many as fit.

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
use crate::tools::fill::fill_best_from;
use crate::tools::measure::json_bytes;
use crate::tools::output::pack;
use crate::tools::params::at_least;
use crate::tools::window::to_u32;
use crate::tools::{
    Refusal, RefusalCode, TOOL_OUTPUT_MAX_BYTES, ToolData, ToolOutcome, ToolOutput,
};

/// `notes_list`.
pub(crate) const NOTES_LIST: Tool = Tool::reading::<NotesListParams, NotesListData>(
    "notes_list",
    ToolFamily::Notes,
    "List notes as a recent-first snapshot across this session, @project/, @human/, @self/ and \
    @model/: each address with its updated time (and crumpled time in the wastebasket). Not paginated: \
    more counts the notes left out, so narrow with pattern. Hidden crumpled notes and unreadable homes \
    are reported. {addresses}",
    |context, arguments| run_over_store(context, arguments, notes_list),
);

/// Parameters of `notes_list`.
#[typeshare]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NotesListParams {
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

/// Result of `notes_list`: a recent-first snapshot.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct NotesListData {
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
pub(crate) struct ListedNote {
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

impl ToolData for NotesListData {
    fn render(&self) -> String {
        let mut text = plural(self.files.len() as u32, "note", "notes");
        for file in &self.files {
            push_listed(&mut text, file);
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

/// One row of a `notes_list` text: `\n- <identity> | updated T[ | crumpled T]`.
fn push_listed(text: &mut String, file: &ListedNote) {
    push_row_head(
        text,
        &file.address,
        file.project_key.as_deref(),
        &file.updated_at,
        file.crumpled_at.as_deref(),
    );
}

/// `notes_list`: a recent-first snapshot of notes, as many as fit.
pub(crate) fn notes_list(store: &NoteStore, params: &NotesListParams) -> ToolOutput {
    ToolOutput::from_packed(list(store, params))
}

/// Every note `notes_list` would list, up to the limit alone: no response
/// budget, for a person at a terminal (the command line's `notes list`).
/// The agent's tool is [`notes_list`], which keeps to the budget.
pub(super) fn notes_list_unbounded(
    store: &NoteStore,
    params: &NotesListParams,
) -> ToolOutcome<NotesListData> {
    listed(store, params, |rows, data| Ok(data(rows.collect())))
}

fn list(store: &NoteStore, params: &NotesListParams) -> ToolOutcome<ToolOutput> {
    listed(store, params, list_page)
}

/// The listed rows (to the limit) and how a page of them is made (with how
/// many matched, the crumpled notes hidden and the unreadable homes),
/// handed to `page`.
fn listed<T>(
    store: &NoteStore,
    params: &NotesListParams,
    page: impl FnOnce(
        &mut dyn Iterator<Item = ListedNote>,
        &dyn Fn(Vec<ListedNote>) -> NotesListData,
    ) -> ToolOutcome<T>,
) -> ToolOutcome<T> {
    at_least("limit", params.limit, 1)?;
    let status = store
        .list_headers(&list_query(params.pattern.as_deref(), params.wastebasket))
        .map_err(store_error)?;
    let total = status.rows.len();
    let mut rows = status.rows.iter().take(limit(params.limit)).map(|row| {
        let head = RowHead::of(store, &row.location, &row.meta);
        ListedNote {
            address: head.address,
            project_key: head.project_key,
            updated_at: head.updated_at,
            crumpled_at: head.crumpled_at,
        }
    });
    let data = |files: Vec<ListedNote>| NotesListData {
        more: to_u32(total - files.len()),
        files,
        crumpled_excluded: to_u32(status.crumpled_excluded),
        homes_unavailable: status.homes_unavailable.clone(),
    };
    page(&mut rows, &data)
}

/// The `notes_list` page of `rows`, made by `data`: as many as fit.
fn list_page(
    rows: &mut dyn Iterator<Item = ListedNote>,
    data: &dyn Fn(Vec<ListedNote>) -> NotesListData,
) -> ToolOutcome<ToolOutput> {
    let (first, guess) = fitting_rows(&mut *rows, &data(Vec::new()));
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
        None => fit_or(data(filled.kept), SNAPSHOT_TOO_LARGE),
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
        push_listed(&mut line, &row);
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

    use super::*;
    use crate::tools::fits;
    use proptest::prelude::*;

    /// The pages of a snapshot of `total` notes, with `crumpled_excluded`
    /// hidden and `homes_unavailable`.
    fn snapshot(
        total: usize,
        crumpled_excluded: u32,
        homes_unavailable: &[&str],
    ) -> impl Fn(Vec<ListedNote>) -> NotesListData {
        let homes_unavailable: Vec<String> = homes_unavailable
            .iter()
            .map(|&home| home.to_owned())
            .collect();
        move |files| NotesListData {
            more: to_u32(total - files.len()),
            files,
            crumpled_excluded,
            homes_unavailable: homes_unavailable.clone(),
        }
    }

    /// The page the rule reads as: rows added one by one while the page
    /// fits.
    fn linear_page(
        rows: &[ListedNote],
        data: impl Fn(Vec<ListedNote>) -> NotesListData,
    ) -> Option<ToolOutput> {
        let mut page = None;
        for len in 0..=rows.len() {
            match pack(&data(rows[..len].to_vec())).unwrap() {
                Some(output) => page = Some(output),
                None => break,
            }
        }
        page.filter(|_| rows.is_empty() || fits(&data(rows[..1].to_vec())))
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
            let data = snapshot(rows.len() + hidden, 2, &["@human"]);
            let page = list_page(&mut rows.clone().into_iter(), &data);
            match linear_page(&rows, data) {
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
        let refused = list_page(&mut [huge].into_iter(), &snapshot(1, 0, &[])).unwrap_err();
        assert_eq!(refused.code(), RefusalCode::OutputTooLarge);
        let empty = list_page(&mut std::iter::empty(), &snapshot(0, 0, &[])).unwrap();
        assert_eq!(empty.text, "0 notes");
    }
}
