//! The one tool surface: the table every host registers and the entry point
//! every call goes through, over a real store in a temp directory.

use std::cell::Cell;

use notesoup_core::history::History;
use notesoup_core::notes::{NoteStore, NotesIdentity};
use notesoup_core::tools::call_offered_tool;
use notesoup_core::tools::{
    BudgetHost, HostWording, Refusal, RefusalCode, ResetRequest, Tool, ToolContext, ToolFamily,
    ToolOutput, call_tool, tool_definitions, tool_table, tools_for,
};
use notesoup_core::wire::ToolBindings;
use serde_json::{Value, json};

use super::fixture;

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

impl ToolContext for Host {
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
    assert_eq!(table.len(), tool_definitions().count());
    for (tool, definition) in table.iter().zip(tool_definitions()) {
        assert_eq!(tool.name, definition.name);
        assert!(std::ptr::eq(Tool::find(tool.name).unwrap(), definition));
        assert_eq!(tool.description, definition.describe(&HostWording::DEFAULT));
        assert_eq!(tool.input_schema["type"], "object", "{}", tool.name);
    }
    for tool in &table[..9] {
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
    impl ToolContext for Broken {
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

#[test]
fn a_host_without_a_budget_is_offered_only_its_listed_tools() {
    let mut without = host(None);
    let listed = call_offered_tool(&mut without, "notes_list", json!({}), false)
        .expect("a listed tool runs");
    assert!(!listed.is_error, "{}", listed.text);
    for unlisted in ["wipe_memory", "get_context_remaining", "notes_delete"] {
        assert!(
            call_offered_tool(&mut without, unlisted, json!({}), false).is_none(),
            "{unlisted}"
        );
    }
    assert_eq!(
        without.opened_store.get(),
        1,
        "an unlisted name opens nothing"
    );
    let mut with_budget = host(Some(Budget {
        remaining: Some(7),
        reset: ResetRequest::Requested,
        asked: 0,
    }));
    let remaining = call_offered_tool(&mut with_budget, "get_context_remaining", json!({}), true)
        .expect("listed with a budget");
    assert_eq!(remaining.text, r#"{"remaining_tokens":7}"#);
    assert!(call_offered_tool(&mut with_budget, "notes_delete", json!({}), true).is_none());
}

#[test]
fn the_boot_bindings_are_the_tools_own_names() {
    assert_eq!(
        ToolBindings::plain(),
        ToolBindings {
            notes: "notes_*".into(),
            notes_list: "notes_list".into(),
            history: "history_*".into(),
            history_windows: "history_windows".into(),
            history_list: "history_list".into(),
            history_search: "history_search".into(),
            history_read: "history_read".into(),
            remaining: "get_context_remaining".into(),
            wipe: "wipe_memory".into(),
        }
    );
    let prefixed = ToolBindings::named(|name| format!("x__{name}"));
    assert_eq!(prefixed.notes, "x__notes_*");
    assert_eq!(prefixed.history_read, "x__history_read");
    assert_eq!(prefixed.wipe, "x__wipe_memory");
}

#[test]
fn a_host_words_its_descriptions_in_the_slots() {
    let words = HostWording {
        memory_skill: "the memory skill",
    };
    for tool in tool_table() {
        let worded = tool.describe(&words);
        assert!(
            !worded.contains('{') || tool.family == ToolFamily::Budget,
            "{worded}"
        );
        assert_eq!(
            worded.contains("(see the memory skill)"),
            tool.family == ToolFamily::Notes,
            "{}",
            tool.name
        );
        assert_eq!(
            worded.replace("the memory skill", "/skill:memory"),
            tool.description
        );
    }
}
