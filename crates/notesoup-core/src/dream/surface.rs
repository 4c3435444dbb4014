//! The dream tools as every host offers them: one registry (`DREAM_TOOLS`),
//! each tool's name, description, parameter schema, whether its calls must
//! run in order, and handler over [`DreamTools`] declared together below;
//! the table hosts list ([`dream_tool_table`]) and the one router
//! ([`call_dream_tool`]) derive from it. A host serves them over its own
//! wire.

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::DreamError;
use super::tools::{DreamTools, TextEdit};

/// One dream tool as a host registers it.
#[derive(Debug, Clone, PartialEq)]
pub struct DreamToolSpec {
    /// The name the dreamer calls.
    pub name: &'static str,
    /// What the dreamer reads about it.
    pub description: &'static str,
    /// JSON Schema of the arguments.
    pub input_schema: Value,
    /// Calls must not overlap (the writing tools).
    pub sequential: bool,
}

/// One dream tool, declared once.
pub(super) struct DreamToolDefinition {
    pub(super) name: &'static str,
    description: &'static str,
    parameters: fn() -> Value,
    sequential: bool,
    /// The tool's text, or its refusal's.
    run: fn(&DreamTools, Value) -> Result<String, String>,
}

/// Every dream tool, in the order hosts register them: the read-only tools,
/// then write, edit and the wastebasket rule's delete.
const DREAM_TOOLS: [&DreamToolDefinition; 7] = [&READ, &GREP, &FIND, &LS, &WRITE, &EDIT, &DELETE];

const READ: DreamToolDefinition = DreamToolDefinition {
    name: "read",
    description: "Read a text file in the notes home (the raw file, frontmatter included; reading does not touch access metadata).",
    parameters: || object(json!({"path": path_property("The file")}), &["path"]),
    sequential: false,
    run: |tools, arguments| {
        parse::<PathArg>(arguments).and_then(|a| tools.read(&a.path).map_err(refused))
    },
};

const GREP: DreamToolDefinition = DreamToolDefinition {
    name: "grep",
    description: "Find lines containing a literal text (case-insensitive) in the files under a directory of the notes home.",
    parameters: || {
        object(
            json!({"query": {"type": "string", "minLength": 1}, "path": path_property("The directory or file (default: the whole home)")}),
            &["query"],
        )
    },
    sequential: false,
    run: |tools, arguments| {
        parse::<GrepArgs>(arguments).and_then(|a| {
            tools
                .grep(&a.query, &a.path)
                .map(|hits| {
                    listed(
                        hits.into_iter()
                            .map(|hit| format!("{}:{}: {}", hit.path, hit.line, hit.text))
                            .collect(),
                    )
                })
                .map_err(refused)
        })
    },
};

const FIND: DreamToolDefinition = DreamToolDefinition {
    name: "find",
    description: "List every file under a directory of the notes home, recursively.",
    parameters: || dir_parameters("The directory (default: the whole home)"),
    sequential: false,
    run: |tools, arguments| list_dir(arguments, |path| tools.find(path)),
};

const LS: DreamToolDefinition = DreamToolDefinition {
    name: "ls",
    description: "List one directory of the notes home; directories end in /.",
    parameters: || dir_parameters("The directory (default: the home)"),
    sequential: false,
    run: |tools, arguments| list_dir(arguments, |path| tools.ls(path)),
};

/// `write`.
pub(super) const WRITE: DreamToolDefinition = DreamToolDefinition {
    name: "write",
    description: "Write a whole file inside the notes home (creating its directories). Writes outside the home are refused.",
    parameters: || {
        object(
            json!({"path": path_property("The file"), "content": {"type": "string"}}),
            &["path", "content"],
        )
    },
    sequential: true,
    run: |tools, arguments| {
        parse::<WriteArgs>(arguments)
            .and_then(|a| tools.write(&a.path, &a.content).map_err(refused))
    },
};

/// `edit`.
pub(super) const EDIT: DreamToolDefinition = DreamToolDefinition {
    name: "edit",
    description: "Edit a file inside the notes home with exact-text replacements; nothing is written unless every edit applies.",
    parameters: || {
        let edits = json!({"type": "array", "minItems": 1, "description": "Exact replacements, applied in order; each oldText must occur exactly once.",
            "items": {"type": "object", "additionalProperties": false, "required": ["oldText", "newText"],
                "properties": {"oldText": {"type": "string"}, "newText": {"type": "string"}}}});
        object(
            json!({"path": path_property("The file"), "edits": edits}),
            &["path", "edits"],
        )
    },
    sequential: true,
    run: |tools, arguments| {
        parse::<EditArgs>(arguments).and_then(|a| tools.edit(&a.path, &a.edits).map_err(refused))
    },
};

/// `delete`, the wastebasket rule's.
pub(super) const DELETE: DreamToolDefinition = DreamToolDefinition {
    name: "delete",
    description: "Delete a note from the wastebasket: one that was already crumpled (crumpledAt in its frontmatter) when this dream began, unchanged since, whose crumpledAt and last access (lastAccessed, else crumpledAt) are both more than 7 days old. A live note, one crumpled or changed during this dream, or one too recent is refused.",
    parameters: || {
        object(
            json!({"path": path_property("The crumpled note")}),
            &["path"],
        )
    },
    sequential: true,
    run: |tools, arguments| {
        parse::<PathArg>(arguments).and_then(|a| tools.delete(&a.path).map_err(refused))
    },
};

/// Every dream tool, in the order hosts register them (see
/// `DREAM_TOOLS`).
pub fn dream_tool_table() -> Vec<DreamToolSpec> {
    DREAM_TOOLS
        .iter()
        .map(|tool| DreamToolSpec {
            name: tool.name,
            description: tool.description,
            input_schema: (tool.parameters)(),
            sequential: tool.sequential,
        })
        .collect()
}

/// Runs the dream tool `name`: its text, or the refusal's text. `None` for
/// a name that is no dream tool.
pub fn call_dream_tool(
    tools: &DreamTools,
    name: &str,
    arguments: Value,
) -> Option<Result<String, String>> {
    let tool = DREAM_TOOLS.into_iter().find(|tool| tool.name == name)?;
    Some((tool.run)(tools, arguments))
}

fn refused(error: DreamError) -> String {
    error.to_string()
}

fn object(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

fn path_property(what: &str) -> Value {
    json!({"type": "string", "description": format!("{what}, relative to the notes home")})
}

/// The schema of `find` and `ls`: an optional directory, described (with
/// its default) by `what`.
fn dir_parameters(what: &str) -> Value {
    object(json!({"path": path_property(what)}), &[])
}

/// The run of `find` and `ls`: `list` over the directory the arguments
/// name (the home by default), one entry a line.
fn list_dir(
    arguments: Value,
    list: impl FnOnce(&str) -> Result<Vec<String>, DreamError>,
) -> Result<String, String> {
    parse::<DirArg>(arguments).and_then(|a| list(&a.path).map(listed).map_err(refused))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PathArg {
    path: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DirArg {
    #[serde(default = "home")]
    path: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GrepArgs {
    query: String,
    #[serde(default = "home")]
    path: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WriteArgs {
    path: String,
    content: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EditArgs {
    path: String,
    edits: Vec<TextEdit>,
}

fn home() -> String {
    ".".to_owned()
}

/// The arguments as the tool's struct. Only an object (or `null`, read as
/// `{}`) is read: serde would take an array by position, which no schema
/// offers.
fn parse<T: DeserializeOwned>(arguments: Value) -> Result<T, String> {
    let arguments = match arguments {
        Value::Null => Value::Object(serde_json::Map::new()),
        Value::Object(object) => Value::Object(object),
        other => {
            return Err(format!(
                "invalid arguments: expected an object, got {}",
                crate::tools::json_kind(&other)
            ));
        }
    };
    serde_json::from_value(arguments).map_err(|error| format!("invalid arguments: {error}"))
}

fn listed(items: Vec<String>) -> String {
    if items.is_empty() {
        "(nothing)".to_owned()
    } else {
        items.join("\n")
    }
}
