//! A `context_with_system` line's summaries read straight from the line
//! (`summarized_event`) are what decoding the whole line and then its
//! payload's messages gives: the same event, the same summaries, and the
//! same refusal, which the whole decoding gives whenever the straight
//! reading refuses a line.

use serde_json::{Value, json};

use super::super::host::summarized_event;
use super::super::protocol::ShimMessage;
use super::super::summaries;
use crate::host::MessageSummary;

fn state() -> Value {
    json!({"sessionId": "s", "entriesFrom": 0, "entries": [], "cwd": "/w", "idle": true,
        "pendingMessages": false, "signalAborted": false,
        "settings": {"global": {}, "project": {}}, "projectTrusted": false})
}

/// The line as the shim writes it: `type`, then the body's `id`, `name`,
/// `payload` and `state`, in that order.
fn line(payload: &str) -> String {
    format!(
        r#"{{"type":"event","body":{{"id":7,"name":"context_with_system","payload":{payload},"state":{}}}}}"#,
        state()
    )
}

/// The whole line decoded, then its payload's messages as the handler
/// reads them.
fn decoded_whole(line: &str) -> Result<(ShimMessage, Vec<MessageSummary>), String> {
    let message: ShimMessage = serde_json::from_str(line).map_err(|error| error.to_string())?;
    let ShimMessage::Event(event) = &message else {
        return Err("not an event".to_owned());
    };
    let summaries = summaries(event.payload.clone())?
        .into_iter()
        .map(MessageSummary::from_json)
        .collect::<Result<Vec<_>, String>>()?;
    Ok((message, summaries))
}

/// Whether the line was read straight; either way, the reading agrees with
/// the whole decoding.
fn agrees(line: &str) -> bool {
    let Some(ShimMessage::Event(straight)) = summarized_event(line.as_bytes()) else {
        return false;
    };
    let (ShimMessage::Event(whole), summaries) = decoded_whole(line).expect("decodes whole") else {
        panic!("not an event");
    };
    assert_eq!(
        (straight.id, &straight.name, &straight.state),
        (whole.id, &whole.name, &whole.state),
        "{line}"
    );
    assert_eq!(straight.payload, Value::Null);
    assert_eq!(straight.summaries.as_ref(), Some(&summaries), "{line}");
    true
}

#[test]
fn the_shims_summaries_are_read_straight_from_the_line() {
    let payload = json!({"type": "context_with_system", "messages": [
        {"role": "user"},
        {"role": "assistant"},
        // Roles by number (`PLAIN_ROLES`): the user, a tool result, the last.
        0, 2, 5,
        {"role": "custom", "customType": "notesoup/boot",
            "details": {"windowId": "pcw:0195:root", "sessionId": "s", "other": 1}},
        {"role": "custom", "customType": 7, "details": "none"},
        {"role": "system", "content": "You are Pi.", "sections": {"a": "one"}, "timestamp": 1},
        {"role": "toolResult", "unasked": [1, 2, {"deep": true}]},
    ]});
    assert!(agrees(&line(&payload.to_string())));
    // A later duplicate key wins, as in the whole decoding.
    assert!(agrees(&line(
        r#"{"messages":[{"role":"user","customType":"a","role":"custom","customType":"b"}]}"#
    )));
    assert!(agrees(&line(
        r#"{"messages":[{"role":"system","content":"x","timestamp":1,"content":"y"}]}"#
    )));
    assert!(agrees(&line(r#"{"messages":[]}"#)));
    // More fields than a summary holds on its own, and a role of no
    // message of Pi's.
    assert!(agrees(&line(
        r#"{"messages":[{"a":1,"b":2,"customType":"x","role":"custom","c":[3],"details":{"windowId":"w"},"role":"other"}]}"#
    )));
    assert!(agrees(&line(
        r#"{"messages":[{"a":1,"b":2,"c":3,"d":4,"e":5,"role":"system","content":"x","timestamp":1}]}"#
    )));
    // A duplicate role: the later wins, in its first place.
    assert!(agrees(&line(
        r#"{"messages":[{"role":"user","content":"x","role":"system","timestamp":1}]}"#
    )));
}

/// A number stands for a message holding only its role, the role at that
/// index of `PLAIN_ROLES`.
#[test]
fn a_number_is_a_plain_role() {
    for (code, role) in crate::host::PLAIN_ROLES.iter().enumerate() {
        let line = line(&format!(r#"{{"messages":[{code}]}}"#));
        assert!(agrees(&line), "{line}");
        let (_, summaries) = decoded_whole(&line).expect("decodes whole");
        assert_eq!(
            summaries,
            [MessageSummary::from_json(json!({"role": role})).expect("a role alone")]
        );
    }
}

#[test]
fn a_role_read_otherwise_is_decoded_whole() {
    for payload in [
        // Not a string first, then one: the later wins in the whole decoding.
        r#"{"messages":[{"role":7,"role":"user"}]}"#,
        // An escaped role.
        r#"{"messages":[{"role":"\u0075ser"}]}"#,
    ] {
        let line = line(payload);
        assert!(summarized_event(line.as_bytes()).is_none(), "{line}");
        let (_, summaries) = decoded_whole(&line).expect("decodes whole");
        assert_eq!(summaries[0].role(), "user");
    }
}

#[test]
fn a_line_read_otherwise_is_decoded_whole() {
    let refused = [
        // An escaped key: the same summary, decoded whole.
        (r#"{"messages":[{"r\u006fle":"user"}]}"#, true),
        // A duplicate `messages`: the whole decoding keeps the later one.
        (
            r#"{"messages":[{"role":"x"}],"messages":[{"role":"user"}]}"#,
            true,
        ),
        // Refusals: the handler's, from the whole decoding.
        (r#"{"messages":[{"content":"no role"}]}"#, false),
        (r#"{"messages":[{"role":7}]}"#, false),
        (r#"{"messages":["not an object"]}"#, false),
        // A number that names no role, or is no index.
        (r#"{"messages":[6]}"#, false),
        (r#"{"messages":[-1]}"#, false),
        (r#"{"messages":[1.0]}"#, false),
        (r#"{"messages":[18446744073709551616]}"#, false),
        (r#"{"messages":{"0":{"role":"user"}}}"#, false),
        (
            r#"{"messages":[{"role":"system","content":7,"timestamp":1}]}"#,
            false,
        ),
        (r#"{"other":[]}"#, false),
    ];
    for (payload, decodes) in refused {
        let line = line(payload);
        assert!(summarized_event(line.as_bytes()).is_none(), "{line}");
        assert_eq!(decoded_whole(&line).is_ok(), decodes, "{line}");
    }
    // Nesting past serde_json's limit fails alike, counted from the line's root.
    let deep = format!(
        r#"{{"messages":[{{"role":"custom","details":{}1{}}}]}}"#,
        "[".repeat(130),
        "]".repeat(130)
    );
    let line = line(&deep);
    assert!(summarized_event(line.as_bytes()).is_none());
    assert!(decoded_whole(&line).is_err());
    // Another event, or the keys in another order, is left to the whole decoding.
    let other = line.replace("context_with_system", "context");
    assert!(summarized_event(other.as_bytes()).is_none());
    let reordered = format!(
        r#"{{"body":{{"id":7,"name":"context_with_system","payload":{{"messages":[]}},"state":{}}},"type":"event"}}"#,
        state()
    );
    assert!(summarized_event(reordered.as_bytes()).is_none());
    assert!(decoded_whole(&reordered).is_ok());
}
