//! The dream composition on Pi: core's [`DreamRunner`] over a Pi host's
//! agent session.
//!
//! A Pi host supplies one thing, a [`DreamSessionHost`]: resolve a model
//! pattern without network, and run one in-memory session (cwd = notes home,
//! thinking off, default tools off, exactly the given tool definitions, the
//! playbook as its single prompt). [`PiDreamRunner`] offers core's jailed
//! [`DreamTools`] as Pi-shaped tools (`read`, `grep`, `find`, `ls`, `write`,
//! `edit`, `delete`), records `{tool, path}` for every write/edit/delete
//! call and maps the outcome per the spec (section 10.4).

use std::path::Path;

use notesoup_core::dream::{
    DELETE_TOOL, DELETE_TOOL_DESCRIPTION, DREAMER_TOOLS, DreamRequest, DreamResult, DreamRunner,
    DreamTools, DreamWrite, TextEdit,
};
use serde_json::{Value, json};

use crate::host::ModelInfo;
use crate::session::{StopReason, ToolDeclaration};

/// What the host is asked to run: one in-memory agent session.
#[derive(Debug)]
pub struct DreamSessionSpec<'a> {
    /// The session's working directory: the notes home.
    pub cwd: &'a Path,
    /// The resolved model.
    pub model: &'a ModelInfo,
    /// Always `"off"`: the dreamer runs without thinking.
    pub thinking_level: &'static str,
    /// Exactly the tools to offer; the host's default tools are off.
    pub tools: &'a [ToolDeclaration],
    /// The single user prompt (the playbook).
    pub prompt: &'a str,
}

/// Runs one tool call of the session: the result text, or an error text the
/// host returns to the model as an error tool result.
pub type DreamToolCall<'a> = dyn FnMut(&str, &Value) -> Result<String, String> + 'a;

/// How the session's run ended: its final assistant message.
#[derive(Debug, Clone, PartialEq)]
pub struct DreamSessionOutcome {
    /// The text of the final assistant message.
    pub final_text: String,
    /// Its stop reason.
    pub stop_reason: StopReason,
    /// Its `errorMessage`, if any.
    pub error_message: Option<String>,
}

/// Why a session did not complete.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DreamSessionError {
    /// The session could not be created (the only failure Pi throws).
    #[error("{0}")]
    Create(String),
    /// Prompting threw; the writes made so far are kept.
    #[error("{0}")]
    Prompt(String),
}

/// What a Pi host must supply to dream.
pub trait DreamSessionHost {
    /// Resolves `pattern` against the models available offline (no network
    /// refresh); `None` asks for the host's automatic choice. `None` back
    /// means nothing matched.
    fn resolve_model(&mut self, pattern: Option<&str>) -> Option<ModelInfo>;

    /// Creates the session per `spec`, prompts it once and runs it to
    /// completion, routing every tool call to `call`.
    fn run_session(
        &mut self,
        spec: DreamSessionSpec<'_>,
        call: &mut DreamToolCall<'_>,
    ) -> Result<DreamSessionOutcome, DreamSessionError>;
}

/// Core's [`DreamRunner`] over a [`DreamSessionHost`].
#[derive(Debug)]
pub struct PiDreamRunner<H> {
    /// The host.
    pub host: H,
}

impl<H: DreamSessionHost> PiDreamRunner<H> {
    /// A runner over `host`.
    pub fn new(host: H) -> Self {
        PiDreamRunner { host }
    }
}

impl<H: DreamSessionHost> DreamRunner for PiDreamRunner<H> {
    fn run(&mut self, request: DreamRequest<'_>) -> DreamResult {
        let Some(model) = self.host.resolve_model(request.model_pattern) else {
            let pattern = request.model_pattern.unwrap_or_default();
            return DreamResult::failed(format!(
                "dreamer model pattern \"{pattern}\" did not resolve to an available model"
            ));
        };
        let declarations = dream_tool_declarations();
        let mut writes = Vec::new();
        let tools = request.tools;
        let mut call = |name: &str, arguments: &Value| {
            writes.extend(DreamWrite::from_tool_event(name, arguments));
            run_dream_tool(tools, name, arguments)
        };
        let outcome = self.host.run_session(
            DreamSessionSpec {
                cwd: request.home,
                model: &model,
                thinking_level: "off",
                tools: &declarations,
                prompt: request.prompt,
            },
            &mut call,
        );
        match outcome {
            Ok(outcome) => {
                let error = (outcome.stop_reason == StopReason::Error).then(|| {
                    format!(
                        "dreamer failed: {}",
                        outcome.error_message.unwrap_or_default()
                    )
                });
                DreamResult {
                    report: outcome.final_text,
                    writes,
                    error,
                }
            }
            Err(DreamSessionError::Prompt(message)) => DreamResult {
                report: String::new(),
                writes,
                error: Some(message),
            },
            Err(DreamSessionError::Create(message)) => DreamResult::failed(message),
        }
    }
}

/// The dreamer's tool definitions in Pi's shapes, allowlist order, then
/// `delete`.
pub fn dream_tool_declarations() -> Vec<ToolDeclaration> {
    let path = json!({"type": "string", "description": "Path relative to the notes home"});
    let object = |properties: Value, required: &[&str]| json!({"type": "object", "properties": properties, "required": required});
    let declare = |name: &str, description: &str, parameters: Value| ToolDeclaration {
        name: name.to_owned(),
        description: description.to_owned(),
        parameters,
        constrained_sampling: None,
        extra: Default::default(),
    };
    let edit = json!({
        "type": "object",
        "properties": {"oldText": {"type": "string"}, "newText": {"type": "string"}},
        "required": ["oldText", "newText"],
    });
    let mut tools: Vec<ToolDeclaration> = DREAMER_TOOLS
        .iter()
        .map(|name| match *name {
            "read" => declare(
                "read",
                "Read a text file inside the notes home.",
                object(json!({"path": path}), &["path"]),
            ),
            "grep" => declare(
                "grep",
                "Case-insensitive literal search in the files under path (default: the home). Output: path:line: text.",
                object(
                    json!({"pattern": {"type": "string"}, "path": path}),
                    &["pattern"],
                ),
            ),
            "find" => declare(
                "find",
                "List every file under path (default: the home), recursively; .git is skipped.",
                object(json!({"path": path}), &[]),
            ),
            "ls" => declare(
                "ls",
                "List a directory (default: the home); directories end in /.",
                object(json!({"path": path}), &[]),
            ),
            "write" => declare(
                "write",
                "Write a file inside the notes home, creating parent directories.",
                object(
                    json!({"path": path, "content": {"type": "string"}}),
                    &["path", "content"],
                ),
            ),
            _ => declare(
                "edit",
                "Replace exact text in a file inside the notes home; each oldText must occur exactly once.",
                object(
                    json!({"path": path, "edits": {"type": "array", "items": edit},
                           "oldText": {"type": "string"}, "newText": {"type": "string"}}),
                    &["path"],
                ),
            ),
        })
        .collect();
    tools.push(declare(
        DELETE_TOOL,
        DELETE_TOOL_DESCRIPTION,
        object(json!({"path": path}), &["path"]),
    ));
    tools
}

/// Runs one dreamer tool call against the jailed tools.
pub fn run_dream_tool(tools: &DreamTools, name: &str, arguments: &Value) -> Result<String, String> {
    let text = |key: &str| arguments.get(key).and_then(Value::as_str);
    let required = |key: &str| text(key).ok_or_else(|| format!("{name}: missing string {key}"));
    let dir = text("path").unwrap_or(".");
    let failed = |err: notesoup_core::dream::DreamError| err.to_string();
    match name {
        "read" => tools.read(required("path")?).map_err(failed),
        "write" => tools
            .write(required("path")?, required("content")?)
            .map_err(failed),
        "edit" => {
            let edits = edit_arguments(arguments)?;
            tools.edit(required("path")?, &edits).map_err(failed)
        }
        "delete" => tools.delete(required("path")?).map_err(failed),
        "ls" => tools
            .ls(dir)
            .map(|names| listing(names, "(empty directory)"))
            .map_err(failed),
        "find" => tools
            .find(dir)
            .map(|files| listing(files, "No files found"))
            .map_err(failed),
        "grep" => {
            let hits = tools.grep(required("pattern")?, dir).map_err(failed)?;
            let lines = hits
                .into_iter()
                .map(|hit| format!("{}:{}: {}", hit.path, hit.line, hit.text))
                .collect();
            Ok(listing(lines, "No matches found"))
        }
        other => Err(format!("Tool {other} not found")),
    }
}

/// `edits: [{oldText, newText}]`, or one `oldText`/`newText` pair.
fn edit_arguments(arguments: &Value) -> Result<Vec<TextEdit>, String> {
    if let Some(edits) = arguments.get("edits") {
        return serde_json::from_value(edits.clone())
            .map_err(|err| format!("edit: invalid edits: {err}"));
    }
    match (
        arguments.get("oldText").and_then(Value::as_str),
        arguments.get("newText").and_then(Value::as_str),
    ) {
        (Some(old_text), Some(new_text)) => Ok(vec![TextEdit {
            old_text: old_text.to_owned(),
            new_text: new_text.to_owned(),
        }]),
        _ => Err("edit: give edits or oldText and newText".to_owned()),
    }
}

fn listing(lines: Vec<String>, empty: &str) -> String {
    if lines.is_empty() {
        empty.to_owned()
    } else {
        lines.join("\n")
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// A host that makes fixed tool calls, then ends as told.
    struct FakeHost {
        calls: Vec<(&'static str, Value)>,
        end: Result<DreamSessionOutcome, DreamSessionError>,
        results: Vec<Result<String, String>>,
    }

    impl DreamSessionHost for FakeHost {
        fn resolve_model(&mut self, _pattern: Option<&str>) -> Option<ModelInfo> {
            Some(ModelInfo {
                provider: "fake".to_owned(),
                id: "fake-1".to_owned(),
                context_window: 1000,
                max_tokens: 100,
            })
        }

        fn run_session(
            &mut self,
            _spec: DreamSessionSpec<'_>,
            call: &mut DreamToolCall<'_>,
        ) -> Result<DreamSessionOutcome, DreamSessionError> {
            for (name, arguments) in &self.calls {
                self.results.push(call(name, arguments));
            }
            self.end.clone()
        }
    }

    fn run(host: &mut PiDreamRunner<FakeHost>, home: &Path) -> DreamResult {
        let tools = DreamTools::new(home);
        host.run(DreamRequest {
            prompt: "tidy",
            home,
            model_pattern: None,
            tools: &tools,
        })
    }

    fn runner(end: Result<DreamSessionOutcome, DreamSessionError>) -> PiDreamRunner<FakeHost> {
        PiDreamRunner::new(FakeHost {
            calls: vec![
                ("write", json!({"path": "human/a.md", "content": "x one\n"})),
                (
                    "edit",
                    json!({"path": "human/a.md", "oldText": "one", "newText": "two"}),
                ),
                ("write", json!({"path": "/etc/passwd", "content": "no"})),
                ("write", json!({"content": "no path"})),
                ("ls", json!({})),
            ],
            end,
            results: Vec::new(),
        })
    }

    fn writes(result: &DreamResult) -> Vec<String> {
        result
            .writes
            .iter()
            .map(|write| format!("{}:{}", write.tool, write.path))
            .collect()
    }

    #[test]
    fn a_throw_while_prompting_keeps_the_partial_writes() {
        let home = tempfile::tempdir().unwrap();
        let mut runner = runner(Err(DreamSessionError::Prompt("socket closed".to_owned())));
        let result = run(&mut runner, home.path());
        assert_eq!(result.error.as_deref(), Some("socket closed"));
        assert_eq!(result.report, "");
        assert_eq!(
            writes(&result),
            ["write:human/a.md", "edit:human/a.md", "write:/etc/passwd"]
        );
        let results = &runner.host.results;
        assert_eq!(results[0], Ok("wrote human/a.md (6 bytes)".to_owned()));
        assert_eq!(results[1], Ok("edited human/a.md (1 edits)".to_owned()));
        assert!(results[2].is_err());
        assert_eq!(results[3], Err("write: missing string path".to_owned()));
        assert_eq!(results[4], Ok("human/".to_owned()));
        assert_eq!(
            std::fs::read_to_string(home.path().join("human/a.md")).unwrap(),
            "x two\n"
        );
    }

    #[test]
    fn session_creation_failure_and_provider_errors_map_per_the_spec() {
        let home = tempfile::tempdir().unwrap();
        let mut created = runner(Err(DreamSessionError::Create("no auth".to_owned())));
        assert_eq!(
            run(&mut created, home.path()),
            DreamResult::failed("no auth")
        );

        let outcome = DreamSessionOutcome {
            final_text: "partial".to_owned(),
            stop_reason: StopReason::Error,
            error_message: Some("429 rate limited".to_owned()),
        };
        let result = run(&mut runner(Ok(outcome)), home.path());
        assert_eq!(
            result.error.as_deref(),
            Some("dreamer failed: 429 rate limited")
        );
        assert_eq!(result.writes.len(), 3);

        let outcome = DreamSessionOutcome {
            final_text: "done".to_owned(),
            stop_reason: StopReason::Stop,
            error_message: None,
        };
        let result = run(&mut runner(Ok(outcome)), home.path());
        assert_eq!((result.report.as_str(), result.error), ("done", None));
    }

    #[test]
    fn unknown_tools_and_bad_edits_are_tool_errors() {
        let home = tempfile::tempdir().unwrap();
        let tools = DreamTools::new(home.path());
        let check = |name: &str, arguments: Value, expect: Result<&str, &str>| {
            assert_eq!(
                run_dream_tool(&tools, name, &arguments),
                expect.map(str::to_owned).map_err(str::to_owned)
            );
        };
        check("bash", json!({}), Err("Tool bash not found"));
        check(
            "edit",
            json!({"path": "a.md"}),
            Err("edit: give edits or oldText and newText"),
        );
        check("find", json!({}), Ok("No files found"));
        check("ls", json!({}), Ok("(empty directory)"));
        check("grep", json!({"pattern": "x"}), Ok("No matches found"));
    }

    #[test]
    fn the_tools_are_the_allowlist_then_delete() {
        let names: Vec<String> = dream_tool_declarations()
            .into_iter()
            .map(|tool| tool.name)
            .collect();
        assert_eq!(
            names,
            ["read", "grep", "find", "ls", "write", "edit", "delete"]
        );
    }
}
