//! `notesoup dream-tools --notes-home <dir>`: the dreamer's tools over MCP,
//! for the headless Claude Code session `notesoup dream` starts. Core's
//! jailed write, edit and crumpled-only delete, and its read-only read, ls,
//! find and grep; nothing else.

use notesoup_core::dream::{DELETE_TOOL_DESCRIPTION, DreamError, DreamTools, TextEdit};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::protocol::{CallMeta, RpcError, ToolDef, ToolHost, ToolText, code};

/// The MCP server name the dreamer session gives these tools
/// (`mcp__dream__<tool>`).
pub const SERVER_NAME: &str = "dream";

/// The dreamer's tools for one notes home.
#[derive(Debug)]
pub struct DreamToolHost {
    tools: DreamTools,
}

impl DreamToolHost {
    /// Tools jailed to `tools`' home.
    pub fn new(tools: DreamTools) -> Self {
        Self { tools }
    }
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

fn object(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

fn path_property(what: &str) -> Value {
    json!({"type": "string", "description": format!("{what}, relative to the notes home")})
}

fn tool(name: &str, description: &str, input_schema: Value) -> ToolDef {
    ToolDef {
        name: name.to_owned(),
        description: description.to_owned(),
        input_schema,
        read_only: Some(matches!(name, "read" | "ls" | "find" | "grep")),
    }
}

fn parse<T: DeserializeOwned>(arguments: Value) -> Result<T, String> {
    serde_json::from_value(arguments).map_err(|err| format!("invalid arguments: {err}"))
}

fn lines(items: Vec<String>) -> String {
    if items.is_empty() {
        "(nothing)".to_owned()
    } else {
        items.join("\n")
    }
}

impl DreamToolHost {
    fn run(&self, name: &str, arguments: Value) -> Result<Result<String, String>, RpcError> {
        let err = |e: DreamError| e.to_string();
        Ok(match name {
            "read" => {
                parse::<PathArg>(arguments).and_then(|a| self.tools.read(&a.path).map_err(err))
            }
            "ls" => parse::<DirArg>(arguments)
                .and_then(|a| self.tools.ls(&a.path).map(lines).map_err(err)),
            "find" => parse::<DirArg>(arguments)
                .and_then(|a| self.tools.find(&a.path).map(lines).map_err(err)),
            "grep" => parse::<GrepArgs>(arguments).and_then(|a| {
                self.tools
                    .grep(&a.query, &a.path)
                    .map(|hits| {
                        lines(
                            hits.into_iter()
                                .map(|m| format!("{}:{}: {}", m.path, m.line, m.text))
                                .collect(),
                        )
                    })
                    .map_err(err)
            }),
            "write" => parse::<WriteArgs>(arguments)
                .and_then(|a| self.tools.write(&a.path, &a.content).map_err(err)),
            "edit" => parse::<EditArgs>(arguments)
                .and_then(|a| self.tools.edit(&a.path, &a.edits).map_err(err)),
            "delete" => {
                parse::<PathArg>(arguments).and_then(|a| self.tools.delete(&a.path).map_err(err))
            }
            _ => {
                return Err(RpcError::new(
                    code::INVALID_PARAMS,
                    format!("unknown tool: {}", super::protocol::shown(name)),
                ));
            }
        })
    }
}

impl ToolHost for DreamToolHost {
    fn tools(&self) -> Vec<ToolDef> {
        let edits = json!({"type": "array", "minItems": 1, "description": "Exact replacements, applied in order; each oldText must occur exactly once.",
            "items": {"type": "object", "additionalProperties": false, "required": ["oldText", "newText"],
                "properties": {"oldText": {"type": "string"}, "newText": {"type": "string"}}}});
        vec![
            tool(
                "read",
                "Read a text file in the notes home (the raw file, frontmatter included; reading does not touch access metadata).",
                object(json!({"path": path_property("The file")}), &["path"]),
            ),
            tool(
                "grep",
                "Find lines containing a literal text (case-insensitive) in the files under a directory of the notes home.",
                object(
                    json!({"query": {"type": "string", "minLength": 1}, "path": path_property("The directory or file (default: the whole home)")}),
                    &["query"],
                ),
            ),
            tool(
                "find",
                "List every file under a directory of the notes home, recursively.",
                object(
                    json!({"path": path_property("The directory (default: the whole home)")}),
                    &[],
                ),
            ),
            tool(
                "ls",
                "List one directory of the notes home; directories end in /.",
                object(
                    json!({"path": path_property("The directory (default: the home)")}),
                    &[],
                ),
            ),
            tool(
                "write",
                "Write a whole file inside the notes home (creating its directories). Writes outside the home are refused.",
                object(
                    json!({"path": path_property("The file"), "content": {"type": "string"}}),
                    &["path", "content"],
                ),
            ),
            tool(
                "edit",
                "Edit a file inside the notes home with exact-text replacements; nothing is written unless every edit applies.",
                object(
                    json!({"path": path_property("The file"), "edits": edits}),
                    &["path", "edits"],
                ),
            ),
            tool(
                "delete",
                DELETE_TOOL_DESCRIPTION,
                object(
                    json!({"path": path_property("The crumpled note")}),
                    &["path"],
                ),
            ),
        ]
    }

    fn call(
        &mut self,
        name: &str,
        arguments: Value,
        _meta: &CallMeta,
    ) -> Result<ToolText, RpcError> {
        Ok(match self.run(name, arguments)? {
            Ok(text) => ToolText {
                text,
                is_error: false,
            },
            Err(message) => ToolText {
                text: format!("error: {message}"),
                is_error: true,
            },
        })
    }
}
