//! Claude Code context-window ids: `claude:<sessionId>:<n>`.
//!
//! The root window of a `/clear` chain is always `claude:<notesSessionId>:1`
//! (startup opens window 1 in the chain's first session), so a root window id
//! also names the chain's notes session.

use std::fmt;

/// The prefix every Claude window id starts with.
const PREFIX: &str = "claude:";

/// A window: the Claude session it lives in and its ordinal in the chain.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WindowId {
    /// The Claude session id the window belongs to.
    pub session_id: String,
    /// 1 for the chain's root window, then +1 per compaction or `/clear`.
    pub ordinal: u64,
}

impl WindowId {
    /// A window of `session_id` with ordinal `ordinal`.
    pub fn new(session_id: impl Into<String>, ordinal: u64) -> Self {
        Self {
            session_id: session_id.into(),
            ordinal,
        }
    }

    /// Parses `claude:<sessionId>:<n>`; `None` for anything else.
    pub fn parse(text: &str) -> Option<Self> {
        let rest = text.strip_prefix(PREFIX)?;
        let (session_id, ordinal) = rest.rsplit_once(':')?;
        if session_id.is_empty() || session_id.contains(char::is_whitespace) {
            return None;
        }
        if ordinal.is_empty() || !ordinal.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let ordinal = ordinal.parse().ok().filter(|n| *n >= 1)?;
        Some(Self::new(session_id, ordinal))
    }
}

impl fmt::Display for WindowId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{PREFIX}{}:{}", self.session_id, self.ordinal)
    }
}

/// The boot line that names the live window; resume recovers the ordinal
/// from the last one in the transcript.
pub const CURRENT_WINDOW_LINE: &str = "Current context window id: ";
/// The boot line that names the chain's root window.
pub const FIRST_WINDOW_LINE: &str = "First context window id: ";

/// What a boot text says about its windows.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BootIds {
    /// `First context window id`.
    pub root: WindowId,
    /// `Current context window id`.
    pub current: WindowId,
}

/// Reads the window ids out of a rendered boot (or any text holding one).
/// The last boot in the text wins.
pub fn boot_ids(text: &str) -> Option<BootIds> {
    let mut root = None;
    let mut found = None;
    for line in text.lines() {
        if let Some(id) = line.strip_prefix(FIRST_WINDOW_LINE) {
            root = WindowId::parse(id.trim());
        } else if let Some(id) = line.strip_prefix(CURRENT_WINDOW_LINE)
            && let (Some(root), Some(current)) = (root.clone(), WindowId::parse(id.trim()))
        {
            found = Some(BootIds { root, current });
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, expect: Option<(&str, u64)>) {
        let got = WindowId::parse(text);
        assert_eq!(
            got.as_ref().map(|w| (w.session_id.as_str(), w.ordinal)),
            expect,
            "{text}"
        );
        if let Some(id) = got {
            assert_eq!(id.to_string(), text);
        }
    }

    #[test]
    fn window_ids_parse_and_print() {
        check("claude:abc-123:1", Some(("abc-123", 1)));
        check("claude:abc:42", Some(("abc", 42)));
        check("claude:abc:0", None);
        check("claude:abc:", None);
        check("claude::3", None);
        check("claude:abc:x1", None);
        check("claude:abc:+1", None);
        check("pcw:abc:root", None);
        check("claude:a b:1", None);
    }

    #[test]
    fn boot_ids_take_the_last_boot() {
        let text = "<context_window>\nAgent name: claude (brain: claude)\nFirst context window id: claude:s1:1\nCurrent context window id: claude:s1:1\n</context_window>\n…\n<context_window>\nFirst context window id: claude:s1:1\nCurrent context window id: claude:s2:3\nPrevious context window id: claude:s1:2\n</context_window>";
        let ids = boot_ids(text).unwrap();
        assert_eq!(ids.root, WindowId::new("s1", 1));
        assert_eq!(ids.current, WindowId::new("s2", 3));
        assert_eq!(boot_ids("no boot here"), None);
        assert_eq!(boot_ids("Current context window id: claude:s:2"), None);
    }
}
