//! `ToolOutcome<T>`: what every shared operation returns before it reaches a host.
//!
//! A refusal is bounded when it is built: its message is clipped to
//! [`ERROR_MESSAGE_MAX_CHARS`] code points and its details to
//! [`ERROR_DETAILS_MAX_BYTES`] bytes of compact JSON, so a refusal always fits a
//! response whatever input caused it.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use typeshare::typeshare;

use super::measure::json_bytes;
use super::{ERROR_DETAILS_MAX_BYTES, ERROR_MESSAGE_MAX_CHARS};
// Defined with the other shared wire types: the notes store refuses with
// these codes too, below the tools.
pub use crate::wire::RefusalCode;

/// The internal result of a shared operation: the data, or a refusal.
///
/// It never reaches the wire as such: [`crate::tools::ToolOutput`] flattens a
/// success to the data itself and a refusal to `{error, code, details?}`.
pub(crate) type ToolOutcome<T> = Result<T, Refusal>;

/// A bounded refusal: a stable code, one short message and optional details.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    code: RefusalCode,
    message: String,
    details: Option<Map<String, Value>>,
}

impl Refusal {
    /// A refusal without details. The message is clipped to
    /// `ERROR_MESSAGE_MAX_CHARS` code points.
    pub fn new(code: RefusalCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: clip_message(message.into()),
            details: None,
        }
    }

    /// Adds structured details. `details` must be a JSON object; anything else is
    /// wrapped as `{"value": details}`. Details over `ERROR_DETAILS_MAX_BYTES`
    /// of compact JSON become `{"truncated": true, "details_bytes": N}`.
    pub fn with_details(mut self, details: Value) -> Self {
        let object = match details {
            Value::Object(object) => object,
            other => Map::from_iter([("value".to_owned(), other)]),
        };
        self.details = Some(bound_details(object));
        self
    }

    /// The stable code.
    pub fn code(&self) -> RefusalCode {
        self.code
    }

    /// The (clipped) message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The (bounded) details, when there are any.
    pub fn details(&self) -> Option<&Map<String, Value>> {
        self.details.as_ref()
    }

    /// The refusal text: `error: <code>: <message>`, then ` <details JSON>` when
    /// there are details.
    pub fn render(&self) -> String {
        let mut text = format!("error: {}: {}", self.code, self.message);
        if let Some(details) = &self.details {
            text.push(' ');
            text.push_str(&Value::Object(details.clone()).to_string());
        }
        text
    }

    /// The flat wire form: `{error: <message>, code, details?}`.
    pub fn to_wire(&self) -> WireRefusal {
        WireRefusal {
            error: self.message.clone(),
            code: self.code,
            details: self.details.clone().map(Value::Object),
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render())
    }
}

impl std::error::Error for Refusal {}

/// A refusal as hosts and models see it on the wire.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WireRefusal {
    /// The refusal message.
    pub error: String,
    /// The stable refusal code.
    pub code: RefusalCode,
    /// Structured context: edit index, match line numbers, known window ids.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[typeshare(typescript(type = "Record<string, unknown>"))]
    pub details: Option<Value>,
}

fn clip_message(message: String) -> String {
    let Some((cut, _)) = message.char_indices().nth(ERROR_MESSAGE_MAX_CHARS) else {
        return message;
    };
    let omitted = message[cut..].chars().count();
    format!("{}…[truncated {omitted} chars]", &message[..cut])
}

fn bound_details(details: Map<String, Value>) -> Map<String, Value> {
    let bytes = json_bytes(&details);
    if bytes <= ERROR_DETAILS_MAX_BYTES {
        return details;
    }
    let mut marker = Map::new();
    marker.insert("truncated".to_owned(), Value::Bool(true));
    marker.insert("details_bytes".to_owned(), Value::from(bytes));
    marker
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn non_object_details_are_wrapped() {
        let refusal = Refusal::new(RefusalCode::NoMatch, "m").with_details(json!(3));
        assert_eq!(refusal.render(), r#"error: no_match: m {"value":3}"#);
    }
}
