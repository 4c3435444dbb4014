//! Kept note heads: a long-lived host (an MCP server, a sidecar) lists the
//! same notes call after call, and reading every file's head each time is
//! what a listing costs. [`HeadCache`] keeps each file's settled head (the
//! prefix [`read_head`](super::files::read_head) returns) under the file's
//! stamp, so an unchanged note costs one `lstat` instead of an open, a read
//! and a close.
//!
//! A head's parsed metadata is kept beside it once a listing has parsed it
//! ([`KeptMeta`]), but parsing depends on the time of the call (missing
//! times default to now) and on the store's time zone: the times that are
//! the call's are marked and set to each call's time, and a parse that
//! depends on the zone (a time without offset) is never kept. A saved cache
//! keeps the bytes only.
//!
//! A kept head is served only while the file's stamp (device, inode, length,
//! modification and change times) is the one it was read under. A file
//! rewritten within the filesystem's timestamp tick, to the same length and
//! in place, would keep its stamp; so a head is kept only when the file's
//! change time is at least [`HeadCache::DEFAULT_SETTLE`] older than the start
//! of its read (the rule Git applies to "racily clean" index entries). A
//! note written moments ago is read again until it has settled.
//!
//! A saved cache (one process saves it, the next loads it: Claude Code's
//! hooks) is a cache, never a source: each entry is sealed (`seal.rs`: an
//! HMAC under a key only the user can read) over its path, its stamp and its
//! head, and a loaded entry is served only once its seal verifies and its
//! stamp, change time included, is the file's now. A crafted, damaged or
//! stale entry is dropped and the note read; a saved cache can make a
//! listing faster, never different.

use std::collections::HashMap;
use std::ffi::OsString;
use std::hash::{BuildHasher, Hasher};
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::Path;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use jiff::tz::TimeZone;

use crate::notes::beneath::FileStat;
use crate::notes::frontmatter::{NoteMeta, SplitNote};
use crate::notes::time::since_epoch;
use crate::plumbing::{Links, open_regular};

use super::forget::{Forget, is_at_or_below};
use super::seal::{Seal, SealKey};
#[cfg(target_os = "linux")]
use super::watch::LOCAL_FILESYSTEMS;
use super::watch::Watcher;

/// What identifies one version of a file on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Stamp {
    dev: u64,
    ino: u64,
    len: u64,
    modified: (i64, i64),
    changed: (i64, i64),
}

impl Stamp {
    /// The stamp of `stat` (from `lstat`). Without change times or inodes
    /// (off unix), the modification time stands in for the change time.
    pub(super) fn of(stat: &FileStat) -> Stamp {
        Stamp {
            dev: stat.dev,
            ino: stat.ino,
            len: stat.len,
            modified: stat.modified,
            changed: stat.changed,
        }
    }

    /// The change time as seconds and nanoseconds since the epoch.
    fn changed_at(&self) -> (i64, i64) {
        self.changed
    }
}

/// One kept head.
#[derive(Debug)]
struct Kept {
    stamp: Stamp,
    head: Box<[u8]>,
    /// Its metadata, once a listing parsed it (see
    /// [`HeadCache::keep_meta`]); boxed, as most loaded heads have none
    /// and each entry of the table is as large as its largest.
    meta: Option<Box<KeptMeta>>,
    /// Served without a stamp check: the file and its directory are
    /// watched, and no change was reported since the stamp matched (see
    /// [`HeadCache::watching`]).
    watched: bool,
    /// Where its seal stands (see [`HeadCache::load`]).
    sealed: Sealed,
}

/// Where a kept head's seal stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sealed {
    /// Read by this process and not saved yet: sealed by the next save.
    No,
    /// Loaded from a saved cache and not yet verified: served only once it
    /// verifies.
    Unproven(Seal),
    /// Verified, or made by a save, under [`Heads::proven_under`]: saved
    /// again as it is while that key is the key (an entry's path, stamp and
    /// head never change; a new read replaces the entry).
    Proven(Seal),
}

/// A head's metadata as a listing keeps it: the parse, unless it depends
/// on the time zone, with the times that are the time of the call (missing
/// or unreadable in the text) marked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct KeptMeta {
    /// `None`: the metadata depends on the zone; every listing parses it.
    meta: Option<NoteMeta>,
    /// Which of `createdAt`, `updatedAt`, `lastAccessed` and `crumpledAt`
    /// are the time of the call.
    clock: [bool; 4],
}

impl KeptMeta {
    /// Parses `head` at `now` in `tz`, and what a cache may keep of it: the
    /// parse with the times that are the call's marked, unless a time
    /// depends on the zone.
    pub(super) fn parse(head: &SplitNote<'_>, now: i64, tz: &TimeZone) -> (NoteMeta, KeptMeta) {
        let (meta, inputs) = head.meta_and_inputs(now, tz);
        let kept = if inputs.zone.contains(&true) {
            KeptMeta {
                meta: None,
                clock: [false; 4],
            }
        } else {
            KeptMeta {
                meta: Some(meta.clone()),
                clock: inputs.clock,
            }
        };
        (meta, kept)
    }

    /// The metadata as a parse at `now` gives it; `None` when every
    /// listing parses it.
    pub(super) fn at(&self, now: i64) -> Option<NoteMeta> {
        let mut meta = self.meta.clone()?;
        let [created, updated, accessed, crumpled] = self.clock;
        if created {
            meta.created_at = now;
        }
        if updated {
            meta.updated_at = now;
        }
        if accessed {
            meta.last_accessed = now;
        }
        if crumpled {
            meta.crumpled_at = Some(now);
        }
        Some(meta)
    }
}

/// Note heads kept between listings, for a long-lived host. Shared by every
/// store of the process that is handed it
/// ([`NoteStore::with_head_cache`](super::NoteStore::with_head_cache)).
///
/// A head is served only while its file's stamp (device, inode, length,
/// modification and change times) is the one it was read under, and kept
/// only when the file's change time lies at least the settle time
/// ([`Self::DEFAULT_SETTLE`]) before its read started: a file rewritten in
/// place within one timestamp tick to the same length keeps its stamp, so a
/// note changed moments ago is read again until it has settled. A head's
/// parsed metadata is kept too, with the times that are the call's marked;
/// a parse that depends on the time zone is not kept.
#[derive(Debug)]
pub struct HeadCache {
    kept: Mutex<Heads>,
    settle: Duration,
    /// The key the heads of a loaded cache are sealed with.
    seal_key: Option<SealKey>,
}

/// The kept heads by the bytes of their path, and whether any changed since
/// the cache was made or loaded (a saved cache is written again only then).
#[derive(Debug, Default)]
struct Heads {
    by_path: HashMap<OsString, Kept, PathHashing>,
    changed: bool,
    /// The key the [`Sealed::Proven`] seals are under.
    proven_under: Option<SealKey>,
    /// Change notification, for a cache made [`HeadCache::watching`].
    watcher: Option<Watcher>,
    /// Per device, whether its filesystem keeps a change time no user can
    /// set (see [`HeadCache::keeps_change_times`]).
    devices: HashMap<u64, bool>,
}

impl Heads {
    /// Stops serving what `forget` names without a stamp check.
    fn forget(&mut self, forget: Vec<Forget>) {
        for forget in forget {
            match forget {
                Forget::Path(path) => {
                    if let Some(kept) = self.by_path.get_mut(&path) {
                        kept.watched = false;
                    }
                }
                Forget::Below(dir) => {
                    for (path, kept) in &mut self.by_path {
                        if kept.watched && is_at_or_below(path, &dir) {
                            kept.watched = false;
                        }
                    }
                }
                Forget::All => {
                    for kept in self.by_path.values_mut() {
                        kept.watched = false;
                    }
                }
            }
        }
    }
}

/// What [`HeadCache::serve`] found for a file's current stamp.
#[derive(Debug, PartialEq)]
pub(super) enum Served {
    /// The kept parse, at the time of the call (the head was not copied).
    Meta(NoteMeta),
    /// The head, copied into the buffer (this long); `parse_kept` when a
    /// parse is kept already (one that depends on the zone, so every
    /// listing parses it again), else the listing's parse is offered to
    /// [`HeadCache::keep_meta`].
    Head { len: usize, parse_kept: bool },
}

/// Hashing of kept paths: a word at a time, with a seed drawn per cache and
/// a final mix (the standard SipHash over a path's components cost more
/// than the rest of a kept note's lookup).
#[derive(Debug, Clone, Copy)]
struct PathHashing {
    seed: u64,
}

impl Default for PathHashing {
    fn default() -> Self {
        PathHashing {
            seed: std::hash::RandomState::new().hash_one(0x6e6f_7465_736f_7570_u64),
        }
    }
}

impl BuildHasher for PathHashing {
    type Hasher = PathHasher;

    fn build_hasher(&self) -> PathHasher {
        PathHasher(self.seed)
    }
}

/// The hasher of [`PathHashing`].
#[derive(Debug)]
struct PathHasher(u64);

impl PathHasher {
    const MULTIPLIER: u64 = 0x9e37_79b9_7f4a_7c15;

    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(23) ^ word).wrapping_mul(Self::MULTIPLIER);
    }
}

impl Hasher for PathHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for word in &mut words {
            let mut le = [0; 8];
            le.copy_from_slice(word);
            self.add(u64::from_le_bytes(le));
        }
        let rest = words.remainder();
        let mut last = [0; 8];
        last[..rest.len()].copy_from_slice(rest);
        // The length tells a short tail from zero bytes.
        self.add(u64::from_le_bytes(last) ^ ((bytes.len() as u64) << 56));
    }

    fn write_u8(&mut self, byte: u8) {
        self.add(u64::from(byte));
    }

    fn write_usize(&mut self, word: usize) {
        self.add(word as u64);
    }

    fn finish(&self) -> u64 {
        // The SplitMix64 finalizer: every input bit reaches the top bits
        // (the table's control bytes) and the bottom ones (its buckets).
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

impl Default for HeadCache {
    fn default() -> Self {
        HeadCache::new()
    }
}

impl HeadCache {
    /// How long a file's change time must lie before the start of its read
    /// for its head to be kept: far longer than any filesystem's timestamp
    /// tick.
    pub const DEFAULT_SETTLE: Duration = Duration::from_secs(2);
    /// The most heads kept; past it the cache starts again empty (a store
    /// that large still lists, at the uncached cost).
    pub const MAX_ENTRIES: usize = 50_000;
    /// The longest head kept: a frontmatter block past a page is read each
    /// time (such a head may be a whole note).
    pub const MAX_HEAD_BYTES: usize = 4096;

    /// An empty cache with [`Self::DEFAULT_SETTLE`].
    pub fn new() -> HeadCache {
        HeadCache::with_settle(Self::DEFAULT_SETTLE)
    }

    /// An empty cache keeping heads whose change time lies at least
    /// `settle` before their read (tests use zero to keep every head).
    pub fn with_settle(settle: Duration) -> HeadCache {
        HeadCache {
            kept: Mutex::new(Heads::default()),
            settle,
            seal_key: None,
        }
    }

    /// The same cache with change notification where the system has it
    /// (Linux): a head is then served without asking for its file's stamp
    /// while the kernel reports no change to the file or to any directory
    /// on its path below the listed home, and every listing still checks
    /// that each directory's path leads to the directory watched. A queue
    /// that overflowed forgets every watch, and a directory on a
    /// filesystem that may change without reports (network, user-space,
    /// overlay) is checked by stamp as before. For a long-lived host; a
    /// short-lived one would watch for nothing.
    pub fn watching(self) -> HeadCache {
        self.lock().watcher = Watcher::new();
        self
    }

    /// How many kept heads are served on change notification (see
    /// [`Self::watching`]) rather than checked by stamp.
    pub fn watched_heads(&self) -> usize {
        self.lock()
            .by_path
            .values()
            .filter(|kept| kept.watched)
            .count()
    }

    /// How many heads are kept.
    pub fn len(&self) -> usize {
        self.lock().by_path.len()
    }

    /// Whether no head is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many kept heads keep a parse that later listings serve (a parse
    /// that depends on the zone is kept as "parse again", and not counted).
    pub fn kept_parses(&self) -> usize {
        self.lock()
            .by_path
            .values()
            .filter(|kept| kept.meta.as_ref().is_some_and(|meta| meta.meta.is_some()))
            .count()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Heads> {
        // A panic elsewhere cannot leave a half-written entry: every
        // change is one insert or one clear.
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Copies the head kept for `path` under `stamp` into `buffer` and
    /// returns its length, with its metadata when that is kept too; `None`
    /// when no head is kept for this version.
    #[cfg(test)]
    fn get(
        &self,
        path: &Path,
        stamp: &Stamp,
        buffer: &mut Vec<u8>,
    ) -> Option<(usize, Option<KeptMeta>)> {
        let kept = self.lock();
        let found = kept
            .by_path
            .get(path.as_os_str())
            .filter(|kept| kept.stamp == *stamp)?;
        copy_head(&found.head, buffer);
        Some((found.head.len(), found.meta.as_deref().cloned()))
    }

    /// What is kept for `path` under `stamp`, for a listing at `now`: the
    /// kept parse at `now` when there is one that does not depend on the
    /// zone, else the head copied into `buffer`; `None` when no head is
    /// kept for this version.
    pub(super) fn serve(
        &self,
        path: &Path,
        stamp: &Stamp,
        now: i64,
        buffer: &mut Vec<u8>,
    ) -> Option<Served> {
        let mut kept = self.lock();
        let found = kept
            .by_path
            .get_mut(path.as_os_str())
            .filter(|kept| kept.stamp == *stamp)?;
        if let Sealed::Unproven(seal) = found.sealed {
            // A saved head: served only when its seal proves this process's
            // kind wrote it from the file under this very stamp.
            let proven = self
                .seal_key
                .as_ref()
                .is_some_and(|key| verifies(key, path.as_os_str(), found, &seal));
            if !proven {
                kept.by_path.remove(path.as_os_str());
                kept.changed = true;
                return None;
            }
            found.sealed = Sealed::Proven(seal);
        }
        Some(found.serve(now, buffer))
    }

    /// [`Self::serve`] without a stamp: what is kept for `path`, with the
    /// stamp it is kept under, when nothing was reported to change it since
    /// its stamp matched (see [`Self::watching`]).
    pub(super) fn serve_watched(
        &self,
        path: &Path,
        now: i64,
        buffer: &mut Vec<u8>,
    ) -> Option<(Stamp, Served)> {
        let kept = self.lock();
        let found = kept
            .by_path
            .get(path.as_os_str())
            .filter(|kept| kept.watched)?;
        Some((found.stamp, found.serve(now, buffer)))
    }

    /// Reads the change reports queued since the last listing, and stops
    /// serving without a stamp check what they may have changed. The first
    /// step of a listing.
    pub(super) fn begin_listing(&self) {
        let mut heads = self.lock();
        let mut forget = Vec::new();
        if let Some(watcher) = heads.watcher.as_mut() {
            watcher.drain(&mut forget);
        }
        heads.forget(forget);
    }

    /// Watches the directory `dir` before a listing reads it; its device
    /// when it is watched (see [`Self::watching`]).
    pub(super) fn watch_dir(&self, dir: &Path) -> Option<u64> {
        let mut heads = self.lock();
        let mut forget = Vec::new();
        let device = heads.watcher.as_mut()?.watch_dir(dir, &mut forget);
        heads.forget(forget);
        device
    }

    /// Watches the note at `path`, before its stamp is taken; whether it is
    /// watched.
    pub(super) fn watch_note(&self, path: &Path) -> bool {
        self.lock()
            .watcher
            .as_mut()
            .is_some_and(|watcher| watcher.watch_note(path))
    }

    /// Serves the head kept for `path` under `stamp` without a stamp check
    /// from now on, until a change is reported: the note and its directory
    /// (on `device`) were watched before `stamp` was taken.
    pub(super) fn trust(&self, path: &Path, stamp: &Stamp, device: u64) {
        if stamp.dev != device {
            // Another filesystem mounted on the note: its own watch rules.
            return;
        }
        if let Some(kept) = self
            .lock()
            .by_path
            .get_mut(path.as_os_str())
            .filter(|kept| kept.stamp == *stamp)
        {
            kept.watched = true;
        }
    }

    /// How many watches are in place (directories and notes).
    pub fn watches(&self) -> usize {
        self.lock().watcher.as_ref().map_or(0, Watcher::watches)
    }

    /// Keeps `meta` ([`KeptMeta::parse`]) beside the head kept for `path`
    /// under `stamp`. In memory only (a saved cache keeps heads).
    pub(super) fn keep_meta(&self, path: &Path, stamp: &Stamp, meta: KeptMeta) {
        if let Some(kept) = self
            .lock()
            .by_path
            .get_mut(path.as_os_str())
            .filter(|kept| kept.stamp == *stamp)
        {
            kept.meta = Some(Box::new(meta));
        }
    }

    /// Whether heads of files on the device of `stamp` (the filesystem
    /// holding `path`) may be kept at all: only where the filesystem keeps a
    /// change time that every write moves and no user can set back (ext4,
    /// XFS, Btrfs, tmpfs, F2FS, ZFS, bcachefs, overlays of them, NFS). FAT
    /// has none (its "change time" is the modification time, which anyone
    /// can put back), and a user-space filesystem may report anything: there
    /// an edit in place to the same length with its times put back would
    /// keep its stamp, so every head is read at every listing. Asked once
    /// per device.
    pub(super) fn keeps_change_times(&self, path: &Path, stamp: &Stamp) -> bool {
        if let Some(known) = self.lock().devices.get(&stamp.dev) {
            return *known;
        }
        let Some(kept) = filesystem_keeps_change_times(path) else {
            return false;
        };
        self.lock().devices.insert(stamp.dev, kept);
        kept
    }

    /// Keeps `head`, read from `path` under `stamp` by a read that started
    /// at `read_started`, when the file had settled by then and the head is
    /// short; otherwise forgets any head kept for `path`.
    pub(super) fn put(&self, path: &Path, stamp: Stamp, head: &[u8], read_started: SystemTime) {
        let mut kept = self.lock();
        if head.len() > Self::MAX_HEAD_BYTES || !self.settled(&stamp, read_started) {
            if kept.by_path.remove(path.as_os_str()).is_some() {
                kept.changed = true;
            }
            return;
        }
        if kept.by_path.len() >= Self::MAX_ENTRIES && !kept.by_path.contains_key(path.as_os_str()) {
            kept.by_path.clear();
        }
        kept.by_path.insert(
            path.as_os_str().to_owned(),
            Kept {
                stamp,
                head: head.into(),
                meta: None,
                watched: false,
                sealed: Sealed::No,
            },
        );
        kept.changed = true;
    }

    /// The heads saved at `path` by [`Self::save`], for a short-lived
    /// process (a hook) that lists the same notes as the one before it. A
    /// missing, unreadable or malformed file, one larger than
    /// [`Self::MAX_SAVED_BYTES`], or one beside no usable seal key (see
    /// `seal.rs`) gives an empty cache. A loaded head is served only once
    /// its seal verifies and only for its file's current stamp (change
    /// time included); one that fails either is dropped and the note read.
    /// So a saved cache can make a listing faster, never different, and no
    /// text in it reaches a listing unless a notesoup process read it from
    /// the note as the note is now.
    pub fn load(path: &Path) -> HeadCache {
        let mut cache = HeadCache::new();
        let dir = path.parent().unwrap_or(Path::new("."));
        let Some(key) = SealKey::load(dir) else {
            return cache;
        };
        if let Some(by_path) = read_saved(path, Self::MAX_SAVED_BYTES) {
            let mut heads = cache.lock();
            heads.by_path = by_path;
            heads.proven_under = Some(key.clone());
            drop(heads);
            cache.seal_key = Some(key);
        }
        cache
    }

    /// Saves the heads to `path` for [`Self::load`], when any changed since
    /// this cache was made or loaded, each sealed under the key beside it
    /// (made when there is none): written to a new temporary file beside it
    /// (never through a link planted there) and renamed over it, so a
    /// reader sees the old file or the new one. Not flushed to disk: a
    /// cache lost in a crash is only read again. Heads loaded and not yet
    /// proven are saved with the seal they came with.
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        let dir = path.parent().unwrap_or(Path::new("."));
        if !self.lock().changed {
            return Ok(());
        }
        std::fs::create_dir_all(dir)?;
        let key = SealKey::load_or_make(dir)?;
        let mut heads = self.lock();
        // Seals proven under another key (the file replaced since) are
        // made again.
        let reseal = heads.proven_under.as_ref() != Some(&key);
        // Written as it is encoded: a whole file in memory is as many
        // fresh pages to fault in.
        let written = crate::durable::replace_unsynced_with(path, |file| {
            let mut out = BufWriter::with_capacity(FILE_BUFFER, file);
            encode(&mut heads.by_path, &key, reseal, &mut out)?;
            out.flush()
        });
        heads.proven_under = Some(key);
        if written.is_ok() {
            heads.changed = false;
        }
        written
    }

    /// The largest saved cache [`Self::load`] reads.
    pub const MAX_SAVED_BYTES: u64 = 64 * 1024 * 1024;

    /// How a saved cache's file name ends: with its format's version, so
    /// processes of two notesoup versions that share a cache directory
    /// (a host upgraded before another) each keep a file of their own,
    /// where each would refuse and list again the other's at every boot.
    pub(crate) const SAVED_EXTENSION: &'static str = "v3.bin";

    /// Whether the file's last change lies at least `settle` before
    /// `read_started`.
    fn settled(&self, stamp: &Stamp, read_started: SystemTime) -> bool {
        let Some(limit) = read_started.checked_sub(self.settle) else {
            return false;
        };
        stamp.changed_at() <= since_epoch(limit)
    }
}

/// Filesystems beyond the [`LOCAL_FILESYSTEMS`] whose change time every
/// write moves and no user can set: overlayfs (the change time of the
/// layer's own filesystem) and NFS (the server's). The local ones (ext2/3/4,
/// XFS, Btrfs, tmpfs, F2FS, ZFS, bcachefs) keep it too.
#[cfg(target_os = "linux")]
const LAYERED_AND_REMOTE_FILESYSTEMS: [i128; 2] = [0x794C_7630, 0x6969];

/// Whether the filesystem holding `path` is one of the
/// [`LOCAL_FILESYSTEMS`] or the [`LAYERED_AND_REMOTE_FILESYSTEMS`]; `None`
/// when it cannot be asked.
#[cfg(target_os = "linux")]
fn filesystem_keeps_change_times(path: &Path) -> Option<bool> {
    let fs = rustix::fs::statfs(path).ok()?;
    let kind = i128::from(fs.f_type);
    Some(LOCAL_FILESYSTEMS.contains(&kind) || LAYERED_AND_REMOTE_FILESYSTEMS.contains(&kind))
}

/// Elsewhere the system's change time is trusted as it is.
#[cfg(not(target_os = "linux"))]
fn filesystem_keeps_change_times(_: &Path) -> Option<bool> {
    Some(cfg!(unix))
}

impl Kept {
    /// The kept parse at `now` when there is one that does not depend on
    /// the zone, else the head copied into `buffer`.
    fn serve(&self, now: i64, buffer: &mut Vec<u8>) -> Served {
        if let Some(meta) = self.meta.as_ref().and_then(|meta| meta.at(now)) {
            return Served::Meta(meta);
        }
        copy_head(&self.head, buffer);
        Served::Head {
            len: self.head.len(),
            parse_kept: self.meta.is_some(),
        }
    }
}

/// Copies `head` to the start of `buffer`, growing it when it is shorter.
fn copy_head(head: &[u8], buffer: &mut Vec<u8>) {
    if buffer.len() < head.len() {
        buffer.resize(head.len(), 0);
    }
    buffer[..head.len()].copy_from_slice(head);
}

/// The first bytes of a saved cache.
const MAGIC: &[u8] = b"notesoup note heads 3\n";
/// The buffer a saved cache is read and written through.
const FILE_BUFFER: usize = 64 * 1024;
/// The longest path a saved cache holds.
const MAX_SAVED_PATH: usize = 4096;

/// The stamp's numbers as a saved cache writes them (little-endian).
fn stamp_words(stamp: &Stamp) -> [[u8; 8]; 7] {
    [
        stamp.dev.to_le_bytes(),
        stamp.ino.to_le_bytes(),
        stamp.len.to_le_bytes(),
        stamp.modified.0.to_le_bytes(),
        stamp.modified.1.to_le_bytes(),
        stamp.changed.0.to_le_bytes(),
        stamp.changed.1.to_le_bytes(),
    ]
}

/// The stamp [`stamp_words`] wrote, its words read back to back.
#[cfg(unix)]
fn stamp_of_words(bytes: [u8; 7 * 8]) -> Stamp {
    let (words, _) = bytes.as_chunks::<8>();
    let word = |at: usize| words[at];
    let [dev, ino, len] = [word(0), word(1), word(2)].map(u64::from_le_bytes);
    let [m_s, m_ns, c_s, c_ns] = [word(3), word(4), word(5), word(6)].map(i64::from_le_bytes);
    Stamp {
        dev,
        ino,
        len,
        modified: (m_s, m_ns),
        changed: (c_s, c_ns),
    }
}

/// What a seal covers: the entry as saved (path, stamp, head), lengths
/// included, so no byte can move from one field to another.
fn sealed_parts<'a>(
    path: &'a [u8],
    path_len: &'a [u8; 4],
    words: &'a [[u8; 8]; 7],
    head_len: &'a [u8; 4],
    head: &'a [u8],
) -> [&'a [u8]; 11] {
    [
        path_len, path, &words[0], &words[1], &words[2], &words[3], &words[4], &words[5],
        &words[6], head_len, head,
    ]
}

/// Whether `seal` is the seal of `kept`, kept for `path`, under `key`.
#[cfg(unix)]
fn verifies(key: &SealKey, path: &std::ffi::OsStr, kept: &Kept, seal: &Seal) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let path = path.as_bytes();
    let (Ok(path_len), Ok(head_len)) = (u32::try_from(path.len()), u32::try_from(kept.head.len()))
    else {
        return false;
    };
    let words = stamp_words(&kept.stamp);
    let (path_len, head_len) = (path_len.to_le_bytes(), head_len.to_le_bytes());
    key.verifies(
        &sealed_parts(path, &path_len, &words, &head_len, &kept.head),
        seal,
    )
}

#[cfg(not(unix))]
fn verifies(_: &SealKey, _: &std::ffi::OsStr, _: &Kept, _: &Seal) -> bool {
    false
}

/// A saved cache: [`MAGIC`], the number of heads (32 bits, so a load
/// sizes its table once), then per head its path (length, bytes), its
/// stamp (device, inode, length, modification and change times as seconds
/// and nanoseconds), its bytes (length, bytes) and its seal (20 bytes);
/// numbers are little-endian, lengths 32 bits, the rest 64. A head read by
/// this process is sealed under `key` and keeps the seal for the next save,
/// as is one proven under another key when `reseal`; one loaded and not yet
/// proven keeps the seal it came with (it is never sealed anew).
#[cfg(unix)]
fn encode(
    by_path: &mut HashMap<OsString, Kept, PathHashing>,
    key: &SealKey,
    reseal: bool,
    out: &mut impl Write,
) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let saved = |path: &OsString| path.len() <= MAX_SAVED_PATH;
    // At most `HeadCache::MAX_ENTRIES`.
    let count = by_path.keys().filter(|path| saved(path)).count() as u32;
    out.write_all(MAGIC)?;
    out.write_all(&count.to_le_bytes())?;
    for (path, kept) in by_path {
        if !saved(path) {
            continue;
        }
        let path = path.as_bytes();
        // Paths are at most MAX_SAVED_PATH long, heads MAX_HEAD_BYTES.
        let head_len = (kept.head.len() as u32).to_le_bytes();
        let path_len = (path.len() as u32).to_le_bytes();
        let words = stamp_words(&kept.stamp);
        let parts = sealed_parts(path, &path_len, &words, &head_len, &kept.head);
        let seal = match kept.sealed {
            Sealed::Unproven(seal) => seal,
            Sealed::Proven(seal) if !reseal => seal,
            Sealed::Proven(_) | Sealed::No => key.seal(&parts),
        };
        for part in parts {
            out.write_all(part)?;
        }
        out.write_all(&seal)?;
        if !matches!(kept.sealed, Sealed::Unproven(_)) {
            kept.sealed = Sealed::Proven(seal);
        }
    }
    Ok(())
}

#[cfg(not(unix))]
fn encode(
    _: &mut HashMap<OsString, Kept, PathHashing>,
    _: &SealKey,
    _: bool,
    out: &mut impl Write,
) -> io::Result<()> {
    out.write_all(MAGIC)
}

/// The heads of a saved cache, or `None` when it cannot be read whole. The
/// file is notesoup's own: a link, FIFO or device under its name is not
/// read (nor waited on); the next save replaces it. Decoded as it is read:
/// the heads are the only copy made of its bytes. A file over `max` bytes
/// is no cache.
fn read_saved(path: &Path, max: u64) -> Option<HashMap<OsString, Kept, PathHashing>> {
    let file = open_regular(path, Links::Refuse).ok()??;
    if file.metadata().ok()?.len() > max {
        return None;
    }
    // The file may grow between the stat and the read: `take` still bounds
    // the read.
    let read = file.take(max);
    decode(BufReader::with_capacity(FILE_BUFFER, read))
}

/// Reads [`encode`]'s format back, every head still to be proven by its
/// seal; `None` at the first thing out of place.
#[cfg(unix)]
fn decode(mut input: impl Read) -> Option<HashMap<OsString, Kept, PathHashing>> {
    use std::os::unix::ffi::OsStringExt;
    if read_array::<{ MAGIC.len() }>(&mut input)? != MAGIC {
        return None;
    }
    let count = u32::from_le_bytes(read_array(&mut input)?) as usize;
    if count > HeadCache::MAX_ENTRIES {
        return None;
    }
    let mut by_path = HashMap::with_capacity_and_hasher(count, PathHashing::default());
    for _ in 0..count {
        let len = u32::from_le_bytes(read_array(&mut input)?) as usize;
        if len > MAX_SAVED_PATH {
            return None;
        }
        let path = OsString::from_vec(read_vec(&mut input, len)?);
        let stamp = stamp_of_words(read_array(&mut input)?);
        let head_len = u32::from_le_bytes(read_array(&mut input)?) as usize;
        // A head is a prefix of its file.
        if head_len > HeadCache::MAX_HEAD_BYTES || head_len as u64 > stamp.len {
            return None;
        }
        let head = read_vec(&mut input, head_len)?.into_boxed_slice();
        let seal: Seal = read_array(&mut input)?;
        by_path.insert(
            path,
            Kept {
                stamp,
                head,
                meta: None,
                watched: false,
                sealed: Sealed::Unproven(seal),
            },
        );
    }
    // Nothing after the last head.
    if !matches!(input.read(&mut [0]), Ok(0)) {
        return None;
    }
    Some(by_path)
}

#[cfg(not(unix))]
fn decode(_: impl Read) -> Option<HashMap<OsString, Kept, PathHashing>> {
    None
}

/// The next `N` bytes of `input`; `None` when it ends first or fails.
#[cfg(unix)]
fn read_array<const N: usize>(input: &mut impl Read) -> Option<[u8; N]> {
    let mut bytes = [0; N];
    input.read_exact(&mut bytes).ok()?;
    Some(bytes)
}

/// The next `len` bytes of `input`; `None` when it ends first or fails.
#[cfg(unix)]
fn read_vec(input: &mut impl Read, len: usize) -> Option<Vec<u8>> {
    let mut bytes = vec![0; len];
    input.read_exact(&mut bytes).ok()?;
    Some(bytes)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

    use super::super::seal::SEAL_BYTES;
    use super::*;

    fn stamp(len: u64, changed: (i64, i64)) -> Stamp {
        Stamp {
            dev: 1,
            ino: 2,
            len,
            modified: changed,
            changed,
        }
    }

    fn at(secs: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(secs)
    }

    fn get(cache: &HeadCache, path: &str, stamp: &Stamp) -> Option<Vec<u8>> {
        let mut buffer = Vec::new();
        let (len, _) = cache.get(Path::new(path), stamp, &mut buffer)?;
        Some(buffer[..len].to_vec())
    }

    /// The head `cache` serves for `path` under `stamp`: a loaded head only
    /// once its seal verifies.
    fn served(cache: &HeadCache, path: &str, stamp: &Stamp) -> Option<Vec<u8>> {
        let mut buffer = Vec::new();
        let served = cache.serve(Path::new(path), stamp, 0, &mut buffer)?;
        served_head(served, &buffer)
    }

    /// The head `served` copied into `buffer`; `None` for a kept parse.
    fn served_head(served: Served, buffer: &[u8]) -> Option<Vec<u8>> {
        match served {
            Served::Head { len, .. } => Some(buffer[..len].to_vec()),
            Served::Meta(_) => None,
        }
    }

    #[test]
    fn a_settled_head_is_served_for_its_stamp_only() {
        let cache = HeadCache::new();
        let old = stamp(10, (100, 0));
        cache.put(Path::new("/n/a.md"), old, b"---\na: 1\n", at(102));
        assert_eq!(
            get(&cache, "/n/a.md", &old).as_deref(),
            Some(&b"---\na: 1\n"[..])
        );
        assert_eq!(cache.len(), 1);
        for changed in [
            stamp(11, (100, 0)),
            stamp(10, (100, 1)),
            Stamp { ino: 3, ..old },
            Stamp { dev: 9, ..old },
            Stamp {
                modified: (99, 0),
                ..old
            },
        ] {
            assert_eq!(get(&cache, "/n/a.md", &changed), None, "{changed:?}");
        }
        assert_eq!(get(&cache, "/n/b.md", &old), None);
    }

    #[test]
    fn a_head_changed_within_the_settle_time_is_not_kept() {
        let cache = HeadCache::new();
        let settled = stamp(10, (100, 0));
        let racy = stamp(10, (100, 1));
        // Exactly the settle time before the read: kept.
        cache.put(Path::new("/n/a.md"), settled, b"a", at(102));
        assert_eq!(cache.len(), 1);
        // A nanosecond later: not kept, and the older head is forgotten.
        cache.put(Path::new("/n/a.md"), racy, b"b", at(102));
        assert!(cache.is_empty());
        assert_eq!(get(&cache, "/n/a.md", &settled), None);
        // Before the epoch plus the settle time there is nothing to compare.
        cache.put(Path::new("/n/a.md"), settled, b"a", at(1));
        assert!(cache.is_empty());
    }

    #[test]
    fn a_long_head_is_not_kept() {
        let cache = HeadCache::with_settle(Duration::ZERO);
        let long = vec![b'x'; HeadCache::MAX_HEAD_BYTES + 1];
        cache.put(Path::new("/n/a.md"), stamp(1, (1, 0)), &long, at(5));
        assert!(cache.is_empty());
        let longest = vec![b'x'; HeadCache::MAX_HEAD_BYTES];
        cache.put(Path::new("/n/a.md"), stamp(1, (1, 0)), &longest, at(5));
        assert_eq!(cache.len(), 1);
    }

    #[test]
    fn a_full_cache_starts_again() {
        let cache = HeadCache::with_settle(Duration::ZERO);
        for i in 0..HeadCache::MAX_ENTRIES {
            cache.put(
                Path::new(&format!("/n/{i}.md")),
                stamp(1, (1, 0)),
                b"h",
                at(5),
            );
        }
        assert_eq!(cache.len(), HeadCache::MAX_ENTRIES);
        // A path already kept replaces its entry.
        cache.put(Path::new("/n/0.md"), stamp(2, (1, 0)), b"h2", at(5));
        assert_eq!(cache.len(), HeadCache::MAX_ENTRIES);
        cache.put(Path::new("/n/new.md"), stamp(1, (1, 0)), b"h", at(5));
        assert_eq!(cache.len(), 1);
        assert_eq!(
            get(&cache, "/n/new.md", &stamp(1, (1, 0))).as_deref(),
            Some(&b"h"[..])
        );
    }

    #[test]
    fn a_saved_cache_loads_back_whole_and_is_written_only_when_changed() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("data/heads.bin");
        let cache = HeadCache::with_settle(Duration::ZERO);
        let a = stamp(10, (100, 5));
        let b = Stamp {
            dev: u64::MAX,
            ino: 7,
            len: 0,
            modified: (-3, 999_999_999),
            changed: (i64::MIN, 0),
        };
        cache.put(Path::new("/n/a.md"), a, b"---\na: 1\n", at(200));
        cache.put(Path::new("/n/b\u{e9}.md"), b, b"", at(200));
        cache.save(&file).unwrap();
        let loaded = HeadCache::load(&file);
        assert_eq!(loaded.len(), 2);
        assert_eq!(
            served(&loaded, "/n/a.md", &a).as_deref(),
            Some(&b"---\na: 1\n"[..])
        );
        assert_eq!(
            served(&loaded, "/n/b\u{e9}.md", &b).as_deref(),
            Some(&b""[..])
        );
        assert_eq!(served(&loaded, "/n/a.md", &b), None);
        // Nothing changed since the load: nothing is written.
        std::fs::remove_file(&file).unwrap();
        loaded.save(&file).unwrap();
        assert!(!file.exists());
        // A change is written, and no temporary file is left.
        loaded.put(Path::new("/n/c.md"), a, b"c", at(200));
        loaded.save(&file).unwrap();
        assert_eq!(HeadCache::load(&file).len(), 3);
        let names: Vec<_> = std::fs::read_dir(dir.path().join("data"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
        assert!(names.iter().any(|name| name == "heads.bin"), "{names:?}");
        assert!(
            names.iter().any(|name| name == ".note-heads.key"),
            "{names:?}"
        );
    }

    /// Writes `EVIL` over the saved head title `aaaa` in the saved cache
    /// `file`, its seal left as it was; the bytes before.
    fn forge_title(file: &Path) -> Vec<u8> {
        let whole = std::fs::read(file).unwrap();
        let at_title = whole.windows(4).position(|w| w == b"aaaa").unwrap();
        let mut forged = whole.clone();
        forged[at_title..at_title + 4].copy_from_slice(b"EVIL");
        std::fs::write(file, &forged).unwrap();
        whole
    }

    /// A saved entry whose head, stamp or path was changed after it was
    /// sealed, or sealed under another key, is never served, and is
    /// dropped; the heads beside it still are.
    #[test]
    fn a_saved_head_is_served_only_under_its_seal() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("heads.bin");
        let cache = HeadCache::with_settle(Duration::ZERO);
        let a = stamp(100, (100, 5));
        cache.put(Path::new("/n/a.md"), a, b"---\ntitle: aaaa\n", at(200));
        cache.put(Path::new("/n/b.md"), a, b"---\ntitle: bbbb\n", at(200));
        cache.save(&file).unwrap();
        let whole = forge_title(&file);
        let loaded = HeadCache::load(&file);
        assert_eq!(loaded.len(), 2);
        assert_eq!(served(&loaded, "/n/a.md", &a), None, "a forged head");
        assert_eq!(loaded.len(), 1, "dropped");
        assert_eq!(
            served(&loaded, "/n/b.md", &a).as_deref(),
            Some(&b"---\ntitle: bbbb\n"[..])
        );
        // Sealed under another key: nothing verifies.
        std::fs::write(&file, &whole).unwrap();
        std::fs::remove_file(dir.path().join(super::super::seal::KEY_FILE)).unwrap();
        SealKey::load_or_make(dir.path()).unwrap();
        let loaded = HeadCache::load(&file);
        assert_eq!(served(&loaded, "/n/a.md", &a), None);
        assert_eq!(served(&loaded, "/n/b.md", &a), None);
        // Without a key, nothing is loaded at all.
        std::fs::remove_file(dir.path().join(super::super::seal::KEY_FILE)).unwrap();
        assert!(HeadCache::load(&file).is_empty());
    }

    /// A save keeps the seals it proved or made while the key is the same,
    /// and seals every head again under a key made since: a later process
    /// under the new key is served them all.
    #[test]
    fn a_save_seals_again_what_was_proven_under_a_replaced_key() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("heads.bin");
        let key_file = dir.path().join(super::super::seal::KEY_FILE);
        let a = stamp(100, (100, 5));
        let first = HeadCache::with_settle(Duration::ZERO);
        first.put(Path::new("/n/a.md"), a, b"---\na", at(200));
        first.put(Path::new("/n/b.md"), a, b"---\nb", at(200));
        first.save(&file).unwrap();
        // A later process proves one saved head, reads another, saves.
        let second = HeadCache::load(&file);
        assert!(served(&second, "/n/a.md", &a).is_some());
        second.put(Path::new("/n/c.md"), a, b"---\nc", at(200));
        second.save(&file).unwrap();
        let heads = ["/n/a.md", "/n/b.md", "/n/c.md"];
        let third = HeadCache::load(&file);
        for path in heads {
            assert!(served(&third, path, &a).is_some(), "{path}");
        }
        // The key is made anew while the second process lives on: its next
        // save seals what it proved or sealed under the old key again.
        std::fs::remove_file(&key_file).unwrap();
        SealKey::load_or_make(dir.path()).unwrap();
        second.put(Path::new("/n/d.md"), a, b"---\nd", at(200));
        second.save(&file).unwrap();
        let fourth = HeadCache::load(&file);
        for path in ["/n/a.md", "/n/c.md", "/n/d.md"] {
            assert!(served(&fourth, path, &a).is_some(), "{path}");
        }
        // One it never proved keeps the seal it came with, now under no key.
        assert_eq!(served(&fourth, "/n/b.md", &a), None);
    }

    /// A loaded head that was never proven stays to be proven through a
    /// save of the process that loaded it: a forged one is still refused.
    #[test]
    fn a_save_proves_no_loaded_head() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("heads.bin");
        let a = stamp(100, (100, 5));
        let cache = HeadCache::with_settle(Duration::ZERO);
        cache.put(Path::new("/n/a.md"), a, b"---\ntitle: aaaa\n", at(200));
        cache.save(&file).unwrap();
        forge_title(&file);
        let loaded = HeadCache::load(&file);
        loaded.put(Path::new("/n/b.md"), a, b"---\nb", at(200));
        loaded.save(&file).unwrap();
        assert_eq!(served(&loaded, "/n/a.md", &a), None);
        assert_eq!(served(&HeadCache::load(&file), "/n/a.md", &a), None);
    }

    #[test]
    fn a_damaged_saved_cache_loads_empty() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("heads.bin");
        assert!(HeadCache::load(&file).is_empty(), "missing");
        let cache = HeadCache::with_settle(Duration::ZERO);
        cache.put(Path::new("/n/a.md"), stamp(10, (100, 5)), b"head", at(200));
        cache.save(&file).unwrap();
        let whole = std::fs::read(&file).unwrap();
        assert_eq!(HeadCache::load(&file).len(), 1);
        for cut in 0..whole.len() {
            std::fs::write(&file, &whole[..cut]).unwrap();
            // No head of a cut file is served: it holds fewer heads than
            // it counts, or no count.
            assert!(HeadCache::load(&file).is_empty(), "cut at {cut}");
        }
        let mut trailing = whole.clone();
        trailing.push(0);
        std::fs::write(&file, &trailing).unwrap();
        assert!(HeadCache::load(&file).is_empty());
        let mut wrong = whole.clone();
        wrong[0] = b'N';
        std::fs::write(&file, &wrong).unwrap();
        assert!(HeadCache::load(&file).is_empty());
        // A head length past the longest kept head, or past its file.
        let head_at = whole.len() - SEAL_BYTES - 4 - 4;
        for (head_len, file_len) in [(HeadCache::MAX_HEAD_BYTES + 1, u64::MAX), (11, 10)] {
            let mut long = whole[..head_at].to_vec();
            let file_len_at = long.len() - 5 * 8;
            long[file_len_at..file_len_at + 8].copy_from_slice(&file_len.to_le_bytes());
            long.extend_from_slice(&(head_len as u32).to_le_bytes());
            long.extend_from_slice(&vec![b'x'; head_len]);
            long.extend_from_slice(&[0; SEAL_BYTES]);
            std::fs::write(&file, &long).unwrap();
            assert!(HeadCache::load(&file).is_empty(), "{head_len} {file_len}");
        }
        // Too large to be a cache at all.
        let file_big = dir.path().join("big.bin");
        let big = std::fs::File::create(&file_big).unwrap();
        big.set_len(HeadCache::MAX_SAVED_BYTES + 1).unwrap();
        assert!(HeadCache::load(&file_big).is_empty());
        // A cache of the largest size is read; one byte more, and it is
        // not.
        let len = whole.len() as u64;
        std::fs::write(&file, &whole).unwrap();
        assert_eq!(read_saved(&file, len).map(|heads| heads.len()), Some(1));
        assert!(read_saved(&file, len - 1).is_none());
        // Refused by its size, though its first bytes are a whole cache.
        std::fs::write(&file, &trailing).unwrap();
        assert!(read_saved(&file, len).is_none());
    }

    /// A saved cache of `entries` ([`saved_entry`]s) that says it holds
    /// `count`.
    fn saved_file(count: usize, entries: &[u8]) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&(count as u32).to_le_bytes());
        out.extend_from_slice(entries);
        out
    }

    /// A saved entry as [`encode`] writes it, under a seal of zeros.
    fn saved_entry(path: &[u8], head: &[u8]) -> Vec<u8> {
        let mut out = (path.len() as u32).to_le_bytes().to_vec();
        out.extend_from_slice(path);
        for word in stamp_words(&stamp(head.len() as u64, (100, 5))) {
            out.extend_from_slice(&word);
        }
        out.extend_from_slice(&(head.len() as u32).to_le_bytes());
        out.extend_from_slice(head);
        out.extend_from_slice(&[0; SEAL_BYTES]);
        out
    }

    /// The longest path and the longest head are saved and loaded back;
    /// a longer path is left out when saving and refused when loading, and
    /// a saved cache holds at most as many heads as a cache keeps.
    #[test]
    fn a_saved_cache_keeps_its_limits_to_the_byte() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("heads.bin");
        let cache = HeadCache::with_settle(Duration::ZERO);
        let longest = format!("/{}", "p".repeat(MAX_SAVED_PATH - 1));
        let too_long = format!("/{}", "q".repeat(MAX_SAVED_PATH));
        let head = vec![b'h'; HeadCache::MAX_HEAD_BYTES];
        let kept = stamp(HeadCache::MAX_HEAD_BYTES as u64, (100, 5));
        cache.put(Path::new(&longest), kept, &head, at(200));
        cache.put(Path::new(&too_long), kept, b"h", at(200));
        assert_eq!(cache.len(), 2);
        cache.save(&file).unwrap();
        let loaded = HeadCache::load(&file);
        assert_eq!(loaded.len(), 1);
        assert_eq!(served(&loaded, &longest, &kept), Some(head));
        // A saved path past the longest: the file is no cache.
        std::fs::write(
            &file,
            saved_file(1, &saved_entry(too_long.as_bytes(), b"h")),
        )
        .unwrap();
        assert!(HeadCache::load(&file).is_empty());
        // As many saved heads as a cache keeps load (to be proven each by
        // its seal); one more, counted or not, and the file is no cache.
        let mut entries = Vec::new();
        for i in 0..HeadCache::MAX_ENTRIES {
            entries.extend(saved_entry(format!("/n/{i}.md").as_bytes(), b"h"));
        }
        std::fs::write(&file, saved_file(HeadCache::MAX_ENTRIES, &entries)).unwrap();
        assert_eq!(HeadCache::load(&file).len(), HeadCache::MAX_ENTRIES);
        entries.extend(saved_entry(b"/n/one-more.md", b"h"));
        for count in [HeadCache::MAX_ENTRIES, HeadCache::MAX_ENTRIES + 1] {
            std::fs::write(&file, saved_file(count, &entries)).unwrap();
            assert!(HeadCache::load(&file).is_empty(), "{count}");
        }
    }

    /// A saved cache's count is its number of heads: one that says more
    /// or fewer than follow makes the file no cache.
    #[test]
    fn a_saved_cache_holds_as_many_heads_as_it_counts() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("heads.bin");
        let cache = HeadCache::with_settle(Duration::ZERO);
        cache.put(Path::new("/n/a.md"), stamp(1, (100, 5)), b"a", at(200));
        cache.save(&file).unwrap();
        assert_eq!(HeadCache::load(&file).len(), 1);
        let mut entries = saved_entry(b"/n/a.md", b"a");
        entries.extend(saved_entry(b"/n/b.md", b"b"));
        std::fs::write(&file, saved_file(2, &entries)).unwrap();
        assert_eq!(HeadCache::load(&file).len(), 2);
        for count in [0, 1, 3, u32::MAX as usize] {
            std::fs::write(&file, saved_file(count, &entries)).unwrap();
            assert!(HeadCache::load(&file).is_empty(), "{count}");
        }
    }

    /// A kept parse, moved to any later time, is the parse at that time;
    /// what depends on the zone is never kept.
    #[test]
    fn kept_metadata_is_the_parse_at_the_time_of_each_call() {
        use crate::notes::frontmatter::split_note;
        let zones = [
            TimeZone::UTC,
            TimeZone::fixed(jiff::tz::Offset::constant(-7)),
        ];
        let full = "createdAt: 2026-01-01T00:00:00.000+00:00\nupdatedAt: 2026-01-02T00:00:00.000+00:00\nlastAccessed: 2026-01-03T00:00:00.000+00:00\n";
        let cases: [(&str, Option<[bool; 4]>); 7] = [
            (full, Some([false; 4])),
            ("origin: self\n", Some([true, true, true, false])),
            (
                "createdAt: 2026-01-01T00:00:00.000+00:00\nupdatedAt: nonsense\n",
                Some([false, true, true, false]),
            ),
            (
                "crumpledAt: soon\nproject: p\n",
                Some([true, true, true, true]),
            ),
            (
                "crumpledAt: 2026-01-05T00:00:00Z\n",
                Some([true, true, true, false]),
            ),
            ("updatedAt: 2026-01-02T00:00:00\n", None),
            ("crumpledAt: 2026-01-05T00:00:00\nx: 1\n", None),
        ];
        for (block, expected) in cases {
            let text = format!("---\n{block}---\n\nbody");
            let head = split_note(&text);
            for tz in &zones {
                let now = 1_780_000_000_000;
                let (meta, kept) = KeptMeta::parse(&head, now, tz);
                assert_eq!(meta, head.meta(now, tz), "{block}");
                assert_eq!(
                    kept.meta.is_some().then_some(kept.clock),
                    expected,
                    "{block}"
                );
                for later in [now, now + 1, now + 3_600_000, now + 40 * 86_400_000] {
                    let at = kept.at(later);
                    assert_eq!(at.is_some(), expected.is_some(), "{block} at {later}");
                    if let Some(at) = at {
                        assert_eq!(at, head.meta(later, tz), "{block} at {later}");
                    }
                }
            }
        }
    }

    /// A time field's line as notes carry it, or as a hand edit might.
    fn time_line() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let key = prop_oneof![
            Just("createdAt"),
            Just("updatedAt"),
            Just("lastAccessed"),
            Just("crumpledAt"),
        ];
        let date =
            (1970i32..2100, 1u8..13, 1u8..29).prop_map(|(y, mo, d)| format!("{y}-{mo:02}-{d:02}"));
        let value = prop_oneof![
            (date.clone(), 0u8..24).prop_map(|(d, h)| format!("{d}T{h:02}:00:00.000+02:00")),
            date.clone().prop_map(|d| format!("{d}T10:30:00Z")),
            date.clone().prop_map(|d| format!("{d} 10:30:00")),
            date,
            (0i64..4_000_000_000_000).prop_map(|ms| ms.to_string()),
            Just("1.5e12".to_owned()),
            Just(String::new()),
            Just("\"\"".to_owned()),
            Just("soon".to_owned()),
            Just("[]".to_owned()),
        ];
        (key, value).prop_map(|(key, value)| format!("{key}: {value}"))
    }

    proptest::proptest! {
        /// The parse a cache keeps, moved to any later call, is that call's
        /// parse, and it is kept exactly when no time depends on the zone.
        #[test]
        fn a_kept_parse_is_the_parse_of_every_later_call(
            lines in proptest::collection::vec(time_line(), 0..6),
            later in 0i64..100_000_000_000,
        ) {
            use crate::notes::frontmatter::split_note;
            let text = format!("---\norigin: self\n{}\n---\n\nbody", lines.join("\n"));
            let head = split_note(&text);
            let tz = TimeZone::fixed(jiff::tz::Offset::constant(-7));
            let elsewhere = TimeZone::fixed(jiff::tz::Offset::constant(25));
            let now = 1_780_000_000_000;
            let (meta, kept) = KeptMeta::parse(&head, now, &tz);
            proptest::prop_assert_eq!(&meta, &head.meta(now, &tz));
            match kept.at(now + later) {
                Some(at) => {
                    proptest::prop_assert_eq!(at, head.meta(now + later, &tz));
                    proptest::prop_assert_eq!(head.meta(now, &elsewhere), meta);
                }
                None => proptest::prop_assert_ne!(head.meta(now, &elsewhere), meta),
            }
        }
    }

    /// Heads are kept only on filesystems whose change time no user can
    /// set back; the answer is asked once per device.
    #[cfg(target_os = "linux")]
    #[test]
    fn only_filesystems_with_a_real_change_time_keep_heads() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(filesystem_keeps_change_times(dir.path()), Some(true));
        // procfs: its times say nothing of its files' contents.
        assert_eq!(
            filesystem_keeps_change_times(Path::new("/proc/self/status")),
            Some(false)
        );
        assert_eq!(
            filesystem_keeps_change_times(&dir.path().join("missing/x")),
            None
        );
        let cache = HeadCache::new();
        let proc_stamp = Stamp {
            dev: u64::MAX - 1,
            ..stamp(1, (1, 0))
        };
        assert!(!cache.keeps_change_times(Path::new("/proc/self/status"), &proc_stamp));
        // Known by its device from now on, whatever path asks.
        assert!(!cache.keeps_change_times(dir.path(), &proc_stamp));
        let local = Stamp {
            dev: u64::MAX - 2,
            ..stamp(1, (1, 0))
        };
        assert!(cache.keeps_change_times(dir.path(), &local));
    }

    /// A head trusted on change notification is served without a stamp,
    /// until a report names it, a directory above it, or everything; a
    /// report below another directory leaves it served.
    #[test]
    fn a_trusted_head_is_served_until_a_report_names_it() {
        let cache = HeadCache::with_settle(Duration::ZERO);
        let kept = stamp(10, (100, 0));
        let paths = ["/n/a/1.md", "/n/a/2.md", "/n/ab/3.md", "/n/b/4.md"];
        let watched = |path: &str| {
            let mut buffer = Vec::new();
            let (stamp, served) = cache.serve_watched(Path::new(path), 0, &mut buffer)?;
            assert_eq!(stamp, kept, "{path}");
            served_head(served, &buffer)
        };
        let trust_all = || {
            for path in paths {
                cache.put(Path::new(path), kept, path.as_bytes(), at(200));
                cache.trust(Path::new(path), &kept, kept.dev);
            }
        };
        // Not served before it is trusted, nor when its device is another.
        cache.put(Path::new(paths[0]), kept, b"h", at(200));
        assert_eq!(watched(paths[0]), None);
        cache.trust(Path::new(paths[0]), &kept, kept.dev + 1);
        assert_eq!(watched(paths[0]), None);
        cache.trust(Path::new(paths[0]), &stamp(11, (100, 0)), kept.dev);
        assert_eq!(watched(paths[0]), None, "another stamp");
        trust_all();
        assert_eq!(cache.watched_heads(), 4);
        assert_eq!(watched(paths[2]).as_deref(), Some(paths[2].as_bytes()));
        let forget = |forget: Forget| cache.lock().forget(vec![forget]);
        forget(Forget::Path(paths[1].into()));
        assert_eq!(watched(paths[1]), None);
        assert_eq!(cache.watched_heads(), 3);
        // `/n/a` holds `/n/a/1.md`, not `/n/ab/3.md`.
        forget(Forget::Below("/n/a".into()));
        assert_eq!(watched(paths[0]), None);
        assert_eq!(watched(paths[2]).as_deref(), Some(paths[2].as_bytes()));
        assert_eq!(cache.watched_heads(), 2);
        forget(Forget::All);
        assert_eq!(cache.watched_heads(), 0);
        // Forgotten only as watched: each head is still served by stamp.
        for path in paths {
            assert_eq!(get(&cache, path, &kept).as_deref(), Some(path.as_bytes()));
        }
        // A new head put under the path is not watched.
        trust_all();
        cache.put(Path::new(paths[3]), kept, b"new", at(200));
        assert_eq!(watched(paths[3]), None);
    }

    /// The kept paths' hash: distinct paths hash apart, and both the low
    /// bits (the table's buckets) and the top seven (its control bytes)
    /// spread as a random hash would.
    #[test]
    fn kept_paths_hash_apart_and_spread() {
        let hashing = PathHashing::default();
        let hash = |path: &str| hashing.hash_one(std::ffi::OsStr::new(path));
        let count = 4096;
        let hashes: Vec<u64> = (0..count)
            .map(|i| hash(&format!("/home/u/.notesoup/project/k/note-{i}.md")))
            .collect();
        let distinct = |bits: fn(u64) -> u64| {
            hashes
                .iter()
                .map(|&h| bits(h))
                .collect::<std::collections::HashSet<_>>()
                .len()
        };
        assert_eq!(distinct(|h| h), count);
        // 4096 values in 4096 buckets fill about 63% of them at random.
        let low = distinct(|h| h & 0xfff);
        assert!(low > count * 55 / 100, "{low} low buckets");
        assert_eq!(distinct(|h| h >> 57), 128);
        // The tail's length tells it from zero bytes; every write counts.
        let hashed = |write: &dyn Fn(&mut PathHasher)| {
            let mut hasher = hashing.build_hasher();
            write(&mut hasher);
            hasher.finish()
        };
        assert_ne!(hashed(&|h| h.write(b"ab")), hashed(&|h| h.write(b"ab\0")));
        assert_ne!(hashed(&|h| h.write_u8(1)), hashed(&|h| h.write_u8(2)));
        assert_ne!(hashed(&|h| h.write_usize(1)), hashed(&|h| h.write_usize(2)));
        // Seeded per cache.
        let other = PathHashing::default();
        assert_ne!(
            other.hash_one(std::ffi::OsStr::new("/n/a.md")),
            hash("/n/a.md")
        );
    }

    #[test]
    fn times_before_the_epoch_order_like_lstat() {
        assert_eq!(since_epoch(SystemTime::UNIX_EPOCH), (0, 0));
        assert_eq!(since_epoch(at(3) + Duration::from_nanos(7)), (3, 7));
        let before = SystemTime::UNIX_EPOCH - Duration::from_millis(1500);
        assert_eq!(since_epoch(before), (-2, 500_000_000));
        let whole = SystemTime::UNIX_EPOCH - Duration::from_secs(2);
        assert_eq!(since_epoch(whole), (-2, 0));
    }
}
