//! `history_read`: address checks, windows, footers.

use crate::history::{History, SeqSpan};
use crate::tools::ToolOutput;
use crate::tools::history::{HistoryReadParams, history_read};
use insta::assert_snapshot;
use serde_json::json;

use super::fixture::*;

fn read(history: &History, seq: u32, offset: Option<i32>, limit: Option<u32>) -> ToolOutput {
    history_read(
        history,
        &HistoryReadParams {
            seq,
            offset_chars: offset,
            limit_chars: limit,
        },
    )
}

/// Seqs 1..=12: items at 1-5 and 9, 6-8 off the branch, 10-12 allocated on
/// the branch with nothing readable, 3 a paired result slot.
fn branched() -> History {
    let mut transcript = transcript(vec![window(
        "root",
        vec![
            user(1, "start"),
            call(2, "bash", "b", r#"{"command":"ls"}"#),
            tool_result(3, "b", "a\nb"),
            assistant(4, "listed"),
            user(5, "thanks"),
            user(9, "after the branch point"),
        ],
    )]);
    transcript.highest_seq = 12;
    transcript.off_branch = vec![SeqSpan { first: 6, last: 8 }];
    History::new(transcript).unwrap()
}

#[test]
fn address_checks_run_in_order() {
    let history = branched();
    let json = refusal(&read(&history, 13, None, None), "unknown_seq");
    assert_eq!(
        json["error"],
        "unknown seq 13: this session's items run 1..12"
    );
    assert_eq!(json["details"], json!({"seq": 13, "highest_seq": 12}));
    refusal(&read(&history, 0, None, None), "unknown_seq");
    let json = refusal(&read(&history, 7, None, None), "not_on_branch");
    assert_eq!(
        json["error"],
        "seq 7 is on another branch and is not readable here"
    );
    let json = refusal(&read(&history, 3, None, None), "not_an_event");
    assert_eq!(
        json["error"],
        "seq 3 is a tool result already shown inside the call at seq 2; read that seq instead"
    );
    assert_eq!(json["details"]["read_seq"], 2);
    let output = read(&history, 11, None, None);
    refusal(&output, "unknown_seq");
    assert_snapshot!(output.text);
}

#[test]
fn a_tool_event_reads_whole() {
    let history = branched();
    let output = read(&history, 2, None, None);
    assert_snapshot!(ok_text(&output));
    assert_eq!(
        output.json.to_value(),
        json!({
            "seq": 2, "window_id": "root", "role": "tool", "created_at": "2026-09-15T10:02:00+00:00",
            "tool": "bash", "tool_status": "ok",
            "text": "bash {\"command\":\"ls\"}\n--- output ---\na\nb",
            "offset_chars": 0, "total_chars": 40, "next_offset_chars": null, "limited_by": null
        })
    );
}

#[test]
fn windows_page_with_limit_footers_and_negative_offsets() {
    let history = history(vec![window("root", vec![user(3, "0123456789é😀xyz")])]);
    let first = read(&history, 3, None, Some(5));
    assert_snapshot!(ok_text(&first));
    assert_eq!(first.json.to_value()["limited_by"], "limit");
    let tail = read(&history, 3, Some(-4), None);
    assert_eq!(tail.json.to_value()["text"], "😀xyz");
    assert_eq!(tail.json.to_value()["offset_chars"], 11);
    let clamped = read(&history, 3, Some(-400), Some(2));
    assert_eq!(clamped.json.to_value()["text"], "01");
    let end = read(&history, 3, Some(15), None);
    assert_eq!(end.json.to_value()["text"], "");
    assert_eq!(end.json.to_value()["next_offset_chars"], json!(null));
    let json = refusal(&read(&history, 3, Some(16), None), "invalid_offset");
    assert_eq!(
        json["details"],
        json!({"offset_chars": 16, "total_chars": 15})
    );
    refusal(&read(&history, 3, None, Some(0)), "invalid_arguments");
    refusal(&read(&history, 3, None, Some(50_001)), "invalid_arguments");
}

#[test]
fn the_byte_budget_stops_a_window_with_its_own_footer() {
    let text = "😀".repeat(20_000);
    let history = history(vec![window("root", vec![user(1, &text)])]);
    let output = read(&history, 1, None, Some(50_000));
    assert_fits(&output);
    let json = output.json.to_value();
    assert_eq!(json["limited_by"], "bytes");
    let next = json["next_offset_chars"].as_u64().unwrap();
    assert!(next > 7000 && next < 8192, "{next}");
    assert!(output.text.ends_with(&format!(
        "\n\n[Showing chars [0, {next}) of 20000 (32KB limit). Use offset_chars={next} to continue.]"
    )));
}

#[test]
fn metadata_too_large_for_any_window_is_refused() {
    let history = history(vec![window(&"w".repeat(40_000), vec![user(1, "hello")])]);
    let output = read(&history, 1, None, None);
    let json = refusal(&output, "output_too_large");
    assert_eq!(
        json["details"],
        json!({"total_chars": 5, "offset_chars": 0, "budget_bytes": 32768})
    );
}
