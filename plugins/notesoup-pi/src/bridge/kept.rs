//! The session indexes a sidecar keeps for the next one
//! ([`LazySession::keep`]): one file per session, named by its id, in
//! `pi-session-index/` under notesoup's cache directory, written once the
//! event that read the session file has been answered and no line waits
//! (or as the sidecar ends), and read by the
//! next sidecar that mirrors the session ([`LazySession::read_kept`]). A
//! missing, damaged or stale file only means the session file is read
//! whole; deleting the directory is always safe.

use std::path::{Path, PathBuf};
use std::thread::JoinHandle;

use notesoup_cli::files_oldest_first;
use notesoup_core::plumbing::{BootCaches, Links, read_small_file};

use crate::session::LazySession;

/// Below this many entries an index is not worth keeping: reading the
/// session file takes a few milliseconds.
const KEPT_MIN_ENTRIES: usize = 2_000;

/// How many kept indexes the directory holds at most; saving one more
/// removes the oldest.
const KEEP_FILES: usize = 32;

/// The largest kept index read (about 40 bytes an entry).
const MAX_BYTES: u64 = 512 << 20;

/// Where one sidecar keeps its session indexes.
#[derive(Debug)]
pub(crate) struct KeptIndexes {
    dir: PathBuf,
    /// The fewest entries an index worth keeping holds.
    min_entries: usize,
    /// The last save, written on a thread of its own.
    saving: Option<JoinHandle<()>>,
}

impl KeptIndexes {
    /// Indexes kept under `cache_dir` ([`BootCaches::dir`]).
    pub(crate) fn new(cache_dir: &Path) -> Self {
        Self {
            dir: cache_dir.join("pi-session-index"),
            min_entries: KEPT_MIN_ENTRIES,
            saving: None,
        }
    }

    /// The same, keeping the index of any session (for tests of short
    /// sessions).
    #[cfg(test)]
    pub(crate) fn keeping_every_size(mut self) -> Self {
        self.min_entries = 0;
        self
    }

    /// The file of the session `id`; `None` for an id that is not a plain
    /// file name (Pi's ids are UUIDs).
    fn file(&self, id: &str) -> Option<PathBuf> {
        let plain = !id.is_empty()
            && id.len() <= 128
            && id
                .bytes()
                .all(|byte| byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_');
        plain.then(|| self.dir.join(id))
    }

    /// The index kept for the session `id`, if any.
    pub(crate) fn load(&mut self, id: &str) -> Option<Vec<u8>> {
        self.wait();
        read_small_file(&self.file(id)?, MAX_BYTES, Links::Refuse)
            .ok()
            .flatten()
    }

    /// Whether an index of `session` is worth saving: it holds enough
    /// entries, and more than the kept one it was restored from (by a
    /// sixteenth, or 512 entries; by any when every size is kept).
    pub(crate) fn worth_saving(&self, session: &LazySession) -> bool {
        self.worth_saving_counts(session.keepable(), session.restored())
    }

    /// [`Self::worth_saving`] for an index of `now` entries restored from
    /// one of `before`.
    fn worth_saving_counts(&self, now: usize, before: usize) -> bool {
        let growth = match self.min_entries {
            0 => 1,
            _ => (before / 16).max(512),
        };
        now >= self.min_entries && now >= before + growth
    }

    /// Saves `session`'s index for the session `id` on a thread of its
    /// own, then removes the oldest files past [`KEEP_FILES`]. A failure
    /// only leaves the next sidecar to read the file whole.
    pub(crate) fn save(&mut self, id: &str, session: &LazySession) {
        let (Some(file), Some(bytes)) = (self.file(id), session.keep()) else {
            return;
        };
        self.wait();
        let dir = self.dir.clone();
        self.saving = std::thread::Builder::new()
            .name("notesoup-pi-index".to_owned())
            .spawn(move || {
                BootCaches::private_dir(&dir);
                if notesoup_core::durable::replace_unsynced(&file, &bytes).is_ok() {
                    prune(&dir);
                }
            })
            .ok();
    }

    /// Waits for the last save.
    fn wait(&mut self) {
        if let Some(saving) = self.saving.take() {
            let _ = saving.join();
        }
    }
}

impl Drop for KeptIndexes {
    fn drop(&mut self) {
        self.wait();
    }
}

/// Removes the least recently written files of `dir` past [`KEEP_FILES`].
fn prune(dir: &Path) {
    let Ok(files) = files_oldest_first(dir, Some) else {
        return;
    };
    for path in files.iter().take(files.len().saturating_sub(KEEP_FILES)) {
        let _ = std::fs::remove_file(path);
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::{KEEP_FILES, KeptIndexes, prune};

    /// Past [`KEEP_FILES`], the least recently written files go.
    #[test]
    fn the_oldest_indexes_are_removed() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let start = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        for at in 0..KEEP_FILES + 3 {
            let path = dir.path().join(format!("session-{at:02}"));
            let file = std::fs::File::create(&path).expect("create");
            // Written in reverse order of their names.
            let age = Duration::from_secs((KEEP_FILES + 3 - at) as u64);
            file.set_modified(start - age).expect("stamp");
        }
        prune(dir.path());
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .expect("read")
            .map(|entry| {
                entry
                    .expect("entry")
                    .file_name()
                    .into_string()
                    .expect("name")
            })
            .collect();
        left.sort();
        assert_eq!(left.len(), KEEP_FILES);
        assert_eq!(left[0], "session-03", "the three oldest went");
        prune(dir.path());
        assert_eq!(
            std::fs::read_dir(dir.path()).expect("read").count(),
            KEEP_FILES
        );
    }

    /// An index is kept from 2,000 entries on, and again once it grew by
    /// a sixteenth or by 512 entries, whichever is more.
    #[test]
    fn an_index_is_kept_again_once_it_grew_enough() {
        let kept = KeptIndexes::new(std::path::Path::new("/cache"));
        for (now, before, worth) in [
            (1_999, 0, false),
            (2_000, 0, true),
            (2_511, 2_000, false),
            (2_512, 2_000, true),
            (10_624, 10_000, false),
            (10_625, 10_000, true),
            (10_000, 10_000, false),
        ] {
            assert_eq!(
                kept.worth_saving_counts(now, before),
                worth,
                "{now} entries, {before} kept"
            );
        }
        let every = KeptIndexes::new(std::path::Path::new("/cache")).keeping_every_size();
        assert!(every.worth_saving_counts(1, 0));
        assert!(every.worth_saving_counts(11, 10));
        assert!(!every.worth_saving_counts(10, 10));
    }

    /// Only a plain file name is a session's index file.
    #[test]
    fn a_session_id_names_a_file_only_when_plain() {
        let kept = KeptIndexes::new(std::path::Path::new("/cache"));
        assert!(kept.file("01a2324d-b8ef-7034-88ed-c5815690112d").is_some());
        assert!(kept.file("a_b").is_some());
        for id in ["", "../escape", "a/b", ".", "a b", &"x".repeat(129)] {
            assert_eq!(kept.file(id), None, "{id}");
        }
        assert!(kept.file(&"x".repeat(128)).is_some());
    }
}
