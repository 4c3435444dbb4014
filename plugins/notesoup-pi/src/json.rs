//! JSON exactly as JavaScript's `JSON.stringify` writes it.
//!
//! Pi writes every session line with `JSON.stringify`, and its token estimators
//! measure `JSON.stringify(...).length` in UTF-16 code units. serde_json agrees
//! with JavaScript on structure and string escaping but not on numbers
//! (`1.0` vs `1`, `1e-7` vs `1e-7`, `0.000001` vs `1e-6`), so every line this
//! crate writes goes through [`JsFormatter`].

use std::io;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::ser::{Formatter, Serializer};

/// A serde_json formatter that writes numbers the way JavaScript's
/// `Number.prototype.toString` does (ECMAScript `Number::toString`).
#[derive(Debug, Clone, Copy, Default)]
pub struct JsFormatter;

impl Formatter for JsFormatter {
    fn write_f64<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f64) -> io::Result<()> {
        writer.write_all(js_number(value).as_bytes())
    }

    fn write_f32<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f32) -> io::Result<()> {
        writer.write_all(js_number(f64::from(value)).as_bytes())
    }
}

/// Serialises `value` as `JSON.stringify` would.
pub fn to_js_string<T: Serialize + ?Sized>(value: &T) -> Result<String, serde_json::Error> {
    let mut out = Vec::with_capacity(128);
    to_js_writer(&mut out, value)?;
    // serde_json only ever writes UTF-8.
    String::from_utf8(out).map_err(|err| serde::ser::Error::custom(err.to_string()))
}

/// Serialises `value` as `JSON.stringify` would, into `writer`.
pub fn to_js_writer<W: io::Write, T: Serialize + ?Sized>(
    writer: W,
    value: &T,
) -> Result<(), serde_json::Error> {
    let mut serializer = Serializer::with_formatter(writer, JsFormatter);
    value.serialize(&mut serializer)
}

/// [`JsFormatter`]'s numbers with `JSON.stringify(value, null, 2)`'s layout:
/// for printing what Pi would see, readable and without a second pass.
#[derive(Debug, Default)]
pub struct JsPrettyFormatter(serde_json::ser::PrettyFormatter<'static>);

macro_rules! delegate {
    ($($name:ident($($arg:ident: $ty:ty),*)),* $(,)?) => {
        $(
            fn $name<W: ?Sized + io::Write>(&mut self, writer: &mut W $(, $arg: $ty)*) -> io::Result<()> {
                self.0.$name(writer $(, $arg)*)
            }
        )*
    };
}

impl Formatter for JsPrettyFormatter {
    fn write_f64<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f64) -> io::Result<()> {
        JsFormatter.write_f64(writer, value)
    }

    fn write_f32<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f32) -> io::Result<()> {
        JsFormatter.write_f32(writer, value)
    }

    delegate!(
        begin_array(),
        end_array(),
        begin_array_value(first: bool),
        end_array_value(),
        begin_object(),
        end_object(),
        begin_object_key(first: bool),
        end_object_key(),
        begin_object_value(),
        end_object_value(),
    );
}

/// Serialises `value` as `JSON.stringify(value, null, 2)` would, into `writer`.
pub fn to_js_pretty_writer<W: io::Write, T: Serialize + ?Sized>(
    writer: W,
    value: &T,
) -> Result<(), serde_json::Error> {
    let mut serializer = Serializer::with_formatter(writer, JsPrettyFormatter::default());
    value.serialize(&mut serializer)
}

/// The length of `text` as JavaScript counts it: UTF-16 code units.
pub fn js_len(text: &str) -> usize {
    if text.is_ascii() {
        return text.len();
    }
    text.chars().map(char::len_utf16).sum()
}

/// `JSON.stringify(value).length`.
pub fn js_json_len<T: Serialize + ?Sized>(value: &T) -> usize {
    // Serialising a serde_json value or a plain data type cannot fail; a
    // failure would mean an unserialisable value, which Pi counts as
    // "[unserializable]".
    to_js_string(value).map_or("[unserializable]".len(), |json| js_len(&json))
}

/// Formats a finite or non-finite number as JavaScript's `String(number)`;
/// `JSON.stringify` writes non-finite numbers as `null`, which serde_json
/// already does before reaching the formatter.
pub fn js_number(value: f64) -> String {
    if value.is_nan() {
        return "NaN".into();
    }
    if value.is_infinite() {
        return if value > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    if value == 0.0 {
        // Both +0 and -0 print as "0".
        return "0".into();
    }
    let sign = if value < 0.0 { "-" } else { "" };
    // Rust's `{:e}` gives the shortest digits that round-trip, like V8.
    let exp_form = format!("{:e}", value.abs());
    let (mantissa, exponent) = exp_form.split_once('e').unwrap_or((exp_form.as_str(), "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let exponent: i32 = exponent.parse().unwrap_or(0);
    // ECMAScript: value = 0.d1d2…dk × 10^n.
    let k = digits.len() as i32;
    let n = exponent + 1;
    let mut out = String::with_capacity(digits.len() + 8);
    out.push_str(sign);
    if k <= n && n <= 21 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        out.push_str(&digits[..n as usize]);
        out.push('.');
        out.push_str(&digits[n as usize..]);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-n) as usize));
        out.push_str(&digits);
    } else {
        out.push_str(&digits[..1]);
        if k > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if n - 1 < 0 { '-' } else { '+' });
        out.push_str(&(n - 1).abs().to_string());
    }
    out
}

/// A struct for one of Pi's JSON objects, its fields in Pi's key order.
///
/// Pi's objects leave out a property that is `undefined`, and so do these:
/// a field written `pub name?: T` is an `Option<T>` whose key is absent when
/// it is `None` (and read as `None` when absent). `..entry` stands for a
/// session entry's `id`, `parentId` and `timestamp`, at the place Pi writes
/// them, and `..extra` for the keys notesoup does not read, kept so that
/// nothing a newer Pi wrote is lost. Everything else (attributes,
/// documentation, plain fields) is kept as written.
macro_rules! pi_object {
    ($(#[$meta:meta])* pub struct $name:ident { $($fields:tt)* }) => {
        $crate::json::pi_object!(@fields [$(#[$meta])* pub struct $name] [] $($fields)*);
    };
    (@fields $head:tt [$($done:tt)*]
        $(#[$attr:meta])* pub $field:ident ?: $ty:ty $(, $($rest:tt)*)?) => {
        $crate::json::pi_object!(@fields $head [$($done)*
            $(#[$attr])*
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub $field: Option<$ty>,
        ] $($($rest)*)?);
    };
    (@fields $head:tt [$($done:tt)*]
        $(#[$attr:meta])* pub $field:ident : $ty:ty $(, $($rest:tt)*)?) => {
        $crate::json::pi_object!(@fields $head [$($done)* $(#[$attr])* pub $field: $ty,]
            $($($rest)*)?);
    };
    (@fields $head:tt [$($done:tt)*] ..entry $(, $($rest:tt)*)?) => {
        $crate::json::pi_object!(@fields $head [$($done)*
            /// Entry id.
            pub id: String,
            /// Parent entry id; `None` for a root.
            pub parent_id: Option<String>,
            /// ISO time.
            pub timestamp: String,
        ] $($($rest)*)?);
    };
    (@fields $head:tt [$($done:tt)*] ..extra $(, $($rest:tt)*)?) => {
        $crate::json::pi_object!(@fields $head [$($done)*
            /// Unknown keys, kept in file order.
            #[serde(flatten)]
            pub extra: $crate::session::Extra,
        ] $($($rest)*)?);
    };
    (@fields [$($head:tt)*] [$($done:tt)*]) => {
        $($head)* { $($done)* }
    };
}
pub(crate) use pi_object;

/// Deserialises a field that JavaScript may write as a value or as `null`,
/// keeping the difference from an absent key: absent is `None` (through
/// `#[serde(default)]`), `null` is `Some(None)`.
pub(crate) fn nullable<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer).map(Some)
}

/// Deserialises an opaque JSON field so that an explicit `null` stays
/// `Some(Value::Null)` instead of collapsing into an absent key.
pub(crate) fn present<'de, D>(deserializer: D) -> Result<Option<serde_json::Value>, D::Error>
where
    D: Deserializer<'de>,
{
    serde_json::Value::deserialize(deserializer).map(Some)
}

/// Orders object keys the way a JavaScript object does: integer-like keys
/// (canonical array indices) first in ascending order, then the others in
/// insertion order.
pub(crate) fn js_object_order(
    map: serde_json::Map<String, serde_json::Value>,
) -> serde_json::Map<String, serde_json::Value> {
    if !map.keys().any(|key| array_index(key).is_some()) {
        return map;
    }
    let mut indexed: Vec<(u32, String, serde_json::Value)> = Vec::new();
    let mut named = serde_json::Map::new();
    for (key, value) in map {
        match array_index(&key) {
            Some(index) => indexed.push((index, key, value)),
            None => {
                named.insert(key, value);
            }
        }
    }
    indexed.sort_by_key(|(index, _, _)| *index);
    let mut ordered: serde_json::Map<String, serde_json::Value> = indexed
        .into_iter()
        .map(|(_, key, value)| (key, value))
        .collect();
    ordered.extend(named);
    ordered
}

/// A canonical array index: "0" or digits without a leading zero, below 2^32 - 1.
fn array_index(key: &str) -> Option<u32> {
    if key.is_empty()
        || (key.len() > 1 && key.starts_with('0'))
        || !key.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    key.parse::<u32>().ok().filter(|index| *index != u32::MAX)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn numbers_print_like_javascript() {
        let cases: &[(f64, &str)] = &[
            (0.0, "0"),
            (-0.0, "0"),
            (1.0, "1"),
            (-1.5, "-1.5"),
            (0.015, "0.015"),
            (0.000001, "0.000001"),
            (0.0000001, "1e-7"),
            (0.00000123, "0.00000123"),
            (1.5e-7, "1.5e-7"),
            (1733234400000.0, "1733234400000"),
            (1e21, "1e+21"),
            (1.5e21, "1.5e+21"),
            (123456789012345680000.0, "123456789012345680000"),
            (0.1 + 0.2, "0.30000000000000004"),
            (5e-324, "5e-324"),
            (f64::MAX, "1.7976931348623157e+308"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
            (f64::NAN, "NaN"),
        ];
        for (value, expect) in cases {
            assert_eq!(js_number(*value), *expect, "{value:e}");
        }
    }

    #[test]
    fn single_precision_numbers_print_like_javascript_too() {
        // serde_json alone writes `1.0` and `[\n  2.5,\n  1.0\n]`.
        assert_eq!(to_js_string(&[1.0_f32, 0.25]).unwrap(), "[1,0.25]");
        let mut pretty = Vec::new();
        to_js_pretty_writer(&mut pretty, &[2.5_f32, 1.0]).unwrap();
        assert_eq!(String::from_utf8(pretty).unwrap(), "[\n  2.5,\n  1\n]");
        let mut pretty = Vec::new();
        to_js_pretty_writer(&mut pretty, &serde_json::json!({"a": 1.0})).unwrap();
        assert_eq!(String::from_utf8(pretty).unwrap(), "{\n  \"a\": 1\n}");
    }

    #[test]
    fn lengths_count_utf16_units() {
        assert_eq!(js_len("abc"), 3);
        assert_eq!(js_len("é"), 1);
        assert_eq!(js_len("😀"), 2);
    }

    #[test]
    fn integer_like_keys_come_first() {
        let map: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(r#"{"b":1,"10":2,"a":3,"2":4,"01":5,"0":6}"#).unwrap();
        let ordered = js_object_order(map);
        let keys: Vec<&str> = ordered.keys().map(String::as_str).collect();
        assert_eq!(keys, ["0", "2", "10", "b", "a", "01"]);
    }
}
