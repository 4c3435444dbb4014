//! The Git audit, read back with gix and with the `git` command-line tool.

use std::fs;
use std::path::Path;

use notesoup_core::dream::{
    AUDIT_EMAIL, AUDIT_NAME, AuditCommit, LAST_RUN_FILE, LOCK_FILE, audit_commit,
};

use notesoup_test_support::child::{git_in, stdout_of};

use super::support::{AWS_KEY, committed_files, git, git_as, put};

/// Every path in the tree of `commit`, with its mode, read with gix.
fn gix_tree(home: &Path, commit: &str) -> Vec<String> {
    let repo = gix::open(home).expect("open with gix");
    let id = gix::ObjectId::from_hex(commit.as_bytes()).expect("commit id");
    let tree = repo.find_commit(id).expect("commit").tree().expect("tree");
    let mut recorder = gix::traverse::tree::Recorder::default();
    tree.traverse()
        .breadthfirst(&mut recorder)
        .expect("traverse");
    let mut paths: Vec<String> = recorder
        .records
        .iter()
        .filter(|entry| !entry.mode.is_tree())
        .map(|entry| format!("{:o} {}", entry.mode.value(), entry.filepath))
        .collect();
    paths.sort();
    paths
}

fn gix_message(home: &Path, commit: &str) -> (String, Vec<String>) {
    let repo = gix::open(home).expect("open with gix");
    let commit = repo
        .find_commit(gix::ObjectId::from_hex(commit.as_bytes()).expect("id"))
        .expect("commit");
    let message = commit.message_raw().expect("message").to_string();
    let parents = commit.parent_ids().map(|id| id.to_string()).collect();
    (message, parents)
}

/// The home's commits are `log` (subjects, newest first) and nothing is
/// left uncommitted.
fn assert_committed(home: &Path, log: &str) {
    assert_eq!(git(home, &["log", "--format=%s"]), log);
    assert_eq!(git(home, &["status", "--porcelain"]), "");
}

#[test]
fn baseline_and_dream_commits_read_back_with_gix_and_git() {
    let home = tempfile::tempdir().expect("tempdir");
    let home = home.path();
    put(home, "human/MAP.md", "- `@human/prefs.md` prefs\n");
    put(home, "human/prefs.md", "tabs\n");
    put(
        home,
        "project/p-0123abcd/old.md",
        "---\ncrumpledAt: 2026-01-01T00:00:00.000+00:00\n---\n\nold\n",
    );
    put(home, "pi/session/s1/checkpoint.md", "goal\n");
    put(home, LOCK_FILE, "1 00000000-0000-0000-0000-000000000000");
    put(home, LAST_RUN_FILE, "2026-01-01T00:00:00.000Z");
    let script = put(home, "tools/run.sh", "#!/bin/sh\n");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).expect("chmod");
        std::os::unix::fs::symlink("prefs.md", home.join("human/alias.md")).expect("symlink");
    }
    fs::create_dir_all(home.join("empty/dir")).expect("empty dir");

    let baseline = audit_commit(home, "baseline 2026-09-15T09-31-45-392Z").expect("baseline");
    assert!(!baseline.empty);
    let exclude = fs::read_to_string(home.join(".git/info/exclude")).expect("exclude");
    assert_eq!(
        exclude
            .lines()
            .filter(|line| *line == ".dream.lock*")
            .count(),
        1
    );

    // The dream: a new note, an edit, a deletion, an ignored file.
    put(home, "human/new.md", "new\n");
    put(home, "human/prefs.md", "spaces\n");
    fs::remove_file(home.join("project/p-0123abcd/old.md")).expect("delete");
    put(home, ".gitignore", "*.tmp\n");
    put(home, "human/scratch.tmp", "ignored\n");
    let dream = audit_commit(home, "dream 2026-09-15T09-31-45-392Z").expect("dream");
    assert!(!dream.empty);

    // gix: messages, parents, trees.
    assert_eq!(
        gix_message(home, &baseline.commit),
        ("baseline 2026-09-15T09-31-45-392Z".to_owned(), vec![])
    );
    assert_eq!(
        gix_message(home, &dream.commit),
        (
            "dream 2026-09-15T09-31-45-392Z".to_owned(),
            vec![baseline.commit.clone()]
        )
    );
    assert_eq!(
        gix_tree(home, &baseline.commit),
        [
            "100644 human/MAP.md",
            "100644 human/prefs.md",
            "100644 pi/session/s1/checkpoint.md",
            "100644 project/p-0123abcd/old.md",
            "100755 tools/run.sh",
            "120000 human/alias.md",
        ]
    );
    assert_eq!(
        gix_tree(home, &dream.commit),
        [
            "100644 .gitignore",
            "100644 human/MAP.md",
            "100644 human/new.md",
            "100644 human/prefs.md",
            "100644 pi/session/s1/checkpoint.md",
            "100755 tools/run.sh",
            "120000 human/alias.md",
        ]
    );

    // git: the same history, the deletion, the identity, a clean status.
    assert_eq!(git(home, &["rev-parse", "HEAD"]).trim(), dream.commit);
    assert_eq!(
        git(home, &["log", "--format=%H %an <%ae> %s"]),
        format!(
            "{} {AUDIT_NAME} <{AUDIT_EMAIL}> dream 2026-09-15T09-31-45-392Z\n{} {AUDIT_NAME} <{AUDIT_EMAIL}> baseline 2026-09-15T09-31-45-392Z\n",
            dream.commit, baseline.commit
        )
    );
    assert_eq!(
        git(
            home,
            &["diff", "--name-status", &baseline.commit, &dream.commit]
        ),
        "A\t.gitignore\nA\thuman/new.md\nM\thuman/prefs.md\nD\tproject/p-0123abcd/old.md\n"
    );
    assert_eq!(git(home, &["show", "HEAD:human/prefs.md"]), "spaces\n");
    assert_eq!(
        git(
            home,
            &["show", &format!("{}:human/prefs.md", baseline.commit)]
        ),
        "tabs\n"
    );
    assert_eq!(
        git(home, &["status", "--porcelain", "--untracked-files=all"]),
        ""
    );
    assert_eq!(
        git(
            home,
            &[
                "status",
                "--porcelain",
                "--ignored",
                "--untracked-files=all"
            ]
        ),
        "!! .dream.lock\n!! .dream.lock.last-run\n!! human/scratch.tmp\n"
    );
    git(home, &["fsck", "--strict", "--no-progress"]);
}

#[test]
fn empty_commit_rules() {
    let home = tempfile::tempdir().expect("tempdir");
    let home = home.path();

    // Clean tree, no HEAD: an empty commit.
    let first = audit_commit(home, "baseline one").expect("first");
    assert!(first.empty);
    assert_eq!(git(home, &["log", "--format=%s"]), "baseline one\n");
    assert_eq!(git(home, &["ls-tree", "-r", "HEAD"]), "");

    // Clean tree with HEAD: no commit, HEAD returned.
    let again = audit_commit(home, "dream one").expect("again");
    assert_eq!(
        again,
        AuditCommit {
            commit: first.commit.clone(),
            empty: true,
            withheld: Vec::new(),
        }
    );
    assert_eq!(git(home, &["log", "--format=%s"]), "baseline one\n");

    // Only excluded files changed: still clean.
    put(home, LOCK_FILE, "1 00000000-0000-0000-0000-000000000000");
    put(home, LAST_RUN_FILE, "x");
    let excluded = audit_commit(home, "dream two").expect("excluded");
    assert_eq!(excluded.commit, first.commit);
    assert!(excluded.empty);

    // A change: a commit on top.
    put(home, "human/a.md", "a\n");
    let changed = audit_commit(home, "dream three").expect("changed");
    assert!(!changed.empty);
    assert_committed(home, "dream three\nbaseline one\n");
}

#[test]
fn a_tree_with_content_and_no_head_is_committed_and_an_existing_repo_is_reused() {
    let home = tempfile::tempdir().expect("tempdir");
    let home = home.path();
    git(home, &["init", "-q"]);
    fs::write(home.join(".git/info/exclude"), "# kept\n*.bak").expect("exclude");
    put(home, "human/a.md", "a\n");
    put(home, "human/a.bak", "backup\n");
    let first = audit_commit(home, "baseline x").expect("first");
    assert!(!first.empty);
    assert_eq!(committed_files(home), "human/a.md\n");
    assert_eq!(
        fs::read_to_string(home.join(".git/info/exclude")).expect("exclude"),
        "# kept\n*.bak\n.dream.lock*\n"
    );
    // A file tracked before it was ignored stays tracked (as `git add -A`).
    put(home, "human/b.md", "b\n");
    git(home, &["add", "human/b.md"]);
    git_as(home, "t", &["commit", "-q", "-m", "human commit"]);
    put(home, ".gitignore", "human/b.md\n");
    put(home, "human/b.md", "b changed\n");
    let second = audit_commit(home, "dream x").expect("second");
    assert!(!second.empty);
    assert_eq!(git(home, &["show", "HEAD:human/b.md"]), "b changed\n");
    assert_committed(home, "dream x\nhuman commit\nbaseline x\n");
}

/// A repository without `.git/info` gets an exclude file of the lock's
/// pattern alone; a folder ignored after its notes were tracked is still
/// audited (as `git add -A` does), one never tracked is not.
#[test]
fn a_missing_exclude_file_is_written_and_a_tracked_folder_stays_tracked_when_ignored() {
    let home = tempfile::tempdir().expect("tempdir");
    let home = home.path();
    git(home, &["init", "-q"]);
    fs::remove_dir_all(home.join(".git/info")).expect("no info");
    put(home, "project/p-0123abcd/plan.md", "plan\n");
    audit_commit(home, "baseline y").expect("first");
    assert_eq!(
        fs::read_to_string(home.join(".git/info/exclude")).expect("exclude"),
        ".dream.lock*\n"
    );
    put(home, ".gitignore", "project/\nscratch/\n");
    put(home, "project/p-0123abcd/plan.md", "plan changed\n");
    put(home, "scratch/tmp.md", "scratch\n");
    audit_commit(home, "dream y").expect("second");
    assert_eq!(
        git(home, &["show", "HEAD:project/p-0123abcd/plan.md"]),
        "plan changed\n"
    );
    assert_eq!(
        committed_files(home),
        ".gitignore\nproject/p-0123abcd/plan.md\n"
    );
}

#[test]
fn a_broken_repository_is_an_audit_error() {
    let home = tempfile::tempdir().expect("tempdir");
    put(home.path(), ".git", "not a repository\n");
    let refused = audit_commit(home.path(), "baseline x").expect_err("broken");
    assert_eq!(refused.code(), "audit_failed");
    assert!(
        refused
            .to_string()
            .starts_with("git audit: cannot open repository: "),
        "{refused}"
    );
}

/// A note's text as the newest commit not after a time holds it: nothing
/// without a repository, nothing before the first commit or for a path no
/// commit holds, and the committed bytes (not the file's later ones) after.
#[test]
fn audited_texts_reads_the_newest_commit_not_after_the_time() {
    use notesoup_core::dream::audited_texts;
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let wanted = |at: i64| {
        vec![
            ("projects/p/MAP.md".to_owned(), at),
            ("projects/p/NONE.md".to_owned(), at),
        ]
    };
    assert_eq!(audited_texts(home, &wanted(i64::MAX)).unwrap(), None);
    put(home, "projects/p/MAP.md", "first\n");
    let commit = audit_commit(home, "baseline one").unwrap();
    put(home, "projects/p/MAP.md", "not committed\n");
    let found = audited_texts(home, &wanted(i64::MAX)).unwrap().unwrap();
    let text = found[0].as_ref().unwrap();
    assert_eq!(text.text, "first\n");
    assert_eq!(text.commit, commit.commit);
    assert_eq!(found[1], None);
    let before = audited_texts(home, &wanted(text.committed_at - 1))
        .unwrap()
        .unwrap();
    assert_eq!(before, [None, None]);
}

/// `git add -A` and `git commit` in `home` with author and committer time
/// `seconds`, as the audit records a rename: a deletion and an addition.
fn commit_at(home: &Path, seconds: i64, message: &str) {
    for args in [
        &["add", "-A"][..],
        &[
            "-c",
            "user.name=notesoup",
            "-c",
            "user.email=notesoup@localhost",
            "commit",
            "-q",
            "-m",
            message,
        ][..],
    ] {
        stdout_of(
            git_in(home)
                .args(args)
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .env("GIT_AUTHOR_DATE", format!("@{seconds} +0000"))
                .env("GIT_COMMITTER_DATE", format!("@{seconds} +0000")),
        );
    }
}

/// A file the newest commit before a time lacks is followed back through
/// the later commit that renamed it (a deletion and an addition): by the
/// same blob, by the same body under a changed frontmatter, by the only
/// file that commit deleted, and over two renames; an edited file among
/// two deletions, or one added with no deletion, has no earlier text.
#[test]
fn audited_texts_follow_a_rename_recorded_after_the_time() {
    use notesoup_core::dream::audited_texts;
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    git(home, &["init", "-q"]);
    put(home, "p/same.md", "same\n");
    put(home, "p/meta.md", "---\nupdatedAt: 1\n---\n\nbody\n");
    put(home, "p/only.md", "only\n");
    put(home, "p/twice.md", "twice\n");
    put(home, "p/other.md", "other\n");
    commit_at(home, 1_000, "baseline");
    // After the time asked about: the renames, each with other changes.
    let moved = |from: &str, to: &str| {
        let text = fs::read_to_string(home.join(from)).unwrap();
        fs::remove_file(home.join(from)).unwrap();
        put(home, to, &text);
    };
    moved("p/same.md", "q/same.md");
    fs::remove_file(home.join("p/meta.md")).unwrap();
    put(home, "q/meta.md", "---\nupdatedAt: 2\n---\n\nbody\n");
    moved("p/twice.md", "p/twice-1.md");
    commit_at(home, 3_000, "renames");
    fs::remove_file(home.join("p/only.md")).unwrap();
    put(home, "q/only.md", "only, edited\n");
    commit_at(home, 3_500, "one rename, edited");
    moved("p/twice-1.md", "q/twice-2.md");
    fs::remove_file(home.join("p/other.md")).unwrap();
    put(home, "q/other.md", "other, edited\n");
    put(home, "q/new.md", "new\n");
    commit_at(home, 4_000, "more");
    let wanted: Vec<(String, i64)> = [
        "q/same.md",
        "q/meta.md",
        "q/only.md",
        "q/twice-2.md",
        "q/other.md",
        "q/new.md",
    ]
    .iter()
    .map(|path| ((*path).to_owned(), 2_000))
    .collect();
    let found = audited_texts(home, &wanted).unwrap().unwrap();
    let texts: Vec<Option<&str>> = found
        .iter()
        .map(|text| text.as_ref().map(|text| text.text.as_str()))
        .collect();
    assert_eq!(
        texts,
        [
            Some("same\n"),
            Some("---\nupdatedAt: 1\n---\n\nbody\n"),
            Some("only\n"),
            Some("twice\n"),
            None,
            None,
        ]
    );
    // Each from the commit before the time.
    assert!(
        found
            .iter()
            .flatten()
            .all(|text| text.committed_at == 1_000)
    );
    // At a time after the renames, the path itself is read.
    let now = audited_texts(home, &[("q/only.md".to_owned(), 5_000)])
        .unwrap()
        .unwrap();
    assert_eq!(now[0].as_ref().unwrap().text, "only, edited\n");
}

/// Whether `dir`'s repository holds the object `id` (loose or packed).
fn has_object(dir: &Path, id: &str) -> bool {
    git_in(dir)
        .args(["cat-file", "-e", id])
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .status()
        .expect("git runs")
        .success()
}

/// A history written at `home` before the audit left credentials out:
/// two commits, the first holding `human/key.md`. The key's blob, and the
/// tip.
fn history_with_a_key(home: &Path) -> (String, String) {
    put(home, "human/plain.md", "nothing secret\n");
    put(home, "human/key.md", &format!("aws: {AWS_KEY}\n"));
    git(home, &["init", "-q"]);
    let commit = |message: &str| git_as(home, "old", &["commit", "-q", "-am", message]);
    git(home, &["add", "-A"]);
    commit("baseline old");
    put(home, "human/plain.md", "still nothing secret\n");
    commit("dream old");
    let id = |name: &str| git(home, &["rev-parse", name]).trim().to_owned();
    (id("HEAD:human/key.md"), id("HEAD"))
}

/// Purging a history of the key is a dry run until asked, is refused
/// while a dream holds the lock or another reference reaches the old
/// commits, then writes both commits again (same messages), moves the
/// branch, and leaves no object or reference log that reaches the key;
/// the note stays.
#[test]
fn purging_rewrites_the_history_without_the_credential_and_keeps_the_note() {
    use notesoup_core::dream::{DreamError, purge_secrets};
    let home = tempfile::tempdir().expect("tempdir");
    let home = home.path();
    let (key_blob, old_tip) = history_with_a_key(home);
    let (key_blob, old_tip) = (key_blob.as_str(), old_tip.as_str());
    // The trees that held the key.
    let old_trees = [
        git(home, &["rev-parse", "HEAD^{tree}"]),
        git(home, &["rev-parse", "HEAD:human"]),
    ];
    let dry = purge_secrets(home, false).expect("dry run");
    assert_eq!(dry.found.len(), 2, "{dry:?}");
    assert!(dry.found.iter().all(|found| found.path == "human/key.md"));
    assert!(!dry.applied && dry.rewritten == 0, "{dry:?}");
    assert_eq!(git(home, &["rev-parse", "HEAD"]).trim(), old_tip);

    // A dream's lock: the file, held locked.
    let lock = fs::File::open(put(
        home,
        LOCK_FILE,
        "1 00000000-0000-0000-0000-000000000000",
    ))
    .expect("the lock");
    lock.lock().expect("held");
    assert!(matches!(
        purge_secrets(home, true),
        Err(DreamError::LockHeld)
    ));
    drop(lock);
    fs::remove_file(home.join(LOCK_FILE)).expect("unlock");
    git(home, &["tag", "kept"]);
    let refused = purge_secrets(home, true).expect_err("a tag reaches the old commits");
    assert!(refused.to_string().contains("refs/tags/kept"), "{refused}");
    git(home, &["tag", "-d", "kept"]);
    assert_eq!(git(home, &["rev-parse", "HEAD"]).trim(), old_tip);

    let purged = purge_secrets(home, true).expect("purged");
    assert!(purged.applied, "{purged:?}");
    assert_eq!(purged.rewritten, 2);
    assert_eq!(
        git(home, &["log", "--format=%s"]),
        "dream old\nbaseline old\n"
    );
    assert_eq!(committed_files(home), "human/plain.md\n");
    assert!(!has_object(home, key_blob), "the key's blob is gone");
    assert!(!has_object(home, old_tip), "the old commits are gone");
    for tree in &old_trees {
        assert!(
            !has_object(home, tree.trim()),
            "the trees that held it are gone"
        );
    }
    // The index no longer names the key: the note is untracked.
    assert_eq!(git(home, &["ls-files"]), "human/plain.md\n");
    assert!(!home.join(".git/logs").exists());
    git(home, &["fsck", "--no-dangling"]);
    assert!(home.join("human/key.md").exists(), "the note itself stays");
    // Nothing left to purge.
    let again = purge_secrets(home, true).expect("again");
    assert!(again.found.is_empty() && again.rewritten == 0, "{again:?}");
}

/// Objects in a pack cannot be deleted one by one: the purge rewrites the
/// history all the same and names the packed blob that still holds the key
/// (Git's own `gc --prune=now` removes it).
#[test]
fn a_packed_credential_is_named_as_still_packed() {
    let home = tempfile::tempdir().expect("tempdir");
    let home = home.path();
    let (key_blob, _) = history_with_a_key(home);
    git(home, &["gc", "-q"]);
    let purged = notesoup_core::dream::purge_secrets(home, true).expect("purged");
    assert_eq!(purged.rewritten, 2);
    assert_eq!(purged.still_packed, std::slice::from_ref(&key_blob));
    assert!(has_object(home, &key_blob), "still in the pack");
    assert_eq!(committed_files(home), "human/plain.md\n");
}
