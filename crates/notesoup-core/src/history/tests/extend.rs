//! `History::extend_owned`: a history extended with what its transcript gained
//! equals the history built from the whole transcript; a transcript that
//! does not continue it is refused and changes nothing.

use crate::history::{History, SeqSpan, ToolStatus, Transcript, TranscriptError, TranscriptWindow};
use crate::tools::history::{HistorySearchParams, history_search};
use proptest::prelude::*;

use super::fixture::{call, tool_result, user};
use super::properties::{gen_item, transcript_of};

/// Extends `history` with a copy of `transcript`, and checks that a
/// refusal leaves the history as it was.
fn extend(history: &mut History, transcript: &Transcript) -> Result<(), TranscriptError> {
    let before = history.clone();
    let result = history.extend_owned(transcript.clone());
    if result.is_err() {
        assert_eq!(&before, history, "a refused transcript changes nothing");
    }
    result
}

/// `transcript` without the items whose seqs `before` holds: what a host
/// that hands its items over still has after the last hand-over.
fn without_items_of(transcript: &Transcript, before: &Transcript) -> Transcript {
    let old: std::collections::HashSet<u32> = before
        .windows
        .iter()
        .flat_map(|window| window.items.iter().map(|item| item.seq))
        .collect();
    let mut rest = transcript.clone();
    for window in &mut rest.windows {
        window.items.retain(|item| !old.contains(&item.seq));
    }
    rest
}

fn search(history: &History, query: &str) -> String {
    let params: HistorySearchParams =
        serde_json::from_value(serde_json::json!({ "query": query })).unwrap();
    history_search(history, &params).text
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Extended at every cut, in turn, the history equals a fresh build of
    /// the whole transcript, folded documents included (searched between
    /// appends, so they are extended rather than built again).
    #[test]
    fn extending_equals_building_again(
        gens in prop::collection::vec(gen_item(), 0..40),
        cuts in prop::collection::vec(0usize..40, 1..4),
    ) {
        let mut cuts: Vec<usize> = cuts.into_iter().map(|cut| cut.min(gens.len())).collect();
        cuts.sort_unstable();
        let mut history = History::new(transcript_of(&gens[..cuts[0]])).unwrap();
        let mut handed_over = history.clone();
        let mut before = transcript_of(&gens[..cuts[0]]);
        for &cut in cuts.iter().skip(1).chain([&gens.len()]) {
            let _ = search(&history, "σοφοσ");
            let grown = transcript_of(&gens[..cut]);
            extend(&mut history, &grown).unwrap();
            // Only the new items handed over.
            handed_over.extend_owned(without_items_of(&grown, &before)).unwrap();
            before = grown;
        }
        let fresh = History::new(transcript_of(&gens)).unwrap();
        prop_assert_eq!(&history, &fresh);
        prop_assert_eq!(&handed_over, &fresh);
        prop_assert_eq!(history.folded(), fresh.folded());
        prop_assert_eq!(search(&history, "word"), search(&fresh, "word"));
    }
}

/// root: a call pending, then w1 with a user message; seqs 1..=4, 3 off.
fn base() -> Transcript {
    Transcript {
        session_id: "s".into(),
        highest_seq: 4,
        off_branch: vec![SeqSpan { first: 3, last: 3 }],
        windows: vec![
            TranscriptWindow {
                id: "root".into(),
                created_at: Some("t0".into()),
                items: vec![user(1, "hello"), call(2, "bash", "c1", "{}")],
            },
            TranscriptWindow {
                id: "w1".into(),
                created_at: None,
                items: vec![user(4, "next")],
            },
        ],
    }
}

fn status_of(history: &History, seq: u32) -> ToolStatus {
    history.event(seq).unwrap().tool.as_ref().unwrap().status
}

#[test]
fn a_late_result_finishes_the_pending_call() {
    let mut history = History::new(base()).unwrap();
    assert_eq!(status_of(&history, 2), ToolStatus::Unfinished);
    let mut grown = base();
    grown.highest_seq = 5;
    grown.windows[1].items.push(tool_result(5, "c1", "done"));
    extend(&mut history, &grown).unwrap();
    assert_eq!(history, History::new(grown).unwrap());
    assert_eq!(history.paired_call(5), Some(2));
    assert_eq!(status_of(&history, 2), ToolStatus::Ok);
}

/// A change that breaks the continuation of [`base`].
type Breaking = fn(&mut Transcript);

#[test]
fn a_transcript_that_does_not_continue_is_refused_and_changes_nothing() {
    let original = History::new(base()).unwrap();
    let broken: Vec<(&str, Breaking)> = vec![
        ("the highest seq went down", |t| t.highest_seq = 3),
        ("a window went away", |t| {
            t.windows.pop();
        }),
        ("a window changed its id or start", |t| {
            t.windows[1].id = "w9".into()
        }),
        ("a window changed its id or start", |t| {
            t.windows[0].created_at = None;
        }),
        ("an earlier window gained items", |t| {
            t.highest_seq = 5;
            t.windows[0].items.push(user(5, "late"));
        }),
        ("a new window holds earlier items", |t| {
            let moved = t.windows[1].items.remove(0);
            t.windows.push(TranscriptWindow {
                id: "w2".into(),
                created_at: None,
                items: vec![moved],
            });
        }),
        ("a seq moved on or off the branch", |t| t.off_branch.clear()),
        ("a seq moved on or off the branch", |t| {
            t.off_branch.push(SeqSpan { first: 4, last: 5 });
            t.highest_seq = 5;
        }),
    ];
    for (reason, breaking) in broken {
        let mut transcript = base();
        breaking(&mut transcript);
        let mut history = original.clone();
        assert_eq!(
            extend(&mut history, &transcript),
            Err(TranscriptError::NotAContinuation { reason }),
            "{reason}"
        );
        assert_eq!(history, original, "{reason}");
    }
}

#[test]
fn the_last_seq_read_cannot_leave_the_branch() {
    let two = Transcript {
        session_id: "s".into(),
        highest_seq: 2,
        off_branch: vec![],
        windows: vec![TranscriptWindow {
            id: "root".into(),
            created_at: None,
            items: vec![user(1, "one"), user(2, "two")],
        }],
    };
    let original = History::new(two.clone()).unwrap();
    let mut moved = two;
    moved.highest_seq = 3;
    moved.off_branch.push(SeqSpan { first: 2, last: 3 });
    let mut history = original.clone();
    assert_eq!(
        extend(&mut history, &moved),
        Err(TranscriptError::NotAContinuation {
            reason: "a seq moved on or off the branch"
        })
    );
    assert_eq!(history, original);
}

#[test]
fn an_inconsistent_continuation_gets_the_error_a_build_would() {
    let original = History::new(base()).unwrap();
    let mut duplicate = base();
    duplicate.windows.push(TranscriptWindow {
        id: "root".into(),
        created_at: None,
        items: vec![],
    });
    let mut off = base();
    off.highest_seq = 6;
    off.off_branch.push(SeqSpan { first: 6, last: 6 });
    off.windows[1].items.push(user(6, "off"));
    let mut bad_span = base();
    bad_span.off_branch.push(SeqSpan { first: 5, last: 9 });
    let mut zero_span = base();
    zero_span.off_branch.push(SeqSpan { first: 0, last: 0 });
    let mut empty_span = base();
    empty_span.highest_seq = 6;
    empty_span.off_branch.push(SeqSpan { first: 6, last: 5 });
    for (transcript, error) in [
        (
            duplicate,
            TranscriptError::DuplicateWindowId { id: "root".into() },
        ),
        (off, TranscriptError::SeqOffBranch { seq: 6 }),
        (bad_span, TranscriptError::BadSpan { first: 5, last: 9 }),
        (zero_span, TranscriptError::BadSpan { first: 0, last: 0 }),
        (empty_span, TranscriptError::BadSpan { first: 6, last: 5 }),
    ] {
        let mut history = original.clone();
        assert_eq!(extend(&mut history, &transcript), Err(error.clone()));
        assert_eq!(History::new(transcript).err(), Some(error));
        assert_eq!(history, original);
    }
}

#[test]
fn an_unchanged_transcript_changes_nothing() {
    let mut history = History::new(base()).unwrap();
    let _ = search(&history, "hello");
    extend(&mut history, &base()).unwrap();
    assert_eq!(history, History::new(base()).unwrap());
    assert_eq!(history.folded(), History::new(base()).unwrap().folded());
}
