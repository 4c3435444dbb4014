#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

use super::LazySession;
use crate::session::Entry;

const HEADER: &str = r#"{"type":"session","version":3,"id":"0197a1b2-0000-7000-8000-000000000001","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work"}"#;

/// Whether an entry counts as a message or a compaction hangs on its
/// `type` alone, whichever rules read its line: the structural scan (a
/// plain line) or the eager reader (a line the scan leaves to it, here by
/// an escape in its id or type), for an entry of Pi's shape or not. The
/// mirror reads the entries appended after the file by their type too.
#[test]
fn message_and_compaction_follow_the_type_on_both_paths() {
    let time = r#""timestamp":"2026-01-01T00:00:01.000Z""#;
    let user = r#""message":{"role":"user","content":"hi","timestamp":1}"#;
    // (line, its entry's type, read by the eager rules, of Pi's shape)
    let lines = [
        (
            format!(r#"{{"type":"message","id":"m1","parentId":null,{time},{user}}}"#),
            "message",
            false,
            true,
        ),
        (
            format!(r#"{{"type":"message","id":"m\u0032","parentId":"m1",{time},{user}}}"#),
            "message",
            true,
            true,
        ),
        (
            format!(r#"{{"type":"mess\u0061ge","id":"m3","parentId":"m2",{time},{user}}}"#),
            "message",
            true,
            true,
        ),
        (
            format!(
                r#"{{"type":"compaction","id":"c\u0034","parentId":"m3",{time},"summary":"s","firstKeptEntryId":"m3","tokensBefore":10}}"#
            ),
            "compaction",
            true,
            true,
        ),
        (
            format!(r#"{{"type":"message","id":"m\u0035","parentId":"c4",{time}}}"#),
            "message",
            true,
            false,
        ),
        (
            format!(r#"{{"type":"compaction","id":"c\u0036","parentId":"m5",{time},"summary":7}}"#),
            "compaction",
            true,
            false,
        ),
        (
            format!(r#"{{"type":"message","id":"m7","parentId":"c6",{time}}}"#),
            "message",
            false,
            false,
        ),
        (
            format!(r#"{{"type":"future_\u006bind","id":"f8","parentId":"m7",{time}}}"#),
            "future_kind",
            true,
            false,
        ),
        (
            format!(
                r#"{{"type":"custom","id":"c\u0039","parentId":"f8",{time},"customType":"x"}}"#
            ),
            "custom",
            true,
            true,
        ),
    ];
    let mut text = format!("{HEADER}\n");
    for (line, ..) in &lines {
        text.push_str(line);
        text.push('\n');
    }
    let session = LazySession::parse(text.into_bytes());
    assert_eq!(session.len(), lines.len());
    for (position, (line, kind, eager, shaped)) in lines.iter().enumerate() {
        // Only a line the eager rules read is decoded while indexing.
        assert_eq!(session.is_decoded(position), *eager, "{line}");
        assert_eq!(session.entry_type(position), *kind, "{line}");
        assert_eq!(session.is_message(position), *kind == "message", "{line}");
        assert_eq!(
            session.is_compaction(position),
            *kind == "compaction",
            "{line}"
        );
        assert_eq!(
            !matches!(session.entry(position), Entry::Unknown(_)),
            *shaped,
            "{line}"
        );
        assert_eq!(
            session.id(position),
            format!("{}{}", &kind[..1], position + 1)
        );
    }
    assert_eq!(session.parent_of(8), Some(7));
    assert_eq!(session.position_of("c4"), Some(3));
}
