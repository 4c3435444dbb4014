//! The history tools: `history_windows`, `history_list`, `history_search` and
//! `history_read`, over a [`History`] a host decoded.

mod page;
mod render;
mod types;

use serde_json::json;

pub use page::{
    DEFAULT_PAGE_LIMIT, MAX_FOLD_TOOL_NAME_CHARS, MAX_FOLD_TOOL_NAMES, PREVIOUS_WINDOW,
};
pub use types::{
    HistoryFoldedRow, HistoryListParams, HistoryPage, HistoryPageItem, HistoryReadData,
    HistoryReadParams, HistoryRow, HistorySearchParams, HistoryWindowRow, HistoryWindowsData,
    HistoryWindowsParams, ToolCounts,
};

use self::page::{PageScope, resolve_window};
use super::output::{pack, pack_or};
use super::params::at_least;
use super::window::{read_window_packed, to_u32};
use super::{HISTORY_PREVIEW_CHARS, Outcome, Refusal, RefusalCode, ToolOutput, fill_best};
use crate::history::{History, Role};
use crate::notes::LiteralQueries;

/// `history_windows`: the session's windows, oldest first, as many as fit.
pub fn history_windows(history: &History, _params: &HistoryWindowsParams) -> ToolOutput {
    ToolOutput::from_packed(windows_data(history))
}

/// `history_list`: one page of events around the anchors, the conversation
/// view (with folded rows) when no roles are given.
pub fn history_list(history: &History, params: &HistoryListParams) -> ToolOutput {
    ToolOutput::from_packed(list_page(history, params))
}

/// `history_search`: one page of events whose document contains any of the
/// query literals (case-insensitive), previews starting at the earliest match.
pub fn history_search(history: &History, params: &HistorySearchParams) -> ToolOutput {
    ToolOutput::from_packed(search_page(history, params))
}

/// `history_read`: one window of an event's document, with its facts.
pub fn history_read(history: &History, params: &HistoryReadParams) -> ToolOutput {
    ToolOutput::from_packed(read_event(history, params))
}

fn windows_data(history: &History) -> Outcome<ToolOutput> {
    let all = history.windows();
    let data = |windows: Vec<HistoryWindowRow>| HistoryWindowsData {
        session_id: history.session_id().to_owned(),
        more: to_u32(all.len() - windows.len()),
        windows,
    };
    let rows = all.iter().map(|window| HistoryWindowRow {
        window_id: window.id.clone(),
        created_at: window.created_at.clone(),
        first_seq: window.first_seq,
        last_seq: window.last_seq,
        item_count: window.event_count,
    });
    let (filled, packed) = fill_best(rows, |kept| pack(&data(kept.to_vec())).ok().flatten());
    match packed {
        Some(output) => Ok(output),
        None => pack_or(
            &data(filled.kept),
            "The session identity does not fit one history_windows response.",
        ),
    }
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
    fn scope<'h>(&self, history: &'h History, folds: bool) -> Outcome<PageScope<'h>> {
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

fn list_page(history: &History, params: &HistoryListParams) -> Outcome<ToolOutput> {
    let selection = Selection {
        limit: params.limit,
        roles: &params.roles,
        before: params.before,
        after: params.after,
        window_id: params.window_id.as_deref(),
        max_chars_per_item: params.max_chars_per_item,
    };
    let scope = selection.scope(history, params.roles.is_none())?;
    scope.page(|_, event| scope.selects(event).then_some(None))
}

fn search_page(history: &History, params: &HistorySearchParams) -> Outcome<ToolOutput> {
    let selection = Selection {
        limit: params.limit,
        roles: &params.roles,
        before: params.before,
        after: params.after,
        window_id: params.window_id.as_deref(),
        max_chars_per_item: params.max_chars_per_item,
    };
    let scope = selection.scope(history, false)?;
    let literals = params.query.literals()?;
    // The notes store's matcher, so both searches fold case the same way.
    let matcher = LiteralQueries::new(&literals)
        .map_err(|error| Refusal::new(RefusalCode::InvalidQuery, error.message()))?;
    // Folded once per history and kept: a warm search only scans.
    let folded = history.folded();
    scope.page(|index, event| {
        if !scope.selects(event) {
            return None;
        }
        matcher
            .find_first_folded(&event.document, folded.get(index))
            .map(Some)
    })
}

fn read_event(history: &History, params: &HistoryReadParams) -> Outcome<ToolOutput> {
    let seq = params.seq;
    let highest = history.highest_seq();
    if seq == 0 || seq > highest {
        return Err(Refusal::new(
            RefusalCode::UnknownSeq,
            format!("unknown seq {seq}: this session's items run 1..{highest}"),
        )
        .with_details(json!({ "seq": seq, "highest_seq": highest })));
    }
    if history.is_off_branch(seq) {
        return Err(Refusal::new(
            RefusalCode::NotOnBranch,
            format!("seq {seq} is on another branch and is not readable here"),
        )
        .with_details(json!({ "seq": seq })));
    }
    if let Some(call) = history.paired_call(seq) {
        return Err(Refusal::new(
            RefusalCode::NotAnEvent,
            format!(
                "seq {seq} is a tool result already shown inside the call at seq {call}; read that seq instead"
            ),
        )
        .with_details(json!({ "seq": seq, "read_seq": call })));
    }
    let Some(event) = history.event(seq) else {
        return Err(Refusal::new(
            RefusalCode::UnknownSeq,
            format!("seq {seq} is on this branch but carries no readable event"),
        )
        .with_details(json!({ "seq": seq })));
    };
    let window_id = &history.windows()[event.window].id;
    let tool = event.tool.as_ref();
    let output_truncated = tool.is_some_and(|tool| tool.output_truncated);
    read_window_packed(
        &event.document,
        params.offset_chars.map(i64::from),
        params.limit_chars,
        |window| HistoryReadData {
            seq,
            window_id: window_id.clone(),
            role: event.role,
            created_at: event.created_at.clone(),
            tool: tool.map(|tool| tool.name.clone()),
            tool_status: tool.map(|tool| tool.status),
            output_truncated: output_truncated.then_some(true),
            full_output_path: tool
                .filter(|_| output_truncated)
                .and_then(|tool| tool.full_output_path.clone()),
            nested_calls: tool.and_then(|tool| tool.nested_calls),
            text: window.text,
            offset_chars: window.offset_chars,
            total_chars: window.total_chars,
            next_offset_chars: window.next_offset_chars,
            limited_by: window.limited_by,
        },
    )
}
