//! The tool list hosts register: names, descriptions, parameter schemas.

use notesoup_core::tools::schemas::{ADDRESSES_SENTENCE, all};
use serde_json::Value;

#[test]
fn every_tool_is_listed_once_in_order() {
    let names: Vec<&str> = all().iter().map(|tool| tool.name).collect();
    assert_eq!(
        names,
        [
            "notes_write",
            "notes_update",
            "notes_read",
            "notes_list",
            "notes_search",
            "history_windows",
            "history_list",
            "history_search",
            "history_read",
        ]
    );
    let sequential: Vec<&str> = all()
        .iter()
        .filter(|tool| tool.sequential)
        .map(|tool| tool.name)
        .collect();
    assert_eq!(sequential, ["notes_write", "notes_update"]);
}

#[test]
fn notes_descriptions_end_with_the_addresses_sentence() {
    assert_eq!(
        ADDRESSES_SENTENCE,
        "Addresses: `<path>` with no @ for this session; @project/, @human/, @self/, @model/ for durable homes (see /skill:memory). Never pass them to filesystem tools."
    );
    for tool in all() {
        assert_eq!(
            tool.description.ends_with(ADDRESSES_SENTENCE),
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

#[test]
fn tools_are_callable_by_name() {
    use notesoup_core::tools::{HISTORY_TOOLS, NOTES_TOOLS, call_history_tool};
    let listed: Vec<&str> = all().iter().map(|tool| tool.name).collect();
    let named: Vec<&str> = NOTES_TOOLS
        .iter()
        .chain(HISTORY_TOOLS.iter())
        .copied()
        .collect();
    assert_eq!(listed, named);
    let history =
        notesoup_core::history::History::new(notesoup_core::history::Transcript::default())
            .unwrap();
    for name in HISTORY_TOOLS {
        let output = call_history_tool(&history, name, serde_json::json!({"bogus": 1})).unwrap();
        assert_eq!(
            output.json.to_value()["code"],
            "invalid_arguments",
            "{name}"
        );
    }
    let windows = call_history_tool(&history, "history_windows", Value::Null).unwrap();
    assert_eq!(windows.text, "session ");
    assert!(call_history_tool(&history, "notes_list", serde_json::json!({})).is_none());
}
