//! The boot snapshot: each of the five homes read once, a failing home
//! isolated, and the time captured before loading.

use jiff::Timestamp;

use crate::notes::{NoteError, NoteStore, Scope};

use super::shelf::{HomeShelf, has_home, home_label, list_home};
use super::shelves::ShelfIndex;

/// Everything a boot shows, read once per window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BootSnapshot {
    /// When the snapshot was taken; relative times are measured from here.
    pub opened_at: Timestamp,
    /// Each home once, in [`Scope::ALL`] order: session, project, human,
    /// agent, model.
    pub(crate) homes: Vec<(Scope, HomeShelf)>,
}

impl BootSnapshot {
    /// Takes the snapshot now: the time is captured before anything is read.
    pub fn load(store: &NoteStore) -> Result<BootSnapshot, NoteError> {
        BootSnapshot::load_at(store, Timestamp::now())
    }

    /// Takes the snapshot with a given opening time (a host that captured it
    /// earlier, or a test).
    ///
    /// Each of the store identity's five homes is listed once, in order
    /// session, project, human, agent, model, without crumpled notes and
    /// without touching access metadata. A home the filesystem refuses is
    /// recorded as unavailable (see [`Self::unavailable_labels`]) and the
    /// others are kept; a missing home is empty. Any other error propagates.
    ///
    /// The listing reads only each note's frontmatter; then only the bodies
    /// the boot shows are read (the root MAP and the freshest pages): one
    /// short read per note plus at most four whole notes per home. The
    /// shelves are the same as those taken from a full listing that reads
    /// every body.
    pub fn load_at(store: &NoteStore, opened_at: Timestamp) -> Result<BootSnapshot, NoteError> {
        let mut homes = Vec::with_capacity(Scope::ALL.len());
        for scope in Scope::ALL {
            homes.push((scope, load_home(store, scope)?));
        }
        Ok(BootSnapshot { opened_at, homes })
    }

    /// [`Self::load`] for a host that keeps a [`ShelfIndex`] between boots:
    /// each home is served from the index while its directories are
    /// unchanged (only the notes it shows are read) or patched from the
    /// directories that changed, else listed, and kept in the index when it
    /// may be.
    pub fn load_indexed(
        store: &NoteStore,
        index: &mut ShelfIndex,
    ) -> Result<BootSnapshot, NoteError> {
        let opened_at = Timestamp::now();
        let mut homes = Vec::with_capacity(Scope::ALL.len());
        for scope in Scope::ALL {
            let shelf = match index.served(store, scope) {
                Some(shelf) => shelf,
                None if !has_home(store, scope) => HomeShelf::from_rows(Vec::new()),
                None => index.listed(store, scope)?,
            };
            homes.push((scope, shelf));
        }
        Ok(BootSnapshot { opened_at, homes })
    }

    /// The snapshot when `index` serves every home, patching those whose
    /// directories changed (see [`Self::load_indexed`]); `None` when any
    /// must be listed. For a host that prepares a listing's caches only
    /// when one is needed.
    pub fn served(store: &NoteStore, index: &mut ShelfIndex) -> Option<BootSnapshot> {
        let opened_at = Timestamp::now();
        let mut homes = Vec::with_capacity(Scope::ALL.len());
        for scope in Scope::ALL {
            let shelf = if has_home(store, scope) {
                index.served(store, scope)?
            } else {
                HomeShelf::from_rows(Vec::new())
            };
            homes.push((scope, shelf));
        }
        Some(BootSnapshot { opened_at, homes })
    }

    /// What the snapshot holds for `scope`.
    pub(crate) fn home(&self, scope: Scope) -> Option<&HomeShelf> {
        self.homes
            .iter()
            .find(|(s, _)| *s == scope)
            .map(|(_, shelf)| shelf)
    }

    /// The homes that could not be read, in load order.
    pub(crate) fn unavailable(&self) -> Vec<Scope> {
        self.homes
            .iter()
            .filter(|(_, shelf)| *shelf == HomeShelf::Unavailable)
            .map(|(scope, _)| *scope)
            .collect()
    }

    /// The labels of the homes that could not be read, in load order, as
    /// hosts name them in notices: `session`, `@project`, `@human`,
    /// `@self`, `@model`.
    pub fn unavailable_labels(&self) -> Vec<&'static str> {
        self.unavailable().into_iter().map(home_label).collect()
    }
}

/// One home's shelf: listed once (heads only), then the bodies it shows.
fn load_home(store: &NoteStore, scope: Scope) -> Result<HomeShelf, NoteError> {
    if !has_home(store, scope) {
        return Ok(HomeShelf::from_rows(Vec::new()));
    }
    list_home(store, scope).map(|(shelf, _)| shelf)
}
