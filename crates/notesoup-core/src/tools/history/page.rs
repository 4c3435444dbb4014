//! Paging for `history_list` and `history_search`: anchor selection, folding,
//! previews and the response budget.

use std::ops::Range;

use serde_json::json;

use super::render::ToolFields;
use super::types::{HistoryFoldedRow, HistoryPage, HistoryPageItem, HistoryRow, ToolCounts};
use crate::history::{History, HistoryEvent, Role};
use crate::tools::output::{RESULT_TOO_LARGE, pack, pack_or};
use crate::tools::window::to_u32;
use crate::tools::{
    Refusal, RefusalCode, TOOL_OUTPUT_MAX_BYTES, ToolOutcome, ToolOutput, fill_best, fits,
    prefix_fit,
};

/// Most tool names one folded row lists.
pub(crate) const MAX_FOLD_TOOL_NAMES: usize = 20;
/// Longest tool name a folded row lists; longer ones count as omitted.
pub(crate) const MAX_FOLD_TOOL_NAME_CHARS: usize = 120;
/// Default page size.
pub(crate) const DEFAULT_PAGE_LIMIT: usize = 20;

/// Known window ids reported by an `unknown_window_id` refusal.
const MAX_REPORTED_WINDOWS: usize = 25;

/// The `window_id` value naming the window before the current one.
pub(crate) const PREVIOUS_WINDOW: &str = "@previous";

/// What one page request selects from.
pub(super) struct PageScope<'h> {
    pub history: &'h History,
    /// Index of the only window shown, if narrowed.
    pub window: Option<usize>,
    /// Roles shown; `None` for every role (search) or the conversation view (list).
    pub roles: Option<Vec<Role>>,
    pub before: Option<u32>,
    pub after: Option<u32>,
    pub limit: usize,
    pub max_chars: usize,
    /// The conversation view: fold tool and context runs.
    pub folds: bool,
}

/// One selectable event, with its search match offset.
#[derive(Debug, Clone, Copy)]
struct Candidate {
    index: usize,
    match_offset: Option<usize>,
}

/// Resolves a `window_id` parameter to a window index, refusing an unknown id.
pub(super) fn resolve_window(
    history: &History,
    window_id: Option<&str>,
) -> ToolOutcome<Option<usize>> {
    let Some(window_id) = window_id else {
        return Ok(None);
    };
    let windows = history.windows();
    let found = if window_id == PREVIOUS_WINDOW {
        windows.len().checked_sub(2)
    } else {
        windows.iter().position(|window| window.id == window_id)
    };
    if let Some(index) = found {
        return Ok(Some(index));
    }
    let message = if window_id == PREVIOUS_WINDOW {
        format!(
            "unknown window_id \"{PREVIOUS_WINDOW}\": this session has no window before the current one"
        )
    } else {
        format!("unknown window_id \"{window_id}\"")
    };
    let known: Vec<&str> = windows
        .iter()
        .take(MAX_REPORTED_WINDOWS)
        .map(|window| window.id.as_str())
        .collect();
    let mut details = json!({ "window_id": window_id, "known_windows": known });
    if windows.len() > MAX_REPORTED_WINDOWS {
        details["known_windows_omitted"] = json!(windows.len() - MAX_REPORTED_WINDOWS);
    }
    Err(Refusal::new(RefusalCode::UnknownWindowId, message).with_details(details))
}

impl PageScope<'_> {
    /// Event indices strictly between `after` and `before`.
    fn range(&self) -> Range<usize> {
        let events = self.history.events();
        let start = self.after.map_or(0, |after| {
            events.partition_point(|event| event.seq <= after)
        });
        let end = self.before.map_or(events.len(), |before| {
            events.partition_point(|event| event.seq < before)
        });
        start..end.max(start)
    }

    fn in_window(&self, event: &HistoryEvent) -> bool {
        self.window.is_none_or(|window| event.window == window)
    }

    /// Would this event be a page row (before any search match)?
    pub(super) fn selects(&self, event: &HistoryEvent) -> bool {
        if !self.in_window(event) {
            return false;
        }
        match &self.roles {
            Some(roles) => roles.contains(&event.role),
            // Search (no folds) shows every role; the conversation view shows
            // user and assistant events that say something.
            None if !self.folds => true,
            None => {
                matches!(event.role, Role::User | Role::Assistant) && !event.document.is_empty()
            }
        }
    }

    /// Builds the page from the events `accept` takes (given each event's
    /// index in [`History::events`] and the event; giving a search match
    /// offset, or `None` for a plain listing): selects up to `limit` candidates nearest the anchor
    /// (newest first without anchors or with `before` only, oldest first
    /// otherwise), adds them while the page fits, shrinks the first one when
    /// none fits whole, and refuses with `page_too_large` when even that fails.
    /// The page comes packaged: rendered, serialized and measured once.
    pub(super) fn page(
        &self,
        mut accept: impl FnMut(usize, &HistoryEvent) -> Option<Option<usize>>,
    ) -> ToolOutcome<ToolOutput> {
        let range = self.range();
        let newest_first = self.after.is_none();
        let events = self.history.events();
        let mut chosen: Vec<Candidate> = Vec::with_capacity(self.limit.min(64) + 1);
        let mut offer = |index: usize| {
            if let Some(match_offset) = accept(index, &events[index]) {
                chosen.push(Candidate {
                    index,
                    match_offset,
                });
            }
            chosen.len() > self.limit
        };
        if newest_first {
            let _ = range.clone().rev().any(&mut offer);
        } else {
            let _ = range.clone().any(&mut offer);
        }
        let more = chosen.len() > self.limit;
        chosen.truncate(self.limit);

        // Each measured page is packaged: the one kept is not built again.
        let (filled, packed) = fill_best(chosen, |kept| {
            pack(&self.build(kept, more, newest_first, &[]))
                .ok()
                .flatten()
        });
        match (filled.rejected, packed) {
            (None, Some(page)) => Ok(page),
            (Some(_), Some(page)) if more => Ok(page),
            // A row was left out, so the page says there is more: it is
            // built and measured again.
            (Some(_), Some(_)) => pack_or(
                &self.build(&filled.kept, true, newest_first, &[]),
                RESULT_TOO_LARGE,
            ),
            (Some(first), None) => self.shrunk_single(first, true, newest_first),
            (None, None) => pack_or(&self.build(&[], more, newest_first, &[]), RESULT_TOO_LARGE),
        }
    }

    /// The smallest page that still shows `candidate`: its preview shortened,
    /// then its tool name dropped.
    fn shrunk_single(
        &self,
        candidate: Candidate,
        more: bool,
        newest_first: bool,
    ) -> ToolOutcome<ToolOutput> {
        let kept = [candidate];
        let page_with = |item: &HistoryPageItem| {
            self.build(&kept, more, newest_first, std::slice::from_ref(item))
        };
        let shrink = |item: HistoryPageItem| {
            let mut trial = item.clone();
            trial.truncated = true;
            trial.content.clear();
            if !fits(&page_with(&trial)) {
                // Not even an empty preview fits: no prefix will.
                return trial;
            }
            let content = prefix_fit(&item.content, |prefix| {
                trial.content = prefix.to_owned();
                fits(&page_with(&trial))
            })
            .to_owned();
            HistoryPageItem {
                truncated: true,
                content,
                ..item
            }
        };
        let shrunk = shrink(self.item(candidate));
        if let Some(page) = pack(&page_with(&shrunk))? {
            return Ok(page);
        }
        if shrunk.tool.is_some() {
            let unnamed = HistoryPageItem {
                tool: None,
                tool_name_omitted: Some(true),
                ..self.item(candidate)
            };
            let unnamed = if fits(&page_with(&unnamed)) {
                unnamed
            } else {
                shrink(unnamed)
            };
            if let Some(page) = pack(&page_with(&unnamed))? {
                return Ok(page);
            }
        }
        let rows = page_with(&shrunk).items.len();
        Err(Refusal::new(
            RefusalCode::PageTooLarge,
            format!(
                "{rows} history rows and their fold summary do not fit one response even at their smallest; narrow the range with before/after or read one seq"
            ),
        )
        .with_details(json!({ "rows": rows })))
    }

    /// The page for the kept candidates (in selection order). `more` says
    /// whether selectable events remain beyond them in the selection
    /// direction. `previews` replaces the first rows' previews when given.
    fn build(
        &self,
        kept: &[Candidate],
        more: bool,
        newest_first: bool,
        previews: &[HistoryPageItem],
    ) -> HistoryPage {
        let mut ascending: Vec<Candidate> = kept.to_vec();
        ascending.sort_unstable_by_key(|candidate| candidate.index);
        let older = more && newest_first;
        let newer = more && !newest_first;
        let events = self.history.events();
        let first = ascending
            .first()
            .map(|candidate| events[candidate.index].seq);
        let last = ascending
            .last()
            .map(|candidate| events[candidate.index].seq);

        let mut rows: Vec<HistoryRow> = Vec::with_capacity(ascending.len() * 2 + 1);
        let range = self.range();
        let mut gap_start = range.start;
        for (position, candidate) in ascending.iter().enumerate() {
            if self.folds && (position > 0 || !older) {
                rows.extend(
                    self.fold(gap_start..candidate.index)
                        .map(HistoryRow::Folded),
                );
            }
            let item = previews
                .get(position)
                .cloned()
                .unwrap_or_else(|| self.item(*candidate));
            rows.push(HistoryRow::Event(item));
            gap_start = candidate.index + 1;
        }
        if self.folds && !newer {
            rows.extend(self.fold(gap_start..range.end).map(HistoryRow::Folded));
        }
        HistoryPage {
            items: rows,
            older_before: first.filter(|_| older),
            newer_after: last.filter(|_| newer),
        }
    }

    /// The folded row for the tool and context events among `indices`, if any.
    fn fold(&self, indices: Range<usize>) -> Option<HistoryFoldedRow> {
        let mut fold: Option<HistoryFoldedRow> = None;
        let mut omitted_names: Vec<&str> = Vec::new();
        for event in &self.history.events()[indices] {
            if !matches!(event.role, Role::Tool | Role::Context) || !self.in_window(event) {
                continue;
            }
            let row = fold.get_or_insert_with(|| HistoryFoldedRow {
                folded: true,
                first_seq: event.seq,
                last_seq: event.seq,
                count: 0,
                tools: ToolCounts::default(),
                omitted_tools: None,
            });
            row.last_seq = event.seq;
            row.count += 1;
            let Some(tool) = &event.tool else {
                continue;
            };
            let name = tool.name.as_str();
            if let Some((_, count)) = row.tools.0.iter_mut().find(|(listed, _)| listed == name) {
                *count += 1;
            } else if row.tools.0.len() < MAX_FOLD_TOOL_NAMES
                && name.chars().count() <= MAX_FOLD_TOOL_NAME_CHARS
            {
                row.tools.0.push((name.to_owned(), 1));
            } else if !omitted_names.contains(&name) {
                omitted_names.push(name);
            }
        }
        fold.map(|mut row| {
            if !omitted_names.is_empty() {
                row.omitted_tools = Some(to_u32(omitted_names.len()));
            }
            row
        })
    }

    /// An event row with its preview, starting at the match when searching.
    fn item(&self, candidate: Candidate) -> HistoryPageItem {
        let event = &self.history.events()[candidate.index];
        let start = candidate.match_offset.unwrap_or(0);
        // A preview longer than the byte budget can never fit (a code point
        // takes at least one byte), so a larger request is cut here, before the
        // budget search, with the same result.
        let max_chars = self.max_chars.min(TOOL_OUTPUT_MAX_BYTES);
        let total_chars = event.total_chars();
        let truncated = start > 0 || start.saturating_add(max_chars) < total_chars;
        let content = if truncated {
            char_slice(&event.document, start, max_chars).to_owned()
        } else {
            event.document.clone()
        };
        let facts = ToolFields::of(event);
        HistoryPageItem {
            seq: event.seq,
            window_id: self.history.windows()[event.window].id.clone(),
            role: event.role,
            created_at: event.created_at.clone(),
            tool: facts.name,
            tool_name_omitted: None,
            tool_status: facts.status,
            output_truncated: facts.output_truncated,
            full_output_path: facts.full_output_path,
            nested_calls: facts.nested_calls,
            truncated,
            total_chars: to_u32(total_chars),
            content,
            offset_chars: candidate.match_offset.map(to_u32),
        }
    }
}

/// The `count` code points of `text` starting at code point `start`.
fn char_slice(text: &str, start: usize, count: usize) -> &str {
    if text.is_ascii() {
        let start = start.min(text.len());
        return &text[start..start.saturating_add(count).min(text.len())];
    }
    let mut bounds = text
        .char_indices()
        .map(|(byte, _)| byte)
        .chain(std::iter::once(text.len()));
    let Some(begin) = bounds.nth(start) else {
        return "";
    };
    let end = if count == 0 {
        begin
    } else {
        bounds.nth(count - 1).unwrap_or(text.len())
    };
    &text[begin..end]
}
