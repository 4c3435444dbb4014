//! The ordered drafts of a reset boundary.

use serde_json::json;

use super::kinds::Kind;
use crate::host::SessionBoundaryDraft;
use crate::projection::MarkerOrigin;
use crate::session::{AgentMessage, Content};

/// The marker's `origin` string.
pub fn origin_str(origin: MarkerOrigin) -> &'static str {
    match origin {
        MarkerOrigin::Normal => "normal",
        MarkerOrigin::Forced => "forced",
    }
}

/// A boot custom message whose `details.windowId` is `window_id`.
pub(crate) fn is_boot_of(message: &AgentMessage, window_id: &str) -> bool {
    match message {
        AgentMessage::Custom(custom) => {
            Kind::Boot.matches(&custom.custom_type)
                && custom
                    .details
                    .as_ref()
                    .and_then(|d| d.get("windowId"))
                    .and_then(serde_json::Value::as_str)
                    == Some(window_id)
        }
        _ => false,
    }
}

/// A boot's details: `{windowId, sessionId}`.
pub fn boot_details(window_id: &str, session_id: &str) -> serde_json::Value {
    json!({"windowId": window_id, "sessionId": session_id})
}

/// What one boundary writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Boundary<'a> {
    /// The fresh window's id.
    pub window_id: &'a str,
    /// The session id recorded in the boot.
    pub session_id: &'a str,
    /// Why the window was reset.
    pub origin: MarkerOrigin,
    /// The fresh window's boot text.
    pub boot: &'a str,
    /// The continuation text.
    pub continuation: &'a str,
    /// `/fresh-window <text>`, carried verbatim and visible.
    pub prompt: Option<&'a str>,
}

impl Boundary<'_> {
    /// The drafts in order: the retain-none checkpoint, the marker
    /// `{windowId, origin}`, the hidden boot, the hidden continuation, and
    /// the visible reset prompt when the command carried text.
    pub fn drafts(&self) -> Vec<SessionBoundaryDraft> {
        let mut drafts = vec![
            SessionBoundaryDraft::retain_none_checkpoint(),
            SessionBoundaryDraft::Custom {
                custom_type: Kind::ResetMarker.custom_type().to_owned(),
                data: Some(json!({"windowId": self.window_id, "origin": origin_str(self.origin)})),
            },
            SessionBoundaryDraft::CustomMessage {
                custom_type: Kind::Boot.custom_type().to_owned(),
                content: Content::Text(self.boot.to_owned()),
                display: false,
                details: Some(boot_details(self.window_id, self.session_id)),
            },
            SessionBoundaryDraft::CustomMessage {
                custom_type: Kind::Continuation.custom_type().to_owned(),
                content: Content::Text(self.continuation.to_owned()),
                display: false,
                details: None,
            },
        ];
        if let Some(prompt) = self.prompt {
            drafts.push(SessionBoundaryDraft::CustomMessage {
                custom_type: Kind::ResetPrompt.custom_type().to_owned(),
                content: Content::Text(prompt.to_owned()),
                display: true,
                details: None,
            });
        }
        drafts
    }
}
