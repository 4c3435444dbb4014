//! The write jail, the crumpled-only delete and the dreamer's tools.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use notesoup_core::dream::{
    DreamTools, GrepMatch, TextEdit, delete_crumpled_note, jail_read_path, jail_write_path,
};

use super::support::{put, tree_hash};

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

/// Every refusal case: the exact message, the code, and nothing created.
#[test]
fn refuses_every_path_leading_outside() {
    let fx = fixture();
    symlink(&fx.outside, fx.home.join("linked-dir")).expect("dir symlink");
    put(
        &fx.outside,
        "secret.md",
        "---\ncrumpledAt: 2026-01-01T00:00:00.000+00:00\n---\n",
    );
    symlink(fx.outside.join("secret.md"), fx.home.join("linked-file.md")).expect("file symlink");
    symlink(fx.home.join("nowhere.md"), fx.home.join("dangling.md")).expect("dangling symlink");
    put(&fx.home, "hard.md", "x");
    fs::hard_link(fx.home.join("hard.md"), fx.outside.join("hard.md")).expect("hard link out");
    put(&fx.home, "twin.md", "x");
    fs::hard_link(fx.home.join("twin.md"), fx.home.join("twin-2.md")).expect("hard link in");

    let absolute_outside = fx.outside.join("x.md").display().to_string();
    let cases = [
        absolute_outside.as_str(),
        "/etc/passwd",
        "../outside/x.md",
        "notes/../../outside/x.md",
        "..",
        "",
        ".",
        "linked-dir/x.md",
        "linked-dir/new/deeper/x.md",
        "linked-file.md",
        "dangling.md",
        "hard.md",
        "twin.md",
    ];
    let before_home = tree_hash(&fx.home);
    let before_outside = tree_hash(&fx.outside);
    for path in cases {
        for create_parent in [true, false] {
            let refused = jail_write_path(&fx.home, path, create_parent).expect_err(path);
            assert_eq!(
                refused.to_string(),
                outside_message(path, &fx.home),
                "{path}"
            );
            assert_eq!(refused.code(), "outside_home");
        }
        let tools = DreamTools::new(&fx.home);
        let refused = tools.write(path, "pwned").expect_err(path);
        assert_eq!(refused.to_string(), outside_message(path, &fx.home));
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

#[test]
fn allows_paths_inside_including_an_in_home_symlink() {
    let fx = fixture();
    put(&fx.home, "human/real.md", "real");
    symlink(
        fx.home.join("human/real.md"),
        fx.home.join("human/alias.md"),
    )
    .expect("in-home symlink");
    fs::create_dir(fx.home.join("project")).expect("project");
    symlink(fx.home.join("project"), fx.home.join("proj-link")).expect("in-home dir symlink");

    let check = |path: &str, create_parent: bool, expect: PathBuf| {
        assert_eq!(
            jail_write_path(&fx.home, path, create_parent).expect(path),
            expect,
            "{path}"
        );
    };
    check("new.md", false, fx.home.join("new.md"));
    check("human/real.md", false, fx.home.join("human/real.md"));
    check("human/alias.md", false, fx.home.join("human/real.md"));
    check("proj-link/a.md", false, fx.home.join("project/a.md"));
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

    // Writing through the in-home symlink writes its target and keeps the link.
    let tools = DreamTools::new(&fx.home);
    assert_eq!(
        tools.write("human/alias.md", "updated").expect("write"),
        "wrote human/alias.md (7 bytes)"
    );
    assert_eq!(
        fs::read_to_string(fx.home.join("human/real.md")).expect("read"),
        "updated"
    );
    assert!(
        fs::symlink_metadata(fx.home.join("human/alias.md"))
            .expect("lstat")
            .file_type()
            .is_symlink()
    );
}

#[test]
fn missing_parents_are_only_created_when_asked() {
    let fx = fixture();
    let refused = jail_write_path(&fx.home, "a/b/c.md", false).expect_err("missing parent");
    assert_eq!(refused.code(), "io_error");
    assert!(!fx.home.join("a").exists());
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
    for path in ["leak.md", "../outside/secret.md", "/etc/passwd"] {
        let refused = jail_read_path(&fx.home, path).expect_err(path);
        assert_eq!(refused.to_string(), outside_message(path, &fx.home));
    }
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

    for path in ["human/live.md", "human/bare.md", "human/unclosed.md"] {
        let refused = delete_crumpled_note(&fx.home, path).expect_err(path);
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
        delete_crumpled_note(&fx.home, "human/old.md").expect("delete"),
        "deleted human/old.md"
    );
    assert!(!fx.home.join("human/old.md").exists());

    // A symlink is removed itself; its target stays.
    assert_eq!(
        DreamTools::new(&fx.home)
            .delete("human/link.md")
            .expect("delete"),
        "deleted human/link.md"
    );
    assert!(fs::symlink_metadata(fx.home.join("human/link.md")).is_err());
    assert!(fx.home.join("human/target.md").exists());

    let missing = delete_crumpled_note(&fx.home, "human/gone.md").expect_err("missing");
    assert_eq!(missing.code(), "io_error");
    let missing_dir = delete_crumpled_note(&fx.home, "nope/gone.md").expect_err("missing dir");
    assert_eq!(missing_dir.code(), "io_error");
    assert!(!fx.home.join("nope").exists(), "delete creates no parents");
}

#[test]
fn edit_applies_unique_replacements_or_nothing() {
    let fx = fixture();
    put(&fx.home, "note.md", "alpha beta\nbeta gamma\n");
    let tools = DreamTools::new(&fx.home);
    let edit = |old: &str, new: &str| TextEdit {
        old_text: old.into(),
        new_text: new.into(),
    };

    let check_refusal = |edits: &[TextEdit], code: &str, message: &str| {
        let refused = tools.edit("note.md", edits).expect_err(message);
        assert_eq!(
            (refused.code(), refused.to_string().as_str()),
            (code, message)
        );
        assert_eq!(
            fs::read_to_string(fx.home.join("note.md")).expect("read"),
            "alpha beta\nbeta gamma\n"
        );
    };
    check_refusal(
        &[edit("alpha", "ALPHA"), edit("", "x")],
        "no_match",
        "edit: edit 1 of note.md has an empty oldText",
    );
    check_refusal(
        &[edit("alpha", "ALPHA"), edit("delta", "x")],
        "no_match",
        "edit: oldText of edit 1 was not found in note.md",
    );
    check_refusal(
        &[edit("beta", "x")],
        "ambiguous_edit",
        "edit: oldText of edit 0 occurs 2 times in note.md; include more context",
    );

    let applied = tools
        .edit("note.md", &[edit("alpha beta", "one"), edit("one", "two")])
        .expect("edit");
    assert_eq!(applied, "edited note.md (2 edits)");
    assert_eq!(
        fs::read_to_string(fx.home.join("note.md")).expect("read"),
        "two\nbeta gamma\n"
    );

    let created = tools
        .edit("missing.md", &[edit("a", "b")])
        .expect_err("missing");
    assert_eq!(created.code(), "io_error");
    assert!(!fx.home.join("missing.md").exists(), "edit never creates");

    let leftovers: Vec<_> = fs::read_dir(&fx.home)
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
