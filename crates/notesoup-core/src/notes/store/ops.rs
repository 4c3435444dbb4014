//! The operations on one note: `write`, `read`, `update` and `rename`.

use std::fs;
use std::path::Path;

use crate::notes::address::{Address, Home};
use crate::notes::error::NoteError;
use crate::notes::frontmatter::{
    NoteMeta, Origin, parse_note, serialize_frontmatter, serialize_note, strip_frontmatter,
};
use crate::notes::fsio::{self, DirLock, FileTurns, Presence};
use crate::notes::time::{next_stamp_ms, now_ms};
use crate::wire::RefusalCode;

use super::files::{read_bytes, read_lossy, read_text};
use super::{
    Change, ChangeKind, Edit, MAX_NOTE_BYTES, MAX_NOTE_PATH_BYTES, NoteStore, ReadResult,
    RenameResult, UpdateRequest, UpdateResult, WriteOutcome, WriteResult,
};

impl NoteStore {
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
        let path = self.note_path(&address)?;
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
            location: self.locate(&address, path),
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
        let path = self.note_path(&address)?;
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
            location: self.locate(&address, path),
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
        let path = self.note_path(&address)?;
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
            location: self.locate(&address, path),
            meta,
            applied,
            change,
        })
    }

    /// The body `request`'s edits would leave the note at `address` with,
    /// as it is now, without writing or touching anything: for a caller
    /// that asks before it updates (a human's command line refusing to
    /// blank a note). `None` when the note is missing or an edit does not
    /// apply (the update itself then says why).
    pub fn edited_body(
        &self,
        address: &str,
        request: &UpdateRequest,
    ) -> Result<Option<String>, NoteError> {
        let address = self.address(address)?;
        let path = self.note_path(&address)?;
        if self.inspect(&address, &path)? == Presence::Missing {
            return Ok(None);
        }
        let Some(raw) = read_lossy(&path)? else {
            return Ok(None);
        };
        let mut body = parse_note(&raw, now_ms(), &self.tz).body.to_owned();
        for edit in &request.edits {
            if apply_edit(&mut body, edit, request.replace_all).is_err() {
                return Ok(None);
            }
        }
        Ok(Some(body))
    }

    /// Moves a note with all its metadata. A crumpled target is replaced; a
    /// live one is refused. The new file is written before the old one is
    /// removed.
    pub fn rename(&self, from: &str, to: &str) -> Result<RenameResult, NoteError> {
        let source = self.writable(from)?;
        let target = self.writable(to)?;
        check_path_len(&target)?;
        let source_path = self.note_path(&source)?;
        let target_path = self.note_path(&target)?;
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
            location: self.locate(&target, target_path),
            meta,
            replaced_crumpled_target,
        })
    }
}

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
