//! `NoteStore`: the note operations over the five homes of one identity.

use std::borrow::Cow;
use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use jiff::tz::TimeZone;
use serde::{Deserialize, Serialize};

use super::address::{Address, Home, HomeSelection, NotePattern, escape_forbidden, is_git_segment};
use super::error::NoteError;
use super::frontmatter::{
    NoteMeta, Origin, parse_note, serialize_frontmatter, serialize_note, settled_head_len,
    split_note, strip_frontmatter,
};
use super::fsio::{self, DirLock, FileTurns, Presence};
use super::identity::{NotesIdentity, Scope, is_slug};
use super::matcher::{LineMatch, LiteralQueries};
use super::secrets::find_secret;
use super::time::{next_stamp_ms, now_ms};
use crate::wire::RefusalCode;

/// The largest serialized note file, frontmatter included.
pub const MAX_NOTE_BYTES: usize = 1_000_000;
/// The longest virtual path (the home-relative path ending in `.md`).
pub const MAX_NOTE_PATH_BYTES: usize = 512;

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

/// A result of `write`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteResult {
    /// The rendered address (`@self/…` and `@model/…` for own homes).
    pub address: String,
    /// The home's scope.
    pub resolved_scope: Scope,
    /// The note file.
    pub path: PathBuf,
    /// The metadata written.
    pub meta: NoteMeta,
    /// `created`, `overwritten` or `uncrumpled`.
    pub outcome: WriteOutcome,
}

/// A result of `read`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadResult {
    /// The rendered address.
    pub address: String,
    /// The home's scope.
    pub resolved_scope: Scope,
    /// The note file.
    pub path: PathBuf,
    /// The metadata after this read: access time and count updated, unless
    /// [`Self::access_recorded`] is false, when it is the metadata on disk.
    pub meta: NoteMeta,
    /// The body.
    pub body: String,
    /// Whether the file was rewritten with the new access metadata. It is
    /// not when the file is not valid UTF-8, or when the rewrite would
    /// exceed [`MAX_NOTE_BYTES`] (a note put there by other means, or one at
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
    pub origin: Option<Origin>,
    /// `true` crumples (keeping the first crumple time), `false` smooths.
    pub crumpled: Option<bool>,
    /// Replace every occurrence of each `old_text`.
    pub replace_all: bool,
}

/// A result of `update`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpdateResult {
    /// The rendered address.
    pub address: String,
    /// The home's scope.
    pub resolved_scope: Scope,
    /// The note file.
    pub path: PathBuf,
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
    /// The rendered target address.
    pub address: String,
    /// The target home's scope.
    pub resolved_scope: Scope,
    /// The new note file.
    pub path: PathBuf,
    /// The metadata that moved with the note.
    pub meta: NoteMeta,
    /// Whether a crumpled note at the target was replaced.
    pub replaced_crumpled_target: bool,
}

/// Which notes `list` and `search` consider.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ListQuery {
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
pub struct NoteRow {
    /// The rendered address.
    pub address: String,
    /// The home's scope.
    pub scope: Scope,
    /// The home.
    pub home: Home,
    /// The path relative to the home, ending in `.md`.
    pub rel_path: String,
    /// The note file.
    pub path: PathBuf,
    /// The metadata.
    pub meta: NoteMeta,
    /// The body.
    pub body: String,
    /// The size of the file in bytes.
    pub size_bytes: u64,
}

/// A note as listed without its body, by [`NoteStore::list_headers`]: the
/// frontmatter is read, the body is not, and the file's size is not asked
/// for (each would cost a system call per note).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteHeader {
    /// The rendered address.
    pub address: String,
    /// The home's scope.
    pub scope: Scope,
    /// The home.
    pub home: Home,
    /// The path relative to the home, ending in `.md`.
    pub rel_path: String,
    /// The note file.
    pub path: PathBuf,
    /// The metadata.
    pub meta: NoteMeta,
}

/// A note with matching lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchRow {
    /// The rendered address.
    pub address: String,
    /// The home's scope.
    pub scope: Scope,
    /// The home.
    pub home: Home,
    /// The path relative to the home, ending in `.md`.
    pub rel_path: String,
    /// The note file.
    pub path: PathBuf,
    /// The metadata.
    pub meta: NoteMeta,
    /// Every matching line, in order.
    pub matches: Vec<LineMatch>,
}

/// `list` (or `list_headers`, with `R` = [`NoteHeader`]) with the notes it
/// left out: crumpled notes hidden (outside the wastebasket) and homes that
/// could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListStatus<R = NoteRow> {
    /// Recent first, ties by address.
    pub rows: Vec<R>,
    /// Crumpled notes that matched but were hidden.
    pub crumpled_excluded: usize,
    /// Labels (`session`, `@project`, `@self`, …) of homes that failed.
    pub homes_unavailable: Vec<String>,
}

/// `search` with the notes it left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchStatus {
    /// Sorted by address.
    pub rows: Vec<SearchRow>,
    /// Crumpled notes with matches that were hidden.
    pub crumpled_excluded: usize,
    /// Labels of homes that failed.
    pub homes_unavailable: Vec<String>,
}

/// The notes store of one identity. Cheap to build; the per-file queue and
/// the `updatedAt` clock are process-wide, so any number of stores may run
/// side by side.
#[derive(Debug, Clone)]
pub struct NoteStore {
    identity: NotesIdentity,
    root: PathBuf,
    tz: TimeZone,
    secret_guard: bool,
}

/// What a listing visit decided about one file.
enum Visit<R> {
    Row(R),
    Hidden,
    Skip,
}

/// A note file met during a listing.
struct Found<'a> {
    home: &'a Home,
    rel_path: &'a str,
    path: &'a Path,
    /// The whole file, or with [`Reading::Head`] a prefix that settles the
    /// frontmatter (see [`read_head`]).
    bytes: &'a [u8],
}

/// How much of each file a listing reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reading {
    Whole,
    Head,
}

impl NoteStore {
    /// A store over `identity`'s homes, writing times in the system time zone.
    pub fn new(identity: NotesIdentity) -> NoteStore {
        let root =
            fs::canonicalize(identity.home()).unwrap_or_else(|_| identity.home().to_path_buf());
        NoteStore {
            identity,
            root,
            tz: TimeZone::system(),
            secret_guard: true,
        }
    }

    /// The same store with the credential guard on (the default) or off (the
    /// `secretGuard: false` setting). See [`crate::notes::find_secret`].
    pub fn with_secret_guard(mut self, on: bool) -> NoteStore {
        self.secret_guard = on;
        self
    }

    /// The same store writing times in `tz` (tests and fixed-zone hosts).
    pub fn with_time_zone(mut self, tz: TimeZone) -> NoteStore {
        self.tz = tz;
        self
    }

    /// The identity.
    pub fn identity(&self) -> &NotesIdentity {
        &self.identity
    }

    /// The notes root as used for paths (resolved when it exists).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The time zone times are written in.
    pub fn time_zone(&self) -> &TimeZone {
        &self.tz
    }

    /// The directory of `home`.
    pub fn home_dir(&self, home: &Home) -> PathBuf {
        home.dir(&self.root, &self.identity)
    }

    /// Parses an address against this store's identity.
    pub fn address(&self, address: &str) -> Result<Address, NoteError> {
        Address::parse(address, &self.identity)
    }

    /// The file of a parsed address.
    pub fn note_path(&self, address: &Address) -> PathBuf {
        self.home_dir(address.home()).join(address.path())
    }

    /// The rendered address of a file a listing found. A name on disk that
    /// no address could hold (a control or bidirectional character) is
    /// printed escaped, so it cannot forge rows or reorder the text around
    /// it.
    fn render_found(&self, found: &Found<'_>) -> String {
        format!(
            "{}{}",
            found.home.rendered_prefix(&self.identity),
            escape_forbidden(found.rel_path)
        )
    }

    /// Refuses `text` (a write's body, or edit `edit_index`'s new text) when
    /// it holds a credential and the guard is on.
    fn guard_secrets(&self, text: &str, edit_index: Option<usize>) -> Result<(), NoteError> {
        if !self.secret_guard {
            return Ok(());
        }
        match find_secret(text) {
            Some(found) => Err(NoteError::secret(found, edit_index)),
            None => Ok(()),
        }
    }

    /// [`fsio::inspect`], naming the address in a link refusal.
    fn inspect(&self, address: &Address, path: &Path) -> Result<Presence, NoteError> {
        fsio::inspect(&self.root, path).map_err(|e| e.at_address(&address.render(&self.identity)))
    }

    /// [`fsio::create_dirs`], naming the address in a link refusal.
    fn create_dirs(&self, address: &Address, dir: &Path) -> Result<(), NoteError> {
        fsio::create_dirs(&self.root, dir)
            .map_err(|e| e.at_address(&address.render(&self.identity)))
    }

    fn writable(&self, address: &str) -> Result<Address, NoteError> {
        let address = self.address(address)?;
        if !address.is_writable(&self.identity) {
            return Err(address.home().not_yours());
        }
        Ok(address)
    }

    /// Creates or replaces a note's body, keeping its metadata. Any leading
    /// frontmatter in `content` is stripped. A crumpled note is restored.
    pub fn write(
        &self,
        address: &str,
        content: &str,
        origin: Option<Origin>,
    ) -> Result<WriteResult, NoteError> {
        let address = self.writable(address)?;
        check_path_len(&address)?;
        let path = self.note_path(&address);
        let dir = parent(&path)?;
        let body = strip_frontmatter(content);
        self.guard_secrets(body, None)?;
        let _turn = FileTurns::take(&[&path]);
        self.create_dirs(&address, dir)?;
        let locks = DirLock::take(&[dir])?;
        let existing = match self.inspect(&address, &path)? {
            Presence::File => read_lossy(&path)?,
            Presence::Missing => None,
        };
        let stamp = next_stamp_ms();
        let (mut meta, outcome) = match &existing {
            Some(text) => {
                let mut meta = parse_note(text, stamp, &self.tz).meta;
                let outcome = if meta.is_crumpled() {
                    WriteOutcome::Uncrumpled
                } else {
                    WriteOutcome::Overwritten
                };
                meta.crumpled_at = None;
                meta.updated_at = stamp;
                (meta, outcome)
            }
            None => {
                let mut meta = NoteMeta::new_at(stamp);
                if *address.home() == Home::Session {
                    meta.project = Some(self.identity.project_key().to_owned());
                }
                (meta, WriteOutcome::Created)
            }
        };
        meta.origin = origin.unwrap_or_default();
        let text = serialize_note(&meta, body, &self.tz);
        check_size(&text)?;
        fsio::write_atomic(&path, text.as_bytes())?;
        sync_all(&locks)?;
        Ok(WriteResult {
            address: address.render(&self.identity),
            resolved_scope: address.home().scope(),
            path,
            meta,
            outcome,
        })
    }

    /// Reads a note, or `None` when it does not exist. Sets `lastAccessed`
    /// and increments `accessCount` (foreign homes too). A file that is not
    /// valid UTF-8 is returned with replacement characters and left
    /// untouched on disk. A note whose rewrite would exceed
    /// [`MAX_NOTE_BYTES`] is returned whole and left untouched too: a read
    /// never fails for the size of what is already there, and never writes
    /// a file over the limit. [`ReadResult::access_recorded`] tells which.
    pub fn read(&self, address: &str) -> Result<Option<ReadResult>, NoteError> {
        let address = self.address(address)?;
        let path = self.note_path(&address);
        let dir = parent(&path)?;
        let _turn = FileTurns::take(&[&path]);
        if self.inspect(&address, &path)? == Presence::Missing {
            return Ok(None);
        }
        let locks = DirLock::take(&[dir])?;
        let Some(bytes) = read_bytes(&path)? else {
            return Ok(None);
        };
        let now = now_ms();
        let (meta, body, access_recorded) = match String::from_utf8(bytes) {
            Ok(text) => {
                let parsed = parse_note(&text, now, &self.tz);
                let mut meta = parsed.meta.clone();
                meta.last_accessed = now;
                meta.access_count = meta.access_count.saturating_add(1);
                let rewritten = serialize_note(&meta, parsed.body, &self.tz);
                if rewritten.len() <= MAX_NOTE_BYTES {
                    fsio::write_atomic(&path, rewritten.as_bytes())?;
                    sync_all(&locks)?;
                    (meta, parsed.body.to_owned(), true)
                } else {
                    (parsed.meta, parsed.body.to_owned(), false)
                }
            }
            Err(invalid) => {
                let text = String::from_utf8_lossy(invalid.as_bytes());
                let parsed = parse_note(&text, now, &self.tz);
                (parsed.meta, parsed.body.to_owned(), false)
            }
        };
        Ok(Some(ReadResult {
            address: address.render(&self.identity),
            resolved_scope: address.home().scope(),
            path,
            meta,
            body,
            access_recorded,
        }))
    }

    /// Applies edits in order (all or nothing), and/or sets the origin,
    /// crumples or smooths.
    pub fn update(
        &self,
        address: &str,
        request: &UpdateRequest,
    ) -> Result<UpdateResult, NoteError> {
        let address = self.writable(address)?;
        if request.edits.is_empty() && request.origin.is_none() && request.crumpled.is_none() {
            return Err(NoteError::new(
                RefusalCode::NothingToDo,
                "nothing to update: pass edits, origin, or crumpled",
            ));
        }
        for (index, edit) in request.edits.iter().enumerate() {
            self.guard_secrets(&edit.new_text, Some(index))?;
        }
        let path = self.note_path(&address);
        let dir = parent(&path)?;
        let _turn = FileTurns::take(&[&path]);
        if self.inspect(&address, &path)? == Presence::Missing {
            return Err(not_found());
        }
        let locks = DirLock::take(&[dir])?;
        let raw = read_text(&path)?.ok_or_else(not_found)?;
        let parsed = parse_note(&raw, now_ms(), &self.tz);
        let mut body = parsed.body.to_owned();
        let mut applied = 0;
        for (index, edit) in request.edits.iter().enumerate() {
            apply_edit(&mut body, edit, request.replace_all)
                .map_err(|message| message.into_error(index))?;
            if edit.old_text != edit.new_text {
                applied += 1;
            }
        }
        let before = parsed.meta;
        let mut meta = before.clone();
        if let Some(origin) = request.origin {
            meta.origin = origin;
        }
        match request.crumpled {
            Some(true) if meta.crumpled_at.is_none() => meta.crumpled_at = Some(now_ms()),
            Some(false) => meta.crumpled_at = None,
            _ => {}
        }
        let body_changed = body != parsed.body;
        let meta_changed = meta != before;
        if body_changed || meta.origin != before.origin {
            meta.updated_at = next_stamp_ms();
        }
        let kind = match (body_changed, meta_changed) {
            (false, false) => ChangeKind::None,
            (true, false) => ChangeKind::Body,
            (false, true) => ChangeKind::Metadata,
            (true, true) => ChangeKind::File,
        };
        let change = if kind == ChangeKind::None {
            Change {
                kind,
                before: String::new(),
                after: String::new(),
            }
        } else {
            let text = serialize_note(&meta, &body, &self.tz);
            check_size(&text)?;
            fsio::write_atomic(&path, text.as_bytes())?;
            sync_all(&locks)?;
            match kind {
                ChangeKind::Body => Change {
                    kind,
                    before: parsed.body.to_owned(),
                    after: body,
                },
                ChangeKind::Metadata => Change {
                    kind,
                    before: serialize_frontmatter(&before, &self.tz),
                    after: serialize_frontmatter(&meta, &self.tz),
                },
                _ => Change {
                    kind,
                    before: raw,
                    after: text,
                },
            }
        };
        Ok(UpdateResult {
            address: address.render(&self.identity),
            resolved_scope: address.home().scope(),
            path,
            meta,
            applied,
            change,
        })
    }

    /// Moves a note with all its metadata. A crumpled target is replaced; a
    /// live one is refused. The new file is written before the old one is
    /// removed.
    pub fn rename(&self, from: &str, to: &str) -> Result<RenameResult, NoteError> {
        let source = self.writable(from)?;
        let target = self.writable(to)?;
        check_path_len(&target)?;
        let source_path = self.note_path(&source);
        let target_path = self.note_path(&target);
        if source_path == target_path {
            return Err(NoteError::new(
                RefusalCode::NothingToDo,
                "rename_to resolves to the same note",
            ));
        }
        let source_dir = parent(&source_path)?;
        let target_dir = parent(&target_path)?;
        let _turns = FileTurns::take(&[&source_path, &target_path]);
        if self.inspect(&source, &source_path)? == Presence::Missing {
            return Err(not_found());
        }
        self.create_dirs(&target, target_dir)?;
        let locks = DirLock::take(&[source_dir, target_dir])?;
        let raw = read_text(&source_path)?.ok_or_else(not_found)?;
        let replaced_crumpled_target = match self.inspect(&target, &target_path)? {
            Presence::Missing => false,
            Presence::File => match read_lossy(&target_path)? {
                None => false,
                Some(text) if parse_note(&text, now_ms(), &self.tz).meta.is_crumpled() => true,
                Some(_) => {
                    return Err(NoteError::new(
                        RefusalCode::AlreadyExists,
                        "rename_to target is a live note; crumple it first or pick another address",
                    ));
                }
            },
        };
        let stamp = next_stamp_ms();
        let parsed = parse_note(&raw, stamp, &self.tz);
        let mut meta = parsed.meta;
        let into_session = *target.home() == Home::Session;
        let from_session = *source.home() == Home::Session;
        if into_session && !from_session {
            meta.project = Some(self.identity.project_key().to_owned());
        } else if from_session && !into_session {
            meta.project = None;
        }
        meta.updated_at = stamp;
        let text = serialize_note(&meta, parsed.body, &self.tz);
        check_size(&text)?;
        fsio::write_atomic(&target_path, text.as_bytes())?;
        fs::remove_file(&source_path).map_err(|e| NoteError::io("remove", &source_path, &e))?;
        sync_all(&locks)?;
        Ok(RenameResult {
            from: source.render(&self.identity),
            address: target.render(&self.identity),
            resolved_scope: target.home().scope(),
            path: target_path,
            meta,
            replaced_crumpled_target,
        })
    }

    /// Lists notes, recent first (ties by address). Fails on the first home
    /// that cannot be read; `list_with_status` reports it instead.
    pub fn list(&self, query: &ListQuery) -> Result<Vec<NoteRow>, NoteError> {
        let (rows, _, failures) = self.list_rows(query)?;
        match failures.into_iter().next() {
            Some((_, error)) => Err(error),
            None => Ok(rows),
        }
    }

    /// Lists notes, reporting hidden crumpled notes and unreadable homes.
    pub fn list_with_status(&self, query: &ListQuery) -> Result<ListStatus, NoteError> {
        let (rows, crumpled_excluded, failures) = self.list_rows(query)?;
        Ok(ListStatus {
            rows,
            crumpled_excluded,
            homes_unavailable: failures.into_iter().map(|(label, _)| label).collect(),
        })
    }

    /// Lists notes like [`Self::list`] without their bodies: only the start
    /// of each file is read, as far as its frontmatter goes. The fast path
    /// for callers that show metadata (`notes_list`, the boot).
    pub fn list_headers(&self, query: &ListQuery) -> Result<Vec<NoteHeader>, NoteError> {
        let (rows, _, failures) = self.header_rows(query)?;
        match failures.into_iter().next() {
            Some((_, error)) => Err(error),
            None => Ok(rows),
        }
    }

    /// [`Self::list_headers`], reporting hidden crumpled notes and unreadable
    /// homes as [`Self::list_with_status`] does.
    pub fn list_headers_with_status(
        &self,
        query: &ListQuery,
    ) -> Result<ListStatus<NoteHeader>, NoteError> {
        let (rows, crumpled_excluded, failures) = self.header_rows(query)?;
        Ok(ListStatus {
            rows,
            crumpled_excluded,
            homes_unavailable: failures.into_iter().map(|(label, _)| label).collect(),
        })
    }

    /// Reads a listed note whole, as [`Self::list`] would have returned it:
    /// after its file's queue turn and without touching access metadata.
    /// `None` when it is gone since it was listed, or when its path now
    /// crosses a link or is not a regular file (a listing skips those).
    /// The note may have changed since it was listed; the row is what is on
    /// disk now.
    pub fn peek_row(&self, header: &NoteHeader) -> Result<Option<NoteRow>, NoteError> {
        let address = Address::on_disk(header.home.clone(), &header.rel_path)?;
        let path = self.note_path(&address);
        let _turn = FileTurns::take(&[&path]);
        match fsio::inspect(&self.root, &path) {
            Ok(Presence::File) => {}
            Ok(Presence::Missing) => return Ok(None),
            Err(error) if error.code() == RefusalCode::InvalidAddress => return Ok(None),
            Err(error) => return Err(error),
        }
        let Some(bytes) = read_bytes(&path)? else {
            return Ok(None);
        };
        let text = text_of(&bytes);
        let parsed = parse_note(&text, now_ms(), &self.tz);
        Ok(Some(NoteRow {
            address: address.render(&self.identity),
            scope: address.home().scope(),
            home: header.home.clone(),
            rel_path: address.path().to_owned(),
            body: parsed.body.to_owned(),
            meta: parsed.meta,
            size_bytes: bytes.len() as u64,
            path,
        }))
    }

    /// Searches note bodies line by line for any of `queries`
    /// (case-insensitive literals), rows sorted by address. Fails on the
    /// first home that cannot be read; `search_with_status` reports it.
    pub fn search<Q: AsRef<str>>(
        &self,
        queries: &[Q],
        query: &ListQuery,
    ) -> Result<Vec<SearchRow>, NoteError> {
        let (rows, _, failures) = self.search_rows(queries, query)?;
        match failures.into_iter().next() {
            Some((_, error)) => Err(error),
            None => Ok(rows),
        }
    }

    /// Searches, reporting hidden crumpled notes with matches and unreadable
    /// homes.
    pub fn search_with_status<Q: AsRef<str>>(
        &self,
        queries: &[Q],
        query: &ListQuery,
    ) -> Result<SearchStatus, NoteError> {
        let (rows, crumpled_excluded, failures) = self.search_rows(queries, query)?;
        Ok(SearchStatus {
            rows,
            crumpled_excluded,
            homes_unavailable: failures.into_iter().map(|(label, _)| label).collect(),
        })
    }

    fn list_rows(&self, query: &ListQuery) -> Result<Scanned<NoteRow>, NoteError> {
        let now = now_ms();
        let (mut rows, hidden, failures) = self.scan(query, Reading::Whole, |found| {
            let text = text_of(found.bytes);
            let parsed = parse_note(&text, now, &self.tz);
            if parsed.meta.is_crumpled() != query.wastebasket {
                return if parsed.meta.is_crumpled() {
                    Visit::Hidden
                } else {
                    Visit::Skip
                };
            }
            Visit::Row(NoteRow {
                address: self.render_found(&found),
                scope: found.home.scope(),
                home: found.home.clone(),
                rel_path: found.rel_path.to_owned(),
                path: found.path.to_path_buf(),
                body: parsed.body.to_owned(),
                meta: parsed.meta,
                size_bytes: found.bytes.len() as u64,
            })
        })?;
        rows.sort_by(|a, b| recent_first((&a.meta, &a.address), (&b.meta, &b.address)));
        Ok((rows, hidden, failures))
    }

    fn header_rows(&self, query: &ListQuery) -> Result<Scanned<NoteHeader>, NoteError> {
        let now = now_ms();
        let (mut rows, hidden, failures) = self.scan(query, Reading::Head, |found| {
            let meta = split_note(&text_of(found.bytes)).meta(now, &self.tz);
            if meta.is_crumpled() != query.wastebasket {
                return if meta.is_crumpled() {
                    Visit::Hidden
                } else {
                    Visit::Skip
                };
            }
            Visit::Row(NoteHeader {
                address: self.render_found(&found),
                scope: found.home.scope(),
                home: found.home.clone(),
                rel_path: found.rel_path.to_owned(),
                path: found.path.to_path_buf(),
                meta,
            })
        })?;
        rows.sort_by(|a, b| recent_first((&a.meta, &a.address), (&b.meta, &b.address)));
        Ok((rows, hidden, failures))
    }

    fn search_rows<Q: AsRef<str>>(
        &self,
        queries: &[Q],
        query: &ListQuery,
    ) -> Result<Scanned<SearchRow>, NoteError> {
        let matcher = LiteralQueries::new(queries)?;
        let now = now_ms();
        let mut scratch = String::new();
        let mut raw_scratch = Vec::new();
        let (mut rows, hidden, failures) = self.scan(query, Reading::Whole, |found| {
            if !matcher.could_match(found.bytes, &mut raw_scratch) {
                return Visit::Skip;
            }
            let text = text_of(found.bytes);
            let split = split_note(&text);
            let matches = matcher.find_lines(split.body, &mut scratch);
            if matches.is_empty() {
                return Visit::Skip;
            }
            let meta = split.meta(now, &self.tz);
            if meta.is_crumpled() != query.wastebasket {
                return if meta.is_crumpled() {
                    Visit::Hidden
                } else {
                    Visit::Skip
                };
            }
            Visit::Row(SearchRow {
                address: self.render_found(&found),
                scope: found.home.scope(),
                home: found.home.clone(),
                rel_path: found.rel_path.to_owned(),
                path: found.path.to_path_buf(),
                meta,
                matches,
            })
        })?;
        rows.sort_by(|a, b| a.address.cmp(&b.address));
        Ok((rows, hidden, failures))
    }

    /// Walks the selected homes and hands every matching `.md` file to
    /// `visit`. A home that fails contributes no rows and is reported with
    /// its label.
    fn scan<R>(
        &self,
        query: &ListQuery,
        reading: Reading,
        mut visit: impl FnMut(Found<'_>) -> Visit<R>,
    ) -> Result<Scanned<R>, NoteError> {
        let pattern = match query.pattern.as_deref() {
            Some(text) => NotePattern::parse(text, &self.identity)?,
            None => None,
        };
        let mut failures = Vec::new();
        let homes = self.selected_homes(query, pattern.as_ref(), &mut failures)?;
        let mut rows = Vec::new();
        let mut hidden = 0;
        let mut buffer = Vec::new();
        for home in homes {
            let mut home_rows = Vec::new();
            let mut home_hidden = 0;
            let walked =
                self.walk_home(
                    &home,
                    pattern.as_ref(),
                    reading,
                    &mut buffer,
                    |found| match visit(found) {
                        Visit::Row(row) => home_rows.push(row),
                        Visit::Hidden => home_hidden += 1,
                        Visit::Skip => {}
                    },
                );
            match walked {
                Ok(()) => {
                    rows.append(&mut home_rows);
                    hidden += home_hidden;
                }
                Err(error) => failures.push((home.label(&self.identity), error)),
            }
        }
        Ok((rows, hidden, failures))
    }

    /// The homes a query traverses: the pattern's head narrows them, the
    /// scope (and `who`) picks one.
    fn selected_homes(
        &self,
        query: &ListQuery,
        pattern: Option<&NotePattern>,
        failures: &mut Vec<(String, NoteError)>,
    ) -> Result<Vec<Home>, NoteError> {
        let scoped = self.scoped_home(query)?;
        let selection = pattern.map_or(&HomeSelection::Own, NotePattern::homes);
        let homes = match selection {
            HomeSelection::Own => match &scoped {
                Some(home) => vec![home.clone()],
                None => Home::own(&self.identity).to_vec(),
            },
            HomeSelection::One(home) => vec![home.clone()],
            HomeSelection::AllAgents => self.enumerate("agents", Home::Agent, failures),
            HomeSelection::AllModels => self.enumerate("models", Home::Model, failures),
            HomeSelection::Nothing => Vec::new(),
        };
        Ok(match (selection, &scoped) {
            (HomeSelection::Own, _) | (_, None) => homes,
            (_, Some(scoped)) => homes.into_iter().filter(|home| home == scoped).collect(),
        })
    }

    fn scoped_home(&self, query: &ListQuery) -> Result<Option<Home>, NoteError> {
        let invalid = |message: &str| NoteError::new(RefusalCode::InvalidScope, message);
        if let Some(who) = &query.who {
            match query.scope {
                None => return Err(invalid("who requires agent or model scope")),
                Some(Scope::Agent | Scope::Model) => {}
                Some(_) => return Err(invalid("who is only valid with agent or model scope")),
            }
            if !is_slug(who) {
                return Err(invalid("who must be a canonical lowercase slug"));
            }
        }
        let who = |own: &str| query.who.clone().unwrap_or_else(|| own.to_owned());
        Ok(query.scope.map(|scope| match scope {
            Scope::Session => Home::Session,
            Scope::Project => Home::Project,
            Scope::Human => Home::Human,
            Scope::Agent => Home::Agent(who(self.identity.agent())),
            Scope::Model => Home::Model(who(self.identity.model())),
        }))
    }

    /// Every slug-named real directory under `<root>/<namespace>/`.
    fn enumerate(
        &self,
        namespace: &str,
        make: fn(String) -> Home,
        failures: &mut Vec<(String, NoteError)>,
    ) -> Vec<Home> {
        let dir = self.root.join(namespace);
        let listed = (|| {
            if !fsio::inspect_dir(&self.root, &dir)? {
                return Ok(Vec::new());
            }
            let entries =
                fs::read_dir(&dir).map_err(|e| NoteError::io("read directory", &dir, &e))?;
            let mut homes = Vec::new();
            for entry in entries {
                let entry = entry.map_err(|e| NoteError::io("read directory", &dir, &e))?;
                let is_dir = entry
                    .file_type()
                    .map_err(|e| NoteError::io("inspect", &entry.path(), &e))?
                    .is_dir();
                if let Some(name) = entry.file_name().to_str()
                    && is_dir
                    && is_slug(name)
                {
                    homes.push(make(name.to_owned()));
                }
            }
            homes.sort();
            Ok(homes)
        })();
        listed.unwrap_or_else(|error| {
            failures.push((format!("@{namespace}"), error));
            Vec::new()
        })
    }

    /// Walks one home without following links, handing each `.md` file whose
    /// concrete address matches the pattern to `visit`.
    fn walk_home(
        &self,
        home: &Home,
        pattern: Option<&NotePattern>,
        reading: Reading,
        buffer: &mut Vec<u8>,
        mut visit: impl FnMut(Found<'_>),
    ) -> Result<(), NoteError> {
        let dir = self.home_dir(home);
        // The home directory and every directory above it (below the root)
        // must be real directories; a missing home is simply empty.
        if !fsio::inspect_dir(&self.root, &dir)? {
            return Ok(());
        }
        let concrete_prefix = home.concrete_prefix();
        let mut concrete = String::new();
        // Git's own directories hold no notes (the audit skips them, and no
        // address can name them).
        let walk = walkdir::WalkDir::new(&dir)
            .follow_links(false)
            .min_depth(1)
            .into_iter()
            .filter_entry(|entry| {
                !entry
                    .file_name()
                    .to_str()
                    .is_some_and(|name| is_git_segment(name.strip_suffix(".md").unwrap_or(name)))
            });
        for entry in walk {
            let entry = entry.map_err(|e| {
                let path = e.path().unwrap_or(&dir).to_path_buf();
                let io = e
                    .into_io_error()
                    .unwrap_or_else(|| io::Error::other("directory walk failed"));
                NoteError::io("read directory", &path, &io)
            })?;
            if !entry.file_type().is_file() {
                continue;
            }
            let path = entry.path();
            let Some(rel_path) = path.strip_prefix(&dir).ok().and_then(Path::to_str) else {
                continue;
            };
            if !rel_path.ends_with(".md") {
                continue;
            }
            if let Some(pattern) = pattern {
                concrete.clear();
                concrete.push_str(&concrete_prefix);
                concrete.push_str(rel_path);
                if !pattern.matches(&concrete) {
                    continue;
                }
            }
            // Wait for any operation of this process on the file to settle.
            let turn = FileTurns::take(&[path]);
            let read = File::open(path).and_then(|file| match reading {
                Reading::Whole => read_into(file, buffer, 0),
                Reading::Head => read_head(file, buffer),
            });
            drop(turn);
            let len = match read {
                Ok(read) => read,
                // Renamed away since the directory was read.
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(NoteError::io("read", path, &e)),
            };
            visit(Found {
                home,
                rel_path,
                path,
                bytes: &buffer[..len],
            });
        }
        Ok(())
    }
}

/// `list` order: `updatedAt` descending, ties by address.
fn recent_first(a: (&NoteMeta, &str), b: (&NoteMeta, &str)) -> std::cmp::Ordering {
    b.0.updated_at
        .cmp(&a.0.updated_at)
        .then_with(|| a.1.cmp(b.1))
}

type Scanned<R> = (Vec<R>, usize, Vec<(String, NoteError)>);

fn not_found() -> NoteError {
    NoteError::new(RefusalCode::NotFound, "note not found")
}

fn parent(path: &Path) -> Result<&Path, NoteError> {
    path.parent().ok_or_else(|| {
        NoteError::new(
            RefusalCode::InternalError,
            format!("{} has no parent directory", path.display()),
        )
    })
}

fn check_path_len(address: &Address) -> Result<(), NoteError> {
    let len = address.path().len();
    if len > MAX_NOTE_PATH_BYTES {
        return Err(NoteError::new(
            RefusalCode::TooLarge,
            format!("note path exceeds {MAX_NOTE_PATH_BYTES} UTF-8 bytes (got {len})"),
        ));
    }
    Ok(())
}

fn check_size(text: &str) -> Result<(), NoteError> {
    if text.len() > MAX_NOTE_BYTES {
        return Err(NoteError::new(
            RefusalCode::TooLarge,
            format!(
                "note exceeds {MAX_NOTE_BYTES} UTF-8 bytes (serialized {})",
                text.len()
            ),
        ));
    }
    Ok(())
}

fn sync_all(locks: &[DirLock]) -> Result<(), NoteError> {
    locks.iter().try_for_each(DirLock::sync)
}

/// Reads the rest of a file into `buffer` after its first `filled` bytes
/// and returns the total length. The buffer keeps its initialized length
/// across files, so it is zeroed only when it grows, and no per-file size
/// query is made.
fn read_into(mut file: File, buffer: &mut Vec<u8>, mut filled: usize) -> io::Result<usize> {
    const CHUNK: usize = 16 * 1024;
    loop {
        if buffer.len() - filled < CHUNK {
            buffer.resize(filled + 2 * CHUNK, 0);
        }
        match file.read(&mut buffer[filled..]) {
            Ok(0) => return Ok(filled),
            Ok(read) => filled += read,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// How many bytes `read_head` reads before it gives up on a short head:
/// a page, far more than any ordinary frontmatter block.
const HEAD_BYTES: usize = 4096;

/// Reads the start of a file into `buffer`, just enough to settle its
/// frontmatter ([`settled_head_len`]), and returns the length of the
/// settling prefix. A note whose block runs past [`HEAD_BYTES`] (or which
/// has no line break there) is read whole and the whole length returned,
/// as is a file that ends first. An ordinary note costs a single `read`:
/// no size query, no second read to meet the end of the file.
fn read_head(mut file: File, buffer: &mut Vec<u8>) -> io::Result<usize> {
    if buffer.len() < HEAD_BYTES {
        buffer.resize(HEAD_BYTES, 0);
    }
    let mut filled = 0;
    while filled < HEAD_BYTES {
        match file.read(&mut buffer[filled..HEAD_BYTES]) {
            Ok(0) => return Ok(filled),
            Ok(read) => filled += read,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
        if let Some(len) = settled_head_len(&buffer[..filled]) {
            return Ok(len);
        }
    }
    read_into(file, buffer, filled)
}

/// The bytes as text; invalid UTF-8 is replaced (listing never rewrites).
fn text_of(bytes: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// The file's bytes, or `None` when it vanished.
fn read_bytes(path: &Path) -> Result<Option<Vec<u8>>, NoteError> {
    match fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(NoteError::io("read", path, &e)),
    }
}

/// The file as text for a rewrite that keeps its body: invalid UTF-8 is an
/// `io_error` so no byte is ever silently replaced.
fn read_text(path: &Path) -> Result<Option<String>, NoteError> {
    let Some(bytes) = read_bytes(path)? else {
        return Ok(None);
    };
    String::from_utf8(bytes).map(Some).map_err(|_| {
        let error = io::Error::new(
            io::ErrorKind::InvalidData,
            "the note file is not valid UTF-8; refusing to rewrite it",
        );
        NoteError::io("read", path, &error)
    })
}

/// The file as text where only its metadata matters (invalid UTF-8 is
/// replaced).
fn read_lossy(path: &Path) -> Result<Option<String>, NoteError> {
    Ok(
        read_bytes(path)?.map(|bytes| match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(invalid) => String::from_utf8_lossy(invalid.as_bytes()).into_owned(),
        }),
    )
}

/// Why an edit failed, before its index is known.
enum EditFailure {
    Empty,
    Missing,
    Ambiguous(Vec<usize>),
}

impl EditFailure {
    fn into_error(self, index: usize) -> NoteError {
        match self {
            Self::Empty => {
                NoteError::no_match(index, format!("edit {index}: oldText must not be empty"))
            }
            Self::Missing => NoteError::no_match(
                index,
                format!("edit {index}: oldText was not found in the note"),
            ),
            Self::Ambiguous(lines) => {
                let shown: Vec<String> = lines.iter().take(8).map(usize::to_string).collect();
                let more = match lines.len().saturating_sub(8) {
                    0 => String::new(),
                    rest => format!(" and {rest} more"),
                };
                NoteError::new(
                    RefusalCode::AmbiguousEdit,
                    format!(
                        "edit {index}: oldText occurs {} times (lines {}{more}); add surrounding text to make it unique or pass replace_all",
                        lines.len(),
                        shown.join(", ")
                    ),
                )
                .with_line_numbers(lines)
                .with_edit_index(index)
            }
        }
    }
}

/// Applies one edit to `body`.
fn apply_edit(body: &mut String, edit: &Edit, replace_all: bool) -> Result<(), EditFailure> {
    if edit.old_text.is_empty() {
        return Err(EditFailure::Empty);
    }
    let starts: Vec<usize> = body
        .match_indices(&edit.old_text)
        .map(|(at, _)| at)
        .collect();
    match starts.len() {
        0 => Err(EditFailure::Missing),
        1 => {
            *body = body.replacen(&edit.old_text, &edit.new_text, 1);
            Ok(())
        }
        _ if replace_all => {
            *body = body.replace(&edit.old_text, &edit.new_text);
            Ok(())
        }
        _ => Err(EditFailure::Ambiguous(line_numbers(body, &starts))),
    }
}

/// The 1-based line of each byte offset in `starts` (ascending).
fn line_numbers(text: &str, starts: &[usize]) -> Vec<usize> {
    let mut line = 1;
    let mut counted = 0;
    starts
        .iter()
        .map(|&start| {
            line += memchr::memchr_iter(b'\n', &text.as_bytes()[counted..start]).count();
            counted = start;
            line
        })
        .collect()
}
