//! The shared pieces: refusals, the flat wire shape, read windows, fill.

use notesoup_core::tools::{
    ERROR_DETAILS_MAX_BYTES, LimitedBy, Refusal, RefusalCode, TOOL_OUTPUT_MAX_BYTES, TextWindow,
    ToolData, ToolOutput, fill_while_fits, prefix_fit, read_window,
};
use proptest::prelude::*;
use serde::Serialize;
use serde_json::json;

/// A minimal tool result: a header and a window.
#[derive(Debug, Serialize)]
struct Windowed {
    header: String,
    text: String,
    offset_chars: u32,
    total_chars: u32,
    next_offset_chars: Option<u32>,
    limited_by: Option<LimitedBy>,
}

impl Windowed {
    fn new(header: &str, window: TextWindow) -> Self {
        Self {
            header: header.to_owned(),
            text: window.text,
            offset_chars: window.offset_chars,
            total_chars: window.total_chars,
            next_offset_chars: window.next_offset_chars,
            limited_by: window.limited_by,
        }
    }
}

impl ToolData for Windowed {
    fn render(&self) -> String {
        let mut text = format!("{}\n\n", self.header);
        notesoup_core::tools::render_window(
            &mut text,
            &self.text,
            self.offset_chars,
            self.total_chars,
            self.next_offset_chars,
            self.limited_by,
        );
        text
    }
}

fn read(source: &str, offset: Option<i64>, limit: Option<u32>) -> ToolOutput {
    ToolOutput::from_outcome(read_window(source, offset, limit, |window| {
        Windowed::new("h", window)
    }))
}

#[test]
fn a_success_is_the_data_itself_and_a_refusal_is_flat() {
    let ok = read("abc", None, None);
    assert!(!ok.is_error);
    assert_eq!(ok.text, "h\n\nabc");
    assert_eq!(
        ok.json.to_value(),
        json!({"header": "h", "text": "abc", "offset_chars": 0, "total_chars": 3, "next_offset_chars": null, "limited_by": null})
    );
    let refused = ToolOutput::refusal(&Refusal::new(RefusalCode::NotFound, "note not found"));
    assert!(refused.is_error);
    assert_eq!(refused.text, "error: not_found: note not found");
    assert_eq!(
        refused.json,
        r#"{"error":"note not found","code":"not_found"}"#
    );
    let detailed = ToolOutput::refusal(
        &Refusal::new(RefusalCode::AmbiguousEdit, "twice")
            .with_details(json!({"line_numbers": [1, 4]})),
    );
    assert_eq!(
        detailed.text,
        r#"error: ambiguous_edit: twice {"line_numbers":[1,4]}"#
    );
    assert_eq!(
        detailed.json,
        r#"{"error":"twice","code":"ambiguous_edit","details":{"line_numbers":[1,4]}}"#
    );
}

#[test]
fn runaway_messages_are_clipped() {
    let message = format!("{}😀tail", "m".repeat(1999));
    let refusal = Refusal::new(RefusalCode::InvalidAddress, message);
    let expected = format!("{}😀…[truncated 4 chars]", "m".repeat(1999));
    assert_eq!(refusal.message(), expected);
    let exact = "x".repeat(2000);
    assert_eq!(
        Refusal::new(RefusalCode::InvalidAddress, exact.clone()).message(),
        exact
    );
}

#[test]
fn oversized_details_become_a_marker() {
    let big = json!({"blob": "é".repeat(3000)});
    let bytes = serde_json::to_string(&big).unwrap().len();
    assert!(bytes > ERROR_DETAILS_MAX_BYTES);
    let refusal = Refusal::new(RefusalCode::UnknownWindowId, "m").with_details(big);
    assert_eq!(
        serde_json::Value::Object(refusal.details().unwrap().clone()),
        json!({"truncated": true, "details_bytes": bytes})
    );
    let small = Refusal::new(RefusalCode::UnknownWindowId, "m").with_details(json!({"a": 1}));
    assert_eq!(small.details().unwrap()["a"], 1);
}

#[test]
fn every_refusal_fits_whatever_its_input() {
    let refusal = Refusal::new(RefusalCode::IoError, "\u{1}".repeat(1_000_000))
        .with_details(json!({"x": "\u{1}".repeat(1_000_000)}));
    let output = ToolOutput::refusal(&refusal);
    assert!(
        output.text.len() <= TOOL_OUTPUT_MAX_BYTES && output.json.len() <= TOOL_OUTPUT_MAX_BYTES
    );
}

#[test]
fn a_success_that_cannot_fit_becomes_output_too_large() {
    #[derive(Serialize)]
    struct Huge(String);
    impl ToolData for Huge {
        fn render(&self) -> String {
            self.0.clone()
        }
    }
    let output = ToolOutput::success(&Huge("x".repeat(40_000)));
    assert!(output.is_error);
    assert_eq!(output.json.to_value()["code"], "output_too_large");
}

#[test]
fn windows_count_code_points_and_print_the_spec_footers() {
    let text = "aé😀bcdef";
    let limited = read(text, Some(1), Some(3));
    assert_eq!(
        limited.text,
        "h\n\né😀b\n\n[4 more characters. Use offset_chars=4 to continue.]"
    );
    let tail = read(text, Some(-2), None);
    assert_eq!(tail.text, "h\n\nef");
    assert_eq!(tail.json.to_value()["offset_chars"], 6);
    assert_eq!(read(text, Some(-100), Some(1)).json.to_value()["text"], "a");
    let end = read(text, Some(8), None);
    assert_eq!(end.text, "h\n\n");
    let past = read(text, Some(9), None);
    assert_eq!(past.json.to_value()["code"], "invalid_offset");
    assert_eq!(
        past.text,
        "error: invalid_offset: offset_chars 9 is past the end: the text has 8 chars; the largest legal offset is 8 (an empty read at the end) {\"offset_chars\":9,\"total_chars\":8}"
    );
    assert_eq!(
        read(text, None, Some(0)).json.to_value()["code"],
        "invalid_arguments"
    );
    assert_eq!(
        read(text, None, Some(50_001)).json.to_value()["code"],
        "invalid_arguments"
    );
}

#[test]
fn the_byte_budget_stops_a_window() {
    let text = "é".repeat(60_000);
    let output = read(&text, Some(10), Some(50_000));
    let json = output.json.to_value();
    assert_eq!(json["limited_by"], "bytes");
    let next = json["next_offset_chars"].as_u64().unwrap();
    assert!(output.text.ends_with(&format!(
        "\n\n[Showing chars [10, {next}) of 60000 (32KB limit). Use offset_chars={next} to continue.]"
    )));
    assert!(output.text.len() <= TOOL_OUTPUT_MAX_BYTES);
    // One more character would not have fit.
    let bigger = Windowed::new(
        "h",
        TextWindow {
            text: text.chars().skip(10).take(next as usize - 10 + 1).collect(),
            offset_chars: 10,
            total_chars: 60_000,
            next_offset_chars: Some(next as u32 + 1),
            limited_by: Some(LimitedBy::Bytes),
        },
    );
    assert!(!notesoup_core::tools::fits(&bigger));
}

#[test]
fn no_progress_is_output_too_large() {
    let header = "h".repeat(TOOL_OUTPUT_MAX_BYTES);
    let output = ToolOutput::from_outcome(read_window("abc", None, None, |window| {
        Windowed::new(&header, window)
    }));
    assert_eq!(output.json.to_value()["code"], "output_too_large");
    assert_eq!(
        output.json.to_value()["details"],
        json!({"total_chars": 3, "offset_chars": 0, "budget_bytes": 32768})
    );
}

#[test]
fn fill_keeps_rows_until_the_first_misfit() {
    let filled = fill_while_fits(["aa", "bbb", "c", "d"], |rows| rows.concat().len() <= 5);
    assert_eq!(filled.kept, ["aa", "bbb"]);
    assert_eq!(filled.rejected, Some("c"));
}

#[test]
fn prefix_fit_finds_the_longest_fitting_prefix() {
    let text = "ab😀cd";
    assert_eq!(prefix_fit(text, |prefix| prefix.len() <= 5), "ab");
    assert_eq!(prefix_fit(text, |prefix| prefix.len() <= 6), "ab😀");
    assert_eq!(prefix_fit(text, |_| true), text);
    assert_eq!(prefix_fit(text, |_| false), "");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn successive_windows_reconstruct_the_source(
        source in "(?s)[a-z é😀\n\u{1}\"\\\\日]{0,400}",
        start in -450i64..450,
        limits in prop::collection::vec(1u32..60, 1..50),
        header_len in 0usize..32_700,
    ) {
        let header = "h".repeat(header_len);
        let total = source.chars().count() as i64;
        let window = |offset: i64, limit: u32| {
            ToolOutput::from_outcome(read_window(&source, Some(offset), Some(limit), |window| Windowed::new(&header, window)))
        };
        let first = window(start, limits[0]);
        prop_assert!(first.text.len() <= TOOL_OUTPUT_MAX_BYTES && first.json.len() <= TOOL_OUTPUT_MAX_BYTES);
        if start > total {
            let json = first.json.to_value();
            prop_assert_eq!(json["code"].as_str(), Some("invalid_offset"));
            return Ok(());
        }
        let resolved = if start < 0 { (total + start).max(0) } else { start } as usize;
        let mut rebuilt = String::new();
        let mut output = first;
        for limit in limits.iter().cycle().skip(1).take(2000) {
            let json = output.json.to_value();
            if output.is_error {
                // Only a header that leaves no room for the next code point
                // may refuse, and then it says so.
                prop_assert_eq!(json["code"].as_str(), Some("output_too_large"));
                prop_assert!(header_len > 32_000);
                return Ok(());
            }
            rebuilt.push_str(json["text"].as_str().unwrap());
            match json["next_offset_chars"].as_u64() {
                Some(next) => output = window(next as i64, *limit),
                None => break,
            }
        }
        let expected: String = source.chars().skip(resolved).collect();
        prop_assert_eq!(rebuilt, expected);
    }
}
