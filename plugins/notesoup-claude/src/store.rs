//! Opening the notes store for a Claude session, or for the durable homes
//! alone when no session is known (the MCP server started on its own, the
//! command line outside any session).

use notesoup_core::notes::NoteStore;
use notesoup_core::tools::{Refusal, RefusalCode};

use crate::boot::notes_identity;
use crate::env::HostEnv;

/// Why session notes and history are unavailable.
pub const NO_SESSION: &str = "no Claude Code session is known to notesoup here yet (no notesoup hook has run for this project), so this session's notes and history are not available; the durable homes @project/, @human/, @self/ and @model/ still are.";

/// The notes session id used when none is known: session addresses are
/// refused before the store is reached, so its session home is never read
/// or written.
const NO_SESSION_ID: &str = "claude-no-session";

/// A bare address (no `@`) names a session note.
pub fn is_session_address(address: &str) -> bool {
    !address.is_empty() && !address.starts_with('@')
}

/// The store of `notes_session` (or of the durable homes only, when it is
/// `None`) in project `project_key`. Without a session, a call that names a
/// session note (`names_session_note`) is refused.
pub fn open(
    env: &HostEnv,
    notes_session: Option<&str>,
    project_key: &str,
    names_session_note: bool,
) -> Result<NoteStore, Refusal> {
    let session = match notes_session {
        Some(session) => session,
        None if names_session_note => {
            return Err(Refusal::new(RefusalCode::InvalidScope, NO_SESSION));
        }
        None => NO_SESSION_ID,
    };
    notes_identity(env, session, project_key)
        .map(NoteStore::new)
        .map_err(|error| Refusal::new(RefusalCode::InternalError, error))
}
