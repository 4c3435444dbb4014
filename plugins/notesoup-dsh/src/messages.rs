//! The dsh `UserMessage` values notesoup asks the bundle to log.
//!
//! Every message notesoup adds carries `source.plugin = "notesoup"`, so the
//! log alone tells which window, notice or marker notesoup wrote. The bundle
//! appends these values verbatim.

use serde_json::{Value, json};

use crate::decode::{BOOT_SECTION, NOTESOUP_PLUGIN};

/// dsh bounds a notice's one-line summary to this many characters.
pub const NOTICE_SUMMARY_MAX_CHARS: usize = 120;

/// Why a reset happened, recorded on its marker.
#[typeshare::typeshare]
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResetOrigin {
    /// Requested by the model, the human or the compaction seam.
    Normal,
    /// The hard reserve or an overflow recovery.
    Forced,
}

impl ResetOrigin {
    /// The marker's `origin` value.
    pub fn as_str(self) -> &'static str {
        match self {
            ResetOrigin::Normal => "normal",
            ResetOrigin::Forced => "forced",
        }
    }
}

/// What a notesoup notice is, in `source.notice`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DshNotice {
    /// The budget reminder.
    Reminder,
    /// The budget warning (the automatic close-out).
    Warning,
    /// The manual close-out of `/fresh-window`.
    CloseOut,
    /// The greeting of a fresh window after a reset.
    Continuation,
}

impl DshNotice {
    /// The `source.notice` value.
    pub fn as_str(self) -> &'static str {
        match self {
            DshNotice::Reminder => "reminder",
            DshNotice::Warning => "warning",
            DshNotice::CloseOut => "close-out",
            DshNotice::Continuation => "continuation",
        }
    }

    /// Reads a `source.notice` value.
    pub fn parse(value: &str) -> Option<Self> {
        [
            DshNotice::Reminder,
            DshNotice::Warning,
            DshNotice::CloseOut,
            DshNotice::Continuation,
        ]
        .into_iter()
        .find(|k| k.as_str() == value)
    }
}

fn user_message(text: &str, source: Value) -> Value {
    json!({
        "role": "user",
        "id": uuid::Uuid::new_v4().to_string(),
        "content": [{"type": "text", "text": text}],
        "source": source,
    })
}

/// The reset marker: the next window's boot, as a snapshot-form context.
pub fn boot_marker(boot: &str, window_id: &str, origin: ResetOrigin) -> Value {
    user_message(
        boot,
        json!({
            "kind": "plugin",
            "plugin": NOTESOUP_PLUGIN,
            "form": "snapshot",
            "sections": [{"name": BOOT_SECTION, "text": boot}],
            "windowId": window_id,
            "origin": origin.as_str(),
        }),
    )
}

/// A notesoup notice: model-facing text plus a one-line summary for the UI.
pub fn notice(kind: DshNotice, text: &str, summary: &str) -> Value {
    let summary: String = if summary.chars().count() > NOTICE_SUMMARY_MAX_CHARS {
        let cut: String = summary.chars().take(NOTICE_SUMMARY_MAX_CHARS - 1).collect();
        format!("{cut}…")
    } else {
        summary.to_owned()
    };
    user_message(
        text,
        json!({
            "kind": "plugin",
            "plugin": NOTESOUP_PLUGIN,
            "form": "notice",
            "summary": summary,
            "notice": kind.as_str(),
        }),
    )
}

/// The human's own text carried into a fresh window verbatim.
pub fn human_prompt(text: &str) -> Value {
    user_message(text, json!({"kind": "user"}))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::SessionEvent;

    fn as_event(message: Value) -> SessionEvent {
        SessionEvent::test_event(0, "user/message", message, None)
    }

    #[test]
    fn marker_reads_back_as_a_notesoup_snapshot() {
        let marker = as_event(boot_marker("BOOT", "dsh:s:2", ResetOrigin::Forced));
        let source = marker.source().expect("source");
        assert!(source.is_notesoup());
        assert_eq!(source.form.as_deref(), Some("snapshot"));
        assert_eq!(source.window_id.as_deref(), Some("dsh:s:2"));
        assert_eq!(source.origin.as_deref(), Some("forced"));
        assert_eq!(source.section(BOOT_SECTION), Some("BOOT"));
        assert_eq!(marker.text(), "BOOT");
    }

    #[test]
    fn notice_summaries_are_bounded() {
        let long = "x".repeat(500);
        let message = notice(DshNotice::Warning, "text", &long);
        let summary = message["source"]["summary"].as_str().expect("summary");
        assert_eq!(summary.chars().count(), NOTICE_SUMMARY_MAX_CHARS);
        assert_eq!(message["source"]["notice"], "warning");
        assert_eq!(DshNotice::parse("close-out"), Some(DshNotice::CloseOut));
        assert_eq!(DshNotice::parse("other"), None);

        let exact = "y".repeat(NOTICE_SUMMARY_MAX_CHARS);
        let message = notice(DshNotice::Reminder, "text", &exact);
        assert_eq!(message["source"]["summary"], exact.as_str(), "kept whole");
        let over = "é".repeat(NOTICE_SUMMARY_MAX_CHARS + 1);
        let message = notice(DshNotice::Reminder, "text", &over);
        let cut = format!("{}…", "é".repeat(NOTICE_SUMMARY_MAX_CHARS - 1));
        assert_eq!(message["source"]["summary"], cut.as_str());
    }

    #[test]
    fn a_human_prompt_is_the_human_s_text_and_not_notesoup_s() {
        let prompt = as_event(human_prompt("go on"));
        let source = prompt.source().expect("source");
        assert_eq!(source.kind, "user");
        assert!(!source.is_notesoup());
        assert_eq!(prompt.text(), "go on");
        assert_eq!(prompt.data["role"], "user");
    }
}
