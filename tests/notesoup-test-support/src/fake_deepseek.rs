//! A fake DeepSeek chat-completions endpoint on 127.0.0.1: scripted
//! streamed replies (text or one tool call each), every request body
//! recorded. dsh's `deepseek-official` route reaches it through
//! `DEEPSEEK_BASE_URL`; the model is the only scripted part of a run.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::fake_http::{self, Answer};

/// One scripted model answer.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A text answer that ends the turn.
    Text(String),
    /// One tool call: name and arguments.
    Tool(String, Value),
}

#[derive(Debug, Default)]
struct Shared {
    script: VecDeque<Reply>,
    requests: Vec<Value>,
    served: u64,
}

/// The running fake; its threads live as long as the test process.
#[derive(Debug)]
pub struct FakeDeepSeek {
    /// `http://127.0.0.1:<port>`.
    pub url: String,
    shared: Arc<Mutex<Shared>>,
}

impl FakeDeepSeek {
    pub fn start() -> Self {
        let shared = Arc::new(Mutex::new(Shared::default()));
        let served = Arc::clone(&shared);
        let url = fake_http::serve(move |path, body| answer(path, body, &served));
        Self { url, shared }
    }

    /// Replaces the script; requests beyond it get "done.".
    pub fn script(&self, replies: Vec<Reply>) {
        self.shared.lock().unwrap().script = replies.into();
    }

    /// Every chat-completions request body so far, and forgets them.
    pub fn take_requests(&self) -> Vec<Value> {
        std::mem::take(&mut self.shared.lock().unwrap().requests)
    }
}

/// The answer to one request: the next scripted reply, or nothing for a
/// path the API does not have.
fn answer(path: &str, body: &[u8], shared: &Mutex<Shared>) -> Answer {
    if !path.ends_with("/chat/completions") {
        return Answer::NotFound;
    }
    let request: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let (reply, id) = {
        let mut shared = shared.lock().unwrap();
        shared.requests.push(request);
        shared.served += 1;
        let reply = shared
            .script
            .pop_front()
            .unwrap_or_else(|| Reply::Text("done.".into()));
        (reply, shared.served)
    };
    Answer::Ok {
        content_type: "text/event-stream",
        body: stream_reply(&reply, id),
    }
}

/// The SSE stream of one reply, in DeepSeek's wire shape.
fn stream_reply(reply: &Reply, id: u64) -> String {
    let chunk = |delta: Value, finish: Option<&str>| {
        json!({"id": format!("fake-{id}"), "object": "chat.completion.chunk", "model": "fake",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let mut events = vec![chunk(json!({"role": "assistant", "content": ""}), None)];
    match reply {
        Reply::Text(text) => {
            events.push(chunk(json!({"content": text}), None));
            events.push(chunk(json!({}), Some("stop")));
        }
        Reply::Tool(name, arguments) => {
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
