//! The boot for one dsh window: the notes identity of the session, the
//! snapshot of its five homes and core's renderer with the plain tool names.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use jiff::Timestamp;
use notesoup_core::boot::ToolBindings;
use notesoup_core::boot::{BootIdentity, BootSections, BootSnapshot};
use notesoup_core::notes::{HeadCache, NoteError, NoteStore, NotesIdentity, project_key};
use notesoup_core::plumbing::NotesOwner;

use crate::window::window_id;

/// Where notes live and who writes them, from the sidecar's environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotesPlace {
    /// The notes root (`PI_NOTES_HOME`, else `~/.agents/notes`).
    pub root: PathBuf,
    /// The agent slug (`PI_NOTES_AGENT`, default `anonymous`).
    pub agent: String,
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
            .with_head_cache(kept_heads())
    })
    .map_err(|e| BootError::Identity(e.to_string()))
}

/// The note heads this process keeps between listings (the sidecar lives
/// as long as its dsh session; see core's `HeadCache`).
fn kept_heads() -> Arc<HeadCache> {
    static HEADS: OnceLock<Arc<HeadCache>> = OnceLock::new();
    Arc::clone(HEADS.get_or_init(|| Arc::new(HeadCache::new())))
}

/// The session a preview boot with no session names in its window ids (its
/// notes identity has no session, so no session notes are read).
pub const PREVIEW_SESSION: &str = "preview";

/// Renders the boot of window `ordinal` of the session, within `max_chars`
/// characters (the `bootMaxChars` setting).
pub fn render(
    store: &NoteStore,
    ordinal: u64,
    opened_at: Timestamp,
    max_chars: usize,
) -> Result<String, BootError> {
    Ok(sections(store, ordinal, opened_at, max_chars)?.join())
}

/// The boot of window `ordinal` in its sections, for `boot --stats`.
pub fn sections(
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
    Ok(BootSections::new(
        &BootSnapshot::load_at(store, opened_at)?,
        &boot,
        &ToolBindings::plain(),
        max_chars,
    ))
}
