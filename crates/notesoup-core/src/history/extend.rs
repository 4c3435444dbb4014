//! Extending a history with what its transcript gained.
//!
//! A long-lived host keeps one [`History`] per session and its transcript
//! only ever grows at the end: new items after the last one, on the last
//! window or on new windows, and new seqs (some off the branch). Building
//! the history again would copy and project every item of a long session on
//! each append; [`History::extend_owned`] projects only the new items, and pairs
//! the calls still waiting for a result. The result equals
//! [`History::new`] over the whole transcript (a property test checks it).

use std::collections::HashSet;

use super::model::{History, TranscriptError, Window, check_seqs, merge_spans};
use super::transcript::{SeqSpan, Transcript, TranscriptItem, TranscriptWindow};

/// One window of a handed-over transcript, borrowed while it is checked
/// against the history.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WindowView<'a> {
    /// The window id.
    pub id: &'a str,
    /// When the window began, if known.
    pub created_at: Option<&'a str>,
    /// Its items, in ascending seq order.
    pub items: &'a [TranscriptItem],
}

impl<'a> From<&'a TranscriptWindow> for WindowView<'a> {
    fn from(window: &'a TranscriptWindow) -> Self {
        WindowView {
            id: &window.id,
            created_at: window.created_at.as_deref(),
            items: &window.items,
        }
    }
}

impl History {
    /// Brings the history up to `transcript`, handed over so its new items
    /// move into the history instead of being copied. The transcript must
    /// continue the one the history was built from: the same windows (ids
    /// and start times) with items only after the history's last item,
    /// possibly new windows after them, and every earlier seq where it was
    /// (on or off the branch). It holds every window and at least the items
    /// after the history's last one; earlier items may be left out. Only the
    /// new items are projected.
    ///
    /// A transcript that does not continue the history is refused with
    /// [`TranscriptError::NotAContinuation`] and the history is left as it
    /// was (build it again with [`History::new`]); an inconsistent one gets
    /// the error [`History::new`] would give, also leaving it as it was.
    pub fn extend_owned(&mut self, transcript: Transcript) -> Result<(), TranscriptError> {
        let Transcript {
            highest_seq,
            off_branch,
            windows,
            ..
        } = transcript;
        let views: Vec<WindowView<'_>> = windows.iter().map(WindowView::from).collect();
        let Continuation {
            off_branch: merged,
            new_from,
        } = self.continuation(highest_seq, &off_branch, &views)?;
        self.extend_windows(&views);
        drop(views);
        let mut windows: Vec<Option<TranscriptWindow>> = windows.into_iter().map(Some).collect();
        let mut items = Vec::new();
        for (index, old) in new_from {
            let Some(window) = windows.get_mut(index).and_then(Option::take) else {
                continue;
            };
            items.extend(
                window
                    .items
                    .into_iter()
                    .skip(old)
                    .map(|item| Some((index, item))),
            );
        }
        self.project(highest_seq, merged, items);
        Ok(())
    }

    /// Checks that `windows` continue the history.
    fn continuation(
        &self,
        highest_seq: u32,
        off_branch: &[SeqSpan],
        windows: &[WindowView<'_>],
    ) -> Result<Continuation, TranscriptError> {
        let off_branch = self.continued_spans(highest_seq, off_branch)?;
        let first_open = self.continued_windows(windows)?;
        let gained = |window: &WindowView<'_>| {
            window
                .items
                .last()
                .is_some_and(|item| item.seq > self.last_item_seq)
        };
        if windows[..first_open].iter().any(gained) {
            return Err(not_a_continuation("an earlier window gained items"));
        }
        let mut new_from = Vec::new();
        for (index, window) in windows.iter().enumerate().skip(first_open) {
            // Items ascend, so the new ones are a suffix; a new window holds
            // only new ones.
            let old = window
                .items
                .partition_point(|item| item.seq <= self.last_item_seq);
            if index >= self.windows.len() && old > 0 {
                return Err(not_a_continuation("a new window holds earlier items"));
            }
            new_from.push((index, old));
        }
        let seqs = new_from
            .iter()
            .flat_map(|&(index, old)| windows[index].items[old..].iter().map(|item| item.seq));
        check_seqs(seqs, self.last_item_seq, highest_seq, &off_branch)?;
        Ok(Continuation {
            off_branch,
            new_from,
        })
    }

    /// Adds the windows after the history's.
    fn extend_windows(&mut self, windows: &[WindowView<'_>]) {
        let known = self.windows.len().min(windows.len());
        self.windows
            .extend(windows[known..].iter().map(|window| Window {
                id: window.id.to_owned(),
                created_at: window.created_at.map(str::to_owned),
                first_seq: None,
                last_seq: None,
                event_count: 0,
            }));
    }

    /// Projects the new items of a checked continuation.
    fn project(
        &mut self,
        highest_seq: u32,
        off_branch: Vec<SeqSpan>,
        items: Vec<Option<(usize, TranscriptItem)>>,
    ) {
        self.highest_seq = highest_seq;
        self.off_branch = off_branch;
        let first_changed = self.pair_and_project(items);
        self.folded.refold_from(first_changed, &self.events);
    }

    /// The merged spans of a continuing transcript: every old span still
    /// off the branch, and below the old highest seq nothing else.
    fn continued_spans(
        &self,
        highest_seq: u32,
        off_branch: &[SeqSpan],
    ) -> Result<Vec<SeqSpan>, TranscriptError> {
        if highest_seq < self.highest_seq {
            return Err(not_a_continuation("the highest seq went down"));
        }
        for span in off_branch {
            if span.first == 0 || span.first > span.last || span.last > highest_seq {
                return Err(TranscriptError::BadSpan {
                    first: span.first,
                    last: span.last,
                });
            }
        }
        let merged = merge_spans(off_branch.to_vec());
        let old_kept = self.off_branch.iter().all(|old| {
            let after = merged.partition_point(|span| span.first <= old.first);
            after > 0 && merged[after - 1].last >= old.last
        });
        // A merged span reaching below the old highest seq must have been
        // off the branch there already (old spans are merged, so one holds
        // the whole stretch).
        let nothing_new_below = merged.iter().all(|span| {
            span.first > self.highest_seq || {
                let below = span.last.min(self.highest_seq);
                let after = self
                    .off_branch
                    .partition_point(|old| old.first <= span.first);
                after > 0 && self.off_branch[after - 1].last >= below
            }
        });
        if !old_kept || !nothing_new_below {
            return Err(not_a_continuation("a seq moved on or off the branch"));
        }
        Ok(merged)
    }

    /// Checks the windows against the history's and returns the index of
    /// the first window that may hold new items (the last old one, or the
    /// first when there was none).
    fn continued_windows(&self, windows: &[WindowView<'_>]) -> Result<usize, TranscriptError> {
        if windows.len() < self.windows.len() {
            return Err(not_a_continuation("a window went away"));
        }
        for (old, new) in self.windows.iter().zip(windows) {
            if old.id != new.id || old.created_at.as_deref() != new.created_at {
                return Err(not_a_continuation("a window changed its id or start"));
            }
        }
        let mut ids: HashSet<&str> = self.windows.iter().map(|w| w.id.as_str()).collect();
        for window in &windows[self.windows.len()..] {
            if !ids.insert(window.id) {
                return Err(TranscriptError::DuplicateWindowId {
                    id: window.id.to_owned(),
                });
            }
        }
        Ok(self.windows.len().saturating_sub(1))
    }
}

/// A transcript checked to continue a history.
struct Continuation {
    /// Its off-branch spans, merged.
    off_branch: Vec<SeqSpan>,
    /// For each window that may hold new items: its index and how many of
    /// its items the history already has.
    new_from: Vec<(usize, usize)>,
}

fn not_a_continuation(reason: &'static str) -> TranscriptError {
    TranscriptError::NotAContinuation { reason }
}
