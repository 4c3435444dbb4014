//! `dream doctor` on a crafted broken store and on a clean one.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;

use notesoup_core::dream::{
    DreamLock, LAST_RUN_FILE, LOCK_FILE, audit_commit, clean_temp_files, doctor,
};

use super::support::{AWS_KEY, put, render_output, tree_hash};
use crate::dream::doctor::{CleanReport, DoctorReport, MovedEntry};

const GOOD: &str = "---\norigin: self\ncreatedAt: 2026-09-15T17:31:45.392+08:00\nupdatedAt: 2026-09-15T09:31:45Z\nlastAccessed: 2026-09-15T17:31:45.392+08:00\naccessCount: 3\n---\n\nbody\n";

/// Doctor's report on `home`, failing the test if doctor changed a byte
/// there (it only reads).
fn read_only_doctor(home: &Path) -> DoctorReport {
    let before = tree_hash(home);
    let report = doctor(home);
    assert_eq!(tree_hash(home), before, "doctor changed the store");
    report
}

/// Each finding of `report` as `path: message`.
fn finding_lines(report: &DoctorReport) -> Vec<String> {
    report
        .findings
        .iter()
        .map(|finding| format!("{}: {}", finding.path, finding.message))
        .collect()
}

/// A store with one of every problem doctor knows, plus things it must
/// accept or ignore.
fn broken_store(home: &Path) {
    // Root level.
    fs::create_dir_all(home.join("global")).expect("global");
    put(home, "personal/old.md", GOOD);
    put(home, LOCK_FILE, "garbage\n");
    put(home, LAST_RUN_FILE, "2026-09-15T09:31:45.392Z");
    put(home, "random.txt", "?");
    fs::create_dir_all(home.join("notes-backup")).expect("backup");
    // Ignored root entries, whatever they hold.
    put(home, ".git/HEAD", "ref: refs/heads/main\n");
    put(home, "dreams/2026-09-15T09-31-45-392Z.md", "# Dream\n");
    put(home, "snapshots/x.bin", "x");
    put(home, "trash/whatever", "x");

    // Homes and their names.
    put(
        home,
        "agents/ok/diary.md",
        &format!("{GOOD}See `@agents/ok/diary.md` and `@models/Bad/x.md`.\n"),
    );
    put(home, "agents/Bad_Slug/a.md", GOOD);
    put(home, "agents/stray.md", GOOD);
    symlink("../human", home.join("agents/linked")).expect("symlink home");
    put(home, "models/GPT 4/a.md", GOOD);
    put(home, "project/nohash/a.md", GOOD);
    put(home, "project/app-0123ABCD/a.md", GOOD);
    put(
        home,
        "project/app-0123abcd/decisions.md",
        &format!(
            "{GOOD}`@project/decisions.md` `@project/missing.md` `other.md` `@human/prefs.md`\n"
        ),
    );
    put(home, "pi/other/x.md", GOOD);
    put(home, "pi/session/loose.md", GOOD);
    put(
        home,
        "pi/session/s1/checkpoint.md",
        "---\norigin: self\nproject: app-0123abcd\n---\n\n`@project/decisions.md` `@project/nope.md`\n",
    );
    put(
        home,
        "pi/session/s2/checkpoint.md",
        "---\norigin: self\n---\n\n`@project/x.md`\n",
    );

    // Files inside homes.
    put(home, "human/prefs.md", GOOD);
    put(home, "human/image.png", "png");
    symlink("prefs.md", home.join("human/link.md")).expect("symlink note");
    put(home, "human/no-frontmatter.md", "# Just a body\n");
    put(home, "human/unclosed.md", "---\norigin: self\n\nbody\n");
    put(
        home,
        "human/dupes.md",
        "---\norigin: self\norigin: user\n---\n\nbody\n",
    );
    put(
        home,
        "human/bad-values.md",
        "---\norigin: robot\naccessCount: 12a\ncreatedAt: yesterday\nupdatedAt: \"2026-13-01T00:00:00Z\"\nlastAccessed: 2026-09-15\nstatus: done\nstale: maybe\ncrumpledAt: soon\n---\n\nbody\n",
    );
    put(
        home,
        "human/legacy.md",
        "---\ncreated_at: 2026-01-01\nscope: human\nstatus: archived\nstale: false\nrecurrenceWindows:\n- a\n- b\n---\n\nbody\n",
    );
    fs::write(home.join("human/binary.md"), [0xff, 0xfe, 0x00]).expect("binary");
    put(
        home,
        "human/MAP.md",
        &format!(
            "{GOOD}- `prefs.md` prefs\n- `missing.md` gone\n- `sub/deep.md` deep\n- `@human/gone.md`\n- `@self/anything.md` `@model/x.md`\n- `@bogus/x.md` `@project/x.md` `@human/../x.md`\n- `notes with space.md` `*.md` `<x>.md` `README.txt`\n"
        ),
    );
    put(
        home,
        "human/sub/deep.md",
        &format!("{GOOD}`deep-bare.md` is not checked outside MAP.md\n"),
    );
}

#[test]
fn finds_every_planted_problem_and_changes_no_byte() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    fs::create_dir(&home).expect("home");
    broken_store(&home);

    let report = read_only_doctor(&home);
    assert_eq!(report.exit_code(), 1);
    insta::assert_snapshot!(
        "doctor_broken_store",
        render_output(&report.output(), &home)
    );
}

#[test]
fn a_held_lock_is_a_running_dream_and_a_free_one_is_stale() {
    let home = tempfile::tempdir().expect("tempdir");
    let mut held = DreamLock::acquire(home.path(), jiff::Timestamp::now()).expect("a dream runs");
    let report = read_only_doctor(home.path());
    assert_eq!(
        render_output(&report.output(), home.path()),
        format!(
            "stdout: .dream.lock: lock held by a running dream (process {})\nexit 1\n",
            std::process::id()
        )
    );
    // Doctor only tested the flock: the dream still holds it.
    assert_eq!(
        DreamLock::acquire(home.path(), jiff::Timestamp::now())
            .expect_err("still held")
            .code(),
        "lock_held"
    );
    let clean = clean_temp_files(home.path(), true, std::time::SystemTime::now());
    assert_eq!(clean.stale_lock, None, "a held lock is never removed");
    assert!(home.path().join(LOCK_FILE).exists());
    held.release().expect("release");

    put(
        home.path(),
        LOCK_FILE,
        "4242 0f8fad5b-d9cb-469f-a165-70867728950e\n",
    );
    let report = read_only_doctor(home.path());
    assert_eq!(
        render_output(&report.output(), home.path()),
        "stdout: .dream.lock: stale lock left by a dream that is gone (process 4242); the next dream takes it over, `doctor clean --apply` removes it\nexit 1\n"
    );

    for malformed in [
        "0 0f8fad5b-d9cb-469f-a165-70867728950e",
        "12 not-a-uuid",
        "12  0f8fad5b-d9cb-469f-a165-70867728950e",
        "",
        // Each group of the uuid its length of hex digits, five groups.
        "12 zf8fad5b-d9cb-469f-a165-70867728950e",
        "12 0f8fad5b0-d9cb-469f-a165-70867728950e",
        "12 0f8fad5b-d9cb-469f-a165",
        "12 0f8fad5b-d9cb-469f-a165-70867728950e-0",
        "1a 0f8fad5b-d9cb-469f-a165-70867728950e",
    ] {
        fs::write(home.path().join(LOCK_FILE), malformed).expect("lock");
        let report = doctor(home.path());
        assert_eq!(
            report.findings[0].message,
            "stale lock left by a dream that is gone (malformed content); the next dream takes it over, `doctor clean --apply` removes it",
            "{malformed:?}"
        );
    }

    let dry = clean_temp_files(home.path(), false, std::time::SystemTime::now());
    assert_eq!(
        render_output(&dry.output(), home.path()),
        "stdout: would remove .dream.lock, a stale lock left by a dream that is gone; run again with --apply to remove it\nstdout: doctor clean: no stale temporary files (<home>)\nexit 0\n"
    );
    assert!(
        home.path().join(LOCK_FILE).exists(),
        "a dry run removes nothing"
    );
    let applied = clean_temp_files(home.path(), true, std::time::SystemTime::now());
    assert_eq!(
        render_output(&applied.output(), home.path()),
        "stdout: removed .dream.lock, a stale lock left by a dream that is gone\nstdout: doctor clean: no stale temporary files (<home>)\nexit 0\n"
    );
    assert!(!home.path().join(LOCK_FILE).exists());
}

#[test]
fn a_lock_that_is_no_file_is_for_a_person() {
    let home = tempfile::tempdir().expect("tempdir");
    symlink("/nonexistent", home.path().join(LOCK_FILE)).expect("symlink");
    let report = doctor(home.path());
    assert_eq!(
        report.findings[0].message,
        "malformed lock (not a regular file); no dream can take it: remove it by hand"
    );
    let clean = clean_temp_files(home.path(), true, std::time::SystemTime::now());
    assert_eq!(clean.stale_lock, None);
    assert!(fs::symlink_metadata(home.path().join(LOCK_FILE)).is_ok());
}

#[test]
fn a_clean_store_is_ok() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    put(
        &home,
        "human/MAP.md",
        &format!("{GOOD}- `prefs.md`\n- `@human/prefs.md`\n"),
    );
    put(&home, "human/prefs.md", GOOD);
    // A note of exactly the size limit is within it.
    put(
        &home,
        "human/full.md",
        &format!("{GOOD}{}\n", "x".repeat(1_000_000 - GOOD.len() - 1)),
    );
    put(
        &home,
        "agents/anonymous/MAP.md",
        &format!("{GOOD}- `@self/x.md` `@agents/anonymous/MAP.md`\n"),
    );
    put(&home, "models/claude-4/notes.md", GOOD);
    put(
        &home,
        "project/notesoup-0123abcd/MAP.md",
        &format!("{GOOD}- `decisions.md` `@project/decisions.md`\n"),
    );
    put(&home, "project/notesoup-0123abcd/decisions.md", GOOD);
    put(
        &home,
        "pi/session/abc/checkpoint.md",
        &format!("{GOOD}`@human/prefs.md`\n"),
    );
    put(&home, LAST_RUN_FILE, "2026-09-15T09:31:45.392Z");
    put(&home, "dreams/x.md", "x");
    let report = doctor(&home);
    assert_eq!(
        render_output(&report.output(), &home),
        "stdout: doctor: OK (<home>)\nexit 0\n"
    );
    assert_eq!(report.exit_code(), 0);

    let empty = tempfile::tempdir().expect("tempdir");
    assert_eq!(doctor(empty.path()).exit_code(), 0);
}

#[test]
fn a_missing_home_is_a_finding_and_is_not_created() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("missing");
    let report = doctor(&home);
    assert_eq!(report.exit_code(), 1);
    assert_eq!(report.findings.len(), 1);
    assert_eq!(report.findings[0].path, ".");
    assert!(
        report.findings[0]
            .message
            .starts_with("cannot read notes home: ")
    );
    assert!(!home.exists());
}

/// A temporary file name of a write by `pid`.
fn temp_name(pid: u32) -> String {
    format!(".notesoup-{pid}-0123456789abcdef0123456789abcdef.tmp")
}

/// A process id that is not running (the kernel's limit is far below it).
const GONE: u32 = 999_999_999;

#[test]
fn doctor_names_hygiene_problems_by_name() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path();
    put(home, "human/ok.md", GOOD);
    put(home, "human/a\nforged: row.md", GOOD);
    put(home, "human/rlo\u{202e}dm.md", GOOD);
    put(home, "human/.git/config", "[core]\n");
    put(home, "human/.GIT.md", GOOD);
    put(home, &format!("human/{}", temp_name(GONE)), "partial");
    put(
        home,
        &format!("human/{}", temp_name(std::process::id())),
        "partial",
    );
    put(
        home,
        "human/ok.md.999999998.0123456789abcdef0123456789abcdef.tmp",
        "old form",
    );
    put(
        home,
        "human/big.md",
        &format!("{GOOD}{}\n", "x".repeat(1_000_000)),
    );
    let report = read_only_doctor(home);
    let found = finding_lines(&report);
    let me = std::process::id();
    let expected = [
        format!("human/{}: temporary file of an interrupted write; its writer (process {GONE}) is gone, `doctor clean --apply` removes it", temp_name(GONE)),
        format!("human/{}: temporary file of a write in progress or interrupted; its writer (process {me}) is still running", temp_name(me)),
        "human/.GIT.md: a note named like .git; no address can name it, `doctor clean --apply` moves it to human/dot-GIT.md".to_owned(),
        "human/.git: Git directory or .git note inside a home; the audit skips it and no address can name it".to_owned(),
        "human/a\\u{a}forged: row.md: name holds a control, line-separator or bidirectional character; no address can name it, rename it by hand".to_owned(),
        format!(
            "human/big.md: note is {} bytes, over the 1000000-byte limit; split it by topic",
            GOOD.len() + 1_000_001
        ),
        "human/ok.md.999999998.0123456789abcdef0123456789abcdef.tmp: temporary file of an interrupted write; its writer (process 999999998) is gone, `doctor clean --apply` removes it".to_owned(),
        "human/rlo\\u{202e}dm.md: name holds a control, line-separator or bidirectional character; no address can name it, rename it by hand".to_owned(),
    ];
    let mut found_sorted = found.clone();
    found_sorted.sort();
    let mut expected_sorted: Vec<String> = expected.to_vec();
    expected_sorted.sort();
    assert_eq!(found_sorted, expected_sorted, "{found:#?}");
    let printed = render_output(&report.output(), home);
    assert!(!printed.contains('\u{202e}'), "{printed}");
    assert!(!printed.contains("a\nforged"), "{printed}");
}

#[test]
fn clean_removes_only_stale_temporary_files_of_gone_writers() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path();
    let stale = format!("human/{}", temp_name(GONE));
    let running = format!("human/{}", temp_name(std::process::id()));
    let fresh = format!("project/p-0123abcd/{}", temp_name(GONE - 1));
    put(home, "human/ok.md", GOOD);
    put(home, &stale, "partial");
    put(home, &running, "partial");
    put(home, &fresh, "partial");
    put(home, ".git/objects/x.tmp", "git's own");
    put(home, &format!(".git/{}", temp_name(GONE)), "never entered");
    let in_home_git = format!("human/.git/{}", temp_name(GONE));
    put(home, &in_home_git, "never entered either");
    put(home, "human/unrelated.tmp", "not ours");
    let now = std::time::SystemTime::now();
    let old = now - std::time::Duration::from_secs(3600);
    for path in [&stale, &running, &in_home_git] {
        super::support::set_mtime(&home.join(path), old);
    }
    // `fresh` is seconds old: a slow writer may still be at it.

    let before = tree_hash(home);
    let dry = notesoup_core::dream::clean_temp_files(home, false, now);
    assert_eq!(tree_hash(home), before, "a dry run removes nothing");
    assert_eq!(dry.files, [(stale.clone(), Ok(()))]);
    let printed = render_output(&dry.output(), home);
    assert_eq!(
        printed,
        format!(
            "stdout: would remove {stale}\nstdout: doctor clean: 1 stale temporary file; run again with --apply to remove it\nexit 0\n"
        )
    );

    let applied = notesoup_core::dream::clean_temp_files(home, true, now);
    assert_eq!(applied.files, [(stale.clone(), Ok(()))]);
    assert!(!home.join(&stale).exists());
    for kept in [
        &running,
        &fresh,
        &"human/ok.md".to_owned(),
        &"human/unrelated.tmp".to_owned(),
    ] {
        assert!(home.join(kept).exists(), "{kept} is kept");
    }
    for git in [
        home.join(".git").join(temp_name(GONE)),
        home.join(&in_home_git),
    ] {
        assert!(git.exists(), ".git is never entered: {}", git.display());
    }
    let again = notesoup_core::dream::clean_temp_files(home, true, now);
    assert!(again.files.is_empty());
    assert_eq!(
        render_output(&again.output(), home),
        "stdout: doctor clean: no stale temporary files (<home>)\nexit 0\n"
    );
}

#[test]
fn doctor_reports_credentials_already_in_the_store() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path();
    put(home, "human/keys.md", &format!("{GOOD}aws: {AWS_KEY}\n"));
    put(
        home,
        "human/fine.md",
        &format!("{GOOD}commit 9fceb02d0ae598e95dc970b74767f19372d61af8\n"),
    );
    let report = doctor(home);
    let found = finding_lines(&report);
    assert_eq!(
        found,
        [
            "human/keys.md: holds a credential (AWS access key) on body line 2; move it out and keep a reference"
        ]
    );
}

/// Names Git takes for `.git` inside a home (and notes named like one):
/// the audit cannot record the store while one is there; doctor names each
/// and where `doctor clean --apply` moves it; the move keeps every note,
/// never replaces an entry, leaves `.git` itself alone, and the audit then
/// records the store.
#[test]
fn names_git_takes_for_git_are_found_and_moved() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    put(&home, "human/ok.md", GOOD);
    put(&home, "human/.git./x.md", GOOD);
    put(&home, "human/.git /y.md", GOOD);
    put(&home, "human/.git./.git./deep.md", GOOD);
    put(&home, "human/dot-git/taken.md", GOOD);
    put(&home, "human/git~1/z.md", GOOD);
    put(&home, "human/.git/config", "[core]\n");
    put(&home, "project/app-0123abcd/GIT~1.md", GOOD);
    put(&home, "agents/me/.g\u{200c}it/w.md", GOOD);
    // At the root a name like .git is not in a home: reported, not moved.
    put(&home, ".GIT/stray", "x");

    let refused = audit_commit(&home, "baseline").expect_err("Git refuses the names");
    assert_eq!(refused.code(), "audit_failed");

    let report = read_only_doctor(&home);
    let before = tree_hash(&home);
    insta::assert_snapshot!(
        "doctor_names_like_git",
        render_output(&report.output(), &home)
    );

    let now = std::time::SystemTime::now();
    let dry = clean_temp_files(&home, false, now);
    assert_eq!(tree_hash(&home), before, "a dry run moves nothing");
    let applied = clean_temp_files(&home, true, now);
    insta::assert_snapshot!(
        "doctor_clean_names_like_git",
        format!(
            "{}---\n{}",
            render_output(&dry.output(), &home),
            render_output(&applied.output(), &home)
        )
    );
    let dry_moves: Vec<_> = dry.moved.iter().map(|m| (&m.from, &m.to)).collect();
    let applied_moves: Vec<_> = applied.moved.iter().map(|m| (&m.from, &m.to)).collect();
    assert_eq!(
        dry_moves.len(),
        applied_moves.len(),
        "the dry run names every move"
    );
    for (path, text) in [
        ("human/dot-git-2/y.md", GOOD),
        ("human/dot-git-3/x.md", GOOD),
        ("human/dot-git-3/dot-git/deep.md", GOOD),
        ("human/dot-git/taken.md", GOOD),
        ("human/git-1/z.md", GOOD),
        ("human/.git/config", "[core]\n"),
        ("project/app-0123abcd/GIT-1.md", GOOD),
        ("agents/me/dot-git/w.md", GOOD),
        (".GIT/stray", "x"),
    ] {
        assert_eq!(
            fs::read_to_string(home.join(path)).unwrap_or_default(),
            text,
            "{path}"
        );
    }
    let after = doctor(&home);
    let left = finding_lines(&after);
    assert_eq!(
        left,
        [
            ".GIT: unexpected root entry",
            "human/.git: Git directory or .git note inside a home; the audit skips it and no address can name it",
        ]
    );
    fs::remove_dir_all(home.join(".GIT")).expect("the stray root entry, by hand");
    audit_commit(&home, "baseline").expect("the audit records the store");
}

/// A note whose name without `.md` is named like `.git` is made plain
/// before its `.md` (its stem's trailing dots go); a name like `.git`
/// through an NTFS stream separator that happens to end in `.md` is made
/// plain whole, and keeps what follows the separator, dots and all.
#[test]
fn a_note_named_like_git_is_made_plain_before_its_md() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path();
    let moves = [
        ("human/.git..md", "human/dot-git.md"),
        ("human/.git:x..md", "human/dot-git-x..md"),
    ];
    for (from, _) in moves {
        put(home, from, GOOD);
    }
    let applied = clean_temp_files(home, true, std::time::SystemTime::now());
    let moved: Vec<_> = applied
        .moved
        .iter()
        .map(|m| (m.from.as_str(), m.to.as_deref().unwrap_or_default()))
        .collect();
    assert_eq!(moved, moves);
    for (_, to) in moves {
        assert_eq!(fs::read_to_string(home.join(to)).unwrap_or_default(), GOOD);
    }
}

/// A plain name must leave room for a `-99` within a name's 255 bytes:
/// one that would not is no plain name, and the entry stays for a person.
#[test]
fn a_plain_name_leaves_room_for_its_number() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path();
    // `dot-git-` and 244 bytes: 252, and `-99` fits; one more does not.
    let fits = format!("human/.git:{}", "x".repeat(244));
    let too_long = format!("human/.git:{}", "y".repeat(245));
    for name in [&fits, &too_long] {
        put(home, name, "x");
    }
    let applied = clean_temp_files(home, true, std::time::SystemTime::now());
    let moved: Vec<_> = applied
        .moved
        .iter()
        .map(|m| (m.from.as_str(), m.to.as_deref(), m.result.clone()))
        .collect();
    let plain = format!("human/dot-git-{}", "x".repeat(244));
    assert_eq!(
        moved,
        [
            (fits.as_str(), Some(plain.as_str()), Ok(())),
            (
                too_long.as_str(),
                None,
                Err("no plain name; rename it by hand".to_owned())
            ),
        ]
    );
    assert!(home.join(&too_long).exists());
    assert!(home.join(&plain).exists());
}

/// `doctor clean` exits 1 when any one of its removals or moves failed,
/// whichever it was.
#[test]
fn a_clean_fails_when_any_one_step_failed() {
    let report = |file: Result<(), String>, moved: Result<(), String>, lock: Result<(), String>| {
        CleanReport {
            home: "/h".into(),
            applied: true,
            files: vec![("human/t.tmp".to_owned(), file)],
            moved: vec![MovedEntry {
                from: "human/.git.".to_owned(),
                to: Some("human/dot-git".to_owned()),
                result: moved,
            }],
            stale_lock: Some(lock),
        }
        .output()
        .exit_code
    };
    let failed = || Err("denied".to_owned());
    assert_eq!(report(Ok(()), Ok(()), Ok(())), 0);
    assert_eq!(report(failed(), Ok(()), Ok(())), 1);
    assert_eq!(report(Ok(()), failed(), Ok(())), 1);
    assert_eq!(report(Ok(()), Ok(()), failed()), 1);
}

/// A sync conflict's side note is a finding until it is merged and
/// crumpled: doctor names the note it belongs beside.
#[test]
fn an_unresolved_sync_conflict_is_named_with_its_note() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path();
    let crumpled = GOOD.replace(
        "accessCount: 3\n",
        "accessCount: 3\ncrumpledAt: 2026-09-16T09:31:45Z\n",
    );
    for (path, text) in [
        ("human/db.md", GOOD),
        ("human/db.conflict-from-laptop-0123abc.md", GOOD),
        ("human/old.conflict-from-laptop-0123abc.md", &crumpled),
    ] {
        put(home, path, text);
    }
    let report = read_only_doctor(home);
    assert_eq!(
        finding_lines(&report),
        [
            "human/db.conflict-from-laptop-0123abc.md: unresolved sync conflict: another machine's version of human/db.md; merge what it holds into human/db.md, then crumple or delete this note"
        ]
    );
    assert_eq!(report.exit_code(), 1);
}
