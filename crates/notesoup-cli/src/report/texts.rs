//! The text each note a session wrote had right after the call, for the
//! report page: a write's content is its text; an update is applied to the
//! note's earlier text (this session's own last write or update of it,
//! else the notes' Git history where the notes root is a repository); what
//! cannot be rebuilt is shown as the note is now, and said so.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use notesoup_core::history::{LedgerNote, SessionLedger};
use notesoup_core::notes::NoteStore;
use notesoup_core::plumbing::{Links, read_small_text};
use serde::Serialize;

/// Where a note's text on the page comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum TextSource {
    /// The content the call wrote.
    Written,
    /// The update applied to the text this session's call at `seq` left.
    Replayed {
        /// The earlier call.
        seq: u32,
    },
    /// The update applied to the note as the audit commit `commit` holds
    /// it (the newest made before the call).
    Git {
        /// The commit, abbreviated.
        commit: String,
        /// Its commit time (RFC 3339, UTC).
        committed_at: String,
    },
    /// The note as it is now: its text at the call could not be rebuilt.
    Current {
        /// Why not.
        reason: String,
    },
    /// No text: the note is gone and its text at the call is unknown.
    Unknown {
        /// Why.
        reason: String,
    },
}

/// One note's text at its call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NoteText {
    /// Where it comes from.
    pub source: TextSource,
    /// The body (no frontmatter).
    pub text: String,
}

/// Every note's text at its call, by the call's seq, and whether the notes
/// root is a Git repository.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct NoteTexts {
    /// The notes root holds an audit repository.
    pub git: bool,
    /// Why the texts could not be read at all (no notes root, no store).
    pub unavailable: Option<String>,
    /// Why the notes root's Git history could not be read, when it could
    /// not (the texts are then rebuilt without it).
    pub git_error: Option<String>,
    /// The texts, by seq.
    pub by_seq: BTreeMap<u32, NoteText>,
}

/// The texts of every note `ledger` records, read through `store` (whose
/// root is `root`): nothing is written, not even a read's access time.
pub(crate) fn note_texts(ledger: &SessionLedger, store: &NoteStore, root: &Path) -> NoteTexts {
    let notes: Vec<&LedgerNote> = ledger.windows.iter().flat_map(|w| &w.notes).collect();
    // The note's path in the root, and the call's time, for the Git look-up.
    let paths: Vec<Option<String>> = notes
        .iter()
        .map(|note| rel_path(store, root, &note.address))
        .collect();
    let wanted: Vec<(String, i64)> = notes
        .iter()
        .zip(&paths)
        .filter_map(|(note, path)| Some((path.clone()?, call_seconds(note)?)))
        .collect();
    let (git, git_error, mut audited) = match notesoup_core::dream::audited_texts(root, &wanted) {
        Ok(Some(found)) => (true, None, found.into_iter()),
        Ok(None) => (false, None, Vec::new().into_iter()),
        Err(error) => (false, Some(error.to_string()), Vec::new().into_iter()),
    };
    // By the note's file where it resolves (`checkpoint` and
    // `checkpoint.md` are one note), else by the address as written.
    let mut known: HashMap<String, (u32, String)> = HashMap::new();
    let mut by_seq = BTreeMap::new();
    for (note, path) in notes.iter().zip(&paths) {
        let key = path.clone().unwrap_or_else(|| note.address.clone());
        let from_git = if path.is_some() && call_seconds(note).is_some() {
            audited.next().flatten()
        } else {
            None
        };
        let shown = if note.op == "write" {
            NoteText {
                source: TextSource::Written,
                text: note.text.clone(),
            }
        } else {
            let earlier = match known.get(&key) {
                Some((seq, text)) => Some((TextSource::Replayed { seq: *seq }, text.clone())),
                None => from_git.map(|found| {
                    (
                        TextSource::Git {
                            commit: found.commit.chars().take(12).collect(),
                            committed_at: jiff::Timestamp::from_second(found.committed_at)
                                .map_or_else(|_| found.committed_at.to_string(), |t| t.to_string()),
                        },
                        body_of(&found.text).to_owned(),
                    )
                }),
            };
            match earlier.and_then(|(source, text)| Some((source, apply(&text, note)?))) {
                Some((source, text)) => NoteText { source, text },
                None => now_or_unknown(store, &note.address, git),
            }
        };
        // Only a rebuilt text is a base for the next update; a rename
        // moves it to the note's new place.
        let rebuilt = !matches!(
            shown.source,
            TextSource::Current { .. } | TextSource::Unknown { .. }
        );
        let key = match &note.rename_to {
            Some(to) => {
                known.remove(&key);
                rel_path(store, root, to).unwrap_or_else(|| to.clone())
            }
            None => key,
        };
        if rebuilt {
            known.insert(key, (note.seq, shown.text.clone()));
        } else {
            known.remove(&key);
        }
        by_seq.insert(note.seq, shown);
    }
    NoteTexts {
        git,
        git_error,
        unavailable: None,
        by_seq,
    }
}

/// The note as it is now, or why there is nothing to show.
fn now_or_unknown(store: &NoteStore, address: &str, git: bool) -> NoteText {
    let reason = if git {
        "no audit commit before the call holds the note's earlier text, or the update does not apply to it"
    } else {
        "the notes root is not a Git repository and this session did not write the note's earlier text"
    };
    let current = store
        .address(address)
        .ok()
        .and_then(|parsed| store.note_path(&parsed).ok())
        .and_then(|path| {
            read_small_text(&path, NoteStore::MAX_NOTE_BYTES as u64, Links::Refuse)
                .ok()
                .flatten()
        });
    match current {
        Some(text) => NoteText {
            source: TextSource::Current {
                reason: reason.to_owned(),
            },
            text: body_of(&text).to_owned(),
        },
        None => NoteText {
            source: TextSource::Unknown {
                reason: format!("{reason}; the note is not there now"),
            },
            text: String::new(),
        },
    }
}

/// The note's file relative to the root, `/`-separated.
fn rel_path(store: &NoteStore, root: &Path, address: &str) -> Option<String> {
    let parsed = store.address(address).ok()?;
    let path = store.note_path(&parsed).ok()?;
    let relative = path.strip_prefix(root).ok()?;
    let parts: Option<Vec<&str>> = relative
        .components()
        .map(|c| c.as_os_str().to_str())
        .collect();
    Some(parts?.join("/"))
}

/// The call's time in Unix seconds, less one: a commit made in the very
/// second of the call may already hold it.
fn call_seconds(note: &LedgerNote) -> Option<i64> {
    let at: jiff::Timestamp = note.at.as_deref()?.parse().ok()?;
    Some(at.as_second() - 1)
}

/// `text` with the update's edits applied as the store applies them: each
/// old text exactly once (every occurrence with `replace_all`); `None` when
/// one does not apply.
fn apply(text: &str, note: &LedgerNote) -> Option<String> {
    let mut text = text.to_owned();
    for edit in &note.edits {
        if edit.old_text.is_empty() {
            return None;
        }
        let count = text.matches(edit.old_text.as_str()).count();
        if count == 0 || (count > 1 && !note.replace_all) {
            return None;
        }
        text = text.replace(edit.old_text.as_str(), &edit.new_text);
    }
    Some(text)
}

/// A note file's body, as the store cuts it from its frontmatter.
fn body_of(text: &str) -> &str {
    notesoup_core::notes::strip_frontmatter(text)
}
