//! `NoteError`: every refusal of the notes store, with a stable code and the
//! facts a caller needs to explain or repair the request.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::secrets::SecretFinding;

/// The stable refusal codes of the notes store (`docs/behavior.md` §3.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NoteErrorCode {
    /// The note (or the rename source) does not exist.
    NotFound,
    /// A rename target is a live note.
    AlreadyExists,
    /// An edit's `oldText` occurs more than once and `replaceAll` was not set.
    AmbiguousEdit,
    /// An edit's `oldText` is empty or does not occur.
    NoMatch,
    /// The request would change nothing.
    NothingToDo,
    /// The note or its path exceeds a size limit.
    TooLarge,
    /// A write to a foreign home, or a bad `scope`/`who` combination.
    InvalidScope,
    /// An `origin` other than `user`, `self` or `external`.
    InvalidOrigin,
    /// An address that cannot name a note.
    InvalidAddress,
    /// A glob pattern that cannot be used.
    InvalidPattern,
    /// A search query that cannot be used.
    InvalidQuery,
    /// A read-window offset past the end.
    InvalidOffset,
    /// The content holds a credential (a private key, a token, a secret
    /// assignment); nothing was written.
    SecretDetected,
    /// A filesystem failure.
    IoError,
    /// A broken invariant inside the store.
    InternalError,
}

impl NoteErrorCode {
    /// The code as it appears on the wire, e.g. `not_found`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NotFound => "not_found",
            Self::AlreadyExists => "already_exists",
            Self::AmbiguousEdit => "ambiguous_edit",
            Self::NoMatch => "no_match",
            Self::NothingToDo => "nothing_to_do",
            Self::TooLarge => "too_large",
            Self::InvalidScope => "invalid_scope",
            Self::InvalidOrigin => "invalid_origin",
            Self::InvalidAddress => "invalid_address",
            Self::InvalidPattern => "invalid_pattern",
            Self::InvalidQuery => "invalid_query",
            Self::InvalidOffset => "invalid_offset",
            Self::SecretDetected => "secret_detected",
            Self::IoError => "io_error",
            Self::InternalError => "internal_error",
        }
    }
}

impl fmt::Display for NoteErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A refusal of the notes store: a code, a human-readable message and, where
/// they apply, the line numbers of an ambiguous edit, the index of the failing
/// edit, and the path and OS error kind of a filesystem failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct NoteError {
    code: NoteErrorCode,
    message: String,
    line_numbers: Option<Vec<usize>>,
    edit_index: Option<usize>,
    path: Option<PathBuf>,
    io_kind: Option<io::ErrorKind>,
}

impl NoteError {
    /// A refusal with a code and a message and no further facts.
    pub fn new(code: NoteErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            line_numbers: None,
            edit_index: None,
            path: None,
            io_kind: None,
        }
    }

    /// A filesystem failure of `action` (e.g. "read") on `path`.
    pub fn io(action: &str, path: &Path, error: &io::Error) -> Self {
        Self {
            io_kind: Some(error.kind()),
            path: Some(path.to_path_buf()),
            ..Self::new(
                NoteErrorCode::IoError,
                format!("{action} {}: {error}", path.display()),
            )
        }
    }

    /// The `no_match` refusal of edit `edit_index` (0-based); hosts use it too
    /// when an edit's `newText` is not a string.
    pub fn no_match(edit_index: usize, message: impl Into<String>) -> Self {
        Self {
            edit_index: Some(edit_index),
            ..Self::new(NoteErrorCode::NoMatch, message)
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

    /// The `secret_detected` refusal for `found` (in edit `edit_index`'s new
    /// text, when given).
    pub(crate) fn secret(found: SecretFinding, edit_index: Option<usize>) -> Self {
        let place = match edit_index {
            Some(index) => format!("line {} of edit {index}'s newText", found.line),
            None => format!("line {}", found.line),
        };
        Self {
            line_numbers: Some(vec![found.line]),
            edit_index,
            ..Self::new(
                NoteErrorCode::SecretDetected,
                format!(
                    "the content holds a credential ({}) on {place}; nothing was written. Store a reference instead (where the secret lives: a vault path or an environment variable name), never the secret itself",
                    found.kind
                ),
            )
        }
    }

    /// Names the note `address` in a refusal that only knew its file (a
    /// link on the way): the model sees the address, never the notes root.
    pub(crate) fn at_address(mut self, address: &str) -> Self {
        if self.code == NoteErrorCode::InvalidAddress && self.path.is_some() {
            self.message = format!("{address}: {}", self.message);
        }
        self
    }

    pub(crate) fn with_path(mut self, path: &Path) -> Self {
        self.path = Some(path.to_path_buf());
        self
    }

    /// The refusal code.
    pub fn code(&self) -> NoteErrorCode {
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
        self.code == NoteErrorCode::IoError
    }
}
