//! Tool arguments: decoding a host's JSON into a tool's parameter struct, and
//! the parameter shapes several tools share.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::outcome::{Refusal, RefusalCode, ToolOutcome};
use super::output::ToolOutput;

/// Decodes a tool call's JSON arguments into the tool's parameter struct.
/// Unknown fields and wrong types are `invalid_arguments`, with serde's reason.
/// A missing or `null` argument object reads as `{}`; anything else that is
/// not an object is `invalid_arguments` (serde would read an array by
/// position, which no tool's schema offers).
pub(crate) fn parse_arguments<P: DeserializeOwned>(arguments: Value) -> Result<P, Refusal> {
    let arguments = match arguments {
        Value::Null => Value::Object(serde_json::Map::new()),
        Value::Object(object) => Value::Object(object),
        other => {
            return Err(Refusal::new(
                RefusalCode::InvalidArguments,
                format!(
                    "invalid arguments: expected an object, got {}",
                    json_kind(&other)
                ),
            ));
        }
    };
    serde_json::from_value(arguments).map_err(|error| {
        Refusal::new(
            RefusalCode::InvalidArguments,
            format!("invalid arguments: {error}"),
        )
    })
}

/// Runs a tool over its decoded arguments ([`parse_arguments`]): a call
/// whose arguments do not decode is refused before `run`, so it costs no
/// disk access and no transcript decoding.
pub(crate) fn with_arguments<P: DeserializeOwned>(
    arguments: Value,
    run: impl FnOnce(P) -> ToolOutput,
) -> ToolOutput {
    match parse_arguments(arguments) {
        Ok(params) => run(params),
        Err(refusal) => ToolOutput::refusal(&refusal),
    }
}

/// What kind of JSON value `value` is, as a refusal names it.
pub(crate) fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A search `query`: one literal, or several combined with OR.
///
/// It decodes any array so that a bad element is refused as `invalid_query`
/// (by [`SearchQuery::literals`]) rather than as a decoding failure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub(crate) enum SearchQuery {
    /// One literal.
    One(String),
    /// Several literals, any of which may match.
    Many(Vec<Value>),
}

impl SearchQuery {
    /// The literals to match, refusing an empty array, a non-string element and
    /// an empty string (which would match everything).
    pub(crate) fn literals(&self) -> ToolOutcome<Vec<&str>> {
        let literals = match self {
            Self::One(one) => vec![one.as_str()],
            Self::Many(many) if many.is_empty() => {
                return Err(invalid_query(
                    "query must be a string or a non-empty array of strings",
                ));
            }
            Self::Many(many) => many
                .iter()
                .map(|element| element.as_str())
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| invalid_query("query array elements must be strings"))?,
        };
        if literals.iter().any(|literal| literal.is_empty()) {
            return Err(invalid_query(
                "query strings must be non-empty: an empty query matches everything",
            ));
        }
        Ok(literals)
    }
}

impl From<&str> for SearchQuery {
    fn from(query: &str) -> Self {
        Self::One(query.to_owned())
    }
}

impl From<Vec<&str>> for SearchQuery {
    fn from(queries: Vec<&str>) -> Self {
        Self::Many(queries.into_iter().map(Value::from).collect())
    }
}

impl JsonSchema for SearchQuery {
    fn schema_name() -> Cow<'static, str> {
        "SearchQuery".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "anyOf": [
                { "type": "string", "minLength": 1 },
                { "type": "array", "items": { "type": "string", "minLength": 1 }, "minItems": 1 }
            ]
        })
    }
}

fn invalid_query(message: &str) -> Refusal {
    Refusal::new(RefusalCode::InvalidQuery, message)
}

/// Refuses a value below `min` as `invalid_arguments`.
pub(crate) fn at_least(name: &str, value: Option<u32>, min: u32) -> ToolOutcome<()> {
    match value {
        Some(value) if value < min => Err(Refusal::new(
            RefusalCode::InvalidArguments,
            format!("{name} must be at least {min} (got {value})"),
        )),
        _ => Ok(()),
    }
}
