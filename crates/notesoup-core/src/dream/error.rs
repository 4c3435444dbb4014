//! The one error type of the dream area.

use std::path::PathBuf;

/// Why a dream operation was refused or failed. The `Display` texts are the
/// spec's exact messages where the spec gives one; [`DreamError::code`] is
/// the stable machine-readable code.
#[derive(Debug, thiserror::Error)]
pub enum DreamError {
    /// The notes home itself cannot be resolved to a real path.
    #[error("write jail: cannot resolve notes home {}: {source}", home.display())]
    HomeUnresolvable {
        /// The home as given.
        home: PathBuf,
        /// The filesystem error.
        source: std::io::Error,
    },
    /// A path leads outside the notes home (lexically, through a symlink, or
    /// through a hard link shared with another name).
    #[error("write jail: {path} is outside notes home {}", home.display())]
    OutsideHome {
        /// The path as the dreamer gave it.
        path: String,
        /// The home as given.
        home: PathBuf,
    },
    /// A path that crosses a symbolic link below the notes home. The jail
    /// never follows one: where it leads can change between a check and
    /// the write (another process may swap it at any moment), so it cannot
    /// be shown to stay inside.
    #[error(
        "write jail: {path} crosses a symbolic link in notes home {}; the jail never follows links",
        home.display()
    )]
    ThroughLink {
        /// The path as the dreamer gave it.
        path: String,
        /// The home as given.
        home: PathBuf,
    },
    /// A path inside the home that is not a note the dreamer may write:
    /// the audit repository, the dream's bookkeeping, a file outside the
    /// five homes, or a name no address could hold.
    #[error("write jail: {path} is not a note the dreamer may write: {reason}")]
    NotANote {
        /// The path as the dreamer gave it.
        path: String,
        /// Why, in one sentence.
        reason: String,
    },
    /// The dreamer's new text holds a credential.
    #[error(
        "{path}: line {line} holds a credential ({kind}); the dream never copies one. Leave it where it is and report it"
    )]
    SecretDetected {
        /// The path as the dreamer gave it.
        path: String,
        /// 1-based line in the new text.
        line: usize,
        /// What it looks like.
        kind: &'static str,
    },
    /// The dreamer's path holds a credential (the path is not repeated).
    #[error(
        "the path holds a credential ({kind}); the dream never writes one, not even as a name. Leave it where it is and report it without quoting it"
    )]
    SecretInPath {
        /// What it looks like.
        kind: &'static str,
    },
    /// The dreamer asked to delete a note that is not in the wastebasket.
    #[error("delete: {path} is not a crumpled note; only the wastebasket rule permits deletion")]
    NotCrumpled {
        /// The path as the dreamer gave it.
        path: String,
    },
    /// The note to delete is not byte for byte what the baseline commit
    /// holds: it was crumpled (or changed) during this dream.
    #[error(
        "delete: {path} was not in the wastebasket when this dream began (it was crumpled or changed since the baseline commit); only a note crumpled before the dream may be deleted"
    )]
    NotInBaseline {
        /// The path as the dreamer gave it.
        path: String,
    },
    /// The baseline commit cannot be read, so deletion cannot be checked.
    #[error(
        "delete: {path} cannot be checked against the dream's baseline commit ({reason}); nothing is deleted without it"
    )]
    NoBaseline {
        /// The path as the dreamer gave it.
        path: String,
        /// What failed.
        reason: String,
    },
    /// The note was crumpled or read too recently to be deleted.
    #[error(
        "delete: {path} is too recent (crumpledAt {crumpled_at}, last access {last_access}); the wastebasket rule deletes a note only when both are more than {days} days old"
    )]
    TooRecent {
        /// The path as the dreamer gave it.
        path: String,
        /// `crumpledAt`, ISO.
        crumpled_at: String,
        /// `lastAccessed`, else `crumpledAt`, ISO.
        last_access: String,
        /// The rule's age in days.
        days: i64,
    },
    /// A write or edit would make the file larger than a note may be.
    #[error("{path} would be {bytes} bytes, over the {limit}-byte note limit; split it by topic")]
    TooLarge {
        /// The path as the dreamer gave it.
        path: String,
        /// Its size after the write or edit.
        bytes: usize,
        /// The limit ([`crate::notes::NoteStore::MAX_NOTE_BYTES`]).
        limit: usize,
    },
    /// Another run holds the lock's flock.
    #[error("lock gate: lock held by a running dream")]
    LockHeld,
    /// An edit's `oldText` is empty.
    #[error("edit: edit {index} of {path} has an empty oldText")]
    EmptyEdit {
        /// The path as the dreamer gave it.
        path: String,
        /// 0-based index of the edit.
        index: usize,
    },
    /// An edit's `oldText` does not occur in the file.
    #[error("edit: oldText of edit {index} was not found in {path}")]
    NoMatch {
        /// The path as the dreamer gave it.
        path: String,
        /// 0-based index of the edit.
        index: usize,
    },
    /// An edit's `oldText` occurs more than once.
    #[error("edit: oldText of edit {index} occurs {count} times in {path}; include more context")]
    AmbiguousEdit {
        /// The path as the dreamer gave it.
        path: String,
        /// 0-based index of the edit.
        index: usize,
        /// How often it occurs.
        count: usize,
    },
    /// A file the dreamer reads or edits is not UTF-8 text.
    #[error("{path} is not UTF-8 text")]
    NotText {
        /// The path as the dreamer gave it.
        path: String,
    },
    /// A filesystem operation failed.
    #[error("{action} {}: {source}", path.display())]
    Io {
        /// What was being done, e.g. "cannot read".
        action: &'static str,
        /// The path it was done to.
        path: PathBuf,
        /// The filesystem error.
        source: std::io::Error,
    },
    /// The Git audit failed.
    #[error("git audit: {0}")]
    Audit(String),
}

impl DreamError {
    /// The stable code of this error, in the style of `NoteError` codes.
    pub fn code(&self) -> &'static str {
        match self {
            DreamError::HomeUnresolvable { .. } | DreamError::Io { .. } => "io_error",
            DreamError::OutsideHome { .. } | DreamError::ThroughLink { .. } => "outside_home",
            DreamError::NotANote { .. } => "not_a_note",
            DreamError::SecretDetected { .. } | DreamError::SecretInPath { .. } => {
                "secret_detected"
            }
            DreamError::NotCrumpled { .. } => "not_crumpled",
            DreamError::NotInBaseline { .. } | DreamError::NoBaseline { .. } => "not_in_baseline",
            DreamError::TooRecent { .. } => "too_recent",
            // The notes tools' own code for an oversized note.
            DreamError::TooLarge { .. } => crate::wire::RefusalCode::TooLarge.as_str(),
            DreamError::LockHeld => "lock_held",
            DreamError::EmptyEdit { .. } | DreamError::NoMatch { .. } => "no_match",
            DreamError::AmbiguousEdit { .. } => "ambiguous_edit",
            DreamError::NotText { .. } => "not_text",
            DreamError::Audit(_) => "audit_failed",
        }
    }

    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
        source: std::io::Error,
    ) -> Self {
        DreamError::Io {
            action,
            path: path.into(),
            source,
        }
    }
}
