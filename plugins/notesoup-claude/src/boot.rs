//! Rendering the boot of a Claude window: core's snapshot and renderer with
//! the Claude identity and bindings.

use notesoup_core::boot::{BootIdentity, BootSnapshot, render_boot};
use notesoup_core::notes::{NoteStore, NotesIdentity};

use crate::env::HostEnv;
use crate::names::{AGENT, MODEL, bindings};
use crate::state::SessionState;

/// What the user sees when no boot could be built.
pub const BOOT_FAILED: &str = "notesoup: Notes boot failed.";

/// The notes identity of a session: its chain's notes session, its project,
/// and the fixed Claude agent and model.
pub fn notes_identity(
    env: &HostEnv,
    session_id: &str,
    project_key: &str,
) -> Result<NotesIdentity, String> {
    let root = env
        .notes_root
        .as_ref()
        .ok_or("the notes root is unknown: set PI_NOTES_HOME or HOME")?;
    NotesIdentity::new(root, session_id, project_key, AGENT, MODEL).map_err(|err| err.to_string())
}

/// The boot for the state's live window, or why it could not be built.
pub fn render(env: &HostEnv, state: &SessionState) -> Result<String, String> {
    let store = NoteStore::new(notes_identity(
        env,
        &state.notes_session_id,
        &state.project_key,
    )?);
    let snapshot = BootSnapshot::load(&store).map_err(|err| err.to_string())?;
    let identity = BootIdentity {
        agent: AGENT.to_owned(),
        model: MODEL.to_owned(),
        root_window_id: state.root_window().to_string(),
        window_id: state.window_id().to_string(),
        previous_window_id: state.previous_window_id.clone(),
    };
    Ok(render_boot(&snapshot, &identity, &bindings()))
}

/// The fallback the model gets when the boot failed.
pub fn fallback(error: &str) -> String {
    format!("# notesoup\n{error}")
}
