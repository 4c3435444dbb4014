//! The history tools, over a [`History`] a host decoded: one file per tool,
//! each registered in `TOOLS`; the paging `history_list` and
//! `history_search` share is in `page.rs`, its result types in `types.rs`
//! and their texts in `render.rs`.

mod list;
mod page;
mod read;
mod render;
mod search;
mod types;
mod windows;

use serde::de::DeserializeOwned;
use serde_json::Value;

pub(crate) use list::HISTORY_LIST;
#[cfg(test)]
pub(crate) use list::{HistoryListParams, history_list};
pub(crate) use page::DEFAULT_PAGE_LIMIT;
pub(crate) use read::HISTORY_READ;
#[cfg(test)]
pub(crate) use read::{HistoryReadParams, history_read};
pub(crate) use search::HISTORY_SEARCH;
#[cfg(test)]
pub(crate) use search::{HistorySearchParams, history_search};
pub(crate) use types::HistoryPage;
pub(crate) use windows::HISTORY_WINDOWS;
#[cfg(test)]
pub(crate) use windows::{HistoryWindowsParams, history_windows};

use self::page::{PageScope, resolve_window};
use super::definition::Tool;
use super::params::at_least;
use super::{
    HISTORY_PREVIEW_CHARS, Refusal, RefusalCode, ToolContext, ToolOutcome, ToolOutput,
    with_arguments,
};
use crate::history::{History, Role};

/// The history tools, in the order hosts list them.
pub(crate) const TOOLS: &[&Tool] = &[
    &HISTORY_WINDOWS,
    &HISTORY_LIST,
    &HISTORY_SEARCH,
    &HISTORY_READ,
];

/// Runs a history tool: the arguments are parsed before the transcript is
/// decoded.
fn run_over_history<P: DeserializeOwned>(
    context: &mut dyn ToolContext,
    arguments: Value,
    run: fn(&History, &P) -> ToolOutput,
) -> ToolOutput {
    with_arguments(arguments, |params: P| {
        context.with_history(&mut |history| run(history, &params))
    })
}

/// The parameters list and search share, checked.
struct Selection<'a> {
    limit: Option<u32>,
    roles: &'a Option<Vec<Role>>,
    before: Option<u32>,
    after: Option<u32>,
    window_id: Option<&'a str>,
    max_chars_per_item: Option<u32>,
}

impl Selection<'_> {
    fn scope<'h>(&self, history: &'h History, folds: bool) -> ToolOutcome<PageScope<'h>> {
        at_least("limit", self.limit, 1)?;
        at_least("max_chars_per_item", self.max_chars_per_item, 1)?;
        if self.roles.as_ref().is_some_and(Vec::is_empty) {
            return Err(Refusal::new(
                RefusalCode::InvalidArguments,
                "roles must list at least one of user, assistant, tool, context",
            ));
        }
        Ok(PageScope {
            history,
            window: resolve_window(history, self.window_id)?,
            roles: self.roles.clone(),
            before: self.before,
            after: self.after,
            limit: self
                .limit
                .map_or(DEFAULT_PAGE_LIMIT, |limit| limit as usize),
            max_chars: self
                .max_chars_per_item
                .map_or(HISTORY_PREVIEW_CHARS, |max| max as usize),
            folds,
        })
    }
}
