//! The JSON Schemas of tool parameters and results, generated from their
//! Rust types and tidied for models.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::Value;

/// The parameter schema of `P`, self-contained and tidied for models: no
/// `$schema`, `title` or root description; no integer `format`s (such as
/// `uint32`, which some providers reject); a `oneOf` of string constants
/// becomes an `enum`; doc-comment line breaks inside a paragraph become spaces.
pub(crate) fn schema_of<P: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|settings| {
            settings.inline_subschemas = true;
            settings.meta_schema = None;
        })
        .into_generator();
    let mut schema = generator.into_root_schema_for::<P>().to_value();
    if let Value::Object(root) = &mut schema {
        root.shift_remove("title");
        root.shift_remove("description");
    }
    tidy(&mut schema);
    schema
}

fn tidy(schema: &mut Value) {
    match schema {
        Value::Object(object) => {
            let integer = match object.get("type") {
                Some(Value::String(kind)) => kind == "integer",
                Some(Value::Array(kinds)) => kinds.iter().any(|kind| kind == "integer"),
                _ => false,
            };
            if integer {
                object.shift_remove("format");
            }
            if let Some(constants) = object.get("oneOf").and_then(string_constants) {
                object.shift_remove("oneOf");
                object.insert("type".to_owned(), Value::from("string"));
                object.insert("enum".to_owned(), Value::Array(constants));
            }
            if let Some(Value::String(description)) = object.get_mut("description") {
                *description = unwrap_lines(description);
            }
            object.values_mut().for_each(tidy);
        }
        Value::Array(items) => items.iter_mut().for_each(tidy),
        _ => {}
    }
}

/// The constants of a `oneOf` made only of `{"type": "string", "const": …}`.
fn string_constants(one_of: &Value) -> Option<Vec<Value>> {
    one_of
        .as_array()?
        .iter()
        .map(|variant| match variant.get("const") {
            Some(Value::String(constant))
                if variant.get("type") == Some(&Value::from("string")) =>
            {
                Some(Value::from(constant.as_str()))
            }
            _ => None,
        })
        .collect()
}

fn unwrap_lines(text: &str) -> String {
    text.split("\n\n")
        .map(|paragraph| paragraph.split('\n').collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("\n\n")
}
