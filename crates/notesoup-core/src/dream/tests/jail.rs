//! The write jail, the delete under the wastebasket rule and the dreamer's tools.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use jiff::Timestamp;
use notesoup_core::dream::{
    DreamTools, GrepMatch, TextEdit, audit_commit, delete_crumpled_note, jail_read_path,
    jail_write_path,
};
use notesoup_core::notes::NoteStore;
use notesoup_core::wire::RefusalCode;
use notesoup_test_support::adversarial::corpus;

use super::support::{AWS_KEY, put, tree_hash};

/// A home and an outside directory, side by side in one temp dir.
struct Fixture {
    _dir: tempfile::TempDir,
    home: PathBuf,
    outside: PathBuf,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    let outside = dir.path().join("outside");
    fs::create_dir(&home).expect("home");
    fs::create_dir(&outside).expect("outside");
    Fixture {
        home: fs::canonicalize(home).expect("real home"),
        outside: fs::canonicalize(outside).expect("real outside"),
        _dir: dir,
    }
}

fn outside_message(path: &str, home: &Path) -> String {
    format!(
        "write jail: {path} is outside notes home {}",
        home.display()
    )
}

fn link_message(path: &str, home: &Path) -> String {
    format!(
        "write jail: {path} crosses a symbolic link in notes home {}; the jail never follows links",
        home.display()
    )
}

/// The refusal message of `path`: one through a link names the link rule.
fn refusal_message(path: &str, home: &Path) -> String {
    if path.contains("linked") || path.contains("dangling") || path.contains("link.md") {
        link_message(path, home)
    } else {
        outside_message(path, home)
    }
}

/// Every refusal case: the exact message, the code, and nothing created.
/// A link leads outside or not, but is never followed either way.
#[test]
fn refuses_every_path_leading_outside() {
    let fx = fixture();
    fs::create_dir(fx.home.join("human")).expect("human");
    symlink(&fx.outside, fx.home.join("human/linked-dir")).expect("dir symlink");
    put(
        &fx.outside,
        "secret.md",
        "---\ncrumpledAt: 2026-01-01T00:00:00.000+00:00\n---\n",
    );
    symlink(
        fx.outside.join("secret.md"),
        fx.home.join("human/linked-file.md"),
    )
    .expect("file symlink");
    symlink(
        fx.home.join("human/nowhere.md"),
        fx.home.join("human/dangling.md"),
    )
    .expect("dangling symlink");
    put(&fx.home, "human/hard.md", "x");
    fs::hard_link(fx.home.join("human/hard.md"), fx.outside.join("hard.md"))
        .expect("hard link out");
    put(&fx.home, "human/twin.md", "x");
    fs::hard_link(
        fx.home.join("human/twin.md"),
        fx.home.join("human/twin-2.md"),
    )
    .expect("hard link in");

    let absolute_outside = fx.outside.join("x.md").display().to_string();
    let cases = [
        absolute_outside.as_str(),
        "/etc/passwd",
        "../outside/x.md",
        "human/../../outside/x.md",
        "..",
        "",
        ".",
        "human/linked-dir/x.md",
        "human/linked-dir/new/deeper/x.md",
        "human/linked-file.md",
        "human/dangling.md",
        "human/hard.md",
        "human/twin.md",
    ];
    let before_home = tree_hash(&fx.home);
    let before_outside = tree_hash(&fx.outside);
    for path in cases {
        for create_parent in [true, false] {
            let refused = jail_write_path(&fx.home, path, create_parent).expect_err(path);
            assert_eq!(
                refused.to_string(),
                refusal_message(path, &fx.home),
                "{path}"
            );
            assert_eq!(refused.code(), "outside_home");
        }
        let tools = DreamTools::new(&fx.home);
        let refused = tools.write(path, "pwned").expect_err(path);
        assert_eq!(refused.to_string(), refusal_message(path, &fx.home));
        let refused = tools
            .edit(
                path,
                &[TextEdit {
                    old_text: "x".into(),
                    new_text: "y".into(),
                }],
            )
            .expect_err(path);
        assert_eq!(refused.code(), "outside_home", "{path}: {refused}");
        let refused = tools.delete(path).expect_err(path);
        assert_eq!(refused.code(), "outside_home", "{path}: {refused}");
    }
    assert_eq!(tree_hash(&fx.home), before_home, "nothing changed inside");
    assert_eq!(
        tree_hash(&fx.outside),
        before_outside,
        "nothing created outside"
    );
}

/// Paths inside are allowed; a link is refused even when it stays inside
/// the home: where it leads can change between the check and the write.
#[test]
fn allows_paths_inside_and_never_follows_a_link() {
    let fx = fixture();
    put(&fx.home, "human/real.md", "real");
    symlink(
        fx.home.join("human/real.md"),
        fx.home.join("human/alias.md"),
    )
    .expect("in-home symlink");
    fs::create_dir_all(fx.home.join("project/p-0123abcd")).expect("project");
    symlink(
        fx.home.join("project/p-0123abcd"),
        fx.home.join("human/proj-link"),
    )
    .expect("in-home dir symlink");

    let check = |path: &str, create_parent: bool, expect: PathBuf| {
        assert_eq!(
            jail_write_path(&fx.home, path, create_parent).expect(path),
            expect,
            "{path}"
        );
    };
    check("human/new.md", false, fx.home.join("human/new.md"));
    check("human/real.md", false, fx.home.join("human/real.md"));
    check(
        "human/../human/real.md",
        false,
        fx.home.join("human/real.md"),
    );
    check(
        "./agents/me/deep/note.md",
        true,
        fx.home.join("agents/me/deep/note.md"),
    );
    let absolute = fx.home.join("human/real.md");
    check(absolute.to_str().expect("utf-8"), false, absolute.clone());
    assert!(
        fx.home.join("agents/me/deep").is_dir(),
        "parents are created inside"
    );

    let before = tree_hash(&fx.home);
    let tools = DreamTools::new(&fx.home);
    for path in ["human/alias.md", "human/proj-link/a.md"] {
        let refused = jail_write_path(&fx.home, path, true).expect_err(path);
        assert_eq!(refused.to_string(), link_message(path, &fx.home));
        assert_eq!(refused.code(), "outside_home");
        let refused = tools.write(path, "updated").expect_err(path);
        assert_eq!(refused.to_string(), link_message(path, &fx.home));
        let refused = tools.read(path).expect_err(path);
        assert_eq!(refused.to_string(), link_message(path, &fx.home));
    }
    assert_eq!(
        tree_hash(&fx.home),
        before,
        "nothing written through a link"
    );
    assert_eq!(
        fs::read_to_string(fx.home.join("human/real.md")).expect("read"),
        "real"
    );
}

#[test]
fn missing_parents_are_only_created_when_asked() {
    let fx = fixture();
    let refused = jail_write_path(&fx.home, "human/b/c.md", false).expect_err("missing parent");
    assert_eq!(refused.code(), "io_error");
    assert!(!fx.home.join("human").exists());
    let missing = fx.home.join("missing-home");
    let refused = jail_write_path(&missing, "a.md", true).expect_err("missing home");
    assert!(
        refused.to_string().starts_with(&format!(
            "write jail: cannot resolve notes home {}: ",
            missing.display()
        )),
        "{refused}"
    );
    assert!(!missing.exists());
}

#[test]
fn reads_are_jailed_too() {
    let fx = fixture();
    put(&fx.outside, "secret.md", "secret");
    symlink(fx.outside.join("secret.md"), fx.home.join("leak.md")).expect("symlink");
    put(&fx.home, "ok.md", "fine");
    assert_eq!(
        jail_read_path(&fx.home, "ok.md").expect("inside"),
        fx.home.join("ok.md")
    );
    let refused = jail_read_path(&fx.home, "leak.md").expect_err("a link");
    assert_eq!(refused.to_string(), link_message("leak.md", &fx.home));
    for path in ["../outside/secret.md", "/etc/passwd"] {
        let refused = jail_read_path(&fx.home, path).expect_err(path);
        assert_eq!(refused.to_string(), outside_message(path, &fx.home));
    }
    let tools = DreamTools::new(&fx.home);
    assert_eq!(
        tools.read("leak.md").expect_err("a link").code(),
        "outside_home"
    );
    assert!(
        tools.grep("secret", ".").expect("grep").is_empty(),
        "grep does not read through a link"
    );
    assert_eq!(tools.find(".").expect("find"), ["leak.md", "ok.md"]);
}

/// The clock of the delete tests: the crumpled notes below are two weeks
/// old at it.
fn delete_now() -> Timestamp {
    "2026-09-15T09:31:45.392Z".parse().expect("timestamp")
}

#[test]
fn delete_removes_only_crumpled_notes() {
    let fx = fixture();
    let crumpled = "---\norigin: self\ncrumpledAt: 2026-09-01T10:00:00.000+02:00\n---\n\nold\n";
    put(&fx.home, "human/old.md", crumpled);
    put(
        &fx.home,
        "human/live.md",
        "---\norigin: self\n---\n\nlive\n",
    );
    put(
        &fx.home,
        "human/bare.md",
        "no frontmatter, crumpledAt: nowhere\n",
    );
    put(
        &fx.home,
        "human/unclosed.md",
        "---\ncrumpledAt: 2026-09-01T10:00:00.000+02:00\n",
    );
    put(&fx.home, "human/target.md", crumpled);
    symlink(
        fx.home.join("human/target.md"),
        fx.home.join("human/link.md"),
    )
    .expect("symlink");
    audit_commit(&fx.home, "baseline").expect("baseline");

    for path in ["human/live.md", "human/bare.md", "human/unclosed.md"] {
        let refused = delete_crumpled_note(&fx.home, path, delete_now()).expect_err(path);
        assert_eq!(
            refused.to_string(),
            format!(
                "delete: {path} is not a crumpled note; only the wastebasket rule permits deletion"
            )
        );
        assert_eq!(refused.code(), "not_crumpled");
        assert!(fx.home.join(path).exists());
    }

    assert_eq!(
        delete_crumpled_note(&fx.home, "human/old.md", delete_now()).expect("delete"),
        "deleted human/old.md"
    );
    assert!(!fx.home.join("human/old.md").exists());

    // A link is refused (its target is never read), and both stay.
    let refused = DreamTools::new(&fx.home)
        .at(delete_now())
        .delete("human/link.md")
        .expect_err("a link");
    assert_eq!(refused.code(), "outside_home");
    assert!(fs::symlink_metadata(fx.home.join("human/link.md")).is_ok());
    assert!(fx.home.join("human/target.md").exists());

    let missing =
        delete_crumpled_note(&fx.home, "human/gone.md", delete_now()).expect_err("missing");
    assert_eq!(missing.code(), "io_error");
    let missing_dir = delete_crumpled_note(&fx.home, "human/nope/gone.md", delete_now())
        .expect_err("missing dir");
    assert_eq!(missing_dir.code(), "io_error");
    assert!(
        !fx.home.join("human/nope").exists(),
        "delete creates no parents"
    );
}

/// The wastebasket rule: only a note crumpled before the dream began (as
/// the baseline commit holds it, byte for byte) whose `crumpledAt` and last
/// access are both more than 7 days old is deleted.
#[test]
fn delete_takes_only_what_lay_in_the_wastebasket_long_enough_before_the_dream() {
    let fx = fixture();
    let note = |fields: &str| format!("---\norigin: self\n{fields}---\n\nbody\n");
    let old = "crumpledAt: 2026-09-01T10:00:00.000+02:00\n";
    put(&fx.home, "human/expired.md", &note(old));
    put(
        &fx.home,
        "human/read-lately.md",
        &note(&format!(
            "{old}lastAccessed: 2026-09-14T10:00:00.000+02:00\n"
        )),
    );
    put(
        &fx.home,
        "human/crumpled-lately.md",
        &note("crumpledAt: 2026-09-10T10:00:00.000+02:00\nlastAccessed: 2026-09-01T00:00:00Z\n"),
    );
    put(
        &fx.home,
        "human/unreadable-time.md",
        &note("crumpledAt: last tuesday\n"),
    );
    put(&fx.home, "human/live.md", &note(""));
    put(&fx.home, "human/touched.md", &note(old));
    audit_commit(&fx.home, "baseline").expect("baseline");
    let tools = DreamTools::new(&fx.home).at(delete_now());

    // Crumpled during this dream, even with a backdated crumpledAt: the
    // baseline holds it live, so it stays.
    tools
        .edit(
            "human/live.md",
            &[TextEdit {
                old_text: "origin: self\n".into(),
                new_text: format!("origin: self\n{old}"),
            }],
        )
        .expect("crumple");
    // Changed during this dream: what the baseline holds is not what
    // would be deleted.
    tools
        .edit(
            "human/touched.md",
            &[TextEdit {
                old_text: "body".into(),
                new_text: "edited".into(),
            }],
        )
        .expect("edit");
    let before = tree_hash(&fx.home);
    for path in ["human/live.md", "human/touched.md"] {
        let refused = tools.delete(path).expect_err(path);
        assert_eq!(refused.code(), "not_in_baseline", "{path}: {refused}");
        assert_eq!(
            refused.to_string(),
            format!(
                "delete: {path} was not in the wastebasket when this dream began (it was crumpled or changed since the baseline commit); only a note crumpled before the dream may be deleted"
            )
        );
    }
    for path in [
        "human/read-lately.md",
        "human/crumpled-lately.md",
        "human/unreadable-time.md",
    ] {
        let refused = tools.delete(path).expect_err(path);
        assert_eq!(refused.code(), "too_recent", "{path}: {refused}");
    }
    assert_eq!(
        tools
            .delete("human/read-lately.md")
            .expect_err("read lately")
            .to_string(),
        "delete: human/read-lately.md is too recent (crumpledAt 2026-09-01T08:00:00Z, last access 2026-09-14T08:00:00Z); the wastebasket rule deletes a note only when both are more than 7 days old"
    );
    assert_eq!(tree_hash(&fx.home), before, "refusals delete nothing");

    assert_eq!(
        tools.delete("human/expired.md").expect("expired"),
        "deleted human/expired.md"
    );
    // Seven days to the millisecond is not more than seven days.
    let exactly = Timestamp::from_millisecond(
        "2026-09-01T08:00:00Z"
            .parse::<Timestamp>()
            .expect("timestamp")
            .as_millisecond()
            + 7 * 24 * 3600 * 1000,
    )
    .expect("timestamp");
    put(&fx.home, "human/edge.md", &note(old));
    audit_commit(&fx.home, "baseline 2").expect("baseline");
    let refused = DreamTools::new(&fx.home)
        .at(exactly)
        .delete("human/edge.md")
        .expect_err("exactly seven days");
    assert_eq!(refused.code(), "too_recent");
}

#[test]
fn delete_without_a_baseline_commit_deletes_nothing() {
    let fx = fixture();
    put(
        &fx.home,
        "human/old.md",
        "---\ncrumpledAt: 2026-01-01T00:00:00Z\n---\n\nold\n",
    );
    let refused = DreamTools::new(&fx.home)
        .at(delete_now())
        .delete("human/old.md")
        .expect_err("no repository");
    assert_eq!(refused.code(), "not_in_baseline", "{refused}");
    assert!(
        refused
            .to_string()
            .starts_with("delete: human/old.md cannot be checked against the dream's baseline commit (no audit repository: "),
        "{refused}"
    );
    assert!(fx.home.join("human/old.md").exists());
}

/// Dream writes and edits obey the notes' size limit with the notes tools'
/// own code, and a refusal leaves the note as it was.
#[test]
fn dream_writes_and_edits_stop_at_the_note_size_limit() {
    let fx = fixture();
    let tools = DreamTools::new(&fx.home);
    let header = "---\norigin: self\n---\n\n";
    let full = format!(
        "{header}{}",
        "a".repeat(NoteStore::MAX_NOTE_BYTES - header.len())
    );
    assert_eq!(full.len(), NoteStore::MAX_NOTE_BYTES);
    tools
        .write("human/full.md", &full)
        .expect("exactly the limit is a note");

    let over = format!("{full}b");
    let refused = tools
        .write("human/over.md", &over)
        .expect_err("one byte over");
    assert_eq!(refused.code(), RefusalCode::TooLarge.as_str());
    assert_eq!(refused.code(), "too_large");
    assert_eq!(
        refused.to_string(),
        "human/over.md would be 1000001 bytes, over the 1000000-byte note limit; split it by topic"
    );
    assert!(!fx.home.join("human/over.md").exists());

    put(
        &fx.home,
        "human/grows.md",
        "---\norigin: self\n---\n\nseed\n",
    );
    let before = tree_hash(&fx.home);
    let refused = tools
        .write("human/grows.md", &over)
        .expect_err("overwrite past the limit");
    assert_eq!(refused.code(), "too_large");
    let refused = tools
        .edit(
            "human/full.md",
            &[TextEdit {
                old_text: "---\norigin: self\n".into(),
                new_text: "---\norigin: self\nstale: false\n".into(),
            }],
        )
        .expect_err("an edit growing a full note");
    assert_eq!(refused.code(), "too_large");
    // Many edits, each small, growing the note together.
    let edits: Vec<TextEdit> = (0..3)
        .map(|round| TextEdit {
            old_text: format!("seed{}", "!".repeat(round)),
            new_text: format!("seed{}{}", "!".repeat(round + 1), "x".repeat(400_000)),
        })
        .collect();
    let refused = tools
        .edit("human/grows.md", &edits)
        .expect_err("edits growing a note together");
    assert_eq!(refused.code(), "too_large");
    assert_eq!(tree_hash(&fx.home), before, "nothing was written");
}

#[test]
fn edit_applies_unique_replacements_or_nothing() {
    let fx = fixture();
    put(&fx.home, "human/note.md", "alpha beta\nbeta gamma\n");
    let tools = DreamTools::new(&fx.home);
    let edit = |old: &str, new: &str| TextEdit {
        old_text: old.into(),
        new_text: new.into(),
    };

    let check_refusal = |edits: &[TextEdit], code: &str, message: &str| {
        let refused = tools.edit("human/note.md", edits).expect_err(message);
        assert_eq!(
            (refused.code(), refused.to_string().as_str()),
            (code, message)
        );
        assert_eq!(
            fs::read_to_string(fx.home.join("human/note.md")).expect("read"),
            "alpha beta\nbeta gamma\n"
        );
    };
    check_refusal(
        &[edit("alpha", "ALPHA"), edit("", "x")],
        "no_match",
        "edit: edit 1 of human/note.md has an empty oldText",
    );
    check_refusal(
        &[edit("alpha", "ALPHA"), edit("delta", "x")],
        "no_match",
        "edit: oldText of edit 1 was not found in human/note.md",
    );
    check_refusal(
        &[edit("beta", "x")],
        "ambiguous_edit",
        "edit: oldText of edit 0 occurs 2 times in human/note.md; include more context",
    );

    let applied = tools
        .edit(
            "human/note.md",
            &[edit("alpha beta", "one"), edit("one", "two")],
        )
        .expect("edit");
    assert_eq!(applied, "edited human/note.md (2 edits)");
    assert_eq!(
        fs::read_to_string(fx.home.join("human/note.md")).expect("read"),
        "two\nbeta gamma\n"
    );

    let created = tools
        .edit("human/missing.md", &[edit("a", "b")])
        .expect_err("missing");
    assert_eq!(created.code(), "io_error");
    assert!(
        !fx.home.join("human/missing.md").exists(),
        "edit never creates"
    );

    let leftovers: Vec<_> = fs::read_dir(fx.home.join("human"))
        .expect("list")
        .map(|entry| entry.expect("entry").file_name())
        .filter(|name| name.to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "no temp files left: {leftovers:?}");
}

#[test]
fn read_only_tools_see_the_home() {
    let fx = fixture();
    put(&fx.home, "human/MAP.md", "- `@human/prefs.md` Prefs\n");
    put(&fx.home, "human/prefs.md", "Likes TABS\nhates spaces\n");
    put(&fx.home, "project/p-0123abcd/notes.md", "tabs everywhere\n");
    put(&fx.home, ".git/config", "tabs\n");
    fs::write(
        fx.home.join("binary.bin"),
        [0xff, 0xfe, b't', b'a', b'b', b's'],
    )
    .expect("binary");
    let tools = DreamTools::new(&fx.home);

    assert_eq!(
        tools.read("human/prefs.md").expect("read"),
        "Likes TABS\nhates spaces\n"
    );
    assert_eq!(
        tools.ls(".").expect("ls"),
        [".git/", "binary.bin", "human/", "project/"]
    );
    assert_eq!(
        tools.find(".").expect("find"),
        [
            "binary.bin",
            "human/MAP.md",
            "human/prefs.md",
            "project/p-0123abcd/notes.md"
        ]
    );
    // A folder walked on its own, and the audit repository never.
    assert_eq!(
        tools.find("human").expect("find a folder"),
        ["human/MAP.md", "human/prefs.md"]
    );
    assert_eq!(tools.find(".git").expect("find .git"), Vec::<String>::new());
    let hit = |path: &str, line: usize, text: &str| GrepMatch {
        path: path.into(),
        line,
        text: text.into(),
    };
    assert_eq!(
        tools.grep("tabs", ".").expect("grep"),
        [
            hit("human/prefs.md", 1, "Likes TABS"),
            hit("project/p-0123abcd/notes.md", 1, "tabs everywhere"),
        ]
    );
    assert_eq!(
        tools.grep("tabs", "project").expect("grep a folder"),
        [hit("project/p-0123abcd/notes.md", 1, "tabs everywhere")]
    );
    assert_eq!(
        tools
            .grep("SPACES", "human/prefs.md")
            .expect("grep one file"),
        [hit("human/prefs.md", 2, "hates spaces")]
    );
    assert_eq!(
        tools.read("binary.bin").expect_err("binary").code(),
        "not_text"
    );
}

/// One case of `tests/adversarial/dreamer-paths.jsonl`.
#[derive(serde::Deserialize)]
struct PathCase {
    path: String,
    code: String,
    ops: Vec<String>,
    why: String,
}

fn dreamer_path_cases() -> Vec<PathCase> {
    corpus("dreamer-paths.jsonl")
        .into_iter()
        .map(|case| serde_json::from_value(case).expect("a corpus case"))
        .collect()
}

/// The notes root the corpus describes: Git's directory, the dream's
/// bookkeeping, notes in every home, and links into Git and out of the home.
fn corpus_fixture() -> Fixture {
    let fx = fixture();
    // A real audit repository (config, HEAD, info/exclude): the baseline
    // commit the wastebasket rule reads is made once the notes are in.
    audit_commit(&fx.home, "init").expect("audit repository");
    put(&fx.home, ".git/hooks/README.md", "hooks\n");
    put(&fx.home, "dreams/2026-01-01.md", "# Dream\n");
    put(
        &fx.home,
        ".dream.lock",
        "1 00000000-0000-0000-0000-000000000000\n",
    );
    put(&fx.home, ".dream.lock.last-run", "2026-01-01T00:00:00Z\n");
    put(&fx.home, "human/prefs.md", "---\norigin: user\n---\n\nx\n");
    put(
        &fx.home,
        "human/old.md",
        "---\norigin: self\ncrumpledAt: 2026-01-01T00:00:00.000+00:00\n---\n\nx\n",
    );
    put(&fx.home, "human/x.txt", "x\n");
    put(&fx.home, "human/x.md.bak", "x\n");
    symlink(fx.home.join(".git"), fx.home.join("human/to-git")).expect("link into .git");
    symlink(
        fx.home.join(".git/config"),
        fx.home.join("human/to-git-config.md"),
    )
    .expect("link to .git/config");
    put(&fx.outside, "x.md", "x\n");
    symlink(&fx.outside, fx.home.join("human/out-link")).expect("link out");
    symlink(fx.outside.join("x.md"), fx.home.join("human/out-file.md")).expect("link out");
    audit_commit(&fx.home, "baseline").expect("baseline");
    fx
}

/// Every corpus path, through every tool it lists: refusals carry the
/// corpus's code and change nothing inside or outside the home; notes in
/// the five homes are written, edited and deleted. A refusal leaves the
/// fixture as it was (asserted), so the next case reuses it; a change
/// builds it again.
#[test]
fn the_dreamer_paths_corpus_is_answered_case_by_case() {
    let cases = dreamer_path_cases();
    assert!(cases.len() >= 60, "the corpus is read whole");
    let mut fx = corpus_fixture();
    for case in &cases {
        for op in &case.ops {
            let tools = DreamTools::new(&fx.home);
            let before = (tree_hash(&fx.home), tree_hash(&fx.outside));
            let result = match op.as_str() {
                "write" => tools.write(&case.path, "pwned\n"),
                "edit" => tools.edit(
                    &case.path,
                    &[TextEdit {
                        old_text: "x".into(),
                        new_text: "pwned".into(),
                    }],
                ),
                "delete" => tools.delete(&case.path),
                other => panic!("unknown op {other}"),
            };
            let label = format!("{op} {:?} ({})", case.path, case.why);
            match (&result, case.code.as_str()) {
                (Ok(_), "ok") => fx = corpus_fixture(),
                (Ok(done), code) => panic!("{label}: expected {code}, got {done}"),
                (Err(refused), code) => {
                    assert_eq!(refused.code(), code, "{label}: {refused}");
                    assert_eq!(
                        (tree_hash(&fx.home), tree_hash(&fx.outside)),
                        before,
                        "{label}: a refusal changes nothing"
                    );
                    if code == "not_a_note" {
                        let text = refused.to_string();
                        assert!(
                            text.starts_with(&format!(
                                "write jail: {} is not a note the dreamer may write: ",
                                case.path
                            )),
                            "{label}: {text}"
                        );
                    }
                }
            }
        }
    }
}

/// The reasons a refusal gives, one per kind of path.
#[test]
fn jail_refusals_name_their_reason() {
    let fx = corpus_fixture();
    let tools = DreamTools::new(&fx.home);
    let check = |path: &str, reason: &str| {
        let refused = tools.write(path, "x").expect_err(path);
        assert_eq!(
            refused.to_string(),
            format!("write jail: {path} is not a note the dreamer may write: {reason}")
        );
    };
    check(".git/config", "the audit repository (.git) is not a note");
    check(
        "dreams/x.md",
        "the dream's own bookkeeping (dreams/, the lock and its stamp) is not a note",
    );
    check(
        ".dream.lock",
        "the dream's own bookkeeping (dreams/, the lock and its stamp) is not a note",
    );
    let homes = "only notes inside the five homes (pi/session/<id>/, project/<key>/, human/, agents/<slug>/, models/<slug>/) may be written";
    check("x.md", homes);
    check("pi/session/x.md", homes);
    check("project/x.md", homes);
    check("human", homes);
    check("pi/session/s1", homes);
    check("human/x.txt", "only markdown notes (.md) may be written");
    check(
        "human/a\nb.md",
        "the path may not contain control, line-separator or bidirectional characters (found U+000A)",
    );
    assert!(
        !fx.home.join(".git/hooks/pre-commit").exists(),
        "no hook was planted"
    );
}

/// The dream never copies a credential, whichever tool would write it.
#[test]
fn the_dreamer_never_writes_a_credential() {
    let fx = corpus_fixture();
    let tools = DreamTools::new(&fx.home);
    let before = tree_hash(&fx.home);
    let refused = tools
        .write("human/moved.md", &format!("# Moved\n\n{AWS_KEY}\n"))
        .expect_err("a credential");
    assert_eq!(refused.code(), "secret_detected");
    assert_eq!(
        refused.to_string(),
        "human/moved.md: line 3 holds a credential (AWS access key); the dream never copies one. Leave it where it is and report it"
    );
    let refused = tools
        .edit(
            "human/prefs.md",
            &[TextEdit {
                old_text: "x".into(),
                new_text: "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtz\n-----END OPENSSH PRIVATE KEY-----".into(),
            }],
        )
        .expect_err("a credential");
    assert_eq!(refused.code(), "secret_detected");
    assert_eq!(tree_hash(&fx.home), before);
}
