//! The name, description and parameter JSON Schema of every shared tool, for
//! hosts to register and for `cargo xtask codegen` to write out.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::Value;

use super::history::{
    HistoryListParams, HistoryReadParams, HistorySearchParams, HistoryWindowsParams,
};

/// One tool as a host registers it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSchema {
    /// The tool name the model calls.
    pub name: &'static str,
    /// The model-facing description.
    pub description: String,
    /// JSON Schema of the parameters (an object with `additionalProperties:
    /// false`, subschemas inlined).
    pub input_schema: Value,
}

/// Every shared tool: the history tools.
pub fn all() -> Vec<ToolSchema> {
    history()
}

/// The four history tools, in the order hosts list them.
pub fn history() -> Vec<ToolSchema> {
    vec![
        tool::<HistoryWindowsParams>(
            "history_windows",
            "List this session's context windows, oldest first, each with its seq range and event count. \
             Pass a window_id to history_list or history_search to stay inside one window.",
        ),
        tool::<HistoryListParams>(
            "history_list",
            "Page through this session's history by seq. Without before/after you get the newest page; \
             before and after are strict bounds, and together they select the events strictly between. \
             Rows are in ascending seq order and the footer prints the exact calls for the older and newer pages. \
             Without roles you get the conversation view: user and assistant messages, with each run of tool \
             and context events folded into one row that prints its own expand call. \
             Read a whole event with history_read.",
        ),
        tool::<HistorySearchParams>(
            "history_search",
            "Search this session's history for literal text, case-insensitively; several queries match any of them. \
             Every role is searched by default, tool arguments, output and nested calls included, and nothing is folded. \
             Each hit's preview starts at its earliest match and carries offset_chars: pass the seq and offset_chars \
             to history_read to read from there. Pages like history_list.",
        ),
        tool::<HistoryReadParams>(
            "history_read",
            "Read one event by seq: its text (for a tool event: the call's arguments, output and nested calls) \
             in a window of code points, with its tool facts. Pass next_offset_chars back as offset_chars until it is null. \
             The footer names a history_list call for the surrounding events.",
        ),
    ]
}

fn tool<P: JsonSchema>(name: &'static str, description: &str) -> ToolSchema {
    ToolSchema {
        name,
        description: description.to_owned(),
        input_schema: input_schema::<P>(),
    }
}

/// The parameter schema of `P`, self-contained and tidied for models: no
/// `$schema`, `title` or root description; no integer `format`s (such as
/// `uint32`, which some providers reject); a `oneOf` of string constants
/// becomes an `enum`; doc-comment line breaks inside a paragraph become spaces.
pub fn input_schema<P: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|settings| {
            settings.inline_subschemas = true;
            settings.meta_schema = None;
        })
        .into_generator();
    let mut schema = generator.into_root_schema_for::<P>().to_value();
    if let Value::Object(root) = &mut schema {
        root.remove("title");
        root.remove("description");
    }
    tidy(&mut schema);
    schema
}

fn tidy(schema: &mut Value) {
    match schema {
        Value::Object(object) => {
            let integer = match object.get("type") {
                Some(Value::String(kind)) => kind == "integer",
                Some(Value::Array(kinds)) => kinds.iter().any(|kind| kind == "integer"),
                _ => false,
            };
            if integer {
                object.remove("format");
            }
            if let Some(constants) = object.get("oneOf").and_then(string_constants) {
                object.remove("oneOf");
                object.insert("type".to_owned(), Value::from("string"));
                object.insert("enum".to_owned(), Value::Array(constants));
            }
            if let Some(Value::String(description)) = object.get_mut("description") {
                *description = unwrap_lines(description);
            }
            object.values_mut().for_each(tidy);
        }
        Value::Array(items) => items.iter_mut().for_each(tidy),
        _ => {}
    }
}

/// The constants of a `oneOf` made only of `{"type": "string", "const": …}`.
fn string_constants(one_of: &Value) -> Option<Vec<Value>> {
    one_of
        .as_array()?
        .iter()
        .map(|variant| match variant.get("const") {
            Some(Value::String(constant))
                if variant.get("type") == Some(&Value::from("string")) =>
            {
                Some(Value::from(constant.as_str()))
            }
            _ => None,
        })
        .collect()
}

fn unwrap_lines(text: &str) -> String {
    text.split("\n\n")
        .map(|paragraph| paragraph.split('\n').collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("\n\n")
}
