//! The boot caches a host keeps between its processes: the boot shelves
//! ([`ShelfIndex`], served while the homes' directory stamps are unchanged)
//! and the note heads ([`HeadCache`], sealed), saved as files in the
//! user's cache directory ([`BootCaches::dir`]), one per kind, notes root and
//! project. A Claude Code hook is a new process for every boot; a Pi or
//! dsh sidecar is a new process for every start of its host. With the
//! caches, a boot over a large store reads the notes it shows instead of
//! listing every note.
//!
//! Caches are only shortcuts: a missing, damaged or stale file gives the
//! boot a fresh listing gives (see [`ShelfIndex::load`] and
//! [`HeadCache::load`] for what each checks), and deleting the directory is
//! always safe.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

use super::fnv::fnv1a;
use crate::boot::{BootSnapshot, ShelfIndex};
use crate::notes::{HeadCache, NoteError, NoteStore, NotesIdentity};

/// The boot caches of one process: its note heads, shared with every store
/// it opens ([`Self::heads`]), and the boot shelves, both loaded from the
/// cache directory by the first boot that needs them, kept in memory for
/// the process's later boots, and saved after a boot that listed (only
/// what changed is written). With no cache directory the heads are kept in
/// memory only and every boot lists.
#[derive(Debug)]
pub struct BootCaches {
    dir: Option<PathBuf>,
    kept: Arc<Mutex<Kept>>,
    /// Saves run on a thread of their own ([`Self::saving_in_background`]).
    background: bool,
    /// The last save started on its own thread.
    saving: Mutex<Option<JoinHandle<()>>>,
}

/// What a [`BootCaches`] holds.
#[derive(Debug, Default)]
struct Kept {
    /// The shelves loaded from, and saved to, this file.
    shelves: Option<(PathBuf, ShelfIndex)>,
    heads: Arc<HeadCache>,
    /// Where the last listing's heads are saved.
    heads_file: Option<PathBuf>,
}

impl Kept {
    /// Saves what changed since it was loaded or last saved; a cache that
    /// cannot be saved is listed again by the next process.
    fn save(&mut self) {
        if let Some(file) = &self.heads_file {
            let _ = self.heads.save(file);
        }
        if let Some((file, shelves)) = &mut self.shelves {
            let _ = shelves.save(file);
        }
    }
}

/// `kept`, locked: every change to it is one assignment or one save, so a
/// panic leaves no half of one.
fn lock(kept: &Mutex<Kept>) -> MutexGuard<'_, Kept> {
    kept.lock().unwrap_or_else(PoisonError::into_inner)
}

impl BootCaches {
    /// Where notesoup keeps its caches, from an environment lookup
    /// (`std::env::var` in a binary): `$XDG_CACHE_HOME/notesoup` when
    /// `XDG_CACHE_HOME` is absolute, else `$HOME/.cache/notesoup` (`HOME`,
    /// else `USERPROFILE`); `None` when neither is known.
    pub fn dir(get: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
        let path = |name: &str| get(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        path("XDG_CACHE_HOME")
            .filter(|dir| dir.is_absolute())
            .or_else(|| {
                path("HOME")
                    .or_else(|| path("USERPROFILE"))
                    .map(|home| home.join(".cache"))
            })
            .map(|dir| dir.join("notesoup"))
    }

    /// Creates `dir` and its missing parents, the new ones readable by the
    /// owner only (0700 on Unix): caches and records hold note text. A failure
    /// is left to the first write into it to report.
    pub fn private_dir(dir: &Path) {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        let _ = builder.create(dir);
    }

    /// The kind of file the boot shelves are kept in.
    const SHELVES: &str = "boot-shelves";
    /// The kind of file the note heads are kept in.
    const HEADS: &str = "note-heads";

    /// The caches of a process keeping them in `dir` (see [`Self::dir`]);
    /// `None` keeps the heads in memory only.
    pub fn new(dir: Option<PathBuf>) -> BootCaches {
        BootCaches {
            dir,
            kept: Arc::new(Mutex::new(Kept::default())),
            background: false,
            saving: Mutex::new(None),
        }
    }

    /// The note heads the boots of any process saved for `identity`'s
    /// store in the cache directory `dir` ([`HeadCache::load`]: served only
    /// once each seal and stamp checks), for a long-lived process that
    /// lists without booting first, as Claude Code's MCP server does; empty
    /// when none are saved.
    pub fn saved_heads(dir: &Path, identity: &NotesIdentity) -> HeadCache {
        HeadCache::load(&heads_file(dir, identity))
    }

    /// The same caches, saved on a thread of their own after a boot that
    /// listed, so a long-lived host's boot does not wait for the write (the
    /// next boot, or a store's [`Self::heads`], waits for it; dropping the
    /// caches waits for the last one).
    pub fn saving_in_background(mut self) -> BootCaches {
        self.background = true;
        self
    }

    /// The note heads of this process, for every store it opens
    /// ([`NoteStore::with_head_cache`]).
    pub fn heads(&self) -> Arc<HeadCache> {
        Arc::clone(&lock(&self.kept).heads)
    }

    /// The boot snapshot of `store`'s homes. With a cache directory: served
    /// from the kept shelves while their directories are unchanged (only
    /// the notes shown are read), else listed with this process's heads
    /// (when it has none yet: those `store` lists through, when it holds
    /// some, as the heads a long-lived host keeps warm, else those an
    /// earlier process saved) and kept; the caches are saved. Without one:
    /// listed with the heads kept in memory.
    pub fn snapshot(&self, store: &NoteStore) -> Result<BootSnapshot, NoteError> {
        let mut guard = lock(&self.kept);
        let kept = &mut *guard;
        let Some(dir) = &self.dir else {
            return BootSnapshot::load(&store.clone().with_head_cache(Arc::clone(&kept.heads)));
        };
        Self::private_dir(dir);
        let identity = store.identity();
        let shelves_file = kept_file(dir, Self::SHELVES, identity, "bin");
        let shelves = match &mut kept.shelves {
            Some((file, shelves)) if *file == shelves_file => shelves,
            slot => {
                let shelves = ShelfIndex::load(&shelves_file);
                &mut slot.insert((shelves_file, shelves)).1
            }
        };
        // Served: nothing read that a save would keep, but the shelves of
        // homes patched from the directories that changed.
        if let Some(snapshot) = BootSnapshot::served(store, shelves) {
            if let Some((file, shelves)) = &mut kept.shelves {
                let _ = shelves.save(file);
            }
            return Ok(snapshot);
        }
        let heads_file = heads_file(dir, identity);
        if kept.heads.is_empty() {
            kept.heads = match store.head_cache().filter(|own| !own.is_empty()) {
                Some(own) => Arc::clone(own),
                None => Arc::new(HeadCache::load(&heads_file)),
            };
        }
        let listing = store.clone().with_head_cache(Arc::clone(&kept.heads));
        let snapshot = BootSnapshot::load_indexed(&listing, shelves);
        kept.heads_file = Some(heads_file);
        if self.background {
            drop(guard);
            self.save_in_background();
        } else {
            kept.save();
        }
        snapshot
    }

    /// Saves the caches on a thread of their own (inline when no thread can
    /// be started), after the save before it.
    fn save_in_background(&self) {
        let mut saving = self.saving.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(previous) = saving.take() {
            let _ = previous.join();
        }
        let kept = Arc::clone(&self.kept);
        let started = std::thread::Builder::new()
            .name("notesoup-boot-caches".to_owned())
            .spawn(move || lock(&kept).save());
        match started {
            Ok(thread) => *saving = Some(thread),
            Err(_) => lock(&self.kept).save(),
        }
    }

    /// Waits for the last save started on its own thread: a host that ends
    /// without dropping its caches (kept for the process) calls it last.
    pub fn wait_for_saves(&self) {
        let thread = self
            .saving
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(thread) = thread {
            let _ = thread.join();
        }
    }
}

impl Drop for BootCaches {
    /// Waits for the last save started on its own thread, so a host that
    /// ends saves what its last boot listed.
    fn drop(&mut self) {
        self.wait_for_saves();
    }
}

/// Where the boots of `identity`'s project over its notes root keep one
/// `kind` of cache (`note-heads`, `boot-shelves`): one file per project and
/// root (FNV-1a of the root's path), so a boot loads only what it lists.
fn kept_file(dir: &Path, kind: &str, identity: &NotesIdentity, extension: &str) -> PathBuf {
    let root_hash = fnv1a(&[identity.home().as_os_str().as_encoded_bytes()]);
    let project_key = identity.project_key();
    dir.join(kind)
        .join(format!("{project_key}-{root_hash:016x}.{extension}"))
}

/// The file the note heads of `identity`'s store are kept in.
fn heads_file(dir: &Path, identity: &NotesIdentity) -> PathBuf {
    kept_file(dir, BootCaches::HEADS, identity, HeadCache::SAVED_EXTENSION)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    use crate::notes::ListQuery;

    #[test]
    fn the_cache_dir_follows_xdg_only_when_absolute() {
        let dir = |vars: &[(&str, &str)]| {
            let vars: HashMap<&str, &str> = vars.iter().copied().collect();
            BootCaches::dir(|name| vars.get(name).map(|v| (*v).to_owned()))
        };
        assert_eq!(
            dir(&[("HOME", "/h"), ("XDG_CACHE_HOME", "/x")]),
            Some(PathBuf::from("/x/notesoup"))
        );
        assert_eq!(
            dir(&[("HOME", "/h"), ("XDG_CACHE_HOME", "rel")]),
            Some(PathBuf::from("/h/.cache/notesoup"))
        );
        assert_eq!(
            dir(&[("HOME", ""), ("USERPROFILE", "/u")]),
            Some(PathBuf::from("/u/.cache/notesoup"))
        );
        assert_eq!(dir(&[("XDG_CACHE_HOME", "")]), None);
    }

    #[test]
    fn caches_are_kept_per_project_saved_and_served_to_the_next_process() {
        let temp = tempfile::tempdir().expect("a temp dir");
        let root = temp.path().join("notes");
        let cache = temp.path().join("cache").join("notesoup");
        let store = |project: &str| {
            NoteStore::new(NotesIdentity::new(&root, "s1", project, "a", "m").expect("identity"))
        };
        let (a, b) = (store("a-11111111"), store("b-22222222"));
        a.write("@project/alpha", "# Alpha\n\nalpha\n", None)
            .expect("a note");
        b.write("@project/beta", "# Beta\n\nbeta\n", None)
            .expect("a note");
        // Heads and shelves are kept only from files older than this.
        std::thread::sleep(HeadCache::DEFAULT_SETTLE + std::time::Duration::from_millis(100));
        let listed = |store: &NoteStore| BootSnapshot::load(store).expect("a listing").homes;
        let kept = |kind: &str, store: &NoteStore, extension: &str| {
            kept_file(&cache, kind, store.identity(), extension)
        };
        {
            let caches = BootCaches::new(Some(cache.clone())).saving_in_background();
            // One head cache for every store the process opens.
            assert!(Arc::ptr_eq(&caches.heads(), &caches.heads()));
            assert_eq!(caches.snapshot(&a).expect("a").homes, listed(&a));
            // Each save is of the caches as they are when it runs.
            caches.wait_for_saves();
            // Another project: its own shelves, in its own file.
            assert_eq!(caches.snapshot(&b).expect("b").homes, listed(&b));
            caches.wait_for_saves();
            assert_eq!(caches.snapshot(&a).expect("a again").homes, listed(&a));
        }
        // Dropped: its last save is written.
        for store in [&a, &b] {
            assert!(kept(BootCaches::SHELVES, store, "bin").is_file());
            assert!(kept(BootCaches::HEADS, store, "v3.bin").is_file());
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&cache)
                .expect("the cache dir")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o700, "the caches are the owner's alone");
        }
        // The next process: served from the saved shelves, nothing listed,
        // so no heads saved anew.
        let heads = kept(BootCaches::HEADS, &a, "v3.bin");
        let saved = std::fs::read(&heads).expect("the heads");
        let caches = BootCaches::new(Some(cache.clone()));
        assert_eq!(caches.snapshot(&a).expect("served").homes, listed(&a));
        assert_eq!(std::fs::read(&heads).expect("the heads"), saved);
        // A process that lists without booting loads the heads saved for
        // its store: a's, not b's.
        let saved_a = BootCaches::saved_heads(&cache, a.identity());
        assert_eq!(
            saved_a.len(),
            a.list_headers(&ListQuery::default()).expect("a").rows.len()
        );
        let listing = a.clone().with_head_cache(Arc::new(saved_a));
        assert_eq!(BootSnapshot::load(&listing).expect("a").homes, listed(&a));
        assert!(BootCaches::saved_heads(&temp.path().join("none"), a.identity()).is_empty());
    }

    /// A store over a temporary notes root holding one project note.
    fn one_note() -> (tempfile::TempDir, NoteStore) {
        let temp = tempfile::tempdir().expect("a temp dir");
        let root = temp.path().join("notes");
        let store =
            NoteStore::new(NotesIdentity::new(&root, "s1", "p-12345678", "a", "m").expect("id"));
        store
            .write("@project/alpha", "# Alpha\n\nalpha\n", None)
            .expect("a note");
        (temp, store)
    }

    /// A process boots the same store again from the shelves it keeps in
    /// memory: it neither reads their file again nor saves them.
    #[test]
    fn a_process_serves_its_own_shelves_again_without_their_file() {
        let (temp, store) = one_note();
        let cache = temp.path().join("cache");
        std::thread::sleep(HeadCache::DEFAULT_SETTLE + std::time::Duration::from_millis(100));
        let listed = BootSnapshot::load(&store).expect("a listing").homes;
        let caches = BootCaches::new(Some(cache.clone()));
        assert_eq!(caches.snapshot(&store).expect("a boot").homes, listed);
        let shelves = kept_file(&cache, BootCaches::SHELVES, store.identity(), "bin");
        std::fs::remove_file(&shelves).expect("the saved shelves");
        assert_eq!(caches.snapshot(&store).expect("served").homes, listed);
        assert!(!shelves.exists(), "served from memory, nothing saved");
    }

    /// Dropping the caches waits for the save still running on its own
    /// thread: here one held back until another thread lets the caches go.
    #[test]
    fn dropping_the_caches_waits_for_their_last_save() {
        use std::sync::atomic::{AtomicBool, Ordering};
        let caches = BootCaches::new(None).saving_in_background();
        let kept = Arc::clone(&caches.kept);
        let released = AtomicBool::new(false);
        let (held, hold) = std::sync::mpsc::channel();
        std::thread::scope(|scope| {
            scope.spawn(|| {
                let _guard = lock(&kept);
                held.send(()).expect("the test waits");
                std::thread::sleep(std::time::Duration::from_millis(200));
                released.store(true, Ordering::SeqCst);
            });
            hold.recv().expect("the caches are held");
            // The save waits for the caches; the drop, for the save.
            caches.save_in_background();
            drop(caches);
            assert!(
                released.load(Ordering::SeqCst),
                "dropped before its save ran"
            );
        });
    }

    #[test]
    fn kept_files_are_named_by_kind_project_and_root() {
        let identity = NotesIdentity::new(Path::new("/n/root"), "s1", "p-12345678", "a", "m")
            .expect("an identity");
        assert_eq!(
            kept_file(Path::new("/c"), "boot-shelves", &identity, "bin"),
            // The name Claude Code's hooks have always given it (`.json`
            // until the folders' file ids were kept beside the JSON).
            PathBuf::from("/c/boot-shelves/p-12345678-a67f05684d81b90d.bin")
        );
    }

    /// A boot through new caches lists with the heads its store already
    /// lists through, when they hold some (a long-lived host's warm ones),
    /// and otherwise with those saved for the store.
    #[test]
    fn new_caches_list_through_the_store_s_own_warm_heads() {
        let (temp, store) = one_note();
        let cache = Some(temp.path().join("cache"));
        let warm = Arc::new(HeadCache::with_settle(std::time::Duration::ZERO));
        let listing = store.clone().with_head_cache(Arc::clone(&warm));
        listing
            .list_headers(&ListQuery::default())
            .expect("a listing");
        assert_eq!(warm.len(), 1);
        let caches = BootCaches::new(cache.clone());
        let listed = BootSnapshot::load(&store).expect("a listing").homes;
        assert_eq!(caches.snapshot(&listing).expect("a boot").homes, listed);
        assert!(Arc::ptr_eq(&caches.heads(), &warm));

        let cold = Arc::new(HeadCache::new());
        let caches = BootCaches::new(cache);
        let listing = store.clone().with_head_cache(Arc::clone(&cold));
        assert_eq!(caches.snapshot(&listing).expect("a boot").homes, listed);
        assert!(!Arc::ptr_eq(&caches.heads(), &cold));
    }
}
