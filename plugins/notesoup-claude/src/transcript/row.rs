//! One row of a Claude Code transcript (JSONL), read tolerantly: only the
//! fields notesoup uses are typed, everything else is ignored, and a row
//! that does not parse is skipped by the caller rather than failing a read.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, SeqAccess, Visitor};
use serde_json::Value;

/// The model name Claude Code writes on rows it made up itself
/// ("No response requested."); they carry all-zero usage.
pub const SYNTHETIC_MODEL: &str = "<synthetic>";

/// A transcript row.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Row {
    /// `user`, `assistant`, `system`, `attachment`, or a bookkeeping kind.
    #[serde(rename = "type")]
    pub kind: String,
    /// For `system` rows: `compact_boundary`, `stop_hook_summary`, …
    pub subtype: Option<String>,
    /// Message rows have one; bookkeeping rows do not.
    pub uuid: Option<String>,
    /// The previous row of the thread (null at a root and after a boundary).
    pub parent_uuid: Option<String>,
    /// On a compact boundary: the last row before it.
    pub logical_parent_uuid: Option<String>,
    /// Subagent (sidechain) rows are not part of the main thread.
    pub is_sidechain: bool,
    /// Harness-made rows (caveats and the like).
    pub is_meta: bool,
    /// The summary row that follows a compact boundary.
    pub is_compact_summary: bool,
    /// ISO time the row was written.
    pub timestamp: Option<String>,
    /// The Claude session id.
    pub session_id: Option<String>,
    /// `user` and `assistant` rows: the API message.
    pub message: Option<Message>,
    /// `attachment` rows.
    pub attachment: Option<Attachment>,
    /// `system` rows: their text.
    pub content: Option<Value>,
    /// `assistant` rows: the model id the user asked for (may carry `[1m]`).
    pub requested_model: Option<String>,
    /// On a compact boundary: what it preserved (`None` also when it is
    /// not an object: the boundary still counts).
    #[serde(deserialize_with = "lenient")]
    pub compact_metadata: Option<CompactMetadata>,
}

impl Row {
    /// Parses one JSONL line; `None` for anything that is not a JSON object
    /// of the expected shape (garbage, a torn last line).
    pub fn parse(line: &[u8]) -> Option<Self> {
        serde_json::from_slice(line).ok()
    }

    /// A `system/compact_boundary` row.
    pub fn is_compact_boundary(&self) -> bool {
        self.kind == "system" && self.subtype.as_deref() == Some("compact_boundary")
    }

    /// An assistant row Claude Code made up itself.
    pub fn is_synthetic(&self) -> bool {
        self.message
            .as_ref()
            .is_some_and(|m| m.model.as_deref() == Some(SYNTHETIC_MODEL))
    }

    /// A main-thread assistant row from the model (not synthetic, not a
    /// sidechain).
    pub fn is_model_reply(&self) -> bool {
        self.kind == "assistant" && !self.is_sidechain && !self.is_synthetic()
    }

    /// The texts of a `hook_additional_context` attachment.
    pub fn hook_context(&self) -> Option<(&str, Vec<&str>)> {
        hook_context(self.attachment.as_ref()?)
    }
}

/// The API message of a `user` or `assistant` row.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Message {
    /// The API message id; several assistant rows may share one.
    pub id: Option<String>,
    /// The model that answered.
    pub model: Option<String>,
    /// A string (a typed prompt) or content blocks.
    pub content: MessageBlocks,
    /// Token usage of the request that produced this message.
    pub usage: Option<TokenUsage>,
}

/// Token usage of one API response.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct TokenUsage {
    /// Uncached input tokens.
    pub input_tokens: u64,
    /// Input tokens written to the cache.
    pub cache_creation_input_tokens: u64,
    /// Input tokens read from the cache.
    pub cache_read_input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
}

impl TokenUsage {
    /// The size of the next request: everything sent plus what came back.
    /// This is the figure Claude Code reports as `context_tokens`.
    pub fn context_tokens(&self) -> u64 {
        self.input_tokens
            .saturating_add(self.cache_creation_input_tokens)
            .saturating_add(self.cache_read_input_tokens)
            .saturating_add(self.output_tokens)
    }
}

/// The payload of an `attachment` row.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Attachment {
    /// `hook_additional_context`, `hook_success`, `environment`, …
    #[serde(rename = "type")]
    pub kind: String,
    /// For hook context: the injected texts.
    pub content: Option<Value>,
    /// For hook rows: the event (`SessionStart`, `UserPromptSubmit`, …).
    pub hook_event: Option<String>,
}

/// What a compact boundary kept of the old window. Each part is read on its
/// own: a part of another shape reads as malformed rather than losing the
/// boundary row.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct CompactMetadata {
    /// The kept segment by its ends (`preservedSegment`).
    #[serde(deserialize_with = "part")]
    pub preserved_segment: Option<Part<PreservedSegment>>,
    /// The kept rows listed (`preservedMessages`).
    #[serde(deserialize_with = "part")]
    pub preserved_messages: Option<Part<PreservedMessages>>,
    /// The context tokens Claude Code measured before compacting
    /// (`preTokens`); another shape reads as absent.
    #[serde(deserialize_with = "lenient")]
    pub pre_tokens: Option<u64>,
}

/// A part of [`CompactMetadata`] that was there (not null).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part<T> {
    /// Of the expected shape.
    Read(T),
    /// Of another shape.
    Malformed,
}

/// A field read as `T`, `None` when it has another shape.
fn lenient<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: serde::de::DeserializeOwned,
{
    Ok(serde_json::from_value(Value::deserialize(deserializer)?).ok())
}

/// A part read as `T`, [`Part::Malformed`] when it has another shape, and
/// `None` when it is null.
fn part<'de, D, T>(deserializer: D) -> Result<Option<Part<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: serde::de::DeserializeOwned,
{
    let value = Value::deserialize(deserializer)?;
    if value.is_null() {
        return Ok(None);
    }
    Ok(Some(
        serde_json::from_value(value).map_or(Part::Malformed, Part::Read),
    ))
}

/// The rows a compaction kept verbatim, by the ends of their chain: the
/// kept rows are the walk from `tail_uuid` up by `parentUuid` to
/// `head_uuid`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct PreservedSegment {
    /// The first kept row.
    pub head_uuid: Option<String>,
    /// The row the first kept row hangs off once relinked (the compact
    /// summary, or an id that names no row).
    pub anchor_uuid: Option<String>,
    /// The last kept row.
    pub tail_uuid: Option<String>,
}

/// The rows a compaction kept verbatim, listed.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PreservedMessages {
    /// As [`PreservedSegment::anchor_uuid`].
    #[serde(default)]
    pub anchor_uuid: Option<String>,
    /// The kept rows, oldest first.
    pub uuids: Vec<String>,
}

/// How a preserved boundary names its kept rows, as Claude Code 2.1.332's
/// loader reads it: the list when there is one, else the segment's ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kept {
    /// `preservedMessages.uuids`.
    Listed(Vec<String>),
    /// The walk from the tail up to the head.
    Walk {
        /// `preservedSegment.headUuid`.
        head: String,
        /// `preservedSegment.tailUuid`.
        tail: String,
    },
    /// Nothing that can be relinked (an empty or malformed list, a segment
    /// without its ends).
    Nothing,
}

/// What a compact boundary preserved: the anchor the kept rows hang off,
/// and the kept rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preserved {
    /// The anchor (`None` when the boundary names none).
    pub anchor: Option<String>,
    /// The kept rows.
    pub kept: Kept,
}

impl CompactMetadata {
    /// What the boundary preserved, `None` when it preserved nothing.
    pub fn preserved(&self) -> Option<Preserved> {
        let segment = match &self.preserved_segment {
            Some(Part::Read(segment)) => Some(segment),
            _ => None,
        };
        match &self.preserved_messages {
            Some(Part::Read(list)) => Some(Preserved {
                anchor: list.anchor_uuid.clone(),
                kept: if list.uuids.is_empty() {
                    Kept::Nothing
                } else {
                    Kept::Listed(list.uuids.clone())
                },
            }),
            Some(Part::Malformed) => Some(Preserved {
                anchor: segment.and_then(|s| s.anchor_uuid.clone()),
                kept: Kept::Nothing,
            }),
            None => {
                let segment = self.preserved_segment.as_ref()?;
                let Part::Read(segment) = segment else {
                    return Some(Preserved {
                        anchor: None,
                        kept: Kept::Nothing,
                    });
                };
                Some(Preserved {
                    anchor: segment.anchor_uuid.clone(),
                    kept: match (&segment.head_uuid, &segment.tail_uuid) {
                        (Some(head), Some(tail)) => Kept::Walk {
                            head: head.clone(),
                            tail: tail.clone(),
                        },
                        _ => Kept::Nothing,
                    },
                })
            }
        }
    }
}

/// A content block of a message: an object whose `type` names it, its
/// other fields each optional (read as [`BlockRef`] reads them).
#[derive(Debug, Clone)]
pub enum Block {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// A tool call.
    ToolUse {
        /// The `tool_use` id.
        id: String,
        /// The tool's name.
        name: String,
        /// Its arguments.
        input: Value,
    },
    /// A tool's result.
    ToolResult {
        /// The call it answers.
        tool_use_id: String,
        /// Its output text.
        content: ResultText,
        /// Whether the tool failed.
        is_error: bool,
    },
    /// Thinking, images, server tools and anything newer.
    Other,
}

impl<'de> Deserialize<'de> for Block {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        BlockRef::deserialize(deserializer).map(BlockRef::into_owned)
    }
}

/// A message's content as blocks: a string content (a typed prompt) is one
/// text block. Read as [`ContentRef`] reads it, its strings then owned.
#[derive(Debug, Clone, Default)]
pub struct MessageBlocks(pub Vec<Block>);

impl<'de> Deserialize<'de> for MessageBlocks {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let blocks = ContentRef::deserialize(deserializer)?.0;
        Ok(MessageBlocks(
            blocks.into_iter().map(BlockRef::into_owned).collect(),
        ))
    }
}

/// The text of a tool result's content: a string, or its parts joined by
/// newlines (text parts as their text, other parts named by their type).
/// Read as [`ResultTextRef`] reads it, then owned.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResultText(pub String);

impl<'de> Deserialize<'de> for ResultText {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        ResultTextRef::deserialize(deserializer).map(|text| ResultText(text.0.into_owned()))
    }
}

/// A string field read without a copy when the line holds it unescaped
/// (serde's own `Cow` copies inside an `Option`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Text<'a>(pub Cow<'a, str>);

impl<'a> Text<'a> {
    /// The text, owned.
    pub fn into_owned(self) -> String {
        self.0.into_owned()
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_str(StrFirst(PhantomData))
    }
}

impl<'de: 'a, 'a> ReadFromStr<'de> for Text<'a> {
    const EXPECTING: &'static str = "a string";

    fn from_str(text: Cow<'de, str>) -> Self {
        Text(text)
    }
}

/// A type whose value is read first of all from a string, borrowed from
/// the line when it needs no unescaping (through [`StrFirst`]); the other
/// shapes it may take are refused unless it reads them.
trait ReadFromStr<'de>: Sized {
    /// What is expected, for the errors.
    const EXPECTING: &'static str;

    /// The value of a string.
    fn from_str(text: Cow<'de, str>) -> Self;

    /// The value of a null.
    fn from_unit<E: de::Error>() -> Result<Self, E> {
        Err(E::invalid_type(de::Unexpected::Unit, &Self::EXPECTING))
    }

    /// The value of a list.
    fn from_seq<A: SeqAccess<'de>>(_seq: A) -> Result<Self, A::Error> {
        Err(de::Error::invalid_type(
            de::Unexpected::Seq,
            &Self::EXPECTING,
        ))
    }

    /// The value of an object.
    fn from_map<A: de::MapAccess<'de>>(_map: A) -> Result<Self, A::Error> {
        Err(de::Error::invalid_type(
            de::Unexpected::Map,
            &Self::EXPECTING,
        ))
    }
}

/// The visitor of a [`ReadFromStr`] type.
struct StrFirst<T>(PhantomData<T>);

impl<'de, T: ReadFromStr<'de>> Visitor<'de> for StrFirst<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(T::EXPECTING)
    }

    fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<T, E> {
        Ok(T::from_str(Cow::Borrowed(text)))
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<T, E> {
        Ok(T::from_str(Cow::Owned(text.to_owned())))
    }

    fn visit_string<E: de::Error>(self, text: String) -> Result<T, E> {
        Ok(T::from_str(Cow::Owned(text)))
    }

    fn visit_unit<E: de::Error>(self) -> Result<T, E> {
        T::from_unit()
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<T, A::Error> {
        T::from_seq(seq)
    }

    fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        T::from_map(map)
    }
}

/// A transcript row as the chain decode reads it: the fields and types of
/// [`Row`] (so exactly the same lines parse), its strings borrowed from the
/// line where they need no unescaping.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct RowRef<'a> {
    /// See [`Row::kind`].
    #[serde(rename = "type", borrow)]
    pub kind: Text<'a>,
    /// See [`Row::subtype`].
    #[serde(borrow)]
    pub subtype: Option<Text<'a>>,
    /// See [`Row::uuid`].
    #[serde(borrow)]
    pub uuid: Option<Text<'a>>,
    /// See [`Row::parent_uuid`].
    #[serde(borrow)]
    pub parent_uuid: Option<Text<'a>>,
    /// See [`Row::logical_parent_uuid`].
    #[serde(borrow)]
    pub logical_parent_uuid: Option<Text<'a>>,
    /// See [`Row::is_sidechain`].
    pub is_sidechain: bool,
    /// See [`Row::is_meta`].
    pub is_meta: bool,
    /// See [`Row::is_compact_summary`].
    pub is_compact_summary: bool,
    /// See [`Row::timestamp`].
    #[serde(borrow)]
    pub timestamp: Option<Text<'a>>,
    /// See [`Row::session_id`].
    #[serde(borrow)]
    pub session_id: Option<Text<'a>>,
    /// See [`Row::message`].
    #[serde(borrow)]
    pub message: Option<MessageRef<'a>>,
    /// See [`Row::attachment`].
    pub attachment: Option<Attachment>,
    /// See [`Row::content`].
    pub content: Option<Value>,
    /// See [`Row::requested_model`].
    #[serde(borrow)]
    pub requested_model: Option<Text<'a>>,
    /// See [`Row::compact_metadata`].
    #[serde(deserialize_with = "lenient")]
    pub compact_metadata: Option<CompactMetadata>,
}

impl<'a> RowRef<'a> {
    /// Parses one JSONL line as [`Row::parse`] does.
    pub fn parse(line: &'a [u8]) -> Option<Self> {
        serde_json::from_slice(line).ok()
    }

    /// [`RowRef::parse`] of a line already known to be UTF-8.
    pub fn parse_text(line: &'a str) -> Option<Self> {
        serde_json::from_str(line).ok()
    }

    /// A `system/compact_boundary` row.
    pub fn is_compact_boundary(&self) -> bool {
        self.kind.0 == "system"
            && self.subtype.as_ref().map(|s| s.0.as_ref()) == Some("compact_boundary")
    }

    /// An assistant row Claude Code made up itself.
    pub fn is_synthetic(&self) -> bool {
        self.message
            .as_ref()
            .and_then(|m| m.model.as_ref())
            .is_some_and(|model| model.0 == SYNTHETIC_MODEL)
    }

    /// What a compact boundary preserved.
    pub fn preserved(&self) -> Option<Preserved> {
        self.compact_metadata.as_ref()?.preserved()
    }

    /// The texts of a `hook_additional_context` attachment.
    pub fn hook_context(&self) -> Option<(&str, Vec<&str>)> {
        hook_context(self.attachment.as_ref()?)
    }
}

/// The API message of a [`RowRef`].
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct MessageRef<'a> {
    /// See [`Message::id`].
    #[serde(borrow)]
    pub id: Option<Text<'a>>,
    /// See [`Message::model`].
    #[serde(borrow)]
    pub model: Option<Text<'a>>,
    /// See [`Message::content`].
    #[serde(borrow)]
    pub content: ContentRef<'a>,
    /// See [`Message::usage`].
    pub usage: Option<TokenUsage>,
}

/// A content block of a [`MessageRef`], its strings borrowed where they
/// need no unescaping.
#[derive(Debug)]
pub enum BlockRef<'a> {
    /// Text.
    Text {
        /// The text.
        text: Text<'a>,
    },
    /// A tool call.
    ToolUse {
        /// The `tool_use` id.
        id: Text<'a>,
        /// The tool's name.
        name: Text<'a>,
        /// Its arguments.
        input: Value,
    },
    /// A tool's result.
    ToolResult {
        /// The call it answers.
        tool_use_id: Text<'a>,
        /// Its output text.
        content: ResultTextRef<'a>,
        /// Whether the tool failed.
        is_error: bool,
    },
    /// Thinking, images, server tools and anything newer.
    Other,
}

impl BlockRef<'_> {
    /// The block with its strings owned.
    pub fn into_owned(self) -> Block {
        match self {
            Self::Text { text } => Block::Text {
                text: text.into_owned(),
            },
            Self::ToolUse { id, name, input } => Block::ToolUse {
                id: id.into_owned(),
                name: name.into_owned(),
                input,
            },
            Self::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => Block::ToolResult {
                tool_use_id: tool_use_id.into_owned(),
                content: ResultText(content.0.into_owned()),
                is_error,
            },
            Self::Other => Block::Other,
        }
    }
}

/// A block is read field by field as it comes. Claude Code writes `type`
/// first, so its fields are read straight from the line; fields before the
/// `type` are held as values until it names the block. A block without a
/// string `type`, with a field twice, or with a field of the wrong type is
/// an error (its row does not parse), as a derived tagged enum would have
/// it; an unknown `type` is [`BlockRef::Other`].
impl<'de: 'a, 'a> Deserialize<'de> for BlockRef<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(BlockVisitor)
    }
}

struct BlockVisitor;

impl<'de> Visitor<'de> for BlockVisitor {
    type Value = BlockRef<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a content block")
    }

    fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut early: Vec<(Text<'de>, Value)> = Vec::new();
        let kind = loop {
            let Some(key) = map.next_key::<Text<'de>>()? else {
                return Err(de::Error::missing_field("type"));
            };
            if key.0 == "type" {
                break map.next_value::<Text<'de>>()?;
            }
            early.push((key, map.next_value()?));
        };
        let mut block = BlockFields::new(&kind.0);
        for (key, value) in early {
            block.read(&key.0, |field| field.read(HeldSource(value, PhantomData)))?;
        }
        while let Some(key) = map.next_key::<Text<'de>>()? {
            if key.0 == "type" {
                return Err(de::Error::duplicate_field("type"));
            }
            block.read(&key.0, |field| field.read(MapSource(&mut map)))?;
        }
        Ok(block.finish())
    }
}

/// The fields of one block as they are read.
enum BlockFields<'a> {
    Text {
        text: Option<Text<'a>>,
    },
    ToolUse {
        id: Option<Text<'a>>,
        name: Option<Text<'a>>,
        input: Option<Value>,
    },
    ToolResult {
        tool_use_id: Option<Text<'a>>,
        content: Option<ResultTextRef<'a>>,
        is_error: Option<bool>,
    },
    Other,
}

/// Where the next field's value is read from: the map, or a value held
/// from before the `type`.
trait FieldSource<'de> {
    type Error: de::Error;

    fn value<T: Deserialize<'de>>(self) -> Result<T, Self::Error>;
    fn skip(self) -> Result<(), Self::Error>;
}

/// One field's value, read into the slot its key names.
struct Field<'s, 'de> {
    slot: Slot<'s, 'de>,
    name: &'static str,
}

enum Slot<'s, 'de> {
    Text(&'s mut Option<Text<'de>>),
    Value(&'s mut Option<Value>),
    Result(&'s mut Option<ResultTextRef<'de>>),
    Bool(&'s mut Option<bool>),
    Ignored,
}

impl<'de> Field<'_, 'de> {
    fn read<S: FieldSource<'de>>(self, source: S) -> Result<(), S::Error> {
        fn put<T, E: de::Error>(
            slot: &mut Option<T>,
            value: T,
            name: &'static str,
        ) -> Result<(), E> {
            if slot.replace(value).is_some() {
                return Err(E::duplicate_field(name));
            }
            Ok(())
        }
        match self.slot {
            Slot::Text(slot) => put(slot, source.value()?, self.name),
            Slot::Value(slot) => put(slot, source.value()?, self.name),
            Slot::Result(slot) => put(slot, source.value()?, self.name),
            Slot::Bool(slot) => put(slot, source.value()?, self.name),
            Slot::Ignored => source.skip(),
        }
    }
}

struct MapSource<'m, A>(&'m mut A);

impl<'de, A: de::MapAccess<'de>> FieldSource<'de> for MapSource<'_, A> {
    type Error = A::Error;

    fn value<T: Deserialize<'de>>(self) -> Result<T, A::Error> {
        self.0.next_value()
    }

    fn skip(self) -> Result<(), A::Error> {
        self.0.next_value::<IgnoredAny>().map(|_| ())
    }
}

struct HeldSource<E>(Value, PhantomData<E>);

impl<'de, E: de::Error> FieldSource<'de> for HeldSource<E> {
    type Error = E;

    fn value<T: Deserialize<'de>>(self) -> Result<T, E> {
        T::deserialize(self.0).map_err(E::custom)
    }

    fn skip(self) -> Result<(), E> {
        Ok(())
    }
}

impl<'a> BlockFields<'a> {
    fn new(kind: &str) -> Self {
        match kind {
            "text" => Self::Text { text: None },
            "tool_use" => Self::ToolUse {
                id: None,
                name: None,
                input: None,
            },
            "tool_result" => Self::ToolResult {
                tool_use_id: None,
                content: None,
                is_error: None,
            },
            _ => Self::Other,
        }
    }

    /// Reads the field `key` with `read`, into its slot (an unknown key is
    /// skipped).
    fn read<E>(
        &mut self,
        key: &str,
        read: impl FnOnce(Field<'_, 'a>) -> Result<(), E>,
    ) -> Result<(), E> {
        let (slot, name) = match (self, key) {
            (Self::Text { text }, "text") => (Slot::Text(text), "text"),
            (Self::ToolUse { id, .. }, "id") => (Slot::Text(id), "id"),
            (Self::ToolUse { name, .. }, "name") => (Slot::Text(name), "name"),
            (Self::ToolUse { input, .. }, "input") => (Slot::Value(input), "input"),
            (Self::ToolResult { tool_use_id, .. }, "tool_use_id") => {
                (Slot::Text(tool_use_id), "tool_use_id")
            }
            (Self::ToolResult { content, .. }, "content") => (Slot::Result(content), "content"),
            (Self::ToolResult { is_error, .. }, "is_error") => (Slot::Bool(is_error), "is_error"),
            _ => (Slot::Ignored, ""),
        };
        read(Field { slot, name })
    }

    fn finish(self) -> BlockRef<'a> {
        match self {
            Self::Text { text } => BlockRef::Text {
                text: text.unwrap_or_default(),
            },
            Self::ToolUse { id, name, input } => BlockRef::ToolUse {
                id: id.unwrap_or_default(),
                name: name.unwrap_or_default(),
                input: input.unwrap_or_default(),
            },
            Self::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => BlockRef::ToolResult {
                tool_use_id: tool_use_id.unwrap_or_default(),
                content: content.unwrap_or_default(),
                is_error: is_error.unwrap_or_default(),
            },
            Self::Other => BlockRef::Other,
        }
    }
}

/// [`MessageBlocks`] with borrowed blocks.
#[derive(Debug, Default)]
pub struct ContentRef<'a>(pub Vec<BlockRef<'a>>);

impl<'de: 'a, 'a> Deserialize<'de> for ContentRef<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(StrFirst(PhantomData))
    }
}

impl<'de: 'a, 'a> ReadFromStr<'de> for ContentRef<'a> {
    const EXPECTING: &'static str = "a string or a list of content blocks";

    fn from_str(text: Cow<'de, str>) -> Self {
        ContentRef(vec![BlockRef::Text { text: Text(text) }])
    }

    fn from_unit<E: de::Error>() -> Result<Self, E> {
        Ok(ContentRef::default())
    }

    fn from_seq<A: SeqAccess<'de>>(mut seq: A) -> Result<Self, A::Error> {
        let mut blocks = Vec::new();
        while let Some(block) = seq.next_element()? {
            blocks.push(block);
        }
        Ok(ContentRef(blocks))
    }
}

/// [`ResultText`], borrowed when the content is one unescaped string.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResultTextRef<'a>(pub Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for ResultTextRef<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(StrFirst(PhantomData))
    }
}

impl<'de: 'a, 'a> ReadFromStr<'de> for ResultTextRef<'a> {
    const EXPECTING: &'static str = "a string or a list of result parts";

    fn from_str(text: Cow<'de, str>) -> Self {
        ResultTextRef(text)
    }

    fn from_unit<E: de::Error>() -> Result<Self, E> {
        Ok(ResultTextRef::default())
    }

    fn from_seq<A: SeqAccess<'de>>(mut seq: A) -> Result<Self, A::Error> {
        #[derive(Deserialize)]
        struct Part {
            #[serde(rename = "type", default)]
            kind: Option<String>,
            #[serde(default)]
            text: Option<String>,
        }

        let mut parts = Vec::new();
        while let Some(part) = seq.next_element::<Part>()? {
            parts.push(match part.text {
                Some(text) => text,
                None => format!("[{}]", part.kind.as_deref().unwrap_or("content")),
            });
        }
        Ok(ResultTextRef(Cow::Owned(parts.join("\n"))))
    }

    fn from_map<A: de::MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(ResultTextRef::default())
    }
}

/// The texts of a `hook_additional_context` attachment.
fn hook_context(attachment: &Attachment) -> Option<(&str, Vec<&str>)> {
    if attachment.kind != "hook_additional_context" {
        return None;
    }
    let texts = match &attachment.content {
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).collect(),
        Some(Value::String(text)) => vec![text.as_str()],
        _ => Vec::new(),
    };
    Some((attachment.hook_event.as_deref().unwrap_or(""), texts))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_parse_tolerantly() {
        let row = Row::parse(br#"{"type":"assistant","uuid":"u","isSidechain":false,"message":{"id":"m","model":"claude-x","content":[{"type":"text","text":"hi"},{"type":"thinking","thinking":"hm"},{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}],"usage":{"input_tokens":12,"cache_creation_input_tokens":30000,"cache_read_input_tokens":5000,"output_tokens":7,"service_tier":"standard"}},"unknownField":[1,2]}"#).unwrap();
        assert!(row.is_model_reply());
        let message = row.message.as_ref().unwrap();
        assert_eq!(message.usage.unwrap().context_tokens(), 35_019);
        let kinds: Vec<_> = message
            .content
            .0
            .iter()
            .map(|b| match b {
                Block::Text { .. } => "text",
                Block::ToolUse { .. } => "tool_use",
                Block::ToolResult { .. } => "tool_result",
                Block::Other => "other",
            })
            .collect();
        assert_eq!(kinds, ["text", "other", "tool_use"]);
        assert!(Row::parse(b"{\"type\":\"user\",\"message\":{\"con").is_none());
        assert!(Row::parse(b"garbage").is_none());
        let synthetic =
            Row::parse(br#"{"type":"assistant","message":{"model":"<synthetic>"}}"#).unwrap();
        assert!(!synthetic.is_model_reply());
        // Only a system row of the subtype is a boundary.
        let boundary = |line: &[u8]| Row::parse(line).unwrap().is_compact_boundary();
        assert!(boundary(
            br#"{"type":"system","subtype":"compact_boundary"}"#
        ));
        assert!(!boundary(br#"{"type":"system","subtype":"api_error"}"#));
        assert!(!boundary(
            br#"{"type":"user","subtype":"compact_boundary"}"#
        ));
    }

    #[test]
    fn hook_context_reads_its_texts() {
        let row = Row::parse(br#"{"type":"attachment","uuid":"a","attachment":{"type":"hook_additional_context","content":["one","two"],"hookEvent":"SessionStart"}}"#).unwrap();
        assert_eq!(
            row.hook_context(),
            Some(("SessionStart", vec!["one", "two"]))
        );
        let one = Row::parse(br#"{"type":"attachment","attachment":{"type":"hook_additional_context","content":"one","hookEvent":"SessionStart"}}"#).unwrap();
        assert_eq!(one.hook_context(), Some(("SessionStart", vec!["one"])));
        let other = Row::parse(br#"{"type":"attachment","attachment":{"type":"date"}}"#).unwrap();
        assert_eq!(other.hook_context(), None);
    }

    #[test]
    fn result_text_joins_text_blocks() {
        let parse = |json: &str| serde_json::from_str::<ResultText>(json).unwrap().0;
        assert_eq!(
            parse(
                r#"[{"type":"text","text":"a"},{"type":"image","source":{"data":"…"}},{"type":"text","text":"b"}]"#
            ),
            "a\n[image]\nb"
        );
        assert_eq!(parse(r#""plain""#), "plain");
        assert_eq!(parse("null"), "");
    }

    /// A tool result's output reads alike owned and borrowed: its text
    /// parts joined, other parts named, a string as itself, an object or
    /// null as no text (the row around it kept).
    #[test]
    fn tool_result_outputs_read_alike_owned_and_borrowed() {
        let outputs = [
            (
                r#"[{"type":"text","text":"a"},{"type":"image"}]"#,
                "a\n[image]",
            ),
            (r#""plain""#, "plain"),
            (r#"{"a":1}"#, ""),
            ("null", ""),
        ];
        for (output, text) in outputs {
            let line = format!(
                r#"{{"type":"user","uuid":"r","message":{{"content":[{{"type":"tool_result","tool_use_id":"t1","content":{output}}},{{"type":"text","text":"after"}}]}}}}"#
            );
            let owned = Row::parse(line.as_bytes()).unwrap();
            let blocks = &owned.message.as_ref().unwrap().content.0;
            assert!(
                matches!(&blocks[..], [Block::ToolResult { content, .. }, Block::Text { .. }] if content.0 == text),
                "{line}: {blocks:?}"
            );
            let borrowed = RowRef::parse(line.as_bytes()).unwrap();
            let blocks = &borrowed.message.as_ref().unwrap().content.0;
            assert!(
                matches!(&blocks[..], [BlockRef::ToolResult { content, .. }, BlockRef::Text { .. }] if content.0 == text),
                "{line}: {blocks:?}"
            );
        }
    }

    /// The borrowed row reads exactly the lines the owned one does, with
    /// the same fields, and borrows the strings that need no unescaping.
    #[test]
    fn borrowed_rows_read_what_rows_read() {
        let lines: &[&str] = &[
            r#"{"type":"user","uuid":"u","parentUuid":"p","isSidechain":false,"isMeta":true,"timestamp":"t","sessionId":"s","message":{"role":"user","content":"say \"hi\""}}"#,
            r#"{"type":"assistant","uuid":"a","message":{"id":"m","model":"<synthetic>","content":[{"type":"text","text":"x"},{"type":"tool_use","id":"t1","name":"Bash","input":{"b":1,"a":[2]}},{"type":"thinking","thinking":"hm"}],"usage":{"input_tokens":1}},"requestedModel":"r"}"#,
            r#"{"type":"user","uuid":"r","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"a"},{"type":"image"}],"is_error":true}]}}"#,
            r#"{"type":"system","subtype":"compact_boundary","uuid":"b","parentUuid":null,"logicalParentUuid":"l","content":"Compacted","compactMetadata":{"preservedSegment":{"anchorUuid":"an"}}}"#,
            r#"{"type":"attachment","uuid":"h","attachment":{"type":"hook_additional_context","content":"one","hookEvent":"SessionStart"}}"#,
            r#"{"type":"user","uuid":5}"#,
            r#"{"type":"user","sessionId":5}"#,
            r#"{"type":"user","uuid":"u","uuid":"v"}"#,
            r#"{"type":"user","message":{"content":[{"text":"no type"}]}}"#,
            r#"{"type":"user","message":{"content":[{"type":"text","text":5}]}}"#,
            r#"{"type":"user","message":{"usage":{"input_tokens":-1}}}"#,
            r#"{"type":"system","content":{"nested":[1e400]}}"#,
            r#"{"type":"user","message":{"content":5}}"#,
            r#"{"type":"user","message":{"content":[{"type":"tool_result","content":{"a":1}}]}}"#,
            r#"["not","a","row"]"#,
            "{\"type\":\"user\"",
        ];
        for line in lines {
            let (owned, borrowed) = (Row::parse(line.as_bytes()), RowRef::parse(line.as_bytes()));
            assert_eq!(owned.is_some(), borrowed.is_some(), "{line}");
            let (Some(owned), Some(borrowed)) = (owned, borrowed) else {
                continue;
            };
            let text = |t: &Option<Text<'_>>| t.as_ref().map(|t| t.0.to_string());
            assert_eq!(owned.kind, borrowed.kind.0, "{line}");
            assert_eq!(owned.uuid, text(&borrowed.uuid), "{line}");
            assert_eq!(owned.parent_uuid, text(&borrowed.parent_uuid), "{line}");
            assert_eq!(
                owned.logical_parent_uuid,
                text(&borrowed.logical_parent_uuid),
                "{line}"
            );
            assert_eq!(owned.timestamp, text(&borrowed.timestamp), "{line}");
            assert_eq!(
                (owned.is_sidechain, owned.is_meta, owned.is_compact_summary),
                (
                    borrowed.is_sidechain,
                    borrowed.is_meta,
                    borrowed.is_compact_summary
                ),
                "{line}"
            );
            assert_eq!(owned.is_compact_boundary(), borrowed.is_compact_boundary());
            assert_eq!(owned.is_synthetic(), borrowed.is_synthetic());
            assert_eq!(owned.hook_context(), borrowed.hook_context());
            assert_eq!(owned.content, borrowed.content);
            let preserved = owned
                .compact_metadata
                .as_ref()
                .and_then(CompactMetadata::preserved);
            assert_eq!(preserved, borrowed.preserved());
            let blocks = |row: &Row| -> Vec<String> {
                row.message
                    .iter()
                    .flat_map(|m| &m.content.0)
                    .map(|block| format!("{block:?}"))
                    .collect()
            };
            let borrowed_blocks: Vec<String> = borrowed
                .message
                .iter()
                .flat_map(|m| &m.content.0)
                .map(|block| match block {
                    BlockRef::Text { text } => format!("Text {{ text: {:?} }}", text.0),
                    BlockRef::ToolUse { id, name, input } => format!(
                        "ToolUse {{ id: {:?}, name: {:?}, input: {input:?} }}",
                        id.0, name.0
                    ),
                    BlockRef::ToolResult {
                        tool_use_id,
                        content,
                        is_error,
                    } => format!(
                        "ToolResult {{ tool_use_id: {:?}, content: ResultText({:?}), is_error: {is_error} }}",
                        tool_use_id.0, content.0
                    ),
                    BlockRef::Other => "Other".to_owned(),
                })
                .collect();
            assert_eq!(blocks(&owned), borrowed_blocks, "{line}");
        }
        let row = RowRef::parse(lines[0].as_bytes()).unwrap();
        assert!(matches!(row.uuid, Some(Text(Cow::Borrowed("u")))));
        let escaped = row.message.unwrap().content.0;
        assert!(
            matches!(&escaped[..], [BlockRef::Text { text: Text(Cow::Owned(text)) }] if text == "say \"hi\"")
        );
        let result: ResultTextRef<'_> = serde_json::from_str(r#""plain""#).unwrap();
        assert!(matches!(result.0, Cow::Borrowed("plain")));
        let parts: ResultTextRef<'_> =
            serde_json::from_str(r#"[{"type":"text","text":"a"},{"type":"image"}]"#).unwrap();
        assert_eq!(parts.0, "a\n[image]");
        let escaped: ResultTextRef<'_> = serde_json::from_str(r#""a\u0041""#).unwrap();
        assert!(matches!(escaped.0, Cow::Owned(ref text) if text == "aA"));
        let null: ResultTextRef<'_> = serde_json::from_str("null").unwrap();
        assert_eq!(null.0, "");
        let content: ContentRef<'_> = serde_json::from_str("null").unwrap();
        assert!(content.0.is_empty());
        let content: ContentRef<'_> = serde_json::from_str(r#""t\u0041""#).unwrap();
        assert!(matches!(&content.0[..], [BlockRef::Text { text }] if text.0 == "tA"));
        assert_eq!(Text(Cow::Borrowed("x")).into_owned(), "x");
    }

    /// A block is read as it comes, `type` first or not: the same fields,
    /// the same refusals, and the strings borrowed when `type` leads.
    #[test]
    fn blocks_read_their_fields_wherever_type_stands() {
        fn block(json: &str) -> serde_json::Result<BlockRef<'_>> {
            serde_json::from_str(json)
        }
        let shown = |json: &str| block(json).map(|b| format!("{:?}", b.into_owned()));
        let same = [
            (
                r#"{"type":"tool_result","tool_use_id":"t1","content":"out","is_error":true,"x":[1]}"#,
                r#"{"x":{"y":2},"content":"out","tool_use_id":"t1","type":"tool_result","is_error":true}"#,
            ),
            (
                r#"{"type":"tool_use","id":"t","name":"Bash","input":{"a":1}}"#,
                r#"{"input":{"a":1},"name":"Bash","id":"t","type":"tool_use"}"#,
            ),
            (
                r#"{"type":"text","text":"hi"}"#,
                r#"{"text":"hi","type":"text"}"#,
            ),
            (
                r#"{"type":"thinking","text":5}"#,
                r#"{"text":5,"type":"thinking"}"#,
            ),
        ];
        for (first, later) in same {
            assert_eq!(shown(first).unwrap(), shown(later).unwrap(), "{later}");
        }
        assert_eq!(
            shown(r#"{"type":"tool_result"}"#).unwrap(),
            r#"ToolResult { tool_use_id: "", content: ResultText(""), is_error: false }"#
        );
        assert_eq!(
            shown(r#"{"type":"tool_use"}"#).unwrap(),
            r#"ToolUse { id: "", name: "", input: Null }"#
        );
        assert_eq!(shown(r#"{"type":"text"}"#).unwrap(), r#"Text { text: "" }"#);
        let refused = [
            r#"{"text":"no type"}"#,
            r#"{"type":5,"text":"a"}"#,
            r#"{"type":"text","type":"text"}"#,
            r#"{"type":"text","text":"a","text":"b"}"#,
            r#"{"text":"a","type":"text","text":"b"}"#,
            r#"{"text":"a","text":"b","type":"text"}"#,
            r#"{"type":"tool_use","id":"a","id":"b"}"#,
            r#"{"type":"tool_use","name":"a","name":"b"}"#,
            r#"{"type":"tool_use","input":1,"input":2}"#,
            r#"{"type":"tool_result","tool_use_id":"a","tool_use_id":"b"}"#,
            r#"{"type":"tool_result","content":"a","content":"b"}"#,
            r#"{"type":"tool_result","is_error":true,"is_error":false}"#,
            r#"{"type":"tool_result","is_error":"yes"}"#,
            r#"{"is_error":"yes","type":"tool_result"}"#,
            r#"{"type":"text","text":null}"#,
            r#"["text","a"]"#,
            r#""text""#,
        ];
        for json in refused {
            assert!(block(json).is_err(), "{json}");
            assert!(serde_json::from_str::<Block>(json).is_err(), "{json}");
        }
        let not_a_map = block(r#""text""#).unwrap_err().to_string();
        assert!(
            not_a_map.contains("expected a content block"),
            "{not_a_map}"
        );
        // An unknown block skips its fields unread, repeated or not.
        assert!(matches!(
            block(r#"{"type":"image","source":{"data":"x"},"source":1}"#),
            Ok(BlockRef::Other)
        ));
        let lead = r#"{"type":"tool_result","tool_use_id":"t1","content":"out"}"#;
        assert!(matches!(
            block(lead).unwrap(),
            BlockRef::ToolResult {
                tool_use_id: Text(Cow::Borrowed("t1")),
                content: ResultTextRef(Cow::Borrowed("out")),
                ..
            }
        ));
    }

    /// A boundary's kept rows are its list when it has one, else the walk
    /// between its segment's ends; a part of another shape keeps the row
    /// and relinks nothing.
    #[test]
    fn preserved_rows_are_read_as_claude_codes_loader_reads_them() {
        let preserved = |meta: &str| {
            let line = format!(
                r#"{{"type":"system","subtype":"compact_boundary","uuid":"b","compactMetadata":{meta}}}"#
            );
            let row = Row::parse(line.as_bytes()).expect(&line);
            let borrowed = RowRef::parse(line.as_bytes()).expect(&line).preserved();
            let owned = row.compact_metadata.and_then(|m| m.preserved());
            assert_eq!(owned, borrowed, "{meta}");
            owned
        };
        let both = r#"{"preservedSegment":{"headUuid":"h","anchorUuid":"s","tailUuid":"t"},"preservedMessages":{"anchorUuid":"a","uuids":["h","t"],"allUuids":["h","t"]}}"#;
        assert_eq!(
            preserved(both),
            Some(Preserved {
                anchor: Some("a".into()),
                kept: Kept::Listed(vec!["h".into(), "t".into()]),
            })
        );
        assert_eq!(
            preserved(r#"{"preservedSegment":{"headUuid":"h","anchorUuid":"s","tailUuid":"t"}}"#),
            Some(Preserved {
                anchor: Some("s".into()),
                kept: Kept::Walk {
                    head: "h".into(),
                    tail: "t".into()
                },
            })
        );
        let nothing = |anchor: Option<&str>| {
            Some(Preserved {
                anchor: anchor.map(str::to_owned),
                kept: Kept::Nothing,
            })
        };
        assert_eq!(
            preserved(r#"{"preservedSegment":{"anchorUuid":"s"}}"#),
            nothing(Some("s"))
        );
        assert_eq!(
            preserved(r#"{"preservedMessages":{"anchorUuid":"a","uuids":[]}}"#),
            nothing(Some("a"))
        );
        assert_eq!(
            preserved(
                r#"{"preservedSegment":{"anchorUuid":"s"},"preservedMessages":{"uuids":[1]}}"#
            ),
            nothing(Some("s"))
        );
        assert_eq!(
            preserved(r#"{"preservedSegment":{"headUuid":5}}"#),
            nothing(None)
        );
        assert_eq!(
            preserved(r#"{"preservedSegment":null,"preservedMessages":null}"#),
            None
        );
        assert_eq!(preserved(r#"{"trigger":"manual"}"#), None);
        assert_eq!(preserved("7"), None);
    }

    #[test]
    fn string_content_is_one_text_block() {
        let content: MessageBlocks = serde_json::from_str(r#""typed""#).unwrap();
        assert!(matches!(&content.0[..], [Block::Text { text }] if text == "typed"));
        assert!(
            serde_json::from_str::<MessageBlocks>("null")
                .unwrap()
                .0
                .is_empty()
        );
    }
}
