//! The tool list hosts register: names, descriptions, parameter schemas.

use notesoup_core::history::History;
use notesoup_core::notes::NoteStore;
use notesoup_core::tools::{
    ADDRESSES_SENTENCE, HostWording, ListedTool, Refusal, RefusalCode, ToolContext, ToolFamily,
    call_tool, tools_for,
};
use notesoup_test_support::tool_names::shared_tools;
use serde_json::Value;

/// The shared tools (the notes and history tools), as every host lists them.
fn all() -> Vec<ListedTool> {
    tools_for(false).cloned().collect()
}

#[test]
fn every_tool_is_listed_once_in_order() {
    let names: Vec<&str> = all().iter().map(|tool| tool.name).collect();
    assert_eq!(names, shared_tools());
    let sequential: Vec<&str> = all()
        .iter()
        .filter(|tool| tool.sequential)
        .map(|tool| tool.name)
        .collect();
    assert_eq!(sequential, ["notes_write", "notes_update"]);
}

#[test]
fn notes_descriptions_end_with_the_addresses_sentence() {
    let addresses = ADDRESSES_SENTENCE.replace("{memory_skill}", HostWording::DEFAULT.memory_skill);
    assert_eq!(
        addresses,
        "Addresses: `<path>` with no @ for this session; @project/, @human/, @self/, @model/ for durable homes (see /skill:memory). Never pass them to filesystem tools."
    );
    for tool in all() {
        assert_eq!(
            tool.description.ends_with(&addresses),
            tool.name.starts_with("notes_"),
            "{}",
            tool.name
        );
    }
}

/// Walks every object schema in `schema`.
fn objects(schema: &Value, found: &mut Vec<serde_json::Map<String, Value>>) {
    match schema {
        Value::Object(object) => {
            if object.get("type") == Some(&Value::from("object"))
                && object.contains_key("properties")
            {
                found.push(object.clone());
            }
            object.values().for_each(|value| objects(value, found));
        }
        Value::Array(items) => items.iter().for_each(|value| objects(value, found)),
        _ => {}
    }
}

#[test]
fn schemas_are_closed_self_contained_objects() {
    for tool in all() {
        let schema = &tool.input_schema;
        assert_eq!(schema["type"], "object", "{}", tool.name);
        assert_eq!(schema["additionalProperties"], false, "{}", tool.name);
        let text = schema.to_string();
        for leftover in ["$ref", "$schema", "\"format\"", "\"title\"", "oneOf"] {
            assert!(
                !text.contains(leftover),
                "{} has {leftover}: {text}",
                tool.name
            );
        }
        let mut nested = vec![];
        objects(schema, &mut nested);
        for object in nested {
            assert_eq!(
                object["additionalProperties"], false,
                "{}: {object:?}",
                tool.name
            );
        }
    }
}

#[test]
fn schemas_snapshot() {
    let all: Vec<Value> = all()
        .into_iter()
        .map(|tool| serde_json::json!({"name": tool.name, "description": tool.description, "input_schema": tool.input_schema}))
        .collect();
    insta::assert_snapshot!(serde_json::to_string_pretty(&all).unwrap());
}

/// A host that lends one history and has no notes store.
struct HistoryOnly(History);

impl ToolContext for HistoryOnly {
    fn notes(&mut self) -> Result<NoteStore, Refusal> {
        Err(Refusal::new(RefusalCode::InternalError, "no store here"))
    }

    fn history(&mut self) -> Result<History, Refusal> {
        Ok(self.0.clone())
    }
}

#[test]
fn tools_are_callable_by_name() {
    let history =
        notesoup_core::history::History::new(notesoup_core::history::Transcript::default())
            .unwrap();
    let mut host = HistoryOnly(history);
    let history_tools: Vec<&str> = all()
        .iter()
        .filter(|tool| tool.family == ToolFamily::History)
        .map(|tool| tool.name)
        .collect();
    assert_eq!(history_tools.len(), 4);
    for name in history_tools {
        let output = call_tool(&mut host, name, serde_json::json!({"bogus": 1}));
        assert_eq!(
            output.json.to_value()["code"],
            "invalid_arguments",
            "{name}"
        );
    }
    let windows = call_tool(&mut host, "history_windows", Value::Null);
    assert_eq!(windows.text, "session ");
    assert_eq!(
        call_tool(&mut host, "history_nope", serde_json::json!({}))
            .json
            .to_value()["code"],
        "unknown_tool"
    );
}
