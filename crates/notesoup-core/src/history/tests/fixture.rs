//! Small builders for decoded transcripts.

use crate::history::{
    History, ItemKind, MessageRole, NestedCalls, ToolStatus, Transcript, TranscriptItem,
    TranscriptToolCall, TranscriptToolResult, TranscriptWindow,
};
use crate::tools::ToolOutput;

/// A window with its items.
pub(crate) fn window(id: &str, items: Vec<TranscriptItem>) -> TranscriptWindow {
    TranscriptWindow {
        id: id.to_owned(),
        created_at: Some(format!("2026-09-15T10:00:{:02}+00:00", id.len())),
        items,
    }
}

fn at(seq: u32, kind: ItemKind) -> TranscriptItem {
    TranscriptItem {
        seq,
        created_at: Some(format!("2026-09-15T10:{:02}:00+00:00", seq % 60)),
        kind,
    }
}

pub(crate) fn message(seq: u32, role: MessageRole, text: &str) -> TranscriptItem {
    at(
        seq,
        ItemKind::Message {
            role,
            text: text.to_owned(),
        },
    )
}

pub(crate) fn user(seq: u32, text: &str) -> TranscriptItem {
    message(seq, MessageRole::User, text)
}

pub(crate) fn assistant(seq: u32, text: &str) -> TranscriptItem {
    message(seq, MessageRole::Assistant, text)
}

pub(crate) fn context(seq: u32, text: &str) -> TranscriptItem {
    message(seq, MessageRole::Context, text)
}

pub(crate) fn call(seq: u32, name: &str, id: &str, arguments: &str) -> TranscriptItem {
    at(
        seq,
        ItemKind::from(TranscriptToolCall {
            name: name.to_owned(),
            call_id: id.to_owned(),
            arguments: Some(arguments.to_owned()),
        }),
    )
}

pub(crate) fn tool_result(seq: u32, id: &str, output: &str) -> TranscriptItem {
    result_with(seq, id, output, |_| {})
}

pub(crate) fn result_with(
    seq: u32,
    id: &str,
    output: &str,
    adjust: impl FnOnce(&mut TranscriptToolResult),
) -> TranscriptItem {
    let mut result = TranscriptToolResult {
        call_id: Some(id.to_owned()),
        name: None,
        arguments: None,
        status: ToolStatus::Ok,
        output: output.to_owned(),
        output_truncated: false,
        full_output_path: None,
        nested_calls: None::<NestedCalls>,
    };
    adjust(&mut result);
    at(seq, ItemKind::from(result))
}

/// A transcript over these windows, `highest_seq` the last item's seq.
pub(crate) fn transcript(windows: Vec<TranscriptWindow>) -> Transcript {
    let highest_seq = windows
        .iter()
        .flat_map(|window| window.items.iter().map(|item| item.seq))
        .max()
        .unwrap_or(0);
    Transcript {
        session_id: "session-1".to_owned(),
        highest_seq,
        off_branch: Vec::new(),
        windows,
    }
}

pub(crate) fn history(windows: Vec<TranscriptWindow>) -> History {
    History::new(transcript(windows)).unwrap()
}

/// A short session: two windows, a conversation with tool runs in between.
pub(crate) fn session() -> History {
    history(vec![
        window(
            "root",
            vec![
                context(1, "boot: notes and protocol"),
                user(2, "Please fix the failing test in parser.rs"),
                assistant(3, ""),
                call(4, "read", "c1", r#"{"path":"src/parser.rs"}"#),
                call(5, "bash", "c2", r#"{"command":"cargo test"}"#),
                tool_result(6, "c1", "fn parse() {}"),
                tool_result(7, "c2", "test result: FAILED. 1 failed"),
                assistant(8, "The parser drops the last token; fixing it."),
                call(9, "edit", "c3", r#"{"path":"src/parser.rs"}"#),
                tool_result(10, "c3", "applied"),
                assistant(11, "Fixed: the loop now includes the final token."),
            ],
        ),
        window(
            "pcw:2",
            vec![
                context(12, "boot: fresh window"),
                user(13, "Now run the whole suite"),
                assistant(14, ""),
                call(15, "bash", "c4", r#"{"command":"cargo test --workspace"}"#),
                tool_result(16, "c4", "test result: ok. 212 passed"),
                assistant(17, "All 212 tests pass."),
            ],
        ),
    ])
}

/// Asserts a success and returns its text.
pub(crate) fn ok_text(output: &ToolOutput) -> &str {
    assert!(!output.is_error, "unexpected refusal: {}", output.text);
    &output.text
}

/// Asserts a refusal with `code` and returns its JSON.
pub(crate) fn refusal(output: &ToolOutput, code: &str) -> serde_json::Value {
    assert!(output.is_error, "expected {code}, got: {}", output.text);
    let json = output.json.to_value();
    assert_eq!(json["code"], code, "{}", output.text);
    json
}

/// Both surfaces fit the budget.
pub(crate) fn assert_fits(output: &ToolOutput) {
    let budget = ToolOutput::MAX_BYTES;
    assert!(
        output.text.len() <= budget,
        "text {} bytes",
        output.text.len()
    );
    assert!(
        output.json.len() <= budget,
        "json {} bytes",
        output.json.len()
    );
}
