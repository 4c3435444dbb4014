//! The one bounded result: a typed data value, its text, and its compact JSON,
//! both within [`TOOL_OUTPUT_MAX_BYTES`].

use std::io;

use serde::Serialize;

use super::TOOL_OUTPUT_MAX_BYTES;
use super::outcome::{Outcome, Refusal, RefusalCode};

/// A tool's success data: serializable as the flat wire result, and readable
/// as the model-facing text.
pub trait ToolData: Serialize {
    /// The model-facing text of this result.
    fn render(&self) -> String;
}

/// What a host hands back for one tool call: the rendered text, the flat JSON
/// result (the data itself, or `{error, code, details?}`) and whether it is a
/// refusal. Both `text` (as UTF-8) and `json` fit [`TOOL_OUTPUT_MAX_BYTES`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutput {
    /// The model-facing text.
    pub text: String,
    /// The compact JSON of the flat wire result.
    pub json: String,
    /// True for a refusal.
    pub is_error: bool,
    /// The tool ends the agent's tool batch (`wipe_memory`).
    pub terminate: bool,
}

impl ToolOutput {
    /// Packages an outcome. A success that does not fit (a bug in the
    /// operation's own bounding) becomes an `output_too_large` refusal rather
    /// than an oversized response.
    pub fn from_outcome<T: ToolData>(outcome: Outcome<T>) -> Self {
        match outcome {
            Ok(data) => Self::success(&data),
            Err(refusal) => Self::refusal(&refusal),
        }
    }

    /// Packages success data, refusing instead when it does not fit.
    pub fn success<T: ToolData>(data: &T) -> Self {
        let text = data.render();
        let json = match serde_json::to_string(data) {
            Ok(json) => json,
            Err(error) => {
                return Self::refusal(&Refusal::new(
                    RefusalCode::InternalError,
                    format!("the result could not be serialized: {error}"),
                ));
            }
        };
        if text.len() > TOOL_OUTPUT_MAX_BYTES || json.len() > TOOL_OUTPUT_MAX_BYTES {
            return Self::refusal(&Refusal::new(
                RefusalCode::OutputTooLarge,
                "The result does not fit the response budget.",
            ));
        }
        Self {
            text,
            json,
            is_error: false,
            terminate: false,
        }
    }

    /// Packages a refusal. Refusals are bounded when built, so they always fit.
    pub fn refusal(refusal: &Refusal) -> Self {
        Self {
            text: refusal.render(),
            json: serde_json::to_string(&refusal.to_wire()).unwrap_or_else(|_| {
                format!(
                    r#"{{"error":"unserializable refusal","code":"{}"}}"#,
                    refusal.code()
                )
            }),
            is_error: true,
            terminate: false,
        }
    }

    /// A plain JSON answer that is its own text (the budget tools'
    /// protocol: no refusal shape, no structured content).
    pub fn plain_json(value: &serde_json::Value, terminate: bool) -> Self {
        let json = value.to_string();
        Self {
            text: json.clone(),
            json,
            is_error: false,
            terminate,
        }
    }

    /// The flat result as a JSON value (for hosts that send structured content).
    pub fn structured(&self) -> serde_json::Value {
        serde_json::from_str(&self.json).unwrap_or(serde_json::Value::Null)
    }
}

/// True when both the text and the compact JSON of `data` fit the budget.
pub fn fits<T: ToolData>(data: &T) -> bool {
    json_bytes(data) <= TOOL_OUTPUT_MAX_BYTES && data.render().len() <= TOOL_OUTPUT_MAX_BYTES
}

/// Byte length of the compact JSON of `value`, measured without building it.
/// A value that cannot be serialized measures as `usize::MAX`, so it never fits.
pub(crate) fn json_bytes<T: Serialize + ?Sized>(value: &T) -> usize {
    let mut counter = ByteCounter(0);
    match serde_json::to_writer(&mut counter, value) {
        Ok(()) => counter.0,
        Err(_) => usize::MAX,
    }
}

struct ByteCounter(usize);

impl io::Write for ByteCounter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
