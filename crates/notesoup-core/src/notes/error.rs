//! `NoteError`: every refusal of the notes store, with a stable code and the
//! facts a caller needs to explain or repair the request.

use std::io;
use std::path::{Path, PathBuf};

use super::secrets::SecretFinding;

/// Where the credential guard found a credential in a note as it would be
/// written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SecretPlace {
    /// The body of a write.
    Content,
    /// The body after an update's edits; the index of an edit whose new
    /// text holds a credential by itself, when one does.
    Edited {
        /// The 0-based index of that edit.
        edit_index: Option<usize>,
    },
    /// The body of a note being renamed.
    Moved,
    /// The address (the note's file name and folders).
    Address,
}
use crate::wire::RefusalCode;

/// A refusal of the notes area: of the store, with a code, a human-readable
/// message and, where they apply, the line numbers of an ambiguous edit, the
/// index of the failing edit, and the path and OS error kind of a filesystem
/// failure; or of a [`NotesIdentity`](super::NotesIdentity) field that failed
/// validation (`invalid_arguments`, shown as `notes context <field> must be
/// …`, the field named by [`identity_field`](Self::identity_field)).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.shown())]
pub struct NoteError {
    code: RefusalCode,
    message: String,
    line_numbers: Option<Vec<usize>>,
    edit_index: Option<usize>,
    path: Option<PathBuf>,
    io_kind: Option<io::ErrorKind>,
    identity_field: Option<&'static str>,
}

/// Why a session note is refused when the host has no session yet.
pub(crate) const NO_SESSION_MESSAGE: &str = "no session yet: this session's notes (bare addresses, the session scope) are not available until the host's session starts; the durable homes @project/, @human/, @self/ and @model/ are available.";

impl NoteError {
    /// A refusal with a code and a message and no further facts.
    pub fn new(code: RefusalCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            line_numbers: None,
            edit_index: None,
            path: None,
            io_kind: None,
            identity_field: None,
        }
    }

    /// The refusal of an identity whose `field` (camelCase, e.g.
    /// `sessionId`) is not `requirement`.
    pub(crate) fn invalid_identity(field: &'static str, requirement: &str) -> Self {
        Self {
            identity_field: Some(field),
            ..Self::new(
                RefusalCode::InvalidArguments,
                format!("notes context {field} must be {requirement}"),
            )
        }
    }

    /// How the error reads: `<code>: <message>`, or an identity's message
    /// alone (it names what failed, and hosts prefix it with their own
    /// words).
    fn shown(&self) -> String {
        match self.identity_field {
            Some(_) => self.message.clone(),
            None => format!("{}: {}", self.code, self.message),
        }
    }

    /// The camelCase name of the identity field that failed validation (e.g.
    /// `sessionId`), for an identity's refusal.
    pub fn identity_field(&self) -> Option<&'static str> {
        self.identity_field
    }

    /// A filesystem failure of `action` (e.g. "read") on `path`.
    pub fn io(action: &str, path: &Path, error: &io::Error) -> Self {
        Self {
            io_kind: Some(error.kind()),
            path: Some(path.to_path_buf()),
            ..Self::new(
                RefusalCode::IoError,
                format!("{action} {}: {error}", path.display()),
            )
        }
    }

    /// The `no_session` refusal: a session note (a bare address, the
    /// `session` scope) asked of an identity with no session.
    pub fn no_session() -> Self {
        Self::new(RefusalCode::NoSession, NO_SESSION_MESSAGE)
    }

    /// The `no_match` refusal of edit `edit_index` (0-based); hosts use it too
    /// when an edit's `newText` is not a string.
    pub fn no_match(edit_index: usize, message: impl Into<String>) -> Self {
        Self {
            edit_index: Some(edit_index),
            ..Self::new(RefusalCode::NoMatch, message)
        }
    }

    pub(crate) fn with_edit_index(mut self, edit_index: usize) -> Self {
        self.edit_index = Some(edit_index);
        self
    }

    pub(crate) fn with_line_numbers(mut self, line_numbers: Vec<usize>) -> Self {
        self.line_numbers = Some(line_numbers);
        self
    }

    /// The `secret_detected` refusal for `found` in the note as it would be
    /// written, at `place`.
    pub(crate) fn secret(found: SecretFinding, place: SecretPlace) -> Self {
        const REFERENCE: &str = "Store a reference instead (where the secret lives: a vault path or an environment variable name), never the secret itself";
        let kind = found.kind;
        let line = found.line;
        let (message, line_numbers, edit_index) = match place {
            SecretPlace::Content => (
                format!(
                    "the content holds a credential ({kind}) on line {line}; nothing was written. {REFERENCE}"
                ),
                Some(vec![line]),
                None,
            ),
            SecretPlace::Edited { edit_index } => {
                let from = edit_index
                    .map(|index| format!(" (from edit {index}'s newText)"))
                    .unwrap_or_default();
                (
                    format!(
                        "the note as edited would hold a credential ({kind}) on line {line}{from}; nothing was written. {REFERENCE}"
                    ),
                    Some(vec![line]),
                    edit_index,
                )
            }
            SecretPlace::Moved => (
                format!(
                    "the note holds a credential ({kind}) on line {line}; it was not moved. Replace the secret with a reference first (where it lives: a vault path or an environment variable name)"
                ),
                Some(vec![line]),
                None,
            ),
            SecretPlace::Address => (
                format!(
                    "the address holds a credential ({kind}); nothing was written. Name the note for what it is about, and store a reference to the secret (where it lives: a vault path or an environment variable name), never the secret itself"
                ),
                None,
                None,
            ),
        };
        Self {
            line_numbers,
            edit_index,
            ..Self::new(RefusalCode::SecretDetected, message)
        }
    }

    /// Names the note `address` in a refusal that only knew its file (a
    /// link on the way): the model sees the address, never the notes root.
    pub(crate) fn at_address(mut self, address: &str) -> Self {
        if self.code == RefusalCode::InvalidAddress && self.path.is_some() {
            self.message = format!("{address}: {}", self.message);
        }
        self
    }

    pub(crate) fn with_path(mut self, path: &Path) -> Self {
        self.path = Some(path.to_path_buf());
        self
    }

    /// The refusal code.
    pub fn code(&self) -> RefusalCode {
        self.code
    }

    /// The human-readable message, without the code.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Every 1-based line on which an ambiguous edit's `oldText` starts (one
    /// entry per occurrence).
    pub fn line_numbers(&self) -> Option<&[usize]> {
        self.line_numbers.as_deref()
    }

    /// The 0-based index of the edit that failed.
    pub fn edit_index(&self) -> Option<usize> {
        self.edit_index
    }

    /// The file or directory involved, when there is one.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The OS error kind of an `io_error`.
    pub fn io_kind(&self) -> Option<io::ErrorKind> {
        self.io_kind
    }

    /// Whether this is a filesystem failure (the OS errno family), as opposed
    /// to a refusal of the request.
    pub fn is_filesystem(&self) -> bool {
        self.code == RefusalCode::IoError
    }
}
