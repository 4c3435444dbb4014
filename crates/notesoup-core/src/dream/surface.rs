//! The dream tools as every host offers them: one table (name, description,
//! parameter schema, whether calls must run in order) and one entry point
//! that routes a call by name to [`DreamTools`], with the texts the dreamer
//! reads. A host serves them over its own wire.

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::DreamError;
use super::tools::{DELETE_TOOL_DESCRIPTION, DreamTools, TextEdit};

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

/// Every dream tool, in the order hosts register them: the read-only tools,
/// then write, edit and the wastebasket rule's delete.
pub fn dream_tool_table() -> Vec<DreamToolSpec> {
    let edits = json!({"type": "array", "minItems": 1, "description": "Exact replacements, applied in order; each oldText must occur exactly once.",
        "items": {"type": "object", "additionalProperties": false, "required": ["oldText", "newText"],
            "properties": {"oldText": {"type": "string"}, "newText": {"type": "string"}}}});
    let tool = |name, description, input_schema, sequential| DreamToolSpec {
        name,
        description,
        input_schema,
        sequential,
    };
    vec![
        tool(
            "read",
            "Read a text file in the notes home (the raw file, frontmatter included; reading does not touch access metadata).",
            object(json!({"path": path_property("The file")}), &["path"]),
            false,
        ),
        tool(
            "grep",
            "Find lines containing a literal text (case-insensitive) in the files under a directory of the notes home.",
            object(
                json!({"query": {"type": "string", "minLength": 1}, "path": path_property("The directory or file (default: the whole home)")}),
                &["query"],
            ),
            false,
        ),
        tool(
            "find",
            "List every file under a directory of the notes home, recursively.",
            object(
                json!({"path": path_property("The directory (default: the whole home)")}),
                &[],
            ),
            false,
        ),
        tool(
            "ls",
            "List one directory of the notes home; directories end in /.",
            object(
                json!({"path": path_property("The directory (default: the home)")}),
                &[],
            ),
            false,
        ),
        tool(
            "write",
            "Write a whole file inside the notes home (creating its directories). Writes outside the home are refused.",
            object(
                json!({"path": path_property("The file"), "content": {"type": "string"}}),
                &["path", "content"],
            ),
            true,
        ),
        tool(
            "edit",
            "Edit a file inside the notes home with exact-text replacements; nothing is written unless every edit applies.",
            object(
                json!({"path": path_property("The file"), "edits": edits}),
                &["path", "edits"],
            ),
            true,
        ),
        tool(
            "delete",
            DELETE_TOOL_DESCRIPTION,
            object(
                json!({"path": path_property("The crumpled note")}),
                &["path"],
            ),
            true,
        ),
    ]
}

fn object(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

fn path_property(what: &str) -> Value {
    json!({"type": "string", "description": format!("{what}, relative to the notes home")})
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

/// Runs the dream tool `name`: its text, or the refusal's text. `None` for
/// a name that is no dream tool.
pub fn call_dream_tool(
    tools: &DreamTools,
    name: &str,
    arguments: Value,
) -> Option<Result<String, String>> {
    let refused = |error: DreamError| error.to_string();
    Some(match name {
        "read" => parse::<PathArg>(arguments).and_then(|a| tools.read(&a.path).map_err(refused)),
        "ls" => {
            parse::<DirArg>(arguments).and_then(|a| tools.ls(&a.path).map(listed).map_err(refused))
        }
        "find" => parse::<DirArg>(arguments)
            .and_then(|a| tools.find(&a.path).map(listed).map_err(refused)),
        "grep" => parse::<GrepArgs>(arguments).and_then(|a| {
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
        }),
        "write" => parse::<WriteArgs>(arguments)
            .and_then(|a| tools.write(&a.path, &a.content).map_err(refused)),
        "edit" => parse::<EditArgs>(arguments)
            .and_then(|a| tools.edit(&a.path, &a.edits).map_err(refused)),
        "delete" => {
            parse::<PathArg>(arguments).and_then(|a| tools.delete(&a.path).map_err(refused))
        }
        _ => return None,
    })
}
