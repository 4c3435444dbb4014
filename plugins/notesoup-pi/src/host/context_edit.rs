//! `context_with_system` without the context: what the hook reads of each of
//! Pi's messages ([`MessageSummary`]) and what it answers ([`WindowEdit`]),
//! which the host applies to its own messages.

use std::borrow::Cow;
use std::ops::Range;

use serde_json::{Map, Value};

use crate::session::AgentMessage;

/// The fields of a message the `context_with_system` hook reads, as dotted
/// paths: the role, a custom message's type and a boot's window and session.
pub const SUMMARY_FIELDS: &[&str] = &[
    "role",
    "customType",
    "details.windowId",
    "details.sessionId",
];

/// The roles whose messages the hook reads whole: system messages, which
/// the system head replays (they are few: Pi adds one when the prompt or
/// the tools change).
pub const WHOLE_ROLES: &[&str] = &["system"];

/// The roles of Pi's messages (`AgentMessage`) of which the hook reads
/// nothing but the role: a message of one of them is sent as the role's
/// index here, whatever else it holds. Most of a long context's messages
/// are such (user, assistant and tool result messages), and a number costs
/// the shim, the pipe and the sidecar far less than an object a message.
pub const PLAIN_ROLES: &[&str] = &[
    "user",
    "assistant",
    "toolResult",
    "bashExecution",
    "branchSummary",
    "compactionSummary",
];

/// The role of Pi's custom messages, of which the hook reads the type and
/// a boot's window and session.
const CUSTOM_ROLE: &str = "custom";

/// `role`, borrowed when it is one of Pi's (`AgentMessage`): the
/// [`PLAIN_ROLES`], the custom role and the [`WHOLE_ROLES`].
fn interned(role: &str) -> Cow<'static, str> {
    match PLAIN_ROLES
        .iter()
        .chain([&CUSTOM_ROLE])
        .chain(WHOLE_ROLES)
        .find(|&&known| known == role)
    {
        Some(&known) => Cow::Borrowed(known),
        None => Cow::Owned(role.to_owned()),
    }
}

/// One of Pi's messages as the `context_with_system` hook reads it: its
/// [`SUMMARY_FIELDS`], or the whole message for the [`WHOLE_ROLES`].
#[derive(Debug, Clone, PartialEq)]
pub struct MessageSummary {
    /// A role of Pi's own messages is not copied.
    role: Cow<'static, str>,
    custom_type: Option<String>,
    details: Option<Value>,
    /// Boxed: a summary is small, a whole message is not.
    whole: Option<Box<AgentMessage>>,
}

impl MessageSummary {
    /// The summary of a whole message, as the Pi package would send it.
    pub fn of(message: &AgentMessage) -> Self {
        let role = interned(message.role());
        if WHOLE_ROLES.contains(&role.as_ref()) {
            return Self {
                role,
                custom_type: None,
                details: None,
                whole: Some(Box::new(message.clone())),
            };
        }
        let (custom_type, details) = match message {
            AgentMessage::Custom(custom) => {
                (Some(custom.custom_type.clone()), custom.details.as_ref())
            }
            AgentMessage::Unknown(map) => (
                map.get("customType")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                map.get("details"),
            ),
            _ => (None, None),
        };
        Self {
            role,
            custom_type,
            details: picked_details(details),
            whole: None,
        }
    }

    /// The summary a [`PLAIN_ROLES`] number stands for: the role alone.
    pub fn plain(code: u64) -> Result<Self, String> {
        let role = usize::try_from(code)
            .ok()
            .and_then(|code| PLAIN_ROLES.get(code))
            .ok_or_else(|| format!("a message summary names no role by {code}"))?;
        Ok(Self {
            role: Cow::Borrowed(role),
            custom_type: None,
            details: None,
            whole: None,
        })
    }

    /// A summary as the Pi package sent it (a message's [`SUMMARY_FIELDS`],
    /// a whole message of a [`WHOLE_ROLES`] role, or a [`PLAIN_ROLES`]
    /// number). Refuses anything but an object with a string `role` or
    /// such a number.
    pub fn from_json(value: Value) -> Result<Self, String> {
        let mut map = match value {
            Value::Object(map) => map,
            Value::Number(code) => {
                return code
                    .as_u64()
                    .ok_or_else(|| format!("a message summary names no role by {code}"))
                    .and_then(Self::plain);
            }
            _ => return Err("a message summary is not an object".to_owned()),
        };
        let role = match map.get("role") {
            Some(Value::String(role)) => interned(role),
            _ => return Err("a message summary has no role".to_owned()),
        };
        if WHOLE_ROLES.contains(&role.as_ref()) {
            let whole: AgentMessage = serde_json::from_value(Value::Object(map))
                .map_err(|error| format!("a {role} message does not decode: {error}"))?;
            return Ok(Self {
                role,
                custom_type: None,
                details: None,
                whole: Some(Box::new(whole)),
            });
        }
        let custom_type = match map.remove("customType") {
            Some(Value::String(custom_type)) => Some(custom_type),
            _ => None,
        };
        let details = picked_details(map.get("details"));
        Ok(Self {
            role,
            custom_type,
            details,
            whole: None,
        })
    }

    /// [`Self::from_json`] over a summary's fields in the order they came
    /// (a later duplicate key wins, as in a JSON object), its `role` the
    /// string `role`, read at `fields[role_at]` (whose value is left out),
    /// building the object only for a [`WHOLE_ROLES`] role.
    pub(crate) fn from_fields(
        fields: &mut [(&str, Value)],
        role: &str,
        role_at: usize,
    ) -> Result<Self, String> {
        if WHOLE_ROLES.contains(&role) {
            fields[role_at].1 = Value::String(role.to_owned());
            let map: Map<String, Value> = fields
                .iter_mut()
                .map(|(name, value)| ((*name).to_owned(), value.take()))
                .collect();
            return Self::from_json(Value::Object(map));
        }
        let last =
            |fields: &[(&str, Value)], key: &str| fields.iter().rposition(|(name, _)| *name == key);
        let details = picked_details(last(fields, "details").map(|at| &fields[at].1));
        let custom_type = match last(fields, "customType").map(|at| fields[at].1.take()) {
            Some(Value::String(custom_type)) => Some(custom_type),
            _ => None,
        };
        Ok(Self {
            role: interned(role),
            custom_type,
            details,
            whole: None,
        })
    }

    /// The message's `role`.
    pub fn role(&self) -> &str {
        &self.role
    }

    /// A custom message's `customType` (`role` `custom`).
    pub fn custom_type(&self) -> Option<&str> {
        (self.role == "custom")
            .then_some(self.custom_type.as_deref())
            .flatten()
    }

    /// A custom message's `details`, holding only `windowId` and
    /// `sessionId`.
    pub fn details(&self) -> Option<&Value> {
        self.details.as_ref()
    }

    /// The whole message, for a [`WHOLE_ROLES`] role.
    pub fn whole(&self) -> Option<&AgentMessage> {
        self.whole.as_deref()
    }
}

/// `details` with only the `details.*` fields of [`SUMMARY_FIELDS`]; none
/// when it holds none of them.
fn picked_details(details: Option<&Value>) -> Option<Value> {
    let details = details?.as_object()?;
    let picked: Map<String, Value> = SUMMARY_FIELDS
        .iter()
        .filter_map(|path| path.strip_prefix("details."))
        .filter_map(|key| Some((key.to_owned(), details.get(key)?.clone())))
        .collect();
    (!picked.is_empty()).then_some(Value::Object(picked))
}

/// What `context_with_system` makes of Pi's messages: the `head` (the
/// replayed system message), then the messages in each `keep` range, in
/// order. The host applies it to its own messages ([`WindowEdit::apply`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WindowEdit {
    /// A message put first: the replayed system head.
    pub head: Option<AgentMessage>,
    /// Index ranges of Pi's messages kept, in order.
    pub keep: Vec<Range<usize>>,
}

impl WindowEdit {
    /// Only the head.
    pub fn head_only(head: Option<AgentMessage>) -> Self {
        Self {
            head,
            keep: Vec::new(),
        }
    }

    /// The edited messages: the head, then the kept ranges (each cut to
    /// `messages`).
    pub fn apply(&self, messages: &[AgentMessage]) -> Vec<AgentMessage> {
        let kept = self.keep.iter().flat_map(|range| {
            let start = range.start.min(messages.len());
            &messages[start..range.end.clamp(start, messages.len())]
        });
        self.head.iter().chain(kept).cloned().collect()
    }
}
