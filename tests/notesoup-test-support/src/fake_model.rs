//! A fake model API on 127.0.0.1: keep-alive HTTP/1.1 connections, each
//! request read whole (its `content-length` body), model turns answered
//! from a script in the API's own wire shape ([`Wire`]) and every turn's
//! request recorded. Only the model is scripted; the host under test speaks
//! real HTTP to it.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Condvar, Mutex};

use serde_json::Value;

/// One model API's wire: where its turns are, and how a reply streams.
pub trait Wire: 'static {
    /// One scripted model turn.
    type Reply: Send + 'static;

    /// The answer at `path`: `None` for a model turn (the next reply of
    /// the script), else a fixed answer.
    fn route(path: &str) -> Option<Answer>;

    /// The reply to a turn past the script.
    fn done() -> Self::Reply;

    /// Whether `reply` is no answer at all (see [`Answer::Hold`]).
    fn holds(_reply: &Self::Reply) -> bool {
        false
    }

    /// The body (a server-sent event stream) of the `id`th turn's
    /// `reply` to `request`.
    fn stream(reply: &Self::Reply, id: u64, request: &Value) -> String;
}

#[derive(Debug)]
struct Turns<R> {
    script: VecDeque<R>,
    requests: Vec<Value>,
    served: u64,
    /// Requests held open so far.
    held: u64,
    /// The turn (counted from 1) that waits for [`FakeModel::release`].
    paused_at: Option<u64>,
    /// Whether that turn is waiting now.
    pausing: bool,
}

/// A running fake of the API `W`. Its threads live as long as the test
/// process.
#[derive(Debug)]
pub struct FakeModel<W: Wire> {
    /// `http://127.0.0.1:<port>`.
    pub url: String,
    turns: Arc<Mutex<Turns<W::Reply>>>,
    released: Arc<Condvar>,
}

impl<W: Wire> FakeModel<W> {
    pub fn start() -> Self {
        let turns = Arc::new(Mutex::new(Turns {
            script: VecDeque::new(),
            requests: Vec::new(),
            served: 0,
            held: 0,
            paused_at: None,
            pausing: false,
        }));
        let released = Arc::new(Condvar::new());
        let served = Arc::clone(&turns);
        let gate = Arc::clone(&released);
        let url = serve(move |path, body| match W::route(path) {
            Some(fixed) => fixed,
            None => turn::<W>(body, &served, &gate),
        });
        Self {
            url,
            turns,
            released,
        }
    }

    /// Answers the next `answered` turns, then keeps the one after waiting
    /// (its request recorded, no answer yet) until [`release`](Self::release):
    /// a test sees what the host does while the model is still thinking.
    pub fn pause_after(&self, answered: u64) {
        let mut turns = self.turns.lock().unwrap();
        turns.paused_at = Some(turns.served + answered + 1);
    }

    /// Whether the paused turn is waiting now.
    pub fn pausing(&self) -> bool {
        self.turns.lock().unwrap().pausing
    }

    /// Lets the paused turn be answered.
    pub fn release(&self) {
        self.turns.lock().unwrap().paused_at = None;
        self.released.notify_all();
    }

    /// Replaces the script; turns beyond it get [`Wire::done`].
    pub fn script(&self, replies: Vec<W::Reply>) {
        self.turns.lock().unwrap().script = replies.into();
    }

    /// How many requests have been held open.
    pub fn held(&self) -> u64 {
        self.turns.lock().unwrap().held
    }

    /// Every turn's request body so far, and forgets them.
    pub fn take_requests(&self) -> Vec<Value> {
        std::mem::take(&mut self.turns.lock().unwrap().requests)
    }
}

/// One model turn: records the request and answers with the next reply.
fn turn<W: Wire>(body: &[u8], turns: &Mutex<Turns<W::Reply>>, released: &Condvar) -> Answer {
    let request: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let (reply, id) = {
        let mut turns = turns.lock().unwrap();
        turns.requests.push(request.clone());
        turns.served += 1;
        let this = turns.served;
        if turns.paused_at == Some(this) {
            turns.pausing = true;
            turns = released
                .wait_while(turns, |turns| turns.paused_at == Some(this))
                .unwrap();
            turns.pausing = false;
        }
        let reply = turns.script.pop_front().unwrap_or_else(W::done);
        if W::holds(&reply) {
            turns.held += 1;
        }
        (reply, turns.served)
    };
    if W::holds(&reply) {
        return Answer::Hold;
    }
    Answer::Ok {
        content_type: "text/event-stream",
        body: W::stream(&reply, id, &request),
    }
}

/// How a fake answers one request.
#[derive(Debug)]
pub enum Answer {
    /// `200 OK` with this content type and body.
    Ok {
        content_type: &'static str,
        body: String,
    },
    /// `404 Not Found`, and the connection goes on.
    NotFound,
    /// Nothing at all: the request is held open until the client goes away.
    Hold,
}

/// Starts serving on a free port of 127.0.0.1 and returns
/// `http://127.0.0.1:<port>`. `handler` gets each request's path and body.
/// The threads live as long as the test process.
fn serve(handler: impl Fn(&str, &[u8]) -> Answer + Send + Sync + 'static) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let handler = Arc::new(handler);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let handler = Arc::clone(&handler);
            std::thread::spawn(move || serve_connection(stream, &*handler));
        }
    });
    url
}

/// Serves one keep-alive connection.
fn serve_connection(stream: TcpStream, handler: &dyn Fn(&str, &[u8]) -> Answer) {
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
        let response = match handler(path, &body) {
            Answer::Ok { content_type, body } => format!(
                "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\n\r\n{body}",
                body.len()
            ),
            Answer::NotFound => "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n".to_owned(),
            Answer::Hold => {
                // Nothing more comes on this connection until the client
                // goes away.
                while matches!(reader.read(&mut [0; 64]), Ok(1..)) {}
                return;
            }
        };
        if writer.write_all(response.as_bytes()).is_err() {
            return;
        }
    }
}

/// The text of a message's or a tool result's `content` as a model API
/// carries it: a string, or an array of parts whose texts are joined by
/// newlines; `None` for anything else.
pub fn content_text(content: &Value) -> Option<String> {
    match content {
        Value::String(text) => Some(text.clone()),
        Value::Array(parts) => Some(
            parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        _ => None,
    }
}
