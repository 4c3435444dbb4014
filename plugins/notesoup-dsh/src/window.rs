//! Window identity on dsh: `dsh:<sessionId>:<n>`, numbered from 1, and its
//! recovery from the session log.
//!
//! A window other than the first begins at notesoup's reset marker: the
//! `user/message` whose source is `{kind: plugin, plugin: notesoup, form:
//! snapshot, windowId}` and whose text is that window's boot. The first
//! window's boot is the `notesoup:boot` prompt context, which dsh logs as a
//! section of its runtime-context snapshot. Recovery reads both, so a resumed
//! session keeps its window and the exact boot text the model already saw.

use crate::decode::{BOOT_SECTION, SYSTEM_PROMPT_PLUGIN, SessionEvent};

/// A dsh context-window id: `dsh:<sessionId>:<ordinal>`.
pub fn window_id(session_id: &str, ordinal: u64) -> String {
    format!("dsh:{session_id}:{ordinal}")
}

/// The ordinal of a window id of this session, if it is one.
pub fn parse_window_id(session_id: &str, id: &str) -> Option<u64> {
    let rest = id.strip_prefix("dsh:")?.strip_prefix(session_id)?;
    rest.strip_prefix(':')?.parse().ok().filter(|n| *n >= 1)
}

/// Where the current window's boot lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BootCarrier {
    /// The `notesoup:boot` prompt context, frozen to this text (the first
    /// window; `None` when dsh has not logged a boot yet).
    Context(Option<String>),
    /// The reset marker message (every later window); the prompt context
    /// stays empty so the boot is model-visible once.
    Marker,
}

/// One window of a session, as the log shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowSpan {
    /// 1 for the first window.
    pub ordinal: u64,
    /// `dsh:<sessionId>:<ordinal>`.
    pub id: String,
    /// The reset marker that opened it; `None` for the first window.
    pub marker_seq: Option<u64>,
    /// When it opened (the marker's time; the first event's for window 1).
    pub created_at: Option<i64>,
}

/// The windows of a session log, oldest first.
///
/// Markers that do not name a window of this session (a copied log, a
/// hand-edited source) still split windows, numbered after the previous one,
/// so the count never depends on their text.
pub fn windows(session_id: &str, events: &[SessionEvent]) -> Vec<WindowSpan> {
    let mut spans = vec![WindowSpan {
        ordinal: 1,
        id: window_id(session_id, 1),
        marker_seq: None,
        created_at: events.first().and_then(|e| e.time),
    }];
    for event in events {
        let Some(source) = event.source() else {
            continue;
        };
        if event.kind != "user/message"
            || !source.is_notesoup()
            || source.form.as_deref() != Some("snapshot")
        {
            continue;
        }
        let previous = spans.last().map_or(1, |w| w.ordinal);
        let named = source
            .window_id
            .as_deref()
            .and_then(|id| parse_window_id(session_id, id))
            .filter(|n| *n > previous);
        // A marker may name window u64::MAX; one after it has no number to
        // take, and two windows with one id would make history inconsistent,
        // so it opens none.
        let Some(ordinal) = named.or_else(|| previous.checked_add(1)) else {
            continue;
        };
        spans.push(WindowSpan {
            ordinal,
            id: window_id(session_id, ordinal),
            marker_seq: Some(event.seq),
            created_at: event.time,
        });
    }
    spans
}

/// The current window and its boot carrier, recovered from the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoveredWindow {
    /// The current (last) window.
    pub window: WindowSpan,
    /// Where its boot lives.
    pub boot: BootCarrier,
}

/// Recovers the current window: the last reset marker, or the first window
/// with the boot text dsh last logged in a runtime-context snapshot.
pub fn recover(session_id: &str, events: &[SessionEvent]) -> RecoveredWindow {
    let spans = windows(session_id, events);
    let window = spans.last().cloned().unwrap_or_else(|| WindowSpan {
        ordinal: 1,
        id: window_id(session_id, 1),
        marker_seq: None,
        created_at: None,
    });
    let boot = if window.marker_seq.is_some() {
        BootCarrier::Marker
    } else {
        BootCarrier::Context(retained_context_boot(events))
    };
    RecoveredWindow { window, boot }
}

/// The `notesoup:boot` section of the newest runtime-context snapshot.
fn retained_context_boot(events: &[SessionEvent]) -> Option<String> {
    events.iter().rev().find_map(|event| {
        if event.kind != "user/message" {
            return None;
        }
        let source = event.source()?;
        if source.plugin.as_deref() != Some(SYSTEM_PROMPT_PLUGIN) {
            return None;
        }
        source.section(BOOT_SECTION).map(str::to_owned)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::SurfaceOp;
    use serde_json::{Value, json};

    fn message(seq: u64, source: Value) -> SessionEvent {
        SessionEvent {
            kind: "user/message".into(),
            seq,
            time: Some(seq as i64 * 10),
            data: json!({"role": "user", "content": [{"type": "text", "text": "x"}], "source": source}),
            surface_op: Some(SurfaceOp::Append),
            source_event_seqs: None,
        }
    }

    #[test]
    fn ids_round_trip_for_their_own_session_only() {
        assert_eq!(window_id("session-a", 3), "dsh:session-a:3");
        assert_eq!(parse_window_id("session-a", "dsh:session-a:3"), Some(3));
        assert_eq!(parse_window_id("session-a", "dsh:session-b:3"), None);
        assert_eq!(parse_window_id("session-a", "dsh:session-a:0"), None);
        assert_eq!(parse_window_id("session-a", "claude:session-a:3"), None);
    }

    #[test]
    fn recovers_the_first_window_with_the_logged_boot() {
        let snapshot = json!({"kind": "plugin", "plugin": SYSTEM_PROMPT_PLUGIN, "form": "snapshot",
            "sections": [{"name": "notesoup:boot", "text": "BOOT 1"}, {"name": "sandbox:policy", "text": "p"}]});
        let events = [message(0, json!({"kind": "user"})), message(1, snapshot)];
        let found = recover("s", &events);
        assert_eq!(found.window.id, "dsh:s:1");
        assert_eq!(found.boot, BootCarrier::Context(Some("BOOT 1".into())));
        assert_eq!(recover("s", &[]).boot, BootCarrier::Context(None));
    }

    #[test]
    fn markers_open_windows_even_with_foreign_ids() {
        let marker = |id: &str| {
            json!({"kind": "plugin", "plugin": "notesoup", "form": "snapshot", "windowId": id,
                   "sections": [{"name": "notesoup:boot", "text": "B"}]})
        };
        let notice =
            json!({"kind": "plugin", "plugin": "notesoup", "form": "notice", "summary": "s"});
        let events = [
            message(0, json!({"kind": "user"})),
            message(1, marker("dsh:s:2")),
            message(2, notice),
            message(3, marker("dsh:other:9")),
        ];
        let spans = windows("s", &events);
        let ids: Vec<&str> = spans.iter().map(|w| w.id.as_str()).collect();
        assert_eq!(ids, ["dsh:s:1", "dsh:s:2", "dsh:s:3"]);
        assert_eq!(spans[2].marker_seq, Some(3));
        assert_eq!(spans[2].created_at, Some(30));
        let found = recover("s", &events);
        assert_eq!(found.window.ordinal, 3);
        assert_eq!(found.boot, BootCarrier::Marker);
    }

    #[test]
    fn the_highest_ordinal_does_not_overflow() {
        let marker = |id: &str| {
            json!({"kind": "plugin", "plugin": "notesoup", "form": "snapshot", "windowId": id,
                   "sections": [{"name": "notesoup:boot", "text": "B"}]})
        };
        let events = [
            message(0, marker(&format!("dsh:s:{}", u64::MAX))),
            message(1, marker("dsh:s:1")),
        ];
        let ordinals: Vec<u64> = windows("s", &events).iter().map(|w| w.ordinal).collect();
        assert_eq!(ordinals, [1, u64::MAX]);
    }
}
