//! The boot for one dsh window: the notes identity of the session, the
//! snapshot of its five homes (through the boot caches this process and the
//! sidecars before it kept) and core's renderer with the plain tool names.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use jiff::Timestamp;
use notesoup_core::boot::ToolBindings;
use notesoup_core::boot::{BootIdentity, BootSections};
use notesoup_core::notes::{NoteError, NoteStore, NotesIdentity, project_key};
use notesoup_core::plumbing::{BootCaches, NotesOwner};

use crate::window::window_id;

/// Where notes live and who writes them, from the sidecar's environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotesPlace {
    /// The notes root (`PI_NOTES_HOME`, else `~/.agents/notes`).
    pub root: PathBuf,
    /// The agent slug (`PI_NOTES_AGENT`, default `anonymous`).
    pub agent: String,
    /// Where boots keep their caches between processes (core's
    /// [`notesoup_core::plumbing::BootCaches::dir`]); `None` keeps them for the
    /// life of the process only.
    pub cache: Option<PathBuf>,
}

/// A refusal to build a boot.
#[derive(Debug, thiserror::Error)]
pub enum BootError {
    /// The session cannot name a notes identity.
    #[error("notes identity: {0}")]
    Identity(String),
    /// The notes store failed outside the isolated per-home errors.
    #[error("notes store: {0}")]
    Notes(#[from] NoteError),
}

/// The store of a dsh session: session id (none for a preview with no
/// session: core refuses its session notes with `no_session`), project from
/// its cwd, model home from the agent's model id; `secret_guard` is the
/// `secretGuard` setting.
pub fn store(
    place: &NotesPlace,
    session_id: Option<&str>,
    cwd: &str,
    model: Option<&str>,
    secret_guard: bool,
) -> Result<NoteStore, BootError> {
    let project = project_key(std::path::Path::new(cwd));
    let model = NotesIdentity::model_slug(model);
    NotesOwner {
        root: &place.root,
        session_id,
        project_key: &project,
        agent: &place.agent,
        model: &model,
    }
    .open()
    .map(|store| {
        store
            .with_secret_guard(secret_guard)
            .with_head_cache(caches(place).heads())
    })
    .map_err(|e| BootError::Identity(e.to_string()))
}

/// The boot caches this process keeps, per cache directory.
static KEPT: Mutex<Vec<(Option<PathBuf>, Arc<BootCaches>)>> = Mutex::new(Vec::new());

/// The boot caches this process keeps for `place`'s cache directory (the
/// sidecar lives as long as its dsh session): the note heads every store
/// lists with, and the boot shelves and heads loaded from, and saved to,
/// the directory (see core's `BootCaches`), saved on a thread of their own
/// so a boot does not wait for the write ([`wait_for_saves`] before the
/// process ends).
fn caches(place: &NotesPlace) -> Arc<BootCaches> {
    let mut kept = KEPT.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((_, caches)) = kept.iter().find(|(dir, _)| *dir == place.cache) {
        return Arc::clone(caches);
    }
    let caches = Arc::new(BootCaches::new(place.cache.clone()).saving_in_background());
    kept.push((place.cache.clone(), Arc::clone(&caches)));
    caches
}

/// Waits for the boot caches' saves under way; the process calls it before
/// it ends (its caches are never dropped).
pub fn wait_for_saves() {
    let kept: Vec<Arc<BootCaches>> = KEPT
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .map(|(_, caches)| Arc::clone(caches))
        .collect();
    for caches in kept {
        caches.wait_for_saves();
    }
}

/// The session a preview boot with no session names in its window ids (its
/// notes identity has no session, so no session notes are read).
pub const PREVIEW_SESSION: &str = "preview";

/// Renders the boot of window `ordinal` of the session, within `max_chars`
/// characters (the `bootMaxChars` setting), through `place`'s boot caches.
pub fn render(
    place: &NotesPlace,
    store: &NoteStore,
    ordinal: u64,
    opened_at: Timestamp,
    max_chars: usize,
) -> Result<String, BootError> {
    Ok(sections(place, store, ordinal, opened_at, max_chars)?.join())
}

/// The boot of window `ordinal` in its sections, for `boot --stats`.
pub fn sections(
    place: &NotesPlace,
    store: &NoteStore,
    ordinal: u64,
    opened_at: Timestamp,
    max_chars: usize,
) -> Result<BootSections, BootError> {
    let identity = store.identity();
    let session = identity.session_id().unwrap_or(PREVIEW_SESSION);
    let boot = BootIdentity {
        agent: identity.agent().to_owned(),
        model: identity.model().to_owned(),
        root_window_id: window_id(session, 1),
        window_id: window_id(session, ordinal),
        previous_window_id: (ordinal > 1).then(|| window_id(session, ordinal - 1)),
    };
    let mut snapshot = caches(place).snapshot(store)?;
    snapshot.opened_at = opened_at;
    Ok(BootSections::new(
        &snapshot,
        &boot,
        &ToolBindings::plain(),
        max_chars,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(root: &std::path::Path, cache: &str) -> NotesPlace {
        NotesPlace {
            root: root.join("notes"),
            agent: "anonymous".into(),
            cache: Some(root.join(cache)),
        }
    }

    #[test]
    fn each_cache_directory_keeps_caches_of_its_own_for_the_process() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (a, b) = (place(dir.path(), "a"), place(dir.path(), "b"));
        let kept = caches(&a);
        assert!(Arc::ptr_eq(&kept, &caches(&a)), "kept for the process");
        assert!(!Arc::ptr_eq(&kept, &caches(&b)), "another directory's");
        assert!(Arc::ptr_eq(&caches(&b), &caches(&b)));
    }

    #[test]
    fn only_a_window_after_the_first_names_a_previous_one() {
        let dir = tempfile::tempdir().expect("tempdir");
        let place = place(dir.path(), "cache");
        let store = store(&place, Some("s"), "/work/project", None, true).expect("store");
        let boot = |ordinal| {
            render(&place, &store, ordinal, Timestamp::UNIX_EPOCH, 100_000).expect("boot")
        };
        let first = boot(1);
        assert!(
            first.contains("Current context window id: dsh:s:1\n"),
            "{first}"
        );
        assert!(!first.contains("Previous context window id"), "{first}");
        let second = boot(2);
        assert!(
            second.contains(
                "Current context window id: dsh:s:2\nPrevious context window id: dsh:s:1\n"
            ),
            "{second}"
        );
    }
}
