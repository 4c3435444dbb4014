//! The window ledger over a history and the host's signals: the notes a
//! window wrote (the checkpoint among them), how it ended, what the next
//! window spent getting back to work, and the notices' fill. The hosts'
//! tests run it on recorded sessions; this one pins the rules.

use crate::history::{EndReason, NoticeKind, WindowSignals, session_ledger};

use super::fixture::{assistant, call, context, history, tool_result, user, window};

fn signals(fill: &[(u32, u64)], ended_by: Option<EndReason>) -> WindowSignals {
    WindowSignals {
        fill: fill.to_vec(),
        context_window: Some(10_000),
        ended_by,
        ..WindowSignals::default()
    }
}

#[test]
fn notes_checkpoint_end_and_reorientation() {
    let history = history(vec![
        window(
            "w1",
            vec![
                user(1, "fix the parser"),
                assistant(2, ""),
                call(
                    3,
                    "notes_write",
                    "c1",
                    r#"{"address":"checkpoint","content":"goal: parser"}"#,
                ),
                tool_result(4, "c1", "{}"),
                call(
                    5,
                    "mcp__plugin_notesoup_notesoup__notes_update",
                    "c2",
                    r#"{"address":"@project/parser.md","edits":[{"oldText":"a","newText":"bcd"}],"replace_all":true}"#,
                ),
                tool_result(6, "c2", "{}"),
                call(7, "wipe_memory", "c3", "{}"),
                tool_result(8, "c3", r#"{"status":"rollover_requested"}"#),
            ],
        ),
        window(
            "w2",
            vec![
                context(9, "boot"),
                assistant(10, ""),
                call(11, "notes_read", "c4", r#"{"address":"checkpoint"}"#),
                tool_result(12, "c4", "goal: parser"),
                assistant(13, ""),
                call(14, "bash", "c5", r#"{"command":"cargo test"}"#),
                tool_result(15, "c5", "ok"),
            ],
        ),
    ]);
    let mut first = signals(&[(2, 6_000)], Some(EndReason::Budget));
    first.notices = vec![(4, NoticeKind::Warning)];
    let ledger = session_ledger(
        &history,
        &[first, signals(&[(10, 1_500), (13, 2_500)], None)],
    );
    let [one, two] = ledger.windows.as_slice() else {
        panic!("two windows");
    };
    // A normal reset after a successful wipe_memory is the tool's.
    assert_eq!(one.end, EndReason::Tool);
    assert_eq!(two.end, EndReason::Open);
    assert_eq!(one.notes.len(), 2);
    assert_eq!(one.notes[0].address, "checkpoint");
    assert!(one.notes[0].checkpoint);
    assert_eq!(one.notes[1].op, "update");
    assert_eq!(one.notes[1].text, "bcd");
    // What a reader needs to apply the update to the note's earlier text.
    assert_eq!(
        one.notes[1].edits,
        [notesoup_core::history::LedgerEdit {
            old_text: "a".to_owned(),
            new_text: "bcd".to_owned(),
        }]
    );
    assert!(one.notes[1].replace_all);
    assert!(one.notes[0].edits.is_empty() && !one.notes[0].replace_all);
    assert!(!one.notes[1].checkpoint);
    assert!(one.checkpoint_written);
    assert_eq!(one.checkpoint_chars, Some(12));
    assert_eq!(one.notices[0].tokens, Some(6_000));
    assert_eq!(one.tokens_at_end, Some(6_000));
    assert_eq!(one.reorientation, None);
    let cost = two.reorientation.unwrap();
    assert_eq!(cost.tool_calls, 1);
    assert_eq!(cost.tokens, Some(2_500));
    assert!(cost.reached_work);
    assert_eq!(ledger.notes_written, 2);
    assert_eq!(ledger.reorientation_calls, 1);
    assert_eq!(ledger.ends.get(&EndReason::Tool), Some(&1));
}

#[test]
fn a_manual_close_out_and_a_failed_write() {
    let history = history(vec![
        window(
            "w1",
            vec![
                call(
                    1,
                    "notes_write",
                    "c1",
                    r#"{"address":"checkpoint","content":"x"}"#,
                ),
                super::fixture::result_with(2, "c1", "refused", |result| {
                    result.status = crate::history::ToolStatus::Error;
                }),
            ],
        ),
        window("w2", vec![user(3, "next")]),
    ]);
    let mut first = signals(&[], Some(EndReason::Budget));
    first.manual = true;
    first.compaction_summaries = vec![0, 42];
    let ledger = session_ledger(&history, &[first]);
    assert_eq!(ledger.windows[0].end, EndReason::Manual);
    // A refused write wrote nothing.
    assert!(ledger.windows[0].notes.is_empty());
    assert!(!ledger.windows[0].checkpoint_written);
    // Only a compaction that kept a summary slipped through.
    assert_eq!(ledger.slipped_summaries, 1);
    // A missing signal is nothing recorded; the last window is open.
    assert_eq!(ledger.windows[1].end, EndReason::Open);
    assert_eq!(ledger.windows[1].tokens_at_end, None);
}

/// An update that moves a note carries where it moved, so a reader can
/// follow the note to its new address.
#[test]
fn a_rename_is_an_update_that_names_its_target() {
    let history = history(vec![window(
        "w1",
        vec![
            call(
                1,
                "notes_update",
                "c1",
                r#"{"address":"@project/a.md","rename_to":"@project/b.md"}"#,
            ),
            tool_result(2, "c1", "{}"),
            call(
                3,
                "notes_update",
                "c2",
                r#"{"address":"@project/b.md","edits":[{"oldText":"x","newText":"y"}]}"#,
            ),
            tool_result(4, "c2", "{}"),
        ],
    )]);
    let ledger = session_ledger(&history, &[signals(&[], None)]);
    let notes = &ledger.windows[0].notes;
    assert_eq!(notes[0].rename_to.as_deref(), Some("@project/b.md"));
    assert!(notes[0].edits.is_empty());
    assert_eq!(notes[1].rename_to, None);
}
