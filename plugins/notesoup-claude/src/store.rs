//! Opening the notes store for a Claude session, or for the durable homes
//! alone when no session is known (the MCP server started on its own, the
//! command line outside any session).

use notesoup_core::notes::NoteStore;
use notesoup_core::tools::{Refusal, RefusalCode};

use crate::boot::notes_identity;
use crate::env::HostEnv;

/// Why the session's history is unavailable (session notes are refused by
/// core with `no_session`).
pub const NO_SESSION: &str = "no Claude Code session is known to notesoup here yet (no notesoup hook has run for this project), so this session's notes and history are not available; the durable homes @project/, @human/, @self/ and @model/ still are.";

/// The store of `notes_session` in project `project_key`; without a session
/// (`None`), an identity with none: core refuses session notes with
/// `no_session` and serves the durable homes.
pub fn open(
    env: &HostEnv,
    notes_session: Option<&str>,
    project_key: &str,
) -> Result<NoteStore, Refusal> {
    notes_identity(env, notes_session, project_key)
        .map(NoteStore::new)
        .map_err(|error| Refusal::new(RefusalCode::InternalError, error))
}
