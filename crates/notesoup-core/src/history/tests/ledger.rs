//! The window ledger over a history and the host's signals: the notes a
//! window wrote (the checkpoint among them), how it ended, what the next
//! window spent getting back to work, and the notices' fill. The hosts'
//! tests run it on recorded sessions; this one pins the rules.

use crate::history::{
    EndReason, NoticeKind, ToolStatus, TranscriptWindow, WindowSignals, session_ledger,
};

use super::fixture::{assistant, call, context, history, result_with, tool_result, user, window};

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
                result_with(2, "c1", "refused", |result| {
                    result.status = ToolStatus::Error;
                }),
            ],
        ),
        window("w2", vec![user(3, "next")]),
    ]);
    let mut first = signals(&[], Some(EndReason::Budget));
    first.manual = true;
    first.compaction_summaries = vec![0, 42, 7];
    let ledger = session_ledger(&history, &[first]);
    assert_eq!(ledger.windows[0].end, EndReason::Manual);
    // A refused write wrote nothing.
    assert!(ledger.windows[0].notes.is_empty());
    assert!(!ledger.windows[0].checkpoint_written);
    // Only a compaction that kept a summary slipped through.
    assert_eq!(ledger.slipped_summaries, 2);
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

/// A window of one tool call (`tool`, successful or not) and a reply.
fn window_calling(id: &str, seq: u32, tool: &str, ok: bool) -> TranscriptWindow {
    let call_id = format!("c{seq}");
    window(
        id,
        vec![
            call(seq, tool, &call_id, "{}"),
            result_with(seq + 1, &call_id, "done", |result| {
                if !ok {
                    result.status = ToolStatus::Error;
                }
            }),
            assistant(seq + 2, "done"),
        ],
    )
}

/// How a window's end is read from its boundary's reason and its own
/// calls: a successful `wipe_memory` makes a reset without a reason, or a
/// normal (budget) reset, the tool's; a person's close-out stays manual;
/// the other reasons stand; the last window is open whatever it called.
#[test]
fn a_window_s_end_is_read_from_its_reason_and_its_wipe() {
    use EndReason::{Budget, HardReserve, Manual, Open, Reset, Tool};
    // (the window's one tool call, whether it succeeded, the boundary's
    // reason, whether a person asked, the end read)
    let cases = [
        ("wipe_memory", true, None, false, Tool),
        ("wipe_memory", true, Some(Open), false, Tool),
        ("wipe_memory", true, Some(Reset), false, Tool),
        ("wipe_memory", true, Some(Budget), false, Tool),
        ("wipe_memory", true, Some(Budget), true, Manual),
        ("wipe_memory", true, Some(HardReserve), false, HardReserve),
        ("wipe_memory", false, None, false, Reset),
        ("wipe_memory", false, Some(Budget), false, Budget),
        ("bash", true, None, false, Reset),
        ("bash", true, Some(Open), false, Reset),
        ("bash", true, Some(Reset), false, Reset),
        ("bash", true, Some(Budget), false, Budget),
        ("bash", true, Some(Budget), true, Manual),
    ];
    for (tool, ok, ended_by, manual, end) in cases {
        let history = history(vec![
            window_calling("w1", 1, tool, ok),
            window_calling("w2", 4, "wipe_memory", true),
        ]);
        let mut first = signals(&[], ended_by);
        first.manual = manual;
        let ledger = session_ledger(&history, &[first, signals(&[], None)]);
        let case = format!("{tool} (ok: {ok}) ended by {ended_by:?}, manual: {manual}");
        assert_eq!(ledger.windows[0].end, end, "{case}");
        assert_eq!(ledger.windows[1].end, Open, "{case}");
        assert_eq!(ledger.windows[0].tool_calls, 1, "{case}");
        assert_eq!(ledger.tool_calls, 2, "{case}");
    }
}

/// After a reset, every call of a memory tool (notes, history, the
/// budget's and the reset's) counts towards getting back to work, up to
/// the first call of another tool; later memory calls do not.
#[test]
fn getting_back_to_work_counts_every_memory_tool_before_the_first_other() {
    let tools = [
        "notes_list",
        "mcp__plugin_notesoup_notesoup__history_search",
        "get_context_remaining",
        "wipe_memory",
        "read",
        "notes_read",
    ];
    let mut events = vec![context(10, "boot")];
    for (index, tool) in tools.iter().enumerate() {
        let seq = 11 + 2 * u32::try_from(index).expect("few");
        let call_id = format!("c{seq}");
        events.push(call(seq, tool, &call_id, "{}"));
        events.push(tool_result(seq + 1, &call_id, "done"));
    }
    let history = history(vec![
        window("w1", vec![user(1, "start")]),
        window("w2", events),
    ]);
    let ledger = session_ledger(
        &history,
        &[
            signals(&[], None),
            signals(&[(16, 3_000), (19, 4_000)], None),
        ],
    );
    let cost = ledger.windows[1].reorientation.expect("after a reset");
    assert_eq!(cost.tool_calls, 4);
    assert!(cost.reached_work);
    // The fill at the first other tool's call.
    assert_eq!(cost.tokens, Some(4_000));
    assert_eq!(ledger.windows[1].tool_calls, 6);
    assert_eq!(ledger.reorientation_calls, 4);
}
