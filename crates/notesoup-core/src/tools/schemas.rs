//! The name, description and parameter JSON Schema of every shared tool, for
//! hosts to register and for `cargo xtask codegen` to write out.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::Value;

use super::history::{
    HistoryListParams, HistoryReadParams, HistorySearchParams, HistoryWindowsParams,
};
use super::notes::{
    NotesListParams, NotesReadParams, NotesSearchParams, NotesUpdateParams, NotesWriteParams,
};

/// The sentence every notes tool description ends with.
pub const ADDRESSES_SENTENCE: &str = "Addresses: `<path>` with no @ for this session; @project/, @human/, @self/, @model/ for durable homes (see /skill:memory). Never pass them to filesystem tools.";

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
    /// Calls must run one at a time, in order (the writing tools).
    pub sequential: bool,
}

/// Every shared tool: the notes tools, then the history tools.
pub fn all() -> Vec<ToolSchema> {
    let mut tools = notes();
    tools.extend(history());
    tools
}

/// The five notes tools, in the order hosts list them.
pub fn notes() -> Vec<ToolSchema> {
    vec![
        ToolSchema {
            sequential: true,
            ..notes_tool::<NotesWriteParams>(
                "notes_write",
                "Create a note or replace its whole body. Its metadata is kept (createdAt and every other \
                 frontmatter key), and writing a crumpled note uncrumples it. Name a note for what it holds and \
                 when to reach for it: a fresh window sees only the name. Store only what git and the history \
                 cannot give back. The receipt says created, overwritten or uncrumpled.",
            )
        },
        ToolSchema {
            sequential: true,
            ..notes_tool::<NotesUpdateParams>(
                "notes_update",
                "Change one note: exact-text body edits (each oldText must occur exactly once unless \
                 replace_all is set), a metadata-only change (origin, crumpled), or a move with rename_to, which \
                 is used alone. An ambiguous edit fails with its match line numbers and a missing one with its \
                 edit index; nothing is written unless every edit applies. The receipt gives the number of edits \
                 that changed text, the change kind and the diff.",
            )
        },
        notes_tool::<NotesReadParams>(
            "notes_read",
            "Read a window of one note's body (the frontmatter is not part of it) with the note's metadata. \
             offset_chars counts code points into the body (negative counts back from the end); limit_chars \
             caps the window (default 12000, at most 50000). When more remains, the last line names the \
             offset_chars to continue with; successive windows join back into the exact body.",
        ),
        notes_tool::<NotesListParams>(
            "notes_list",
            "List notes as a recent-first snapshot across this session, @project/, @human/, @self/ and \
             @model/: each address with its updated time (and crumpled time in the wastebasket). Not paginated: \
             more counts the notes left out, so narrow with pattern. Hidden crumpled notes and unreadable homes \
             are reported.",
        ),
        notes_tool::<NotesSearchParams>(
            "notes_search",
            "Search note bodies line by line for literal text, case-insensitively; several queries match any \
             of them. The result is a recent-first snapshot, not paginated: each note shows its matching lines \
             with their line numbers and offset_chars, which notes_read takes to read from the match. Narrow \
             with pattern; crumpled notes are searched only with wastebasket.",
        ),
    ]
}

fn notes_tool<P: JsonSchema>(name: &'static str, description: &str) -> ToolSchema {
    tool::<P>(name, &format!("{description} {ADDRESSES_SENTENCE}"))
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
        sequential: false,
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
        root.shift_remove("title");
        root.shift_remove("description");
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
                object.shift_remove("format");
            }
            if let Some(constants) = object.get("oneOf").and_then(string_constants) {
                object.shift_remove("oneOf");
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
