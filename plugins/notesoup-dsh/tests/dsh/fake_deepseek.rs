//! A fake DeepSeek chat-completions endpoint on 127.0.0.1: scripted
//! streamed replies (text or one tool call each), every request body
//! recorded. dsh's `deepseek-official` route reaches it through
//! `DEEPSEEK_BASE_URL`; the model is the only scripted part of a run.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

/// One scripted model answer.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A text answer that ends the turn.
    Text(String),
    /// One tool call: name and arguments.
    Tool(String, Value),
}

#[derive(Default)]
struct Shared {
    script: VecDeque<Reply>,
    requests: Vec<Value>,
    served: u64,
}

/// The running fake; its threads live as long as the test process.
pub struct FakeDeepSeek {
    /// `http://127.0.0.1:<port>`.
    pub url: String,
    shared: Arc<Mutex<Shared>>,
}

impl FakeDeepSeek {
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let url = format!("http://{}", listener.local_addr().expect("address"));
        let shared = Arc::new(Mutex::new(Shared::default()));
        let accept = Arc::clone(&shared);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let shared = Arc::clone(&accept);
                std::thread::spawn(move || serve(stream, &shared));
            }
        });
        Self { url, shared }
    }

    /// Replaces the script; requests beyond it get "done.".
    pub fn script(&self, replies: Vec<Reply>) {
        self.shared.lock().expect("lock").script = replies.into();
    }

    /// Every chat-completions request body so far, and forgets them.
    pub fn take_requests(&self) -> Vec<Value> {
        std::mem::take(&mut self.shared.lock().expect("lock").requests)
    }
}

/// Serves one keep-alive connection.
fn serve(stream: TcpStream, shared: &Mutex<Shared>) {
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let mut length = 0;
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let path = request_line.split_whitespace().nth(1).unwrap_or("");
        let response = if path.ends_with("/chat/completions") {
            let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let (reply, id) = {
                let mut shared = shared.lock().expect("lock");
                shared.requests.push(request);
                shared.served += 1;
                let reply = shared
                    .script
                    .pop_front()
                    .unwrap_or_else(|| Reply::Text("done.".into()));
                (reply, shared.served)
            };
            let payload = stream_reply(&reply, id);
            format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\r\n{payload}",
                payload.len()
            )
        } else {
            "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n".to_owned()
        };
        if writer.write_all(response.as_bytes()).is_err() {
            return;
        }
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
