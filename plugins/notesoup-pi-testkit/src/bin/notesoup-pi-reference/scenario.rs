//! The demo's embedded scenario: a scripted model that works on a parser
//! refactor, reads big files until the budget warns it, writes its notes,
//! wipes its memory, and in the fresh window digs its task back out of the
//! history by seq.

use notesoup_core::tools::Tool;
use notesoup_pi::session::{AgentMessage, ToolDeclaration};
use notesoup_pi_testkit::{HostTool, ModelRequest, ScriptedModel, Step, message_text};
use serde_json::{Value, json};

/// The model's context window: small, so the budget lines arrive quickly.
pub const CONTEXT_WINDOW: u64 = 64_000;

/// The human's task.
pub const TASK: &str =
    "Split the parser module into a tokenizer and a parser, keep the tests green.";

/// A host tool that returns a large synthetic source file (about 9,000
/// tokens), so the context fills the way real file reads fill it.
pub fn read_file_tool() -> HostTool {
    HostTool {
        declaration: ToolDeclaration {
            name: "read_file".to_owned(),
            description: "Read a file of the project.".to_owned(),
            parameters: json!({
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"],
                "additionalProperties": false
            }),
            constrained_sampling: None,
            extra: serde_json::Map::new(),
        },
        run: Box::new(|arguments: &Value| {
            let path = arguments
                .get("path")
                .and_then(Value::as_str)
                .ok_or_else(|| "read_file needs a path".to_owned())?;
            Ok(synthetic_source(path))
        }),
    }
}

fn synthetic_source(path: &str) -> String {
    let stem = path
        .rsplit('/')
        .next()
        .unwrap_or(path)
        .trim_end_matches(".rs");
    let mut text = format!("// {path}\n");
    for rule in 0..400 {
        text.push_str(&format!(
            "pub fn {stem}_rule_{rule}(input: &mut Cursor<'_>) -> Result<Node, Error> {{ input.expect(Token::Rule{rule})?; Ok(Node::leaf({rule})) }}\n"
        ));
    }
    text
}

/// The seq of the first `history_search` hit in the last tool result.
fn first_seq(request: &ModelRequest<'_>) -> Option<u64> {
    let text = request
        .messages
        .iter()
        .rev()
        .find(|m| matches!(m, AgentMessage::ToolResult(_)))
        .map(message_text)?;
    let rest = text.split("seq ").nth(1)?;
    rest.split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

/// The script, step by step.
pub fn model() -> ScriptedModel {
    let mut model = ScriptedModel::new(CONTEXT_WINDOW);
    model
        .push(Step::tools(
            Some("I'll record the design decision first, then read the code."),
            vec![
                (
                    Tool::NOTES_WRITE.name,
                    json!({
                        "address": "@project/parser-split.md",
                        "content": "# Parser split\n\nDecision: the tokenizer owns Cursor and Token; the parser only sees tokens.\nTests stay in tests/parser.rs and must pass after every step.\n"
                    }),
                ),
                (
                    Tool::NOTES_WRITE.name,
                    json!({
                        "address": "@project/MAP.md",
                        "content": "- @project/parser-split.md: how and why the parser module is split\n"
                    }),
                ),
            ],
        ))
        .push(Step::tool("read_file", json!({"path": "src/parser.rs"})))
        .push(Step::tool("read_file", json!({"path": "src/grammar.rs"})))
        .push(Step::tool("read_file", json!({"path": "tests/parser.rs"})))
        .push(Step::tools(
            Some("The warning says close out. Saving my checkpoint before the wipe."),
            vec![
                (
                    Tool::NOTES_WRITE.name,
                    json!({
                        "address": "checkpoint.md",
                        "content": "# Checkpoint: parser split\n\nGoal: split src/parser.rs into tokenizer.rs and parser.rs.\nDone: read parser.rs, grammar.rs and tests/parser.rs; decision in @project/parser-split.md.\nNext: move Cursor and Token into src/tokenizer.rs.\nWhere to dig: history_search \"tokenizer\" finds the human's original request.\n"
                    }),
                ),
                (
                    Tool::NOTES_UPDATE.name,
                    json!({
                        "address": "@project/parser-split.md",
                        "edits": [{"oldText": "must pass after every step.", "newText": "must pass after every step.\nStatus: all three files read, nothing moved yet."}]
                    }),
                ),
            ],
        ))
        .push(Step::tool(Tool::WIPE_MEMORY.name, json!({})))
        .push(Step::tool(
            Tool::HISTORY_SEARCH.name,
            json!({"query": "tokenizer", "roles": ["user"]}),
        ))
        .push_with(|request| match first_seq(request) {
            Some(seq) => Step::tool(Tool::HISTORY_READ.name, json!({ "seq": seq })),
            None => Step::text("The search found nothing; I will work from the checkpoint alone."),
        })
        .push(Step::text(
            "Found it: the human asked me to split the parser into a tokenizer and a parser. My checkpoint says the next step is moving Cursor and Token into src/tokenizer.rs, so that is where I start.",
        ));
    model
}
