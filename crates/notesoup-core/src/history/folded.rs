//! Every event's document case-folded once, for search.
//!
//! `history_search` folds its queries and looks for them in folded text. A
//! long-lived host serves many searches over one [`History`]; folding every
//! document again on each call would copy the whole transcript's text per
//! search. The folded documents are built on the first search, kept in one
//! buffer, and shared by the history's clones.

use std::sync::{Arc, OnceLock};

use super::event::HistoryEvent;
use crate::notes::matcher::fold_into;

/// The folded documents of a history's events, in event order.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct FoldedDocuments {
    /// Every folded document, back to back.
    text: String,
    /// Where each event's folded document ends in `text`.
    ends: Vec<usize>,
}

impl FoldedDocuments {
    /// Folds every event's document.
    pub fn of(events: &[HistoryEvent]) -> FoldedDocuments {
        let mut text = String::with_capacity(with_room(documents_len(events)));
        let mut ends = Vec::with_capacity(events.len());
        for event in events {
            fold_into(&event.document, &mut text);
            ends.push(text.len());
        }
        FoldedDocuments { text, ends }
    }

    /// The folded document of the event at `index` in
    /// [`History::events`](super::History::events); empty past the end.
    pub fn get(&self, index: usize) -> &str {
        let Some(&end) = self.ends.get(index) else {
            return "";
        };
        let start = index.checked_sub(1).map_or(0, |before| self.ends[before]);
        &self.text[start..end]
    }
}

/// A history's folded documents once built: derived data, so two histories
/// compare equal whether or not either has built them.
#[derive(Debug, Clone, Default)]
pub(super) struct FoldCache(OnceLock<Arc<FoldedDocuments>>);

impl FoldCache {
    pub(super) fn get_or_fold(&self, events: &[HistoryEvent]) -> &FoldedDocuments {
        self.0.get_or_init(|| Arc::new(FoldedDocuments::of(events)))
    }
}

impl FoldCache {
    /// After the events from `first_changed` on changed or were added:
    /// keeps the folded documents before it and folds the rest, when they
    /// were built and no clone shares them; otherwise they are built again
    /// on the next search.
    pub(super) fn refold_from(&mut self, first_changed: usize, events: &[HistoryEvent]) {
        let Some(kept) = self.0.take().and_then(|kept| Arc::try_unwrap(kept).ok()) else {
            return;
        };
        let mut folded = kept;
        let keep = first_changed.min(folded.ends.len());
        let end = keep.checked_sub(1).map_or(0, |before| folded.ends[before]);
        folded.ends.truncate(keep);
        folded.text.truncate(end);
        let added = documents_len(&events[keep..]);
        if folded.text.capacity() - folded.text.len() < added {
            // Grown by an eighth, not doubled: the copy is the history's
            // whole text.
            folded
                .text
                .reserve_exact(with_room(folded.text.len() + added) - folded.text.len());
        }
        for event in &events[keep..] {
            fold_into(&event.document, &mut folded.text);
            folded.ends.push(folded.text.len());
        }
        let _ = self.0.set(Arc::new(folded));
    }
}

/// The bytes of `events`' documents (folding keeps most texts' length).
fn documents_len(events: &[HistoryEvent]) -> usize {
    events.iter().map(|event| event.document.len()).sum()
}

/// Room for `len` bytes of folded text and an eighth more, so the appends
/// of a growing session are folded in place for a long while instead of
/// copying the whole text (room never written costs no memory).
fn with_room(len: usize) -> usize {
    len.saturating_add(len / 8)
}

impl PartialEq for FoldCache {
    fn eq(&self, _: &FoldCache) -> bool {
        true
    }
}

impl Eq for FoldCache {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::Role;

    fn event(seq: u32, document: &str) -> HistoryEvent {
        HistoryEvent {
            seq,
            window: 0,
            role: Role::User,
            created_at: None,
            tool: None,
            document: document.to_owned(),
        }
    }

    #[test]
    fn each_event_gets_its_own_folded_document() {
        let events = [event(1, "Hello WORLD"), event(2, ""), event(3, "ΣΟΦΟΣ İx")];
        let folded = FoldedDocuments::of(&events);
        assert_eq!(folded.get(0), "hello world");
        assert_eq!(folded.get(1), "");
        assert_eq!(folded.get(2), "σοφοσ i\u{307}x");
        assert_eq!(folded.get(3), "");
    }

    /// Events added to a folded history are folded in the room left after
    /// its text: the text is not copied.
    #[test]
    fn added_events_are_folded_in_place() {
        let mut events: Vec<HistoryEvent> =
            (1..=64).map(|seq| event(seq, &"Ab".repeat(64))).collect();
        let mut cache = FoldCache::default();
        let folded = cache.get_or_fold(&events);
        // 8,192 bytes of text and an eighth of room.
        assert_eq!((folded.text.len(), folded.text.capacity()), (8_192, 9_216));
        let at = folded.text.as_ptr();
        events.push(event(65, "NEW"));
        cache.refold_from(64, &events);
        let folded = cache.get_or_fold(&[]);
        assert_eq!(folded.text.as_ptr(), at);
        assert_eq!(folded.text.capacity(), 9_216);
        assert_eq!(folded.get(64), "new");
        assert_eq!(folded.get(63), "ab".repeat(64));
        // An event that fills the room exactly is folded in place too.
        events.push(event(66, &"Y".repeat(9_216 - 8_195)));
        cache.refold_from(65, &events);
        let folded = cache.get_or_fold(&[]);
        assert_eq!(folded.text.as_ptr(), at);
        assert_eq!((folded.text.len(), folded.text.capacity()), (9_216, 9_216));
        assert_eq!(folded.get(65), "y".repeat(1_021));
        // Past the room, the text grows to an eighth over its new length.
        events.push(event(67, &"x".repeat(10_000)));
        cache.refold_from(66, &events);
        let folded = cache.get_or_fold(&[]);
        assert_eq!(folded.get(66), "x".repeat(10_000));
        assert_eq!(
            (folded.text.len(), folded.text.capacity()),
            (19_216, 21_618)
        );
    }

    #[test]
    fn the_cache_folds_once_and_never_decides_equality() {
        let cache = FoldCache::default();
        let events = [event(1, "A")];
        let first: *const FoldedDocuments = cache.get_or_fold(&events);
        let clone = cache.clone();
        assert!(std::ptr::eq(first, clone.get_or_fold(&[])));
        assert_eq!(FoldCache::default(), cache);
    }
}
