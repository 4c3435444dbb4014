//! A fake Anthropic Messages API on 127.0.0.1 (Claude Code reaches it
//! through `ANTHROPIC_BASE_URL`): scripted streamed replies, every request
//! recorded, so a test sees exactly what the model would see.

use serde_json::{Value, json};

use crate::fake_model::{Answer, FakeModel, Wire};

/// One scripted model turn.
#[derive(Debug, Clone)]
pub struct Reply {
    /// Leading text (may be empty).
    pub text: String,
    /// `(tool_use id, tool name, input)` blocks after the text.
    pub tool_uses: Vec<(String, String, Value)>,
    /// The request's size in tokens (input + cache + output), which the
    /// transcript's usage carries.
    pub context_tokens: u64,
    /// No answer at all: the request is held open until Claude Code goes
    /// away (a session closed while the model was answering).
    pub hangs: bool,
}

impl Reply {
    /// A text reply.
    pub fn text(text: &str) -> Self {
        Self {
            text: text.to_owned(),
            tool_uses: Vec::new(),
            context_tokens: 20_000,
            hangs: false,
        }
    }

    /// A request that is never answered.
    pub fn hang() -> Self {
        Self {
            hangs: true,
            ..Self::text("")
        }
    }

    /// A reply that calls one tool.
    pub fn tool(id: &str, name: &str, input: Value) -> Self {
        Self {
            text: String::new(),
            tool_uses: vec![(id.to_owned(), name.to_owned(), input)],
            context_tokens: 20_000,
            hangs: false,
        }
    }

    /// The same reply with another usage.
    pub fn tokens(mut self, context_tokens: u64) -> Self {
        self.context_tokens = context_tokens;
        self
    }
}

/// The Messages API's wire.
#[derive(Debug)]
pub struct Messages;

/// The running fake.
pub type FakeApi = FakeModel<Messages>;

impl Wire for Messages {
    type Reply = Reply;

    fn route(path: &str) -> Option<Answer> {
        if path.starts_with("/v1/messages/count_tokens") {
            Some(Answer::Ok {
                content_type: "application/json",
                body: json!({"input_tokens": 100}).to_string(),
            })
        } else if path.starts_with("/v1/messages") {
            None
        } else {
            Some(Answer::NotFound)
        }
    }

    fn done() -> Reply {
        Reply::text("done.")
    }

    fn holds(reply: &Reply) -> bool {
        reply.hangs
    }

    fn stream(reply: &Reply, id: u64, request: &Value) -> String {
        stream_reply(reply, id, request)
    }
}

/// The SSE stream of one reply.
fn stream_reply(reply: &Reply, id: u64, request: &Value) -> String {
    let model = request["model"].as_str().unwrap_or("claude-test");
    let output = 10;
    let cached = reply.context_tokens.saturating_sub(output + 10);
    let mut events = Vec::new();
    let mut event =
        |name: &str, data: Value| events.push(format!("event: {name}\ndata: {data}\n\n"));
    event(
        "message_start",
        json!({"type":"message_start","message":{
        "id": format!("msg_fake_{id}"), "type":"message","role":"assistant","model":model,
        "content":[],"stop_reason":null,"stop_sequence":null,
        "usage":{"input_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":cached,"output_tokens":1}}}),
    );
    let mut index = 0;
    if !reply.text.is_empty() {
        event(
            "content_block_start",
            json!({"type":"content_block_start","index":index,"content_block":{"type":"text","text":""}}),
        );
        event(
            "content_block_delta",
            json!({"type":"content_block_delta","index":index,"delta":{"type":"text_delta","text":reply.text}}),
        );
        event(
            "content_block_stop",
            json!({"type":"content_block_stop","index":index}),
        );
        index += 1;
    }
    for (tool_id, name, input) in &reply.tool_uses {
        event(
            "content_block_start",
            json!({"type":"content_block_start","index":index,"content_block":{"type":"tool_use","id":tool_id,"name":name,"input":{}}}),
        );
        event(
            "content_block_delta",
            json!({"type":"content_block_delta","index":index,"delta":{"type":"input_json_delta","partial_json":input.to_string()}}),
        );
        event(
            "content_block_stop",
            json!({"type":"content_block_stop","index":index}),
        );
        index += 1;
    }
    let stop = if reply.tool_uses.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    event(
        "message_delta",
        json!({"type":"message_delta","delta":{"stop_reason":stop,"stop_sequence":null},"usage":{"output_tokens":output}}),
    );
    event("message_stop", json!({"type":"message_stop"}));
    events.concat()
}

/// Every text the model was sent in `request` (system prompt excluded), in
/// order, with tool results as their text.
pub fn texts(request: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for message in request["messages"].as_array().into_iter().flatten() {
        match &message["content"] {
            Value::String(text) => out.push(text.clone()),
            Value::Array(blocks) => {
                for block in blocks {
                    match block["type"].as_str() {
                        Some("text") => out.push(block["text"].as_str().unwrap_or("").to_owned()),
                        Some("tool_result") => match &block["content"] {
                            Value::String(text) => out.push(text.clone()),
                            Value::Array(parts) => out.extend(
                                parts
                                    .iter()
                                    .filter_map(|p| p["text"].as_str().map(str::to_owned)),
                            ),
                            _ => {}
                        },
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    out
}
