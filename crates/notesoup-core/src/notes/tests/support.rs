//! Shared fixture: a store on a fresh temp directory with a fixed identity.

use std::path::{Path, PathBuf};

use crate::notes::{Edit, ListStatus, NoteError, NoteStore, NotesIdentity, UpdateRequest};
use crate::tools::RefusalCode;
use jiff::tz::TimeZone;
use tempfile::TempDir;

pub const SESSION: &str = "s1";
pub const PROJECT: &str = "proj-12345678";
pub const AGENT: &str = "alice";
pub const MODEL: &str = "gpt";

pub struct Fixture {
    pub dir: TempDir,
    pub store: NoteStore,
}

impl Fixture {
    pub fn new() -> Fixture {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = store_at(&dir.path().join("notes"), AGENT, MODEL);
        Fixture { dir, store }
    }

    /// The notes root.
    pub fn root(&self) -> PathBuf {
        self.store.root().to_path_buf()
    }

    /// Another identity (agent, model) over the same root.
    pub fn as_other(&self, agent: &str, model: &str) -> NoteStore {
        store_at(&self.dir.path().join("notes"), agent, model)
    }

    /// Raw file text under the root.
    pub fn raw(&self, relative: &str) -> String {
        std::fs::read_to_string(self.root().join(relative)).expect("note file")
    }

    /// Writes a raw file under the root, creating parents.
    pub fn put(&self, relative: &str, text: &str) {
        put(&self.root().join(relative), text);
    }
}

pub use notesoup_test_support::files::put;

pub fn store_at(home: &Path, agent: &str, model: &str) -> NoteStore {
    let identity = NotesIdentity::new(home, SESSION, PROJECT, agent, model).expect("identity");
    NoteStore::new(identity).with_time_zone(TimeZone::UTC)
}

/// The update that makes each `(oldText, newText)` edit in turn.
pub fn edits(pairs: &[(&str, &str)]) -> UpdateRequest {
    UpdateRequest {
        edits: pairs
            .iter()
            .map(|(old, new)| Edit {
                old_text: (*old).to_owned(),
                new_text: (*new).to_owned(),
            })
            .collect(),
        ..UpdateRequest::default()
    }
}

/// The update that crumples a note and changes nothing else.
pub fn crumpling() -> UpdateRequest {
    UpdateRequest {
        crumpled: Some(true),
        ..UpdateRequest::default()
    }
}

/// The code of an error result.
pub fn code<T: std::fmt::Debug>(result: Result<T, crate::notes::NoteError>) -> RefusalCode {
    result.expect_err("expected a refusal").code()
}

/// The rows of a listing that must have read every home.
pub trait AllRows<R> {
    /// The rows, after checking that the listing succeeded and no home was
    /// unavailable.
    fn all_rows(self) -> Vec<R>;
}

impl<R> AllRows<R> for Result<ListStatus<R>, NoteError> {
    fn all_rows(self) -> Vec<R> {
        let listed = self.expect("listing");
        assert!(
            listed.homes_unavailable.is_empty(),
            "unavailable homes: {:?}",
            listed.homes_unavailable
        );
        listed.rows
    }
}
