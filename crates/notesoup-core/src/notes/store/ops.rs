//! The operations on one note: `write`, `read`, `update` and `rename`.

use std::ffi::OsStr;
use std::path::Path;

use crate::notes::address::{Address, Home};
use crate::notes::beneath::{BeneathError, DirHandle, Kind};
use crate::notes::error::{NoteError, SecretPlace};
use crate::notes::frontmatter::{
    NoteMeta, NoteOrigin, parse_note, serialize_frontmatter, serialize_note, strip_frontmatter,
    with_access,
};
use crate::notes::fsio::FileTurns;
use crate::notes::secrets::find_secret;
use crate::notes::time::{local_iso, next_stamp_ms, now_ms};
use crate::wire::RefusalCode;

use super::files::{read_bytes, text_checked, text_lossy};
use super::{
    Change, ChangeKind, DeleteOutcome, Edit, MAX_NOTE_PATH_BYTES, NoteStore, ReadResult,
    RenameResult, UpdateRequest, UpdateResult, WriteOutcome, WriteResult,
};

impl NoteStore {
    /// Creates or replaces a note's body, keeping its metadata. Any leading
    /// frontmatter in `content` is stripped. A crumpled note is restored.
    pub fn write(
        &self,
        address: &str,
        content: &str,
        origin: Option<NoteOrigin>,
    ) -> Result<WriteResult, NoteError> {
        let address = self.writable(address)?;
        check_path_len(&address)?;
        let path = self.note_path(&address)?;
        let (rel_dir, name) = self.place(&address)?;
        let body = strip_frontmatter(content);
        self.guard_address(&address)?;
        self.guard_body(body, SecretPlace::Content)?;
        let _turn = FileTurns::take(&[&path]);
        let mut dir = self
            .create_root()?
            .create_dirs(&rel_dir)
            .map_err(|e| self.refusal(&address, e))?;
        lock(&mut dir)?;
        let existing = read_bytes(&dir, name)
            .map_err(|e| self.refusal(&address, e))?
            .map(text_lossy);
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
        replace(&dir, name, &text, &path)?;
        Ok(WriteResult {
            location: self.locate(&address, path),
            meta,
            outcome,
        })
    }

    /// Reads a note, or `None` when it does not exist. Sets `lastAccessed`
    /// and increments `accessCount` (foreign homes too), changing nothing
    /// else in the file: the two lines are set in place in its frontmatter
    /// block (added to it when missing), every other field, its order and
    /// the body kept byte for byte. A note without a frontmatter block is
    /// left as it is (no access is recorded: a read never restructures a
    /// note). A file that is not valid UTF-8 is returned with replacement
    /// characters and left untouched on disk. A note whose rewrite would
    /// exceed [`NoteStore::MAX_NOTE_BYTES`] is returned whole and left untouched too:
    /// a read never fails for the size of what is already there, and never
    /// writes a file over the limit. The result's `access_recorded` tells
    /// which.
    pub fn read(&self, address: &str) -> Result<Option<ReadResult>, NoteError> {
        let address = self.address(address)?;
        let path = self.note_path(&address)?;
        let (rel_dir, name) = self.place(&address)?;
        let _turn = FileTurns::take(&[&path]);
        let Some(mut dir) = self.note_dir(&address, &rel_dir)? else {
            return Ok(None);
        };
        // The file is opened under the lock: one opened before it may be
        // replaced by another process's write, and rewriting its access
        // metadata would undo that write.
        lock(&mut dir)?;
        let Some(bytes) = read_bytes(&dir, name).map_err(|e| self.refusal(&address, e))? else {
            return Ok(None);
        };
        let now = now_ms();
        let (meta, body, access_recorded) = match String::from_utf8(bytes) {
            Ok(text) => {
                let parsed = parse_note(&text, now, &self.tz);
                let mut meta = parsed.meta.clone();
                meta.last_accessed = now;
                meta.access_count = meta.access_count.saturating_add(1);
                let rewritten = with_access(&text, &local_iso(now, &self.tz), meta.access_count)
                    .filter(|rewritten| rewritten.len() <= NoteStore::MAX_NOTE_BYTES);
                match rewritten {
                    Some(rewritten) => {
                        replace(&dir, name, &rewritten, &path)?;
                        (meta, parsed.body.to_owned(), true)
                    }
                    None => (parsed.meta, parsed.body.to_owned(), false),
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
        let path = self.note_path(&address)?;
        let (rel_dir, name) = self.place(&address)?;
        let _turn = FileTurns::take(&[&path]);
        let mut dir = self.note_dir(&address, &rel_dir)?.ok_or_else(not_found)?;
        lock(&mut dir)?;
        let bytes = read_bytes(&dir, name)
            .map_err(|e| self.refusal(&address, e))?
            .ok_or_else(not_found)?;
        let raw = text_checked(bytes, &path)?;
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
        // Metadata alone adds no text: crumpling a note that holds a
        // credential (to retire it) stays possible.
        if body_changed {
            self.guard_address(&address)?;
            if let Some(found) = self.secret_in(&body) {
                // Name the edit that brought the credential when one did
                // by itself; otherwise the edits joined it, or it was there.
                let edit_index = request
                    .edits
                    .iter()
                    .position(|edit| find_secret(&edit.new_text).is_some());
                return Err(NoteError::secret(found, SecretPlace::Edited { edit_index }));
            }
        }
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
            replace(&dir, name, &text, &path)?;
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
        let (rel_dir, name) = self.place(&address)?;
        let Some(dir) = self.note_dir(&address, &rel_dir)? else {
            return Ok(None);
        };
        let Some(raw) = read_bytes(&dir, name)
            .map_err(|e| self.refusal(&address, e))?
            .map(text_lossy)
        else {
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
        self.guard_address(&target)?;
        let source_path = self.note_path(&source)?;
        let target_path = self.note_path(&target)?;
        if source_path == target_path {
            return Err(NoteError::new(
                RefusalCode::NothingToDo,
                "rename_to resolves to the same note",
            ));
        }
        let (source_rel, source_name) = self.place(&source)?;
        let (target_rel, target_name) = self.place(&target)?;
        let _turns = FileTurns::take(&[&source_path, &target_path]);
        let mut source_dir = self.note_dir(&source, &source_rel)?.ok_or_else(not_found)?;
        // Before any directory is made for the target: a missing source
        // creates nothing.
        self.check_no_link(&source, &source_dir, source_name)?;
        let mut target_dir = if target_rel == source_rel {
            None
        } else {
            let root = self.create_root()?;
            let created = root.create_dirs(&target_rel);
            Some(created.map_err(|e| self.refusal(&target, e))?)
        };
        // Both directories are locked in the order of their paths, so two
        // renames between the same directories cannot deadlock.
        match target_dir.as_mut() {
            None => lock(&mut source_dir)?,
            Some(target_dir) if target_rel < source_rel => {
                lock(target_dir)?;
                lock(&mut source_dir)?;
            }
            Some(target_dir) => {
                lock(&mut source_dir)?;
                lock(target_dir)?;
            }
        }
        let source_dir = &source_dir;
        let target_dir = target_dir.as_ref().unwrap_or(source_dir);
        let bytes = read_bytes(source_dir, source_name)
            .map_err(|e| self.refusal(&source, e))?
            .ok_or_else(not_found)?;
        let raw = text_checked(bytes, &source_path)?;
        let existing = read_bytes(target_dir, target_name).map_err(|e| self.refusal(&target, e))?;
        let replaced_crumpled_target = match existing.map(text_lossy) {
            None => false,
            Some(text) if parse_note(&text, now_ms(), &self.tz).meta.is_crumpled() => true,
            Some(_) => {
                return Err(NoteError::new(
                    RefusalCode::AlreadyExists,
                    "rename_to target is a live note; crumple it first or pick another address",
                ));
            }
        };
        let stamp = next_stamp_ms();
        let parsed = parse_note(&raw, stamp, &self.tz);
        self.guard_body(parsed.body, SecretPlace::Moved)?;
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
        target_dir
            .replace(target_name, text.as_bytes())
            .map_err(|e| NoteError::io("write", &target_path, &e))?;
        source_dir
            .remove_file(source_name)
            .map_err(|e| NoteError::io("remove", &source_path, &e))?;
        sync(target_dir)?;
        if !std::ptr::eq(target_dir, source_dir) {
            sync(source_dir)?;
        }
        Ok(RenameResult {
            from: source.render(&self.identity),
            location: self.locate(&target, target_path),
            meta,
            replaced_crumpled_target,
        })
    }
}

impl NoteStore {
    /// Deletes a note for good, for a person (the command line's `notes
    /// delete`): no agent tool calls it (the agent crumples; the dream's
    /// wastebasket rule deletes). Only in a writable home; a link is
    /// refused, never followed. A live note is left as it is
    /// ([`DeleteOutcome::Live`]) unless `live` is set: crumple first is the
    /// rule. The file is unlinked inside its open, locked directory, which
    /// is then synced.
    pub fn delete(&self, address: &str, live: bool) -> Result<DeleteOutcome, NoteError> {
        let address = self.writable(address)?;
        let path = self.note_path(&address)?;
        let (rel_dir, name) = self.place(&address)?;
        let _turn = FileTurns::take(&[&path]);
        let mut dir = self.note_dir(&address, &rel_dir)?.ok_or_else(not_found)?;
        self.check_no_link(&address, &dir, name)?;
        lock(&mut dir)?;
        let bytes = read_bytes(&dir, name)
            .map_err(|e| self.refusal(&address, e))?
            .ok_or_else(not_found)?;
        let was_crumpled = parse_note(&text_lossy(bytes), now_ms(), &self.tz)
            .meta
            .is_crumpled();
        let rendered = address.render(&self.identity);
        if !was_crumpled && !live {
            return Ok(DeleteOutcome::Live { address: rendered });
        }
        dir.remove_file(name)
            .map_err(|e| NoteError::io("remove", &path, &e))?;
        sync(&dir)?;
        Ok(DeleteOutcome::Deleted {
            address: rendered,
            was_crumpled,
        })
    }
}

fn not_found() -> NoteError {
    NoteError::new(RefusalCode::NotFound, "note not found")
}

impl NoteStore {
    /// The existing directory `rel_dir` of the note `address`; `None` when
    /// it (or the root) does not exist.
    fn note_dir(&self, address: &Address, rel_dir: &Path) -> Result<Option<DirHandle>, NoteError> {
        let Some(root) = self.open_root()? else {
            return Ok(None);
        };
        root.open_dir(rel_dir).map_err(|e| self.refusal(address, e))
    }

    /// Refuses unless the entry `name` of `dir` (the note `address`)
    /// exists and is no link: a link is refused, never followed; a missing
    /// note is `not_found`.
    fn check_no_link(
        &self,
        address: &Address,
        dir: &DirHandle,
        name: &OsStr,
    ) -> Result<(), NoteError> {
        match dir.stat(name) {
            Ok(Some(stat)) if stat.kind == Kind::Link => Err(self.refusal(
                address,
                BeneathError::Link {
                    path: dir.path().join(name),
                },
            )),
            Ok(Some(_)) => Ok(()),
            Ok(None) => Err(not_found()),
            Err(e) => Err(self.refusal(address, e)),
        }
    }
}

/// Takes the cross-process lock of a note's directory: on the handle the
/// operation then reads and writes through, so the lock and the write act
/// on the same directory whatever happens to its path.
fn lock(dir: &mut DirHandle) -> Result<(), NoteError> {
    dir.lock()
        .map_err(|e| NoteError::io("lock directory", dir.path(), &e))
}

/// Replaces `name` in `dir` (the note at `path`) with `text` durably, then
/// flushes the directory.
fn replace(dir: &DirHandle, name: &OsStr, text: &str, path: &Path) -> Result<(), NoteError> {
    dir.replace(name, text.as_bytes())
        .map_err(|e| NoteError::io("write", path, &e))?;
    sync(dir)
}

fn sync(dir: &DirHandle) -> Result<(), NoteError> {
    dir.sync()
        .map_err(|e| NoteError::io("sync directory", dir.path(), &e))
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
    if text.len() > NoteStore::MAX_NOTE_BYTES {
        return Err(NoteError::new(
            RefusalCode::TooLarge,
            format!(
                "note exceeds {max_note_bytes} UTF-8 bytes (serialized {})",
                text.len(),
                max_note_bytes = NoteStore::MAX_NOTE_BYTES
            ),
        ));
    }
    Ok(())
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
