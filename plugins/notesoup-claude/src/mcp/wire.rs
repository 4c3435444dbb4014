//! JSON-RPC 2.0 as `notesoup mcp` reads and writes it, one message a line.
//!
//! A line is read in one pass into its members, each kept as the raw JSON
//! it was written as (borrowed from the line, nothing copied); the id is
//! echoed byte for byte, so an id past 64 bits, `1.0` or a string with
//! escapes comes back as sent. The parameters are parsed once, into the
//! values the server hands on.

use std::borrow::Cow;
use std::fmt;
use std::io;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::error::Category;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// JSON-RPC error codes used here.
pub mod code {
    /// The line is not JSON.
    pub const PARSE_ERROR: i32 = -32700;
    /// Not a JSON-RPC 2.0 request object.
    pub const INVALID_REQUEST: i32 = -32600;
    /// No such method.
    pub const METHOD_NOT_FOUND: i32 = -32601;
    /// Bad parameters (unknown tool, arguments not an object).
    pub const INVALID_PARAMS: i32 = -32602;
    /// A failure inside the server.
    pub const INTERNAL_ERROR: i32 = -32603;
    /// A protocol version the server does not implement.
    pub const UNSUPPORTED_PROTOCOL_VERSION: i32 = -32022;
}

/// A JSON-RPC error to send back.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RpcError {
    /// One of [`code`].
    pub code: i32,
    /// One sentence.
    pub message: String,
    /// Optional facts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl RpcError {
    /// An error without data.
    pub fn new(code: i32, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// `invalid params for <method>: <what>`.
    pub fn invalid_params(method: &str, what: &str) -> Self {
        Self::new(
            code::INVALID_PARAMS,
            format!("invalid params for {method}: {what}"),
        )
    }
}

/// A well-formed request.
#[derive(Debug)]
pub struct RpcRequest<'a> {
    /// The id exactly as written.
    pub id: &'a RawValue,
    /// The method.
    pub method: Cow<'a, str>,
    /// The parameters (none for absent or `null`).
    pub params: Option<Map<String, Value>>,
}

/// What one line is.
#[derive(Debug)]
pub enum Line<'a> {
    /// A request to serve.
    RpcRequest(RpcRequest<'a>),
    /// Not a usable request: answered with this error, under the request's
    /// id when it has a usable one, else `null`.
    Refused(Option<&'a RawValue>, RpcError),
    /// A notification or a stray response: nothing to answer.
    Nothing,
}

/// Reads one line (not blank). Members stay raw, so the id is echoed as
/// written and nothing is interpreted before it is needed.
pub fn read_line(line: &[u8]) -> Line<'_> {
    const EXPECTED: &str =
        "invalid request: expected jsonrpc \"2.0\", a string method and a string or number id";
    let invalid =
        |id, message: &str| Line::Refused(id, RpcError::new(code::INVALID_REQUEST, message));
    let message: Members<'_> = match serde_json::from_slice(line) {
        Ok(message) => message,
        Err(err) if err.classify() == Category::Data => {
            return invalid(
                None,
                "invalid request: expected one JSON-RPC 2.0 object (batches are not supported)",
            );
        }
        Err(err) => {
            return Line::Refused(
                None,
                RpcError::new(code::PARSE_ERROR, format!("parse error: {err}")),
            );
        }
    };
    let id = message.id;
    let valid_id = id.is_some_and(|id| matches!(first_byte(id), b'"' | b'-' | b'0'..=b'9'));
    let method = message.method.and_then(string_of);
    let jsonrpc = message
        .jsonrpc
        .is_some_and(|raw| raw.get() == r#""2.0""# || string_of(raw).as_deref() == Some("2.0"));
    if id.is_some() && !valid_id {
        return invalid(None, EXPECTED);
    }
    if !jsonrpc {
        return invalid(id, EXPECTED);
    }
    let Some(id) = id else {
        // A notification: nothing to answer, unless it is no request at all.
        return match method {
            Some(_) => Line::Nothing,
            None => invalid(None, EXPECTED),
        };
    };
    let Some(method) = method else {
        if message.response {
            // A response to a request this server never sends.
            return Line::Nothing;
        }
        return invalid(
            Some(id),
            "invalid request: a request with an id needs a string method",
        );
    };
    let params = match message.params.map(|raw| serde_json::from_str(raw.get())) {
        None | Some(Ok(Value::Null)) => None,
        Some(Ok(Value::Object(params))) => Some(params),
        Some(Ok(_)) => {
            return Line::Refused(
                Some(id),
                RpcError::new(code::INVALID_PARAMS, "params must be an object"),
            );
        }
        Some(Err(err)) => {
            return Line::Refused(
                Some(id),
                RpcError::new(
                    code::INVALID_PARAMS,
                    format!("params are not usable JSON: {err}"),
                ),
            );
        }
    };
    Line::RpcRequest(RpcRequest { id, method, params })
}

/// The kind of JSON value a raw value holds, from its first byte.
fn first_byte(raw: &RawValue) -> u8 {
    raw.get().as_bytes().first().copied().unwrap_or(b' ')
}

/// The string a raw value holds, borrowed when it has no escapes; `None`
/// for anything else (a lone surrogate escape included).
fn string_of(raw: &RawValue) -> Option<Cow<'_, str>> {
    match serde_json::from_str::<&str>(raw.get()) {
        Ok(text) => Some(Cow::Borrowed(text)),
        Err(_) => serde_json::from_str::<String>(raw.get())
            .ok()
            .map(Cow::Owned),
    }
}

/// The members of a message the server reads, raw. A repeated member keeps
/// its last value; members it does not read are skipped (still checked to
/// be JSON).
#[derive(Debug, Default)]
struct Members<'a> {
    jsonrpc: Option<&'a RawValue>,
    id: Option<&'a RawValue>,
    method: Option<&'a RawValue>,
    params: Option<&'a RawValue>,
    /// It has a `result` or an `error`.
    response: bool,
}

/// A member name, read without copying it.
enum Member {
    Jsonrpc,
    Id,
    Method,
    Params,
    Response,
    Other,
}

impl<'de> Deserialize<'de> for Member {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Name;
        impl Visitor<'_> for Name {
            type Value = Member;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<Member, E> {
                Ok(match name {
                    "jsonrpc" => Member::Jsonrpc,
                    "id" => Member::Id,
                    "method" => Member::Method,
                    "params" => Member::Params,
                    "result" | "error" => Member::Response,
                    _ => Member::Other,
                })
            }
        }
        deserializer.deserialize_identifier(Name)
    }
}

impl<'de> Deserialize<'de> for Members<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Object;
        impl<'de> Visitor<'de> for Object {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON-RPC 2.0 object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members<'de>, A::Error> {
                let mut members = Members::default();
                while let Some(member) = map.next_key::<Member>()? {
                    let value: &'de RawValue = map.next_value()?;
                    match member {
                        Member::Jsonrpc => members.jsonrpc = Some(value),
                        Member::Id => members.id = Some(value),
                        Member::Method => members.method = Some(value),
                        Member::Params => members.params = Some(value),
                        Member::Response => members.response = true,
                        Member::Other => {}
                    }
                }
                Ok(members)
            }
        }
        deserializer.deserialize_map(Object)
    }
}

/// Starts a success reply to `id` in `out`: the result's JSON goes next,
/// then [`end_result`].
pub fn start_result(out: &mut Vec<u8>, id: &RawValue) {
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(id.get().as_bytes());
    out.extend_from_slice(br#","result":"#);
}

/// Ends a reply begun with [`start_result`], its newline included.
pub fn end_result(out: &mut Vec<u8>) {
    out.extend_from_slice(b"}\n");
}

/// Writes an error reply to `id` (`None`: `null`) in `out`, its newline
/// included.
pub fn write_error(out: &mut Vec<u8>, id: Option<&RawValue>, error: &RpcError) -> io::Result<()> {
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(id.map_or("null", RawValue::get).as_bytes());
    out.extend_from_slice(br#","error":"#);
    serde_json::to_writer(&mut *out, error).map_err(io::Error::other)?;
    out.extend_from_slice(b"}\n");
    Ok(())
}

/// Writes `value` as JSON in `out`.
pub fn write_json<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) -> io::Result<()> {
    serde_json::to_writer(out, value).map_err(io::Error::other)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_written_with_an_escape_is_still_2_0() {
        let line = br#"{"jsonrpc":"2\u002e0","id":7,"method":"ping"}"#;
        let Line::RpcRequest(request) = read_line(line) else {
            panic!("refused: {:?}", read_line(line));
        };
        assert_eq!((request.id.get(), &*request.method), ("7", "ping"));
        let Line::Refused(id, error) = read_line(br#"{"jsonrpc":"2.1","id":7,"method":"ping"}"#)
        else {
            panic!("a version other than 2.0 is refused");
        };
        assert_eq!(
            (id.map(RawValue::get), error.code),
            (Some("7"), code::INVALID_REQUEST)
        );
    }
}
