//! The decoded model: validation, pairing, documents, windows.

use crate::history::{
    History, NestedArguments, NestedCall, NestedCalls, Role, SeqSpan, ToolStatus, TranscriptError,
};
use insta::assert_snapshot;

use super::fixture::*;

#[test]
fn a_call_pairs_with_its_result_at_the_call_seq() {
    let history = session();
    let seqs: Vec<u32> = history.events().iter().map(|event| event.seq).collect();
    assert_eq!(seqs, [1, 2, 3, 4, 5, 8, 9, 11, 12, 13, 14, 15, 17]);
    let read = history.event(4).unwrap();
    assert_eq!(read.role, Role::Tool);
    assert_eq!(
        read.document,
        "read {\"path\":\"src/parser.rs\"}\n--- output ---\nfn parse() {}"
    );
    assert_eq!(read.tool.as_ref().unwrap().status, ToolStatus::Ok);
    assert_eq!(history.paired_call(6), Some(4));
    assert_eq!(history.paired_call(7), Some(5));
    assert_eq!(history.paired_call(4), None);
}

#[test]
fn pairing_takes_the_first_unconsumed_later_result() {
    let history = history(vec![window(
        "root",
        vec![
            tool_result(1, "x", "early result, before any call"),
            call(2, "bash", "x", r#"{"command":"a"}"#),
            call(3, "bash", "x", r#"{"command":"b"}"#),
            tool_result(4, "x", "first"),
            tool_result(5, "x", "second"),
            tool_result(6, "x", "third"),
            call(7, "read", "y", "{}"),
        ],
    )]);
    let outputs: Vec<(u32, &str, ToolStatus)> = history
        .events()
        .iter()
        .map(|event| {
            (
                event.seq,
                event.document.as_str(),
                event.tool.as_ref().unwrap().status,
            )
        })
        .collect();
    assert_eq!(
        outputs,
        [
            (
                1,
                "unknown (arguments not recorded)\n--- output ---\nearly result, before any call",
                ToolStatus::Ok
            ),
            (
                2,
                "bash {\"command\":\"a\"}\n--- output ---\nfirst",
                ToolStatus::Ok
            ),
            (
                3,
                "bash {\"command\":\"b\"}\n--- output ---\nsecond",
                ToolStatus::Ok
            ),
            (
                6,
                "unknown (arguments not recorded)\n--- output ---\nthird",
                ToolStatus::Ok
            ),
            (7, "read {}", ToolStatus::Unfinished),
        ]
    );
    assert_eq!(history.paired_call(4), Some(2));
    assert_eq!(history.paired_call(5), Some(3));
    assert_eq!(history.paired_call(1), None);
}

#[test]
fn result_status_truncation_and_standalone_runs() {
    let history = history(vec![window(
        "root",
        vec![
            call(1, "bash", "a", r#"{"command":"false"}"#),
            result_with(2, "a", "exit 1", |result| {
                result.status = ToolStatus::Error;
                result.output_truncated = true;
                result.full_output_path = Some("/tmp/out.txt".to_owned());
            }),
            result_with(3, "", "ls output", |result| {
                result.call_id = None;
                result.name = Some("bash".to_owned());
                result.arguments = Some(r#"{"command":"ls"}"#.to_owned());
                result.status = ToolStatus::Unfinished;
            }),
        ],
    )]);
    let failed = history.event(1).unwrap().tool.clone().unwrap();
    assert_eq!(failed.status, ToolStatus::Error);
    assert!(failed.output_truncated);
    assert_eq!(failed.full_output_path.as_deref(), Some("/tmp/out.txt"));
    let run = history.event(3).unwrap();
    assert_eq!(
        run.document,
        "bash {\"command\":\"ls\"}\n--- output ---\nls output"
    );
    assert_eq!(run.tool.as_ref().unwrap().status, ToolStatus::Unfinished);
}

#[test]
fn nested_calls_render_into_the_document() {
    let nested = NestedCalls {
        complete: false,
        calls: vec![
            NestedCall {
                name: "read".to_owned(),
                status: "ok".to_owned(),
                duration_ms: Some(12),
                error: None,
                arguments: NestedArguments::Recorded(r#"{"path":"a.rs"}"#.to_owned()),
            },
            NestedCall {
                name: "bash".to_owned(),
                status: "error".to_owned(),
                duration_ms: None,
                error: Some("exit 2".to_owned()),
                arguments: NestedArguments::Omitted { bytes: 40_000 },
            },
            NestedCall {
                name: "grep".to_owned(),
                status: "ok".to_owned(),
                duration_ms: Some(0),
                error: None,
                arguments: NestedArguments::NotRecorded,
            },
        ],
    };
    let history = history(vec![window(
        "root",
        vec![
            call(1, "subagent", "s", r#"{"task":"look"}"#),
            result_with(2, "s", "", |result| result.nested_calls = Some(nested)),
        ],
    )]);
    let event = history.event(1).unwrap();
    let summary = event.tool.as_ref().unwrap().nested_calls.unwrap();
    assert_eq!((summary.call_count, summary.complete), (3, false));
    assert_snapshot!(event.document);
}

#[test]
fn windows_report_their_event_ranges() {
    let history = session();
    let windows: Vec<(&str, Option<u32>, Option<u32>, u32)> = history
        .windows()
        .iter()
        .map(|window| {
            (
                window.id.as_str(),
                window.first_seq,
                window.last_seq,
                window.event_count,
            )
        })
        .collect();
    assert_eq!(
        windows,
        [
            ("root", Some(1), Some(11), 8),
            ("pcw:2", Some(12), Some(17), 5)
        ]
    );
}

#[test]
fn branch_facts_answer_lookups() {
    let mut transcript = transcript(vec![window("root", vec![user(1, "a"), user(5, "b")])]);
    transcript.highest_seq = 9;
    transcript.off_branch = vec![
        SeqSpan { first: 3, last: 4 },
        SeqSpan { first: 2, last: 2 },
        // One span inside another: the outer one still holds 8.
        SeqSpan { first: 6, last: 9 },
        SeqSpan { first: 7, last: 7 },
    ];
    let history = History::new(transcript).unwrap();
    let off: Vec<u32> = (1..=9).filter(|&seq| history.is_off_branch(seq)).collect();
    assert_eq!(off, [2, 3, 4, 6, 7, 8, 9]);
    assert_eq!(history.highest_seq(), 9);
}

#[test]
fn inconsistent_transcripts_are_rejected() {
    fn check(edit: impl FnOnce(&mut crate::history::Transcript), expect: TranscriptError) {
        let mut transcript = transcript(vec![
            window("a", vec![user(1, "x"), user(2, "y")]),
            window("b", vec![user(3, "z")]),
        ]);
        edit(&mut transcript);
        assert_eq!(History::new(transcript), Err(expect));
    }
    check(
        |t| t.windows[1].items[0].seq = 2,
        TranscriptError::SeqOutOfOrder {
            seq: 2,
            previous: 2,
        },
    );
    check(
        |t| t.highest_seq = 2,
        TranscriptError::SeqOutOfRange {
            seq: 3,
            highest_seq: 2,
        },
    );
    check(
        |t| t.windows[0].items[0].seq = 0,
        TranscriptError::SeqOutOfRange {
            seq: 0,
            highest_seq: 3,
        },
    );
    check(
        |t| t.off_branch.push(SeqSpan { first: 2, last: 2 }),
        TranscriptError::SeqOffBranch { seq: 2 },
    );
    check(
        |t| t.off_branch.push(SeqSpan { first: 3, last: 4 }),
        TranscriptError::BadSpan { first: 3, last: 4 },
    );
    check(
        |t| t.windows[1].id = "a".to_owned(),
        TranscriptError::DuplicateWindowId { id: "a".to_owned() },
    );
}
