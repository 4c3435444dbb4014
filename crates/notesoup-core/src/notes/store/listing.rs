//! Listing and search: `list`, `list_headers`, `peek_row` and `search`, and
//! the walk over the selected homes they share.

use std::cmp::Ordering;
use std::ffi::{OsStr, OsString};
use std::path::{MAIN_SEPARATOR, Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};
use std::time::SystemTime;

use crate::notes::address::{Address, Home, HomeSelection, NotePattern};
use crate::notes::beneath::{BeneathError, DirHandle, Kind};
use crate::notes::error::NoteError;
use crate::notes::frontmatter::{NoteMeta, parse_note, split_note};
use crate::notes::fsio::FileTurns;
use crate::notes::identity::{Scope, is_slug};
use crate::notes::matcher::LiteralQueries;
use crate::notes::segment::{escape_forbidden, is_git_segment};
use crate::notes::time::now_ms;
use crate::wire::RefusalCode;

use super::files::{read_head, read_into, text_of};
use super::heads::{HeadCache, KeptMeta, Served, Stamp};
use super::{ListQuery, ListStatus, NoteHeader, NoteLocation, NoteRow, NoteStore, SearchRow};

/// What a listing visit decided about one file.
enum Visit<R> {
    Row(R),
    Hidden,
    Skip,
}

/// A note file met during a listing.
struct Found<'a> {
    home: &'a Home,
    /// The home's rendered address prefix.
    address_prefix: &'a str,
    rel_path: &'a str,
    path: &'a Path,
    /// The whole file, or with [`Reading::Head`] a prefix that settles the
    /// frontmatter (see [`read_head`]); empty when the cache served the
    /// parse ([`Cached::Meta`]).
    bytes: &'a [u8],
    /// What a [`HeadCache`] gave.
    cached: Cached,
}

/// What a listing's [`HeadCache`] gave for one file.
enum Cached {
    /// Nothing: no cache, or a listing of whole files.
    Not,
    /// The head (in [`Found::bytes`]) under the file's `stamp`; `keep`
    /// when its parse is to be offered to the cache.
    Head { stamp: Stamp, keep: bool },
    /// The kept parse at the time of the listing.
    Meta(NoteMeta),
}

/// How much of each file a listing reads: whole, or the head for a
/// listing at `now` (the time kept parses are served at).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reading {
    Whole,
    Head { now: i64 },
}

/// Whether a note with `crumpled` belongs in a listing of `query`; a
/// crumpled one outside the wastebasket is counted as hidden.
fn shown<R>(query: &ListQuery, crumpled: bool, row: impl FnOnce() -> R) -> Visit<R> {
    if crumpled == query.wastebasket {
        Visit::Row(row())
    } else if crumpled {
        Visit::Hidden
    } else {
        Visit::Skip
    }
}

impl NoteStore {
    /// Lists notes, recent first (ties by address), reporting hidden
    /// crumpled notes and homes that could not be read (the other homes
    /// still list). Only the crate's tests read every body this way; the
    /// tools and the boot list heads ([`Self::list_headers`]).
    #[cfg(test)]
    pub(crate) fn list(&self, query: &ListQuery) -> Result<ListStatus<NoteRow>, NoteError> {
        let now = now_ms();
        let mut listed = self.scan_whole(query, |found, _: &mut ()| {
            let text = text_of(found.bytes);
            let parsed = parse_note(&text, now, &self.tz);
            shown(query, parsed.meta.is_crumpled(), || NoteRow {
                location: self.location_found(&found),
                body: parsed.body.to_owned(),
                meta: parsed.meta,
                size_bytes: found.bytes.len() as u64,
            })
        })?;
        sort_rows(&mut listed.rows, |a, b| {
            recent_first((&a.meta, &a.location), (&b.meta, &b.location))
        });
        Ok(listed)
    }

    /// Lists notes like [`Self::list`] without their bodies: only the start
    /// of each file is read, as far as its frontmatter goes. The fast path
    /// for callers that show metadata (`notes_list`, the boot).
    pub(crate) fn list_headers(
        &self,
        query: &ListQuery,
    ) -> Result<ListStatus<NoteHeader>, NoteError> {
        let now = now_ms();
        let mut listed = self.scan_heads(query, now, |mut found| {
            let meta = match std::mem::replace(&mut found.cached, Cached::Not) {
                // A kept parse at this call's time.
                Cached::Meta(meta) => meta,
                // Through the cache for the first time at this stamp.
                Cached::Head { stamp, keep: true } if let Some(heads) = &self.heads => {
                    let (meta, kept) =
                        KeptMeta::parse(&split_note(&text_of(found.bytes)), now, &self.tz);
                    heads.keep_meta(found.path, &stamp, kept);
                    meta
                }
                // Without a cache, or a kept parse that depends on the zone.
                _ => split_note(&text_of(found.bytes)).meta(now, &self.tz),
            };
            shown(query, meta.is_crumpled(), || NoteHeader {
                location: self.location_found(&found),
                meta,
            })
        })?;
        sort_rows(&mut listed.rows, |a, b| {
            recent_first((&a.meta, &a.location), (&b.meta, &b.location))
        });
        Ok(listed)
    }

    /// Reads a listed note whole, as [`Self::list`] would have returned it:
    /// after its file's queue turn and without touching access metadata.
    /// `None` when it is gone since it was listed, or when its path now
    /// crosses a link or is not a regular file (a listing skips those).
    /// The note may have changed since it was listed; the row is what is on
    /// disk now.
    pub(crate) fn peek_row(&self, header: &NoteHeader) -> Result<Option<NoteRow>, NoteError> {
        let address = Address::on_disk(header.location.home.clone(), &header.location.rel_path)?;
        let path = self.note_path(&address)?;
        let (rel_dir, name) = self.place(&address)?;
        let _turn = FileTurns::take(&[&path]);
        let Some(root) = self.open_root()? else {
            return Ok(None);
        };
        // One `openat2` from the root, following no link.
        let (file, _) = match root.open_file_at(&rel_dir.join(name)) {
            Ok(Some(opened)) => opened,
            Ok(None) | Err(BeneathError::Link { .. }) => return Ok(None),
            Err(error) => return Err(error.into()),
        };
        let mut bytes = Vec::new();
        let len = read_into(file, &mut bytes, 0).map_err(|e| NoteError::io("read", &path, &e))?;
        bytes.truncate(len);
        let text = text_of(&bytes);
        let parsed = parse_note(&text, now_ms(), &self.tz);
        Ok(Some(NoteRow {
            location: self.locate(&address, path),
            body: parsed.body.to_owned(),
            meta: parsed.meta,
            size_bytes: bytes.len() as u64,
        }))
    }

    /// Searches note bodies line by line for any of `queries`
    /// (case-insensitive literals), rows sorted by address, reporting hidden
    /// crumpled notes with matches and homes that could not be read.
    pub(crate) fn search<Q: AsRef<str>>(
        &self,
        queries: &[Q],
        query: &ListQuery,
    ) -> Result<ListStatus<SearchRow>, NoteError> {
        let matcher = LiteralQueries::new(queries)?;
        let now = now_ms();
        let mut listed = self.scan_whole(query, |found, scratch: &mut SearchScratch| {
            if !matcher.could_match(found.bytes, &mut scratch.raw) {
                return Visit::Skip;
            }
            let text = text_of(found.bytes);
            let split = split_note(&text);
            let matches = matcher.find_lines(split.body, &mut scratch.folded);
            if matches.is_empty() {
                return Visit::Skip;
            }
            let meta = split.meta(now, &self.tz);
            shown(query, meta.is_crumpled(), || SearchRow {
                location: self.location_found(&found),
                meta,
                matches,
            })
        })?;
        listed
            .rows
            .sort_by(|a, b| a.location.address.cmp(&b.location.address));
        Ok(listed)
    }

    /// The location of a file a listing found. A name on disk that no
    /// address could hold (a control or bidirectional character) is
    /// printed escaped in the address, so it cannot forge rows or reorder
    /// the text around it.
    fn location_found(&self, found: &Found<'_>) -> NoteLocation {
        NoteLocation {
            address: {
                let rel_path = escape_forbidden(found.rel_path);
                let mut address =
                    String::with_capacity(found.address_prefix.len() + rel_path.len());
                address.push_str(found.address_prefix);
                address.push_str(&rel_path);
                address
            },
            scope: found.home.scope(),
            home: found.home.clone(),
            rel_path: found.rel_path.to_owned(),
            path: found.path.to_path_buf(),
        }
    }

    /// Walks the selected homes and hands every matching `.md` file's head
    /// to `visit`, through the store's [`HeadCache`] when it has one. A
    /// home that fails contributes no rows and is reported with its label.
    fn scan_heads<R>(
        &self,
        query: &ListQuery,
        now: i64,
        mut visit: impl FnMut(Found<'_>) -> Visit<R>,
    ) -> Result<ListStatus<R>, NoteError> {
        let (homes, root, mut failures) = self.scan_start(query)?;
        let pattern = homes.pattern;
        if let Some(heads) = self.heads.as_deref() {
            heads.begin_listing();
        }
        let reading = Reading::Head { now };
        let mut rows = Vec::new();
        let mut hidden = 0;
        let mut buffer = Vec::new();
        for home in homes.homes {
            let Some(root) = root.as_ref() else {
                // No root yet: every home is empty.
                continue;
            };
            let mut home_hidden = 0;
            let address_prefix = home.rendered_prefix(&self.identity);
            let walked = pushed_whole(&mut rows, |rows| {
                self.walk_home(root, &home, pattern.as_ref(), true, |file| {
                    let listed = ListedFile {
                        dir: file.dir,
                        name: OsStr::new(file.name),
                        path: &file.path,
                    };
                    let read = match self.heads.as_deref() {
                        Some(heads) => kept_head(heads, &listed, now, file.watched, &mut buffer),
                        None => read_file(&listed, reading, &mut buffer)
                            .map(|len| len.map(|len| (len, Cached::Not))),
                    };
                    let (len, cached) = match read {
                        Ok(Some(read)) => read,
                        // Renamed away, or swapped for a link, since the
                        // directory was read.
                        Ok(None) | Err(BeneathError::Link { .. }) => return Ok(()),
                        Err(error) => return Err(error.into()),
                    };
                    match visit(Found {
                        home: &home,
                        address_prefix: &address_prefix,
                        rel_path: file.rel_path,
                        path: &file.path,
                        bytes: &buffer[..len],
                        cached,
                    }) {
                        Visit::Row(row) => rows.push(row),
                        Visit::Hidden => home_hidden += 1,
                        Visit::Skip => {}
                    }
                    Ok(())
                })
            });
            match walked {
                Ok(()) => hidden += home_hidden,
                // The error itself is dropped: the label is what callers
                // report, and the other homes still list.
                Err(_) => failures.push(home.label(&self.identity)),
            }
        }
        Ok(ListStatus {
            rows,
            crumpled_excluded: hidden,
            homes_unavailable: failures,
        })
    }

    /// Walks the selected homes, then reads every matching `.md` file whole
    /// and hands it to `visit`, with a scratch `S` of the reading thread's
    /// own. A large listing reads its files on a few threads at once; the
    /// rows, their order and the homes reported are those of one thread
    /// reading the files in the order of the walk. A home that fails
    /// contributes no rows and is reported with its label.
    fn scan_whole<R: Send, S: Default>(
        &self,
        query: &ListQuery,
        visit: impl Fn(Found<'_>, &mut S) -> Visit<R> + Sync,
    ) -> Result<ListStatus<R>, NoteError> {
        let (homes, root, mut failures) = self.scan_start(query)?;
        let pattern = homes.pattern;
        let homes = homes.homes;
        let Some(root) = root else {
            // No root yet: every home is empty.
            return Ok(ListStatus {
                rows: Vec::new(),
                crumpled_excluded: 0,
                homes_unavailable: failures,
            });
        };
        // The walk: every file to read, in order, and the homes it failed.
        let mut files = Vec::new();
        let mut failed = vec![false; homes.len()];
        let mut rel_dir: Option<Arc<str>> = None;
        for (index, home) in homes.iter().enumerate() {
            let start = files.len();
            let walked = self.walk_home(&root, home, pattern.as_ref(), false, |file| {
                // One copy of each directory's path for all its files.
                let dir_path = match &rel_dir {
                    Some(kept) if **kept == *file.rel_dir => Arc::clone(kept),
                    _ => Arc::clone(rel_dir.insert(Arc::from(file.rel_dir))),
                };
                files.push(WholeFile {
                    home: index,
                    dir: Arc::clone(file.dir),
                    rel_dir: dir_path,
                    name: file.name.into(),
                });
                Ok(())
            });
            if walked.is_err() {
                files.truncate(start);
                failed[index] = true;
            }
        }
        let prefixes: Vec<String> = homes
            .iter()
            .map(|home| home.rendered_prefix(&self.identity))
            .collect();
        // The reads: the outcome of each file that adds to the listing,
        // with its index in the walk.
        let read_one = |file: &WholeFile, scratch: &mut S, buffers: &mut ReadBuffers| {
            let ReadBuffers {
                bytes,
                rel_path,
                path,
            } = buffers;
            rel_path.clear();
            rel_path.push_str(&file.rel_dir);
            rel_path.push_str(&file.name);
            path.as_mut_os_string().clear();
            path.push(file.dir.path());
            path.push(&*file.name);
            let listed = ListedFile {
                dir: &file.dir,
                name: OsStr::new(&*file.name),
                path,
            };
            match read_file(&listed, Reading::Whole, bytes) {
                Ok(Some(len)) => match visit(
                    Found {
                        home: &homes[file.home],
                        address_prefix: &prefixes[file.home],
                        rel_path,
                        path,
                        bytes: &bytes[..len],
                        cached: Cached::Not,
                    },
                    scratch,
                ) {
                    Visit::Row(row) => Some(Read::Row(row)),
                    Visit::Hidden => Some(Read::Hidden),
                    Visit::Skip => None,
                },
                // Renamed away, or swapped for a link, since the directory
                // was read.
                Ok(None) | Err(BeneathError::Link { .. }) => None,
                Err(_) => Some(Read::Failed),
            }
        };
        let outcomes = read_all(&files, |file| Arc::as_ptr(&file.dir) as usize, read_one);
        let mut home_rows: Vec<Vec<R>> = homes.iter().map(|_| Vec::new()).collect();
        let mut home_hidden = vec![0; homes.len()];
        for (index, outcome) in outcomes {
            let home = files[index].home;
            match outcome {
                Read::Row(row) => home_rows[home].push(row),
                Read::Hidden => home_hidden[home] += 1,
                Read::Failed => failed[home] = true,
            }
        }
        let mut rows = Vec::new();
        let mut hidden = 0;
        for (index, home) in homes.iter().enumerate() {
            if failed[index] {
                // The error itself is dropped: the label is what callers
                // report, and the other homes still list.
                failures.push(home.label(&self.identity));
            } else {
                rows.append(&mut home_rows[index]);
                hidden += home_hidden[index];
            }
        }
        Ok(ListStatus {
            rows,
            crumpled_excluded: hidden,
            homes_unavailable: failures,
        })
    }

    /// What every listing starts with: the pattern, the homes it
    /// traverses, the root (`None` when there is none yet) and the homes
    /// that could not be enumerated.
    fn scan_start(
        &self,
        query: &ListQuery,
    ) -> Result<(ScanHomes, Option<DirHandle>, Vec<String>), NoteError> {
        let pattern = match query.pattern.as_deref() {
            Some(text) => NotePattern::parse(text, &self.identity)?,
            None => None,
        };
        let mut failures = Vec::new();
        let root = self.open_root()?;
        let homes = self.selected_homes(query, pattern.as_ref(), root.as_ref(), &mut failures)?;
        Ok((ScanHomes { pattern, homes }, root, failures))
    }

    /// The homes a query traverses: the pattern's head narrows them, the
    /// scope (and `who`) picks one.
    fn selected_homes(
        &self,
        query: &ListQuery,
        pattern: Option<&NotePattern>,
        root: Option<&DirHandle>,
        failures: &mut Vec<String>,
    ) -> Result<Vec<Home>, NoteError> {
        let scoped = self.scoped_home(query)?;
        let selection = pattern.map_or(&HomeSelection::Own, NotePattern::homes);
        let homes = match selection {
            HomeSelection::Own => match &scoped {
                Some(home) => vec![home.clone()],
                None => Home::own(&self.identity).to_vec(),
            },
            HomeSelection::One(home) => vec![home.clone()],
            HomeSelection::AllAgents => enumerate(root, "agents", Home::Agent, failures),
            HomeSelection::AllModels => enumerate(root, "models", Home::Model, failures),
            HomeSelection::Nothing => Vec::new(),
        };
        let homes: Vec<Home> = match (selection, &scoped) {
            (HomeSelection::Own, _) | (_, None) => homes,
            (_, Some(scoped)) => homes.into_iter().filter(|home| home == scoped).collect(),
        };
        // Asked for by name (the session scope), the session home of an
        // identity without one is a refusal, not an empty home.
        if self.identity.session_id().is_none() && homes.contains(&Home::Session) {
            return Err(NoteError::no_session());
        }
        Ok(homes)
    }

    fn scoped_home(&self, query: &ListQuery) -> Result<Option<Home>, NoteError> {
        let invalid = |message: &str| NoteError::new(RefusalCode::InvalidScope, message);
        if let Some(who) = &query.who {
            match query.scope {
                None => return Err(invalid("who requires agent or model scope")),
                Some(Scope::Agent | Scope::Model) => {}
                Some(_) => return Err(invalid("who is only valid with agent or model scope")),
            }
            if !is_slug(who) {
                return Err(invalid("who must be a canonical lowercase slug"));
            }
        }
        let who = |own: &str| query.who.clone().unwrap_or_else(|| own.to_owned());
        Ok(query.scope.map(|scope| match scope {
            Scope::Session => Home::Session,
            Scope::Project => Home::Project,
            Scope::Human => Home::Human,
            Scope::Agent => Home::Agent(who(self.identity.agent())),
            Scope::Model => Home::Model(who(self.identity.model())),
        }))
    }

    /// Walks one home without following links, handing each `.md` file whose
    /// concrete address matches the pattern to `on_file`. Every directory is
    /// opened inside its parent and every file inside its directory, never
    /// through a link: a directory swapped for a link while the walk runs
    /// is skipped, not followed. With `watch`, each directory is watched
    /// through the store's [`HeadCache`] before it is read.
    fn walk_home(
        &self,
        root: &DirHandle,
        home: &Home,
        pattern: Option<&NotePattern>,
        watch: bool,
        mut on_file: impl FnMut(WalkedFile<'_>) -> Result<(), NoteError>,
    ) -> Result<(), NoteError> {
        // The home directory and every directory above it (below the root)
        // must be real directories; a missing home is simply empty.
        let Some(home_dir) = root.open_dir(&home.rel_dir(&self.identity)?)? else {
            return Ok(());
        };
        let concrete_prefix = home.concrete_prefix();
        let mut concrete = String::new();
        let mut rel_path = String::new();
        // Depth first. A directory waits as its parent's handle and its
        // name, and is opened when its turn comes, so only the directories
        // on the way down are open at once. Each goes with its path
        // relative to the home (`None` when that is not UTF-8: no file
        // below it has an address).
        let mut pending: Vec<(Arc<DirHandle>, Option<OsString>, Option<String>)> =
            vec![(Arc::new(home_dir), None, Some(String::new()))];
        while let Some((parent, name, rel_dir)) = pending.pop() {
            let dir = match name {
                None => parent,
                Some(name) => match parent.open_dir(Path::new(&name)) {
                    Ok(Some(dir)) => Arc::new(dir),
                    // Gone, or swapped for a link or a file since it was
                    // listed.
                    Ok(None)
                    | Err(BeneathError::Link { .. } | BeneathError::NotADirectory { .. }) => {
                        continue;
                    }
                    Err(error) => return Err(error.into()),
                },
            };
            let current = dir.path();
            // Watched before it is read: a change after this is reported.
            let watched = match (watch, self.heads.as_deref()) {
                (true, Some(heads)) => heads.watch_dir(current),
                _ => None,
            };
            for entry in dir.entries()? {
                // Git's own directories, and names Git takes for them, hold
                // no notes (no address can name them; `dream doctor` names
                // and `doctor clean` moves the look-alikes).
                let name = entry.name.to_str();
                if name.is_some_and(|name| is_git_segment(name.strip_suffix(".md").unwrap_or(name)))
                {
                    continue;
                }
                let rel = rel_dir.as_deref().zip(name);
                if entry.kind == Kind::Dir {
                    let rel = rel.map(|(rel_dir, name)| format!("{rel_dir}{name}{MAIN_SEPARATOR}"));
                    pending.push((Arc::clone(&dir), Some(entry.name), rel));
                    continue;
                }
                if entry.kind != Kind::File {
                    continue;
                }
                let Some((rel_dir, name)) = rel else {
                    continue;
                };
                if !name.ends_with(".md") {
                    continue;
                }
                rel_path.clear();
                rel_path.push_str(rel_dir);
                rel_path.push_str(name);
                if let Some(pattern) = pattern {
                    concrete.clear();
                    concrete.push_str(&concrete_prefix);
                    concrete.push_str(&rel_path);
                    if !pattern.matches(&concrete) {
                        continue;
                    }
                }
                on_file(WalkedFile {
                    dir: &dir,
                    watched,
                    name,
                    rel_dir,
                    rel_path: &rel_path,
                    path: current.join(&entry.name),
                })?;
            }
        }
        Ok(())
    }
}

/// The pattern of a listing and the homes it traverses.
struct ScanHomes {
    pattern: Option<NotePattern>,
    homes: Vec<Home>,
}

/// A `.md` file a home's walk met.
struct WalkedFile<'a> {
    /// Its open directory.
    dir: &'a Arc<DirHandle>,
    /// The device the directory is watched on, when it is.
    watched: Option<u64>,
    name: &'a str,
    /// Its directory's path relative to the home.
    rel_dir: &'a str,
    rel_path: &'a str,
    path: PathBuf,
}

/// A file a listing of whole files reads once the walk is done.
struct WholeFile {
    /// Its home's index among the listing's homes.
    home: usize,
    dir: Arc<DirHandle>,
    /// Its directory's path relative to the home (shared by the
    /// directory's files).
    rel_dir: Arc<str>,
    name: Box<str>,
}

/// What reading one [`WholeFile`] added to the listing.
enum Read<R> {
    Row(R),
    /// A crumpled note left out.
    Hidden,
    /// Unreadable: its home fails.
    Failed,
}

/// A reading thread's buffers: the file's bytes, its path relative to
/// its home, and its path.
#[derive(Default)]
struct ReadBuffers {
    bytes: Vec<u8>,
    rel_path: String,
    path: PathBuf,
}

/// A listing's scratch for [`NoteStore::search`], one per reading thread.
#[derive(Default)]
struct SearchScratch {
    raw: Vec<u8>,
    folded: String,
}

/// Below this many files a listing reads them on the calling thread.
const PARALLEL_MIN_FILES: usize = 128;
/// The most threads reading a listing's files.
const MAX_READERS: usize = 4;
/// The most files of one directory a reading thread takes at a time.
const READ_UNIT: usize = 32;
/// A reading thread's stack: it holds no more than a few frames.
const READER_STACK_BYTES: usize = 256 * 1024;

/// `read_one` of every file, each outcome it gives with the file's index,
/// in the files' order. A listing of many files is read by a few threads
/// at once, each with its own scratch and buffers, each taking a
/// directory's files (at most [`READ_UNIT`]) at a time, so two threads
/// seldom open files in one directory at once; `group` names a file's
/// directory (the files of one directory are next to each other). Only
/// the outcomes are kept: a file that adds nothing costs no memory.
fn read_all<F: Sync, O: Send, S: Default>(
    files: &[F],
    group: impl Fn(&F) -> usize,
    read_one: impl Fn(&F, &mut S, &mut ReadBuffers) -> Option<O> + Sync,
) -> Vec<(usize, O)> {
    let readers = readers_for(files.len());
    if readers <= 1 {
        let mut scratch = S::default();
        let mut buffers = ReadBuffers::default();
        return files
            .iter()
            .enumerate()
            .filter_map(|(index, file)| Some((index, read_one(file, &mut scratch, &mut buffers)?)))
            .collect();
    }
    let units = read_units(files, group);
    let next = AtomicUsize::new(0);
    let reader = || {
        let mut scratch = S::default();
        let mut buffers = ReadBuffers::default();
        let mut done: Vec<(usize, O)> = Vec::new();
        while let Some(&(start, end)) = units.get(next.fetch_add(1, AtomicOrdering::Relaxed)) {
            for (index, file) in files[start..end].iter().enumerate() {
                if let Some(outcome) = read_one(file, &mut scratch, &mut buffers) {
                    done.push((start + index, outcome));
                }
            }
        }
        done
    };
    let mut all = std::thread::scope(|scope| {
        // A thread that cannot be started leaves its share to the others.
        let others: Vec<_> = (1..readers)
            .filter_map(|_| {
                std::thread::Builder::new()
                    .stack_size(READER_STACK_BYTES)
                    .spawn_scoped(scope, reader)
                    .ok()
            })
            .collect();
        let mut all = reader();
        for other in others {
            match other.join() {
                Ok(mut done) => all.append(&mut done),
                // A reader that panicked: the panic goes on here.
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        all
    });
    all.sort_unstable_by_key(|(index, _)| *index);
    all
}

/// How many threads read a listing of `files` files: one below
/// [`PARALLEL_MIN_FILES`], else one per core, at most [`MAX_READERS`].
fn readers_for(files: usize) -> usize {
    if files < PARALLEL_MIN_FILES {
        1
    } else {
        std::thread::available_parallelism()
            .map_or(1, usize::from)
            .min(MAX_READERS)
    }
}

/// The units [`read_all`]'s threads take, as `(start, end)` ranges of
/// `files`: runs of one directory's files (`group`), cut at [`READ_UNIT`].
fn read_units<F>(files: &[F], group: impl Fn(&F) -> usize) -> Vec<(usize, usize)> {
    let mut units = Vec::new();
    let mut start = 0;
    for index in 1..=files.len() {
        let ends = index == files.len()
            || index - start == READ_UNIT
            || group(&files[index]) != group(&files[start]);
        if ends {
            units.push((start, index));
            start = index;
        }
    }
    units
}

/// Every slug-named real directory under `<root>/<namespace>/`.
fn enumerate(
    root: Option<&DirHandle>,
    namespace: &str,
    make: fn(String) -> Home,
    failures: &mut Vec<String>,
) -> Vec<Home> {
    let listed = (|| {
        let Some(root) = root else {
            return Ok(Vec::new());
        };
        let Some(dir) = root.open_dir(Path::new(namespace))? else {
            return Ok(Vec::new());
        };
        let mut homes: Vec<Home> = dir
            .entries()?
            .into_iter()
            .filter(|entry| entry.kind == Kind::Dir)
            .filter_map(|entry| entry.name.into_string().ok())
            .filter(|name| is_slug(name))
            .map(make)
            .collect();
        homes.sort();
        Ok(homes)
    })();
    listed.unwrap_or_else(|_: BeneathError| {
        failures.push(format!("@{namespace}"));
        Vec::new()
    })
}

/// A file a listing found: its name in its open directory, and its path.
struct ListedFile<'a> {
    dir: &'a DirHandle,
    name: &'a OsStr,
    path: &'a Path,
}

/// Reads `file` as `reading` says, after any operation of this process on
/// it has settled; `None` when it is gone.
fn read_file(
    file: &ListedFile<'_>,
    reading: Reading,
    buffer: &mut Vec<u8>,
) -> Result<Option<usize>, BeneathError> {
    let _turn = FileTurns::take(&[file.path]);
    let Some(opened) = file.dir.open_listed(file.name)? else {
        return Ok(None);
    };
    let read = match reading {
        Reading::Whole => read_into(opened, buffer, 0),
        Reading::Head { .. } => read_head(opened, buffer),
    };
    read.map(Some)
        .map_err(|e| BeneathError::io("read", file.path, e))
}

/// What `heads` gives for `file` in a listing at `now`: the parse it keeps
/// for the file, else the head it keeps (copied into `buffer`, with its
/// length), else the head read into `buffer` and offered to `heads`. What
/// is kept is served for the file's current stamp, or, in a directory
/// watched on `device`, without a stamp while no change to the file was
/// reported (see [`HeadCache::watching`]). `None` when the file is gone.
fn kept_head(
    heads: &HeadCache,
    file: &ListedFile<'_>,
    now: i64,
    device: Option<u64>,
    buffer: &mut Vec<u8>,
) -> Result<Option<(usize, Cached)>, BeneathError> {
    let path = file.path;
    if device.is_some()
        && let Some((stamp, served)) = heads.serve_watched(path, now, buffer)
    {
        return Ok(Some(cached(stamp, served)));
    }
    // Watched before its stamp is taken: a change after it is reported.
    let watched = device.filter(|_| heads.watch_note(path));
    // Not following a link: taken inside the open directory.
    let Some(stat) = file.dir.stat(file.name)? else {
        return Ok(None);
    };
    let stamp = Stamp::of(&stat);
    let found = match heads.serve(path, &stamp, now, buffer) {
        Some(served) => cached(stamp, served),
        None => {
            // The stamp was taken first: a file changed after it is read
            // under the old stamp, which no later `lstat` matches.
            let read_started = SystemTime::now();
            let Some(len) = read_file(file, Reading::Head { now }, buffer)? else {
                return Ok(None);
            };
            if heads.keeps_change_times(path, &stamp) {
                heads.put(path, stamp, &buffer[..len], read_started);
            }
            (len, Cached::Head { stamp, keep: true })
        }
    };
    if let Some(device) = watched {
        heads.trust(path, &stamp, device);
    }
    Ok(Some(found))
}

/// A listing's view of what a [`HeadCache`] served under `stamp`.
fn cached(stamp: Stamp, served: Served) -> (usize, Cached) {
    match served {
        Served::Meta(meta) => (0, Cached::Meta(meta)),
        Served::Head { len, parse_kept } => (
            len,
            Cached::Head {
                stamp,
                keep: !parse_kept,
            },
        ),
    }
}

/// Runs `push`, which adds rows to `rows`; when it fails, the rows it
/// added are taken back, so a home lists whole or not at all. A home's
/// rows go straight into the listing's one vector: a vector of its own,
/// appended after, would be each row's memory twice.
fn pushed_whole<R, E>(
    rows: &mut Vec<R>,
    push: impl FnOnce(&mut Vec<R>) -> Result<(), E>,
) -> Result<(), E> {
    let start = rows.len();
    let pushed = push(rows);
    if pushed.is_err() {
        rows.truncate(start);
    }
    pushed
}

/// Sorts `rows` stably by `compare`. The order is found on indices, then
/// the rows are put in it where they stand, one cycle of the permutation
/// at a time: rows are large, a sort of the rows themselves moves each of
/// them many times, and a second vector of them is fresh memory to fault
/// in.
fn sort_rows<R>(rows: &mut [R], mut compare: impl FnMut(&R, &R) -> Ordering) {
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by(|&a, &b| compare(&rows[a], &rows[b]));
    // `order[at]` is where the row that belongs at `at` stood; a position
    // done points at itself.
    for start in 0..rows.len() {
        let mut at = start;
        while order[at] != start {
            let from = order[at];
            rows.swap(at, from);
            order[at] = at;
            at = from;
        }
        order[at] = at;
    }
}

/// `list` order: `updatedAt` descending, ties by address.
fn recent_first(a: (&NoteMeta, &NoteLocation), b: (&NoteMeta, &NoteLocation)) -> Ordering {
    b.0.updated_at
        .cmp(&a.0.updated_at)
        .then_with(|| a.1.address.cmp(&b.1.address))
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;
    use std::sync::Mutex;
    use std::thread::ThreadId;
    use std::time::{Duration, Instant};

    use super::*;

    #[test]
    fn a_home_that_fails_takes_back_the_rows_it_added() {
        let mut rows = vec![1, 2];
        let failed = pushed_whole(&mut rows, |rows| {
            rows.extend([3, 4]);
            Err("unreadable")
        });
        assert_eq!((failed, &rows[..]), (Err("unreadable"), &[1, 2][..]));
        let listed = pushed_whole(&mut rows, |rows| {
            rows.push(5);
            Ok::<(), &str>(())
        });
        assert_eq!((listed, &rows[..]), (Ok(()), &[1, 2, 5][..]));
    }

    proptest::proptest! {
        /// Rows sorted where they stand are the rows a stable sort gives:
        /// each row once, equal keys in the order they came.
        #[test]
        fn rows_sort_as_a_stable_sort_does(keys in proptest::collection::vec(0u8..6, 0..300)) {
            let mut rows: Vec<(u8, usize)> = keys.into_iter().zip(0..).collect();
            let mut expected = rows.clone();
            expected.sort_by_key(|row| row.0);
            sort_rows(&mut rows, |a, b| a.0.cmp(&b.0));
            proptest::prop_assert_eq!(rows, expected);
        }
    }

    #[test]
    fn a_directory_s_files_are_taken_a_unit_at_a_time() {
        // Directories of 5, 40 (more than a unit), 3, 1 and 32 files.
        let groups: Vec<usize> = [(7, 5), (3, 40), (9, 3), (7, 1), (4, READ_UNIT)]
            .iter()
            .flat_map(|&(group, count)| std::iter::repeat_n(group, count))
            .collect();
        assert_eq!(
            read_units(&groups, |&group| group),
            [(0, 5), (5, 37), (37, 45), (45, 48), (48, 49), (49, 81)]
        );
        assert_eq!(read_units(&[] as &[usize], |&group| group), []);
        assert_eq!(read_units(&[1], |&group| group), [(0, 1)]);
    }

    #[test]
    fn a_listing_is_read_on_threads_from_its_threshold_on() {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        assert_eq!(readers_for(0), 1);
        assert_eq!(readers_for(PARALLEL_MIN_FILES - 1), 1);
        assert_eq!(readers_for(PARALLEL_MIN_FILES), cores.min(MAX_READERS));
        assert_eq!(readers_for(100_000), cores.min(MAX_READERS));
    }

    /// `read_all` over `count` files whose reads each give their own index
    /// (the odd ones nothing) and name the thread that read them. With
    /// `meet`, a thread's first read waits (at most ten seconds) until a
    /// second thread has read a file.
    fn read_by_threads(count: usize, meet: bool) -> (Vec<(usize, usize)>, HashSet<ThreadId>) {
        let files: Vec<usize> = (0..count).collect();
        let threads = Mutex::new(HashSet::new());
        let read = read_all(
            &files,
            |&file| file / 10,
            |&file, waited: &mut bool, _: &mut ReadBuffers| {
                threads
                    .lock()
                    .expect("threads")
                    .insert(std::thread::current().id());
                if meet && !std::mem::replace(waited, true) {
                    let until = Instant::now() + Duration::from_secs(10);
                    while threads.lock().expect("threads").len() < 2 && Instant::now() < until {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                }
                (file % 2 == 0).then_some(file)
            },
        );
        (read, threads.into_inner().expect("threads"))
    }

    #[test]
    fn files_are_read_in_order_on_the_caller_below_the_threshold_and_on_more_threads_from_it() {
        let evens = |count: usize| -> Vec<(usize, usize)> {
            (0..count).step_by(2).map(|file| (file, file)).collect()
        };
        let (read, threads) = read_by_threads(PARALLEL_MIN_FILES - 1, false);
        assert_eq!(read, evens(PARALLEL_MIN_FILES - 1));
        assert_eq!(threads, HashSet::from([std::thread::current().id()]));

        let readers = readers_for(PARALLEL_MIN_FILES);
        let (read, threads) = read_by_threads(PARALLEL_MIN_FILES, readers > 1);
        assert_eq!(read, evens(PARALLEL_MIN_FILES));
        if readers > 1 {
            assert!(
                (2..=readers).contains(&threads.len()),
                "{} threads read the files, not 2 to {readers}",
                threads.len()
            );
        } else {
            assert_eq!(threads, HashSet::from([std::thread::current().id()]));
        }
    }
}
