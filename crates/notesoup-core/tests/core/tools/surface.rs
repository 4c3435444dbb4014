//! The one tool surface: the table every host registers and the entry point
//! every call goes through, over a real store in a temp directory.

use std::cell::Cell;

use notesoup_core::history::History;
use notesoup_core::notes::{NoteStore, NotesIdentity};
use notesoup_core::tools::{
    BudgetHost, Refusal, RefusalCode, ResetRequest, ToolFamily, ToolHost, ToolOutput, call_tool,
    schemas, tool_table, tools_for,
};
use serde_json::{Value, json};

use crate::history::fixture;

/// A host over a temp notes root and the fixture session, counting what the
/// tools asked of it.
struct Host {
    _dir: tempfile::TempDir,
    identity: NotesIdentity,
    opened_store: Cell<u32>,
    decoded_history: Cell<u32>,
    budget: Option<Budget>,
}

struct Budget {
    remaining: Option<u64>,
    reset: ResetRequest,
    asked: u32,
}

impl BudgetHost for Budget {
    fn remaining_tokens(&mut self) -> Option<u64> {
        self.remaining
    }

    fn request_reset(&mut self) -> ResetRequest {
        self.asked += 1;
        self.reset
    }
}

impl ToolHost for Host {
    fn notes(&mut self) -> Result<NoteStore, Refusal> {
        self.opened_store.set(self.opened_store.get() + 1);
        Ok(NoteStore::new(self.identity.clone()))
    }

    fn history(&mut self) -> Result<History, Refusal> {
        self.decoded_history.set(self.decoded_history.get() + 1);
        Ok(fixture::session())
    }

    fn budget(&mut self) -> Option<&mut dyn BudgetHost> {
        self.budget
            .as_mut()
            .map(|budget| budget as &mut dyn BudgetHost)
    }
}

fn host(budget: Option<Budget>) -> Host {
    let dir = tempfile::tempdir().unwrap();
    let identity = NotesIdentity::new(
        dir.path().join("notes"),
        "s1",
        "proj-12345678",
        "alice",
        "gpt",
    )
    .unwrap();
    Host {
        _dir: dir,
        identity,
        opened_store: Cell::new(0),
        decoded_history: Cell::new(0),
        budget,
    }
}

fn code(output: &ToolOutput) -> Value {
    serde_json::from_str::<Value>(&output.json).unwrap()["code"].clone()
}

#[test]
fn the_table_lists_every_tool_once_in_host_order() {
    let table = tool_table();
    let rows: Vec<(&str, bool, bool, ToolFamily)> = table
        .iter()
        .map(|tool| (tool.name, tool.read_only, tool.sequential, tool.family))
        .collect();
    use ToolFamily::{Budget, History, Notes};
    assert_eq!(
        rows,
        [
            ("notes_write", false, true, Notes),
            ("notes_update", false, true, Notes),
            ("notes_read", true, false, Notes),
            ("notes_list", true, false, Notes),
            ("notes_search", true, false, Notes),
            ("history_windows", true, false, History),
            ("history_list", true, false, History),
            ("history_search", true, false, History),
            ("history_read", true, false, History),
            ("get_context_remaining", true, false, Budget),
            ("wipe_memory", false, true, Budget),
        ]
    );
    for (tool, schema) in table.iter().zip(schemas::all()) {
        assert_eq!(tool.name, schema.name);
        assert_eq!(tool.description, schema.description);
        assert_eq!(tool.input_schema, schema.input_schema);
        let output = tool.output_schema.as_ref().expect("shared tools have one");
        assert_eq!(output["type"], "object", "{}", tool.name);
    }
    for tool in &table[9..] {
        assert_eq!(tool.output_schema, None, "{}", tool.name);
        assert_eq!(tool.input_schema["additionalProperties"], false);
    }
    let without: Vec<&str> = tools_for(false).map(|tool| tool.name).collect();
    assert_eq!(without.len(), 9);
    assert!(!without.contains(&"wipe_memory"));
    assert_eq!(tools_for(true).count(), 11);
}

#[test]
fn calls_are_routed_by_name_and_ask_only_for_what_they_use() {
    let mut host = host(None);
    let written = call_tool(
        &mut host,
        "notes_write",
        json!({"address": "@project/plan", "content": "one\ntwo\n"}),
    );
    assert!(!written.is_error, "{}", written.text);
    assert!(!written.terminate);
    assert_eq!(host.opened_store.get(), 1);
    assert_eq!(
        host.decoded_history.get(),
        0,
        "a notes call decodes no history"
    );

    let updated = call_tool(
        &mut host,
        "notes_update",
        json!({"address": "@project/plan", "edits": [{"oldText": "two", "newText": "TWO"}]}),
    );
    assert!(!updated.is_error, "{}", updated.text);
    let receipt: Value = serde_json::from_str(&updated.json).unwrap();
    assert_eq!(
        receipt["diff"], " 1 one\n-2 two\n+2 TWO",
        "core renders the line diff"
    );

    let windows = call_tool(&mut host, "history_windows", json!({}));
    assert!(!windows.is_error, "{}", windows.text);
    assert_eq!(host.decoded_history.get(), 1);
    assert_eq!(host.opened_store.get(), 2, "a history call opens no store");
}

#[test]
fn bad_calls_are_refused_before_any_work() {
    let mut host = host(None);
    let unknown = call_tool(&mut host, "notes_delete", json!({}));
    assert!(unknown.is_error);
    assert_eq!(code(&unknown), "unknown_tool");
    assert_eq!(
        unknown.text,
        "error: unknown_tool: unknown tool \"notes_delete\""
    );

    let bad = call_tool(&mut host, "notes_write", json!({"address": 7}));
    assert_eq!(code(&bad), "invalid_arguments");
    let bad = call_tool(&mut host, "history_read", json!({"seq": "x"}));
    assert_eq!(code(&bad), "invalid_arguments");
    let bad = call_tool(&mut host, "get_context_remaining", json!({"x": 1}));
    assert_eq!(code(&bad), "invalid_arguments");
    assert_eq!(host.opened_store.get(), 0, "bad arguments open nothing");
    assert_eq!(host.decoded_history.get(), 0);

    let long = "y".repeat(100_000);
    let clipped = call_tool(&mut host, &long, json!({}));
    assert_eq!(
        clipped.text,
        format!("error: unknown_tool: unknown tool \"{}…\"", "y".repeat(64))
    );

    let no_budget = call_tool(&mut host, "wipe_memory", json!({}));
    assert_eq!(code(&no_budget), "unknown_tool");
}

#[test]
fn a_host_refusal_is_the_tools_answer() {
    struct Broken;
    impl ToolHost for Broken {
        fn notes(&mut self) -> Result<NoteStore, Refusal> {
            Err(Refusal::new(RefusalCode::IoError, "notes operation failed"))
        }
        fn history(&mut self) -> Result<History, Refusal> {
            Err(Refusal::new(RefusalCode::InternalError, "no transcript"))
        }
    }
    let output = call_tool(&mut Broken, "notes_list", json!({}));
    assert_eq!(code(&output), "io_error");
    let output = call_tool(&mut Broken, "history_list", json!({}));
    assert_eq!(code(&output), "internal_error");
}

#[test]
fn the_budget_tools_answer_in_plain_json() {
    let budget = |remaining, reset| Budget {
        remaining,
        reset,
        asked: 0,
    };
    let mut known = host(Some(budget(Some(1234), ResetRequest::Requested)));
    let remaining = call_tool(&mut known, "get_context_remaining", Value::Null);
    assert_eq!(remaining.text, r#"{"remaining_tokens":1234}"#);
    assert_eq!((remaining.is_error, remaining.terminate), (false, false));

    let wiped = call_tool(&mut known, "wipe_memory", json!({}));
    assert_eq!(wiped.text, r#"{"status":"rollover_requested"}"#);
    assert!(wiped.terminate, "a wipe ends the tool batch");
    assert_eq!(known.budget.as_ref().unwrap().asked, 1);

    let mut unknown = host(Some(budget(None, ResetRequest::AlreadyPending)));
    let remaining = call_tool(&mut unknown, "get_context_remaining", json!({}));
    assert_eq!(remaining.text, r#"{"remaining_tokens":null}"#);
    let again = call_tool(&mut unknown, "wipe_memory", json!({}));
    assert_eq!(again.text, r#"{"status":"rollover_already_pending"}"#);
    assert!(again.terminate);

    let mut off = host(Some(budget(Some(0), ResetRequest::Off)));
    let refused = call_tool(&mut off, "wipe_memory", json!({}));
    assert_eq!(
        refused.text,
        r#"{"error":"notesoup is off (/notesoup on to enable)"}"#
    );
    assert_eq!((refused.is_error, refused.terminate), (false, false));
}
