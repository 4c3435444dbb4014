//! Change notification for kept heads (Linux `inotify`): a long-lived host
//! lists the same notes call after call, and with the heads kept, the
//! `lstat` of every note is what a listing costs. A [`Watcher`] lets a kept
//! head be served without it while the kernel reports no change that could
//! touch it.
//!
//! What is watched, and what each report does:
//! - every directory a listing walks, opened without following a link and
//!   watched through its open descriptor, so the watch is on the very
//!   directory whose device and inode are recorded. Each listing checks
//!   that every directory's path still leads to that directory (one `lstat`
//!   per directory); one that does not, and any report about a directory
//!   itself (moved, deleted, its attributes), forgets every head below it
//!   and every directory watch below it. A report naming an entry (created,
//!   deleted, moved in or out, its attributes) forgets the heads at and
//!   below that name;
//! - every note whose head is served this way, by inode (not following a
//!   link): a write, a truncation, a change of attributes or link count, a
//!   move or a deletion forgets that head, through whichever name or hard
//!   link the note was changed;
//! - a queue that overflowed, or that cannot be read, forgets every head
//!   and every watch, and watching starts again from nothing.
//!
//! A head is trusted only when the note's watch and its directory's watch
//! were in place before the `lstat` that matched the kept head's stamp, and
//! the note is on the directory's device: any later change is then in the
//! queue, which every listing reads first. Directories on filesystems where
//! changes can happen without a report (network and user-space filesystems,
//! overlays) are not watched; their notes are checked by stamp, as without
//! a watcher. Writes through a shared memory mapping are not reported by
//! the kernel at all; notes are written with `write`.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use super::forget::{Forget, is_at_or_below};

use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};
use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;

/// What a directory is: its device and inode.
pub(super) type DirId = (u64, u64);

/// The most watches kept (directories and notes); past it notes are
/// checked by stamp.
const MAX_WATCHES: usize = 50_000;

/// Filesystems whose every change is reported to a local watch: ext2/3/4,
/// XFS, Btrfs, tmpfs, F2FS, ZFS and bcachefs. Their change time is kept
/// by every write too (see the note heads).
pub(super) const LOCAL_FILESYSTEMS: [i128; 7] = [
    0xEF53,
    0x5846_5342,
    0x9123_683E,
    0x0102_1994,
    0xF2F5_2010,
    0x2FC1_2FC1,
    0xCA45_1A4E,
];

/// The watch of one directory or note.
#[derive(Debug)]
struct Watch {
    /// The paths it was added for (a note with hard links may have more).
    paths: Vec<OsString>,
    /// A directory's identity; `None` for a note.
    dir: Option<DirId>,
}

/// The watches of one cache (see the module's documentation).
pub(super) struct Watcher {
    /// `None` once a new queue could not be made: nothing is watched more.
    queue: Option<OwnedFd>,
    by_wd: HashMap<i32, Watch>,
    /// The directory watches by path.
    dirs: HashMap<OsString, (i32, DirId)>,
    buffer: Vec<MaybeUninit<u8>>,
}

impl std::fmt::Debug for Watcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watcher")
            .field("queue", &self.queue)
            .field("watches", &self.by_wd.len())
            .finish_non_exhaustive()
    }
}

impl Watcher {
    /// A watcher with nothing watched, or `None` when the kernel gives no
    /// queue.
    pub(super) fn new() -> Option<Watcher> {
        let queue = inotify::init(CreateFlags::CLOEXEC | CreateFlags::NONBLOCK).ok()?;
        Some(Watcher {
            queue: Some(queue),
            by_wd: HashMap::new(),
            dirs: HashMap::new(),
            buffer: vec![MaybeUninit::uninit(); 64 * 1024],
        })
    }

    /// Reads every report queued since the last call and says what to
    /// forget; after an overflow or a failed read, every watch is dropped
    /// (a new queue is made) and [`Forget::All`] is the answer.
    pub(super) fn drain(&mut self, forget: &mut Vec<Forget>) {
        let mut reports = Vec::new();
        let mut lost = false;
        if let Some(queue) = &self.queue {
            let mut reader = inotify::Reader::new(queue, &mut self.buffer[..]);
            loop {
                match reader.next() {
                    Ok(event) if event.events().contains(ReadFlags::QUEUE_OVERFLOW) => {
                        lost = true;
                        break;
                    }
                    Ok(event) => reports.push((
                        event.wd(),
                        event
                            .file_name()
                            .map(|name| OsStr::from_bytes(name.to_bytes()).to_owned())
                            .filter(|name| !name.is_empty()),
                    )),
                    Err(Errno::AGAIN) => break,
                    Err(Errno::INTR) => {}
                    Err(_) => {
                        lost = true;
                        break;
                    }
                }
            }
        }
        if lost {
            self.start_again();
            forget.push(Forget::All);
            return;
        }
        for (wd, name) in reports {
            self.report(wd, name, forget);
        }
    }

    /// What one report forgets.
    fn report(&mut self, wd: i32, name: Option<OsString>, forget: &mut Vec<Forget>) {
        // A watch already dropped (its reports can still be queued).
        let Some(watch) = self.by_wd.get(&wd) else {
            return;
        };
        match (watch.dir, name) {
            (Some(_), Some(name)) => {
                let paths: Vec<OsString> = watch
                    .paths
                    .iter()
                    .map(|dir| Path::new(dir).join(&name).into_os_string())
                    .collect();
                for path in paths {
                    self.drop_dirs_below(&path, forget);
                    forget.push(Forget::Below(path));
                }
            }
            // About the directory itself: dropping its watch forgets
            // below each of its paths.
            (Some(_), None) => {
                let paths = watch.paths.clone();
                for path in paths {
                    self.drop_dirs_below(&path, forget);
                }
            }
            (None, _) => {
                if let Some(watch) = self.by_wd.remove(&wd) {
                    self.unwatch(wd);
                    forget.extend(watch.paths.into_iter().map(Forget::Path));
                }
            }
        }
    }

    /// Drops the watches of `path` and of every directory below it, and
    /// forgets what is kept below every path such a watch had (a directory
    /// reached by another path too).
    fn drop_dirs_below(&mut self, path: &OsStr, forget: &mut Vec<Forget>) {
        let below: Vec<i32> = self
            .dirs
            .iter()
            .filter(|(dir, _)| is_at_or_below(dir, path))
            .map(|(_, (wd, _))| *wd)
            .collect();
        for wd in below {
            let Some(watch) = self.by_wd.remove(&wd) else {
                continue;
            };
            self.unwatch(wd);
            for dir in watch.paths {
                self.dirs.remove(&dir);
                forget.push(Forget::Below(dir));
            }
        }
    }

    /// Removes the kernel's watch `wd` (one already gone is no matter).
    fn unwatch(&self, wd: i32) {
        if let Some(queue) = &self.queue {
            let _ = inotify::remove_watch(queue, wd);
        }
    }

    /// Drops every watch: a new, empty queue (or none, when the kernel
    /// gives none, and nothing is watched more).
    fn start_again(&mut self) {
        self.by_wd.clear();
        self.dirs.clear();
        self.queue = None;
        self.queue = inotify::init(CreateFlags::CLOEXEC | CreateFlags::NONBLOCK).ok();
    }

    /// Watches the directory `dir` (if it is not watched yet) and returns
    /// its device when it is watched and its path still leads to the
    /// watched directory; otherwise what was kept below it is to be
    /// forgotten (`forget`) and `None` is returned.
    pub(super) fn watch_dir(&mut self, dir: &Path, forget: &mut Vec<Forget>) -> Option<u64> {
        self.queue.as_ref()?;
        let now = std::fs::symlink_metadata(dir)
            .ok()
            .filter(|meta| meta.is_dir());
        let key = dir.as_os_str();
        if let Some((_, id)) = self.dirs.get(key) {
            if now
                .as_ref()
                .is_some_and(|meta| (meta.dev(), meta.ino()) == *id)
            {
                return Some(id.0);
            }
            self.drop_dirs_below(key, forget);
        }
        now?;
        if self.by_wd.len() >= MAX_WATCHES {
            return None;
        }
        let opened = File::from(
            rustix::fs::open(
                dir,
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .ok()?,
        );
        let meta = opened.metadata().ok()?;
        let id = (meta.dev(), meta.ino());
        let local = rustix::fs::fstatfs(&opened)
            .is_ok_and(|fs| LOCAL_FILESYSTEMS.contains(&i128::from(fs.f_type)));
        if !local {
            return None;
        }
        // The descriptor's own path leads to the very directory opened.
        let by_descriptor = format!("/proc/self/fd/{}", opened.as_raw_fd());
        // Added to whatever watch the directory has: a mask is never narrowed.
        let flags = WatchFlags::MASK_ADD
            | WatchFlags::CREATE
            | WatchFlags::DELETE
            | WatchFlags::MOVED_FROM
            | WatchFlags::MOVED_TO
            | WatchFlags::MOVE_SELF
            | WatchFlags::DELETE_SELF
            | WatchFlags::ATTRIB
            | WatchFlags::ONLYDIR;
        let wd = inotify::add_watch(self.queue.as_ref()?, by_descriptor.as_str(), flags).ok()?;
        // Its path must still lead to it: it is watched from now on, so a
        // later move is reported.
        let still = std::fs::symlink_metadata(dir).is_ok_and(|meta| (meta.dev(), meta.ino()) == id);
        // One directory may be reached by more than one path (a bind mount).
        let watch = self.by_wd.entry(wd).or_insert_with(|| Watch {
            paths: Vec::new(),
            dir: Some(id),
        });
        if !watch.paths.iter().any(|known| known == key) {
            watch.paths.push(key.to_owned());
        }
        self.dirs.insert(key.to_owned(), (wd, id));
        still.then_some(id.0)
    }

    /// Watches the note at `path` (not following a link); whether it is
    /// watched.
    pub(super) fn watch_note(&mut self, path: &Path) -> bool {
        let Some(queue) = &self.queue else {
            return false;
        };
        if self.by_wd.len() >= MAX_WATCHES {
            return false;
        }
        // Added to whatever watch the inode has: a mask is never narrowed.
        let flags = WatchFlags::MASK_ADD
            | WatchFlags::MODIFY
            | WatchFlags::ATTRIB
            | WatchFlags::CLOSE_WRITE
            | WatchFlags::MOVE_SELF
            | WatchFlags::DELETE_SELF
            | WatchFlags::DONT_FOLLOW;
        let Ok(wd) = inotify::add_watch(queue, path, flags) else {
            return false;
        };
        let watch = self.by_wd.entry(wd).or_insert_with(|| Watch {
            paths: Vec::new(),
            dir: None,
        });
        if watch.dir.is_some() {
            // A directory where a note was: not a note's watch.
            return false;
        }
        if !watch.paths.iter().any(|known| known == path.as_os_str()) {
            watch.paths.push(path.as_os_str().to_owned());
        }
        true
    }

    /// How many watches are in place.
    pub(super) fn watches(&self) -> usize {
        self.by_wd.len()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

    use super::*;

    fn drained(watcher: &mut Watcher) -> Vec<Forget> {
        let mut forget = Vec::new();
        watcher.drain(&mut forget);
        forget
    }

    /// The watches the kernel holds for the watcher's queue.
    fn kernel_watches(watcher: &Watcher) -> usize {
        let fd = watcher.queue.as_ref().unwrap().as_raw_fd();
        std::fs::read_to_string(format!("/proc/self/fdinfo/{fd}"))
            .unwrap()
            .lines()
            .filter(|line| line.starts_with("inotify wd:"))
            .count()
    }

    fn below(path: &Path) -> Forget {
        Forget::Below(path.as_os_str().to_owned())
    }

    #[test]
    fn each_report_forgets_what_it_may_have_changed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let sub = root.join("sub");
        std::fs::create_dir(&sub).unwrap();
        let note = sub.join("a.md");
        std::fs::write(&note, "a").unwrap();
        let mut watcher = Watcher::new().unwrap();
        let mut forget = Vec::new();
        let device = std::fs::metadata(&root).unwrap().dev();
        assert_eq!(watcher.watch_dir(&root, &mut forget), Some(device));
        assert_eq!(watcher.watch_dir(&sub, &mut forget), Some(device));
        assert!(watcher.watch_note(&note));
        // Watched again: the same watches.
        assert!(watcher.watch_note(&note));
        assert_eq!(watcher.watch_dir(&sub, &mut forget), Some(device));
        assert_eq!(forget, []);
        assert_eq!((watcher.watches(), kernel_watches(&watcher)), (3, 3));
        assert!(watcher.by_wd.values().all(|watch| watch.paths.len() == 1));
        assert!(format!("{watcher:?}").contains("watches: 3"));
        assert_eq!(drained(&mut watcher), []);

        // A note written through a file still open: that note only, and
        // its watch is gone.
        let mut open = std::fs::File::options().append(true).open(&note).unwrap();
        std::io::Write::write_all(&mut open, b"b").unwrap();
        assert_eq!(drained(&mut watcher), [Forget::Path(note.clone().into())]);
        assert_eq!((watcher.watches(), kernel_watches(&watcher)), (2, 2));
        drop(open);
        // Its attributes changed, once watched again.
        assert!(watcher.watch_note(&note));
        let file = std::fs::File::open(&note).unwrap();
        file.set_modified(std::time::SystemTime::UNIX_EPOCH)
            .unwrap();
        // (A kernel may also report it to the directory, by name.)
        let forgotten = drained(&mut watcher);
        let expected = [Forget::Path(note.clone().into()), below(&note)];
        assert!(forgotten.contains(&expected[0]), "{forgotten:?}");
        assert!(forgotten.iter().all(|forget| expected.contains(forget)));
        assert_eq!(watcher.watches(), 2);

        // An entry created: what is at and below its name.
        std::fs::write(sub.join("b.md"), "b").unwrap();
        assert_eq!(drained(&mut watcher), [below(&sub.join("b.md"))]);
        assert_eq!(watcher.watches(), 2);

        // Renamed (moved out of one name, into another), removed.
        std::fs::rename(sub.join("b.md"), sub.join("c.md")).unwrap();
        assert_eq!(
            drained(&mut watcher),
            [below(&sub.join("b.md")), below(&sub.join("c.md"))]
        );
        std::fs::remove_file(sub.join("c.md")).unwrap();
        assert_eq!(drained(&mut watcher), [below(&sub.join("c.md"))]);
        // Its own attributes changed: everything below it, and its watch
        // is gone until the next listing adds it again.
        let mode = std::fs::metadata(&sub).unwrap().permissions();
        std::fs::set_permissions(&sub, mode.clone()).unwrap();
        let forgotten = drained(&mut watcher);
        assert!(forgotten.contains(&below(&sub)), "{forgotten:?}");
        assert_eq!(watcher.watches(), 1);
        assert_eq!(watcher.watch_dir(&sub, &mut Vec::new()), Some(device));
        assert_eq!(watcher.watches(), 2);

        // A folder moved: everything below it, and its watch is gone.
        std::fs::rename(&sub, root.join("moved")).unwrap();
        let forgotten = drained(&mut watcher);
        assert!(forgotten.contains(&below(&sub)), "{forgotten:?}");
        assert!(
            forgotten.contains(&below(&root.join("moved"))),
            "{forgotten:?}"
        );
        assert_eq!((watcher.watches(), kernel_watches(&watcher)), (1, 1));

        // A path that leads to another folder than the one watched.
        let other = root.join("other");
        std::fs::create_dir(&other).unwrap();
        assert_eq!(watcher.watch_dir(&other, &mut forget), Some(device));
        std::fs::rename(&other, root.join("other-old")).unwrap();
        std::fs::create_dir(&other).unwrap();
        let mut forget = Vec::new();
        assert_eq!(watcher.watch_dir(&other, &mut forget), Some(device));
        assert_eq!(forget, [below(&other)]);
        assert_eq!(watcher.watch_dir(&root.join("missing"), &mut forget), None);
    }

    /// A note's own watch, its folder unwatched: a change through any of
    /// its names forgets it, and a link is watched as the link.
    #[test]
    fn a_note_watch_reports_through_any_name() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let note = root.join("a.md");
        std::fs::write(&note, "a").unwrap();
        let elsewhere = root.join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        let link = elsewhere.join("hard-link.md");
        std::fs::hard_link(&note, &link).unwrap();
        let mut watcher = Watcher::new().unwrap();
        let forgotten = [Forget::Path(note.clone().into())];
        let closed = || drop(std::fs::File::options().write(true).open(&note).unwrap());
        let mode_changed = || {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::Permissions::from_mode(0o600);
            std::fs::set_permissions(&link, mode).unwrap();
        };
        let moved = || std::fs::rename(&link, elsewhere.join("moved.md")).unwrap();
        let changes: [(&str, &dyn Fn()); 3] = [
            ("opened for writing and closed", &closed),
            ("its mode changed through another name", &mode_changed),
            ("its other name moved", &moved),
        ];
        for (change, make) in changes {
            assert!(watcher.watch_note(&note), "{change}");
            assert_eq!(drained(&mut watcher), [], "{change}");
            make();
            assert_eq!(drained(&mut watcher), forgotten, "{change}");
            assert_eq!(watcher.watches(), 0, "{change}");
        }
        // A symbolic link is watched itself, not the note it names.
        let symlink = root.join("symlink.md");
        std::os::unix::fs::symlink(&note, &symlink).unwrap();
        assert!(watcher.watch_note(&symlink));
        std::fs::write(&note, "changed").unwrap();
        assert_eq!(drained(&mut watcher), []);
    }

    /// A folder watched without its parent: its own move and its removal
    /// forget what is below it, by every path it was watched under.
    #[test]
    fn a_folder_watch_reports_its_own_move_and_removal() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let (first, second) = (root.join("a"), root.join("b"));
        std::fs::create_dir(&first).unwrap();
        let device = std::fs::metadata(&root).unwrap().dev();
        let mut watcher = Watcher::new().unwrap();
        assert_eq!(watcher.watch_dir(&first, &mut Vec::new()), Some(device));
        // Moved, and watched under its new path before the report is read:
        // one watch with both paths.
        std::fs::rename(&first, &second).unwrap();
        assert_eq!(watcher.watch_dir(&second, &mut Vec::new()), Some(device));
        assert_eq!((watcher.watches(), kernel_watches(&watcher)), (1, 1));
        let forgotten = drained(&mut watcher);
        assert!(forgotten.contains(&below(&first)), "{forgotten:?}");
        assert!(forgotten.contains(&below(&second)), "{forgotten:?}");
        assert_eq!((watcher.watches(), kernel_watches(&watcher)), (0, 0));
        assert!(watcher.dirs.is_empty());
        assert_eq!(watcher.watch_dir(&second, &mut Vec::new()), Some(device));
        std::fs::remove_dir(&second).unwrap();
        assert!(drained(&mut watcher).contains(&below(&second)));
        assert_eq!(watcher.watches(), 0);
    }

    #[test]
    fn an_overflowed_queue_forgets_everything_and_starts_again() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let notes = [root.join("a.md"), root.join("b.md")];
        for note in &notes {
            std::fs::write(note, "x").unwrap();
        }
        let mut watcher = Watcher::new().unwrap();
        assert!(watcher.watch_dir(&root, &mut Vec::new()).is_some());
        let files = notes.clone().map(|note| {
            assert!(watcher.watch_note(&note));
            std::fs::File::options().write(true).open(&note).unwrap()
        });
        assert_eq!(drained(&mut watcher), []);
        let queued = std::fs::read_to_string("/proc/sys/fs/inotify/max_queued_events")
            .ok()
            .and_then(|max| max.trim().parse::<u64>().ok())
            .unwrap_or(16_384);
        let time = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1 << 30);
        // By turns, so that no report merges with the one before it.
        for turn in 0..queued * 2 + 16 {
            files[(turn % 2) as usize]
                .set_modified(time + std::time::Duration::from_secs(turn))
                .unwrap();
        }
        assert_eq!(drained(&mut watcher), [Forget::All]);
        assert_eq!((watcher.watches(), kernel_watches(&watcher)), (0, 0));
        // The new queue works.
        assert!(watcher.watch_note(&notes[0]));
        std::fs::write(&notes[0], "y").unwrap();
        assert_eq!(
            drained(&mut watcher),
            [Forget::Path(notes[0].clone().into())]
        );
    }
}
