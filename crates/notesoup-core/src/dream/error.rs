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
    /// Another run holds the lock (or a crashed run left it behind).
    #[error("lock gate: lock already exists")]
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
            DreamError::OutsideHome { .. } => "outside_home",
            DreamError::NotANote { .. } => "not_a_note",
            DreamError::SecretDetected { .. } | DreamError::SecretInPath { .. } => {
                "secret_detected"
            }
            DreamError::NotCrumpled { .. } => "not_crumpled",
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
