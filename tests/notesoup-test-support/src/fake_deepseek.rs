//! A fake DeepSeek chat-completions endpoint on 127.0.0.1: scripted
//! streamed replies (text or one tool call each), every request body
//! recorded. dsh's `deepseek-official` route reaches it through
//! `DEEPSEEK_BASE_URL`; the model is the only scripted part of a run.

use serde_json::{Value, json};

use crate::fake_model::{Answer, FakeModel, Wire};

/// One scripted model answer.
#[derive(Debug, Clone)]
pub enum DeepSeekReply {
    /// A text answer that ends the turn.
    Text(String),
    /// One tool call: name and arguments.
    Tool(String, Value),
}

/// The chat-completions wire.
#[derive(Debug)]
pub struct ChatCompletions;

/// The running fake.
pub type FakeDeepSeek = FakeModel<ChatCompletions>;

impl Wire for ChatCompletions {
    type Reply = DeepSeekReply;

    fn route(path: &str) -> Option<Answer> {
        if path.ends_with("/chat/completions") {
            None
        } else {
            Some(Answer::NotFound)
        }
    }

    fn done() -> DeepSeekReply {
        DeepSeekReply::Text("done.".into())
    }

    fn stream(reply: &DeepSeekReply, id: u64, _request: &Value) -> String {
        stream_reply(reply, id)
    }
}

/// The SSE stream of one reply, in DeepSeek's wire shape.
fn stream_reply(reply: &DeepSeekReply, id: u64) -> String {
    let chunk = |delta: Value, finish: Option<&str>| {
        json!({"id": format!("fake-{id}"), "object": "chat.completion.chunk", "model": "fake",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let mut events = vec![chunk(json!({"role": "assistant", "content": ""}), None)];
    match reply {
        DeepSeekReply::Text(text) => {
            events.push(chunk(json!({"content": text}), None));
            events.push(chunk(json!({}), Some("stop")));
        }
        DeepSeekReply::Tool(name, arguments) => {
            events.push(chunk(
                json!({"tool_calls": [{"index": 0, "id": format!("call_{id}"), "type": "function",
                        "function": {"name": name, "arguments": arguments.to_string()}}]}),
                None,
            ));
            events.push(chunk(json!({}), Some("tool_calls")));
        }
    }
    events.push(json!({"id": format!("fake-{id}"), "object": "chat.completion.chunk", "model": "fake", "choices": [],
        "usage": {"prompt_tokens": 1000, "completion_tokens": 10, "total_tokens": 1010}}));
    let mut out = String::new();
    for event in events {
        out.push_str(&format!("data: {event}\n\n"));
    }
    out.push_str("data: [DONE]\n\n");
    out
}
