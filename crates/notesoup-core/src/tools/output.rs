//! The one bounded result: a typed data value, its text, and its compact JSON,
//! both within [`TOOL_OUTPUT_MAX_BYTES`]. The JSON is serialized once, here,
//! and travels as [`CompactJson`]: a host writes it into its own message as it
//! is, never parsing it back into a value.

use std::fmt;
use std::ops::Deref;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

use super::TOOL_OUTPUT_MAX_BYTES;
use super::measure::json_bytes;
use super::outcome::{Refusal, RefusalCode, ToolOutcome};

/// A tool's success data: serializable as the flat wire result, and readable
/// as the model-facing text.
pub(crate) trait ToolData: Serialize {
    /// The model-facing text of this result.
    fn render(&self) -> String;
}

/// Compact JSON text, serialized once. It serializes as the JSON it holds
/// (into a string, a writer or a `serde_json::Value` alike), so a host can
/// embed it in its own message without parsing it; it derefs to the JSON text.
#[derive(Clone)]
pub struct CompactJson(Box<RawValue>);

impl CompactJson {
    /// Serializes `value` to compact JSON.
    ///
    /// # Errors
    /// When `value` cannot be serialized (a map with non-string keys, a
    /// failing `Serialize`).
    pub fn to_json<T: Serialize + ?Sized>(value: &T) -> Result<Self, serde_json::Error> {
        serde_json::value::to_raw_value(value).map(Self)
    }

    /// `null`.
    pub fn null() -> Self {
        Self(RawValue::NULL.to_owned())
    }

    /// The JSON text.
    pub fn as_str(&self) -> &str {
        self.0.get()
    }

    /// The JSON text, owned.
    pub fn into_string(self) -> String {
        String::from(Box::<str>::from(self.0))
    }

    /// The JSON as a `RawValue`, for hosts that embed it.
    pub fn as_raw(&self) -> &RawValue {
        &self.0
    }

    /// The JSON parsed into a value: for callers that must look inside it
    /// (tests, checks), never for passing it on.
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::from_str(self.as_str()).unwrap_or(serde_json::Value::Null)
    }
}

impl Deref for CompactJson {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl fmt::Debug for CompactJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for CompactJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq for CompactJson {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for CompactJson {}

impl PartialEq<str> for CompactJson {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for CompactJson {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl Serialize for CompactJson {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for CompactJson {
    /// Any JSON value; whitespace is kept as given.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Box::<RawValue>::deserialize(deserializer).map(Self)
    }
}

/// What a host hands back for one tool call: the rendered text, the flat JSON
/// result (the data itself, or `{error, code, details?}`) and whether it is a
/// refusal. Both `text` (as UTF-8) and `json` fit `TOOL_OUTPUT_MAX_BYTES`;
/// both were produced once, when the result was packaged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutput {
    /// The model-facing text.
    pub text: String,
    /// The compact JSON of the flat wire result, serialized once.
    pub json: CompactJson,
    /// True for a refusal.
    pub is_error: bool,
    /// The tool ends the agent's tool batch (`wipe_memory`).
    pub terminate: bool,
}

impl ToolOutput {
    /// The most bytes a result's text, and its JSON, may hold (32 KiB).
    pub const MAX_BYTES: usize = TOOL_OUTPUT_MAX_BYTES;

    /// Packages an outcome. A success that does not fit (a bug in the
    /// operation's own bounding) becomes an `output_too_large` refusal rather
    /// than an oversized response.
    #[cfg(test)]
    pub(crate) fn from_outcome<T: ToolData>(outcome: ToolOutcome<T>) -> Self {
        match outcome {
            Ok(data) => Self::success(&data),
            Err(refusal) => Self::refusal(&refusal),
        }
    }

    /// Packages success data, refusing instead when it does not fit.
    #[cfg(test)]
    pub(crate) fn success<T: ToolData>(data: &T) -> Self {
        match pack(data) {
            Ok(Some(output)) => output,
            Ok(None) => Self::refusal(&Refusal::new(RefusalCode::OutputTooLarge, RESULT_TOO_LARGE)),
            Err(refusal) => Self::refusal(&refusal),
        }
    }

    /// An operation that packaged its own result (with [`pack`], as the last
    /// step of its bounding), or its refusal: nothing is rendered, serialized
    /// or measured again.
    pub(crate) fn from_packed(outcome: ToolOutcome<ToolOutput>) -> Self {
        outcome.unwrap_or_else(|refusal| Self::refusal(&refusal))
    }

    /// Packages a refusal. Refusals are bounded when built, so they always fit.
    pub fn refusal(refusal: &Refusal) -> Self {
        let json = CompactJson::to_json(&refusal.to_wire()).unwrap_or_else(|_| {
            CompactJson::to_json(&serde_json::json!({
                "error": "unserializable refusal",
                "code": refusal.code().to_string(),
            }))
            .unwrap_or_else(|_| CompactJson::null())
        });
        Self {
            text: refusal.render(),
            json,
            is_error: true,
            terminate: false,
        }
    }

    /// A plain JSON answer that is its own text (the budget tools'
    /// protocol: no refusal shape, no structured content).
    pub fn plain_json(value: &serde_json::Value, terminate: bool) -> Self {
        let text = value.to_string();
        let json = CompactJson(
            RawValue::from_string(text.clone()).unwrap_or_else(|_| RawValue::NULL.to_owned()),
        );
        Self {
            text,
            json,
            is_error: false,
            terminate,
        }
    }
}

/// The `output_too_large` message of a result that does not fit.
pub(crate) const RESULT_TOO_LARGE: &str = "The result does not fit the response budget.";

/// Renders and serializes `data` once and packages it when both fit the
/// budget (`Ok(None)` when one does not): the one size check of a result.
/// A value that cannot be serialized is an `internal_error` refusal.
pub(crate) fn pack<T: ToolData>(data: &T) -> Result<Option<ToolOutput>, Refusal> {
    let output = package(data)?;
    if output.text.len() > TOOL_OUTPUT_MAX_BYTES || output.json.len() > TOOL_OUTPUT_MAX_BYTES {
        return Ok(None);
    }
    Ok(Some(output))
}

/// `data` rendered and serialized once, whatever its size. A value that
/// cannot be serialized is an `internal_error` refusal.
fn package<T: ToolData>(data: &T) -> Result<ToolOutput, Refusal> {
    let text = data.render();
    let json = CompactJson::to_json(data).map_err(|error| {
        Refusal::new(
            RefusalCode::InternalError,
            format!("the result could not be serialized: {error}"),
        )
    })?;
    Ok(ToolOutput {
        text,
        json,
        is_error: false,
        terminate: false,
    })
}

impl ToolOutput {
    /// `data` packaged without the response budget: for a person at a
    /// terminal, never for the agent.
    pub(crate) fn unbounded<T: ToolData>(data: &T) -> Self {
        package(data).unwrap_or_else(|refusal| Self::refusal(&refusal))
    }
}

/// [`pack`], or the `output_too_large` refusal `message` when it does not fit.
pub(crate) fn pack_or(data: &impl ToolData, message: &str) -> ToolOutcome<ToolOutput> {
    pack(data)?.ok_or_else(|| Refusal::new(RefusalCode::OutputTooLarge, message))
}

/// True when both the text and the compact JSON of `data` fit the budget.
pub(crate) fn fits<T: ToolData>(data: &T) -> bool {
    json_bytes(data) <= TOOL_OUTPUT_MAX_BYTES && data.render().len() <= TOOL_OUTPUT_MAX_BYTES
}
