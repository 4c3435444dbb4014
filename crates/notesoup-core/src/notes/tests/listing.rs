//! list and search: ordering, wastebasket, scope/who, patterns, status.

use std::sync::Arc;
use std::time::Duration;

use crate::notes::{HeadCache, Home, ListQuery, NoteHeader, NoteRow, NoteStore, Scope};
use crate::tools::RefusalCode;

use super::support::{AllRows, Fixture, code, crumpling};

fn pattern(text: &str) -> ListQuery {
    ListQuery {
        pattern: Some(text.to_owned()),
        ..ListQuery::default()
    }
}

/// The addresses `query` lists, in the store's order.
pub(super) fn addresses(store: &NoteStore, query: &ListQuery) -> Vec<String> {
    store
        .list(query)
        .all_rows()
        .into_iter()
        .map(|row| row.location.address)
        .collect()
}

fn sorted(store: &NoteStore, query: &ListQuery) -> Vec<String> {
    let mut found = addresses(store, query);
    found.sort();
    found
}

/// One note in each of the five own homes, plus foreign homes and noise.
fn populated() -> Fixture {
    let f = Fixture::new();
    for (address, body) in [
        ("checkpoint", "goal: ship the store"),
        ("a/b/deep", "nested session note"),
        ("@project/MAP", "- @project/decisions.md: what we chose"),
        ("@project/decisions", "We chose flock on the directory."),
        ("@human/prefs", "Likes short answers."),
        ("@self/diary", "Today I learned about FLOCK."),
        ("@model/tips", "Use rg -i -F."),
    ] {
        f.store.write(address, body, None).expect("write");
    }
    let bob = f.as_other("bob", "claude");
    bob.write("@self/bob-notes", "bob likes flock too", None)
        .expect("bob");
    bob.write("@model/claude-tips", "claude", None)
        .expect("bob model");
    f.put("human/readme.txt", "not a note");
    f.put("agents/Not_A_Slug/x.md", "unaddressable");
    f
}

#[test]
fn list_is_recent_first_and_renders_own_homes() {
    let f = populated();
    assert_eq!(
        addresses(&f.store, &ListQuery::default()),
        [
            "@model/tips.md",
            "@self/diary.md",
            "@human/prefs.md",
            "@project/decisions.md",
            "@project/MAP.md",
            "a/b/deep.md",
            "checkpoint.md",
        ]
    );
    let rows = f.store.list(&ListQuery::default()).all_rows();
    let diary = rows
        .iter()
        .find(|row| row.location.address == "@self/diary.md")
        .expect("diary");
    assert_eq!(diary.location.scope, Scope::Agent);
    assert_eq!(diary.location.home, Home::Agent("alice".into()));
    assert_eq!(diary.location.rel_path, "diary.md");
    assert_eq!(diary.body, "Today I learned about FLOCK.");
    assert_eq!(
        diary.size_bytes,
        std::fs::metadata(&diary.location.path).expect("meta").len()
    );
}

#[test]
fn list_ties_sort_by_address() {
    let f = Fixture::new();
    for name in ["b", "a", "c"] {
        f.put(
            &format!("human/{name}.md"),
            "---\nupdatedAt: 2026-01-01T00:00:00.000+00:00\n---\n\nsame time\n",
        );
    }
    assert_eq!(
        addresses(&f.store, &ListQuery::default()),
        ["@human/a.md", "@human/b.md", "@human/c.md"]
    );
}

#[test]
fn wastebasket_and_crumpled_excluded() {
    let f = populated();
    let crumple = crumpling();
    f.store.update("@human/prefs", &crumple).expect("crumple");
    let live = f.store.list(&ListQuery::default()).expect("list");
    assert_eq!(live.crumpled_excluded, 1);
    assert!(
        live.rows
            .iter()
            .all(|row| row.location.address != "@human/prefs.md")
    );
    let basket = ListQuery {
        wastebasket: true,
        ..ListQuery::default()
    };
    let crumpled = f.store.list(&basket).expect("wastebasket");
    assert_eq!(addresses(&f.store, &basket), ["@human/prefs.md"]);
    assert_eq!(crumpled.crumpled_excluded, 0);
    assert!(crumpled.homes_unavailable.is_empty());
}

#[test]
fn scope_and_who() {
    let f = populated();
    let scoped = |scope, who: Option<&str>| ListQuery {
        scope: Some(scope),
        who: who.map(str::to_owned),
        ..ListQuery::default()
    };
    assert_eq!(
        addresses(&f.store, &scoped(Scope::Human, None)),
        ["@human/prefs.md"]
    );
    assert_eq!(
        sorted(&f.store, &scoped(Scope::Session, None)),
        ["a/b/deep.md", "checkpoint.md"]
    );
    assert_eq!(
        addresses(&f.store, &scoped(Scope::Agent, None)),
        ["@self/diary.md"]
    );
    assert_eq!(
        addresses(&f.store, &scoped(Scope::Agent, Some("bob"))),
        ["@agents/bob/bob-notes.md"]
    );
    assert_eq!(
        addresses(&f.store, &scoped(Scope::Agent, Some("alice"))),
        ["@self/diary.md"]
    );
    assert_eq!(
        addresses(&f.store, &scoped(Scope::Model, Some("claude"))),
        ["@models/claude/claude-tips.md"]
    );
    assert!(addresses(&f.store, &scoped(Scope::Agent, Some("nobody"))).is_empty());
    for (query, message) in [
        (
            ListQuery {
                who: Some("bob".into()),
                ..ListQuery::default()
            },
            "who requires agent or model scope",
        ),
        (
            scoped(Scope::Project, Some("bob")),
            "who is only valid with agent or model scope",
        ),
        (
            scoped(Scope::Agent, Some("Bob")),
            "who must be a canonical lowercase slug",
        ),
        (
            scoped(Scope::Agent, Some("../x")),
            "who must be a canonical lowercase slug",
        ),
    ] {
        let error = f.store.list(&query).expect_err("refused");
        assert_eq!(
            (error.code(), error.message()),
            (RefusalCode::InvalidScope, message)
        );
        assert_eq!(
            code(f.store.search(&["x"], &query)),
            RefusalCode::InvalidScope
        );
    }
}

#[test]
fn patterns_match_concrete_addresses_and_narrow_homes() {
    let f = populated();
    // Every note the default listing shows.
    let everything = [
        "@human/prefs.md",
        "@model/tips.md",
        "@project/MAP.md",
        "@project/decisions.md",
        "@self/diary.md",
        "a/b/deep.md",
        "checkpoint.md",
    ];
    for (glob, expect) in [
        ("*", &["checkpoint.md"][..]),
        ("**", &everything[..]),
        ("**/deep.md", &["a/b/deep.md"]),
        ("**/checkpoint.md", &["checkpoint.md"]),
        ("a/**/deep.md", &["a/b/deep.md"]),
        ("a/*/deep.md", &["a/b/deep.md"]),
        ("a/*.md", &[]),
        ("check?oint.md", &["checkpoint.md"]),
        ("checkpoint", &["checkpoint.md"]),
        ("heckpoint.md", &[]),
        ("@project/**", &["@project/MAP.md", "@project/decisions.md"]),
        ("@project/M*", &["@project/MAP.md"]),
        ("@self/**", &["@self/diary.md"]),
        ("@self", &[]),
        ("@agents/alice/*", &["@self/diary.md"]),
        ("@agents/bob/**", &["@agents/bob/bob-notes.md"]),
        (
            "@agents/*/**",
            &["@agents/bob/bob-notes.md", "@self/diary.md"],
        ),
        ("@agents/?ob/*", &["@agents/bob/bob-notes.md"]),
        (
            "@models/**",
            &["@model/tips.md", "@models/claude/claude-tips.md"],
        ),
        ("@model/*", &["@model/tips.md"]),
        (
            "@agents/**/*.md",
            &["@agents/bob/bob-notes.md", "@self/diary.md"],
        ),
        ("@nope/**", &[]),
        ("@proj*/**", &[]),
        ("**/*.md", &everything),
        (
            "@agents/**",
            &["@agents/bob/bob-notes.md", "@self/diary.md"],
        ),
    ] {
        assert_eq!(sorted(&f.store, &pattern(glob)), expect, "{glob}");
    }
    let empty = ListQuery {
        pattern: Some(String::new()),
        ..ListQuery::default()
    };
    assert_eq!(
        addresses(&f.store, &empty).len(),
        7,
        "an empty pattern is no pattern"
    );
    let scoped = ListQuery {
        scope: Some(Scope::Agent),
        ..pattern("@agents/*/**")
    };
    assert_eq!(addresses(&f.store, &scoped), ["@self/diary.md"]);
    for bad in ["a\\b", "a\0b"] {
        assert_eq!(
            [
                code(f.store.list(&pattern(bad))),
                code(f.store.search(&["x"], &pattern(bad))),
            ],
            [RefusalCode::InvalidPattern; 2]
        );
    }
}

#[test]
fn search_finds_lines_with_code_point_offsets() {
    let f = Fixture::new();
    f.store
        .write("@project/unicode", "Straße\nÜber FLOCK and flock\n", None)
        .expect("write");
    f.store
        .write("@human/other", "no match here", None)
        .expect("write");
    f.store
        .write("@self/x", "FLOCK\r\nüber", None)
        .expect("write");
    let rows = f
        .store
        .search(&["flock", "ÜBER"], &ListQuery::default())
        .all_rows();
    type Hit = (usize, String, usize);
    let found: Vec<(String, Vec<Hit>)> = rows
        .into_iter()
        .map(|row| {
            let matches = row
                .matches
                .into_iter()
                .map(|m| (m.line, m.text, m.offset_chars))
                .collect();
            (row.location.address, matches)
        })
        .collect();
    assert_eq!(
        found,
        [
            (
                "@project/unicode.md".to_owned(),
                vec![(2, "Über FLOCK and flock".to_owned(), 7)]
            ),
            (
                "@self/x.md".to_owned(),
                vec![(1, "FLOCK".to_owned(), 0), (2, "über".to_owned(), 7)]
            ),
        ]
    );
}

#[test]
fn search_skips_crumpled_notes_and_never_touches_access_metadata() {
    let f = populated();
    let crumple = crumpling();
    f.store
        .update("@project/decisions", &crumple)
        .expect("crumple");
    let before = f.raw("project/proj-12345678/decisions.md");
    let status = f
        .store
        .search(&["flock"], &ListQuery::default())
        .expect("search");
    let found: Vec<&str> = status
        .rows
        .iter()
        .map(|row| row.location.address.as_str())
        .collect();
    assert_eq!(found, ["@self/diary.md"]);
    assert_eq!(status.crumpled_excluded, 1);
    let basket = ListQuery {
        wastebasket: true,
        ..ListQuery::default()
    };
    let crumpled = f.store.search(&["flock"], &basket).all_rows();
    assert_eq!(crumpled.len(), 1);
    assert_eq!(crumpled[0].location.address, "@project/decisions.md");
    f.store.list(&ListQuery::default()).all_rows();
    assert_eq!(f.raw("project/proj-12345678/decisions.md"), before);
    let foreign = f
        .store
        .search(&["flock"], &pattern("@agents/*/**"))
        .all_rows();
    let found: Vec<&str> = foreign
        .iter()
        .map(|row| row.location.address.as_str())
        .collect();
    assert_eq!(found, ["@agents/bob/bob-notes.md", "@self/diary.md"]);
}

#[test]
fn search_refuses_empty_queries() {
    let f = populated();
    let none: [&str; 0] = [];
    assert_eq!(
        code(f.store.search(&none, &ListQuery::default())),
        RefusalCode::InvalidQuery
    );
    let error = f
        .store
        .search(&["ok", ""], &ListQuery::default())
        .expect_err("empty");
    assert_eq!(
        (error.code(), error.message()),
        (
            RefusalCode::InvalidQuery,
            "an empty query matches everything"
        )
    );
}

#[test]
fn an_unreadable_home_is_reported_not_fatal() {
    let f = populated();
    std::fs::remove_dir_all(f.root().join("pi/session/s1")).expect("remove");
    f.put("pi/session/s1", "a file where the session home should be");
    std::fs::remove_dir_all(f.root().join("project")).expect("remove");
    f.put("project", "a file where the project homes should be");
    let status = f.store.list(&ListQuery::default()).expect("status");
    assert_eq!(status.homes_unavailable, ["session", "@project"]);
    assert_eq!(status.rows.len(), 3);
    let searched = f
        .store
        .search(&["flock"], &ListQuery::default())
        .expect("status");
    assert_eq!(searched.homes_unavailable, ["session", "@project"]);
    assert_eq!(searched.rows.len(), 1);
    std::fs::remove_dir_all(f.root().join("agents")).expect("remove");
    f.put("agents", "not a directory");
    let agents = f.store.list(&pattern("@agents/*/**")).expect("status");
    assert_eq!(agents.homes_unavailable, ["@agents"]);
}

#[test]
fn missing_homes_are_simply_empty() {
    let f = Fixture::new();
    let status = f.store.list(&ListQuery::default()).expect("status");
    assert!(status.rows.is_empty() && status.homes_unavailable.is_empty());
    assert!(f.store.list(&pattern("@agents/*/**")).all_rows().is_empty());
}

#[test]
fn homes_are_isolated_by_session_and_project() {
    let f = populated();
    let identity = |session: &str, project: &str| {
        crate::notes::NotesIdentity::new(
            f.dir.path().join("notes"),
            session,
            project,
            "alice",
            "gpt",
        )
        .expect("identity")
    };
    let other_session = NoteStore::new(identity("s2", "proj-12345678"));
    let found = addresses(&other_session, &ListQuery::default());
    assert!(
        found.iter().all(|a| a.starts_with('@')),
        "another session sees no bare notes: {found:?}"
    );
    assert!(found.contains(&"@project/MAP.md".to_owned()));
    let other_project = NoteStore::new(identity("s1", "other-87654321"));
    let found = addresses(&other_project, &ListQuery::default());
    assert!(
        found.iter().all(|a| !a.starts_with("@project/")),
        "{found:?}"
    );
    assert!(
        other_project
            .read("@project/decisions")
            .expect("read")
            .is_none()
    );
}

#[test]
fn search_never_matches_frontmatter() {
    let f = Fixture::new();
    f.store.write("@human/x", "body text", None).expect("write");
    assert!(
        f.store
            .search(&["origin", "createdAt"], &ListQuery::default())
            .all_rows()
            .is_empty()
    );
    assert_eq!(
        f.store
            .search(&["BODY"], &ListQuery::default())
            .all_rows()
            .len(),
        1
    );
}

/// A store large enough that `list` and `search` read its files on
/// several threads: one directory per home and many small folders, some
/// notes crumpled, some matching on known lines.
fn large_library() -> Fixture {
    let f = Fixture::new();
    let homes = [
        "pi/session/s1",
        "project/proj-12345678",
        "human",
        "agents/alice",
        "models/gpt",
    ];
    for index in 0..600 {
        let home = homes[index % homes.len()];
        let folder = if index % 7 == 0 {
            String::new()
        } else {
            format!("f{}/", index % 13)
        };
        let crumpled = if index % 11 == 0 {
            "crumpledAt: 2026-02-01T00:00:00.000+00:00\n"
        } else {
            ""
        };
        let needle = if index % 3 == 0 {
            format!("\nsecond line, a Needle {index}\nthird\nnEEDLE again")
        } else {
            String::new()
        };
        f.put(
            &format!("{home}/{folder}n{index:03}.md"),
            &format!(
                "---\norigin: self\ncreatedAt: 2026-01-01T00:00:00.000+00:00\nupdatedAt: 2026-01-{:02}T00:00:00.000+00:00\nlastAccessed: 2026-01-02T00:00:00.000+00:00\n{crumpled}---\n\n# Note {index} é{needle}\n",
                1 + index % 28
            ),
        );
    }
    f
}

#[test]
fn a_large_store_lists_and_searches_as_one_reader_would() {
    let f = large_library();
    // `list` reads whole files on several threads, `list_headers` reads
    // heads on one: the same notes, in the same order.
    for wastebasket in [false, true] {
        let query = ListQuery {
            wastebasket,
            ..ListQuery::default()
        };
        let listed = f.store.list(&query).expect("list");
        let headers = f.store.list_headers(&query).expect("headers");
        assert_eq!(listed.crumpled_excluded, headers.crumpled_excluded);
        assert!(listed.homes_unavailable.is_empty());
        let listed: Vec<NoteHeader> = listed.rows.into_iter().map(header_of).collect();
        assert_eq!(listed, headers.rows);
        // Through kept heads (read on several threads, then served).
        let (kept, heads) = keeping(&f);
        for _ in 0..2 {
            assert_eq!(kept.list_headers(&query).expect("kept").rows, listed);
        }
        assert!(!heads.is_empty());
    }
    let searched = f
        .store
        .search(&["needle"], &ListQuery::default())
        .expect("search");
    let expected: Vec<usize> = (0..600).filter(|i| i % 3 == 0 && i % 11 != 0).collect();
    assert_eq!(
        searched.crumpled_excluded,
        (0..600).filter(|i| i % 3 == 0 && i % 11 == 0).count()
    );
    // Rows by address, every match line with its code-point offset.
    let mut addresses: Vec<String> = searched
        .rows
        .iter()
        .map(|row| row.location.address.clone())
        .collect();
    let by_address = addresses.clone();
    addresses.sort();
    assert_eq!(addresses, by_address);
    assert_eq!(searched.rows.len(), expected.len());
    for row in &searched.rows {
        let index: usize = row
            .location
            .rel_path
            .rsplit('n')
            .next()
            .and_then(|name| name.strip_suffix(".md"))
            .and_then(|n| n.parse().ok())
            .expect("index");
        assert!(expected.contains(&index), "{}", row.location.address);
        let heading = format!("# Note {index} é\n");
        let second = format!("second line, a Needle {index}\n");
        let lines: Vec<(usize, String, usize)> = row
            .matches
            .iter()
            .map(|m| (m.line, m.text.clone(), m.offset_chars))
            .collect();
        assert_eq!(
            lines,
            [
                (
                    2,
                    format!("second line, a Needle {index}"),
                    heading.chars().count() + 15
                ),
                (
                    4,
                    "nEEDLE again".to_owned(),
                    heading.chars().count() + second.chars().count() + "third\n".len()
                ),
            ],
            "{}",
            row.location.address
        );
    }
    // A home that cannot be read is reported and the others still list.
    std::fs::remove_dir_all(f.root().join("human")).expect("remove");
    f.put("human", "a file where the human home should be");
    let searched = f
        .store
        .search(&["needle"], &ListQuery::default())
        .expect("search");
    assert_eq!(searched.homes_unavailable, ["@human"]);
    assert_eq!(
        searched.rows.len(),
        expected.iter().filter(|i| *i % 5 != 2).count()
    );
}

/// A row without its body, to compare with `list_headers`.
fn header_of(row: NoteRow) -> NoteHeader {
    NoteHeader {
        location: row.location,
        meta: row.meta,
    }
}

#[test]
fn list_headers_are_list_rows_without_bodies() {
    let f = populated();
    // Every time set, so the two listings' "now" defaults never show.
    let stamp = "createdAt: 2026-03-01T08:00:00.000+00:00\nupdatedAt: 2026-03-01T10:00:00.000+00:00\nlastAccessed: 2026-03-01T10:00:00.000+00:00\n";
    let long_extra = format!("note: \"{}\"\n", "y".repeat(6_000));
    for (path, text) in [
        (
            "human/crlf.md",
            format!(
                "\u{feff}---\r\n{}---\r\n\r\nbody\r\n",
                stamp.replace('\n', "\r\n")
            ),
        ),
        (
            "human/long-block.md",
            format!("---\n{long_extra}{stamp}---\n\nbody"),
        ),
        (
            "human/long-body.md",
            format!(
                "---\n{stamp}crumpledAt: 2026-03-02T00:00:00.000+00:00\n---\n\n{}",
                "b".repeat(20_000)
            ),
        ),
        (
            "human/at-the-edge.md",
            format!("---\nnote: {}\n{stamp}---\n\nbody", "p".repeat(4_000)),
        ),
    ] {
        f.put(path, &text);
    }
    std::fs::write(
        f.root().join("human/bytes.md"),
        b"---\ncreatedAt: 1\nupdatedAt: 2\nlastAccessed: 3\n---\n\n\xff\xfe\n",
    )
    .expect("bytes");
    for query in [
        ListQuery::default(),
        ListQuery {
            wastebasket: true,
            ..ListQuery::default()
        },
        pattern("@human/**"),
        ListQuery {
            scope: Some(Scope::Human),
            ..ListQuery::default()
        },
    ] {
        let rows = f.store.list(&query).expect("list");
        let headers = f.store.list_headers(&query).expect("headers");
        assert!(!headers.rows.is_empty(), "{query:?}");
        assert_eq!(headers.crumpled_excluded, rows.crumpled_excluded);
        assert_eq!(headers.homes_unavailable, rows.homes_unavailable);
        let rows: Vec<NoteHeader> = rows.rows.into_iter().map(header_of).collect();
        assert_eq!(headers.rows, rows, "{query:?}");
        assert_eq!(f.store.list_headers(&query).all_rows(), rows);
        // Through kept heads, read and then served: the same rows.
        let heads = Arc::new(HeadCache::with_settle(Duration::ZERO));
        let kept = f.store.clone().with_head_cache(Arc::clone(&heads));
        assert_eq!(kept.list_headers(&query).all_rows(), rows, "{query:?}");
        assert!(!heads.is_empty());
        assert_eq!(kept.list_headers(&query).all_rows(), rows, "{query:?}");
    }
}

/// A store keeping every head at once (no settle time).
fn keeping(f: &Fixture) -> (NoteStore, Arc<HeadCache>) {
    let heads = Arc::new(HeadCache::with_settle(Duration::ZERO));
    (f.store.clone().with_head_cache(Arc::clone(&heads)), heads)
}

fn updated_of(store: &NoteStore, address: &str) -> Vec<(String, i64, bool)> {
    store
        .list_headers(&ListQuery {
            wastebasket: false,
            ..ListQuery::default()
        })
        .all_rows()
        .into_iter()
        .filter(|h| h.location.address == address)
        .map(|h| (h.location.address, h.meta.updated_at, h.meta.is_crumpled()))
        .collect()
}

#[test]
fn kept_heads_follow_every_change_to_a_note() {
    let f = populated();
    let (kept, heads) = keeping(&f);
    let listed = kept.list_headers(&ListQuery::default()).all_rows();
    // Each own note's head is kept (the foreign and unaddressable are not
    // listed, so not read).
    assert_eq!(heads.len(), listed.len());
    assert_eq!(listed.len(), 7);

    // A write through the store (a new file renamed in place).
    let before = updated_of(&kept, "@human/prefs.md");
    kept.write("@human/prefs", "Likes long answers now.", None)
        .expect("rewrite");
    let after = updated_of(&kept, "@human/prefs.md");
    assert_ne!(after, before);
    assert_eq!(after, updated_of(&f.store, "@human/prefs.md"));

    // An edit in place by another program, to another length.
    f.put(
        "human/prefs.md",
        "---\ncreatedAt: 2020-01-01T00:00:00.000+00:00\nupdatedAt: 2020-01-02T00:00:00.000+00:00\n---\n\nby hand",
    );
    assert_eq!(
        updated_of(&kept, "@human/prefs.md"),
        vec![("@human/prefs.md".to_owned(), 1_577_923_200_000, false)]
    );

    // Crumpled by hand: the listing hides it at once.
    f.put(
        "human/prefs.md",
        "---\ncreatedAt: 2020-01-01T00:00:00.000+00:00\nupdatedAt: 2020-01-02T00:00:00.000+00:00\ncrumpledAt: 2020-01-03T00:00:00.000+00:00\n---\n\nby hand",
    );
    assert_eq!(updated_of(&kept, "@human/prefs.md"), vec![]);

    // Removed: gone from the listing; a new note appears.
    std::fs::remove_file(f.root().join("human/prefs.md")).expect("remove");
    f.put("human/new.md", "fresh");
    let addresses: Vec<String> = kept
        .list_headers(&ListQuery::default())
        .all_rows()
        .into_iter()
        .map(|h| h.location.address)
        .collect();
    assert!(!addresses.contains(&"@human/prefs.md".to_owned()));
    assert!(addresses.contains(&"@human/new.md".to_owned()));
}

#[test]
fn kept_metadata_never_hides_the_clock_or_the_zone() {
    let f = populated();
    f.put("human/no-times.md", "no frontmatter at all");
    f.put(
        "human/naive.md",
        "---\ncreatedAt: 2026-01-01T00:00:00\nupdatedAt: 2026-01-01T08:00:00\nlastAccessed: 2026-01-01T08:00:00\n---\n\nbody",
    );
    let (kept, heads) = keeping(&f);
    let tokyo = jiff::tz::TimeZone::fixed(jiff::tz::Offset::constant(9));
    let kept_tokyo = kept.clone().with_time_zone(tokyo.clone());
    let plain_tokyo = f.store.clone().with_time_zone(tokyo);
    let query = ListQuery::default();
    for round in 0..3 {
        // Each listing parses the clock-dependent note at its own time.
        let before = crate::notes::now_ms();
        let rows = kept.list_headers(&query).all_rows();
        let no_times = rows
            .iter()
            .find(|h| h.location.address == "@human/no-times.md")
            .expect("listed");
        assert!(no_times.meta.updated_at >= before, "round {round}");
        std::thread::sleep(Duration::from_millis(2));
        // A zone-dependent note reads in each store's own zone, whichever
        // store kept its head.
        let naive = |store: &NoteStore| {
            store
                .list_headers(&query)
                .all_rows()
                .into_iter()
                .find(|h| h.location.address == "@human/naive.md")
                .map(|h| h.meta.updated_at)
        };
        assert_eq!(naive(&kept_tokyo), naive(&plain_tokyo), "round {round}");
        assert_eq!(naive(&kept), naive(&f.store), "round {round}");
        assert_ne!(naive(&kept), naive(&kept_tokyo));
        // Every other note reads the same through the cache.
        let settled = |rows: Vec<NoteHeader>| -> Vec<NoteHeader> {
            rows.into_iter()
                .filter(|h| !h.location.address.starts_with("@human/n"))
                .collect()
        };
        assert_eq!(
            settled(kept.list_headers(&query).all_rows()),
            settled(f.store.list_headers(&query).all_rows())
        );
        // Every head's parse is kept but the zone-dependent one's (the
        // clock-dependent one is kept with its times marked).
        assert_eq!(heads.len(), 9, "round {round}");
        assert_eq!(heads.kept_parses(), 8, "round {round}");
    }
}

#[test]
fn notes_just_written_are_read_again_until_they_settle() {
    let f = populated();
    let heads = Arc::new(HeadCache::new());
    let kept = f.store.clone().with_head_cache(Arc::clone(&heads));
    let rows = kept.list_headers(&ListQuery::default()).all_rows();
    assert_eq!(rows.len(), 7);
    assert!(
        heads.is_empty(),
        "every note changed within the settle time"
    );
}

#[test]
fn peek_row_reads_a_listed_note_whole_and_touches_nothing() {
    let f = populated();
    let headers = f.store.list_headers(&ListQuery::default()).all_rows();
    let rows = f.store.list(&ListQuery::default()).all_rows();
    let before = f.raw("human/prefs.md");
    for (header, row) in headers.iter().zip(&rows) {
        assert_eq!(f.store.peek_row(header).expect("peek").as_ref(), Some(row));
    }
    assert_eq!(
        f.raw("human/prefs.md"),
        before,
        "no access metadata touched"
    );

    let listed = |address: &str| {
        headers
            .iter()
            .find(|h| h.location.address == address)
            .unwrap_or_else(|| panic!("{address} listed"))
    };
    let prefs = listed("@human/prefs.md");
    f.store
        .rename("@human/prefs", "@human/moved")
        .expect("rename");
    assert_eq!(
        f.store.peek_row(prefs).expect("peek"),
        None,
        "gone since listed"
    );

    let tips = listed("@model/tips.md");
    let file = f.root().join("models/gpt/tips.md");
    std::fs::remove_file(&file).expect("remove");
    std::os::unix::fs::symlink(f.root().join("human/moved.md"), &file).expect("link");
    assert_eq!(
        f.store.peek_row(tips).expect("peek"),
        None,
        "a link is skipped"
    );

    let mut escaping = tips.clone();
    escaping.location.rel_path = "../../human/moved.md".into();
    assert_eq!(
        code(f.store.peek_row(&escaping)),
        RefusalCode::InvalidAddress
    );
}

/// A store keeping every head at once and watching for changes, over the
/// same root as `f.store`.
fn watching(f: &Fixture) -> (NoteStore, Arc<HeadCache>) {
    let heads = Arc::new(HeadCache::with_settle(Duration::ZERO).watching());
    (f.store.clone().with_head_cache(Arc::clone(&heads)), heads)
}

/// A note with fixed times (so two listings of it are equal).
fn timed(updated_day: u8, extra: &str) -> String {
    format!(
        "---\ncreatedAt: 2026-01-01T00:00:00.000+00:00\nupdatedAt: 2026-01-{updated_day:02}T00:00:00.000+00:00\nlastAccessed: 2026-01-01T00:00:00.000+00:00\n{extra}---\n\nbody"
    )
}

/// Notes with fixed times in every own home and in nested folders.
fn timed_library() -> Fixture {
    let f = Fixture::new();
    for (path, day) in [
        ("pi/session/s1/checkpoint.md", 1),
        ("pi/session/s1/a/b/deep.md", 2),
        ("project/proj-12345678/MAP.md", 3),
        ("project/proj-12345678/topics/one.md", 4),
        ("project/proj-12345678/topics/two.md", 5),
        ("human/prefs.md", 6),
        ("agents/alice/diary.md", 7),
        ("models/gpt/tips.md", 8),
    ] {
        f.put(path, &timed(day, ""));
    }
    f
}

/// Both listings (live notes and the wastebasket) through `watched` equal
/// the ones read from disk without a cache, after `what`.
#[track_caller]
fn same_as_disk(f: &Fixture, watched: &NoteStore, what: &str) {
    for wastebasket in [false, true] {
        let query = ListQuery {
            wastebasket,
            ..ListQuery::default()
        };
        let on_disk = f.store.list_headers(&query).all_rows();
        assert_eq!(
            watched.list_headers(&query).all_rows(),
            on_disk,
            "{what} (wastebasket {wastebasket})"
        );
    }
}

/// Every kind of change after a warm listing shows at the next listing,
/// through a cache that serves heads on change notification.
#[test]
fn watched_heads_follow_every_change() {
    let f = timed_library();
    let (watched, heads) = watching(&f);
    let root = f.root();
    let warm = |what: &str| {
        same_as_disk(&f, &watched, what);
        // Every listed head is served without a stamp check now (where the
        // system reports changes).
        if cfg!(target_os = "linux") {
            let listed = f.store.list_headers(&ListQuery::default()).all_rows().len()
                + f.store
                    .list_headers(&ListQuery {
                        wastebasket: true,
                        ..ListQuery::default()
                    })
                    .all_rows()
                    .len();
            assert_eq!(heads.watched_heads(), listed, "{what}: all watched");
        }
    };
    warm("first listing");
    warm("warm listing");

    // In place, to the same length, within the same second.
    f.put("human/prefs.md", &timed(9, ""));
    warm("edited in place");
    // In place through an open file, without truncating, its modification
    // time put back.
    {
        use std::io::{Seek, SeekFrom, Write};
        let path = root.join("human/prefs.md");
        let modified = std::fs::metadata(&path)
            .expect("test setup")
            .modified()
            .expect("test setup");
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .expect("test setup");
        let at = timed(9, "").find("2026-01-09").expect("test setup");
        file.seek(SeekFrom::Start(at as u64)).expect("test setup");
        file.write_all(b"2026-01-11").expect("test setup");
        file.set_modified(modified).expect("test setup");
    }
    warm("written through an open file");
    // Renamed; renamed over another note; removed; a new note.
    std::fs::rename(root.join("human/prefs.md"), root.join("human/likes.md")).expect("test setup");
    warm("renamed");
    std::fs::rename(
        root.join("project/proj-12345678/topics/one.md"),
        root.join("project/proj-12345678/topics/two.md"),
    )
    .expect("test setup");
    warm("renamed over another note");
    std::fs::remove_file(root.join("agents/alice/diary.md")).expect("test setup");
    warm("removed");
    f.put("agents/alice/fresh.md", &timed(12, ""));
    warm("a new note");
    // Crumpled through the store, then smoothed by hand.
    watched
        .update("@self/fresh", &crumpling())
        .expect("test setup");
    warm("crumpled");
    f.put("agents/alice/fresh.md", &timed(12, ""));
    warm("smoothed by hand");
    f.put(
        "agents/alice/fresh.md",
        &timed(12, "crumpledAt: 2026-01-13T00:00:00.000+00:00\n"),
    );
    warm("crumpled by hand");
    // Written through a hard link outside the notes root.
    let outside = f.dir.path().join("outside");
    std::fs::create_dir_all(&outside).expect("test setup");
    std::fs::hard_link(root.join("models/gpt/tips.md"), outside.join("tips.md"))
        .expect("test setup");
    std::fs::write(outside.join("tips.md"), timed(14, "")).expect("test setup");
    warm("written through a hard link");
    // A folder swapped for another; a whole home swapped through a folder
    // above it.
    f.put("project/proj-12345678/other/one.md", &timed(15, ""));
    warm("another folder");
    let project = root.join("project/proj-12345678");
    std::fs::rename(project.join("topics"), project.join("old")).expect("test setup");
    std::fs::rename(project.join("other"), project.join("topics")).expect("test setup");
    warm("a folder swapped");
    std::fs::rename(root.join("models"), root.join("models-old")).expect("test setup");
    f.put("models/gpt/tips.md", &timed(16, ""));
    f.put("models/gpt/more.md", &timed(17, ""));
    warm("a home swapped above it");
    std::fs::remove_dir_all(root.join("models")).expect("test setup");
    std::fs::rename(root.join("models-old"), root.join("models")).expect("test setup");
    warm("and back");
}

/// More reports than the kernel queues: every watch is dropped, and the
/// next listing checks every note by stamp and watches it again.
#[test]
fn an_overflowed_queue_forgets_every_watched_head() {
    let f = timed_library();
    f.put("human/x.md", &timed(21, ""));
    f.put("human/y.md", &timed(22, ""));
    let (watched, heads) = watching(&f);
    let root = f.root();
    same_as_disk(&f, &watched, "first listing");
    // The flood is on two other notes: the change to this one is lost with
    // the queue's end.
    let [one, two] = ["human/x.md", "human/y.md"].map(|path| {
        std::fs::OpenOptions::new()
            .write(true)
            .open(root.join(path))
            .expect("test setup")
    });
    // Two files by turns, so that no report merges with the one before it.
    let queued = std::fs::read_to_string("/proc/sys/fs/inotify/max_queued_events")
        .ok()
        .and_then(|max| max.trim().parse::<usize>().ok())
        .unwrap_or(16_384);
    let time = std::time::SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
    for turn in 0..queued * 2 + 16 {
        let file = if turn % 2 == 0 { &one } else { &two };
        file.set_modified(time + Duration::from_secs(turn as u64))
            .expect("test setup");
    }
    f.put("human/prefs.md", &timed(20, ""));
    same_as_disk(&f, &watched, "after an overflow");
    if cfg!(target_os = "linux") {
        assert_eq!(heads.watched_heads(), 10, "watched again");
        assert!(heads.watches() >= 10 + 5, "{}", heads.watches());
    }
}

/// A cache that is not watching serves nothing without a stamp check.
#[test]
fn only_a_watching_cache_serves_heads_without_a_stamp_check() {
    let f = timed_library();
    let (kept, heads) = keeping(&f);
    same_as_disk(&f, &kept, "first");
    same_as_disk(&f, &kept, "warm");
    assert_eq!(heads.len(), 8);
    assert_eq!((heads.watched_heads(), heads.watches()), (0, 0));
}

/// Heads loaded from a saved cache keep their parse at their first listing.
#[test]
fn a_loaded_cache_keeps_the_parses_of_its_heads() {
    let f = timed_library();
    let (kept, heads) = keeping(&f);
    same_as_disk(&f, &kept, "first listing");
    let file = f.dir.path().join("heads.bin");
    heads.save(&file).expect("saved");
    let loaded = Arc::new(HeadCache::load(&file));
    assert_eq!((loaded.len(), loaded.kept_parses()), (8, 0));
    let store = f.store.clone().with_head_cache(Arc::clone(&loaded));
    same_as_disk(&f, &store, "through loaded heads");
    assert_eq!(loaded.kept_parses(), 8);
    same_as_disk(&f, &store, "through kept parses");
}
