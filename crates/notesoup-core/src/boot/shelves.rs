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
//! A home whose directories changed is patched rather than listed, for
//! [`ShelfIndex::PATCH_FOR`] after its last listing: the index also keeps
//! each directory's note files by name and stamp (as one id each), so only
//! the directories whose stamps changed are read (their entries, and each
//! note file's stamp), and only their new files (a note written anew is a
//! new file: notesoup renames a temporary file over it). A home whose
//! folders were added, removed or replaced, or past that time, is listed
//! again.
//!
//! What stamps cannot see, and so a kept shelf does not see until the
//! home's next listing: another program editing a note in place, without a
//! rename, so that its `updatedAt` or `crumpledAt` changes while it is not
//! on the shelf (after a create, removal or rename in the home, once
//! `PATCH_FOR` has passed). A note on the shelf is always read as it is and
//! placed by the time it holds now (one crumpled or dated back in place
//! gives its place to the next).
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
use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use crate::notes::{
    Home, NoteError, NoteHeader, NoteLocation, NoteMeta, NoteRow, NoteStore, Scope, now_ms,
};
use crate::plumbing::fnv::fnv1a;
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
    /// How long after its listing a changed home is patched.
    patch_for: Duration,
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
    /// When the home was last listed (milliseconds since the epoch).
    listed_at: i64,
    /// The note files of every directory inside the home, for patching;
    /// `None` for a home with more than [`ShelfIndex::MAX_PATCH_FILES`].
    files: Option<Vec<DirFiles>>,
}

/// The note files (`.md`) of one directory of a kept home, each as the id
/// of its name and stamp ([`file_id`]). Saved as its folder and how many
/// ids it has ([`SavedDir`]): the ids follow the index's JSON line, 8
/// bytes each (see [`ShelfIndex::save`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "SavedDir", try_from = "SavedDir")]
struct DirFiles {
    dir: PathBuf,
    /// The ids, sorted.
    ids: Vec<u64>,
}

/// The saved form of a [`DirFiles`] in the index's JSON line.
#[derive(Serialize, Deserialize)]
struct SavedDir {
    dir: PathBuf,
    count: usize,
}

impl From<DirFiles> for SavedDir {
    fn from(files: DirFiles) -> SavedDir {
        SavedDir {
            dir: files.dir,
            count: files.ids.len(),
        }
    }
}

impl TryFrom<SavedDir> for DirFiles {
    type Error = &'static str;

    /// Room for the folder's ids, which [`saved_homes`] reads after the
    /// JSON line; a count no kept home can have is refused.
    fn try_from(saved: SavedDir) -> Result<DirFiles, Self::Error> {
        if saved.count > ShelfIndex::MAX_PATCH_FILES {
            return Err("more file ids than a kept home holds");
        }
        Ok(DirFiles {
            dir: saved.dir,
            ids: vec![0; saved.count],
        })
    }
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
    /// The id of its file's name and stamp ([`file_id`]; 0 when the file
    /// was not there when the home's files were taken).
    id: u64,
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
    const VERSION: u32 = 2;
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
    pub const MAX_SAVED_BYTES: u64 = 8 * 1024 * 1024;
    /// How long after a home's listing a change to its directories is
    /// patched; past it the home is listed again.
    pub(crate) const PATCH_FOR: Duration = Duration::from_secs(10 * 60);
    /// The most note files a home may hold for its files to be kept (16
    /// bytes each in the saved index); a larger home is listed at every
    /// change.
    pub(crate) const MAX_PATCH_FILES: usize = 8192;

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
            patch_for: Self::PATCH_FOR,
        }
    }

    /// The index saved at `path` by [`Self::save`]. A missing, unreadable,
    /// oversized or malformed file, one of another version, or anything but
    /// a regular file (a link, FIFO or device is neither read nor waited on;
    /// the next save replaces it) gives an empty index: a kept home is only
    /// served while its directories are unchanged or patched from those
    /// that changed, so a saved index can make a boot faster, never
    /// different from a listing (see the module docs for what stamps cannot
    /// see).
    pub fn load(path: &Path) -> ShelfIndex {
        let homes = read_small_file(path, Self::MAX_SAVED_BYTES, Links::Refuse)
            .ok()
            .flatten()
            .and_then(|bytes| saved_homes(&bytes))
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
        // One JSON line, then every kept folder's file ids in the order of
        // the homes and their folders, 8 bytes each: the ids are most of
        // the index, and a boot that serves its homes only copies them.
        let mut bytes = serde_json::to_vec(&saved)?;
        bytes.push(b'\n');
        for files in self.homes.iter().filter_map(|home| home.files.as_ref()) {
            for dir in files {
                for id in &dir.ids {
                    bytes.extend_from_slice(&id.to_le_bytes());
                }
            }
        }
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

    /// The shelf of `scope` from the kept home: when its directories are
    /// unchanged only the notes it shows are read, and when some changed
    /// (within [`Self::PATCH_FOR`] of its listing) the kept home is patched
    /// from those directories first, and kept so when they have settled.
    /// `None` when the home must be listed (not kept, changed past patching,
    /// or a kept page could not stand in for one found crumpled).
    pub(super) fn served(&mut self, store: &NoteStore, scope: Scope) -> Option<HomeShelf> {
        let home = own_home(store, scope);
        let dir = store.home_dir(&home).ok()?;
        let Some(at) = self.homes.iter().position(|kept| kept.dir == dir) else {
            return missing_home(store.root(), &dir).then(|| HomeShelf::from_rows(Vec::new()));
        };
        let kept = &self.homes[at];
        if Some(kept.zone.as_str()) != zone_name(store) {
            return None;
        }
        let unchanged = kept
            .dirs
            .iter()
            .all(|(path, stamp)| dir_now(path) == DirNow::Stamp(*stamp));
        if unchanged {
            return shelf_of_kept(kept, store, &home);
        }
        let started = SystemTime::now();
        let age = u64::try_from(now_ms().saturating_sub(kept.listed_at)).unwrap_or(0);
        if Duration::from_millis(age) >= self.patch_for {
            return None;
        }
        let patched = patch(kept, store, &home)?;
        let shelf = shelf_of_kept(&patched, store, &home)?;
        if settled(&patched.dirs, started, self.settle) {
            self.homes[at] = patched;
            self.changed = true;
        }
        Some(shelf)
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
        // The stamps and files are taken before the listing: a change
        // during it is seen at the next boot.
        let walked = walk_dirs(store.root(), &dir);
        let (shelf, listed) = list_home(store, scope)?;
        let listed_until = now_ms();
        if let HomeShelf::Loaded { .. } = shelf
            && let (Some(walked), Some(zone)) = (walked, zone_name(store))
            && settled(&walked.dirs, started, self.settle)
            && let Some(kept) = keep(
                dir,
                zone.to_owned(),
                walked,
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

/// The shelf of a kept home whose directories are as kept: only the notes
/// it shows are read. `None` when the home must be listed (a note cannot be
/// read, or the kept pages ran out before the shelf was full in a home not
/// kept whole).
fn shelf_of_kept(kept: &KeptHome, store: &NoteStore, home: &Home) -> Option<HomeShelf> {
    let dir = &kept.dir;
    let now = now_ms();
    let mut rows = Vec::with_capacity(SHELF_FRESH_LIMIT + 1);
    if kept.map {
        let address = format!("{}{MAP_FILE}", home.rendered_prefix(store.identity()));
        rows.extend(live_row(store, &header(home, dir, MAP_FILE, address, now))?);
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
        let page = header(home, dir, &next.rel_path, next.address.clone(), time(next));
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
    walked: Walked,
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
    let files = (walked.ids.len() <= ShelfIndex::MAX_PATCH_FILES).then(|| {
        walked
            .files
            .iter()
            .map(|(dir, ids)| DirFiles {
                dir: dir.clone(),
                ids: ids.clone(),
            })
            .collect()
    });
    Some(KeptHome {
        dir,
        zone,
        dirs: walked.dirs,
        map,
        complete: reach == pages.len(),
        pages: pages[..reach]
            .iter()
            .map(|row| KeptPage {
                rel_path: row.location.rel_path.clone(),
                address: row.location.address.clone(),
                updated_at: row.meta.updated_at,
                clock: listing.contains(&row.meta.updated_at),
                id: walked.ids.get(&row.location.rel_path).copied().unwrap_or(0),
            })
            .collect(),
        listed_at: *listing.start(),
        files,
    })
}

/// `kept` brought up to its directories as they are now, reading only the
/// directories whose stamps changed and the note files new in them; `None`
/// when the home must be listed instead: a directory inside it is missing
/// or replaced, its folders changed, its files were not kept, a new file
/// cannot be read, or it would keep more than [`ShelfIndex::MAX_PAGES`].
fn patch(kept: &KeptHome, store: &NoteStore, home: &Home) -> Option<KeptHome> {
    let mut patched = kept.clone();
    let mut files = patched.files.take()?;
    // Stamped before they are read: a change after this is seen next time.
    let mut changed = Vec::new();
    for (path, stamp) in &mut patched.dirs {
        let DirNow::Stamp(current) = dir_now(path) else {
            return None;
        };
        if current == *stamp {
            continue;
        }
        if path.starts_with(&kept.dir) {
            if (current.dev, current.ino) != (stamp.dev, stamp.ino) {
                return None;
            }
            changed.push(path.clone());
        }
        *stamp = current;
    }
    let folders: HashSet<&Path> = kept.dirs.iter().map(|(path, _)| path.as_path()).collect();
    let now = now_ms();
    let mut found = Vec::new();
    for dir in &changed {
        let listed = files.iter_mut().find(|files| files.dir == *dir)?;
        let entries = dir_entries(dir)?;
        let kept_folders = kept
            .dirs
            .iter()
            .filter(|(path, _)| path.parent() == Some(dir.as_path()) && path.starts_with(&kept.dir))
            .count();
        let same_folders = entries.folders.len() == kept_folders
            && entries
                .folders
                .iter()
                .all(|name| folders.contains(dir.join(name).as_path()));
        if !same_folders {
            return None;
        }
        let before = &listed.ids;
        let ids: HashSet<u64> = entries.files.iter().map(|(_, id)| *id).collect();
        let rel_dir = dir.strip_prefix(&kept.dir).ok()?;
        patched.pages.retain(|page| {
            Path::new(&page.rel_path).parent() != Some(rel_dir) || ids.contains(&page.id)
        });
        if rel_dir.as_os_str().is_empty() {
            patched.map = entries.files.iter().any(|(name, _)| name == MAP_FILE);
        }
        for (name, id) in &entries.files {
            if before.binary_search(id).is_err()
                && !(rel_dir.as_os_str().is_empty() && name == MAP_FILE)
            {
                let rel_path = rel_dir.join(name).to_str()?.to_owned();
                found.push((rel_path, *id));
            }
        }
        let mut sorted: Vec<u64> = ids.into_iter().collect();
        sorted.sort_unstable();
        listed.ids = sorted;
    }
    // The last kept page as the pages rank now: a new page below it may
    // rank below a note the listing left out, unless the home was kept
    // whole. Every note left out ranks below it, at this boot and later.
    let floor = patched
        .pages
        .iter()
        .map(|page| (page_time(page, now), page.address.clone()))
        .max_by(|a, b| recent_first((a.0, &a.1), (b.0, &b.1)));
    let mut added = Vec::new();
    for (rel_path, id) in found {
        let read_from = now_ms();
        let Some(row) = live_row(
            store,
            &header(home, &kept.dir, &rel_path, String::new(), now),
        )?
        else {
            continue;
        };
        let held = row.meta.updated_at;
        let clock = (read_from..=now_ms()).contains(&held);
        let page = KeptPage {
            rel_path,
            address: row.location.address,
            updated_at: held,
            clock,
            id,
        };
        // A page dated now or later ranks above every note left out at any
        // later boot; an earlier one only if it ranks above the floor.
        let current = clock || held >= now;
        let above = floor.as_ref().is_some_and(|(time, address)| {
            recent_first((page_time(&page, now), &page.address), (*time, address)) == Ordering::Less
        });
        if kept.complete || current || above {
            added.push(page);
        }
    }
    patched.pages.extend(added);
    if patched.pages.len() > ShelfIndex::MAX_PAGES {
        return None;
    }
    patched.files = Some(files);
    Some(patched)
}

/// A kept page's time at a boot at `now`.
fn page_time(page: &KeptPage, now: i64) -> i64 {
    if page.clock { now } else { page.updated_at }
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

/// What [`walk_dirs`] found of a home before its listing.
struct Walked {
    /// Every directory from below the root down to the home, then every
    /// directory inside it, with its stamp.
    dirs: Vec<(PathBuf, DirStamp)>,
    /// Each directory inside the home with the sorted ids of its note files.
    files: Vec<(PathBuf, Vec<u64>)>,
    /// Each note file's id by its path relative to the home.
    ids: HashMap<String, u64>,
}

/// The stamps of every directory from below `root` down to `home`, then of
/// every directory a listing walks inside `home` (each taken before its
/// entries are read), and the note files of each. `None` when a path is
/// missing (a missing home needs no keeping: it is served empty as it is)
/// or not a directory, or a directory cannot be read: such a home is
/// listed at every boot.
fn walk_dirs(root: &Path, home: &Path) -> Option<Walked> {
    let mut dirs = path_stamps(root, home)?
        .into_iter()
        .map(|(path, stamp)| Some((path, stamp?)))
        .collect::<Option<Vec<_>>>()?;
    let mut files = Vec::new();
    let mut ids = HashMap::new();
    let mut pending = vec![home.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let entries = dir_entries(&dir)?;
        for name in entries.folders {
            let path = dir.join(name);
            match dir_now(&path) {
                DirNow::Stamp(stamp) => dirs.push((path.clone(), stamp)),
                _ => return None,
            }
            pending.push(path);
        }
        let rel_dir = dir.strip_prefix(home).ok()?;
        let mut dir_ids = Vec::with_capacity(entries.files.len());
        for (name, id) in entries.files {
            ids.insert(rel_dir.join(&name).to_str()?.to_owned(), id);
            dir_ids.push(id);
        }
        dir_ids.sort_unstable();
        files.push((dir, dir_ids));
    }
    Some(Walked { dirs, files, ids })
}

/// The entries of one directory a listing walks.
struct DirEntries {
    /// The folders, by name (Git's own directories left out).
    folders: Vec<std::ffi::OsString>,
    /// The note files (`.md` files named in UTF-8, as a listing reads
    /// them), by name, with their ids.
    files: Vec<(String, u64)>,
}

/// The folders and note files of `dir`, from its entries and its note
/// files' stamps (no file is opened); `None` when it cannot be read, or a
/// note file is gone before its stamp is taken.
fn dir_entries(dir: &Path) -> Option<DirEntries> {
    let mut entries = DirEntries {
        folders: Vec::new(),
        files: Vec::new(),
    };
    for entry in std::fs::read_dir(dir).ok()? {
        let entry = entry.ok()?;
        let name = entry.file_name();
        let kind = entry.file_type().ok()?;
        let text = name.to_str();
        if kind.is_dir() {
            // The listing does not walk Git's directories.
            if !text.is_some_and(crate::notes::segment::is_git_segment) {
                entries.folders.push(name);
            }
        } else if kind.is_file()
            && let Some(text) = text
            && text.ends_with(".md")
            && !crate::notes::segment::is_git_segment(text.strip_suffix(".md").unwrap_or(text))
        {
            entries
                .files
                .push((text.to_owned(), file_id(&name, &entry)?));
        }
    }
    Some(entries)
}

/// The id of a note file: its name and its stamp (inode, size, modification
/// and change times, taken inside its directory without following a link),
/// hashed (FNV-1a, 64 bits). A note written anew is a new file under its
/// name, so a new id; its inode alone would not do, as a file system hands
/// a freed inode out again (a note written twice through a temporary file
/// can end on the inode it started on), while its change time moves on.
#[cfg(unix)]
fn file_id(name: &OsStr, entry: &std::fs::DirEntry) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::MetadataExt;
    let meta = entry.metadata().ok()?;
    let stamp = [
        meta.ino(),
        meta.size(),
        meta.mtime().cast_unsigned(),
        meta.mtime_nsec().cast_unsigned(),
        meta.ctime().cast_unsigned(),
        meta.ctime_nsec().cast_unsigned(),
    ];
    let mut bytes = [0u8; 48];
    for (chunk, part) in bytes.chunks_exact_mut(8).zip(stamp) {
        chunk.copy_from_slice(&part.to_le_bytes());
    }
    Some(fnv1a(&[&bytes, name.as_bytes()]))
}

/// Without inodes no entry has an id: nothing is kept (see [`dir_now`]).
#[cfg(not(unix))]
fn file_id(_: &OsStr, _: &std::fs::DirEntry) -> Option<u64> {
    None
}

/// The homes of a saved index: its JSON line, then the ids of every kept
/// folder (see [`ShelfIndex::save`]); `None` when it is not one of this
/// version, or its ids do not match its folders.
fn saved_homes(bytes: &[u8]) -> Option<Vec<KeptHome>> {
    let line = bytes.iter().position(|&byte| byte == b'\n')?;
    let saved: Saved = serde_json::from_slice(&bytes[..line]).ok()?;
    if saved.version != ShelfIndex::VERSION {
        return None;
    }
    let blob = &bytes[line + 1..];
    if !blob.len().is_multiple_of(8) {
        return None;
    }
    let mut ids = blob
        .chunks_exact(8)
        .map(|id| u64::from_le_bytes(id.try_into().unwrap_or_default()));
    let mut homes = saved.homes;
    for files in homes.iter_mut().filter_map(|home| home.files.as_mut()) {
        for dir in files {
            for slot in &mut dir.ids {
                *slot = ids.next()?;
            }
            if !dir.ids.is_sorted_by(|a, b| a < b) {
                return None;
            }
        }
    }
    ids.next().is_none().then_some(homes)
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

#[cfg(test)]
impl ShelfIndex {
    /// The same index patching changed homes for `patch_for` after their
    /// listing (tests use zero to list every changed home).
    pub(crate) fn patching_for(self, patch_for: Duration) -> ShelfIndex {
        ShelfIndex { patch_for, ..self }
    }

    /// The same index keeping homes (and patches) whose directories changed
    /// at least `settle` before.
    pub(crate) fn settling(self, settle: Duration) -> ShelfIndex {
        ShelfIndex { settle, ..self }
    }
}
