//! The store's arguments and results: what an operation is asked and what it
//! answers, with the [`NoteLocation`] every result shares.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::notes::address::Home;
use crate::notes::frontmatter::{NoteMeta, NoteOrigin};
use crate::notes::identity::Scope;
use crate::notes::matcher::LineMatch;

/// What a write did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WriteOutcome {
    /// A new note.
    Created,
    /// A live note was replaced.
    Overwritten,
    /// A crumpled note was replaced and restored.
    Uncrumpled,
}

impl WriteOutcome {
    /// `created`, `overwritten` or `uncrumpled`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Created => "created",
            Self::Overwritten => "overwritten",
            Self::Uncrumpled => "uncrumpled",
        }
    }
}

/// What an update changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ChangeKind {
    /// Nothing; the file was not rewritten.
    None,
    /// Only the body.
    Body,
    /// Only the metadata.
    Metadata,
    /// Both.
    File,
}

impl ChangeKind {
    /// `none`, `body`, `metadata` or `file`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Body => "body",
            Self::Metadata => "metadata",
            Self::File => "file",
        }
    }
}

/// The before and after of an update: empty for `none`, the bodies for
/// `body`, the frontmatter blocks for `metadata`, the whole raw file before
/// and the serialized file after for `file`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// What changed.
    pub kind: ChangeKind,
    /// The text before.
    pub before: String,
    /// The text after.
    pub after: String,
}

/// Where a note is: the same five facts for every operation's result and
/// every listed row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteLocation {
    /// The rendered address (`@self/…` and `@model/…` for own homes).
    pub address: String,
    /// The home's scope.
    pub scope: Scope,
    /// The home.
    pub home: Home,
    /// The path relative to the home, ending in `.md`.
    pub rel_path: String,
    /// The note file.
    pub path: PathBuf,
}

/// A result of `write`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteResult {
    /// The note written.
    pub location: NoteLocation,
    /// The metadata written.
    pub meta: NoteMeta,
    /// `created`, `overwritten` or `uncrumpled`.
    pub outcome: WriteOutcome,
}

/// A result of `read`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadResult {
    /// The note read.
    pub location: NoteLocation,
    /// The metadata after this read: access time and count updated, unless
    /// [`Self::access_recorded`] is false, when it is the metadata on disk.
    pub meta: NoteMeta,
    /// The body.
    pub body: String,
    /// Whether the file was rewritten with the new access metadata. It is
    /// not when the file is not valid UTF-8, or when the rewrite would
    /// exceed [`super::NoteStore::MAX_NOTE_BYTES`] (a note put there by other means, or one at
    /// the limit whose `accessCount` gains a digit).
    pub access_recorded: bool,
}

/// One edit: replace `old_text` with `new_text`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Edit {
    /// The text to find; must be non-empty.
    pub old_text: String,
    /// Its replacement.
    pub new_text: String,
}

/// The arguments of `update`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UpdateRequest {
    /// Edits applied in order to the evolving body.
    pub edits: Vec<Edit>,
    /// A new origin.
    pub origin: Option<NoteOrigin>,
    /// `true` crumples (keeping the first crumple time), `false` smooths.
    pub crumpled: Option<bool>,
    /// Replace every occurrence of each `old_text`.
    pub replace_all: bool,
}

/// A result of `update`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpdateResult {
    /// The note updated.
    pub location: NoteLocation,
    /// The metadata after the update.
    pub meta: NoteMeta,
    /// How many edits had `old_text != new_text`.
    pub applied: usize,
    /// What changed.
    pub change: Change,
}

/// A result of `rename`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenameResult {
    /// The rendered source address.
    pub from: String,
    /// The target: where the note is now.
    pub location: NoteLocation,
    /// The metadata that moved with the note.
    pub meta: NoteMeta,
    /// Whether a crumpled note at the target was replaced.
    pub replaced_crumpled_target: bool,
}

/// What `delete` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeleteOutcome {
    /// The note is gone; its rendered address, and whether it was crumpled.
    Deleted {
        /// The rendered address.
        address: String,
        /// Whether it lay in the wastebasket.
        was_crumpled: bool,
    },
    /// The note is live and was not asked to go live: nothing was done
    /// (crumple it first, the agent's rule).
    Live {
        /// The rendered address.
        address: String,
    },
}

/// Which notes `list` and `search` consider.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct ListQuery {
    /// A glob over concrete addresses; empty or `None` means no pattern.
    pub pattern: Option<String>,
    /// Only this scope.
    pub scope: Option<Scope>,
    /// With scope agent or model: whose home (a slug).
    pub who: Option<String>,
    /// Only crumpled notes instead of only live ones.
    pub wastebasket: bool,
}

/// A note as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NoteRow {
    /// Where the note is.
    pub location: NoteLocation,
    /// The metadata.
    pub meta: NoteMeta,
    /// The body.
    pub body: String,
    /// The size of the file in bytes.
    pub size_bytes: u64,
}

/// A note as listed without its body, by [`super::NoteStore::list_headers`]: the
/// frontmatter is read, the body is not, and the file's size is not asked
/// for (each would cost a system call per note).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NoteHeader {
    /// Where the note is.
    pub location: NoteLocation,
    /// The metadata.
    pub meta: NoteMeta,
}

/// A note with matching lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SearchRow {
    /// Where the note is.
    pub location: NoteLocation,
    /// The metadata.
    pub meta: NoteMeta,
    /// Every matching line, in order.
    pub matches: Vec<LineMatch>,
}

/// The rows of `list` ([`NoteRow`]), `list_headers` ([`NoteHeader`]) or
/// `search` (search rows) with the notes they left out: crumpled notes
/// hidden (outside the wastebasket) and homes that could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ListStatus<R> {
    /// Recent first, ties by address (`list`, `list_headers`); by address
    /// (`search`).
    pub rows: Vec<R>,
    /// Crumpled notes that matched (for `search`: with matches) but were
    /// hidden.
    pub crumpled_excluded: usize,
    /// Labels (`session`, `@project`, `@self`, …) of homes that failed.
    pub homes_unavailable: Vec<String>,
}
