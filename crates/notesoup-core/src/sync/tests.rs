//! The merge's rules and the set-up's checks, one by one (the whole sync
//! runs over real Git in `tests/core/sync.rs`).

use super::merge::{NoteMerge, NoteTree, is_home_map, merge_note, merge_text, merge_trees};
use super::tree::{Applied, Scope, apply, note_path};
use super::{SyncConfig, SyncLock, changed_notes, conflict_name, machine_name, oversized};

/// A note's frontmatter fields in notesoup's order, all dated 2026-01-02.
const FIELDS: &str = "origin: self\ncreatedAt: 2026-01-02T00:00:00.000+00:00\nupdatedAt: 2026-01-02T00:00:00.000+00:00\nlastAccessed: 2026-01-02T00:00:00.000+00:00\naccessCount: 0\n";
/// The same fields in another order.
const REORDERED: &str = "updatedAt: 2026-01-02T00:00:00.000+00:00\norigin: self\ncreatedAt: 2026-01-02T00:00:00.000+00:00\nlastAccessed: 2026-01-02T00:00:00.000+00:00\naccessCount: 0\n";

/// A note of [`FIELDS`] crumpled on 2026-02-01.
fn crumpled(body: &str) -> String {
    note(
        &format!("{FIELDS}crumpledAt: 2026-02-01T00:00:00.000+00:00\n"),
        body,
    )
}

/// A note of [`FIELDS`] read once.
fn read_once(body: &str) -> String {
    note(&FIELDS.replace("accessCount: 0", "accessCount: 1"), body)
}

/// A tree of `(path, text)` notes.
fn tree(entries: &[(&str, &str)]) -> NoteTree {
    entries
        .iter()
        .map(|(path, text)| ((*path).to_owned(), text.as_bytes().to_vec()))
        .collect()
}

fn clean(merge: NoteMerge) -> String {
    match merge {
        NoteMerge::Clean(bytes) => String::from_utf8(bytes).expect("utf-8"),
        NoteMerge::Conflict => panic!("conflict"),
    }
}

#[test]
fn changes_in_different_places_both_land() {
    let base = "a\nb\nc\nd\n";
    let merged = merge_text(base, "A\nb\nc\nd\n", "a\nb\nc\nD\n", false);
    assert_eq!(merged.as_deref(), Some("A\nb\nc\nD\n"));
    // The same change on both sides is taken once.
    let merged = merge_text(base, "a\nB\nc\nd\n", "a\nB\nc\nd\n", false);
    assert_eq!(merged.as_deref(), Some("a\nB\nc\nd\n"));
    // A deletion and an edit far apart.
    let merged = merge_text(base, "b\nc\nd\n", "a\nb\nc\nd\ne\n", false);
    assert_eq!(merged.as_deref(), Some("b\nc\nd\ne\n"));
}

#[test]
fn changes_to_the_same_lines_conflict() {
    assert_eq!(merge_text("a\nb\n", "a\nX\n", "a\nY\n", false), None);
    // Both appended at the end: the same place.
    assert_eq!(merge_text("a\n", "a\nx\n", "a\ny\n", false), None);
    // Added on both sides with different text (no base).
    assert_eq!(merge_text("", "x\n", "y\n", false), None);
}

#[test]
fn a_home_map_merges_as_a_union_of_lines() {
    assert!(is_home_map("human/MAP.md"));
    assert!(is_home_map("project/shop-0123abcd/MAP.md"));
    assert!(is_home_map("agents/pi/MAP.md"));
    assert!(!is_home_map("human/topics/MAP.md"));
    let merged = merge_text("- a\n", "- a\n- ours\n", "- a\n- theirs\n", true);
    assert_eq!(merged.as_deref(), Some("- a\n- ours\n- theirs\n"));
    // A line ours removed stays removed; theirs' additions come in.
    let merged = merge_text("- a\n- b\n", "- a\n- c\n", "- a\n- b\n- d\n", true);
    assert_eq!(merged.as_deref(), Some("- a\n- c\n- d\n"));
    // Ours' last line without its newline gets one before theirs' lines.
    let merged = merge_text("- a\n", "- a\n- ours", "- a\n- theirs\n", true);
    assert_eq!(merged.as_deref(), Some("- a\n- ours\n- theirs\n"));
}

/// The clean merge of a note under `human/` from `base`.
fn merged_note(base: &str, ours: &str, theirs: &str) -> String {
    clean(merge_note(
        "human/x.md",
        Some(base.as_bytes()),
        ours.as_bytes(),
        theirs.as_bytes(),
    ))
}

fn note(fields: &str, body: &str) -> String {
    format!("---\n{fields}---\n\n{body}")
}

#[test]
fn frontmatter_merges_field_by_field() {
    let base = note(
        "origin: self\ncreatedAt: 2026-01-02T00:00:00.000+00:00\nupdatedAt: 2026-01-02T00:00:00.000+00:00\nlastAccessed: 2026-01-02T00:00:00.000+00:00\naccessCount: 10\ntopic: db\n",
        "body\n",
    );
    let ours = note(
        "origin: self\ncreatedAt: 2026-01-02T00:00:00.000+00:00\nupdatedAt: 2026-01-05T00:00:00.000+00:00\nlastAccessed: 2026-01-03T00:00:00.000+00:00\naccessCount: 12\ntopic: database\n",
        "body\nours\n",
    );
    let theirs = note(
        "origin: external\ncreatedAt: 2026-01-01T00:00:00.000+00:00\nupdatedAt: 2026-01-04T00:00:00.000+00:00\nlastAccessed: 2026-01-06T00:00:00.000+00:00\naccessCount: 11\ntopic: db\nstatus: active\n",
        "theirs\nbody\n",
    );
    let merged = merged_note(&base, &ours, &theirs);
    assert_eq!(
        merged,
        note(
            "origin: external\ncreatedAt: 2026-01-01T00:00:00.000+00:00\nupdatedAt: 2026-01-05T00:00:00.000+00:00\nlastAccessed: 2026-01-06T00:00:00.000+00:00\naccessCount: 13\ntopic: database\nstatus: active\n",
            "theirs\nbody\nours\n",
        )
    );
}

/// A side whose note has no frontmatter block adds no metadata: the side
/// with the block is kept whole when its body is the merged one (its times
/// not mixed with a missing block's zeros). The same block on both sides
/// is kept byte for byte, in whatever order it was written; blocks that
/// differ are written anew, in notesoup's order.
#[test]
fn a_missing_block_adds_nothing_and_a_shared_block_is_kept_as_written() {
    let base = "one\n";
    let ours = note(FIELDS, "one\ntwo\n");
    let merged = merged_note(base, &ours, base);
    assert_eq!(merged, ours);
    // The block dropped on their side (the note saved by another editor)
    // while ours edited the body: ours, block and all.
    let base = note(FIELDS, "one\n");
    let merged = merged_note(&base, &ours, "one\n");
    assert_eq!(merged, ours);

    let base = note(REORDERED, "a\nb\nc\n");
    let ours = note(REORDERED, "A\nb\nc\n");
    let theirs = note(REORDERED, "a\nb\nC\n");
    let merged = merged_note(&base, &ours, &theirs);
    assert_eq!(
        merged,
        note(REORDERED, "A\nb\nC\n"),
        "the shared block as written"
    );
    let theirs = note(FIELDS, "a\nb\nC\n");
    let merged = merged_note(&base, &ours, &theirs);
    assert_eq!(merged, note(FIELDS, "A\nb\nC\n"), "written anew");
}

#[test]
fn a_crumple_gives_way_to_an_edit_on_the_other_side() {
    let base = note(FIELDS, "one\n");
    let crumpled = crumpled("one\n");
    let edited = note(FIELDS, "one\ntwo\n");
    for (ours, theirs) in [(&crumpled, &edited), (&edited, &crumpled)] {
        let merged = merged_note(&base, ours, theirs);
        assert!(!merged.contains("crumpledAt"), "{merged}");
        assert!(merged.ends_with("\n\none\ntwo\n"), "{merged}");
    }
    // Crumpled on one side, only read on the other: crumpled.
    let read = read_once("one\n");
    let merged = merged_note(&base, &crumpled, &read);
    assert!(merged.contains("crumpledAt: 2026-02-01"), "{merged}");
    assert!(merged.contains("accessCount: 1"), "{merged}");
}

#[test]
fn trees_merge_per_path_and_conflicts_go_beside() {
    let base = tree(&[
        ("human/a.md", "a\n"),
        ("human/b.md", "b\n"),
        ("human/c.md", "c\n"),
        ("human/d.md", "d\n"),
    ]);
    let ours = tree(&[
        ("human/a.md", "a ours\n"),
        ("human/c.md", "c\n"),
        ("human/new.md", "n\n"),
    ]);
    let theirs = tree(&[
        ("human/a.md", "a theirs\n"),
        ("human/b.md", "b theirs\n"),
        ("human/d.md", "d\n"),
        ("pi/session/s/x.md", "session of theirs\n"),
    ]);
    let scope = Scope {
        homes: vec!["human"],
        exclude: Vec::new(),
    };
    let merged = merge_trees(
        &base,
        &ours,
        &theirs,
        |path| scope.contains(path),
        |path, _taken| format!("{path}.side"),
    );
    let got: Vec<(&str, &str)> = merged
        .tree
        .iter()
        .map(|(path, bytes)| (path.as_str(), std::str::from_utf8(bytes).expect("utf-8")))
        .collect();
    assert_eq!(
        got,
        vec![
            ("human/a.md", "a ours\n"),
            ("human/a.md.side", "a theirs\n"),
            // Deleted here, changed there: the change stays.
            ("human/b.md", "b theirs\n"),
            // Deleted on one side, unchanged on the other (`c`, `d`):
            // gone. Added here: kept.
            ("human/new.md", "n\n"),
            // Not this machine's to merge: theirs, untouched.
            ("pi/session/s/x.md", "session of theirs\n"),
        ]
    );
    assert_eq!(
        merged.conflicts,
        vec![("human/a.md".to_owned(), "human/a.md.side".to_owned())]
    );
}

#[test]
fn only_plain_note_paths_are_synced() {
    let scope = Scope {
        homes: vec!["project", "human", "agents"],
        exclude: vec!["human/private".to_owned()],
    };
    assert!(scope.contains("human/a.md"));
    assert!(scope.contains("project/shop-0123abcd/a/b.md"));
    assert!(!scope.contains("project/a.md"));
    assert!(!scope.contains("agents/a.md"));
    assert!(!scope.contains("human/private/a.md"));
    assert!(!scope.contains("human/private.md/x"));
    assert!(scope.contains("human/privateer.md"));
    assert!(!scope.contains("models/x/a.md"));
    for bad in [
        "human/../etc/passwd.md",
        "human/.git/config.md",
        "human/.hidden.md",
        "human//a.md",
        "human/a.txt",
        "human/git~1/a.md",
        "human/a\nb.md",
    ] {
        assert!(!note_path(bad), "{bad:?}");
    }
}

#[test]
fn a_note_written_while_a_sync_runs_is_merged_again_never_overwritten() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    std::fs::create_dir_all(root.join("human")).expect("home");
    let side = |path: &str, _taken: &dyn Fn(&str) -> bool| format!("{path}.side.md");
    let text = |name: &str| std::fs::read_to_string(root.join(name)).expect("read");
    // `human/a.md` is `now` on disk; the sync read `read` and merged it into
    // `merged`.
    let apply_over = |now: &str, read: &[u8], merged: &[u8]| {
        std::fs::write(root.join("human/a.md"), now).expect("write");
        apply(root, "human/a.md", Some(read), Some(merged), &side).expect("applied")
    };
    // As the sync read it: unchanged since, so the merge's version lands.
    let applied = apply_over("one\ntwo\n", b"one\ntwo\n", b"one\ntwo\nthree\n");
    assert_eq!(applied, Applied::AsMerged);
    assert_eq!(text("human/a.md"), "one\ntwo\nthree\n");
    // Written meanwhile, elsewhere in the note: both changes kept.
    let applied = apply_over(
        "zero\none\ntwo\nthree\n",
        b"one\ntwo\nthree\n",
        b"one\ntwo\nthree\nfour\n",
    );
    assert_eq!(applied, Applied::Remerged { side: None });
    assert_eq!(text("human/a.md"), "zero\none\ntwo\nthree\nfour\n");
    // Written meanwhile in the same place: the write stays, the merge's
    // version goes beside it.
    let applied = apply_over("mine\n", b"zero\n", b"theirs\n");
    assert_eq!(
        applied,
        Applied::Remerged {
            side: Some("human/a.md.side.md".to_owned())
        }
    );
    assert_eq!(text("human/a.md"), "mine\n");
    assert_eq!(text("human/a.md.side.md"), "theirs\n");
    // A delete of a note written meanwhile keeps it.
    let applied = apply(root, "human/a.md", Some(b"zero\n"), None, &side);
    assert_eq!(applied.expect("applied"), Applied::Kept);
    assert!(root.join("human/a.md").exists());
}

/// One side with a frontmatter block, the other without (saved by an
/// editor that drops it): the block side is kept byte for byte only when
/// its body is the merged one; otherwise both bodies' edits land under the
/// block, written anew.
#[test]
fn a_block_on_one_side_is_kept_whole_only_when_its_body_is_the_merge() {
    let base = "a\nb\nc\n";
    let with_block = note(REORDERED, "A\nb\nc\n");
    for ours_has_block in [true, false] {
        let merge = |block_side: &str, other: &str| {
            if ours_has_block {
                merged_note(base, block_side, other)
            } else {
                merged_note(base, other, block_side)
            }
        };
        let side = if ours_has_block { "ours" } else { "theirs" };
        // The other side left the body alone: the block side as written.
        assert_eq!(merge(&with_block, base), with_block, "{side}: kept whole");
        // The other side edited elsewhere: both edits, the block anew.
        assert_eq!(
            merge(&with_block, "a\nb\nC\n"),
            note(FIELDS, "A\nb\nC\n"),
            "{side}: both edits"
        );
    }
}

/// A note crumpled on a side that also edited it stays crumpled when the
/// other side only read it; an unknown field changed or removed on one
/// side only takes that side's change.
#[test]
fn a_crumple_with_its_own_edit_stands_and_extras_take_the_one_change() {
    let base = note(FIELDS, "one\n");
    let crumpled_and_edited = crumpled("one\ntwo\n");
    let read = read_once("one\n");
    for (ours, theirs) in [(&crumpled_and_edited, &read), (&read, &crumpled_and_edited)] {
        let merged = merged_note(&base, ours, theirs);
        assert!(merged.contains("crumpledAt: 2026-02-01"), "{merged}");
        assert!(merged.ends_with("\n\none\ntwo\n"), "{merged}");
    }

    // One side changed `topic` and removed `status`, the other left both
    // alone: the change and the removal land, whichever side made them.
    let base = note(&format!("{FIELDS}topic: db\nstatus: draft\n"), "one\n");
    let alone = note(&format!("{FIELDS}topic: db\nstatus: draft\n"), "one\ntwo\n");
    let changed = note(&format!("{FIELDS}topic: database\n"), "one\n");
    for (ours, theirs) in [(&alone, &changed), (&changed, &alone)] {
        let merged = merged_note(&base, ours, theirs);
        assert_eq!(
            merged,
            note(&format!("{FIELDS}topic: database\n"), "one\ntwo\n")
        );
    }
    // Removed on one side, changed on the other: the change stays.
    let removed = note(FIELDS, "one\n");
    let final_ = note(&format!("{FIELDS}topic: db\nstatus: final\n"), "one\n");
    for (ours, theirs) in [(&removed, &final_), (&final_, &removed)] {
        let merged = merged_note(&base, ours, theirs);
        assert!(merged.contains("status: final\n"), "{merged}");
    }
}

/// A set-up is checked before it is saved and after it is read: a remote
/// git would take for an option or that holds a control character, a
/// branch name Git refuses, a wait past the limit, an unknown home or an
/// excluded path outside the root are each refused with `invalid`.
#[test]
fn a_set_up_git_or_the_merge_cannot_use_is_refused() {
    let check = |edit: &dyn Fn(&mut SyncConfig)| {
        let mut config = SyncConfig::new("/srv/notes.git", None).expect("config");
        edit(&mut config);
        config.check().map_err(|err| {
            assert_eq!(err.code(), "invalid", "{err}");
            err.to_string()
        })
    };
    for remote in ["", "  ", "-x", "--upload-pack=evil", "a\u{7}b", "a\nb"] {
        let refused = check(&|config| config.remote = remote.to_owned());
        assert!(refused.expect_err(remote).contains("not a URL or path"));
    }
    for remote in ["git@host:notes.git", "https://host/notes.git", "a-b"] {
        assert_eq!(check(&|config| config.remote = remote.to_owned()), Ok(()));
    }
    for branch in [
        "", "-b", "/b", ".b", "b/", "b.", "b.lock", "a..b", "a//b", "a@{1}", "a b", "a~1", "a^",
        "a:b", "a?", "a*", "a[", "a\\b", "a\u{1}b",
    ] {
        let refused = check(&|config| config.branch = branch.to_owned());
        assert!(
            refused
                .expect_err(branch)
                .contains("not a valid Git branch name"),
            "{branch:?}"
        );
    }
    for branch in [
        "main",
        "notes/main",
        "v1.2",
        "a-b_c",
        "lock",
        "a.locks",
        "a@b",
        "a{b}",
    ] {
        assert_eq!(
            check(&|config| config.branch = branch.to_owned()),
            Ok(()),
            "{branch:?}"
        );
    }
    let wait = |ms: u64| check(&|config| config.auto_wait_ms = ms);
    assert_eq!(wait(SyncConfig::MAX_AUTO_WAIT_MS), Ok(()));
    assert!(wait(SyncConfig::MAX_AUTO_WAIT_MS + 1).is_err());
    for (homes, ok) in [(&["session", "models"][..], true), (&["pi"][..], false)] {
        let homes: Vec<String> = homes.iter().map(|home| (*home).to_owned()).collect();
        assert_eq!(check(&|config| config.homes.clone_from(&homes)).is_ok(), ok);
    }
    for (path, ok) in [
        ("human/private", true),
        ("human/a..b", true),
        ("", false),
        ("/etc", false),
        ("human/../x", false),
        ("..", false),
    ] {
        let checked = check(&|config| config.exclude = vec![path.to_owned()]);
        assert_eq!(checked.is_ok(), ok, "{path:?}");
    }
}

/// A set-up saved without the optional fields reads with their defaults.
#[test]
fn a_set_up_without_its_optional_fields_reads_with_the_defaults() {
    let config: SyncConfig =
        serde_json::from_str(r#"{"remote": "/srv/notes.git"}"#).expect("a set-up");
    assert_eq!(
        config,
        SyncConfig::new("/srv/notes.git", None).expect("config")
    );
    assert_eq!(config.branch, "main");
    assert_eq!(config.homes, ["project", "human", "agents", "models"]);
    assert_eq!(config.auto_wait_ms, SyncConfig::DEFAULT_AUTO_WAIT_MS);
    assert!(!config.auto && config.exclude.is_empty());
}

/// A second sync on this machine waits for the first one's lock, and gives
/// up with `sync_busy` when the wait is over; a free lock is taken at once.
#[test]
fn a_sync_waits_for_the_lock_and_is_busy_when_the_wait_is_over() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("sync.lock");
    let held = SyncLock::acquire(&path, std::time::Duration::ZERO).expect("a free lock");
    let started = std::time::Instant::now();
    let wait = std::time::Duration::from_millis(100);
    let err = SyncLock::acquire(&path, wait).expect_err("held");
    assert_eq!(err.code(), "sync_busy");
    assert!(
        started.elapsed() >= wait,
        "gave up before the wait was over"
    );
    drop(held);
    SyncLock::acquire(&path, std::time::Duration::ZERO).expect("freed");
}

/// This machine is named in sync commits and conflict notes by its host
/// name, as a slug.
#[test]
fn this_machine_is_named_by_its_host_name_as_a_slug() {
    let output = std::process::Command::new("uname")
        .arg("-n")
        .output()
        .expect("uname");
    let host = String::from_utf8(output.stdout).expect("utf-8");
    let slug = crate::notes::slugify(host.trim());
    let expected = if slug.is_empty() { "machine" } else { &slug };
    assert_eq!(machine_name(), expected);
}

/// A conflict's side note is named after the note, the other machine and
/// its commit; a name already taken gets `-2`, `-3`, ….
#[test]
fn a_conflict_s_side_note_takes_the_first_free_name() {
    let first = "human/a.conflict-from-laptop-abc1234.md";
    let name =
        |taken: &[&str]| conflict_name("human/a.md", "laptop", "abc1234", &|n| taken.contains(&n));
    assert_eq!(name(&[]), first);
    assert_eq!(name(&[first]), "human/a.conflict-from-laptop-abc1234-2.md");
    assert_eq!(
        name(&[first, "human/a.conflict-from-laptop-abc1234-2.md"]),
        "human/a.conflict-from-laptop-abc1234-3.md"
    );
}

/// A note of exactly the store's bound travels; one byte more stays home.
#[test]
fn only_notes_over_the_bound_stay_home() {
    let bound = crate::notes::NoteStore::MAX_NOTE_BYTES;
    let tree: NoteTree = [
        ("human/at.md".to_owned(), vec![b'a'; bound]),
        ("human/over.md".to_owned(), vec![b'a'; bound + 1]),
    ]
    .into_iter()
    .collect();
    assert_eq!(oversized(&tree), ["human/over.md"]);
}

/// Notes added, changed and (among those looked at) removed each count.
#[test]
fn changed_notes_count_additions_changes_and_removals() {
    let old = tree(&[("a", "1"), ("b", "1"), ("c", "1"), ("d", "1")]);
    let new = tree(&[("a", "2"), ("b", "1"), ("e", "1")]);
    assert_eq!(changed_notes(&new, &old, |_| true), 4);
    assert_eq!(changed_notes(&new, &old, |path| path != "d"), 3);
    assert_eq!(changed_notes(&old, &old, |_| true), 0);
}
