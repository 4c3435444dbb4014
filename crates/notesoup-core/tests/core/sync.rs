//! Sync over real Git: two notes roots and a bare remote on one machine
//! (and a `git daemon` on 127.0.0.1), each root its own "machine".

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use notesoup_core::dream::doctor;
use notesoup_core::sync::{NotesSync, SyncConfig, SyncReport};
use notesoup_test_support::child::{Reaped, free_port};
use notesoup_test_support::files::put;
use proptest::prelude::*;
use tempfile::TempDir;

/// Two roots (`a`, `b`) syncing with one bare remote.
struct Pair {
    _dir: TempDir,
    a: PathBuf,
    b: PathBuf,
    remote: PathBuf,
}

fn git(args: &[&str], dir: &Path) -> String {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// `git commit --quiet ARGS` in `dir`, as a person would, not a sync.
fn commit_by_hand(dir: &Path, args: &[&str]) -> String {
    let mut all = vec![
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "--quiet",
    ];
    all.extend_from_slice(args);
    git(&all, dir)
}

fn pair() -> Pair {
    let dir = tempfile::tempdir().expect("temp dir");
    let remote = dir.path().join("remote.git");
    git(&["init", "--quiet", "--bare", "remote.git"], dir.path());
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    for root in [&a, &b] {
        fs::create_dir_all(root).expect("root");
        let url = remote.to_str().expect("utf-8 path");
        setup(root, &SyncConfig::new(url, None).expect("config"));
    }
    Pair {
        _dir: dir,
        a,
        b,
        remote,
    }
}

/// A pair whose roots both hold `files`: written on `a`, synced to `b`.
fn shared_pair(files: &[(&str, &str)]) -> Pair {
    let pair = pair();
    for (path, text) in files {
        write(&pair.a, path, text);
    }
    sync(&pair.a);
    sync(&pair.b);
    pair
}

/// Sync of `root` as the machine its folder names.
fn notes_sync(root: &Path) -> NotesSync {
    let machine = root.file_name().and_then(|n| n.to_str()).unwrap_or("x");
    NotesSync::open(root)
        .by("Test", "tester")
        .on_machine(machine)
}

fn sync(root: &Path) -> SyncReport {
    notes_sync(root).run().expect("sync")
}

fn setup(root: &Path, config: &SyncConfig) {
    NotesSync::open(root).setup(config).expect("set up");
}

fn write(root: &Path, path: &str, text: &str) {
    put(&root.join(path), text);
}

fn read(root: &Path, path: &str) -> String {
    fs::read_to_string(root.join(path)).unwrap_or_else(|err| panic!("{path}: {err}"))
}

fn note(fields: &str, body: &str) -> String {
    format!("---\n{fields}---\n\n{body}")
}

const FIELDS: &str = "origin: self\ncreatedAt: 2026-01-01T00:00:00.000+00:00\nupdatedAt: 2026-01-01T00:00:00.000+00:00\nlastAccessed: 2026-01-01T00:00:00.000+00:00\naccessCount: 2\n";

/// Every synced note of a root (what travels), by path.
fn notes_of(root: &Path) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for home in ["project", "human", "agents", "models"] {
        let dir = root.join(home);
        if !dir.exists() {
            continue;
        }
        for entry in walkdir::WalkDir::new(&dir).sort_by_file_name() {
            let entry = entry.expect("walk");
            if entry.file_type().is_file() {
                let rel = entry
                    .path()
                    .strip_prefix(root)
                    .expect("below")
                    .to_string_lossy()
                    .into_owned();
                found.push((rel, fs::read_to_string(entry.path()).expect("read")));
            }
        }
    }
    found
}

#[test]
fn a_note_written_on_one_machine_appears_on_the_other() {
    let pair = pair();
    write(
        &pair.a,
        "human/prefs.md",
        &note(FIELDS, "tabs, not spaces\n"),
    );
    write(
        &pair.a,
        "project/shop-0123abcd/MAP.md",
        "- `@project/db.md`: the database\n",
    );
    let sent = sync(&pair.a);
    assert_eq!(sent.committed, 2);
    assert!(sent.pushed);
    let got = sync(&pair.b);
    assert_eq!(
        read(&pair.b, "human/prefs.md"),
        note(FIELDS, "tabs, not spaces\n")
    );
    assert_eq!(
        read(&pair.b, "project/shop-0123abcd/MAP.md"),
        "- `@project/db.md`: the database\n"
    );
    assert_eq!(got.received.len(), 2);
    // The remote's commits name the machine, host and agent.
    let log = git(&["log", "--format=%an <%ae>", "main"], &pair.remote);
    assert!(log.contains("tester (Test) on a <notesoup@a>"), "{log}");
    // Nothing left to do on either side.
    let again = sync(&pair.b);
    assert_eq!(again.committed, 0);
    assert!(!again.pushed);
    let status = notes_sync(&pair.a).status().expect("status");
    assert_eq!((status.ahead, status.behind, status.changed), (0, 0, 0));
    sync(&pair.a);
    assert_eq!(notes_of(&pair.a), notes_of(&pair.b));
}

#[test]
fn the_dream_audit_and_sync_keep_to_their_own_repositories() {
    let pair = pair();
    write(&pair.a, "human/a.md", &note(FIELDS, "a\n"));
    notesoup_core::dream::audit_commit(&pair.a, "baseline").expect("audit");
    sync(&pair.a);
    notesoup_core::dream::audit_commit(&pair.a, "dream").expect("audit");
    let audited = git(&["ls-tree", "-r", "--name-only", "HEAD"], &pair.a);
    assert_eq!(audited, "human/a.md\n");
    // The remote holds notes only, never the audit's history.
    assert_eq!(git(&["rev-list", "--count", "main"], &pair.remote), "1\n");
    sync(&pair.b);
    assert!(!pair.b.join(".git").exists());
    assert_eq!(read(&pair.b, "human/a.md"), note(FIELDS, "a\n"));
    // doctor takes .sync for what it is.
    let report = doctor(&pair.a);
    assert!(report.findings.is_empty(), "{:?}", report.findings);
}

#[test]
fn session_notes_and_excluded_paths_stay_home() {
    let pair = pair();
    let url = pair.remote.to_str().expect("utf-8");
    let mut config = SyncConfig::new(url, None).expect("config");
    config.exclude = vec!["human/private".to_owned()];
    setup(&pair.a, &config);
    write(&pair.a, "pi/session/s1/checkpoint.md", "where I was\n");
    write(&pair.a, "human/private/diary.md", "mine only\n");
    write(&pair.a, "human/shared.md", "for everyone\n");
    sync(&pair.a);
    let files = git(&["ls-tree", "-r", "--name-only", "main"], &pair.remote);
    assert_eq!(files, "human/shared.md\n");
    sync(&pair.b);
    assert!(!pair.b.join("pi").exists());
    assert!(!pair.b.join("human/private").exists());
}

#[test]
fn both_sides_edits_merge_field_by_field_and_line_by_line() {
    let base_body = "# Deploy\n\nstep one\nstep two\nstep three\n";
    let pair = shared_pair(&[
        ("human/deploy.md", &note(FIELDS, base_body)),
        ("human/MAP.md", "- `@human/deploy.md`: deploying\n"),
    ]);

    // A edits the top and is read twice; B edits the bottom, read once,
    // and adds an unknown field.
    let a_fields = "origin: self\ncreatedAt: 2026-01-01T00:00:00.000+00:00\nupdatedAt: 2026-02-01T00:00:00.000+00:00\nlastAccessed: 2026-02-03T00:00:00.000+00:00\naccessCount: 4\n";
    write(
        &pair.a,
        "human/deploy.md",
        &note(
            a_fields,
            "# Deploy\n\nstep one (with care)\nstep two\nstep three\n",
        ),
    );
    write(
        &pair.a,
        "human/MAP.md",
        "- `@human/deploy.md`: deploying\n- `@human/a.md`: from a\n",
    );
    let b_fields = "origin: user\ncreatedAt: 2025-12-31T00:00:00.000+00:00\nupdatedAt: 2026-02-02T00:00:00.000+00:00\nlastAccessed: 2026-02-01T00:00:00.000+00:00\naccessCount: 3\nstatus: active\n";
    write(
        &pair.b,
        "human/deploy.md",
        &note(
            b_fields,
            "# Deploy\n\nstep one\nstep two\nstep three, then check\n",
        ),
    );
    write(
        &pair.b,
        "human/MAP.md",
        "- `@human/deploy.md`: deploying\n- `@human/b.md`: from b\n",
    );
    sync(&pair.a);
    let merged = sync(&pair.b);
    assert_eq!(merged.conflicts().len(), 0, "{merged:?}");
    let want = note(
        "origin: user\ncreatedAt: 2025-12-31T00:00:00.000+00:00\nupdatedAt: 2026-02-02T00:00:00.000+00:00\nlastAccessed: 2026-02-03T00:00:00.000+00:00\naccessCount: 5\nstatus: active\n",
        "# Deploy\n\nstep one (with care)\nstep two\nstep three, then check\n",
    );
    assert_eq!(read(&pair.b, "human/deploy.md"), want);
    assert_eq!(
        read(&pair.b, "human/MAP.md"),
        "- `@human/deploy.md`: deploying\n- `@human/b.md`: from b\n- `@human/a.md`: from a\n"
    );
    sync(&pair.a);
    assert_eq!(read(&pair.a, "human/deploy.md"), want);
    assert_eq!(notes_of(&pair.a), notes_of(&pair.b));
}

#[test]
fn a_conflicting_body_keeps_ours_and_puts_theirs_beside_it() {
    let pair = shared_pair(&[("human/db.md", &note(FIELDS, "port 5432\n"))]);
    write(&pair.a, "human/db.md", &note(FIELDS, "port 5433\n"));
    write(&pair.b, "human/db.md", &note(FIELDS, "port 6543\n"));
    sync(&pair.a);
    let report = sync(&pair.b);
    assert_eq!(report.conflicts().len(), 1, "{report:?}");
    let (_, side) = report.conflicts().next().expect("a conflict");
    let side = &side.to_owned();
    assert!(
        side.starts_with("human/db.conflict-from-a-") && side.ends_with(".md"),
        "{side}"
    );
    assert_eq!(read(&pair.b, "human/db.md"), note(FIELDS, "port 6543\n"));
    assert_eq!(read(&pair.b, side), note(FIELDS, "port 5433\n"));
    assert!(!read(&pair.b, "human/db.md").contains("<<<<<<<"));
    // doctor names it, on both machines once they synced.
    let report = doctor(&pair.b);
    let finding = report
        .findings
        .iter()
        .find(|finding| finding.path == *side)
        .unwrap_or_else(|| panic!("{:?}", report.findings));
    assert!(
        finding.message.contains("unresolved sync conflict"),
        "{}",
        finding.message
    );
    sync(&pair.a);
    let status = notes_sync(&pair.a).status().expect("status");
    assert_eq!(status.conflicts, vec![side.clone()]);
    assert_eq!(notes_of(&pair.a), notes_of(&pair.b));
}

#[test]
fn crumpled_on_one_side_and_edited_on_the_other_stays_live() {
    let pair = shared_pair(&[("human/old.md", &note(FIELDS, "one\n"))]);
    write(
        &pair.a,
        "human/old.md",
        &note(
            &format!("{FIELDS}crumpledAt: 2026-03-01T00:00:00.000+00:00\n"),
            "one\n",
        ),
    );
    write(&pair.b, "human/old.md", &note(FIELDS, "one\ntwo\n"));
    // A rename on A travels as a move.
    write(&pair.a, "human/keep.md", &note(FIELDS, "kept\n"));
    sync(&pair.a);
    sync(&pair.b);
    fs::rename(pair.b.join("human/keep.md"), pair.b.join("human/kept.md")).expect("rename");
    sync(&pair.b);
    sync(&pair.a);
    let text = read(&pair.a, "human/old.md");
    assert!(!text.contains("crumpledAt"), "{text}");
    assert!(text.ends_with("\none\ntwo\n"), "{text}");
    assert!(!pair.a.join("human/keep.md").exists());
    assert_eq!(read(&pair.a, "human/kept.md"), note(FIELDS, "kept\n"));
}

#[test]
fn a_secret_stops_the_push_and_names_the_note() {
    let pair = pair();
    write(&pair.a, "human/ok.md", "fine\n");
    sync(&pair.a);
    let key = "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEQ";
    let token = format!("ghp_{}", "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8");
    let _ = key;
    write(&pair.a, "human/creds.md", &format!("the token: {token}\n"));
    let before = git(&["rev-parse", "main"], &pair.remote);
    let err = notes_sync(&pair.a).run().expect_err("refused");
    assert_eq!(err.code(), "secret_detected", "{err}");
    let message = err.to_string();
    assert!(message.contains("human/creds.md"), "{message}");
    assert!(!message.contains(&token), "{message}");
    assert_eq!(git(&["rev-parse", "main"], &pair.remote), before);
    assert_eq!(
        read(&pair.a, "human/creds.md"),
        format!("the token: {token}\n")
    );
    // The sync repository never took it in either.
    let objects = git(
        &["cat-file", "--batch-all-objects", "--batch"],
        &pair.a.join(".sync/repo.git"),
    );
    assert!(!objects.contains(&token));
}

#[test]
fn a_missing_remote_is_a_clear_error_with_a_code() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("a");
    let missing = dir.path().join("nowhere.git");
    setup(
        &root,
        &SyncConfig::new(missing.to_str().expect("utf-8"), None).expect("config"),
    );
    write(&root, "human/x.md", "x\n");
    let err = notes_sync(&root).run().expect_err("unreachable");
    assert_eq!(err.code(), "remote_unreachable", "{err}");
    let unset = tempfile::tempdir().expect("temp dir");
    let err = notes_sync(unset.path()).run().expect_err("no set-up");
    assert_eq!(err.code(), "not_configured");
    let err = SyncConfig::new("--upload-pack=evil", None).expect_err("refused");
    assert_eq!(err.code(), "invalid");
}

#[test]
fn a_set_up_that_is_not_a_small_regular_file_is_refused_with_a_code() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("a");
    let config = SyncConfig::new("/srv/notes.git", None).expect("config");
    setup(&root, &config);
    let file = root.join(".sync/config.json");
    assert_eq!(NotesSync::open(&root).config().expect("read"), Some(config));
    let refused = |what: &str| {
        let err = NotesSync::open(&root).config().expect_err(what);
        assert_eq!(err.code(), "invalid_config", "{what}: {err}");
        err.to_string()
    };
    // A link to a set-up elsewhere, even a good one.
    let elsewhere = dir.path().join("config.json");
    fs::rename(&file, &elsewhere).expect("move");
    std::os::unix::fs::symlink(&elsewhere, &file).expect("link");
    assert!(refused("a link").contains("symbolic link"));
    fs::remove_file(&file).expect("unlink");
    // Larger than a set-up can be.
    fs::write(&file, vec![b' '; 64 * 1024 + 1]).expect("write");
    assert!(refused("too large").contains("larger than 65536 bytes"));
    fs::remove_file(&file).expect("remove");
    // A FIFO is refused without waiting for a writer.
    let made = Command::new("mkfifo").arg(&file).status().expect("mkfifo");
    assert!(made.success());
    assert!(refused("a fifo").contains("not a regular file"));
}

#[test]
fn a_remote_that_refuses_the_push_is_said_apart_from_a_lost_race() {
    let pair = pair();
    // A non-bare repository refuses a push to its checked-out branch.
    let dir = tempfile::tempdir().expect("temp dir");
    git(&["init", "--quiet", "-b", "main", "."], dir.path());
    commit_by_hand(dir.path(), &["--allow-empty", "-m", "x"]);
    let url = dir.path().to_str().expect("utf-8");
    setup(&pair.a, &SyncConfig::new(url, None).expect("config"));
    write(&pair.a, "human/x.md", "x\n");
    let err = notes_sync(&pair.a).run().expect_err("refused");
    assert_eq!(err.code(), "push_refused", "{err}");
    assert!(err.to_string().contains("refs/heads/main"), "{err}");
}

#[test]
fn two_syncs_of_one_root_at_once_both_land() {
    let pair = pair();
    write(&pair.a, "human/one.md", "one\n");
    let a = pair.a.clone();
    let first = std::thread::spawn(move || sync(&a));
    let second = sync(&pair.a);
    let first = first.join().expect("thread");
    assert!(first.pushed || second.pushed);
    sync(&pair.b);
    assert_eq!(read(&pair.b, "human/one.md"), "one\n");
}

#[test]
fn a_push_that_loses_the_race_merges_and_retries() {
    // B pushes between A's fetch and A's push: a hook on the remote does
    // it, once, during A's push.
    let pair = pair();
    write(&pair.a, "human/a.md", "from a\n");
    write(&pair.b, "human/b.md", "from b\n");
    sync(&pair.b);
    // A's stale view of the remote: it has never fetched b's push, and b
    // moves again while A merges.
    write(&pair.b, "human/b2.md", "again from b\n");
    let b = pair.b.clone();
    let racer = std::thread::spawn(move || sync(&b));
    let report = sync(&pair.a);
    racer.join().expect("thread");
    assert!(report.pushed);
    sync(&pair.b);
    sync(&pair.a);
    assert_eq!(notes_of(&pair.a), notes_of(&pair.b));
    assert_eq!(notes_of(&pair.a).len(), 3);
}

/// Installs `body` as the remote's `pre-receive` hook, after a line that
/// reads the pushed refs; its path.
#[cfg(unix)]
fn pre_receive_hook(remote: &Path, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let hook = remote.join("hooks/pre-receive");
    fs::write(&hook, format!("#!/bin/sh\ncat >/dev/null\n{body}")).expect("hook");
    fs::set_permissions(&hook, fs::Permissions::from_mode(0o755)).expect("chmod");
    hook
}

/// Puts the remote's branch back to `back_to` and installs a hook that,
/// while the next push is received, moves it to where it is now (once): the
/// pusher loses the race to a commit it has not fetched.
#[cfg(unix)]
fn race_once_from(remote: &Path, back_to: &str) {
    let raced = git(&["rev-parse", "main"], remote);
    git(&["update-ref", "refs/heads/main", back_to.trim()], remote);
    pre_receive_hook(
        remote,
        &format!(
            "if [ ! -f raced ]; then touch raced; echo {} > refs/heads/main; fi\n",
            raced.trim()
        ),
    );
}

#[cfg(unix)]
#[test]
fn a_push_that_loses_the_race_fetches_merges_and_pushes_again() {
    let pair = shared_pair(&[("human/base.md", "base\n")]);
    let before = git(&["rev-parse", "main"], &pair.remote);
    // B's push lands; the remote is then put back, holding B's commit, and
    // a hook moves the branch to it while A's push is received (once).
    write(&pair.b, "human/b.md", "from b\n");
    sync(&pair.b);
    race_once_from(&pair.remote, &before);
    write(&pair.a, "human/a.md", "from a\n");
    let report = sync(&pair.a);
    assert!(pair.remote.join("raced").exists(), "the hook ran");
    assert_eq!(report.retries, 1, "{report:?}");
    assert!(report.pushed);
    assert_eq!(read(&pair.a, "human/b.md"), "from b\n");
    sync(&pair.b);
    assert_eq!(notes_of(&pair.a), notes_of(&pair.b));
    assert_eq!(notes_of(&pair.a).len(), 3);
}

#[cfg(unix)]
#[test]
fn a_push_that_loses_every_race_stops_with_push_rejected_and_keeps_the_notes() {
    let pair = pair();
    write(&pair.a, "human/base.md", "base\n");
    sync(&pair.a);
    // Every push A makes finds the branch moved: the hook puts another
    // machine's commit (the same notes, one more commit) on it while the
    // push is received, outside the push's quarantine.
    let hook = pre_receive_hook(
        &pair.remote,
        "unset GIT_QUARANTINE_PATH GIT_OBJECT_DIRECTORY GIT_ALTERNATE_OBJECT_DIRECTORIES\n\
         n=$(cat moves 2>/dev/null || echo 0); echo $((n + 1)) > moves\n\
         new=$(echo race | git commit-tree main^{tree} -p main) && git update-ref refs/heads/main \"$new\"\n",
    );
    write(&pair.a, "human/a.md", "from a\n");
    let before = notes_of(&pair.a);
    let err = notes_sync(&pair.a).run().expect_err("every race lost");
    assert_eq!(err.code(), "push_rejected", "{err}");
    assert_eq!(
        err.to_string(),
        "the push lost the race 4 times to other machines' pushes; sync again"
    );
    assert_eq!(
        read(&pair.remote, "moves").trim(),
        "4",
        "one push per attempt"
    );
    assert_eq!(notes_of(&pair.a), before, "no local note changed");
    let listed = git(&["ls-tree", "-r", "--name-only", "main"], &pair.remote);
    assert!(!listed.contains("human/a.md"), "{listed}");
    // With the race over, the next sync lands.
    fs::remove_file(&hook).expect("hook gone");
    assert!(sync(&pair.a).pushed);
    sync(&pair.b);
    assert_eq!(notes_of(&pair.a), notes_of(&pair.b));
}

#[test]
fn a_merge_record_that_does_not_fit_the_branch_is_dropped() {
    let pair = pair();
    write(&pair.a, "human/a.md", "from a\n");
    let mut last = sync(&pair.a).commit;
    let record = pair.a.join(".sync/merging");
    // Garbage, a record the branch moved past, a merge commit that is not
    // in the repository: each is dropped and the sync goes on.
    for kind in ["garbage", "moved past", "missing"] {
        let text = match kind {
            "garbage" => "not a record".to_owned(),
            "moved past" => format!("none {last}\n"),
            _ => format!("{last} {}\n", "1".repeat(40)),
        };
        fs::write(&record, &text).expect("record");
        write(&pair.a, "human/a.md", &format!("from a, {text}\n"));
        let report = sync(&pair.a);
        last = report.commit.clone();
        assert!(report.pushed, "{text}: {report:?}");
        assert!(!record.exists(), "{text}");
        assert_eq!(read(&pair.a, "human/a.md"), format!("from a, {text}\n"));
    }
}

#[test]
fn a_remote_that_never_answers_is_stopped_at_the_deadline() {
    // A port that takes the connection and says nothing.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("listen");
    let port = listener.local_addr().expect("address").port();
    let held = std::thread::spawn(move || {
        let (stream, _) = listener.accept().expect("accept");
        std::thread::sleep(Duration::from_secs(4));
        drop(stream);
    });
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("git://127.0.0.1:{port}/notes.git");
    setup(dir.path(), &SyncConfig::new(&url, None).expect("config"));
    write(dir.path(), "human/x.md", "x\n");
    let err = notes_sync(dir.path())
        .timeout(Duration::from_secs(1))
        .run()
        .expect_err("timed out");
    assert_eq!(err.code(), "git_timeout", "{err}");
    assert!(
        err.to_string()
            .contains("git fetch did not finish within 1 s"),
        "{err}"
    );
    held.join().expect("thread");
}

#[test]
fn a_note_over_the_bound_stays_home() {
    let pair = pair();
    let big = "x".repeat(notesoup_core::notes::NoteStore::MAX_NOTE_BYTES + 10);
    write(&pair.a, "human/big.md", &big);
    write(&pair.a, "human/small.md", "small\n");
    let report = sync(&pair.a);
    assert_eq!(report.skipped, vec!["human/big.md".to_owned()]);
    assert_eq!(
        git(&["ls-tree", "-r", "--name-only", "main"], &pair.remote),
        "human/small.md\n"
    );
    assert_eq!(read(&pair.a, "human/big.md"), big);
}

/// A `git daemon` serving `base` on a free port of 127.0.0.1, stopped when
/// dropped.
struct Daemon {
    _child: Reaped,
    port: u16,
}

fn daemon(base: &Path) -> Daemon {
    // The daemon itself, not `git daemon` (a wrapper whose daemon would
    // outlive it).
    let exec_path = git(&["--exec-path"], base);
    let program = Path::new(exec_path.trim()).join("git-daemon");
    assert!(
        program.is_file(),
        "git daemon is not installed on this machine ({} is missing): the network test cannot run",
        program.display()
    );
    let port = free_port();
    let child = Reaped::quiet_server(
        Command::new(&program)
            .arg("--export-all")
            .arg("--enable=receive-pack")
            .arg("--reuseaddr")
            .arg("--listen=127.0.0.1")
            .arg(format!("--port={port}"))
            .arg(format!("--base-path={}", base.display()))
            .arg(base),
        port,
        Duration::from_secs(20),
        "git daemon",
    );
    Daemon {
        _child: child,
        port,
    }
}

#[test]
fn sync_over_the_network_through_git_daemon() {
    let pair = pair();
    let base = pair.remote.parent().expect("parent").to_path_buf();
    let daemon = daemon(&base);
    let url = format!("git://127.0.0.1:{}/remote.git", daemon.port);
    for root in [&pair.a, &pair.b] {
        setup(root, &SyncConfig::new(&url, Some("notes")).expect("config"));
    }
    write(
        &pair.a,
        "agents/anonymous/habits.md",
        "run the tests first\n",
    );
    assert!(sync(&pair.a).pushed);
    sync(&pair.b);
    assert_eq!(
        read(&pair.b, "agents/anonymous/habits.md"),
        "run the tests first\n"
    );
    write(&pair.b, "models/opus/quirks.md", "verbose\n");
    sync(&pair.b);
    sync(&pair.a);
    assert_eq!(notes_of(&pair.a), notes_of(&pair.b));
    assert_eq!(
        git(&["ls-tree", "-r", "--name-only", "notes"], &pair.remote),
        "agents/anonymous/habits.md\nmodels/opus/quirks.md\n"
    );
    // A closed port is "unreachable", with the code, well within the deadline.
    drop(daemon);
    write(&pair.a, "human/late.md", "late\n");
    let err = notes_sync(&pair.a)
        .timeout(Duration::from_secs(20))
        .run()
        .expect_err("daemon gone");
    assert!(
        matches!(err.code(), "remote_unreachable" | "git_timeout"),
        "{}: {err}",
        err.code()
    );
}

/// One step of the interleaving property.
#[derive(Debug, Clone)]
enum Step {
    /// Append a fresh line to note `n` on side `a`/`b`.
    Append { a: bool, n: usize },
    /// Replace note `n`'s body with a fresh line.
    Write { a: bool, n: usize },
    /// Crumple note `n`.
    Crumple { a: bool, n: usize },
    /// Sync one side.
    Sync { a: bool },
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (any::<bool>(), 0usize..3).prop_map(|(a, n)| Step::Append { a, n }),
        2 => (any::<bool>(), 0usize..3).prop_map(|(a, n)| Step::Write { a, n }),
        1 => (any::<bool>(), 0usize..3).prop_map(|(a, n)| Step::Crumple { a, n }),
        2 => any::<bool>().prop_map(|a| Step::Sync { a }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]

    /// Random writes, updates (appends) and crumples on two roots with syncs
    /// between them converge (after each side syncs twice both trees are
    /// equal) and lose no line that was written, but those a side replaced
    /// seeing them.
    #[test]
    fn interleavings_converge_and_lose_nothing(steps in prop::collection::vec(step(), 1..12)) {
        let pair = pair();
        let mut written = Vec::new();
        for (i, step) in steps.iter().enumerate() {
            match step {
                Step::Append { a, n } => {
                    let root = if *a { &pair.a } else { &pair.b };
                    let path = format!("human/n{n}.md");
                    let line = format!("line {i} from {}\n", if *a { "a" } else { "b" });
                    let old = fs::read_to_string(root.join(&path))
                        .unwrap_or_else(|_| note(FIELDS, ""));
                    write(root, &path, &format!("{old}{line}"));
                    written.push(line);
                }
                Step::Write { a, n } => {
                    let root = if *a { &pair.a } else { &pair.b };
                    let path = format!("human/n{n}.md");
                    // The lines this side sees are replaced on purpose.
                    let old = fs::read_to_string(root.join(&path)).unwrap_or_default();
                    written.retain(|line: &String| !old.contains(line.as_str()));
                    let line = format!("write {i} from {}\n", if *a { "a" } else { "b" });
                    write(root, &path, &note(FIELDS, &line));
                    written.push(line);
                }
                Step::Crumple { a, n } => {
                    let root = if *a { &pair.a } else { &pair.b };
                    let path = format!("human/n{n}.md");
                    if let Ok(old) = fs::read_to_string(root.join(&path))
                        && !old.contains("crumpledAt")
                    {
                        let crumpled = old.replacen(
                            "accessCount",
                            "crumpledAt: 2026-03-01T00:00:00.000+00:00\naccessCount",
                            1,
                        );
                        write(root, &path, &crumpled);
                    }
                }
                Step::Sync { a } => {
                    sync(if *a { &pair.a } else { &pair.b });
                }
            }
        }
        for root in [&pair.a, &pair.b, &pair.a, &pair.b] {
            sync(root);
        }
        let (a, b) = (notes_of(&pair.a), notes_of(&pair.b));
        prop_assert_eq!(&a, &b);
        let all: String = a.iter().map(|(_, text)| text.as_str()).collect();
        for line in written {
            prop_assert!(all.contains(&line), "lost {:?}", line);
        }
    }
}

/// A machine with nothing new takes the remote's commit as it is: no merge
/// commit, nothing pushed.
#[test]
fn a_machine_only_behind_moves_to_the_remote_s_commit() {
    let pair = shared_pair(&[("human/base.md", "base\n")]);
    write(&pair.b, "human/b.md", "from b\n");
    let pushed = sync(&pair.b);
    let report = sync(&pair.a);
    assert!(!report.pushed, "{report:?}");
    assert_eq!(report.commit, pushed.commit);
    assert_eq!(report.received, ["human/b.md"]);
    assert_eq!(
        git(&["rev-parse", "main"], &pair.remote).trim(),
        pushed.commit
    );
}

/// A credential already on the remote (pushed by hand, or by an older
/// client) does not stop a sync that merges with it: the guard reads only
/// what this sync sends.
#[test]
fn a_credential_already_on_the_remote_does_not_stop_a_merge() {
    let pair = shared_pair(&[("human/base.md", "base\n")]);
    let token = format!("ghp_{}", "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8");
    let dir = tempfile::tempdir().expect("temp dir");
    let remote = pair.remote.to_str().expect("utf-8 path");
    git(
        &["clone", "--quiet", "-b", "main", remote, "work"],
        dir.path(),
    );
    let work = dir.path().join("work");
    write(&work, "human/leak.md", &format!("the token: {token}\n"));
    git(&["add", "."], &work);
    commit_by_hand(&work, &["-m", "by hand"]);
    git(&["push", "--quiet", "origin", "HEAD:main"], &work);
    write(&pair.a, "human/a.md", "from a\n");
    let report = sync(&pair.a);
    assert!(report.pushed, "{report:?}");
    assert_eq!(
        read(&pair.a, "human/leak.md"),
        format!("the token: {token}\n")
    );
}

/// A note received (or deleted) before a push lost its race is as received
/// on disk when the sync goes round again: it is not received a second
/// time.
#[cfg(unix)]
#[test]
fn a_note_received_before_a_lost_race_is_received_once() {
    let pair = shared_pair(&[("human/base.md", "base\n")]);
    write(&pair.b, "human/b.md", "from b\n");
    fs::remove_file(pair.b.join("human/base.md")).expect("delete");
    sync(&pair.b);
    let first = git(&["rev-parse", "main"], &pair.remote);
    write(&pair.b, "human/b2.md", "again from b\n");
    sync(&pair.b);
    // The remote is put back to B's first push; while A's push is received,
    // a hook moves it to B's second (once).
    race_once_from(&pair.remote, &first);
    write(&pair.a, "human/a.md", "from a\n");
    let report = sync(&pair.a);
    assert_eq!(report.retries, 1, "{report:?}");
    assert!(report.pushed);
    assert_eq!(
        report.received,
        ["human/b.md", "human/base.md", "human/b2.md"]
    );
    assert_eq!(report.conflicts().len(), 0);
    sync(&pair.b);
    assert_eq!(notes_of(&pair.a), notes_of(&pair.b));
    assert_eq!(notes_of(&pair.a).len(), 3);
}
