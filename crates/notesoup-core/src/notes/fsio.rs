//! The per-file queue of the store: one operation per note file at a time
//! inside the process. The cross-process lock, the link-refusing resolution
//! and the durable write are the open directories' (see
//! [`super::beneath`]).

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::Path;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

/// Holders and waiters of each busy file; an idle key is removed. Keys are
/// the paths' bytes: `Path`'s own order compares component by component,
/// which costs more than the rest of a turn, and any total order serves.
static QUEUE: Mutex<BTreeMap<OsString, Slot>> = Mutex::new(BTreeMap::new());
static QUEUE_WAKE: Condvar = Condvar::new();

#[derive(Debug)]
struct Slot {
    held: bool,
    users: usize,
}

fn queue() -> MutexGuard<'static, BTreeMap<OsString, Slot>> {
    QUEUE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Exclusive in-process turns on one or more files, taken in sorted order
/// (so two renames can never deadlock) and released on drop.
#[derive(Debug)]
pub(crate) struct FileTurns {
    keys: Vec<OsString>,
}

impl FileTurns {
    /// Waits for and takes the turn of every path (duplicates count once).
    pub(crate) fn take(paths: &[&Path]) -> FileTurns {
        let mut keys: Vec<OsString> = paths
            .iter()
            .map(|path| path.as_os_str().to_owned())
            .collect();
        keys.sort();
        keys.dedup();
        for key in &keys {
            take_turn(key);
        }
        FileTurns { keys }
    }
}

/// Waits until `key` is free and marks it held.
fn take_turn(key: &OsStr) {
    let mut map = queue();
    match map.get_mut(key) {
        Some(slot) => slot.users += 1,
        None => {
            map.insert(
                key.to_owned(),
                Slot {
                    held: false,
                    users: 1,
                },
            );
        }
    }
    while map.get(key).is_some_and(|slot| slot.held) {
        map = QUEUE_WAKE.wait(map).unwrap_or_else(PoisonError::into_inner);
    }
    if let Some(slot) = map.get_mut(key) {
        slot.held = true;
    }
}

impl Drop for FileTurns {
    fn drop(&mut self) {
        let mut map = queue();
        let mut waiters = false;
        for key in &self.keys {
            if let Some(slot) = map.get_mut(key) {
                slot.held = false;
                slot.users -= 1;
                if slot.users == 0 {
                    map.remove(key);
                } else {
                    waiters = true;
                }
            }
        }
        drop(map);
        // Waking is a system call; the common turn (a listing's read of a
        // file nobody else touches) has no one to wake.
        if waiters {
            QUEUE_WAKE.notify_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turns_are_exclusive_and_idle_keys_are_removed() {
        let dir = tempfile::tempdir().expect("temp");
        let key = dir.path().join("note.md");
        let counter = Mutex::new((0usize, 0usize));
        std::thread::scope(|scope| {
            for _ in 0..4 {
                scope.spawn(|| {
                    for _ in 0..50 {
                        let _turn = FileTurns::take(&[&key, &key]);
                        let mut seen = counter.lock().expect("counter");
                        seen.0 += 1;
                        seen.1 = seen.1.max(seen.0);
                        drop(seen);
                        std::thread::yield_now();
                        counter.lock().expect("counter").0 -= 1;
                    }
                });
            }
        });
        assert_eq!(
            counter.lock().expect("counter").1,
            1,
            "never two holders at once"
        );
        assert!(
            !queue().contains_key(key.as_os_str()),
            "the idle key was removed"
        );
    }
}
