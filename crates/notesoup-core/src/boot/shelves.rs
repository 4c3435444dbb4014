//! Boot shelves kept between the boots of a short-lived host (a Claude Code
//! hook is a new process for every window), so a boot over a large store
//! does not list every note.
//!
//! A home's shelf is its root MAP and its freshest pages. [`ShelfIndex`]
//! keeps, per home, what a listing found: whether the MAP is live, and the
//! live pages recent first, as far as a shelf can ever reach. It also keeps
//! the stamp (device, inode, modification and change times) of every
//! directory from below the notes root down to the home and of every
//! directory inside it. Creating, removing or renaming a note, which is how
//! every notesoup write lands (a temporary file renamed over the note),
//! changes its directory's stamp; while every stamp is the one kept, the
//! home holds the same files, and the boot reads only the notes it shows
//! (whole, as a listing's boot would).
//!
//! What stamps cannot see, and so a kept shelf does not see until the
//! home's next create, removal or rename: another program editing a note in
//! place, without a rename, so that its `updatedAt` or `crumpledAt` changes
//! while it is not on the shelf. A note on the shelf is always read as it
//! is and placed by the time it holds now (one crumpled or dated back in
//! place gives its place to the next).
//!
//! The rules that keep the rest exact:
//! - A home is kept only when every directory's change time lies at least
//!   [`ShelfIndex::SETTLE`] before the listing started (a directory changed
//!   twice within one timestamp tick would keep its stamp).
//! - Times that were the time of the listing (a note whose `updatedAt` is
//!   missing or unreadable sorts as "now") are marked, and sort as the time
//!   of each boot. Kept pages reach past every note whose time was not in
//!   the past when listed, so no note left out can rise above a kept one.
//! - Times are parsed in the store's zone; a home listed in another zone
//!   (or in one without a name) is listed again.

use std::cmp::Ordering;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use crate::notes::{
    Home, NoteError, NoteHeader, NoteLocation, NoteMeta, NoteRow, NoteStore, Scope, now_ms,
};
use crate::plumbing::{Links, read_small_file};

use super::shelf::{HomeShelf, MAP_FILE, SHELF_FRESH_LIMIT, list_home};

/// Boot shelves kept between boots; see the module docs.
#[derive(Debug)]
pub struct ShelfIndex {
    homes: Vec<KeptHome>,
    /// A home was kept, replaced or dropped since the index was made or
    /// loaded.
    changed: bool,
    settle: Duration,
}

impl Default for ShelfIndex {
    fn default() -> Self {
        ShelfIndex::with_settle(ShelfIndex::SETTLE)
    }
}

/// The saved form of a [`ShelfIndex`].
#[derive(Debug, Serialize, Deserialize)]
struct Saved {
    version: u32,
    homes: Vec<KeptHome>,
}

/// One kept home.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct KeptHome {
    /// The home's directory.
    dir: PathBuf,
    /// The name of the zone its times were parsed in.
    zone: String,
    /// Every directory from below the notes root down to the home, then
    /// every directory inside it, with its stamp.
    dirs: Vec<(PathBuf, DirStamp)>,
    /// The root `MAP.md` was live.
    map: bool,
    /// The other live notes, recent first: every one whose time was not in
    /// the past when listed, and [`ShelfIndex::SPARE_PAGES`] more.
    pages: Vec<KeptPage>,
    /// `pages` holds every live note of the home.
    complete: bool,
}

/// What identifies one version of a directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct DirStamp {
    dev: u64,
    ino: u64,
    modified: (i64, i64),
    changed: (i64, i64),
}

/// A kept page: where it is and when it was updated as listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct KeptPage {
    rel_path: String,
    address: String,
    updated_at: i64,
    /// The time was the listing's own (missing or unreadable in the note):
    /// it sorts as the time of each boot.
    clock: bool,
}

/// How a directory on a kept path looks now.
#[derive(Debug, PartialEq, Eq)]
enum DirNow {
    Stamp(DirStamp),
    Missing,
    /// Not a directory (a link, a file), or unreadable: never kept.
    Other,
}

impl ShelfIndex {
    /// The saved format's version.
    const VERSION: u32 = 1;
    /// How long a directory's change time must lie before a listing for
    /// the home to be kept.
    pub const SETTLE: Duration = Duration::from_secs(2);
    /// Pages kept past the ones whose time was not in the past: a shelf
    /// shows `SHELF_FRESH_LIMIT`, the rest stand in for pages found
    /// crumpled (or unreadable) when read.
    pub const SPARE_PAGES: usize = 16;
    /// The most pages kept for one home; a home with more notes dated in
    /// the future (or undated) is listed at every boot.
    pub const MAX_PAGES: usize = 256;
    /// The most homes kept (each session has its own home): past it, the
    /// one kept longest ago is dropped.
    pub const MAX_HOMES: usize = 32;
    /// The largest saved index [`Self::load`] reads.
    pub const MAX_SAVED_BYTES: u64 = 1024 * 1024;

    /// An empty index: every home is listed.
    pub fn new() -> ShelfIndex {
        ShelfIndex::default()
    }

    /// An empty index keeping homes whose directories changed at least
    /// `settle` before their listing (tests use zero to keep every home).
    pub fn with_settle(settle: Duration) -> ShelfIndex {
        ShelfIndex {
            homes: Vec::new(),
            changed: false,
            settle,
        }
    }

    /// The index saved at `path` by [`Self::save`]. A missing, unreadable,
    /// oversized or malformed file, one of another version, or anything but
    /// a regular file (a link, FIFO or device is neither read nor waited on;
    /// the next save replaces it) gives an empty index: a kept home is only
    /// served while its directories are unchanged, so a saved index can make
    /// a boot faster, never different from a listing (see the module docs
    /// for what stamps cannot see).
    pub fn load(path: &Path) -> ShelfIndex {
        let homes = read_small_file(path, Self::MAX_SAVED_BYTES, Links::Refuse)
            .ok()
            .flatten()
            .and_then(|bytes| serde_json::from_slice::<Saved>(&bytes).ok())
            .filter(|saved| saved.version == Self::VERSION)
            .map(|saved| saved.homes)
            .unwrap_or_default();
        ShelfIndex {
            homes,
            ..ShelfIndex::new()
        }
    }

    /// Saves the index to `path` for [`Self::load`] when it changed since it
    /// was made or loaded: a temporary file renamed over it, not flushed
    /// (a lost index is only listed again).
    pub fn save(&mut self, path: &Path) -> std::io::Result<()> {
        if !self.changed {
            return Ok(());
        }
        let saved = Saved {
            version: Self::VERSION,
            homes: self.homes.clone(),
        };
        let bytes = serde_json::to_vec(&saved)?;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        crate::durable::replace_unsynced(path, &bytes)?;
        self.changed = false;
        Ok(())
    }

    /// How many homes are kept.
    pub fn len(&self) -> usize {
        self.homes.len()
    }

    /// Whether no home is kept.
    pub fn is_empty(&self) -> bool {
        self.homes.is_empty()
    }

    /// The shelf of `scope` from the kept home, when its directories are
    /// unchanged: only the notes it shows are read. `None` when the home
    /// must be listed (not kept, changed, or a kept page could not stand
    /// in for one found crumpled).
    pub(super) fn served(&self, store: &NoteStore, scope: Scope) -> Option<HomeShelf> {
        let home = own_home(store, scope);
        let dir = store.home_dir(&home).ok()?;
        let Some(kept) = self.homes.iter().find(|kept| kept.dir == dir) else {
            return missing_home(store.root(), &dir).then(|| HomeShelf::from_rows(Vec::new()));
        };
        if Some(kept.zone.as_str()) != zone_name(store) {
            return None;
        }
        let unchanged = kept
            .dirs
            .iter()
            .all(|(path, stamp)| dir_now(path) == DirNow::Stamp(*stamp));
        if !unchanged {
            return None;
        }
        let now = now_ms();
        let mut rows = Vec::with_capacity(SHELF_FRESH_LIMIT + 1);
        if kept.map {
            let address = format!("{}{MAP_FILE}", home.rendered_prefix(store.identity()));
            rows.extend(live_row(
                store,
                &header(&home, &dir, MAP_FILE, address, now),
            )?);
        }
        let mut pages: Vec<&KeptPage> = kept.pages.iter().collect();
        // Recent first at this boot's time, ties by address, as a listing
        // now would order them.
        let time = |page: &KeptPage| if page.clock { now } else { page.updated_at };
        pages.sort_by(|a, b| {
            time(b)
                .cmp(&time(a))
                .then_with(|| a.address.cmp(&b.address))
        });
        // The shelf's pages are read as they are now and placed by the times
        // they hold now: pages are read in kept order until the freshest
        // ones read all rank above the next page not read yet.
        // Each read page with the time it is placed by: the time it holds,
        // or this boot's time when that is the time of its read (its
        // `updatedAt` is missing or unreadable), as one listing gives every
        // such page one time.
        let mut fresh: Vec<(i64, NoteRow)> = Vec::with_capacity(SHELF_FRESH_LIMIT + 1);
        let mut unread = pages.into_iter().peekable();
        while let Some(next) = unread.peek() {
            let settled = fresh
                .get(SHELF_FRESH_LIMIT - 1)
                .is_some_and(|(time_read, last)| {
                    recent_first(
                        (*time_read, &last.location.address),
                        (time(next), &next.address),
                    ) == Ordering::Less
                });
            if settled {
                break;
            }
            let page = header(
                &home,
                &dir,
                &next.rel_path,
                next.address.clone(),
                time(next),
            );
            unread.next();
            let read_from = now_ms();
            if let Some(row) = live_row(store, &page)? {
                let held = row.meta.updated_at;
                let placed = if (read_from..=now_ms()).contains(&held) {
                    now
                } else {
                    held
                };
                fresh.push((placed, row));
            }
            fresh.sort_by(|(a_time, a), (b_time, b)| {
                recent_first(
                    (*a_time, &a.location.address),
                    (*b_time, &b.location.address),
                )
            });
        }
        // Past the kept pages, only a home kept whole knows there is no
        // other note.
        if unread.peek().is_none() && !kept.complete {
            return None;
        }
        rows.extend(
            fresh
                .into_iter()
                .take(SHELF_FRESH_LIMIT)
                .map(|(_, row)| row),
        );
        Some(HomeShelf::from_rows(rows))
    }

    /// Lists the home of `scope` (through `store`), keeps what its shelf
    /// needs when the home may be kept, and returns its shelf.
    pub(super) fn listed(
        &mut self,
        store: &NoteStore,
        scope: Scope,
    ) -> Result<HomeShelf, NoteError> {
        let home = own_home(store, scope);
        let dir = store.home_dir(&home)?;
        self.forget(&dir);
        let started = SystemTime::now();
        let listed_from = now_ms();
        // The stamps are taken before the listing: a change during it is
        // seen at the next boot.
        let dirs = dir_stamps(store.root(), &dir);
        let (shelf, listed) = list_home(store, scope)?;
        let listed_until = now_ms();
        if let HomeShelf::Loaded { .. } = shelf
            && let (Some(dirs), Some(zone)) = (dirs, zone_name(store))
            && settled(&dirs, started, self.settle)
            && let Some(kept) = keep(
                dir,
                zone.to_owned(),
                dirs,
                &listed,
                listed_from..=listed_until,
            )
        {
            if self.homes.len() >= Self::MAX_HOMES {
                // The oldest first: the homes of sessions long gone.
                self.homes.remove(0);
            }
            self.homes.push(kept);
            self.changed = true;
        }
        Ok(shelf)
    }

    fn forget(&mut self, dir: &Path) {
        let before = self.homes.len();
        self.homes.retain(|kept| kept.dir != dir);
        self.changed |= self.homes.len() != before;
    }
}

/// The note `header` locates, read whole as it is now: `Some(None)` when it
/// is gone or crumpled, `None` when it cannot be read (the home is then
/// listed, and the listing reports it).
fn live_row(store: &NoteStore, header: &NoteHeader) -> Option<Option<NoteRow>> {
    let row = store.peek_row(header).ok()?;
    Some(row.filter(|row| !row.meta.is_crumpled()))
}

/// A listing's order: recent first, ties by address.
fn recent_first(a: (i64, &String), b: (i64, &String)) -> Ordering {
    b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1))
}

/// What to keep of a listing of the home at `dir`, whose rows are recent
/// first; `None` when too many notes are dated at or after the listing.
fn keep(
    dir: PathBuf,
    zone: String,
    dirs: Vec<(PathBuf, DirStamp)>,
    rows: &[NoteHeader],
    listing: std::ops::RangeInclusive<i64>,
) -> Option<KeptHome> {
    let map = rows.iter().any(|row| row.location.rel_path == MAP_FILE);
    let pages: Vec<&NoteHeader> = rows
        .iter()
        .filter(|row| row.location.rel_path != MAP_FILE)
        .collect();
    // Rows are recent first: the ones not in the past lead.
    let current = pages
        .iter()
        .take_while(|row| row.meta.updated_at >= *listing.start())
        .count();
    let reach = (current + ShelfIndex::SPARE_PAGES).min(pages.len());
    if reach > ShelfIndex::MAX_PAGES {
        return None;
    }
    Some(KeptHome {
        dir,
        zone,
        dirs,
        map,
        complete: reach == pages.len(),
        pages: pages[..reach]
            .iter()
            .map(|row| KeptPage {
                rel_path: row.location.rel_path.clone(),
                address: row.location.address.clone(),
                updated_at: row.meta.updated_at,
                clock: listing.contains(&row.meta.updated_at),
            })
            .collect(),
    })
}

/// The caller's own home of `scope`.
fn own_home(store: &NoteStore, scope: Scope) -> Home {
    let identity = store.identity();
    match scope {
        Scope::Session => Home::Session,
        Scope::Project => Home::Project,
        Scope::Human => Home::Human,
        Scope::Agent => Home::Agent(identity.agent().to_owned()),
        Scope::Model => Home::Model(identity.model().to_owned()),
    }
}

/// The header of a kept note. Only its location is read (see
/// [`NoteStore::peek_row`]); its metadata holds only the time it was listed
/// with.
fn header(home: &Home, dir: &Path, rel_path: &str, address: String, updated_at: i64) -> NoteHeader {
    NoteHeader {
        location: NoteLocation {
            address,
            scope: home.scope(),
            home: home.clone(),
            rel_path: rel_path.to_owned(),
            path: dir.join(rel_path),
        },
        meta: NoteMeta::new_at(updated_at),
    }
}

/// The name of the store's zone, `None` when it has none to compare.
fn zone_name(store: &NoteStore) -> Option<&str> {
    store.time_zone().iana_name()
}

/// Whether every directory's change time lies `settle` before `started`.
fn settled(dirs: &[(PathBuf, DirStamp)], started: SystemTime, settle: Duration) -> bool {
    let Some(limit) = started
        .checked_sub(settle)
        .and_then(|limit| limit.duration_since(SystemTime::UNIX_EPOCH).ok())
    else {
        return false;
    };
    let limit = (
        i64::try_from(limit.as_secs()).unwrap_or(i64::MAX),
        i64::from(limit.subsec_nanos()),
    );
    dirs.iter().all(|(_, stamp)| stamp.changed <= limit)
}

/// The stamps of every directory from below `root` down to `home`, then of
/// every directory a listing walks inside `home` (each taken before its
/// entries are read). `None` when a path is missing (a missing home needs
/// no keeping: it is served empty as it is) or not a directory, or a
/// directory cannot be read: such a home is listed at every boot.
fn dir_stamps(root: &Path, home: &Path) -> Option<Vec<(PathBuf, DirStamp)>> {
    let mut dirs = path_stamps(root, home)?
        .into_iter()
        .map(|(path, stamp)| Some((path, stamp?)))
        .collect::<Option<Vec<_>>>()?;
    let mut pending = vec![home.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).ok()? {
            let entry = entry.ok()?;
            let name = entry.file_name();
            // The listing does not walk Git's directories.
            if name
                .to_str()
                .is_some_and(crate::notes::segment::is_git_segment)
            {
                continue;
            }
            if entry.file_type().ok()?.is_dir() {
                let path = entry.path();
                match dir_now(&path) {
                    DirNow::Stamp(stamp) => dirs.push((path.clone(), stamp)),
                    _ => return None,
                }
                pending.push(path);
            }
        }
    }
    Some(dirs)
}

/// The stamps of every directory from below `root` down to `home`, up to
/// the first one missing. `None` when one is not a directory.
fn path_stamps(root: &Path, home: &Path) -> Option<Vec<(PathBuf, Option<DirStamp>)>> {
    let below_root = home.strip_prefix(root).ok()?;
    let mut dirs = Vec::new();
    let mut path = root.to_path_buf();
    for part in below_root.components() {
        path.push(part);
        match dir_now(&path) {
            DirNow::Stamp(stamp) => dirs.push((path.clone(), Some(stamp))),
            DirNow::Missing => {
                dirs.push((path.clone(), None));
                break;
            }
            DirNow::Other => return None,
        }
    }
    Some(dirs)
}

/// Whether `home` is missing below real directories: a listing finds it
/// empty (a new session's home, before its first note).
fn missing_home(root: &Path, home: &Path) -> bool {
    path_stamps(root, home)
        .is_some_and(|dirs| dirs.last().is_some_and(|(_, stamp)| stamp.is_none()))
}

/// How the directory at `path` looks now (`lstat`: a link is not one).
#[cfg(unix)]
fn dir_now(path: &Path) -> DirNow {
    use std::os::unix::fs::MetadataExt;
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => DirNow::Stamp(DirStamp {
            dev: meta.dev(),
            ino: meta.ino(),
            modified: (meta.mtime(), meta.mtime_nsec()),
            changed: (meta.ctime(), meta.ctime_nsec()),
        }),
        Ok(_) => DirNow::Other,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => DirNow::Missing,
        Err(_) => DirNow::Other,
    }
}

/// Without change times a directory's stamp cannot be trusted: nothing is
/// kept.
#[cfg(not(unix))]
fn dir_now(_: &Path) -> DirNow {
    DirNow::Other
}
