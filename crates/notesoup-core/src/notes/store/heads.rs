//! Kept note heads: a long-lived host (an MCP server, a sidecar) lists the
//! same notes call after call, and reading every file's head each time is
//! what a listing costs. [`HeadCache`] keeps each file's settled head (the
//! prefix [`read_head`](super::files::read_head) returns) under the file's
//! stamp, so an unchanged note costs one `lstat` instead of an open, a read
//! and a close.
//!
//! Only bytes are kept, never parsed metadata: parsing depends on the time
//! of the call (missing times default to now) and on the store's time zone,
//! so every listing still parses what it shows.
//!
//! A kept head is served only while the file's stamp (device, inode, length,
//! modification and change times) is the one it was read under. A file
//! rewritten within the filesystem's timestamp tick, to the same length and
//! in place, would keep its stamp; so a head is kept only when the file's
//! change time is at least [`HeadCache::DEFAULT_SETTLE`] older than the start
//! of its read (the rule Git applies to "racily clean" index entries). A
//! note written moments ago is read again until it has settled.

use std::collections::HashMap;
use std::fs::Metadata;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, SystemTime};

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
    /// The stamp of `meta` (from `lstat`).
    #[cfg(unix)]
    pub(super) fn of(meta: &Metadata) -> Stamp {
        use std::os::unix::fs::MetadataExt;
        Stamp {
            dev: meta.dev(),
            ino: meta.ino(),
            len: meta.len(),
            modified: (meta.mtime(), meta.mtime_nsec()),
            changed: (meta.ctime(), meta.ctime_nsec()),
        }
    }

    /// The stamp of `meta`; without change times or inodes, the
    /// modification time stands in for the change time.
    #[cfg(not(unix))]
    pub(super) fn of(meta: &Metadata) -> Stamp {
        let modified = meta.modified().map_or((0, 0), |time| since_epoch(time));
        Stamp {
            dev: 0,
            ino: 0,
            len: meta.len(),
            modified,
            changed: modified,
        }
    }

    /// The change time as seconds and nanoseconds since the epoch.
    fn changed_at(&self) -> (i64, i64) {
        self.changed
    }
}

/// A time as whole seconds and nanoseconds since the epoch (negative
/// seconds before it), the shape `lstat` reports.
fn since_epoch(time: SystemTime) -> (i64, i64) {
    match time.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(after) => (
            i64::try_from(after.as_secs()).unwrap_or(i64::MAX),
            i64::from(after.subsec_nanos()),
        ),
        Err(before) => {
            let before = before.duration();
            let secs = i64::try_from(before.as_secs()).unwrap_or(i64::MAX);
            match before.subsec_nanos() {
                0 => (-secs, 0),
                nanos => (-secs - 1, i64::from(1_000_000_000 - nanos)),
            }
        }
    }
}

/// One kept head.
#[derive(Debug)]
struct Kept {
    stamp: Stamp,
    head: Box<[u8]>,
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
/// note changed moments ago is read again until it has settled. Only bytes
/// are kept; every listing still parses them.
#[derive(Debug)]
pub struct HeadCache {
    kept: Mutex<HashMap<PathBuf, Kept>>,
    settle: Duration,
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
            kept: Mutex::new(HashMap::new()),
            settle,
        }
    }

    /// How many heads are kept.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no head is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, Kept>> {
        // A panic elsewhere cannot leave a half-written entry: every
        // change is one insert or one clear.
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Copies the head kept for `path` under `stamp` into `buffer` and
    /// returns its length; `None` when none is kept for this version.
    pub(super) fn get(&self, path: &Path, stamp: &Stamp, buffer: &mut Vec<u8>) -> Option<usize> {
        let kept = self.lock();
        let found = kept.get(path).filter(|kept| kept.stamp == *stamp)?;
        if buffer.len() < found.head.len() {
            buffer.resize(found.head.len(), 0);
        }
        buffer[..found.head.len()].copy_from_slice(&found.head);
        Some(found.head.len())
    }

    /// Keeps `head`, read from `path` under `stamp` by a read that started
    /// at `read_started`, when the file had settled by then and the head is
    /// short; otherwise forgets any head kept for `path`.
    pub(super) fn put(&self, path: &Path, stamp: Stamp, head: &[u8], read_started: SystemTime) {
        let mut kept = self.lock();
        if head.len() > Self::MAX_HEAD_BYTES || !self.settled(&stamp, read_started) {
            kept.remove(path);
            return;
        }
        if kept.len() >= Self::MAX_ENTRIES && !kept.contains_key(path) {
            kept.clear();
        }
        kept.insert(
            path.to_path_buf(),
            Kept {
                stamp,
                head: head.into(),
            },
        );
    }

    /// Whether the file's last change lies at least `settle` before
    /// `read_started`.
    fn settled(&self, stamp: &Stamp, read_started: SystemTime) -> bool {
        let Some(limit) = read_started.checked_sub(self.settle) else {
            return false;
        };
        stamp.changed_at() <= since_epoch(limit)
    }
}

#[cfg(test)]
mod tests {
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
        let len = cache.get(Path::new(path), stamp, &mut buffer)?;
        Some(buffer[..len].to_vec())
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
    fn times_before_the_epoch_order_like_lstat() {
        assert_eq!(since_epoch(SystemTime::UNIX_EPOCH), (0, 0));
        assert_eq!(since_epoch(at(3) + Duration::from_nanos(7)), (3, 7));
        let before = SystemTime::UNIX_EPOCH - Duration::from_millis(1500);
        assert_eq!(since_epoch(before), (-2, 500_000_000));
        let whole = SystemTime::UNIX_EPOCH - Duration::from_secs(2);
        assert_eq!(since_epoch(whole), (-2, 0));
    }
}
