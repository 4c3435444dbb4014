//! Opening the notes store for an identity: the one place a host turns the
//! notes root, its session (or none yet), the project, the agent and the
//! model into a [`NoteStore`]. Every adapter's command line, boot and
//! sidecar opens its store here, so a session that is not known is always an
//! identity without one (core refuses its session addresses with
//! `no_session`), never a made-up id.

use std::path::Path;

use crate::notes::{NoteError, NoteStore, NotesIdentity};

/// Whose notes: everything a [`NotesIdentity`] is built from.
#[derive(Debug, Clone, Copy)]
pub struct NotesOwner<'a> {
    /// The notes root.
    pub root: &'a Path,
    /// The session whose notes `pi/session/<id>/` holds; `None` when no
    /// session is known (a preview, a command line outside any session).
    pub session_id: Option<&'a str>,
    /// The project key (`project_key(cwd)`).
    pub project_key: &'a str,
    /// The agent's slug (`@self/`).
    pub agent: &'a str,
    /// The model's slug (`@model/`).
    pub model: &'a str,
}

impl NotesOwner<'_> {
    /// The validated identity: with the session when one is known, else one
    /// without a session.
    pub fn identity(&self) -> Result<NotesIdentity, NoteError> {
        match self.session_id {
            Some(session) => {
                NotesIdentity::new(self.root, session, self.project_key, self.agent, self.model)
            }
            None => {
                NotesIdentity::without_session(self.root, self.project_key, self.agent, self.model)
            }
        }
    }

    /// The store of this identity, with core's defaults (the credential guard
    /// on, no kept heads); a host adds its settings and caches to it.
    pub fn open(&self) -> Result<NoteStore, NoteError> {
        self.identity().map(NoteStore::new)
    }
}
