//! The edit `context_with_system` answers over message summaries, applied
//! to Pi's messages, gives exactly what the handler gave when it read and
//! returned the whole messages: every sequence of up to four messages drawn
//! from system messages, boots (own, foreign, legacy, of a window), a
//! continuation, user and other messages.

use serde_json::{Map, Value, json};

use super::{is_boot_of, legacy_slice, refresh_root_boot, system_head, user_after_continuation};
use crate::host::{MessageSummary, SUMMARY_FIELDS, WHOLE_ROLES};
use crate::projection::current_system_message;
use crate::reset::Kind;
use crate::reset::window::{is_own_root_boot, root_window_id};
use crate::session::AgentMessage;

const SESSION: &str = "0123abcd-0000-4000-8000-000000000001";
const WINDOW: &str = "pcw:0123abcd:5eed0001";

/// The handler's message-level helpers as they were over whole messages.
mod whole {
    use super::*;

    fn custom_kind(message: &AgentMessage) -> Option<(Kind, Option<&Value>)> {
        match message {
            AgentMessage::Custom(custom) => {
                Kind::of(&custom.custom_type).map(|kind| (kind, custom.details.as_ref()))
            }
            _ => None,
        }
    }

    pub fn system_head(messages: &[AgentMessage]) -> Vec<AgentMessage> {
        current_system_message(messages)
            .map(AgentMessage::System)
            .into_iter()
            .collect()
    }

    pub fn legacy_slice(messages: &[AgentMessage], window_id: &str) -> Option<Vec<AgentMessage>> {
        let boot = messages
            .iter()
            .rposition(|m| crate::reset::is_boot_of(m, window_id))?;
        let mut sliced = system_head(&messages[..boot]);
        sliced.extend_from_slice(&messages[boot..]);
        Some(sliced)
    }

    pub fn user_after_continuation(messages: &[AgentMessage]) -> bool {
        let Some(continuation) = messages
            .iter()
            .rposition(|m| matches!(custom_kind(m), Some((Kind::Continuation, _))))
        else {
            return false;
        };
        messages[continuation + 1..]
            .iter()
            .any(|m| matches!(m, AgentMessage::User(_)))
    }

    pub fn refresh_root_boot(
        messages: &[AgentMessage],
        session_id: &str,
    ) -> Option<Vec<AgentMessage>> {
        let is_foreign = |message: &AgentMessage| matches!(custom_kind(message), Some((Kind::Boot, details)) if !is_own_root_boot(details, session_id));
        let has_own = messages.iter().any(|message| {
            matches!(custom_kind(message), Some((Kind::Boot, details)) if is_own_root_boot(details, session_id))
        });
        if !has_own || !messages.iter().any(is_foreign) {
            return None;
        }
        Some(
            messages
                .iter()
                .filter(|m| !is_foreign(m))
                .cloned()
                .collect(),
        )
    }
}

fn boot(custom_type: &str, details: Value) -> Value {
    json!({"role": "custom", "customType": custom_type, "content": "# Boot\nnotes",
        "display": false, "details": details, "timestamp": 3})
}

fn alphabet() -> Vec<AgentMessage> {
    let root = root_window_id(SESSION);
    [
        json!({"role": "system", "content": "You are Pi.", "sections": {"a": "one", "b": "two"},
            "timestamp": 1}),
        json!({"role": "system", "content": "", "sections": {"a": null, "c": "three"},
            "timestamp": 5, "extraKey": true}),
        json!({"role": "user", "content": "Do it.", "timestamp": 2}),
        json!({"role": "bashExecution", "command": "ls", "output": "a", "exitCode": 0,
            "cancelled": false, "truncated": false, "timestamp": 4}),
        boot(
            "notesoup/boot",
            json!({"windowId": root, "sessionId": SESSION, "more": [1, 2]}),
        ),
        boot(
            "notesoup/boot",
            json!({"windowId": "pcw:ffffffff:root", "sessionId": "ffffffff-other"}),
        ),
        boot("pi-context/boot", json!({"windowId": root})),
        boot(
            "notesoup/boot",
            json!({"windowId": WINDOW, "sessionId": SESSION}),
        ),
        boot("pi-context/boot", json!({"windowId": WINDOW})),
        boot("notesoup/boot", json!("not an object")),
        json!({"role": "custom", "customType": "notesoup/continuation", "content": "Go on.",
            "display": false, "timestamp": 6}),
        json!({"role": "custom", "customType": "other/boot", "content": "x", "display": true,
            "details": {"windowId": WINDOW}, "timestamp": 7}),
        json!({"role": "someday", "customType": "notesoup/boot", "details": {"windowId": WINDOW}}),
    ]
    .into_iter()
    .map(|value| serde_json::from_value(value).expect("a test message decodes"))
    .collect()
}

/// What the Pi package sends for `message` (`summarize` in the shim): the
/// summary fields, or the whole message for a whole role.
fn shim_summary(message: &AgentMessage) -> Value {
    let whole = serde_json::to_value(message).expect("a message encodes");
    if WHOLE_ROLES.contains(&whole["role"].as_str().unwrap_or("")) {
        return whole;
    }
    let mut picked = Map::new();
    for field in SUMMARY_FIELDS {
        let keys: Vec<&str> = field.split('.').collect();
        let mut value = &whole;
        let mut found = true;
        for key in &keys {
            match value.as_object().and_then(|object| object.get(*key)) {
                Some(inner) => value = inner,
                None => found = false,
            }
            if !found {
                break;
            }
        }
        if !found {
            continue;
        }
        let mut into = &mut picked;
        for key in &keys[..keys.len() - 1] {
            into = into
                .entry((*key).to_owned())
                .or_insert_with(|| Value::Object(Map::new()))
                .as_object_mut()
                .expect("an object");
        }
        into.insert((*keys.last().expect("a key")).to_owned(), value.clone());
    }
    Value::Object(picked)
}

fn sequences(alphabet: &[AgentMessage], longest: usize) -> Vec<Vec<AgentMessage>> {
    let mut all = vec![Vec::new()];
    let mut last = vec![Vec::new()];
    for _ in 0..longest {
        last = last
            .iter()
            .flat_map(|prefix: &Vec<AgentMessage>| {
                alphabet.iter().map(move |message| {
                    let mut next = prefix.clone();
                    next.push(message.clone());
                    next
                })
            })
            .collect();
        all.extend(last.iter().cloned());
    }
    all
}

#[test]
fn every_edit_applied_to_the_messages_is_what_the_whole_messages_gave() {
    let alphabet = alphabet();
    let mut checked = 0;
    for messages in sequences(&alphabet, 4) {
        let by_host: Vec<MessageSummary> = messages.iter().map(MessageSummary::of).collect();
        let by_shim: Vec<MessageSummary> = messages
            .iter()
            .map(|m| MessageSummary::from_json(shim_summary(m)).expect("a summary decodes"))
            .collect();
        assert_eq!(by_host, by_shim, "{messages:?}");
        let summaries = by_shim;
        for (message, summary) in messages.iter().zip(&summaries) {
            for window in [WINDOW, root_window_id(SESSION).as_str()] {
                assert_eq!(
                    is_boot_of(summary, window),
                    crate::reset::is_boot_of(message, window),
                    "{message:?}"
                );
            }
        }
        assert_eq!(
            refresh_root_boot(&summaries, SESSION).map(|edit| edit.apply(&messages)),
            whole::refresh_root_boot(&messages, SESSION),
            "refresh: {messages:?}"
        );
        assert_eq!(
            legacy_slice(&summaries, WINDOW).map(|edit| edit.apply(&messages)),
            whole::legacy_slice(&messages, WINDOW),
            "legacy: {messages:?}"
        );
        assert_eq!(
            system_head(&summaries).apply(&messages),
            whole::system_head(&messages),
            "system head: {messages:?}"
        );
        assert_eq!(
            user_after_continuation(&summaries),
            whole::user_after_continuation(&messages),
            "continuation: {messages:?}"
        );
        checked += 1;
    }
    assert_eq!(
        checked,
        (0..=4).map(|n| alphabet.len().pow(n)).sum::<usize>()
    );
}

#[test]
fn summaries_carry_no_content_but_system_messages() {
    for message in alphabet() {
        let summary = shim_summary(&message);
        let text = summary.to_string();
        if message.role() == "system" {
            assert_eq!(
                summary,
                serde_json::to_value(&message).expect("a message encodes")
            );
        } else {
            assert!(
                !text.contains("content") && !text.contains("Boot"),
                "{text}"
            );
            assert!(
                !text.contains("more") && !text.contains("command"),
                "{text}"
            );
        }
    }
}

#[test]
fn a_summary_that_is_not_an_object_with_a_role_is_refused() {
    for bad in [
        json!([]),
        json!("user"),
        json!({"customType": "notesoup/boot"}),
        json!({"role": 7}),
    ] {
        assert!(MessageSummary::from_json(bad).is_err());
    }
    // A system message is read whole: one that does not decode fails the
    // event, as the whole list did.
    let bad_system = json!({"role": "system", "content": 7, "timestamp": 1});
    assert!(MessageSummary::from_json(bad_system).is_err());
}
