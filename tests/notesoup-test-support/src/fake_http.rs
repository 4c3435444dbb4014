//! The HTTP/1.1 side of a fake model API on 127.0.0.1: keep-alive
//! connections, each request read whole (its `content-length` body) and
//! answered by the fake's own handler. Only the model is scripted; the host
//! under test speaks real HTTP to it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;

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
pub fn serve(handler: impl Fn(&str, &[u8]) -> Answer + Send + Sync + 'static) -> String {
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
