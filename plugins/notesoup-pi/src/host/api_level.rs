//! Which Pi extension API a host speaks.

/// The Pi API generation a host implements. notesoup requires 0.87 for its
/// reset; a v0.58 host degrades in a known way: it never calls
/// `agent_before_settle` or `context_with_system`, ignores `turn_end`
/// results, and cannot store a retain-none compaction or a `context_edit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PiApiLevel {
    /// badlogic/pi-mono v0.58.x.
    V0_58,
    /// earendil-works/pi 0.87 and later (including 1.x): the boundary API.
    V0_87,
}

impl PiApiLevel {
    /// The level of a Pi version string (`"0.58.3"`, `"1.6.0"`); `None`
    /// for versions before 0.58 or text that is not a version.
    pub fn from_version(version: &str) -> Option<Self> {
        let mut parts = version.trim().trim_start_matches('v').split('.');
        let major: u64 = parts.next()?.parse().ok()?;
        let minor: u64 = parts
            .next()?
            .split(|c: char| !c.is_ascii_digit())
            .next()?
            .parse()
            .ok()?;
        match (major, minor) {
            (0, ..58) => None,
            (0, 58..87) => Some(Self::V0_58),
            _ => Some(Self::V0_87),
        }
    }

    /// `turn_end` results (`entries`, `continue`) and `agent_before_settle`.
    pub fn has_boundary_events(self) -> bool {
        self >= Self::V0_87
    }

    /// `context_with_system`, with system messages in the transcript.
    pub fn has_context_with_system(self) -> bool {
        self >= Self::V0_87
    }

    /// A compaction draft with `firstKeptEntryId: null` stored as its own id.
    pub fn has_retain_none_compaction(self) -> bool {
        self >= Self::V0_87
    }

    /// `context_edit` entries.
    pub fn has_context_edit(self) -> bool {
        self >= Self::V0_87
    }
}

#[cfg(test)]
mod tests {
    use super::PiApiLevel;

    #[test]
    fn versions_map_to_levels() {
        let cases = [
            ("0.57.9", None),
            ("0.58.3", Some(PiApiLevel::V0_58)),
            ("v0.86.1", Some(PiApiLevel::V0_58)),
            ("0.87.0", Some(PiApiLevel::V0_87)),
            ("0.99.1", Some(PiApiLevel::V0_87)),
            ("1.6.0", Some(PiApiLevel::V0_87)),
            ("1.6.0-beta.1", Some(PiApiLevel::V0_87)),
            ("nonsense", None),
        ];
        for (version, expect) in cases {
            assert_eq!(PiApiLevel::from_version(version), expect, "{version}");
        }
        assert!(!PiApiLevel::V0_58.has_boundary_events());
        assert!(PiApiLevel::V0_87.has_retain_none_compaction());
    }
}
