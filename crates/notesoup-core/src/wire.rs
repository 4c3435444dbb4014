//! Wire: the serialized types hosts see, with JSON Schemas and TypeScript declarations.
//!
//! Every type a host or a host-side script exchanges with the core derives
//! `Serialize + Deserialize + JsonSchema` and carries `#[typeshare]`, wherever
//! it lives in the crate. `cargo xtask codegen` turns them into the committed
//! `generated/notesoup.d.ts` and `generated/schemas/*.json`. This module holds
//! the wire types that belong to no single area: the tool bindings, the
//! refusal codes (the notes store's and the tools'), and the ordered map
//! several results serialize.

use std::fmt;

use schemars::JsonSchema;
use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use typeshare::typeshare;

// Built from the tools' own definitions: `ToolBindings::plain` and
// `ToolBindings::named` live beside the tool table, in the tools module.
/// The tool names a host gives the model, as the boot protocol, the budget
/// texts and the drawer line mention them.
///
/// Each host binds the logical names to what its model actually calls: Pi and
/// dsh use the plain tool names ([`ToolBindings::plain`]); Claude Code uses
/// its MCP names and says which tools it lacks. The keys are exactly those of
/// the boot bindings: `notes, notesList, history, historyWindows, historyList,
/// historySearch, historyRead, remaining, wipe`.
#[typeshare]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolBindings {
    /// The notes tools as a family, in place of `notes_*`.
    pub notes: String,
    /// In place of `notes_list`.
    pub notes_list: String,
    /// The history tools as a family, in place of `history_*`.
    pub history: String,
    /// In place of `history_windows`.
    pub history_windows: String,
    /// In place of `history_list`.
    pub history_list: String,
    /// In place of `history_search`.
    pub history_search: String,
    /// In place of `history_read`.
    pub history_read: String,
    /// In place of `get_context_remaining`.
    pub remaining: String,
    /// In place of `wipe_memory`.
    pub wipe: String,
}

// The notes store refuses with the codes from `NotFound` to `InternalError`
// (`crate::notes::NoteError`); the tools add the rest. One list keeps a store
// refusal's code the code on the wire.
/// Every stable refusal code a tool can answer with.
#[typeshare]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RefusalCode {
    /// The note does not exist.
    NotFound,
    /// A rename target is a live note.
    AlreadyExists,
    /// An edit's `oldText` occurs more than once.
    AmbiguousEdit,
    /// An edit's `oldText` does not occur (or is empty).
    NoMatch,
    /// The request changes nothing.
    NothingToDo,
    /// A note or path exceeds a write-time limit.
    TooLarge,
    /// A write outside the writable homes, or a misused parameter combination.
    InvalidScope,
    /// An `origin` outside `user`, `self`, `external`.
    InvalidOrigin,
    /// A malformed note address.
    InvalidAddress,
    /// A malformed glob pattern.
    InvalidPattern,
    /// An empty or malformed search query.
    InvalidQuery,
    /// A read offset past the end of the text.
    InvalidOffset,
    /// The content holds a credential; nothing was written.
    SecretDetected,
    /// A filesystem failure.
    IoError,
    /// A failure that is a bug in notesoup.
    InternalError,
    /// A seq past the session's end, or one with no readable event.
    UnknownSeq,
    /// A seq that belongs to another branch of the session.
    NotOnBranch,
    /// A seq that is a tool result already shown inside its call.
    NotAnEvent,
    /// A `window_id` the session does not have.
    UnknownWindowId,
    /// Not even the smallest history page fits one response.
    PageTooLarge,
    /// Not even the smallest result fits one response.
    OutputTooLarge,
    /// Arguments that do not match the tool's parameter schema.
    InvalidArguments,
    /// A tool name this host does not offer.
    UnknownTool,
    /// A session note or the session's history, asked of a host that has no
    /// session yet.
    NoSession,
}

impl RefusalCode {
    /// The code as it appears on the wire and in refusal texts.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NotFound => "not_found",
            Self::AlreadyExists => "already_exists",
            Self::AmbiguousEdit => "ambiguous_edit",
            Self::NoMatch => "no_match",
            Self::NothingToDo => "nothing_to_do",
            Self::TooLarge => "too_large",
            Self::InvalidScope => "invalid_scope",
            Self::InvalidOrigin => "invalid_origin",
            Self::InvalidAddress => "invalid_address",
            Self::InvalidPattern => "invalid_pattern",
            Self::InvalidQuery => "invalid_query",
            Self::InvalidOffset => "invalid_offset",
            Self::SecretDetected => "secret_detected",
            Self::IoError => "io_error",
            Self::InternalError => "internal_error",
            Self::UnknownSeq => "unknown_seq",
            Self::NotOnBranch => "not_on_branch",
            Self::NotAnEvent => "not_an_event",
            Self::UnknownWindowId => "unknown_window_id",
            Self::PageTooLarge => "page_too_large",
            Self::OutputTooLarge => "output_too_large",
            Self::InvalidArguments => "invalid_arguments",
            Self::UnknownTool => "unknown_tool",
            Self::NoSession => "no_session",
        }
    }
}

impl fmt::Display for RefusalCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// String keys to values in a chosen order (first use, file order),
/// serialized as a JSON object. A map type would sort or hash the keys; the
/// order is part of what the model reads. Each use names its own JSON Schema
/// (see `ExtraFields` and `ToolCounts` in the tools).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct OrderedMap<V>(pub Vec<(String, V)>);

impl<V: Serialize> Serialize for OrderedMap<V> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, value) in &self.0 {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

impl<'de, V: Deserialize<'de>> Deserialize<'de> for OrderedMap<V> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EntriesVisitor<V>(std::marker::PhantomData<V>);

        impl<'de, V: Deserialize<'de>> Visitor<'de> for EntriesVisitor<V> {
            type Value = OrderedMap<V>;

            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("a JSON object")
            }

            fn visit_map<A: MapAccess<'de>>(
                self,
                mut access: A,
            ) -> Result<OrderedMap<V>, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = access.next_entry::<String, V>()? {
                    entries.push(entry);
                }
                Ok(OrderedMap(entries))
            }
        }

        deserializer.deserialize_map(EntriesVisitor(std::marker::PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn codes_serialize_as_their_text() {
        for code in [RefusalCode::NotFound, RefusalCode::PageTooLarge] {
            assert_eq!(
                serde_json::to_value(code).ok(),
                Some(Value::String(code.as_str().to_owned()))
            );
        }
    }

    #[test]
    fn an_ordered_map_keeps_its_order_both_ways() {
        let map = OrderedMap(vec![("b".to_owned(), 1u32), ("a".to_owned(), 2)]);
        let text = serde_json::to_string(&map).ok();
        assert_eq!(text.as_deref(), Some(r#"{"b":1,"a":2}"#));
        let back: Option<OrderedMap<u32>> = text.and_then(|text| serde_json::from_str(&text).ok());
        assert_eq!(back, Some(map));
    }
}
