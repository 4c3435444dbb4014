//! The boot snapshot: each of the five homes read once, a failing home
//! isolated, and the time captured before loading.

use jiff::Timestamp;

use crate::notes::{ListQuery, NoteError, NoteHeader, NoteRow, NoteStore, Scope};

use super::render::{SHELF_FRESH_LIMIT, page_title};
use super::shelves::ShelfIndex;

/// The file name of a home's table of contents, at the home's root.
pub(super) const MAP_FILE: &str = "MAP.md";

/// A home's MAP: its table of contents, inlined in the boot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapPage {
    /// The rendered address, e.g. `@project/MAP.md`.
    pub address: String,
    /// The whole body (the renderer caps it).
    pub body: String,
}

/// One of a shelf's freshest pages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FreshPage {
    /// The rendered address.
    pub address: String,
    /// See [`page_title`]; empty when the body has no text.
    pub title: String,
    /// The note's `updatedAt`.
    pub updated_at: Timestamp,
}

/// What the snapshot holds for one home.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HomeShelf {
    /// The home was listed (a missing directory lists as empty).
    Loaded {
        /// The root `MAP.md`, when there is one.
        map: Option<MapPage>,
        /// Up to [`SHELF_FRESH_LIMIT`] of the freshest other notes, freshest
        /// first.
        fresh: Vec<FreshPage>,
    },
    /// A filesystem error kept the home from being listed.
    Unavailable,
}

impl HomeShelf {
    /// The shelf of one home's live notes, listed recent first (ties by
    /// address). The root `MAP.md` is the MAP; any other note, nested MAPs
    /// included, is a page.
    pub fn from_rows(rows: Vec<NoteRow>) -> HomeShelf {
        let mut map = None;
        let mut fresh = Vec::new();
        for row in rows {
            if row.location.rel_path == MAP_FILE {
                map = Some(MapPage {
                    address: row.location.address,
                    body: row.body,
                });
            } else if fresh.len() < SHELF_FRESH_LIMIT {
                fresh.push(FreshPage {
                    title: page_title(&row.body),
                    updated_at: timestamp(row.meta.updated_at),
                    address: row.location.address,
                });
            }
        }
        HomeShelf::Loaded { map, fresh }
    }
}

/// Everything a boot shows, read once per window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BootSnapshot {
    /// When the snapshot was taken; relative times are measured from here.
    pub opened_at: Timestamp,
    /// Each home once, in [`Scope::ALL`] order: session, project, human,
    /// agent, model.
    pub homes: Vec<(Scope, HomeShelf)>,
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
    /// recorded as [`HomeShelf::Unavailable`] and the others are kept; a
    /// missing home is empty. Any other error propagates.
    ///
    /// The listing reads only each note's frontmatter; then only the bodies
    /// the boot shows are read (the root MAP and the freshest pages): one
    /// short read per note plus at most four whole notes per home. The
    /// shelves are the same as [`HomeShelf::from_rows`] over the full
    /// listing.
    pub fn load_at(store: &NoteStore, opened_at: Timestamp) -> Result<BootSnapshot, NoteError> {
        let mut homes = Vec::with_capacity(Scope::ALL.len());
        for scope in Scope::ALL {
            homes.push((scope, load_home(store, scope)?));
        }
        Ok(BootSnapshot { opened_at, homes })
    }

    /// [`Self::load`] for a host that keeps a [`ShelfIndex`] between boots:
    /// each home is served from the index while its directories are
    /// unchanged (only the notes it shows are read), else listed, and kept
    /// in the index when it may be.
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

    /// The snapshot when `index` serves every home (see
    /// [`Self::load_indexed`]); `None` when any must be listed. For a host
    /// that prepares a listing's caches only when one is needed.
    pub fn served(store: &NoteStore, index: &ShelfIndex) -> Option<BootSnapshot> {
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
    pub fn home(&self, scope: Scope) -> Option<&HomeShelf> {
        self.homes
            .iter()
            .find(|(s, _)| *s == scope)
            .map(|(_, shelf)| shelf)
    }

    /// The homes that could not be read, in load order.
    pub fn unavailable(&self) -> Vec<Scope> {
        self.homes
            .iter()
            .filter(|(_, shelf)| *shelf == HomeShelf::Unavailable)
            .map(|(scope, _)| *scope)
            .collect()
    }

    /// The labels of [`Self::unavailable`] as hosts name them in notices:
    /// `session`, `@project`, `@human`, `@self`, `@model`.
    pub fn unavailable_labels(&self) -> Vec<&'static str> {
        self.unavailable().into_iter().map(home_label).collect()
    }
}

/// Whether the store's identity has a home of `scope`: a host with no
/// session yet has no session notes (an empty shelf).
fn has_home(store: &NoteStore, scope: Scope) -> bool {
    scope != Scope::Session || store.identity().session_id().is_some()
}

/// One home's shelf: listed once (heads only), then the bodies it shows.
fn load_home(store: &NoteStore, scope: Scope) -> Result<HomeShelf, NoteError> {
    if !has_home(store, scope) {
        return Ok(HomeShelf::from_rows(Vec::new()));
    }
    list_home(store, scope).map(|(shelf, _)| shelf)
}

/// A home's shelf from a listing of its heads, with the listing's rows
/// (recent first) when the shelf is [`HomeShelf::Loaded`].
pub(super) fn list_home(
    store: &NoteStore,
    scope: Scope,
) -> Result<(HomeShelf, Vec<NoteHeader>), NoteError> {
    let listed = store.list_headers(&ListQuery {
        scope: Some(scope),
        ..ListQuery::default()
    })?;
    if !listed.homes_unavailable.is_empty() {
        return Ok((HomeShelf::Unavailable, Vec::new()));
    }
    match shelf_of(store, &listed.rows) {
        Ok(rows) => Ok((HomeShelf::from_rows(rows), listed.rows)),
        Err(error) if error.is_filesystem() => Ok((HomeShelf::Unavailable, Vec::new())),
        Err(error) => Err(error),
    }
}

/// The whole rows a shelf shows, in listing order: the root MAP and the
/// first [`SHELF_FRESH_LIMIT`] other notes that are still there and still
/// live when their bodies are read (a note renamed away or crumpled since
/// the listing gives its place to the next one).
fn shelf_of(store: &NoteStore, headers: &[NoteHeader]) -> Result<Vec<NoteRow>, NoteError> {
    let mut rows = Vec::with_capacity(SHELF_FRESH_LIMIT + 1);
    let mut fresh = 0;
    for header in headers {
        let is_map = header.location.rel_path == MAP_FILE;
        if !is_map && fresh == SHELF_FRESH_LIMIT {
            continue;
        }
        let Some(row) = store.peek_row(header)? else {
            continue;
        };
        if row.meta.is_crumpled() {
            continue;
        }
        fresh += usize::from(!is_map);
        rows.push(row);
    }
    Ok(rows)
}

/// The notice name of one of the caller's own homes (the store's
/// `homes_unavailable` labels).
pub fn home_label(scope: Scope) -> &'static str {
    match scope {
        Scope::Session => "session",
        Scope::Project => "@project",
        Scope::Human => "@human",
        Scope::Agent => "@self",
        Scope::Model => "@model",
    }
}

/// Epoch milliseconds as a timestamp; jiff's range (years -9999..=9999)
/// covers every parsed note time, anything beyond is pinned to its end.
fn timestamp(millis: i64) -> Timestamp {
    Timestamp::from_millisecond(millis).unwrap_or(if millis < 0 {
        Timestamp::MIN
    } else {
        Timestamp::MAX
    })
}
