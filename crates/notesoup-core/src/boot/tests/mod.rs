//! Boot: the snapshot, the shelf index, the renderer and its bounds, over
//! internals no other crate sees.

#![allow(clippy::unwrap_used)]

use std::fs;
use std::path::{Path, PathBuf};

use jiff::tz::TimeZone;
use jiff::{Timestamp, ToSpan};
use notesoup_core::boot::{
    BootIdentity, BootSections, BootSnapshot, DEFAULT_BOOT_MAX_CHARS, FreshPage, HomeShelf,
    MIN_BOOT_MAX_CHARS, MapPage, ShelfIndex, page_title, relative_time, render_boot,
    render_boot_within,
};
use notesoup_core::notes::{ListQuery, NoteStore, NotesIdentity, Scope};
use notesoup_core::wire::ToolBindings;
use notesoup_test_support::files::{put, tree};
use notesoup_test_support::tool_names::{CONTEXT_TOOLS, HISTORY_TOOLS};
use proptest::prelude::*;

use crate::budget::tests::odd_bindings;
use tempfile::TempDir;

const SESSION: &str = "0197a1b2-session";
const PROJECT: &str = "shop-1a2b3c4d";
const AGENT: &str = "alice";
const MODEL: &str = "gpt-5";

fn opened_at() -> Timestamp {
    "2026-09-15T09:30:00Z".parse().expect("valid timestamp")
}

fn identity(previous: Option<&str>) -> BootIdentity {
    BootIdentity {
        agent: AGENT.into(),
        model: MODEL.into(),
        root_window_id: "pcw:0197a1b2:root".into(),
        window_id: "pcw:0197a1b2:5f3c9d1e".into(),
        previous_window_id: previous.map(str::to_owned),
    }
}

/// A notes root in a temp dir, written as raw files so every time is fixed.
struct Notes {
    _dir: TempDir,
    root: PathBuf,
}

impl Notes {
    fn new() -> Notes {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().join("notes");
        Notes { _dir: dir, root }
    }

    fn store(&self) -> NoteStore {
        let identity =
            NotesIdentity::new(&self.root, SESSION, PROJECT, AGENT, MODEL).expect("identity");
        NoteStore::new(identity).with_time_zone(TimeZone::UTC)
    }

    /// The directory of a home, as the store lays it out.
    fn home(&self, scope: Scope) -> PathBuf {
        match scope {
            Scope::Session => self.root.join("pi/session").join(SESSION),
            Scope::Project => self.root.join("project").join(PROJECT),
            Scope::Human => self.root.join("human"),
            Scope::Agent => self.root.join("agents").join(AGENT),
            Scope::Model => self.root.join("models").join(MODEL),
        }
    }

    /// A note updated `age` before [`opened_at`], optionally crumpled.
    fn note(&self, scope: Scope, path: &str, age: jiff::Span, body: &str) {
        self.raw(scope, path, &note_text(opened_at() - age, None, body));
    }

    /// `count` pages `p00.md`, `p01.md`, … updated one, two, … hours
    /// before [`opened_at`].
    fn pages(&self, scope: Scope, count: usize) {
        for i in 0..count {
            let age = (i64::try_from(i).expect("a few pages") + 1).hours();
            self.note(scope, &format!("p{i:02}.md"), age, "# P\n");
        }
    }

    fn raw(&self, scope: Scope, path: &str, text: &str) {
        put(&self.home(scope).join(path), text);
    }

    fn boot(&self, bindings: &ToolBindings) -> (BootSnapshot, String) {
        let snapshot = BootSnapshot::load_at(&self.store(), opened_at()).expect("snapshot");
        let text = render_boot(&snapshot, &identity(None), bindings);
        (snapshot, text)
    }
}

fn note_text(updated: Timestamp, crumpled: Option<Timestamp>, body: &str) -> String {
    let crumpled = crumpled
        .map(|t| format!("crumpledAt: {t}\n"))
        .unwrap_or_default();
    format!(
        "---\norigin: self\ncreatedAt: 2026-01-01T00:00:00.000+00:00\nupdatedAt: {updated}\nlastAccessed: 2026-01-01T00:00:00.000+00:00\naccessCount: 0\n{crumpled}---\n\n{body}"
    )
}

// ---- The renderer's pure parts ----

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
    // Up to three spaces it is still a heading.
    check("text\n   # Three spaces in", "Three spaces in");
    check("```\n# not a heading\n```\n# Heading", "Heading");
    check("~~~md\n# fenced\n~~~\nbody only", "~~~md");
    // A fence closes only with its own marker.
    check("```\n~~~\n# still fenced\n```\n# Heading", "Heading");
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
    let blank = BootSnapshot {
        opened_at: opened_at(),
        homes: vec![],
    };
    let root = render_boot(&blank, &identity(None), &ToolBindings::plain());
    assert!(
        root.starts_with(
            "<context_window>\nAgent name: alice (brain: gpt-5)\nFirst context window id: pcw:0197a1b2:root\nCurrent context window id: pcw:0197a1b2:5f3c9d1e\n</context_window>\n\n<context_window_protocol>\n"
        ),
        "{root}"
    );
    let reset = render_boot(
        &blank,
        &identity(Some("pcw:0197a1b2:root")),
        &ToolBindings::plain(),
    );
    assert!(
        reset.starts_with(
            "<context_window>\nAgent name: alice (brain: gpt-5)\nFirst context window id: pcw:0197a1b2:root\nCurrent context window id: pcw:0197a1b2:5f3c9d1e\nPrevious context window id: pcw:0197a1b2:root\n</context_window>\n\n"
        ),
        "{reset}"
    );
}

#[test]
fn protocol_block_uses_every_binding() {
    let blank = BootSnapshot {
        opened_at: opened_at(),
        homes: vec![],
    };
    let text = render_boot(&blank, &identity(None), &odd_bindings());
    let protocol = &text[text.find("<context_window_protocol>").expect("protocol")..];
    insta::assert_snapshot!(protocol);
    let families = ["notes_*", "history_*"];
    for plain in families.iter().chain(&HISTORY_TOOLS).chain(&CONTEXT_TOOLS) {
        assert!(!text.contains(plain), "{plain} left unbound");
    }
}

#[test]
fn a_hand_built_snapshot_renders_each_shelf_part() {
    let page = |address: &str, title: &str, age: jiff::Span| FreshPage {
        address: address.into(),
        title: title.into(),
        updated_at: opened_at() - age,
    };
    let empty = || HomeShelf::Loaded {
        map: None,
        fresh: vec![],
    };
    let snapshot = BootSnapshot {
        opened_at: opened_at(),
        homes: vec![
            (Scope::Session, empty()),
            (
                Scope::Project,
                HomeShelf::Loaded {
                    map: Some(MapPage {
                        address: "@project/MAP.md".into(),
                        body: "\n\n- one\n\n  - nested\n\n\n".into(),
                    }),
                    fresh: vec![page("@project/x.md", "", 3.hours())],
                },
            ),
            (Scope::Human, HomeShelf::Unavailable),
            (
                Scope::Agent,
                HomeShelf::Loaded {
                    map: Some(MapPage {
                        address: "@self/MAP.md".into(),
                        body: " \n\t\n".into(),
                    }),
                    fresh: vec![],
                },
            ),
            (Scope::Model, empty()),
        ],
    };
    let text = render_boot(&snapshot, &identity(None), &ToolBindings::plain());
    let shelves = &text[text.find("YOUR NOTES").expect("shelves")..];
    assert_eq!(
        shelves,
        "YOUR NOTES
──────────

THIS PROJECT · @project
───────────────────────
MAP — @project/MAP.md
  - one

    - nested

New pages
  - @project/x.md · 3h ago


THE HUMAN · @human
──────────────────
  This drawer wouldn't open — ask notes_list to try again."
    );
}

#[test]
fn continuation_snapshot() {
    insta::assert_snapshot!(ToolBindings::continuation_text(&ToolBindings::plain()));
}

#[test]
fn continuation_uses_the_bindings() {
    let text = ToolBindings::continuation_text(&odd_bindings());
    assert!(text.contains("past_read it"), "{text}");
    assert!(text.contains("past_search is your shovel"), "{text}");
}

// ---- Snapshots of real stores ----

/// A store with something in every home, plus notes the boot must not show.
fn full_store() -> Notes {
    let notes = Notes::new();
    notes.note(
        Scope::Session,
        "MAP.md",
        1.hours(),
        "- `checkpoint.md`: where I am\n",
    );
    notes.note(
        Scope::Session,
        "checkpoint.md",
        30.seconds(),
        "# Checkpoint\n\nGoal: ship the cart fix.\n",
    );
    notes.note(
        Scope::Project,
        "MAP.md",
        48.hours(),
        "# Project map\n\n- `@project/deploy.md`: how we ship\n- `@project/decisions/db.md`: why Postgres\n- `@project/decisions/MAP.md`: the decision log\n",
    );
    notes.note(
        Scope::Project,
        "deploy.md",
        3.hours(),
        "Deploy notes\n\n## Deploy checklist\n\n1. tag\n2. push\n",
    );
    notes.note(
        Scope::Project,
        "decisions/db.md",
        48.hours(),
        "# Why Postgres\n",
    );
    notes.note(
        Scope::Project,
        "decisions/MAP.md",
        45.minutes(),
        "# Decision log\n",
    );
    // Older than the three freshest pages: not shown.
    notes.note(Scope::Project, "old.md", 720.hours(), "# Old news\n");
    // Crumpled: never shown, however fresh.
    notes.raw(
        Scope::Project,
        "stale.md",
        &note_text(opened_at(), Some(opened_at()), "# Stale and crumpled\n"),
    );
    // Not a note.
    notes.raw(Scope::Project, "diagram.png", "not markdown");
    notes.note(
        Scope::Human,
        "style.md",
        12.seconds(),
        "Prefers small commits and plain words.\n",
    );
    notes.note(
        Scope::Agent,
        "MAP.md",
        120.hours(),
        "- `@self/diary.md`: the diary\n",
    );
    notes.note(
        Scope::Model,
        "quirks.md",
        -(2.minutes()),
        "# Tool-call quirks\n",
    );
    // Another agent's diary is not this boot's business.
    put(
        &notes.root.join("agents/bob/diary.md"),
        note_text(opened_at(), None, "# Bob's secrets\n"),
    );
    notes
}

#[test]
fn full_boot() {
    let notes = full_store();
    let (snapshot, text) = notes.boot(&ToolBindings::plain());
    assert!(snapshot.unavailable().is_empty());
    insta::assert_snapshot!(text);
}

#[test]
fn snapshot_loads_homes_in_order_and_changes_nothing() {
    let notes = full_store();
    let before = tree(&notes.root);
    let (snapshot, _) = notes.boot(&ToolBindings::plain());
    let order: Vec<Scope> = snapshot.homes.iter().map(|(scope, _)| *scope).collect();
    assert_eq!(order, Scope::ALL);
    assert_eq!(snapshot.opened_at, opened_at());
    // No access metadata touched, nothing created.
    assert_eq!(tree(&notes.root), before);
}

#[test]
fn load_captures_the_time_before_reading() {
    let notes = full_store();
    let before = Timestamp::now();
    let snapshot = BootSnapshot::load(&notes.store()).expect("snapshot");
    assert!(snapshot.opened_at >= before);
    assert!(snapshot.opened_at <= Timestamp::now());
}

#[test]
fn empty_store_is_a_blank_slate() {
    let notes = Notes::new();
    let (snapshot, text) = notes.boot(&ToolBindings::plain());
    assert!(!notes.root.exists(), "a boot never creates the root");
    assert!(snapshot.unavailable().is_empty());
    insta::assert_snapshot!(text);
}

#[test]
fn empty_homes_and_crumpled_notes_are_a_blank_slate() {
    let notes = Notes::new();
    for scope in Scope::ALL {
        fs::create_dir_all(notes.home(scope)).expect("home dir");
    }
    notes.raw(
        Scope::Human,
        "gone.md",
        &note_text(opened_at(), Some(opened_at()), "# Crumpled\n"),
    );
    notes.raw(
        Scope::Model,
        "MAP.md",
        &note_text(opened_at(), None, "\n  \n"),
    );
    let (_, text) = notes.boot(&ToolBindings::plain());
    assert!(
        text.ends_with("YOUR NOTES\n──────────\n\nNone yet. A blank slate is a fine place to start — just don't finish there."),
        "{text}"
    );
}

#[test]
fn one_unreadable_home_keeps_the_others() {
    let notes = full_store();
    // A file where the project home's directory should be.
    let project = notes.home(Scope::Project);
    fs::remove_dir_all(&project).expect("remove project home");
    fs::write(&project, "not a directory").expect("file in place of the home");
    let (snapshot, text) = notes.boot(&ToolBindings::plain());
    assert_eq!(snapshot.unavailable(), [Scope::Project]);
    assert_eq!(snapshot.unavailable_labels(), ["@project"]);
    insta::assert_snapshot!(text);
}

#[test]
fn unreadable_homes_use_the_list_binding() {
    let notes = Notes::new();
    // The agents namespace itself is a file: the agent home cannot be read.
    put(&notes.root.join("agents"), "not a directory");
    notes.note(Scope::Human, "style.md", 24.hours(), "# Plain words\n");
    let (snapshot, text) = notes.boot(&odd_bindings());
    assert_eq!(snapshot.unavailable(), [Scope::Agent]);
    let shelves = &text[text.find("YOUR NOTES").expect("shelves")..];
    assert_eq!(
        shelves,
        "YOUR NOTES
──────────

YOU · @self → @agents/alice
───────────────────────────
  This drawer wouldn't open — ask memo_list to try again.


THE HUMAN · @human
──────────────────
New pages
  - Plain words — @human/style.md · 1d ago"
    );
}

/// A MAP body of exactly `chars` code points: numbered lines of mixed
/// one-, two-, three- and four-byte characters.
fn long_map(chars: usize) -> String {
    let mut body = String::new();
    let mut line = 1;
    while body.chars().count() < chars {
        body.push_str(&format!(
            "- `@project/topic-{line}.md`: é ü 漢字 🦀 notes on topic {line}\n"
        ));
        line += 1;
    }
    body.chars().take(chars).collect()
}

#[test]
fn map_over_the_cap_is_cut_with_a_pointer() {
    let notes = Notes::new();
    notes.note(Scope::Project, "MAP.md", 24.hours(), &long_map(5_000));
    let (_, text) = notes.boot(&ToolBindings::plain());
    let map = &text[text.find("MAP — ").expect("map")..];
    insta::assert_snapshot!(map);
}

#[test]
fn map_cap_counts_code_points() {
    fn shown_chars(body: &str) -> (usize, bool) {
        let snapshot = BootSnapshot {
            opened_at: opened_at(),
            homes: vec![(
                Scope::Project,
                HomeShelf::Loaded {
                    map: Some(MapPage {
                        address: "@project/MAP.md".into(),
                        body: body.into(),
                    }),
                    fresh: vec![],
                },
            )],
        };
        let text = render_boot(&snapshot, &identity(None), &ToolBindings::plain());
        let block = &text[text.find("MAP — @project/MAP.md\n").expect("map")..];
        let cut_line = "\n  [MAP cut at 4096 chars — slim it down; full body at @project/MAP.md]";
        let cut = block.ends_with(cut_line);
        let body = block
            .trim_start_matches("MAP — @project/MAP.md\n")
            .trim_end_matches(cut_line);
        // Undo the two-space indent to count the body's own characters.
        let shown: String = body
            .lines()
            .map(|l| l.strip_prefix("  ").unwrap_or(l))
            .collect::<Vec<_>>()
            .join("\n");
        (shown.chars().count(), cut)
    }
    // What the boot should show of `body`: at most 4096 code points, without
    // trailing blank space.
    fn expect(body: &str) -> (usize, bool) {
        let shown: String = body.chars().take(4_096).collect();
        (
            shown.trim_end().chars().count(),
            body.chars().count() > 4_096,
        )
    }
    let astral = "🦀".repeat(4_096);
    assert_eq!(shown_chars(&astral), (4_096, false));
    assert_eq!(shown_chars(&format!("{astral}🦀")), (4_096, true));
    for chars in [4_095, 4_096, 4_097, 5_000] {
        let body = long_map(chars);
        assert_eq!(shown_chars(&body), expect(&body), "{chars} chars");
    }
}

#[test]
fn unicode_titles() {
    let notes = Notes::new();
    notes.note(
        Scope::Session,
        "日本語/メモ.md",
        10.minutes(),
        "# 漢字かな交じり文のとても長いタイトルはここで切られるべきです、本当に長いので念のため\n",
    );
    notes.note(
        Scope::Session,
        "emoji.md",
        2.hours(),
        "\n\n🦀🦀🦀 crabs all the way down: 🦀🦀🦀🦀🦀🦀🦀🦀🦀🦀🦀🦀🦀🦀🦀\n",
    );
    notes.note(
        Scope::Session,
        "accents.md",
        72.hours(),
        "## Ünïcödé façade — naïve café résumé\n",
    );
    let (_, text) = notes.boot(&ToolBindings::plain());
    let shelves = &text[text.find("YOUR NOTES").expect("shelves")..];
    insta::assert_snapshot!(shelves);
}

proptest! {
    #[test]
    fn titles_are_one_line_of_at_most_41_code_points(body in "(?s).{0,300}") {
        let title = page_title(&body);
        prop_assert!(title.chars().count() <= 41);
        prop_assert!(!title.contains('\n'));
        prop_assert!(title.chars().count() <= 40 || title.ends_with('…'));
    }

    #[test]
    fn any_map_body_is_cut_exactly_when_over_the_cap(
        line in " {0,3}[^\r\n]{0,80}",
        repeat in 0usize..120,
    ) {
        let body = format!("{line}\n").repeat(repeat);
        let snapshot = BootSnapshot {
            opened_at: opened_at(),
            homes: vec![(
                Scope::Project,
                HomeShelf::Loaded {
                    map: Some(MapPage { address: "@project/MAP.md".into(), body: body.clone() }),
                    fresh: vec![],
                },
            )],
        };
        let text = render_boot(&snapshot, &identity(None), &ToolBindings::plain());
        let cut = text.ends_with("[MAP cut at 4096 chars — slim it down; full body at @project/MAP.md]");
        // The renderer drops blank lines before and blank space after the body.
        let kept = body.trim_start_matches(['\n', '\r']).trim_end();
        prop_assert_eq!(cut, kept.chars().count() > 4_096);
    }
}

/// The snapshot as it was first built: each home listed whole (bodies and
/// all) and its shelf taken from the full rows.
fn reference_snapshot(store: &NoteStore) -> BootSnapshot {
    let homes = Scope::ALL
        .into_iter()
        .map(|scope| {
            let listed = store
                .list(&ListQuery {
                    scope: Some(scope),
                    ..ListQuery::default()
                })
                .expect("list");
            let shelf = if listed.homes_unavailable.is_empty() {
                HomeShelf::from_rows(listed.rows)
            } else {
                HomeShelf::Unavailable
            };
            (scope, shelf)
        })
        .collect();
    BootSnapshot {
        opened_at: opened_at(),
        homes,
    }
}

/// The kinds of file the generated store mixes: every way the frontmatter
/// can sit relative to the 4 KiB head the fast listing reads first.
fn generated_note(kind: u64, updated: Timestamp, crumpled: bool, i: u64) -> Vec<u8> {
    let crumpled = crumpled.then_some(updated);
    let body = format!("# Page {i}\n\nline {i}\n");
    match kind {
        // Plain notes, some long enough to exceed the head.
        0 => note_text(updated, crumpled, &body).into_bytes(),
        1 => note_text(updated, crumpled, &format!("{body}{}", "x".repeat(9_000))).into_bytes(),
        // CRLF and a BOM.
        2 => format!("\u{feff}{}", note_text(updated, crumpled, &body))
            .replace('\n', "\r\n")
            .into_bytes(),
        // A frontmatter block longer than the head.
        3 => {
            let extras = format!("note: \"{}\"\n", "y".repeat(5_000));
            note_text(updated, crumpled, &body)
                .replacen("origin: self\n", &format!("origin: self\n{extras}"), 1)
                .into_bytes()
        }
        // No frontmatter: every time defaults to now, so the note sorts
        // first; a first line longer than the head too.
        4 => body.into_bytes(),
        5 => format!("{}\n{body}", "z".repeat(5_000)).into_bytes(),
        // An unclosed block, short and long: all body.
        6 => format!("---\nupdatedAt: {updated}\n\n{body}").into_bytes(),
        7 => format!("---\nupdatedAt: {updated}\n{}", "w\n".repeat(4_000)).into_bytes(),
        // Invalid UTF-8 in the body and a fence cut by the head.
        8 => {
            let mut bytes = note_text(updated, crumpled, "# Bytes \u{e9}\n").into_bytes();
            bytes.extend_from_slice(&[0xff, 0xfe, b'\n']);
            bytes
        }
        _ => {
            let pad = 4096 - "---\nnote: ".len() - 2;
            format!(
                "---\nnote: {}\nupdatedAt: {updated}\n---\n\n{body}",
                "p".repeat(pad)
            )
            .into_bytes()
        }
    }
}

/// Writes `count` generated notes of the given kinds into every home.
fn generate(notes: &Notes, kinds: &[u64], count: u64, seed: u64) {
    let mut state = seed;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for scope in Scope::ALL {
        for i in 0..count {
            let roll = next();
            // Few distinct times, so ties by address are exercised.
            let updated = opened_at() - ((roll % 50) as i64).hours();
            let crumpled = roll % 7 == 0;
            let path = match roll % 5 {
                0 => format!("n{seed}-{i}.md"),
                1 => format!("deep/er/n{seed}-{i}.md"),
                2 => format!("sub-{}/MAP.md", i % 3),
                _ => format!("t{}/n{seed}-{i}.md", i % 4),
            };
            let kind = kinds[((roll >> 8) % kinds.len() as u64) as usize];
            put(
                &notes.home(scope).join(path),
                generated_note(kind, updated, crumpled, i),
            );
        }
    }
}

/// Fresh-page times at or after `since` (notes without a readable
/// `updatedAt` default to the listing's own "now") as one marker, so two
/// loads at different instants compare.
fn without_now(mut snapshot: BootSnapshot, since: Timestamp) -> BootSnapshot {
    for (_, shelf) in &mut snapshot.homes {
        if let HomeShelf::Loaded { fresh, .. } = shelf {
            for page in fresh.iter_mut().filter(|page| page.updated_at >= since) {
                page.updated_at = since;
            }
        }
    }
    snapshot
}

#[test]
fn the_header_snapshot_equals_the_full_listing_snapshot() {
    let notes = Notes::new();
    // Notes with their own times first, so ordering decides the shelves.
    generate(&notes, &[0, 1, 2, 3, 8, 9], 150, 0x9e37_79b9_7f4a_7c15);
    for (home_index, scope) in Scope::ALL.into_iter().enumerate() {
        // Root MAPs: plain, crumpled, over the head, CRLF with a BOM, none.
        let map = match home_index {
            0 => Some(note_text(opened_at(), None, "- n1.md: one\n")),
            1 => Some(note_text(opened_at(), Some(opened_at()), "- gone\n")),
            2 => Some(note_text(opened_at(), None, &"- entry\n".repeat(1_000))),
            3 => Some(
                format!("\u{feff}{}", note_text(opened_at(), None, "map")).replace('\n', "\r\n"),
            ),
            _ => None,
        };
        if let Some(map) = map {
            notes.raw(scope, "MAP.md", &map);
        }
    }
    let store = notes.store();
    let before = tree(&notes.root);
    let fast = BootSnapshot::load_at(&store, opened_at()).expect("snapshot");
    assert_eq!(fast, reference_snapshot(&store));
    assert_eq!(tree(&notes.root), before, "no access metadata touched");
    // The generated store really fills every shelf part.
    for (scope, shelf) in &fast.homes {
        let HomeShelf::Loaded { map, fresh } = shelf else {
            panic!("{scope:?} unavailable");
        };
        assert_eq!(fresh.len(), 3, "{scope:?}");
        let expect_map = matches!(scope, Scope::Session | Scope::Human | Scope::Agent);
        assert_eq!(map.is_some(), expect_map, "{scope:?}");
    }

    // Then notes whose metadata defaults (no block, an unclosed one, a
    // first line past the head): they sort first, at "now".
    generate(&notes, &[4, 5, 6, 7], 12, 0x2545_f491_4f6c_dd1d);
    let since = Timestamp::now();
    let fast = without_now(
        BootSnapshot::load_at(&store, opened_at()).expect("snapshot"),
        since,
    );
    assert_eq!(fast, without_now(reference_snapshot(&store), since));

    // And a broken home stays isolated in both.
    let project = notes.home(Scope::Project);
    fs::remove_dir_all(&project).expect("remove project home");
    fs::write(&project, "not a directory").expect("file in place of the home");
    let fast = without_now(
        BootSnapshot::load_at(&store, opened_at()).expect("snapshot"),
        since,
    );
    assert_eq!(fast.unavailable(), [Scope::Project]);
    assert_eq!(fast, without_now(reference_snapshot(&store), since));
}

/// A store at every cap: five MAPs of 4,096 characters and more, three fresh
/// pages per shelf with long titles and long addresses.
fn crowded_snapshot(map_line: &str, address_len: usize) -> BootSnapshot {
    let homes = Scope::ALL
        .iter()
        .map(|&scope| {
            let prefix = match scope {
                Scope::Session => "",
                Scope::Project => "@project/",
                Scope::Human => "@human/",
                Scope::Agent => "@self/",
                Scope::Model => "@model/",
            };
            let address = |n: usize| format!("{prefix}{}{n}.md", "p".repeat(address_len));
            (
                scope,
                HomeShelf::Loaded {
                    map: Some(MapPage {
                        address: format!("{prefix}MAP.md"),
                        body: format!("{map_line}\n").repeat(4_200 / (map_line.len() + 1) + 1),
                    }),
                    fresh: (0..3)
                        .map(|n| FreshPage {
                            address: address(n),
                            title: format!("{}…", "T".repeat(40)),
                            updated_at: opened_at(),
                        })
                        .collect(),
                },
            )
        })
        .collect();
    BootSnapshot {
        opened_at: opened_at(),
        homes,
    }
}

#[test]
fn a_crowded_store_boots_within_the_bound_with_pointers() {
    let snapshot = crowded_snapshot(
        "- `@project/decisions/db.md`: why Postgres, and what it cost",
        480,
    );
    let text = render_boot(
        &snapshot,
        &identity(Some("pcw:0197a1b2:0")),
        &ToolBindings::plain(),
    );
    assert!(
        text.chars().count() <= DEFAULT_BOOT_MAX_CHARS,
        "{}",
        text.chars().count()
    );
    assert_eq!(
        text.matches("[cut to fit the boot's 10000-character bound; the rest: notes_list on ")
            .count(),
        5,
        "every shelf says where the rest is"
    );
    for home in [
        "this session's notes",
        "@project/",
        "@self/",
        "@model/",
        "@human/",
    ] {
        assert!(
            text.contains(&format!(
                "the rest: notes_list on {home}, then read what it names]"
            )),
            "{home}"
        );
    }
    // The identity and protocol blocks are never cut.
    assert!(text.contains("</context_window>\n\n<context_window_protocol>"));
    assert!(text.contains("</context_window_protocol>\n\nYOUR NOTES"));
    let sections = BootSections::new(
        &snapshot,
        &identity(Some("pcw:0197a1b2:0")),
        &ToolBindings::plain(),
        DEFAULT_BOOT_MAX_CHARS,
    );
    assert_eq!(sections.join(), text);
    let sizes = sections.sizes();
    let names: Vec<&str> = sizes.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(
        names,
        [
            "identity",
            "protocol",
            "notes heading",
            "shelf session",
            "shelf project",
            "shelf agent",
            "shelf model",
            "shelf human"
        ]
    );
    let shelf_sizes: Vec<usize> = sizes[3..].iter().map(|(_, size)| *size).collect();
    assert!(
        shelf_sizes.iter().max().expect("shelves") - shelf_sizes.iter().min().expect("shelves")
            < 200,
        "equal shelves share the room equally: {shelf_sizes:?}"
    );
}

#[test]
fn a_bound_is_configurable_and_has_a_floor() {
    let snapshot = crowded_snapshot("- a line of a MAP", 40);
    let ident = identity(None);
    let small = render_boot_within(&snapshot, &ident, &ToolBindings::plain(), 6_000);
    assert!(small.chars().count() <= 6_000);
    assert!(small.contains("the boot's 6000-character bound"));
    let floor = render_boot_within(&snapshot, &ident, &ToolBindings::plain(), 10);
    assert!(floor.chars().count() <= MIN_BOOT_MAX_CHARS);
    assert!(floor.contains(&format!("the boot's {MIN_BOOT_MAX_CHARS}-character bound")));
    let large = render_boot_within(&snapshot, &ident, &ToolBindings::plain(), 100_000);
    assert!(!large.contains("[cut to fit"), "a large bound cuts nothing");
}

#[test]
fn a_cut_boot_snapshot() {
    let snapshot = crowded_snapshot("- `@project/deploy.md`: how we ship", 12);
    let text = render_boot_within(&snapshot, &identity(None), &ToolBindings::plain(), 5_000);
    insta::assert_snapshot!(text);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// For any store content, the boot fits its bound, and it is cut exactly
    /// when the whole boot would not fit.
    #[test]
    fn any_boot_fits_its_bound(
        map_line in "[^\r\n]{0,300}",
        address_len in 1usize..500,
        bound in prop_oneof![Just(DEFAULT_BOOT_MAX_CHARS), 4_000usize..20_000],
        shown in proptest::collection::vec(any::<bool>(), 5),
    ) {
        let mut snapshot = crowded_snapshot(&map_line, address_len);
        for ((_, shelf), keep) in snapshot.homes.iter_mut().zip(&shown) {
            if !keep {
                *shelf = HomeShelf::Loaded { map: None, fresh: vec![] };
            }
        }
        let ident = identity(Some("pcw:0197a1b2:0"));
        let text = render_boot_within(&snapshot, &ident, &ToolBindings::plain(), bound);
        prop_assert!(text.chars().count() <= bound, "{} > {bound}", text.chars().count());
        let whole = render_boot_within(&snapshot, &ident, &ToolBindings::plain(), usize::MAX);
        prop_assert_eq!(text.contains("[cut to fit"), whole.chars().count() > bound);
    }
}

// Kept shelves (`ShelfIndex`): a boot served from the index equals a boot
// that lists, through every change a rename makes.

/// The start of the current millisecond: note times are whole
/// milliseconds, so a time read "now" is never before it.
fn this_millisecond() -> Timestamp {
    Timestamp::from_millisecond(Timestamp::now().as_millisecond()).expect("in range")
}

/// The homes of `snapshot`, with times at or after `since` as one marker.
fn shelves(snapshot: BootSnapshot, since: Timestamp) -> Vec<(Scope, HomeShelf)> {
    without_now(snapshot, since).homes
}

/// The homes a boot that lists every note shows now.
fn listed_shelves(store: &NoteStore, since: Timestamp) -> Vec<(Scope, HomeShelf)> {
    shelves(BootSnapshot::load(store).expect("snapshot"), since)
}

/// The session's shelf of `snapshot` is loaded and empty: no map, no note.
fn assert_empty_session_shelf(snapshot: &BootSnapshot) {
    assert_eq!(
        snapshot.home(Scope::Session),
        Some(&HomeShelf::Loaded {
            map: None,
            fresh: Vec::new()
        })
    );
}

/// Writes `text` as notesoup does: a file beside the note renamed over it.
fn replace(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().expect("parent")).expect("dirs");
    let temp = path.with_extension("md.tmp");
    fs::write(&temp, text).expect("temp");
    fs::rename(&temp, path).expect("rename");
}

/// A change made to a store, for a test to follow.
type Change<'a> = Box<dyn Fn() + 'a>;

/// The first fresh page of `scope`'s shelf.
fn first_fresh(snapshot: &[(Scope, HomeShelf)], scope: Scope) -> String {
    let Some((_, HomeShelf::Loaded { fresh, .. })) = snapshot.iter().find(|(s, _)| *s == scope)
    else {
        panic!("{scope:?} has no shelf");
    };
    fresh[0].address.clone()
}

/// A store with MAPs, dated pages in nested folders and two undated pages
/// (they sort as "now").
fn kept_store() -> Notes {
    let notes = Notes::new();
    generate(&notes, &[0, 1, 2, 3, 8, 9], 40, 0x51_7cc1_b727_220a);
    for scope in Scope::ALL {
        notes.raw(scope, "MAP.md", &note_text(opened_at(), None, "- map\n"));
    }
    notes.raw(Scope::Human, "undated-a.md", "# Undated A\n");
    notes.raw(Scope::Human, "undated-b.md", "# Undated B\n");
    notes
}

/// An index with no settle time, filled by one boot of `store`.
fn kept_index(store: &NoteStore) -> ShelfIndex {
    let mut index = ShelfIndex::with_settle(std::time::Duration::ZERO);
    BootSnapshot::load_indexed(store, &mut index).expect("snapshot");
    index
}

/// A home holding only its MAP keeps the MAP on its served shelf, and one
/// holding only pages serves none.
#[test]
fn kept_shelves_keep_a_map_alone_and_no_map_where_there_is_none() {
    let notes = Notes::new();
    notes.raw(
        Scope::Human,
        "MAP.md",
        &note_text(opened_at(), None, "- map\n"),
    );
    notes.raw(
        Scope::Agent,
        "page.md",
        &note_text(opened_at(), None, "a page\n"),
    );
    let store = notes.store();
    let since = this_millisecond();
    let mut index = kept_index(&store);
    let served = BootSnapshot::served(&store, &mut index).expect("every home kept");
    let served = shelves(served, since);
    assert_eq!(served, listed_shelves(&store, since));
    let map_of = |scope| match served.iter().find(|(s, _)| *s == scope) {
        Some((_, HomeShelf::Loaded { map, .. })) => map.is_some(),
        other => panic!("{scope:?}: {other:?}"),
    };
    assert!(map_of(Scope::Human), "the MAP alone is shown");
    assert!(!map_of(Scope::Agent), "no MAP");
}

#[test]
fn kept_shelves_equal_listed_shelves_through_renames_and_in_place_crumpling() {
    let notes = kept_store();
    let store = notes.store();
    let since = this_millisecond();
    let mut index = ShelfIndex::with_settle(std::time::Duration::ZERO);
    assert!(
        BootSnapshot::served(&store, &mut index).is_none(),
        "nothing kept yet"
    );
    let first = BootSnapshot::load_indexed(&store, &mut index).expect("snapshot");
    assert_eq!(shelves(first, since), listed_shelves(&store, since));
    assert_eq!(index.len(), Scope::ALL.len());
    let before = tree(&notes.root);
    let served = BootSnapshot::served(&store, &mut index).expect("every home kept");
    assert_eq!(shelves(served, since), listed_shelves(&store, since));
    assert_eq!(tree(&notes.root), before, "a served boot changes nothing");
    // The undated pages sort first at every boot's time.
    let listed = listed_shelves(&store, since);
    assert_eq!(first_fresh(&listed, Scope::Human), "@human/undated-a.md");

    let project = notes.home(Scope::Project);
    // Each change, and whether the home is patched (its folders as they
    // were) or listed again (a folder added).
    let changes: [(&str, bool, Change<'_>); 4] = [
        (
            "a newer note in a nested folder",
            true,
            Box::new(|| {
                replace(
                    &project.join("deep/er/newest.md"),
                    &note_text(opened_at() + 1.hour(), None, "# Newest\n"),
                );
            }),
        ),
        (
            "the freshest page removed",
            true,
            Box::new(|| {
                let shown = first_fresh(&listed_shelves(&store, since), Scope::Project);
                let rel = shown.trim_start_matches("@project/");
                fs::remove_file(project.join(rel)).expect("remove");
            }),
        ),
        (
            "a new folder",
            false,
            Box::new(|| {
                replace(
                    &notes.home(Scope::Agent).join("fresh/dir/page.md"),
                    &note_text(opened_at() + 2.hours(), None, "# In a new folder\n"),
                );
            }),
        ),
        (
            "a note crumpled through a rename",
            true,
            Box::new(|| {
                let shown = first_fresh(&listed_shelves(&store, since), Scope::Model);
                let rel = shown.trim_start_matches("@model/");
                replace(
                    &notes.home(Scope::Model).join(rel),
                    &note_text(opened_at(), Some(opened_at()), "# Crumpled\n"),
                );
            }),
        ),
    ];
    for (what, patched, change) in changes {
        change();
        match BootSnapshot::served(&store, &mut index) {
            Some(served) if patched => {
                assert_eq!(
                    shelves(served, since),
                    listed_shelves(&store, since),
                    "{what}"
                );
            }
            served => {
                assert!(!patched && served.is_none(), "{what}: a home listed again");
                let indexed = BootSnapshot::load_indexed(&store, &mut index).expect("snapshot");
                assert_eq!(
                    shelves(indexed, since),
                    listed_shelves(&store, since),
                    "{what}"
                );
            }
        }
        let served = BootSnapshot::served(&store, &mut index).expect("kept again");
        assert_eq!(
            shelves(served, since),
            listed_shelves(&store, since),
            "{what}"
        );
    }

    // A shown page crumpled in place (no rename): it is read when served,
    // and the next page takes its place.
    // (Session addresses are bare paths.)
    let shown = first_fresh(&listed_shelves(&store, since), Scope::Session);
    let path = notes.home(Scope::Session).join(&shown);
    let mut bytes = fs::read(&path).expect("shown page");
    let crumpled = format!("crumpledAt: {}\n", opened_at());
    let after_fence = bytes
        .windows(4)
        .position(|w| w == b"---\n")
        .expect("a frontmatter block")
        + 4;
    bytes.splice(after_fence..after_fence, crumpled.bytes());
    fs::write(&path, bytes).expect("in place");
    let served = BootSnapshot::served(&store, &mut index).expect("still kept");
    let listed = listed_shelves(&store, since);
    assert_ne!(first_fresh(&listed, Scope::Session), shown);
    assert_eq!(shelves(served, since), listed);

    // A shown page dated back in place: placed by the time it holds now, so
    // the next page moves up.
    let shown = first_fresh(&listed_shelves(&store, since), Scope::Project);
    let path = project.join(shown.trim_start_matches("@project/"));
    fs::write(
        &path,
        note_text(opened_at() - 9_000.hours(), None, "# Dated back\n"),
    )
    .expect("in place");
    let served = BootSnapshot::served(&store, &mut index).expect("still kept");
    let listed = listed_shelves(&store, since);
    assert_ne!(first_fresh(&listed, Scope::Project), shown);
    assert_eq!(shelves(served, since), listed);
}

/// An in-place edit off the shelf is not seen while its folder is
/// unchanged (served, or patched from another folder), and is seen at the
/// next change in its folder (patched: each note file's stamp is taken) or
/// once the home is listed again (at its first change past `PATCH_FOR`,
/// here zero).
#[test]
fn an_in_place_edit_off_the_shelf_shows_at_the_next_change_in_its_folder() {
    let notes = kept_store();
    let agent = notes.home(Scope::Agent);
    replace(
        &agent.join("side/first.md"),
        &note_text(opened_at() - 990.hours(), None, "# Side\n"),
    );
    let store = notes.store();
    let since = this_millisecond();
    let mut patching = kept_index(&store);
    let mut index = kept_index(&store).patching_for(std::time::Duration::ZERO);
    // Another program dates a page off the shelf forward, in place: the
    // stamps cannot see it (the documented limit).
    let off_shelf = agent.join("moved-up.md");
    replace(
        &off_shelf,
        &note_text(opened_at() - 900.hours(), None, "# Old\n"),
    );
    BootSnapshot::load_indexed(&store, &mut index).expect("snapshot");
    BootSnapshot::load_indexed(&store, &mut patching).expect("snapshot");
    fs::write(
        &off_shelf,
        note_text(opened_at() + 5.hours(), None, "# Moved up\n"),
    )
    .expect("in place");
    let served = shelves(
        BootSnapshot::served(&store, &mut index).expect("kept"),
        since,
    );
    assert_ne!(first_fresh(&served, Scope::Agent), "@self/moved-up.md");
    // A note written in another folder: patched, the edit is still unseen.
    replace(
        &agent.join("side/second.md"),
        &note_text(opened_at() - 800.hours(), None, "# Another\n"),
    );
    let patched = shelves(
        BootSnapshot::served(&store, &mut patching).expect("patched"),
        since,
    );
    assert_ne!(first_fresh(&patched, Scope::Agent), "@self/moved-up.md");
    // Past `PATCH_FOR`, the home is listed again, and the edit seen.
    assert!(
        BootSnapshot::served(&store, &mut index).is_none(),
        "not patched past PATCH_FOR"
    );
    let indexed = shelves(
        BootSnapshot::load_indexed(&store, &mut index).expect("snapshot"),
        since,
    );
    assert_eq!(first_fresh(&indexed, Scope::Agent), "@self/moved-up.md");
    assert_eq!(indexed, listed_shelves(&store, since));
    // A note written beside it: patched, the edit is seen.
    replace(
        &agent.join("beside.md"),
        &note_text(opened_at() - 800.hours(), None, "# Beside\n"),
    );
    let patched = shelves(
        BootSnapshot::served(&store, &mut patching).expect("patched"),
        since,
    );
    assert_eq!(first_fresh(&patched, Scope::Agent), "@self/moved-up.md");
    assert_eq!(patched, listed_shelves(&store, since));
}

/// A served shelf reads the kept pages it shows and none below them: the
/// first page under the shelf, dated forward in place (which stamps
/// cannot see), stays where it was listed.
#[test]
fn a_served_shelf_reads_no_page_below_the_ones_it_shows() {
    let notes = Notes::new();
    let below = crate::boot::shelf::SHELF_FRESH_LIMIT;
    notes.pages(Scope::Model, below + 3);
    let store = notes.store();
    let since = this_millisecond();
    let mut index = kept_index(&store);
    let before = listed_shelves(&store, since);
    fs::write(
        notes.home(Scope::Model).join(format!("p{below:02}.md")),
        note_text(opened_at() + 5.hours(), None, "# Moved up\n"),
    )
    .expect("in place");
    let listed = listed_shelves(&store, since);
    assert_ne!(listed, before, "a listing sees the page moved up");
    let served = shelves(
        BootSnapshot::served(&store, &mut index).expect("kept"),
        since,
    );
    assert_eq!(served, before);
}

#[test]
fn homes_changed_within_the_settle_time_or_in_an_unnamed_zone_are_not_kept() {
    let notes = kept_store();
    let since = this_millisecond();
    // Just written: every home's folders changed moments ago.
    let mut index = ShelfIndex::new();
    let snapshot = BootSnapshot::load_indexed(&notes.store(), &mut index).expect("snapshot");
    assert!(index.is_empty());
    assert_eq!(
        shelves(snapshot, since),
        listed_shelves(&notes.store(), since)
    );
    // A fixed offset has no zone name to compare: listed every time.
    let fixed = notes
        .store()
        .with_time_zone(TimeZone::fixed(jiff::tz::Offset::constant(9)));
    let mut index = kept_index(&fixed);
    assert!(index.is_empty());
    // Kept in UTC, not served in another zone.
    BootSnapshot::load_indexed(&notes.store(), &mut index).expect("snapshot");
    assert_eq!(index.len(), Scope::ALL.len());
    assert!(BootSnapshot::served(&fixed, &mut index).is_none());
    assert!(BootSnapshot::served(&notes.store(), &mut index).is_some());
}

#[test]
fn a_saved_index_serves_the_next_boot_and_a_damaged_one_is_empty() {
    let notes = kept_store();
    let store = notes.store();
    let since = this_millisecond();
    let file = notes.root.join("../kept/shelves.json");
    let mut index = kept_index(&store);
    index.save(&file).expect("saved");
    let mut loaded = ShelfIndex::load(&file);
    assert_eq!(loaded.len(), Scope::ALL.len());
    let served = BootSnapshot::served(&store, &mut loaded).expect("served from the file");
    assert_eq!(shelves(served, since), listed_shelves(&store, since));
    // The files' ids are saved too: a change is patched from the file.
    let saved = fs::read(&file).expect("saved");
    replace(
        &notes.home(Scope::Human).join("newest.md"),
        &note_text(opened_at() + 1.hour(), None, "# Newest\n"),
    );
    let patched = BootSnapshot::served(&store, &mut ShelfIndex::load(&file)).expect("patched");
    assert_eq!(shelves(patched, since), listed_shelves(&store, since));
    // Saved again only when it changed.
    fs::write(&file, "{}").expect("damage");
    loaded.save(&file).expect("nothing to save");
    assert_eq!(fs::read_to_string(&file).expect("file"), "{}");
    let older = format!("{}\n", serde_json::json!({"version": 1, "homes": []}));
    let line = saved
        .iter()
        .position(|&byte| byte == b'\n')
        .expect("a line");
    let mut longer = saved.clone();
    longer.extend_from_slice(&[0; 8]);
    // A folder said to hold more ids than a kept home can: refused before
    // room is made for them.
    let text = String::from_utf8_lossy(&saved[..line]).into_owned();
    let at = text.find("\"count\":").expect("a folder's count") + "\"count\":".len();
    let digits = text[at..]
        .find(|c: char| !c.is_ascii_digit())
        .expect("digits");
    let first: usize = text[at..at + digits].parse().expect("a count");
    let too_many = ShelfIndex::MAX_PATCH_FILES + 1;
    let mut oversized = format!("{}{too_many}{}\n", &text[..at], &text[at + digits..]).into_bytes();
    // Ids for them all (sorted), then the other folders' as saved: only the
    // bound refuses it.
    for id in 1..=u64::try_from(too_many).expect("few") {
        oversized.extend_from_slice(&id.to_le_bytes());
    }
    oversized.extend_from_slice(&saved[line + 1 + first * 8..]);
    for damaged in [
        b"{}".to_vec(),
        b"not json".to_vec(),
        older.into_bytes(),
        // Its JSON alone, its ids cut by a byte, or one id more.
        saved[..=line].to_vec(),
        saved[..saved.len() - 1].to_vec(),
        longer,
        oversized,
    ] {
        fs::write(&file, damaged).expect("damage");
        assert!(ShelfIndex::load(&file).is_empty());
    }
    fs::write(&file, &saved).expect("saved again");
    assert_eq!(ShelfIndex::load(&file).len(), Scope::ALL.len());
    assert!(ShelfIndex::load(&notes.root.join("missing.json")).is_empty());
}

#[test]
fn a_home_swapped_for_a_link_is_listed_and_a_missing_home_is_served_empty() {
    let notes = kept_store();
    let store = notes.store();
    let since = this_millisecond();
    let mut index = kept_index(&store);
    // The same notes, reached through a link: a listing refuses the home.
    let human = notes.home(Scope::Human);
    let elsewhere = notes.root.join("../human-moved");
    fs::rename(&human, &elsewhere).expect("move");
    std::os::unix::fs::symlink(&elsewhere, &human).expect("link");
    assert!(BootSnapshot::served(&store, &mut index).is_none());
    let indexed = BootSnapshot::load_indexed(&store, &mut index).expect("snapshot");
    assert_eq!(indexed.unavailable(), [Scope::Human]);
    assert_eq!(shelves(indexed, since), listed_shelves(&store, since));

    // A session with no home yet: an empty shelf, nothing listed or kept.
    let identity =
        NotesIdentity::new(&notes.root, "new-session", PROJECT, AGENT, MODEL).expect("identity");
    let other = NoteStore::new(identity).with_time_zone(TimeZone::UTC);
    fs::remove_file(&human).expect("unlink");
    fs::rename(&elsewhere, &human).expect("move back");
    let mut index = kept_index(&other);
    let served = BootSnapshot::served(&other, &mut index).expect("served");
    assert_empty_session_shelf(&served);
    assert_eq!(shelves(served, since), listed_shelves(&other, since));
}

#[test]
fn the_index_keeps_at_most_its_bound_of_homes() {
    let notes = kept_store();
    let mut index = ShelfIndex::with_settle(std::time::Duration::ZERO);
    for session in 0..ShelfIndex::MAX_HOMES + 8 {
        let identity =
            NotesIdentity::new(&notes.root, &format!("s-{session}"), PROJECT, AGENT, MODEL)
                .expect("identity");
        fs::create_dir_all(notes.root.join("pi/session").join(format!("s-{session}")))
            .expect("session home");
        let store = NoteStore::new(identity).with_time_zone(TimeZone::UTC);
        BootSnapshot::load_indexed(&store, &mut index).expect("snapshot");
    }
    assert_eq!(index.len(), ShelfIndex::MAX_HOMES);
}

#[test]
fn a_served_shelf_past_its_kept_pages_is_listed_unless_the_home_was_kept_whole() {
    let notes = Notes::new();
    // The agent home: two pages, kept whole. The model home: more pages
    // than are kept.
    notes.note(Scope::Agent, "one.md", 1.hour(), "# One\n");
    notes.note(Scope::Agent, "two.md", 2.hours(), "# Two\n");
    notes.pages(Scope::Model, ShelfIndex::SPARE_PAGES + 8);
    let store = notes.store();
    let since = this_millisecond();
    let mut index = kept_index(&store);
    assert!(!index.is_empty());
    let crumple = |scope: Scope, name: &str, age: jiff::Span| {
        let text = note_text(opened_at() - age, Some(opened_at()), "# Crumpled\n");
        fs::write(notes.home(scope).join(name), text).expect("in place");
    };
    // Every kept page read, the home kept whole: served.
    crumple(Scope::Agent, "one.md", 1.hour());
    let served = BootSnapshot::served(&store, &mut index).expect("kept whole");
    assert_eq!(shelves(served, since), listed_shelves(&store, since));
    // All but one kept page crumpled in place: the shelf would reach past
    // what was kept, so the home is listed.
    for i in 0..ShelfIndex::SPARE_PAGES - 1 {
        crumple(Scope::Model, &format!("p{i:02}.md"), (i as i64 + 1).hours());
    }
    assert!(BootSnapshot::served(&store, &mut index).is_none());
    let indexed = BootSnapshot::load_indexed(&store, &mut index).expect("snapshot");
    assert_eq!(shelves(indexed, since), listed_shelves(&store, since));
}

#[test]
fn a_saved_index_is_read_up_to_its_bound() {
    let notes = kept_store();
    let store = notes.store();
    let file = notes.root.join("../kept/shelves.json");
    let mut index = kept_index(&store);
    index.save(&file).expect("saved");
    let saved = fs::read(&file).expect("saved");
    let bound = usize::try_from(ShelfIndex::MAX_SAVED_BYTES).expect("bound");
    // Padded in front (before its JSON) to the bound: read whole; one byte
    // past it: not read.
    let padded = |len: usize| [vec![b' '; len - saved.len()], saved.clone()].concat();
    fs::write(&file, padded(bound)).expect("pad");
    assert_eq!(ShelfIndex::load(&file).len(), Scope::ALL.len());
    fs::write(&file, padded(bound + 1)).expect("pad");
    assert!(ShelfIndex::load(&file).is_empty());
}

#[test]
fn undated_pages_overtake_pages_dated_just_ahead_once_that_time_passes() {
    let notes = Notes::new();
    // More pages dated just ahead of the listing than a shelf keeps spare,
    // then undated ones (they sort as each boot's time).
    let ahead = Timestamp::now() + 700.milliseconds();
    for i in 0..ShelfIndex::SPARE_PAGES + 4 {
        notes.raw(
            Scope::Human,
            &format!("ahead-{i:02}.md"),
            &note_text(ahead, None, "# Ahead\n"),
        );
    }
    for name in ["undated-a.md", "undated-b.md"] {
        notes.raw(Scope::Human, name, "# Undated\n");
    }
    let store = notes.store();
    let mut index = kept_index(&store);
    std::thread::sleep(std::time::Duration::from_millis(800));
    let since = this_millisecond();
    let served = shelves(
        BootSnapshot::served(&store, &mut index).expect("kept"),
        since,
    );
    let listed = listed_shelves(&store, since);
    assert_eq!(first_fresh(&listed, Scope::Human), "@human/undated-a.md");
    assert_eq!(served, listed);
}

#[test]
fn a_home_with_more_current_pages_than_kept_pages_is_listed_at_every_boot() {
    let notes = Notes::new();
    for i in 0..ShelfIndex::MAX_PAGES {
        notes.raw(Scope::Agent, &format!("undated-{i:03}.md"), "# Undated\n");
    }
    let store = notes.store();
    let mut index = kept_index(&store);
    assert_eq!(index.len(), 1, "at the bound: kept");
    notes.raw(Scope::Agent, "undated-one-more.md", "# Undated\n");
    BootSnapshot::load_indexed(&store, &mut index).expect("snapshot");
    assert!(index.is_empty(), "past the bound: listed at every boot");
}

#[test]
fn a_home_no_longer_kept_is_dropped_from_the_saved_index() {
    let notes = kept_store();
    let file = notes.root.join("../kept/shelves.json");
    let mut index = kept_index(&notes.store());
    index.save(&file).expect("saved");
    // Listed in a zone without a name: nothing may be kept.
    let fixed = notes
        .store()
        .with_time_zone(TimeZone::fixed(jiff::tz::Offset::constant(9)));
    let mut loaded = ShelfIndex::load(&file);
    BootSnapshot::load_indexed(&fixed, &mut loaded).expect("snapshot");
    loaded.save(&file).expect("saved");
    assert!(ShelfIndex::load(&file).is_empty());
}

#[test]
fn an_identity_without_a_session_boots_through_the_index_with_an_empty_session_shelf() {
    let notes = kept_store();
    let identity =
        NotesIdentity::without_session(&notes.root, PROJECT, AGENT, MODEL).expect("identity");
    let store = NoteStore::new(identity).with_time_zone(TimeZone::UTC);
    let since = this_millisecond();
    let mut index = ShelfIndex::with_settle(std::time::Duration::ZERO);
    let indexed = BootSnapshot::load_indexed(&store, &mut index).expect("snapshot");
    assert_empty_session_shelf(&indexed);
    assert_eq!(shelves(indexed, since), listed_shelves(&store, since));
    assert_eq!(index.len(), Scope::ALL.len() - 1);
    let served = BootSnapshot::served(&store, &mut index).expect("served");
    assert_eq!(shelves(served, since), listed_shelves(&store, since));
}

#[test]
fn a_home_below_a_file_is_unavailable_not_served_empty() {
    let notes = Notes::new();
    notes.note(Scope::Human, "kept.md", 1.hour(), "# Kept\n");
    // `agents` is a file: the agent home's path cannot be a directory.
    put(&notes.root.join("agents"), "not a directory");
    let store = notes.store();
    let mut index = ShelfIndex::with_settle(std::time::Duration::ZERO);
    assert!(BootSnapshot::served(&store, &mut index).is_none());
    let indexed = BootSnapshot::load_indexed(&store, &mut index).expect("snapshot");
    assert_eq!(indexed.unavailable(), [Scope::Agent]);
    assert!(BootSnapshot::served(&store, &mut index).is_none());
}

/// A home reached through a link is unavailable, as a listing finds it
/// (it never follows a link), whether its folder is there or not: the
/// index neither keeps it nor serves it (empty, when it is missing).
#[test]
fn a_home_through_a_link_is_unavailable_not_kept_or_served() {
    for home_there in [true, false] {
        let case = format!("home there: {home_there}");
        let notes = Notes::new();
        notes.note(Scope::Human, "kept.md", 1.hour(), "# Kept\n");
        // `agents` links to a real folder, which may hold the agent's home.
        let elsewhere = notes.root.join("../elsewhere");
        fs::create_dir_all(&elsewhere).expect("elsewhere");
        if home_there {
            put(
                &elsewhere.join(AGENT).join("page.md"),
                note_text(opened_at(), None, "a page\n"),
            );
        }
        std::os::unix::fs::symlink(&elsewhere, notes.root.join("agents")).expect("link");
        let store = notes.store();
        let mut index = ShelfIndex::with_settle(std::time::Duration::ZERO);
        let indexed = BootSnapshot::load_indexed(&store, &mut index).expect("snapshot");
        assert_eq!(indexed.unavailable(), [Scope::Agent], "{case}");
        // Only the human home: the others are missing (served empty as
        // they are) or, the agent's, unavailable.
        assert_eq!(index.len(), 1, "{case}");
        assert!(BootSnapshot::served(&store, &mut index).is_none(), "{case}");
    }
}

/// A boot exactly as long as its bound is shown whole; one character more
/// and it is cut (the joins between shelves counted as the join writes
/// them: two newlines before the first shelf, three before each other).
#[test]
fn a_boot_exactly_its_bound_long_is_not_cut() {
    let ident = identity(Some("pcw:0197a1b2:0"));
    for shelves in 1..=5 {
        let mut snapshot = crowded_snapshot("- [plan](plan.md): the plan", 40);
        for (_, shelf) in snapshot.homes.iter_mut().skip(shelves) {
            *shelf = HomeShelf::Loaded {
                map: None,
                fresh: vec![],
            };
        }
        let whole = render_boot_within(&snapshot, &ident, &ToolBindings::plain(), usize::MAX);
        let length = whole.chars().count();
        assert!(length > MIN_BOOT_MAX_CHARS, "{shelves} shelves: {length}");
        let exact = render_boot_within(&snapshot, &ident, &ToolBindings::plain(), length);
        assert_eq!(exact, whole, "{shelves} shelves, bound {length}");
        let short = render_boot_within(&snapshot, &ident, &ToolBindings::plain(), length - 1);
        assert!(
            short.contains("[cut to fit"),
            "{shelves} shelves, bound {}",
            length - 1
        );
        assert!(short.chars().count() < length, "{shelves} shelves");
    }
}

/// One change to a home's files, as another program or notesoup makes it.
#[derive(Debug, Clone)]
enum FileChange {
    /// A note written through a rename (new or over one there), updated
    /// `age` hours before [`opened_at`] (negative: after it), undated, or
    /// crumpled.
    Write {
        name: u8,
        folder: bool,
        age: i64,
        undated: bool,
        crumpled: bool,
    },
    /// A new note written in place (a new file, so a new inode).
    Create {
        name: u8,
        folder: bool,
        age: i64,
    },
    Remove {
        name: u8,
        folder: bool,
    },
    /// A note renamed within its folder.
    Rename {
        from: u8,
        to: u8,
        folder: bool,
    },
    /// A file that is not a note.
    Other {
        folder: bool,
    },
}

fn file_change() -> impl Strategy<Value = FileChange> {
    let name = 0u8..24;
    let age = -3i64..60;
    prop_oneof![
        4 => (name.clone(), any::<bool>(), age.clone(), any::<bool>(), any::<bool>()).prop_map(
            |(name, folder, age, undated, crumpled)| FileChange::Write {
                name,
                folder,
                age,
                undated: undated && name % 3 == 0,
                crumpled: crumpled && name % 2 == 0,
            }
        ),
        2 => (name.clone(), any::<bool>(), age).prop_map(|(name, folder, age)| FileChange::Create {
            name,
            folder,
            age,
        }),
        2 => (name.clone(), any::<bool>()).prop_map(|(name, folder)| FileChange::Remove { name, folder }),
        2 => (name.clone(), name, any::<bool>()).prop_map(|(from, to, folder)| FileChange::Rename {
            from,
            to,
            folder,
        }),
        1 => any::<bool>().prop_map(|folder| FileChange::Other { folder }),
    ]
}

impl FileChange {
    fn apply(&self, home: &Path) {
        let path = |name: u8, folder: bool| {
            let dir = if folder {
                home.join("t")
            } else {
                home.to_path_buf()
            };
            dir.join(format!("n{name:02}.md"))
        };
        match *self {
            FileChange::Write {
                name,
                folder,
                age,
                undated,
                crumpled,
            } => {
                let updated = opened_at() - age.hours();
                let text = if undated {
                    format!("# Undated {name}\n")
                } else {
                    note_text(
                        updated,
                        crumpled.then_some(updated),
                        &format!("# N {name}\n"),
                    )
                };
                replace(&path(name, folder), &text);
            }
            FileChange::Create { name, folder, age } => {
                let path = path(name, folder);
                if !path.exists() {
                    let text = note_text(opened_at() - age.hours(), None, "# Created\n");
                    fs::write(path, text).expect("create");
                }
            }
            FileChange::Remove { name, folder } => {
                let _ = fs::remove_file(path(name, folder));
            }
            FileChange::Rename { from, to, folder } => {
                let _ = fs::rename(path(from, folder), path(to, folder));
            }
            FileChange::Other { folder } => {
                let dir = if folder {
                    home.join("t")
                } else {
                    home.to_path_buf()
                };
                let other = dir.join("notes.txt");
                if fs::remove_file(&other).is_err() {
                    fs::write(other, "not a note").expect("other");
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Through any changes to a home's files (its folders as they were), a
    /// boot through the index is patched, never listed, unless the kept
    /// pages run out in a home not kept whole, and it equals a listing,
    /// whether each patch is kept (its folders settled) or not.
    #[test]
    fn a_patched_shelf_equals_a_listed_one(
        start in 0usize..48,
        changes in proptest::collection::vec(file_change(), 1..24),
        kept in any::<bool>(),
    ) {
        let notes = Notes::new();
        let home = notes.home(Scope::Project);
        fs::create_dir_all(home.join("t")).expect("folder");
        // Named as the changes name notes, so they change these too.
        for i in 0..start {
            let age = i64::try_from(i).expect("few") % 30;
            let folder = if i % 2 == 0 { "" } else { "t/" };
            notes.note(Scope::Project, &format!("{folder}n{:02}.md", i % 24), age.hours(), "# S\n");
        }
        notes.raw(Scope::Project, "MAP.md", &note_text(opened_at(), None, "- map\n"));
        let store = notes.store();
        let since = this_millisecond();
        let mut index = kept_index(&store);
        if !kept {
            // No patch is kept: each one starts from the listing.
            index = index.settling(std::time::Duration::from_secs(3_600));
        }
        let whole = fs::read_dir(&home).expect("home").count()
            + fs::read_dir(home.join("t")).expect("folder").count()
            - 2
            <= ShelfIndex::SPARE_PAGES;
        for change in &changes {
            change.apply(&home);
            let listed = listed_shelves(&store, since);
            match BootSnapshot::served(&store, &mut index) {
                Some(served) => prop_assert_eq!(shelves(served, since), listed, "{:?}", change),
                None => {
                    prop_assert!(!whole, "a home kept whole is patched: {:?}", change);
                    let indexed = BootSnapshot::load_indexed(&store, &mut index).expect("snapshot");
                    prop_assert_eq!(shelves(indexed, since), listed);
                }
            }
        }
    }
}

/// A patch keeps a new page only where it ranks among the kept ones: one
/// below them all could rank below a note the listing left out.
#[test]
fn a_patch_keeps_no_new_page_below_the_kept_ones() {
    let notes = Notes::new();
    let spare = ShelfIndex::SPARE_PAGES;
    // Pages p00, p01, … an hour apart: the first `spare` are kept.
    notes.pages(Scope::Project, spare + 4);
    let store = notes.store();
    let since = this_millisecond();
    let mut index = kept_index(&store);
    let home = notes.home(Scope::Project);
    // All but the last two kept pages removed, and two new pages below
    // the first page left out: the shelf is the two kept pages and the
    // first page left out.
    for i in 0..spare - 2 {
        fs::remove_file(home.join(format!("p{i:02}.md"))).expect("remove");
    }
    for (name, hours) in [("q1.md", spare + 2), ("q2.md", spare + 3)] {
        let hours = i64::try_from(hours).expect("few");
        let updated = opened_at() - hours.hours() - 30.minutes();
        replace(&home.join(name), &note_text(updated, None, "# Q\n"));
    }
    let listed = listed_shelves(&store, since);
    assert_eq!(
        first_fresh(&listed, Scope::Project),
        format!("@project/p{:02}.md", spare - 2)
    );
    if let Some(served) = BootSnapshot::served(&store, &mut index) {
        assert_eq!(shelves(served, since), listed);
    }
    let indexed = BootSnapshot::load_indexed(&store, &mut index).expect("snapshot");
    assert_eq!(shelves(indexed, since), listed);
}

/// A new page dated now (or later) is kept by a patch even below the kept
/// pages: dated later than every note left out, it rises above kept pages
/// dated in the near future once their time has passed.
#[test]
fn a_patch_keeps_a_new_page_dated_now_for_later_boots() {
    let notes = Notes::new();
    let soon = Timestamp::now() + 2.seconds();
    for name in ["f1.md", "f2.md", "f3.md", "f4.md"] {
        notes.raw(Scope::Project, name, &note_text(soon, None, "# Soon\n"));
    }
    notes.pages(Scope::Project, ShelfIndex::SPARE_PAGES + 4);
    let store = notes.store();
    let since = this_millisecond();
    let mut index = kept_index(&store);
    let home = notes.home(Scope::Project);
    // The kept pages left are the four dated soon; an undated page (dated
    // at each boot) comes.
    for i in 0..ShelfIndex::SPARE_PAGES {
        fs::remove_file(home.join(format!("p{i:02}.md"))).expect("remove");
    }
    replace(&home.join("undated.md"), "# Undated\n");
    let served = BootSnapshot::served(&store, &mut index).expect("patched");
    assert_eq!(shelves(served, since), listed_shelves(&store, since));
    std::thread::sleep(
        std::time::Duration::try_from(soon - Timestamp::now()).unwrap_or_default()
            + std::time::Duration::from_millis(50),
    );
    let listed = listed_shelves(&store, since);
    assert_eq!(first_fresh(&listed, Scope::Project), "@project/undated.md");
    let served = BootSnapshot::served(&store, &mut index).expect("kept");
    assert_eq!(shelves(served, since), listed);
}

/// A note changed on its own inode while it was renamed away and back (as
/// a file system that hands a freed inode out again can leave a note
/// written twice through a temporary file): a patch reads it again, as its
/// stamp moved on though its name and inode did not.
#[test]
fn a_note_back_on_its_inode_with_other_text_is_read_again() {
    let notes = Notes::new();
    notes.pages(Scope::Project, 6);
    let store = notes.store();
    let since = this_millisecond();
    let mut index = kept_index(&store);
    let page = notes.home(Scope::Project).join("p05.md");
    let aside = page.with_extension("md.aside");
    fs::rename(&page, &aside).expect("aside");
    // The same length as it was: only its times tell.
    let before = fs::metadata(&aside).expect("aside").len();
    fs::write(&aside, note_text(opened_at() + 1.hour(), None, "# P\n")).expect("in place");
    assert_eq!(fs::metadata(&aside).expect("aside").len(), before);
    fs::rename(&aside, &page).expect("back");
    let listed = listed_shelves(&store, since);
    assert_eq!(first_fresh(&listed, Scope::Project), "@project/p05.md");
    let served = BootSnapshot::served(&store, &mut index).expect("patched");
    assert_eq!(shelves(served, since), listed);
}
