//! Notes: identities, addresses, the frontmatter codec and the durable store.
//!
//! The standalone notes library. It reads no environment variables: a host
//! builds a [`NotesIdentity`] explicitly (with [`NotesIdentity::default_root`],
//! [`NotesIdentity::agent_slug`], [`NotesIdentity::model_slug`] and [`project_key`] to derive the values
//! from its own environment) and opens a [`NoteStore`] over it.
//!
//! # Public API
//!
//! - Identity: [`NotesIdentity`] (`new`, `without_session`, `with_session`,
//!   `with_model`, getters; a field that fails validation is a [`NoteError`]
//!   reading `notes context <field> must be …`), [`Home`],
//!   [`NotesIdentity::default_root`], [`NotesIdentity::agent_slug`], [`NotesIdentity::model_slug`], [`project_key`].
//! - Format: [`is_blank_body`]; times via [`now_local_iso`]
//!   and [`now_ms`]. A result's metadata (origin, times, access count,
//!   extras) comes with it; the origins, the codec, the parser and the
//!   address and glob rules stay inside the crate: hosts write with no
//!   origin (`None`) and reach notes through the store and the tools.
//! - Store: [`NoteStore`] with `write`, `read`, `update`, `edited_body`,
//!   `rename` and `delete`; arguments [`Edit`], [`UpdateRequest`]; every
//!   result carries its location (address, scope, home, relative path,
//!   file); a delete says its [`DeleteOutcome`]; the kept note heads,
//!   [`HeadCache`]; the limit [`NoteStore::MAX_NOTE_BYTES`].
//! - Listing and search are reached through the tools
//!   ([`call_tool`](crate::tools::call_tool) with `notes_list` and
//!   `notes_search`) and the boot ([`BootSnapshot`](crate::boot::BootSnapshot));
//!   the store's typed listing (`list`, `list_headers`, `peek_row`,
//!   `search`, their query and rows) and the scopes stay inside the crate.
//! - The credential guard: [`find_secret`] (what it found and its kind).
//! - Errors: [`NoteError`] (`code().as_str()`, `message()`,
//!   `line_numbers()`, `edit_index()`, `path()`, `io_kind()`,
//!   `identity_field()`) with a [`RefusalCode`](crate::tools::RefusalCode),
//!   the tools' own code list.
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
//! Writes refuse files over [`NoteStore::MAX_NOTE_BYTES`] and paths over
//! `MAX_NOTE_PATH_BYTES`. `read` never fails for size: when its access
//! rewrite would exceed the limit, the note is returned and left untouched
//! (the read result says its access was not recorded).
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
//! (`char::to_lowercase`), plus final sigma `ς` → `σ`; see `LiteralQueries`.

pub(crate) mod address;
pub(crate) mod beneath;
mod error;
mod frontmatter;
mod fsio;
mod identity;
pub(crate) mod matcher;
mod paths;
mod secrets;
pub(crate) mod segment;
mod store;
#[cfg(test)]
mod tests;
mod time;

pub(crate) use address::Address;
pub use address::Home;
pub use error::NoteError;
pub(crate) use frontmatter::NoteMeta;
pub(crate) use frontmatter::NoteOrigin;
pub use frontmatter::is_blank_body;
pub(crate) use frontmatter::parse_note;
pub(crate) use frontmatter::{FrontmatterExtra, SplitNote, serialize_note, split_note};
pub use identity::NotesIdentity;
pub(crate) use identity::Scope;
pub(crate) use identity::{is_slug, normalize_lexical, slugify};
pub(crate) use matcher::LiteralQueries;
#[cfg(test)]
pub(crate) use paths::lower_hex;
pub use paths::project_key;
pub(crate) use secrets::SecretKind;
pub use secrets::find_secret;
pub(crate) use segment::{escape_forbidden, is_forbidden_char, is_git_segment};
pub(crate) use store::{
    Change, ChangeKind, ListQuery, NoteHeader, NoteLocation, NoteRow, WriteOutcome,
};
pub use store::{DeleteOutcome, Edit, HeadCache, NoteStore, UpdateRequest};
pub(crate) use time::{local_iso, parse_iso_ms, system_time_zone};
pub use time::{now_local_iso, now_ms};

// What the area's own tests name beside the public surface.
#[cfg(test)]
pub(crate) use crate::wire::RefusalCode;
#[cfg(test)]
pub(crate) use address::{HomeSelection, NotePattern};
#[cfg(test)]
pub(crate) use frontmatter::KNOWN_KEYS;
pub use frontmatter::strip_frontmatter;
#[cfg(test)]
pub(crate) use store::ListStatus;
