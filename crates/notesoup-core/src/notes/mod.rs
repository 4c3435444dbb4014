//! Notes: identities, addresses, the frontmatter codec and the durable store.
//!
//! The standalone notes library. It reads no environment variables: a host
//! builds a [`NotesIdentity`] explicitly (with [`default_root`],
//! [`agent_slug`], [`model_slug`] and [`project_key`] to derive the values
//! from its own environment) and opens a [`NoteStore`] over it.
//!
//! # Public API
//!
//! - Identity: [`NotesIdentity`] (`new`, `with_model`, getters), [`IdentityError`]
//!   (`notes context <field> must be …`), [`Scope`], [`slugify`], [`is_slug`],
//!   [`default_root`], [`agent_slug`], [`model_slug`], [`project_key`].
//! - Addresses: [`Address`] (`parse`, `new`, `render`, `concrete`, `is_writable`),
//!   [`Home`] (`dir`, `rendered_prefix`, `concrete_prefix`, `label`, `own`),
//!   [`NotePattern`] (`parse`, `matches`, `homes`) and [`HomeSelection`].
//! - Format: [`NoteMeta`], [`Origin`], [`Extra`], [`ParsedNote`], [`parse_note`],
//!   [`strip_frontmatter`], [`serialize_note`], [`serialize_frontmatter`],
//!   [`scalar_text`], [`KNOWN_KEYS`]; times via [`local_iso`], [`parse_iso_ms`],
//!   [`now_ms`], [`next_stamp_ms`].
//! - Store: [`NoteStore`] with `write`, `read`, `update`, `rename`, `list`,
//!   `list_headers`, `peek_row` and `search`; arguments [`Edit`],
//!   [`UpdateRequest`], [`ListQuery`]; every result and row carries a
//!   [`NoteLocation`] (address, scope, home, relative path, file); results
//!   [`WriteResult`] ([`WriteOutcome`]), [`ReadResult`], [`UpdateResult`]
//!   ([`Change`], [`ChangeKind`]), [`RenameResult`]; `list`, `list_headers`
//!   and `search` answer a [`ListStatus`] of [`NoteRow`], [`NoteHeader`] or
//!   [`SearchRow`] ([`LineMatch`]) with the notes and homes left out; limits
//!   [`MAX_NOTE_BYTES`], [`MAX_NOTE_PATH_BYTES`].
//! - Matching: [`LiteralQueries`], the case-insensitive literal matcher that
//!   `search` uses (also fit for history search).
//! - Errors: [`NoteError`] (`code().as_str()`, `message()`,
//!   `line_numbers()`, `edit_index()`, `path()`, `io_kind()`) with a
//!   [`RefusalCode`], the tools' own code list ([`NoteErrorCode`] is the same
//!   type under the store's name).
//!
//! # Durability and concurrency
//!
//! Every write goes to a temporary file `.notesoup-<pid>-<32 hex>.tmp` created
//! in the note's open directory, is fsynced, renamed over the note there, and
//! the directory is fsynced, so a crash leaves either the old or the new
//! note, never a torn one. No operation
//! deletes a note (a rename removes its source after writing the target).
//!
//! Operations on one file are serialized twice:
//! - inside the process by a process-wide queue keyed by the note's physical
//!   path (the root is resolved once per store and nothing below it may be a
//!   link, so the path is physical); a rename takes both paths in sorted
//!   order;
//! - across processes by an exclusive advisory lock (`flock`) on the note's
//!   **parent directory**, taken after the queue on the directory's open
//!   handle (the one the operation then reads and writes through) and, for a
//!   rename, on both directories in sorted order. The note file itself
//!   cannot carry the lock: it is replaced by rename on every write, so a
//!   waiter would hold a lock on a stale inode. A sidecar lock file would be
//!   visible in the home (and to doctor). The directory is never replaced and
//!   its descriptor is needed for the directory fsync anyway; the price is
//!   that writers of different notes in one directory of different processes
//!   take turns, which costs microseconds.
//!
//! Every file read of `list`, `list_headers`, `peek_row` and `search` also
//! waits for the file's queue turn (not the directory lock: every write is an atomic rename, so another
//! process can only ever show them a whole old or whole new version).
//! Neither operation is a snapshot across files.
//!
//! # Reading less
//!
//! `list_headers` lists like `list` but reads only the start of each file,
//! one read of up to a page, stopping once the frontmatter is settled (a
//! longer block falls back to the whole file); its rows carry no body and
//! no size. `peek_row` then reads one listed note whole, without touching
//! access metadata. The boot lists this way and peeks only what it shows.
//!
//! # Limits
//!
//! Writes refuse files over [`MAX_NOTE_BYTES`] and paths over
//! [`MAX_NOTE_PATH_BYTES`]. `read` never fails for size: when its access
//! rewrite would exceed the limit, the note is returned and left untouched
//! ([`ReadResult::access_recorded`] is false).
//!
//! The full guide is `docs/notes-library.md`.
//!
//! # Links
//!
//! The notes root may itself be a link; below it the store never follows a
//! symbolic link, and never checks a path to use it afterwards: every note
//! path is resolved relative to an open handle of the root, following no
//! link at any component, and each file is opened, written, renamed and
//! removed inside its open directory (`beneath`). A directory swapped for a
//! link at any moment cannot carry an operation out of the root. A read,
//! write, update or rename whose path crosses a link (a linked home,
//! directory or note file) is refused with `invalid_address`; `list` and
//! `search` skip linked entries, and a linked home is reported unavailable.
//! Nothing outside the root is read or written through a link. Hard links are ordinary files: a write replaces the
//! directory entry by rename, so the other name keeps its old content.
//!
//! # Matching
//!
//! Search folds both sides with the Unicode default lowercase mapping
//! (`char::to_lowercase`), plus final sigma `ς` → `σ`; see [`LiteralQueries`].

pub(crate) mod address;
pub(crate) mod beneath;
mod error;
mod frontmatter;
mod fsio;
mod identity;
pub(crate) mod matcher;
mod paths;
mod secrets;
mod store;
mod time;

pub use crate::wire::RefusalCode;
pub use address::{
    Address, Home, HomeSelection, MAX_SEGMENT_BYTES, NotePattern, escape_forbidden,
    is_forbidden_char, is_git_segment,
};
pub use error::{NO_SESSION_MESSAGE, NoteError, NoteErrorCode};
pub use frontmatter::{
    Extra, KNOWN_KEYS, NoteMeta, Origin, ParsedNote, is_blank_body, parse_note, scalar_text,
    serialize_frontmatter, serialize_note, strip_frontmatter,
};
pub use identity::{
    IdentityError, NotesIdentity, Scope, agent_slug, default_root, is_slug, model_slug, slugify,
};
pub use matcher::{LineMatch, LiteralQueries};
pub use paths::project_key;
pub use secrets::{SecretFinding, SecretKind, find_secret, line_secret};
pub use store::{
    Change, ChangeKind, DeleteOutcome, Edit, HeadCache, ListQuery, ListStatus, MAX_NOTE_BYTES,
    MAX_NOTE_PATH_BYTES, NoteHeader, NoteLocation, NoteRow, NoteStore, ReadResult, RenameResult,
    SearchRow, UpdateRequest, UpdateResult, WriteOutcome, WriteResult,
};
pub use time::{local_iso, next_stamp_ms, now_ms, parse_iso_ms};
