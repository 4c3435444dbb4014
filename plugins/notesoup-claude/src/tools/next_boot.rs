//! The next window's boot, made ready by a running server after the
//! session writes notes.
//!
//! A hook boots each window from the kept shelves while the homes' folders
//! keep their stamps (core's `ShelfIndex`). A note written renames a file
//! into its folder, so the next boot would list that home again: every
//! note's stamp checked, on the hook's, and so the user's, time. The server
//! outlives `/clear`, so it lists it instead: once the session's last write
//! has settled (a shelf is kept only from folders unchanged for
//! `ShelfIndex::SETTLE`), a thread of its own boots the store through the
//! kept caches, listing through the heads the server keeps warm, which
//! keeps the home's new shelf and those heads for the hook. The wait starts again at each write; a server that ends while
//! it waits keeps nothing, and one that ends while it lists finishes first.
//! The hook checks every stamp as before: a shelf made here is served only
//! while nothing changed since.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use notesoup_core::boot::ShelfIndex;
use notesoup_core::notes::NoteStore;
use notesoup_core::plumbing::BootCaches;

/// Prepares the next boot after writes; see the module docs.
#[derive(Debug)]
pub struct NextBoot {
    cache_dir: PathBuf,
    /// How long after the last write the boot is made.
    delay: Duration,
    shared: Arc<Shared>,
    /// Started at the first write.
    thread: Option<JoinHandle<()>>,
}

/// What the server and the preparing thread share.
#[derive(Debug, Default)]
struct Shared {
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Debug, Default)]
struct State {
    /// The store last written, and when its boot is to be made.
    pending: Option<(Instant, NoteStore)>,
    /// The server is ending.
    closing: bool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Every change is one assignment: a panic leaves no half of one.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl NextBoot {
    /// How long after the last write the boot is made: past the time the
    /// folders must stand unchanged for their shelves to be kept.
    pub const DELAY: Duration = ShelfIndex::SETTLE.saturating_add(Duration::from_millis(250));

    /// Boots made ready in the caches of `cache_dir`, as the hooks keep them.
    pub fn new(cache_dir: PathBuf) -> Self {
        Self::with_delay(cache_dir, Self::DELAY)
    }

    /// The same, made `delay` after the last write (tests use less than
    /// [`Self::DELAY`]).
    fn with_delay(cache_dir: PathBuf, delay: Duration) -> Self {
        Self {
            cache_dir,
            delay,
            shared: Arc::default(),
            thread: None,
        }
    }

    /// `store` was written: its boot is made after the delay
    /// ([`Self::DELAY`]), unless another write comes first.
    pub fn after_write(&mut self, store: NoteStore) {
        self.shared.lock().pending = Some((Instant::now() + self.delay, store));
        self.shared.changed.notify_one();
        if self.thread.is_none() {
            let shared = Arc::clone(&self.shared);
            let cache_dir = self.cache_dir.clone();
            // No thread to be had: the next hook lists, as without one.
            self.thread = std::thread::Builder::new()
                .name("notesoup-next-boot".to_owned())
                .spawn(move || prepare(&shared, &cache_dir))
                .ok();
        }
    }
}

impl Drop for NextBoot {
    /// Ends the thread: a boot being made is finished, one waiting for
    /// its time is dropped.
    fn drop(&mut self) {
        self.shared.lock().closing = true;
        self.shared.changed.notify_one();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The preparing thread: each pending store booted through the caches of
/// `cache_dir` at its time, until the server ends.
fn prepare(shared: &Shared, cache_dir: &Path) {
    let mut state = shared.lock();
    while !state.closing {
        let Some((due, _)) = &state.pending else {
            state = shared
                .changed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
            continue;
        };
        let left = due.saturating_duration_since(Instant::now());
        if !left.is_zero() {
            state = shared
                .changed
                .wait_timeout(state, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
            continue;
        }
        if let Some((_, store)) = state.pending.take() {
            drop(state);
            // Fresh caches: the hooks' latest shelves, with this home's
            // added, and the server's own heads (the store lists through
            // them). A boot that fails is only listed by the next hook.
            let _ = BootCaches::new(Some(cache_dir.to_path_buf())).snapshot(&store);
            state = shared.lock();
        }
    }
}

#[cfg(test)]
impl NextBoot {
    /// Whether a boot waits for its time.
    pub(super) fn pending(&self) -> bool {
        self.shared.lock().pending.is_some()
    }
}

#[cfg(test)]
mod tests {
    use notesoup_core::notes::NotesIdentity;

    use super::*;

    fn store(root: &Path) -> NoteStore {
        NoteStore::new(NotesIdentity::new(root, "s1", "p-12345678", "a", "m").expect("identity"))
    }

    /// Whether `path` exists within ten seconds.
    fn appears(path: &Path) -> bool {
        let until = Instant::now() + Duration::from_secs(10);
        while !path.exists() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
        path.exists()
    }

    #[test]
    fn a_write_s_boot_is_made_at_its_time_and_dropped_with_the_server_before_it() {
        let temp = tempfile::tempdir().expect("a temp dir");
        // A boot through the caches makes their folder first.
        let made = temp.path().join("made");
        let mut next = NextBoot::with_delay(made.clone(), Duration::from_millis(50));
        next.after_write(store(&temp.path().join("notes")));
        assert!(next.pending());
        assert!(appears(&made), "the boot was made");
        assert!(!next.pending());
        drop(next);

        let dropped = temp.path().join("dropped");
        let mut next = NextBoot::with_delay(dropped.clone(), Duration::from_millis(200));
        next.after_write(store(&temp.path().join("notes")));
        drop(next);
        std::thread::sleep(Duration::from_millis(600));
        assert!(!dropped.exists(), "no boot after the server ended");
    }
}
