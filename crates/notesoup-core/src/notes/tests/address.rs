//! Address parsing, rendering and the glob matcher.

use notesoup_core::notes::{Address, Home, HomeSelection, NotePattern, NotesIdentity, RefusalCode};

fn me() -> NotesIdentity {
    NotesIdentity::new("/notes", "s1", "proj-12345678", "alice", "gpt").expect("identity")
}

#[test]
fn parse_and_render() {
    let id = me();
    for (input, home, path, rendered, concrete) in [
        ("todo", Home::Session, "todo.md", "todo.md", "todo.md"),
        ("a/b.md", Home::Session, "a/b.md", "a/b.md", "a/b.md"),
        (
            "notes.txt",
            Home::Session,
            "notes.txt.md",
            "notes.txt.md",
            "notes.txt.md",
        ),
        (
            "@project/MAP",
            Home::Project,
            "MAP.md",
            "@project/MAP.md",
            "@project/MAP.md",
        ),
        (
            "@human/x/y",
            Home::Human,
            "x/y.md",
            "@human/x/y.md",
            "@human/x/y.md",
        ),
        (
            "@self/d",
            Home::Agent("alice".into()),
            "d.md",
            "@self/d.md",
            "@agents/alice/d.md",
        ),
        (
            "@agents/alice/d",
            Home::Agent("alice".into()),
            "d.md",
            "@self/d.md",
            "@agents/alice/d.md",
        ),
        (
            "@agents/bob/d",
            Home::Agent("bob".into()),
            "d.md",
            "@agents/bob/d.md",
            "@agents/bob/d.md",
        ),
        (
            "@model/t",
            Home::Model("gpt".into()),
            "t.md",
            "@model/t.md",
            "@models/gpt/t.md",
        ),
        (
            "@models/o3/t.md",
            Home::Model("o3".into()),
            "t.md",
            "@models/o3/t.md",
            "@models/o3/t.md",
        ),
        (
            "ünï code/ok",
            Home::Session,
            "ünï code/ok.md",
            "ünï code/ok.md",
            "ünï code/ok.md",
        ),
    ] {
        let address = Address::parse(input, &id).expect(input);
        assert_eq!((address.home(), address.path()), (&home, path), "{input}");
        assert_eq!(address.render(&id), rendered, "{input}");
        assert_eq!(address.concrete(), concrete, "{input}");
        assert_eq!(
            address.is_writable(&id),
            home != Home::Agent("bob".into()) && home != Home::Model("o3".into())
        );
    }
    assert_eq!(
        Address::parse("a/b", &id),
        Address::parse("a/b.md", &id),
        "the same note"
    );
}

#[test]
fn invalid_addresses() {
    let id = me();
    let prefixes = "invalid note address: legal prefixes are @project/, @human/, @self/, and @model/; bare names are this session";
    for (input, message) in [
        ("@global/x", prefixes),
        ("@personal/x", prefixes),
        ("@", prefixes),
        ("@Project/x", prefixes),
        ("", "invalid note address: the path is empty"),
        ("@project/", "invalid note address: the path is empty"),
        ("@project", "invalid note address: the path is empty"),
        ("@self/", "invalid note address: the path is empty"),
        ("a\0b", "invalid note address: the path may not contain NUL"),
        (
            "a\\b",
            "invalid note address: the path may not contain \\ (use /)",
        ),
        (
            "a@b",
            "invalid note address: the path part may not contain @",
        ),
        (
            "@human/@self/x",
            "invalid note address: the path part may not contain @",
        ),
        (
            "/etc/passwd",
            "invalid note address: the path may not start with /",
        ),
        (
            "a//b",
            "invalid note address: the path may not contain empty, . or .. segments",
        ),
        (
            "a/",
            "invalid note address: the path may not contain empty, . or .. segments",
        ),
        (
            "./a",
            "invalid note address: the path may not contain empty, . or .. segments",
        ),
        (
            "../a",
            "invalid note address: the path may not contain empty, . or .. segments",
        ),
        (
            "@project/../../etc",
            "invalid note address: the path may not contain empty, . or .. segments",
        ),
        (
            "@agents/../x",
            "invalid note address: @agents/<slug>/ needs a canonical lowercase slug, got \"..\"",
        ),
        (
            "@models/GPT/x",
            "invalid note address: @models/<slug>/ needs a canonical lowercase slug, got \"GPT\"",
        ),
        ("@agents/bob", "invalid note address: the path is empty"),
    ] {
        let error = Address::parse(input, &id).expect_err(input);
        assert_eq!(
            (error.code(), error.message()),
            (RefusalCode::InvalidAddress, message),
            "{input:?}"
        );
    }
}

#[test]
fn homes_render_and_label() {
    let id = me();
    for (home, label, dir) in [
        (Home::Session, "session", "/notes/pi/session/s1"),
        (Home::Project, "@project", "/notes/project/proj-12345678"),
        (Home::Human, "@human", "/notes/human"),
        (Home::Agent("alice".into()), "@self", "/notes/agents/alice"),
        (Home::Model("gpt".into()), "@model", "/notes/models/gpt"),
        (
            Home::Agent("bob".into()),
            "@agents/bob",
            "/notes/agents/bob",
        ),
        (Home::Model("o3".into()), "@models/o3", "/notes/models/o3"),
    ] {
        assert_eq!(home.label(&id), label);
        assert_eq!(
            home.dir(id.home(), &id).expect("a home"),
            std::path::Path::new(dir)
        );
    }
    assert_eq!(
        Home::own(&id)
            .iter()
            .map(|home| home.label(&id))
            .collect::<Vec<_>>(),
        ["session", "@project", "@human", "@self", "@model"]
    );
}

fn check_glob(pattern: &str, cases: &[(&str, bool)]) {
    let compiled = NotePattern::parse(pattern, &me())
        .expect("valid")
        .expect("non-empty");
    for (address, expect) in cases {
        assert_eq!(compiled.matches(address), *expect, "{pattern} vs {address}");
    }
}

/// A pattern that names a note the way an address does (no `.md`, no
/// trailing wildcard) matches that note, as `notes_read` would read it.
#[test]
fn a_pattern_without_md_names_the_note() {
    check_glob(
        "@human/prefs",
        &[
            ("@human/prefs.md", true),
            ("@human/prefs", true),
            ("@human/prefsx.md", false),
            ("@human/pre.md", false),
            ("@human/prefs/a.md", false),
        ],
    );
    check_glob(
        "@project/decisions/d?",
        &[
            ("@project/decisions/db.md", true),
            ("@project/decisions/dbx.md", false),
        ],
    );
    check_glob(
        "@human/*",
        &[("@human/prefs.md", true), ("@human/a/b.md", false)],
    );
    check_glob(
        "@human/prefs.md",
        &[("@human/prefs.md", true), ("@human/prefs.md.md", false)],
    );
}

#[test]
fn glob_semantics() {
    check_glob(
        "*",
        &[
            ("a.md", true),
            ("a/b.md", false),
            ("", true),
            ("@project/a.md", false),
        ],
    );
    check_glob(
        "*.md",
        &[
            ("a.md", true),
            ("a/b.md", false),
            (".md", true),
            ("a.mdx", false),
        ],
    );
    check_glob(
        "**",
        &[("a/b/c.md", true), ("", true), ("@agents/x/y.md", true)],
    );
    check_glob(
        "**/c.md",
        &[
            ("c.md", true),
            ("a/c.md", true),
            ("a/b/c.md", true),
            ("xc.md", false),
            ("a/xc.md", false),
        ],
    );
    check_glob(
        "a/**/c.md",
        &[
            ("a/c.md", true),
            ("a/b/c.md", true),
            ("a/b/d/c.md", true),
            ("ac.md", false),
            ("b/c.md", false),
        ],
    );
    // `**/` after other characters of a segment: the run may be empty,
    // so the `/` that ends it ends the segment too.
    check_glob(
        "a**/c.md",
        &[
            ("a/c.md", true),
            ("ab/c.md", true),
            ("ab/x/c.md", true),
            ("a/b/c.md", true),
            ("c.md", false),
            ("b/c.md", false),
        ],
    );
    check_glob(
        "a/**",
        &[("a/", true), ("a/b", true), ("a/b/c", true), ("a", false)],
    );
    check_glob(
        "a?c.md",
        &[
            ("abc.md", true),
            ("a/c.md", false),
            ("ac.md", false),
            ("aéc.md", true),
        ],
    );
    check_glob(
        "a*c",
        &[
            ("ac", true),
            ("abbbc", true),
            ("ab/c", false),
            ("acx", false),
            ("xac", false),
        ],
    );
    check_glob(
        "@self/**",
        &[
            ("@agents/alice/x.md", true),
            ("@agents/bob/x.md", false),
            ("@self/x.md", false),
        ],
    );
    check_glob(
        "@model/*.md",
        &[("@models/gpt/x.md", true), ("@models/gpt/a/x.md", false)],
    );
    check_glob(
        "@selfish/**",
        &[("@selfish/x.md", true), ("@agents/alice/x.md", false)],
    );
    check_glob("[a].md", &[("[a].md", true), ("a.md", false)]);
}

#[test]
fn glob_heads_narrow_homes() {
    let id = me();
    for (pattern, homes) in [
        ("**", HomeSelection::Own),
        ("notes/*.md", HomeSelection::Own),
        ("@project/**", HomeSelection::One(Home::Project)),
        ("@human", HomeSelection::One(Home::Human)),
        ("@self/**", HomeSelection::One(Home::Agent("alice".into()))),
        ("@self", HomeSelection::One(Home::Agent("alice".into()))),
        ("@model/x", HomeSelection::One(Home::Model("gpt".into()))),
        (
            "@agents/bob/**",
            HomeSelection::One(Home::Agent("bob".into())),
        ),
        (
            "@models/o3/**",
            HomeSelection::One(Home::Model("o3".into())),
        ),
        ("@agents/*/**", HomeSelection::AllAgents),
        ("@agents/b?b/x", HomeSelection::AllAgents),
        ("@agents/**", HomeSelection::AllAgents),
        ("@models/*", HomeSelection::AllModels),
        ("@agents/Bob/**", HomeSelection::Nothing),
        ("@models/O3/**", HomeSelection::Nothing),
        ("@models", HomeSelection::Nothing),
        ("@agents/../x", HomeSelection::Nothing),
        ("@agents", HomeSelection::Nothing),
        ("@global/**", HomeSelection::Nothing),
        ("@*/**", HomeSelection::Nothing),
    ] {
        let compiled = NotePattern::parse(pattern, &id)
            .expect("valid")
            .expect("non-empty");
        assert_eq!(compiled.homes(), &homes, "{pattern}");
    }
    assert_eq!(NotePattern::parse("", &id), Ok(None));
    for bad in ["a\\b", "\0"] {
        assert_eq!(
            NotePattern::parse(bad, &id)
                .map(|_| ())
                .map_err(|e| e.code()),
            Err(RefusalCode::InvalidPattern)
        );
    }
}

/// Whether Git takes `name` for `.git`: gix's component check with the
/// NTFS and HFS+ protections Git applies (`core.protectNTFS`,
/// `core.protectHFS`), the rule the dream's audit meets.
fn git_takes_for_dot_git(name: &str) -> bool {
    use gix::validate::path::component::{Error, Options};
    let options = Options {
        protect_windows: false,
        protect_hfs: true,
        protect_ntfs: true,
    };
    matches!(
        gix::validate::path::component(gix::bstr::BStr::new(name), None, options),
        Err(Error::DotGitDir)
    )
}

/// A name is a `.git` segment for the address rules exactly when Git takes
/// it for `.git` on some system: trailing dots and spaces and NTFS streams,
/// the NTFS short name, and code points HFS+ ignores.
#[test]
fn git_look_alikes_are_the_names_git_takes_for_git() {
    use notesoup_core::notes::is_git_segment;
    let refused = [
        ".git",
        ".GIT",
        ".gIt",
        ".git.",
        ".git..",
        ".git ",
        ".git. .",
        ".git:",
        ".git::$INDEX_ALLOCATION",
        "git~1",
        "GIT~1",
        "git~1.",
        "git~1 ",
        "git~1:stream",
        ".g\u{200c}it",
        ".\u{200d}git",
        ".git\u{feff}",
        "\u{feff}.git",
        ".G\u{206a}IT",
        ".gi\u{200e}t",
    ];
    let accepted = [
        "git",
        ".gitx",
        ".git-notes",
        ".gitignore",
        ".gitkeep",
        "git~2",
        "git~10",
        "x.git",
        ". git",
        "..git",
        ".git.x",
        ".git .md",
        ".g it",
        "",
        ".",
        "..",
    ];
    for name in refused {
        assert!(is_git_segment(name), "{name:?} is refused");
        assert!(git_takes_for_dot_git(name), "Git refuses {name:?} too");
    }
    for name in accepted {
        assert!(!is_git_segment(name), "{name:?} is accepted");
        assert!(!git_takes_for_dot_git(name), "Git accepts {name:?} too");
    }
    let me = me();
    for address in [
        "@human/.git./x",
        "@human/.git /x",
        "@human/git~1/x",
        "@human/GIT~1.md",
    ] {
        let refused = Address::parse(address, &me).expect_err(address);
        assert_eq!(refused.code(), RefusalCode::InvalidAddress, "{address}");
        assert!(
            refused.message().contains("a name Git takes for one"),
            "{}",
            refused.message()
        );
    }
}

use proptest::strategy::Strategy;

proptest::proptest! {
    /// Names built from the pieces look-alikes are made of agree with
    /// Git's rule.
    #[test]
    fn every_name_git_takes_for_git_is_a_git_segment(
        name in (
            proptest::sample::select(vec![
                "", ".", ".git", ".GiT", "git~1", "GIT~1", "git~2", ".g", ".gi", "git",
                ".\u{200c}g", "\u{feff}.", ".git\u{202e}",
            ]),
            "[.gGiItT~1 :x\u{200c}\u{200d}\u{feff}\u{206a}]{0,5}",
        )
            .prop_map(|(head, tail)| format!("{head}{tail}"))
    ) {
        proptest::prop_assert_eq!(
            notesoup_core::notes::is_git_segment(&name),
            git_takes_for_dot_git(&name),
            "{:?}", name
        );
    }
}
