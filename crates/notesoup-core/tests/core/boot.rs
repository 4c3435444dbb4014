//! Integration tests: boot.

use jiff::{Timestamp, ToSpan};
use notesoup_core::boot::{
    BootIdentity, BootSnapshot, FreshPage, Home, HomeShelf, MapPage, continuation_text, page_title,
    relative_time, render_boot,
};
use notesoup_core::wire::ToolBindings;

fn opened_at() -> Timestamp {
    "2026-09-15T09:30:00Z".parse().expect("valid timestamp")
}

fn identity(previous: Option<&str>) -> BootIdentity {
    BootIdentity {
        agent: "anonymous".into(),
        model: "gpt-5".into(),
        root_window_id: "pcw:0197a1b2:root".into(),
        window_id: "pcw:0197a1b2:5f3c9d1e".into(),
        previous_window_id: previous.map(str::to_owned),
    }
}

fn page(address: &str, title: &str, age_seconds: i64) -> FreshPage {
    FreshPage {
        address: address.into(),
        title: title.into(),
        updated_at: opened_at() - age_seconds.seconds(),
    }
}

fn map(address: &str, body: &str) -> Option<MapPage> {
    Some(MapPage {
        address: address.into(),
        body: body.into(),
    })
}

fn empty() -> HomeShelf {
    HomeShelf::Loaded {
        map: None,
        fresh: vec![],
    }
}

fn snapshot(shelves: [HomeShelf; 5]) -> BootSnapshot {
    BootSnapshot {
        opened_at: opened_at(),
        homes: Home::LOAD_ORDER.into_iter().zip(shelves).collect(),
    }
}

#[test]
fn relative_times() {
    fn check(age_millis: i64, expect: &str) {
        let then = opened_at() - age_millis.milliseconds();
        assert_eq!(relative_time(opened_at(), then), expect, "{age_millis} ms");
    }
    check(0, "just now");
    check(999, "just now");
    check(-999, "just now");
    check(1_000, "1s ago");
    check(59_999, "59s ago");
    check(60_000, "1m ago");
    check(3_599_999, "59m ago");
    check(3_600_000, "1h ago");
    check(86_399_999, "23h ago");
    check(86_400_000, "1d ago");
    check(400 * 86_400_000, "400d ago");
    check(-1_000, "in 1s");
    check(-90_000, "in 1m");
    check(-7_200_000, "in 2h");
    check(-3 * 86_400_000, "in 3d");
}

#[test]
fn page_titles() {
    fn check(body: &str, expect: &str) {
        assert_eq!(page_title(body), expect, "{body:?}");
    }
    check("# Deploy checklist\nsteps", "Deploy checklist");
    check("intro line\n## Real title ##\n", "Real title");
    check("\n\n  first words  \nsecond", "first words");
    check("# Learning C#\n", "Learning C#");
    check("#hashtag line\n", "#hashtag line");
    // An empty heading is no heading; the first non-empty line is then "#".
    check("#\n# \nplain\n", "#");
    check("text first\n#\n## Then a heading", "Then a heading");
    // Indented four spaces it is code, not a heading: the first line wins.
    check("    # indented code\ntext", "# indented code");
    check("    # indented code\n# Heading", "Heading");
    check("```\n# not a heading\n```\n# Heading", "Heading");
    check("~~~md\n# fenced\n~~~\nbody only", "~~~md");
    check("", "");
    check(" \n\t\n", "");
    check(
        "# 0123456789012345678901234567890123456789",
        "0123456789012345678901234567890123456789",
    );
    check(
        "# 01234567890123456789012345678901234567890",
        "0123456789012345678901234567890123456789…",
    );
    check(
        "# Ünïcödé 🦀 заметки про деплой и откат, 漢字かな交じり文",
        "Ünïcödé 🦀 заметки про деплой и откат, 漢字…",
    );
}

#[test]
fn identity_block_with_and_without_previous_window() {
    let blank = snapshot([empty(), empty(), empty(), empty(), empty()]);
    let root = render_boot(&blank, &identity(None), &ToolBindings::plain());
    assert!(root.starts_with(
        "<context_window>\nAgent name: anonymous (brain: gpt-5)\nFirst context window id: pcw:0197a1b2:root\nCurrent context window id: pcw:0197a1b2:5f3c9d1e\n</context_window>\n\n<context_window_protocol>\n"
    ), "{root}");
    let reset = render_boot(
        &blank,
        &identity(Some("pcw:0197a1b2:root")),
        &ToolBindings::plain(),
    );
    assert!(reset.starts_with(
        "<context_window>\nAgent name: anonymous (brain: gpt-5)\nFirst context window id: pcw:0197a1b2:root\nCurrent context window id: pcw:0197a1b2:5f3c9d1e\nPrevious context window id: pcw:0197a1b2:root\n</context_window>\n\n"
    ), "{reset}");
}

#[test]
fn blank_slate_boot() {
    let blank = snapshot([empty(), empty(), empty(), empty(), empty()]);
    insta::assert_snapshot!(render_boot(&blank, &identity(None), &ToolBindings::plain()));
}

#[test]
fn full_boot_from_a_snapshot() {
    let shelves = [
        HomeShelf::Loaded {
            map: map("MAP.md", "- checkpoint.md: where I am\n"),
            fresh: vec![page("checkpoint.md", "Checkpoint", 30)],
        },
        HomeShelf::Loaded {
            map: map(
                "@project/MAP.md",
                "# Project map\n\n- `@project/deploy.md`: how we ship\n- `@project/decisions/db.md`: why Postgres\n",
            ),
            fresh: vec![
                page("@project/deploy.md", "Deploy checklist", 3 * 3600),
                page("@project/decisions/db.md", "Why Postgres", 2 * 86_400),
                page("@project/notes/empty.md", "", 45 * 60),
            ],
        },
        HomeShelf::Loaded {
            map: None,
            fresh: vec![page("@human/style.md", "Prefers small commits", 12)],
        },
        HomeShelf::Loaded {
            map: map("@self/MAP.md", "- `@self/diary.md`: the diary\n"),
            fresh: vec![],
        },
        HomeShelf::Loaded {
            map: map("@model/MAP.md", "  \n"),
            fresh: vec![page("@model/quirks.md", "Tool-call quirks", -120)],
        },
    ];
    insta::assert_snapshot!(render_boot(
        &snapshot(shelves),
        &identity(Some("pcw:0197a1b2:root")),
        &ToolBindings::plain()
    ));
}

#[test]
fn unavailable_home_uses_the_list_binding() {
    let shelves = [empty(), HomeShelf::Unavailable, empty(), empty(), empty()];
    let bindings = ToolBindings {
        notes_list: "memo_list".into(),
        ..ToolBindings::plain()
    };
    let text = render_boot(&snapshot(shelves), &identity(None), &bindings);
    assert!(text.contains("ask memo_list to try again"), "{text}");
    assert!(!text.contains("None yet."), "{text}");
}

#[test]
fn snapshot_reports_unavailable_homes_in_load_order() {
    let shelves = [
        empty(),
        HomeShelf::Unavailable,
        empty(),
        HomeShelf::Unavailable,
        empty(),
    ];
    let snap = snapshot(shelves);
    assert_eq!(snap.unavailable(), [Home::Project, Home::Agent]);
    let labels: Vec<&str> = snap.unavailable().into_iter().map(Home::label).collect();
    assert_eq!(labels, ["@project", "@self"]);
}

#[test]
fn continuation_snapshot() {
    insta::assert_snapshot!(continuation_text(&ToolBindings::plain()));
}
