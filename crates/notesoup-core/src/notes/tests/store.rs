//! write / read / update / rename on real temp directories, every refusal.

use crate::notes::{
    ChangeKind, DeleteOutcome, NoteError, NoteOrigin, Scope, UpdateRequest, WriteOutcome, local_iso,
};
use crate::tools::RefusalCode;
use jiff::tz::TimeZone;

use super::support::{Fixture, PROJECT, code, crumpling, edits, put};

fn iso(ms: i64) -> String {
    local_iso(ms, &TimeZone::UTC)
}

/// `result` is a refusal with `code` and `message`.
#[track_caller]
fn assert_refusal<T: std::fmt::Debug>(
    result: Result<T, NoteError>,
    code: RefusalCode,
    message: &str,
) {
    let refusal = result.expect_err("a refusal");
    assert_eq!(refusal.code(), code);
    assert_eq!(refusal.message(), message);
}

#[test]
fn write_creates_a_session_note_with_the_exact_layout() {
    let f = Fixture::new();
    let written = f
        .store
        .write("plans/today", "# Today\nship it\n", None)
        .expect("write");
    assert_eq!(written.outcome, WriteOutcome::Created);
    assert_eq!(written.location.address, "plans/today.md");
    assert_eq!(written.location.scope, Scope::Session);
    assert_eq!(
        written.location.path,
        f.root().join("pi/session/s1/plans/today.md")
    );
    let m = &written.meta;
    assert_eq!(
        (m.created_at, m.last_accessed),
        (m.updated_at, m.updated_at)
    );
    assert_eq!(m.access_count, 0);
    assert_eq!(m.project.as_deref(), Some(PROJECT));
    let t = iso(m.updated_at);
    assert_eq!(
        f.raw("pi/session/s1/plans/today.md"),
        format!(
            "---\norigin: self\ncreatedAt: {t}\nupdatedAt: {t}\nlastAccessed: {t}\naccessCount: 0\nproject: {PROJECT}\n---\n\n# Today\nship it\n"
        )
    );
    assert!(t.ends_with("+00:00"), "{t}");
}

#[test]
fn write_outcomes_and_kept_metadata() {
    let f = Fixture::new();
    let first = f
        .store
        .write("@project/a", "one", Some(NoteOrigin::User))
        .expect("create");
    assert_eq!(first.meta.origin, NoteOrigin::User);
    assert_eq!(first.meta.project, None, "only session notes get project");
    f.store.read("@project/a").expect("read").expect("exists");
    let second = f
        .store
        .write("@project/a.md", "two", None)
        .expect("overwrite");
    assert_eq!(second.outcome, WriteOutcome::Overwritten);
    assert_eq!(
        second.meta.origin,
        NoteOrigin::SelfAuthored,
        "origin defaults to self"
    );
    assert_eq!(second.meta.created_at, first.meta.created_at);
    assert_eq!(second.meta.access_count, 1, "access metadata is kept");
    assert!(second.meta.updated_at > first.meta.updated_at);
    let crumpled = f.store.update("@project/a", &crumpling()).expect("crumple");
    assert!(crumpled.meta.is_crumpled());
    let third = f
        .store
        .write("@project/a", "three", None)
        .expect("uncrumple");
    assert_eq!(third.outcome, WriteOutcome::Uncrumpled);
    assert!(!third.meta.is_crumpled());
    let body = f
        .store
        .read("@project/a")
        .expect("read")
        .expect("exists")
        .body;
    assert_eq!(body, "three");
}

#[test]
fn write_strips_leading_frontmatter_and_keeps_extras() {
    let f = Fixture::new();
    f.put(
        "human/prefs.md",
        "---\ncreatedAt: 2020-01-01T00:00:00.000+00:00\ncreated_at: legacy\ntags:\n  - a\n  - b\nscope: human\n---\n\nold\n",
    );
    let written = f
        .store
        .write(
            "@human/prefs",
            "---\norigin: user\nfoo: bar\n---\n\nnew body\n",
            None,
        )
        .expect("write");
    assert_eq!(written.meta.created_at, 1_577_836_800_000);
    let raw = f.raw("human/prefs.md");
    let t = iso(written.meta.updated_at);
    assert_eq!(
        raw,
        format!(
            "---\norigin: self\ncreatedAt: 2020-01-01T00:00:00.000+00:00\nupdatedAt: {t}\nlastAccessed: {l}\naccessCount: 0\ncreated_at: legacy\ntags:\n  - a\n  - b\n---\n\nnew body\n",
            l = iso(written.meta.last_accessed)
        )
    );
}

#[test]
fn read_updates_access_metadata_and_misses_return_none() {
    let f = Fixture::new();
    assert!(f.store.read("nothing").expect("read").is_none());
    assert!(f.store.read("@agents/bob/nothing").expect("read").is_none());
    let written = f
        .store
        .write("@self/diary", "dear diary", None)
        .expect("write");
    assert_eq!(written.location.address, "@self/diary.md");
    // The read's clock, not the write's: write stamps strictly increase
    // within a process and may run ahead of the clock when many writes
    // share a millisecond (as in this test binary).
    let before_read = crate::notes::now_ms();
    let first = f.store.read("@self/diary").expect("read").expect("exists");
    assert_eq!(first.location.scope, Scope::Agent);
    assert_eq!(first.body, "dear diary");
    assert_eq!(first.meta.access_count, 1);
    assert!(first.meta.last_accessed >= before_read);
    assert_eq!(
        first.meta.updated_at, written.meta.updated_at,
        "reads never bump updatedAt"
    );
    let second = f
        .store
        .read("@agents/alice/diary.md")
        .expect("read")
        .expect("exists");
    assert_eq!(
        second.location.address, "@self/diary.md",
        "own homes render as @self/"
    );
    assert_eq!(second.meta.access_count, 2);
    assert!(f.raw("agents/alice/diary.md").contains("accessCount: 2\n"));
}

#[test]
fn foreign_homes_are_readable_but_never_writable() {
    let f = Fixture::new();
    let bob = f.as_other("bob", "claude");
    bob.write("@self/secret", "bob's", None)
        .expect("bob writes his home");
    bob.write("@model/tips", "claude tips", None)
        .expect("bob writes his model home");
    let read = f
        .store
        .read("@agents/bob/secret")
        .expect("read")
        .expect("exists");
    assert_eq!(read.location.address, "@agents/bob/secret.md");
    assert_eq!(
        read.meta.access_count, 1,
        "reading a foreign note updates its access metadata"
    );
    let model_note = f
        .store
        .read("@models/claude/tips")
        .expect("read")
        .expect("exists");
    assert_eq!(model_note.location.address, "@models/claude/tips.md");
    assert_refusal(
        f.store.write("@agents/bob/secret", "mine now", None),
        RefusalCode::InvalidScope,
        "@agents/bob/ is not your home: writable homes are this session, @project/, @human/, @self/, and the current @model/ home",
    );
    let refused = f
        .store
        .update("@models/claude/tips", &edits(&[("claude", "x")]));
    assert_eq!(
        refused.expect_err("foreign").message(),
        "@models/claude/ is not your home: writable homes are this session, @project/, @human/, @self/, and the current @model/ home"
    );
    assert_eq!(
        [
            code(f.store.rename("@agents/bob/secret", "stolen")),
            code(f.store.rename("mine", "@agents/bob/gift")),
        ],
        [RefusalCode::InvalidScope; 2]
    );
    assert!(f.raw("agents/bob/secret.md").ends_with("\n\nbob's"));
}

#[test]
fn the_current_model_home_follows_the_identity() {
    let f = Fixture::new();
    f.store
        .write("@model/tips", "gpt tips", None)
        .expect("write");
    let switched = f.as_other("alice", "o3");
    let read = switched
        .read("@models/gpt/tips")
        .expect("read")
        .expect("exists");
    assert_eq!(read.location.address, "@models/gpt/tips.md");
    assert_eq!(
        code(switched.write("@models/gpt/tips", "x", None)),
        RefusalCode::InvalidScope
    );
    assert!(switched.read("@model/tips").expect("read").is_none());
}

#[test]
fn update_refusals() {
    let f = Fixture::new();
    let none = f
        .store
        .update("a", &UpdateRequest::default())
        .expect_err("nothing");
    assert_eq!(none.code(), RefusalCode::NothingToDo);
    assert_eq!(
        code(f.store.update("a", &edits(&[("x", "y")]))),
        RefusalCode::NotFound
    );
    f.store
        .write("a", "alpha\nbeta\nalpha\n", None)
        .expect("write");
    let refused = |pairs: &[(&str, &str)]| f.store.update("a", &edits(pairs)).expect_err("refused");
    let empty = refused(&[("beta", "b"), ("", "z")]);
    assert_eq!(
        (empty.code(), empty.edit_index()),
        (RefusalCode::NoMatch, Some(1))
    );
    let missing = refused(&[("gamma", "g")]);
    assert_eq!(
        (missing.code(), missing.edit_index()),
        (RefusalCode::NoMatch, Some(0))
    );
    let ambiguous = refused(&[("alpha", "a")]);
    assert_eq!(ambiguous.code(), RefusalCode::AmbiguousEdit);
    assert_eq!(ambiguous.line_numbers(), Some(&[1, 3][..]));
    assert_eq!(ambiguous.edit_index(), Some(0));
    assert_eq!(
        ambiguous.message(),
        "edit 0: oldText occurs 2 times (lines 1, 3); add surrounding text to make it unique or pass replace_all"
    );
    assert!(
        f.raw("pi/session/s1/a.md")
            .ends_with("\n\nalpha\nbeta\nalpha\n"),
        "all or nothing"
    );
}

#[test]
fn ambiguous_edit_names_at_most_eight_lines() {
    let f = Fixture::new();
    let body: String = (0..11).map(|i| format!("row {i} x\n")).collect();
    f.store.write("many", &body, None).expect("write");
    let error = f
        .store
        .update("many", &edits(&[("x", "y")]))
        .expect_err("ambiguous");
    assert_eq!(
        error.message(),
        "edit 0: oldText occurs 11 times (lines 1, 2, 3, 4, 5, 6, 7, 8 and 3 more); add surrounding text to make it unique or pass replace_all"
    );
    assert_eq!(error.line_numbers().map(<[usize]>::len), Some(11));
}

#[test]
fn edits_apply_in_order_on_the_evolving_body() {
    let f = Fixture::new();
    let written = f.store.write("a", "one two two", None).expect("write");
    let updated = f
        .store
        .update(
            "a",
            &edits(&[("one", "three"), ("three two", "done"), ("two", "two")]),
        )
        .expect("update");
    assert_eq!(
        updated.applied, 2,
        "an edit with oldText == newText is not counted"
    );
    assert_eq!(updated.change.kind, ChangeKind::Body);
    assert_eq!(
        (
            updated.change.before.as_str(),
            updated.change.after.as_str()
        ),
        ("one two two", "done two")
    );
    assert!(updated.meta.updated_at > written.meta.updated_at);
    let all = f
        .store
        .update(
            "a",
            &UpdateRequest {
                replace_all: true,
                ..edits(&[("o", "0")])
            },
        )
        .expect("replace all");
    assert_eq!(all.change.after, "d0ne tw0");
}

/// `edited_body` answers what an update's edits would leave, touching
/// nothing: no note or an edit that does not apply is `None`.
#[test]
fn edited_body_previews_the_edits_without_writing() {
    let f = Fixture::new();
    assert_eq!(
        f.store.edited_body("a", &edits(&[("x", "y")])).ok(),
        Some(None)
    );
    f.store.write("a", "one two two", None).expect("write");
    let before = f.raw("pi/session/s1/a.md");
    let preview = |request: &UpdateRequest| f.store.edited_body("a", request).expect("preview");
    assert_eq!(
        preview(&edits(&[("one", "three"), ("three two", "done")])).as_deref(),
        Some("done two")
    );
    assert_eq!(preview(&edits(&[("two", "2")])), None, "ambiguous");
    assert_eq!(preview(&edits(&[("gone", "x")])), None, "missing");
    let all = UpdateRequest {
        replace_all: true,
        ..edits(&[("two", "2")])
    };
    assert_eq!(preview(&all).as_deref(), Some("one 2 2"));
    assert_eq!(f.raw("pi/session/s1/a.md"), before, "nothing written");
}

#[test]
fn crumple_and_smooth_never_touch_updated_at() {
    let f = Fixture::new();
    let written = f.store.write("@human/old", "stale", None).expect("write");
    let crumple = crumpling();
    let first = f.store.update("@human/old", &crumple).expect("crumple");
    assert_eq!(first.change.kind, ChangeKind::Metadata);
    assert_eq!(first.applied, 0);
    assert_eq!(first.meta.updated_at, written.meta.updated_at);
    let at = first.meta.crumpled_at.expect("crumpled");
    assert!(
        first
            .change
            .after
            .contains(&format!("crumpledAt: {}\n", iso(at)))
    );
    assert!(first.change.after.starts_with("---\n") && first.change.after.ends_with("---\n"));
    let again = f.store.update("@human/old", &crumple).expect("re-crumple");
    assert_eq!(again.change.kind, ChangeKind::None);
    assert_eq!(
        (again.change.before.as_str(), again.change.after.as_str()),
        ("", "")
    );
    assert_eq!(
        again.meta.crumpled_at,
        Some(at),
        "re-crumpling keeps the first time"
    );
    let smooth = UpdateRequest {
        crumpled: Some(false),
        ..Default::default()
    };
    let smoothed = f.store.update("@human/old", &smooth).expect("smooth");
    assert_eq!(smoothed.meta.crumpled_at, None);
    assert_eq!(smoothed.meta.updated_at, written.meta.updated_at);
    assert!(!f.raw("human/old.md").contains("crumpledAt"));
}

#[test]
fn origin_changes_bump_updated_at_and_both_changes_are_a_file_change() {
    let f = Fixture::new();
    let written = f.store.write("a", "body", None).expect("write");
    let same = f
        .store
        .update(
            "a",
            &UpdateRequest {
                origin: Some(NoteOrigin::SelfAuthored),
                ..Default::default()
            },
        )
        .expect("same origin");
    assert_eq!(same.change.kind, ChangeKind::None);
    let origin = f
        .store
        .update(
            "a",
            &UpdateRequest {
                origin: Some(NoteOrigin::External),
                ..Default::default()
            },
        )
        .expect("origin");
    assert_eq!(origin.change.kind, ChangeKind::Metadata);
    assert!(origin.meta.updated_at > written.meta.updated_at);
    let raw_before = f.raw("pi/session/s1/a.md");
    let both = f
        .store
        .update(
            "a",
            &UpdateRequest {
                origin: Some(NoteOrigin::User),
                ..edits(&[("body", "new")])
            },
        )
        .expect("both");
    assert_eq!(both.change.kind, ChangeKind::File);
    assert_eq!(both.change.before, raw_before);
    assert_eq!(both.change.after, f.raw("pi/session/s1/a.md"));
}

#[test]
fn rename_moves_everything_and_refuses_what_it_must() {
    let f = Fixture::new();
    assert_eq!(code(f.store.rename("gone", "there")), RefusalCode::NotFound);
    assert_eq!(
        code(f.store.rename("gone", "@human/new/there")),
        RefusalCode::NotFound
    );
    assert!(
        !f.root().join("human").exists(),
        "a missing source makes no folder"
    );
    let written = f
        .store
        .write("draft", "text", Some(NoteOrigin::User))
        .expect("write");
    let same = f.store.rename("draft", "draft.md").expect_err("same");
    assert_eq!(
        (same.code(), same.message()),
        (
            RefusalCode::NothingToDo,
            "rename_to resolves to the same note"
        )
    );
    f.store.write("@project/live", "live", None).expect("write");
    assert_refusal(
        f.store.rename("draft", "@project/live"),
        RefusalCode::AlreadyExists,
        "rename_to target is a live note; crumple it first or pick another address",
    );
    f.store
        .update("@project/live", &crumpling())
        .expect("crumple");
    let moved = f
        .store
        .rename("draft", "@project/live")
        .expect("rename over crumpled");
    assert!(moved.replaced_crumpled_target);
    assert_eq!(
        (moved.from.as_str(), moved.location.address.as_str()),
        ("draft.md", "@project/live.md")
    );
    assert_eq!(moved.location.scope, Scope::Project);
    assert_eq!(
        moved.meta.project, None,
        "moving out of the session drops project"
    );
    assert_eq!(moved.meta.origin, NoteOrigin::User);
    assert_eq!(moved.meta.created_at, written.meta.created_at);
    assert!(moved.meta.updated_at > written.meta.updated_at);
    assert!(!f.root().join("pi/session/s1/draft.md").exists());
    assert!(f.raw("project/proj-12345678/live.md").ends_with("\n\ntext"));
    let back = f
        .store
        .rename("@project/live", "deep/er/back")
        .expect("into session");
    assert!(!back.replaced_crumpled_target);
    assert_eq!(back.meta.project.as_deref(), Some(PROJECT));
    // Between durable homes a note has no project either way.
    f.store.write("@human/h", "h", None).expect("write");
    let durable = f.store.rename("@human/h", "@project/p").expect("durable");
    assert_eq!(durable.meta.project, None);
    let long = "x/".repeat(300);
    let too_long = f
        .store
        .rename("deep/er/back", &format!("{long}y"))
        .expect_err("long");
    assert_eq!(
        too_long.message(),
        "note path exceeds 512 UTF-8 bytes (got 604)"
    );
}

/// A rename between two folders locks the one whose path sorts first
/// before the other, whichever is the source, so two renames crossing
/// between the same folders never wait for each other. With the later
/// folder held, the rename is seen holding the earlier one while it waits.
#[test]
fn a_rename_locks_its_folders_in_path_order() {
    use std::fs::{File, TryLockError};
    use std::time::{Duration, Instant};
    let f = Fixture::new();
    f.store.write("@human/a/one", "one", None).expect("write");
    f.store.write("@human/b/two", "two", None).expect("write");
    let (first, later) = (f.root().join("human/a"), f.root().join("human/b"));
    for (from, to) in [
        ("@human/a/one", "@human/b/one"),
        ("@human/b/two", "@human/a/two"),
    ] {
        let held = File::open(&later).expect("later folder");
        held.lock().expect("hold the later folder");
        std::thread::scope(|scope| {
            let rename = scope.spawn(|| f.store.rename(from, to));
            let deadline = Instant::now() + Duration::from_secs(10);
            let took_first = loop {
                match File::open(&first).expect("first folder").try_lock() {
                    Err(TryLockError::WouldBlock) => break true,
                    Ok(()) if Instant::now() > deadline => break false,
                    Ok(()) => std::thread::sleep(Duration::from_millis(2)),
                    Err(TryLockError::Error(err)) => panic!("{err}"),
                }
            };
            // Released before any assertion, so the rename always ends.
            held.unlock().expect("release the later folder");
            assert!(
                took_first,
                "{from} -> {to} waited without the first folder's lock"
            );
            rename.join().expect("rename thread").expect("rename");
        });
    }
    assert!(f.raw("human/b/one.md").ends_with("one"));
    assert!(f.raw("human/a/two.md").ends_with("two"));
}

/// `delete` (a person's command): a missing note is not found, a live one
/// stays unless asked, a live or crumpled one asked for goes; a note of a
/// home the identity may not write is refused.
#[test]
fn delete_removes_only_what_it_is_asked_to() {
    let f = Fixture::new();
    assert_eq!(code(f.store.delete("gone", true)), RefusalCode::NotFound);
    f.store.write("@project/live", "live", None).expect("write");
    assert_eq!(
        f.store.delete("@project/live", false).expect("asked"),
        DeleteOutcome::Live {
            address: "@project/live.md".to_owned()
        }
    );
    assert!(f.raw("project/proj-12345678/live.md").ends_with("live"));
    let deleted = |address: &str, was_crumpled| DeleteOutcome::Deleted {
        address: address.to_owned(),
        was_crumpled,
    };
    assert_eq!(
        f.store.delete("@project/live", true).expect("live"),
        deleted("@project/live.md", false)
    );
    assert!(!f.root().join("project/proj-12345678/live.md").exists());
    f.store.write("old", "old", None).expect("write");
    f.store.update("old", &crumpling()).expect("crumple");
    assert_eq!(
        f.store.delete("old", false).expect("crumpled"),
        deleted("old.md", true)
    );
    assert!(!f.root().join("pi/session/s1/old.md").exists());
    f.put("agents/bob/theirs.md", "theirs");
    assert_eq!(
        code(f.store.delete("@agents/bob/theirs", true)),
        RefusalCode::InvalidScope
    );
    assert_eq!(f.raw("agents/bob/theirs.md"), "theirs");
}

#[test]
fn size_limits() {
    let f = Fixture::new();
    let fits = format!("{}b", "a/".repeat(254));
    assert_eq!(fits.len() + ".md".len(), 512);
    f.store
        .write(&fits, "x", None)
        .expect("512 bytes with .md fit");
    assert_refusal(
        f.store.write(&format!("{fits}c"), "x", None),
        RefusalCode::TooLarge,
        "note path exceeds 512 UTF-8 bytes (got 513)",
    );
    assert_refusal(
        f.store.write(&"é".repeat(500_000), "x", None),
        RefusalCode::TooLarge,
        "the note's file name (with .md) is 1000003 UTF-8 bytes; the limit is 255 bytes",
    );
    let big = "x".repeat(1_000_000);
    let error = f.store.write("big", &big, None).expect_err("size");
    assert_eq!(error.code(), RefusalCode::TooLarge);
    let header = f.store.write("small", "", None).expect("write");
    let overhead = std::fs::metadata(&header.location.path)
        .expect("meta")
        .len() as usize;
    assert_eq!(
        error.message(),
        format!(
            "note exceeds 1000000 UTF-8 bytes (serialized {})",
            1_000_000 + overhead
        )
    );
    let fits = format!("{}z", "y".repeat(1_000_000 - overhead - 1));
    f.store
        .write("small", &fits, None)
        .expect("exactly the limit fits");
    let grow = f
        .store
        .update("small", &edits(&[("z", "zz")]))
        .expect_err("grows");
    assert_eq!(grow.code(), RefusalCode::TooLarge);
    assert!(!f.root().join("pi/session/s1/big.md").exists());
}

#[test]
fn invalid_addresses_are_refused_everywhere() {
    let f = Fixture::new();
    for address in [
        "",
        "@nope/x",
        "@agents/Bob/x",
        "a/../b",
        "/abs",
        "a\\b",
        "a\0b",
        "a//b",
        "a/@b",
        "@project/",
    ] {
        assert_eq!(
            code(f.store.write(address, "x", None)),
            RefusalCode::InvalidAddress,
            "{address:?}"
        );
        assert_eq!(
            code(f.store.read(address)),
            RefusalCode::InvalidAddress,
            "{address:?}"
        );
        assert_eq!(
            [
                code(f.store.update(address, &edits(&[("a", "b")]))),
                code(f.store.rename(address, "ok")),
            ],
            [RefusalCode::InvalidAddress; 2]
        );
    }
    assert!(!f.root().exists(), "nothing was created");
}

#[test]
fn origins_parse_or_refuse() {
    for origin in [
        NoteOrigin::User,
        NoteOrigin::SelfAuthored,
        NoteOrigin::External,
    ] {
        assert_eq!(NoteOrigin::parse(origin.as_str()), Ok(origin));
    }
    assert_eq!(NoteOrigin::parse("self"), Ok(NoteOrigin::SelfAuthored));
    let error = NoteOrigin::parse("robot").expect_err("invalid");
    assert_eq!(error.code(), RefusalCode::InvalidOrigin);
    assert_eq!(error.code().as_str(), "invalid_origin");
}

#[test]
fn filesystem_failures_are_io_errors() {
    let f = Fixture::new();
    f.put("human", "a file where the human home should be");
    let error = f.store.write("@human/x", "x", None).expect_err("io");
    assert_eq!(error.code(), RefusalCode::IoError);
    assert!(error.is_filesystem());
    assert_eq!(code(f.store.read("@human/x")), RefusalCode::IoError);
}

#[test]
fn invalid_utf8_is_never_rewritten() {
    let f = Fixture::new();
    let path = f.root().join("human/bin.md");
    put(&path, b"---\norigin: user\n---\n\nbad \xff byte\n");
    let read = f.store.read("@human/bin").expect("read").expect("exists");
    assert_eq!(read.body, "bad \u{fffd} byte\n");
    assert!(!read.access_recorded);
    let error = f
        .store
        .update("@human/bin", &edits(&[("bad", "good")]))
        .expect_err("refused");
    assert_eq!(error.code(), RefusalCode::IoError);
    assert_eq!(error.io_kind(), Some(std::io::ErrorKind::InvalidData));
    assert_eq!(
        std::fs::read(&path).expect("bytes"),
        b"---\norigin: user\n---\n\nbad \xff byte\n"
    );
    f.store
        .write("@human/bin", "fixed", None)
        .expect("a write replaces the body");
}

#[test]
fn every_code_has_its_wire_name() {
    let codes = [
        (RefusalCode::NotFound, "not_found"),
        (RefusalCode::AlreadyExists, "already_exists"),
        (RefusalCode::AmbiguousEdit, "ambiguous_edit"),
        (RefusalCode::NoMatch, "no_match"),
        (RefusalCode::NothingToDo, "nothing_to_do"),
        (RefusalCode::TooLarge, "too_large"),
        (RefusalCode::InvalidScope, "invalid_scope"),
        (RefusalCode::InvalidOrigin, "invalid_origin"),
        (RefusalCode::InvalidAddress, "invalid_address"),
        (RefusalCode::InvalidPattern, "invalid_pattern"),
        (RefusalCode::InvalidQuery, "invalid_query"),
        (RefusalCode::InvalidOffset, "invalid_offset"),
        (RefusalCode::IoError, "io_error"),
        (RefusalCode::InternalError, "internal_error"),
    ];
    for (code, name) in codes {
        assert_eq!(code.as_str(), name);
        assert_eq!(
            serde_json::to_value(code).expect("json"),
            serde_json::json!(name)
        );
    }
}

#[test]
fn a_read_never_rewrites_a_note_over_the_size_limit() {
    let f = Fixture::new();
    let overhead = {
        let header = f.store.write("big", "", None).expect("write");
        std::fs::metadata(&header.location.path)
            .expect("meta")
            .len() as usize
    };
    f.store
        .write("big", &"b".repeat(1_000_000 - overhead), None)
        .expect("exactly the limit fits");
    // accessCount 0..=8 → 1..=9 keeps the size; 9 → 10 would grow it.
    for count in 1..=9 {
        let read = f.store.read("big").expect("read").expect("note");
        assert!(read.access_recorded, "read {count}");
        assert_eq!(read.meta.access_count, count);
    }
    let on_disk = f.raw("pi/session/s1/big.md");
    assert_eq!(on_disk.len(), 1_000_000);
    for _ in 0..2 {
        let read = f.store.read("big").expect("read").expect("note");
        assert!(!read.access_recorded);
        assert_eq!(read.meta.access_count, 9, "the metadata on disk");
        assert_eq!(read.body.len(), 1_000_000 - overhead);
        assert_eq!(f.raw("pi/session/s1/big.md"), on_disk, "left untouched");
    }

    // A note put there by other means, far over the limit, stays readable.
    let huge = format!("---\naccessCount: 4\n---\n\n{}", "h".repeat(2 * 1_000_000));
    f.put("human/huge.md", &huge);
    let read = f.store.read("@human/huge").expect("read").expect("note");
    assert!(!read.access_recorded);
    assert_eq!(read.meta.access_count, 4);
    assert_eq!(read.body.len(), 2_000_000);
    assert_eq!(f.raw("human/huge.md"), huge);

    // An ordinary read records the access.
    f.store.write("small", "s", None).expect("write");
    let read = f.store.read("small").expect("read").expect("note");
    assert!(read.access_recorded);
    assert!(
        f.raw("pi/session/s1/small.md")
            .contains("\naccessCount: 1\n")
    );
}
