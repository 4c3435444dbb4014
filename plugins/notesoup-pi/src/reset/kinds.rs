//! notesoup's custom types on Pi, and their legacy `pi-context/` names.

/// The kinds of entries notesoup writes into a Pi session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `notesoup/boot`: the hidden boot of a window, `details {windowId, sessionId}`.
    Boot,
    /// `notesoup/guidance`: the hidden budget reminder.
    Guidance,
    /// `notesoup/warning`: the hidden close-out warning.
    Warning,
    /// `notesoup/manual-wipe`: the hidden manual close-out prompt.
    ManualWipe,
    /// `notesoup/reset-marker`: a custom entry `{windowId, origin}`.
    ResetMarker,
    /// `notesoup/continuation`: the hidden greeting of a fresh window.
    Continuation,
    /// `notesoup/reset-prompt`: the visible `/fresh-window <text>`.
    ResetPrompt,
}

impl Kind {
    /// The current custom type.
    pub fn custom_type(self) -> &'static str {
        match self {
            Self::Boot => "notesoup/boot",
            Self::Guidance => "notesoup/guidance",
            Self::Warning => "notesoup/warning",
            Self::ManualWipe => "notesoup/manual-wipe",
            Self::ResetMarker => "notesoup/reset-marker",
            Self::Continuation => "notesoup/continuation",
            Self::ResetPrompt => "notesoup/reset-prompt",
        }
    }

    /// Whether `custom_type` names this kind, under the current or the
    /// legacy `pi-context/` prefix.
    pub fn matches(self, custom_type: &str) -> bool {
        let name = &self.custom_type()["notesoup/".len()..];
        custom_type
            .strip_prefix("notesoup/")
            .or_else(|| custom_type.strip_prefix("pi-context/"))
            == Some(name)
    }

    /// The kind a custom type names, if it is one of notesoup's.
    pub fn of(custom_type: &str) -> Option<Self> {
        [
            Self::Boot,
            Self::Guidance,
            Self::Warning,
            Self::ManualWipe,
            Self::ResetMarker,
            Self::Continuation,
            Self::ResetPrompt,
        ]
        .into_iter()
        .find(|kind| kind.matches(custom_type))
    }
}

#[cfg(test)]
mod tests {
    use super::Kind;

    #[test]
    fn current_and_legacy_names_match() {
        let cases = [
            ("notesoup/boot", Some(Kind::Boot)),
            ("pi-context/boot", Some(Kind::Boot)),
            ("pi-context/reset-marker", Some(Kind::ResetMarker)),
            ("notesoup/reset-prompt", Some(Kind::ResetPrompt)),
            ("notesoup/bootx", None),
            ("other/boot", None),
            ("boot", None),
        ];
        for (name, expect) in cases {
            assert_eq!(Kind::of(name), expect, "{name}");
        }
    }
}
