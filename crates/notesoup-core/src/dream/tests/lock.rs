//! The dream lock: exclusion across processes, ownership, idempotence and
//! the last-run stamp.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant, SystemTime};

use jiff::Timestamp;
use notesoup_core::dream::{
    DreamError, DreamLock, LAST_RUN_FILE, LOCK_FILE, LockState, iso_utc, last_run, lock_state,
    remove_stale_lock, run_stamp,
};

use super::support::{hours_before, put, set_mtime, tree_hash};

/// Set in a child process of the race test: the directory to race in.
const RACE_DIR_ENV: &str = "NOTESOUP_TEST_DREAM_LOCK_RACE";
const RACE_TEST: &str = "dream::tests::lock::two_processes_race_for_the_lock_and_exactly_one_wins";

fn now() -> Timestamp {
    "2026-09-15T09:31:45.392Z".parse().expect("timestamp")
}

/// Waits for `path` to exist; the deadline only keeps a broken test from
/// hanging forever.
fn wait_for(path: &Path) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while !path.exists() {
        assert!(
            Instant::now() < deadline,
            "gave up waiting for {}",
            path.display()
        );
        sleep(Duration::from_millis(2));
    }
}

/// The child side of the race: announce readiness, wait for the start
/// signal, try the lock, report, and (as the winner) hold it until told.
fn race_child(dir: &Path) {
    let pid = std::process::id();
    let home = dir.join("home");
    fs::write(dir.join(format!("ready-{pid}")), "").expect("ready");
    wait_for(&dir.join("go"));
    let outcome = DreamLock::acquire(&home, Timestamp::now());
    let result = match &outcome {
        Ok(lock) => format!("won {}", lock.content()),
        Err(err) => format!("lost {err}"),
    };
    fs::write(dir.join(format!("result-{pid}.tmp")), result).expect("result");
    fs::rename(
        dir.join(format!("result-{pid}.tmp")),
        dir.join(format!("result-{pid}")),
    )
    .expect("publish result");
    if let Ok(mut lock) = outcome {
        wait_for(&dir.join("done"));
        lock.release().expect("release");
    }
}

#[test]
fn two_processes_race_for_the_lock_and_exactly_one_wins() {
    if let Ok(dir) = std::env::var(RACE_DIR_ENV) {
        race_child(Path::new(&dir));
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    fs::create_dir(&home).expect("home");
    let exe = std::env::current_exe().expect("test binary");
    let children: Vec<_> = (0..2)
        .map(|_| {
            Command::new(&exe)
                .args([RACE_TEST, "--exact", "--nocapture", "--test-threads=1"])
                .env(RACE_DIR_ENV, dir.path())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn child")
        })
        .collect();
    let pids: Vec<u32> = children.iter().map(std::process::Child::id).collect();
    for pid in &pids {
        wait_for(&dir.path().join(format!("ready-{pid}")));
    }
    fs::write(dir.path().join("go"), "").expect("go");
    let results: Vec<String> = pids
        .iter()
        .map(|pid| {
            let path = dir.path().join(format!("result-{pid}"));
            wait_for(&path);
            fs::read_to_string(path).expect("read result")
        })
        .collect();

    let winners: Vec<&String> = results
        .iter()
        .filter(|result| result.starts_with("won "))
        .collect();
    let losers: Vec<&String> = results
        .iter()
        .filter(|result| result.starts_with("lost "))
        .collect();
    assert_eq!(winners.len(), 1, "exactly one winner: {results:?}");
    assert_eq!(
        losers,
        ["lost lock gate: lock held by a running dream"],
        "{results:?}"
    );
    // The loser changed nothing: the lock is the winner's, and only the
    // winner's lock and stamp exist.
    let lock = fs::read_to_string(home.join(LOCK_FILE)).expect("lock");
    assert_eq!(format!("won {lock}"), *winners[0]);
    let mut names: Vec<String> = fs::read_dir(&home)
        .expect("list home")
        .map(|entry| {
            entry
                .expect("entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    assert_eq!(names, [LOCK_FILE, LAST_RUN_FILE]);

    fs::write(dir.path().join("done"), "").expect("done");
    for child in children {
        let output = child.wait_with_output().expect("wait child");
        assert!(
            output.status.success(),
            "child failed:\n{}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    assert!(
        !home.join(LOCK_FILE).exists(),
        "the winner released its lock"
    );
    assert!(
        home.join(LAST_RUN_FILE).exists(),
        "a released run keeps its stamp"
    );
}

#[test]
fn a_held_lock_refuses_and_changes_nothing() {
    let home = tempfile::tempdir().expect("tempdir");
    let held = DreamLock::acquire(home.path(), now()).expect("first run");
    let before = tree_hash(home.path());
    let refused = DreamLock::acquire(home.path(), now()).expect_err("lock is held");
    assert!(matches!(refused, DreamError::LockHeld));
    assert_eq!(
        refused.to_string(),
        "lock gate: lock held by a running dream"
    );
    assert_eq!(refused.code(), "lock_held");
    assert_eq!(tree_hash(home.path()), before);
    assert_eq!(
        lock_state(home.path()),
        LockState::Held(held.content().to_owned())
    );
}

#[test]
fn a_lock_nothing_holds_is_stale_and_taken_over_whatever_its_content() {
    for content in ["", "garbage\n", "1 00000000-0000-0000-0000-000000000000"] {
        let home = tempfile::tempdir().expect("tempdir");
        let lock = put(home.path(), LOCK_FILE, content);
        set_mtime(&lock, hours_before(SystemTime::now(), 24 * 365));
        assert_eq!(
            lock_state(home.path()),
            LockState::Stale(content.to_owned())
        );
        let mut taken = DreamLock::acquire(home.path(), now()).expect("stale lock taken over");
        assert_eq!(taken.stale(), Some(content), "{content:?}");
        assert_eq!(
            fs::read_to_string(&lock).expect("lock"),
            taken.content(),
            "the lock now holds this run's content"
        );
        taken.release().expect("release");
        assert!(!lock.exists());
    }
    // A run that found no lock took over nothing.
    let home = tempfile::tempdir().expect("tempdir");
    let fresh = DreamLock::acquire(home.path(), now()).expect("acquire");
    assert_eq!(fresh.stale(), None);
}

#[cfg(unix)]
#[test]
fn a_symlinked_lock_is_never_followed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    fs::create_dir(&home).expect("home");
    let target = put(dir.path(), "elsewhere", "keep me");
    std::os::unix::fs::symlink(&target, home.join(LOCK_FILE)).expect("symlink");
    let refused = DreamLock::acquire(&home, now()).expect_err("a symlink is no lock");
    assert_eq!(refused.code(), "io_error", "{refused}");
    assert!(refused.to_string().contains("symbolic links"), "{refused}");
    assert_eq!(fs::read_to_string(&target).expect("target"), "keep me");
    assert!(matches!(lock_state(&home), LockState::Unusable(_)));
}

/// What a home's lock says, and which locks are removed as stale: no file
/// is absent (nothing to remove), a directory in its place or a home that
/// is no directory is unusable (a person must look; removing refuses), a
/// file nothing holds is stale (removed), a held one is left.
#[test]
fn the_lock_state_names_each_kind_of_lock() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    fs::create_dir(&home).expect("home");
    assert_eq!(lock_state(&home), LockState::Absent);
    assert!(!remove_stale_lock(&home).expect("nothing to remove"));

    fs::create_dir(home.join(LOCK_FILE)).expect("a directory as the lock");
    assert_eq!(
        lock_state(&home),
        LockState::Unusable("not a regular file".to_owned())
    );
    fs::remove_dir(home.join(LOCK_FILE)).expect("remove");

    let not_a_dir = put(dir.path(), "file", "x");
    assert!(
        matches!(lock_state(&not_a_dir), LockState::Unusable(why) if why.contains("Not a directory")),
        "{:?}",
        lock_state(&not_a_dir)
    );
    let refused = remove_stale_lock(&not_a_dir).expect_err("no lock can be opened there");
    assert_eq!(refused.code(), "io_error", "{refused}");

    let mut held = DreamLock::acquire(&home, now()).expect("acquire");
    assert!(!remove_stale_lock(&home).expect("a held lock is left"));
    assert!(home.join(LOCK_FILE).exists());
    held.release().expect("release");
    put(&home, LOCK_FILE, "1 gone");
    assert_eq!(lock_state(&home), LockState::Stale("1 gone".to_owned()));
    assert!(remove_stale_lock(&home).expect("a stale lock is removed"));
    assert_eq!(lock_state(&home), LockState::Absent);
}

/// A home that is not there is the system's own error, not a lock that
/// kept being removed.
#[test]
fn a_lock_in_a_missing_home_is_the_system_s_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let refused = DreamLock::acquire(&dir.path().join("missing"), now()).expect_err("no home");
    assert_eq!(refused.code(), "io_error", "{refused}");
    assert!(refused.to_string().contains("No such file"), "{refused}");
}

/// Removes the file at `path` and makes a directory there.
fn directory_in_place_of(path: &Path) {
    fs::remove_file(path).expect("removed by hand");
    fs::create_dir(path).expect("a directory in its place");
}

/// A run's lock removed from under it (by a person) is released all the
/// same; one replaced by a copy of it is left (it is another file), and
/// one replaced by something that cannot be read is an error, and what
/// replaced it stays.
#[test]
fn a_release_whose_lock_was_removed_or_replaced() {
    let home = tempfile::tempdir().expect("tempdir");
    let lock = home.path().join(LOCK_FILE);
    let mut run = DreamLock::acquire(home.path(), now()).expect("acquire");
    fs::remove_file(&lock).expect("removed by hand");
    run.release().expect("nothing left to remove");

    // A copy of the run's lock put in its place is another file, not this
    // run's: it stays.
    let mut run = DreamLock::acquire(home.path(), now()).expect("acquire again");
    let content = fs::read(&lock).expect("lock");
    fs::remove_file(&lock).expect("removed by hand");
    fs::write(&lock, &content).expect("a copy in its place");
    run.release().expect("release");
    assert_eq!(fs::read(&lock).expect("the copy stays"), content);
    fs::remove_file(&lock).expect("remove the copy");

    let mut run = DreamLock::acquire(home.path(), now()).expect("acquire again");
    directory_in_place_of(&lock);
    let refused = run.release().expect_err("the lock cannot be read");
    assert_eq!(refused.code(), "io_error", "{refused}");
    assert!(lock.is_dir());
}

/// Set in a child process of the SIGKILL test: the home to lock, then hold.
const KILLED_HOME_ENV: &str = "NOTESOUP_TEST_DREAM_LOCK_KILLED";
const KILLED_TEST: &str = "dream::tests::lock::a_lock_left_by_a_killed_dream_is_taken_over";

#[test]
fn a_lock_left_by_a_killed_dream_is_taken_over() {
    if let Ok(home) = std::env::var(KILLED_HOME_ENV) {
        // The child: take the lock, say so, and hold it until killed.
        let home = Path::new(&home);
        let lock = DreamLock::acquire(home, Timestamp::now()).expect("child takes the lock");
        // Written whole, then renamed: the parent waits for the name and
        // must never read a half-written pid.
        fs::write(home.join("locked.tmp"), lock.content()).expect("announce");
        fs::rename(home.join("locked.tmp"), home.join("locked")).expect("announce");
        loop {
            sleep(Duration::from_secs(3600));
        }
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    fs::create_dir(&home).expect("home");
    let mut child = Command::new(std::env::current_exe().expect("test binary"))
        .args([KILLED_TEST, "--exact", "--nocapture", "--test-threads=1"])
        .env(KILLED_HOME_ENV, &home)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn child");
    wait_for(&home.join("locked"));
    let content = fs::read_to_string(home.join("locked")).expect("child's content");
    assert!(
        content.starts_with(&format!("{} ", child.id())),
        "{content}"
    );

    // While the child lives, its lock refuses.
    let refused = DreamLock::acquire(&home, now()).expect_err("held by the child");
    assert!(matches!(refused, DreamError::LockHeld));
    assert_eq!(lock_state(&home), LockState::Held(content.clone()));

    // SIGKILL: the child runs no cleanup, its lock file stays behind.
    child.kill().expect("SIGKILL the child");
    child.wait().expect("reap the child");
    assert_eq!(
        fs::read_to_string(home.join(LOCK_FILE)).expect("left behind"),
        content
    );
    assert_eq!(lock_state(&home), LockState::Stale(content.clone()));

    let mut next = DreamLock::acquire(&home, now()).expect("the next run takes it over");
    assert_eq!(next.stale(), Some(content.as_str()));
    assert_ne!(next.content(), content);
    next.release().expect("release");
    assert!(!home.join(LOCK_FILE).exists());
}

#[test]
fn acquisition_writes_the_lock_and_the_stamp() {
    let home = tempfile::tempdir().expect("tempdir");
    let lock = DreamLock::acquire(home.path(), now()).expect("acquire");
    let content = fs::read_to_string(home.path().join(LOCK_FILE)).expect("lock");
    assert_eq!(content, lock.content());
    let (pid, token) = content.split_once(' ').expect("pid and token");
    assert_eq!(pid, std::process::id().to_string());
    assert!(uuid::Uuid::parse_str(token).is_ok(), "{token}");
    assert_eq!(
        fs::read_to_string(home.path().join(LAST_RUN_FILE)).expect("stamp"),
        "2026-09-15T09:31:45.392Z"
    );
    assert_eq!(last_run(home.path()), Some(SystemTime::from(now())));
    assert_eq!(lock.stamp(), "2026-09-15T09-31-45-392Z");
    assert_eq!(lock.started_at(), now());
}

#[test]
fn iso_and_stamp_match_javascript() {
    let check = |at: &str, iso: &str, stamp: &str| {
        let at: Timestamp = at.parse().expect("timestamp");
        assert_eq!(iso_utc(at), iso);
        assert_eq!(run_stamp(at), stamp);
    };
    check(
        "2026-09-15T09:31:45Z",
        "2026-09-15T09:31:45.000Z",
        "2026-09-15T09-31-45-000Z",
    );
    check(
        "2026-09-15T17:31:45.392+08:00",
        "2026-09-15T09:31:45.392Z",
        "2026-09-15T09-31-45-392Z",
    );
    check(
        "2026-01-02T03:04:05.678912Z",
        "2026-01-02T03:04:05.678Z",
        "2026-01-02T03-04-05-678Z",
    );
}

#[test]
fn release_and_fail_remove_only_this_runs_lock_and_are_idempotent() {
    let home = tempfile::tempdir().expect("tempdir");
    let lock_path = home.path().join(LOCK_FILE);

    let mut lock = DreamLock::acquire(home.path(), now()).expect("acquire");
    lock.release().expect("release");
    assert!(!lock_path.exists());
    lock.release().expect("release again");
    lock.fail().expect("fail after release is a no-op");
    assert!(
        home.path().join(LAST_RUN_FILE).exists(),
        "fail after release keeps the stamp"
    );

    // A lock whose content changed is someone else's: neither removes it.
    let mut lock = DreamLock::acquire(home.path(), now()).expect("acquire");
    fs::write(&lock_path, "4242 someone-else").expect("replace lock");
    lock.release().expect("release");
    assert_eq!(
        fs::read_to_string(&lock_path).expect("lock"),
        "4242 someone-else"
    );
    fs::remove_file(&lock_path).expect("remove");

    let mut lock = DreamLock::acquire(home.path(), now()).expect("acquire");
    fs::write(&lock_path, "4242 someone-else").expect("replace lock");
    lock.fail().expect("fail");
    lock.fail().expect("fail again");
    assert_eq!(
        fs::read_to_string(&lock_path).expect("lock"),
        "4242 someone-else"
    );
}

#[test]
fn a_failed_run_restores_the_previous_stamp() {
    let home = tempfile::tempdir().expect("tempdir");
    let stamp = put(home.path(), LAST_RUN_FILE, "2026-09-01T00:00:00.000Z");
    let previous = hours_before(SystemTime::from(now()), 14 * 24);
    set_mtime(&stamp, previous);

    let mut lock = DreamLock::acquire(home.path(), now()).expect("acquire");
    assert_eq!(
        fs::read_to_string(&stamp).expect("stamp"),
        "2026-09-15T09:31:45.392Z"
    );
    assert_ne!(last_run(home.path()), Some(previous));
    lock.fail().expect("fail");
    assert_eq!(
        fs::read_to_string(&stamp).expect("stamp"),
        "2026-09-01T00:00:00.000Z"
    );
    assert_eq!(last_run(home.path()), Some(previous));
    assert!(!home.path().join(LOCK_FILE).exists());
    lock.fail().expect("idempotent");
    assert_eq!(last_run(home.path()), Some(previous));
}

#[test]
fn a_failed_first_run_removes_the_stamp_it_created() {
    let home = tempfile::tempdir().expect("tempdir");
    let mut lock = DreamLock::acquire(home.path(), now()).expect("acquire");
    assert!(home.path().join(LAST_RUN_FILE).exists());
    lock.fail().expect("fail");
    assert!(!home.path().join(LAST_RUN_FILE).exists());
    assert!(!home.path().join(LOCK_FILE).exists());
    assert_eq!(fs::read_dir(home.path()).expect("list").count(), 0);

    // The stamp already gone is nothing to remove; one that cannot be
    // removed (a directory put in its place) is the failure's error.
    let stamp = home.path().join(LAST_RUN_FILE);
    let mut lock = DreamLock::acquire(home.path(), now()).expect("acquire");
    fs::remove_file(&stamp).expect("removed by hand");
    lock.fail().expect("nothing to remove");
    let mut lock = DreamLock::acquire(home.path(), now()).expect("acquire");
    directory_in_place_of(&stamp);
    let refused = lock.fail().expect_err("the stamp cannot be removed");
    assert_eq!(refused.code(), "io_error", "{refused}");
    assert!(stamp.is_dir());
}

/// A stamp planted as a link is not written through: the dream runs, and
/// the file it points to keeps its bytes.
#[cfg(target_os = "linux")]
#[test]
fn a_stamp_planted_as_a_link_is_never_written_through() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    let outside = put(dir.path(), "outside/target", "untouched");
    fs::create_dir_all(&home).expect("home");
    std::os::unix::fs::symlink(&outside, home.join(LAST_RUN_FILE)).expect("planted link");
    let mut lock = DreamLock::acquire(&home, now()).expect("the lock is taken");
    assert_eq!(fs::read_to_string(&outside).expect("outside"), "untouched");
    let _ = lock.fail();
    assert_eq!(fs::read_to_string(&outside).expect("outside"), "untouched");
}

/// A stamp that cannot be read (a directory under its name) is left as it
/// is: the run neither writes it nor, failing, removes it.
#[test]
fn a_stamp_that_cannot_be_read_is_left_alone() {
    let home = tempfile::tempdir().expect("tempdir");
    let stamp = home.path().join(LAST_RUN_FILE);
    fs::create_dir(&stamp).expect("a directory as the stamp");
    let mut lock = DreamLock::acquire(home.path(), now()).expect("the lock is taken");
    lock.fail().expect("a failed run leaves the stamp alone");
    assert!(stamp.is_dir());
}
