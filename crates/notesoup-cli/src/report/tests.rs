//! The notes' texts at their calls over a real notes store, with and
//! without an audit repository, and the page that embeds them.

use std::path::Path;

use notesoup_core::history::{EndReason, LedgerEdit, LedgerNote, SessionLedger, WindowLedger};
use notesoup_core::notes::NoteStore;
use notesoup_core::plumbing::NotesOwner;

use super::texts::note_texts;
use super::{
    BudgetLines, NoteTexts, ProjectReport, SessionReport, SessionRow, TextSource, render_all_html,
    render_all_table, render_html, render_table,
};

/// The session's store under `root`, holding `notes` (address, text).
fn store(root: &Path, notes: &[(&str, &str)]) -> NoteStore {
    let store = NotesOwner {
        root,
        session_id: Some("s1"),
        project_key: "proj-12345678",
        agent: "agent",
        model: "model",
    }
    .open()
    .unwrap();
    for (address, text) in notes {
        store.write(address, text, None).unwrap();
    }
    store
}

/// An RFC 3339 time `seconds` from now.
fn from_now(seconds: i64) -> String {
    let now = jiff::Timestamp::now().as_second() + seconds;
    jiff::Timestamp::from_second(now).unwrap().to_string()
}

fn write(seq: u32, address: &str, text: &str, at: &str) -> LedgerNote {
    LedgerNote {
        seq,
        op: "write".to_owned(),
        address: address.to_owned(),
        chars: text.chars().count() as u64,
        checkpoint: !address.starts_with('@'),
        text: text.to_owned(),
        at: Some(at.to_owned()),
        edits: Vec::new(),
        replace_all: false,
        rename_to: None,
    }
}

fn update(seq: u32, address: &str, old: &str, new: &str, at: &str) -> LedgerNote {
    LedgerNote {
        op: "update".to_owned(),
        text: new.to_owned(),
        edits: vec![LedgerEdit {
            old_text: old.to_owned(),
            new_text: new.to_owned(),
        }],
        ..write(seq, address, new, at)
    }
}

fn ledger(notes: Vec<LedgerNote>) -> SessionLedger {
    let window = WindowLedger {
        window_id: "w1".to_owned(),
        first_seq: Some(1),
        last_seq: Some(9),
        started_at: None,
        ended_at: None,
        events: 9,
        tool_calls: 4,
        tokens_at_end: Some(150_000),
        context_window: Some(200_000),
        end: EndReason::Tool,
        notices: Vec::new(),
        notes,
        checkpoint_written: false,
        checkpoint_chars: None,
        reorientation: None,
        slipped_summaries: 0,
        fill: vec![(2, 50_000), (8, 150_000)],
    };
    SessionLedger {
        session_id: "s1".to_owned(),
        windows: vec![window],
        ends: [(EndReason::Tool, 1)].into_iter().collect(),
        slipped_summaries: 0,
        events: 9,
        tool_calls: 4,
        notes_written: 0,
        reorientation_calls: 0,
    }
}

#[test]
fn an_update_is_applied_to_the_audited_text_then_to_the_sessions_own() {
    let root = tempfile::tempdir().unwrap();
    let store = store(
        root.path(),
        &[
            ("@project/MAP.md", "alpha beta\n"),
            ("@project/OLD.md", "old\n"),
        ],
    );
    notesoup_core::dream::audit_commit(root.path(), "baseline one").unwrap();
    // Changed since the commit: the page must not show this for the call.
    store
        .write("@project/MAP.md", "alpha beta delta\n", None)
        .unwrap();
    store.write("@project/NEW.md", "fresh\n", None).unwrap();
    let later = from_now(60);
    let ledger = ledger(vec![
        update(2, "@project/MAP.md", "beta", "gamma", &later),
        update(3, "@project/MAP.md", "gamma", "epsilon", &later),
        write(4, "checkpoint.md", "next: ship", &later),
        update(5, "checkpoint", "ship", "test", &later),
        update(6, "@project/NEW.md", "fresh", "stale", &later),
        update(7, "@project/OLD.md", "old", "older", &from_now(-3600)),
        update(8, "@project/MAP.md", "nowhere", "x", &later),
    ]);
    let texts = note_texts(&ledger, &store, root.path());
    assert!(texts.git);
    let at = |seq: u32| &texts.by_seq[&seq];
    assert!(
        matches!(at(2).source, TextSource::Git { .. }),
        "{:?}",
        at(2)
    );
    assert_eq!(at(2).text, "alpha gamma\n");
    assert_eq!(at(3).source, TextSource::Replayed { seq: 2 });
    assert_eq!(at(3).text, "alpha epsilon\n");
    assert_eq!(at(4).source, TextSource::Written);
    assert_eq!(at(5).source, TextSource::Replayed { seq: 4 });
    assert_eq!(at(5).text, "next: test");
    // The note as it is now, said so:
    for (seq, text) in [
        // not in the commit;
        (6, "fresh\n"),
        // older than every commit;
        (7, "old\n"),
        // an edit that does not apply to the rebuilt text.
        (8, "alpha beta delta\n"),
    ] {
        assert!(
            matches!(at(seq).source, TextSource::Current { .. }),
            "{:?}",
            at(seq)
        );
        assert_eq!(at(seq).text, text);
    }
    // The page says where each text came from.
    let TextSource::Git {
        commit,
        committed_at,
    } = at(2).source.clone()
    else {
        unreachable!()
    };
    let page = page_without_budget(ledger, texts);
    let said = |seq: u32| {
        let from = page
            .find(&format!("id=\"note-{seq}\""))
            .unwrap_or_else(|| panic!("{seq}: {page}"));
        let rest = &page[from..];
        let start = rest.find("<p class=\"source\">").unwrap() + "<p class=\"source\">".len();
        rest[start..start + rest[start..].find("</p>").unwrap()].to_owned()
    };
    assert_eq!(
        said(2),
        format!(
            "This update applied to the note as audit commit {commit} ({committed_at}) holds it."
        )
    );
    assert_eq!(
        said(3),
        "This update applied to the note as this session&#39;s call at seq 2 left it."
    );
    assert_eq!(said(4), "The content this call wrote.");
    assert!(
        said(6).starts_with("The note as it is now: "),
        "{}",
        said(6)
    );
}

#[test]
fn without_a_repository_an_update_shows_the_note_as_it_is_now() {
    let root = tempfile::tempdir().unwrap();
    let store = store(root.path(), &[("@project/MAP.md", "now\n")]);
    let ledger = ledger(vec![
        update(2, "@project/MAP.md", "then", "now", &from_now(0)),
        update(3, "@project/GONE.md", "a", "b", &from_now(0)),
    ]);
    let texts = note_texts(&ledger, &store, root.path());
    assert!(!texts.git);
    let TextSource::Current { reason } = &texts.by_seq[&2].source else {
        panic!("{:?}", texts.by_seq[&2]);
    };
    assert!(reason.contains("not a Git repository"), "{reason}");
    assert_eq!(texts.by_seq[&2].text, "now\n");
    assert!(matches!(
        texts.by_seq[&3].source,
        TextSource::Unknown { .. }
    ));
    let page = page_without_budget(ledger, texts);
    assert!(page.contains("data-git=\"false\""));
    assert!(page.contains("the notes root is not a Git repository"));
    assert!(page.contains("<details class=\"note\" id=\"note-2\" data-source=\"current\">"));
    assert!(page.contains("<p class=\"source\">No text: "), "{page}");
}

#[test]
fn the_page_draws_the_budget_lines_and_cuts_a_long_note() {
    // A note's text is cut at 16,384 chars (docs/behavior.md).
    let long = "x".repeat(16_384 + 10);
    let ledger = ledger(vec![write(2, "@project/LONG.md", &long, &from_now(0))]);
    let policy = notesoup_core::budget::BudgetPolicy::new(30_000, 24_576);
    let budget = BudgetLines::new(&policy, 200_000);
    assert_eq!(
        (budget.reminder_at, budget.warning_at, budget.reserve_at),
        (145_424, 153_616, 170_000)
    );
    let page = render_html(&SessionReport {
        ledger,
        budget: Some(budget),
        texts: NoteTexts::default(),
    });
    for line in ["reminder", "warning", "reserve"] {
        assert!(
            page.contains(&format!("<g class=\"budget\" data-line=\"{line}\"")),
            "{line}"
        );
    }
    assert!(page.contains("data-tokens=\"145424\""));
    assert!(page.contains("truncated: 16384 of 16394 chars shown"));
    assert!(page.contains("<a href=\"#note-2\">@project/LONG.md</a>"));
}

/// `git init`, `git add -A` and `git commit` in `root`, dated `seconds`
/// from now.
fn commit_dated(root: &Path, seconds: i64) {
    let at = format!("@{} +0000", jiff::Timestamp::now().as_second() + seconds);
    let identity = ["-c", "user.name=n", "-c", "user.email=n@localhost"];
    for args in [
        vec!["init", "-q"],
        vec!["add", "-A"],
        [&identity[..], &["commit", "-q", "-m", "baseline"]].concat(),
    ] {
        let output = std::process::Command::new("git")
            .arg("-C")
            .arg(root)
            .args(&args)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_AUTHOR_DATE", &at)
            .env("GIT_COMMITTER_DATE", &at)
            .output()
            .unwrap();
        assert!(output.status.success(), "git {args:?}: {output:?}");
    }
}

/// A note renamed after the audit commit and updated under its new name:
/// the commit that records the rename (a deletion and an addition) comes
/// after the call, and the call's text is rebuilt from the note's old path
/// in the commit before it, not shown as the note is now.
#[test]
fn an_update_of_a_renamed_note_is_applied_to_its_text_under_the_old_path() {
    let root = tempfile::tempdir().unwrap();
    let store = store(root.path(), &[("@project/plan.md", "alpha beta\n")]);
    commit_dated(root.path(), -3600);
    store
        .rename("@project/plan.md", "@project/roadmap.md")
        .unwrap();
    // The call, then more changes, then the audit that records the rename.
    let ledger = ledger(vec![update(
        2,
        "@project/roadmap.md",
        "beta",
        "gamma",
        &from_now(-1800),
    )]);
    store
        .write("@project/roadmap.md", "alpha gamma delta\n", None)
        .unwrap();
    notesoup_core::dream::audit_commit(root.path(), "dream").unwrap();
    let texts = note_texts(&ledger, &store, root.path());
    assert!(texts.git);
    let shown = &texts.by_seq[&2];
    assert!(matches!(shown.source, TextSource::Git { .. }), "{shown:?}");
    assert_eq!(shown.text, "alpha gamma\n");
}

/// A note this session moved (`rename_to`) and then updated under its new
/// address: the update applies to the text the session rebuilt before the
/// move, and nothing is left to replay under the old address.
#[test]
fn an_update_after_the_sessions_own_rename_replays_the_moved_text() {
    let root = tempfile::tempdir().unwrap();
    let store = store(root.path(), &[]);
    let at = from_now(0);
    let moved = LedgerNote {
        edits: Vec::new(),
        text: String::new(),
        rename_to: Some("@project/b.md".to_owned()),
        ..update(3, "@project/a.md", "", "", &at)
    };
    let ledger = ledger(vec![
        write(2, "@project/a.md", "one two\n", &at),
        moved,
        update(4, "@project/b.md", "two", "three", &at),
        update(5, "@project/a.md", "one", "zero", &at),
    ]);
    let texts = note_texts(&ledger, &store, root.path());
    let at = |seq: u32| &texts.by_seq[&seq];
    assert_eq!(at(3).source, TextSource::Replayed { seq: 2 });
    assert_eq!(at(3).text, "one two\n");
    assert_eq!(at(4).source, TextSource::Replayed { seq: 3 });
    assert_eq!(at(4).text, "one three\n");
    assert!(
        matches!(at(5).source, TextSource::Unknown { .. }),
        "{:?}",
        at(5)
    );
}

/// The page of a session whose host gives no budget lines.
fn page_without_budget(ledger: SessionLedger, texts: NoteTexts) -> String {
    render_html(&SessionReport {
        ledger,
        budget: None,
        texts,
    })
}

/// The table's fill bars and its footnote over windows of `tokens` at
/// their ends in windows of `sizes` (one pair a window).
fn bars(windows: &[(Option<u64>, Option<u64>)]) -> (Vec<String>, bool) {
    let mut session = ledger(Vec::new());
    let first = session.windows[0].clone();
    session.windows = windows
        .iter()
        .map(|&(tokens_at_end, context_window)| WindowLedger {
            tokens_at_end,
            context_window,
            ..first.clone()
        })
        .collect();
    let table = render_table(&session);
    let bars = table
        .lines()
        .filter_map(|line| Some(line[line.find('[')?..=line.find(']')?].to_owned()))
        .collect();
    let footnote = "fill: relative to the fullest window (the context window is not recorded)";
    (bars, table.lines().any(|line| line == footnote))
}

/// A bar's full width is the window's context window; where no window
/// records one, the fullest window's tokens, and the table says so.
#[test]
fn fill_bars_scale_to_the_context_window_else_to_the_fullest_window() {
    let full = |cells: usize| format!("[{}{}]", "#".repeat(cells), ".".repeat(20 - cells));
    assert_eq!(
        bars(&[
            (Some(50_000), Some(200_000)),
            (Some(100_000), Some(200_000))
        ]),
        (vec![full(5), full(10)], false)
    );
    assert_eq!(
        bars(&[(Some(50_000), None), (Some(100_000), None), (None, None)]),
        (vec![full(10), full(20), full(0)], true)
    );
    // A context window of 0 is none recorded, beside windows that record
    // one too: the fullest window's tokens are the scale, and the window
    // its size.
    assert_eq!(bars(&[(Some(100_000), Some(0))]), (vec![full(20)], true));
    assert_eq!(
        bars(&[(Some(50_000), Some(0)), (Some(100_000), Some(400_000))]),
        (vec![full(10), full(5)], true)
    );
    // Nothing to scale to: empty bars, no footnote.
    assert_eq!(
        bars(&[(Some(0), None), (None, None)]),
        (vec![full(0), full(0)], false)
    );
}

/// A window whose size is 0 (none recorded) shows its tokens alone, `N/?`
/// in the table and `N` on the page, and its fill against the fullest
/// window: a whole bar, 100%.
#[test]
fn a_window_of_size_0_shows_its_tokens_alone() {
    let mut session = ledger(Vec::new());
    session.windows[0].tokens_at_end = Some(50_000);
    session.windows[0].context_window = Some(0);
    let table = render_table(&session);
    assert!(table.contains(" 50000/? "), "{table}");
    let page = page_without_budget(session, NoteTexts::default());
    assert!(
        page.contains("</span></span> 100%</td><td>50000</td>"),
        "{page}"
    );
}

/// The page embeds 2 MiB of note texts in all (docs/behavior.md): 128
/// whole notes of 16,384 chars fill it, and the next is listed with its
/// text left out.
#[test]
fn the_page_embeds_two_mebibytes_of_note_texts_in_all() {
    let text = "x".repeat(16_384);
    let notes = (1..=129)
        .map(|seq| write(seq, &format!("@project/n{seq}.md"), &text, &from_now(0)))
        .collect();
    let page = page_without_budget(ledger(notes), NoteTexts::default());
    let cuts: Vec<&str> = page
        .lines()
        .filter_map(|line| line.split_once("<p class=\"truncated\">"))
        .map(|(head, cut)| {
            assert!(head.contains("id=\"note-129\""), "{head}");
            cut
        })
        .collect();
    assert_eq!(cuts, ["truncated: 0 of 16384 chars shown</p></details>"]);
    assert!(!page.contains("No notes were written."));
}

/// A window id wider than the table's 60-cell column is cut to 59 chars
/// and an ellipsis; a shorter one stands whole.
#[test]
fn a_long_window_id_is_cut_to_its_column() {
    let mut session = ledger(Vec::new());
    let first = session.windows[0].clone();
    session.windows = ["w".repeat(70), "v".repeat(60)]
        .into_iter()
        .map(|window_id| WindowLedger {
            window_id,
            ..first.clone()
        })
        .collect();
    let table = render_table(&session);
    let cells: Vec<&str> = table
        .lines()
        .skip(2)
        .filter_map(|row| row.split_whitespace().nth(1))
        .collect();
    assert_eq!(cells, [format!("{}…", "w".repeat(59)), "v".repeat(60)]);
}

/// The timeline draws each window's fill at its seqs across the width and
/// its tokens up to the context window, a reset as a line in its end's
/// colour; the summary counts every end but the open window's.
#[test]
fn the_timeline_places_the_fill_and_the_reset() {
    let mut session = ledger(Vec::new());
    session.ends = [(EndReason::Tool, 2), (EndReason::Open, 1)]
        .into_iter()
        .collect();
    let mut second = session.windows[0].clone();
    second.reorientation = Some(notesoup_core::history::Reorientation {
        tool_calls: 3,
        tokens: Some(9_000),
        reached_work: false,
    });
    session.windows[0].reorientation = Some(notesoup_core::history::Reorientation {
        reached_work: true,
        ..second.reorientation.unwrap()
    });
    second.first_seq = None;
    session.windows.push(second);
    let page = page_without_budget(session, NoteTexts::default());
    // 900 wide, 240 high, 20 of padding: seq 2 of 9 at x 211, 50,000 of
    // 200,000 tokens at y 170; seq 8 at 784, 150,000 at 70.
    assert!(
        page.contains("<polyline class=\"fill\" data-window=\"1\" points=\"211,170 784,70\"/>"),
        "{page}"
    );
    assert!(
        page.contains("<g class=\"reset\" data-origin=\"tool\"><line x1=\"880\" y1=\"20\" x2=\"880\" y2=\"220\" stroke=\"#1b9e77\"/>"),
        "{page}"
    );
    assert!(page.contains("data-resets=\"2\""), "{page}");
    assert!(page.contains("<p>No notes were written.</p>"), "{page}");
    // The table's bar: 150,000 of 200,000 tokens.
    assert!(
        page.contains("<span class=\"bar\" style=\"width:75%\"></span></span> 75%"),
        "{page}"
    );
    // Its seqs, and the calls before the first work call (the second
    // window has no first seq and made no work call).
    let rows: Vec<(&str, &str)> = page
        .lines()
        .filter(|line| line.starts_with("<tr class=\"window\""))
        .map(|row| {
            let cells: Vec<&str> = row.split("<td>").collect();
            (
                cells[3].trim_end_matches("</td>"),
                row.rsplit("<td>").next().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("1–9", "3 calls, 9000 tokens</td></tr>"),
            ("–", "3 calls, no work yet</td></tr>")
        ]
    );
}

/// A long session's fill is thinned to about 2,000 points, each window
/// keeping its first and last sample.
#[test]
fn a_long_fill_is_thinned_keeping_each_window_s_ends() {
    let mut session = ledger(Vec::new());
    let window = &mut session.windows[0];
    window.fill = (1..=5000).map(|seq| (seq, 100_000)).collect();
    window.last_seq = Some(5000);
    let page = page_without_budget(session, NoteTexts::default());
    let points: Vec<&str> = page
        .split_once("points=\"")
        .and_then(|(_, rest)| rest.split_once('"'))
        .map(|(points, _)| points.split(' ').collect())
        .unwrap();
    // Every third sample (5,000 over 2,000 points), and the last.
    assert_eq!(points.len(), 1668);
    // 900 wide, 20 of padding: seq 1 of 5,000 at x 20, seq 4 at 20, seq
    // 5,000 at 880; 100,000 of 200,000 tokens at y 120.
    assert_eq!(points[..2], ["20,120", "20,120"]);
    assert_eq!(points[2], "21,120");
    assert_eq!(points.last(), Some(&"880,120"));
}

/// A session's row averages over its resets (the open window is none):
/// the fill over the resets whose window size is recorded, the tokens over
/// all of them, the re-orientation over the windows that made one; the
/// project sums the rows and takes each trend over the earlier and the
/// later half of the sessions it could read.
#[test]
fn a_project_report_sums_its_sessions_and_halves_its_trends() {
    let reorientation = |tool_calls, tokens| {
        Some(notesoup_core::history::Reorientation {
            tool_calls,
            tokens: Some(tokens),
            reached_work: true,
        })
    };
    let mut session = ledger(Vec::new());
    let first = session.windows[0].clone();
    session.windows = vec![
        // 75% of its window.
        WindowLedger {
            reorientation: reorientation(3, 9_000),
            ..first.clone()
        },
        // No size recorded: its tokens count, its fill cannot.
        WindowLedger {
            tokens_at_end: Some(100_001),
            context_window: Some(0),
            end: EndReason::HostCompaction,
            reorientation: reorientation(4, 10_000),
            ..first.clone()
        },
        // 50% of its window.
        WindowLedger {
            tokens_at_end: Some(100_000),
            end: EndReason::Clear,
            reorientation: None,
            ..first.clone()
        },
        // Open: no reset.
        WindowLedger {
            tokens_at_end: Some(10_000),
            end: EndReason::Open,
            ..first.clone()
        },
    ];
    session.ends = [
        (EndReason::Tool, 1),
        (EndReason::HostCompaction, 1),
        (EndReason::Clear, 1),
        (EndReason::Open, 1),
    ]
    .into_iter()
    .collect();
    session.notes_written = 2;
    let row = SessionRow::of("one", &session);
    assert_eq!(
        (
            row.windows,
            row.resets,
            row.fill_at_reset_percent,
            row.tokens_at_reset,
            row.reorientation_calls,
            row.reorientation_tokens,
        ),
        (4, 3, Some(62.5), Some(116_667), Some(3.5), Some(9_500))
    );
    assert_eq!(row.resets_by_origin.len(), 3);
    assert!(!row.resets_by_origin.contains_key(&EndReason::Open));

    let mut plain = ledger(Vec::new());
    plain.notes_written = 1;
    let mut failed = SessionRow::of("lost", &plain);
    failed.error = Some("unreadable".to_owned());
    let project = ProjectReport::new(
        "/w".to_owned(),
        vec![
            row,
            SessionRow::of("two", &plain),
            failed,
            SessionRow::of("three", &plain),
            SessionRow::of("four", &plain),
        ],
    );
    assert_eq!(
        (project.windows, project.resets, project.notes_written),
        (4 + 4, 3 + 4, 2 + 4)
    );
    assert_eq!(project.resets_by_origin[&EndReason::Tool], 1 + 4);
    // Resets per session over the four read: 3 and 1 earlier, 1 and 1
    // later.
    let resets = &project.trends[0];
    assert_eq!(resets.values, [Some(3.0), Some(1.0), Some(1.0), Some(1.0)]);
    assert_eq!((resets.earlier, resets.later), (Some(2.0), Some(1.0)));

    // The page names each session by its id, its file in the title, and
    // draws each trend over the sessions: 420 wide, 90 high, 12 of
    // padding, the highest value (3) at the top.
    let page = render_all_html(&project);
    assert!(page.contains("<td title=\"one\">s1</td>"), "{page}");
    assert!(
        page.contains("<figcaption>resets per session: 2 → 1</figcaption>"),
        "{page}"
    );
    assert!(
        page.contains("<polyline points=\"12.0,12.0 144.0,56.0 276.0,56.0 408.0,56.0\"/>"),
        "{page}"
    );
    assert!(
        page.contains(
            "<circle cx=\"144.0\" cy=\"56.0\" r=\"2.5\"><title>session 2: 1</title></circle>"
        ),
        "{page}"
    );

    // The table: the resets by origin, each row by its id (the session as
    // listed when it has none) with its fill at a reset in percent, else
    // in tokens, else a dash, its re-orientation with or without tokens,
    // the unreadable row's reason, and the trends.
    let mut project = project;
    let second = &mut project.sessions[1];
    second.session_id = Some(String::new());
    (second.fill_at_reset_percent, second.tokens_at_reset) = (None, Some(5_000));
    let fourth = &mut project.sessions[3];
    (fourth.fill_at_reset_percent, fourth.tokens_at_reset) = (None, None);
    fourth.reorientation_calls = Some(2.0);
    insta::assert_snapshot!("project_table", render_all_table(&project));
}

/// An update's old text must stand once, or every time with `replace_all`:
/// otherwise it does not apply to the session's earlier text, and the note
/// is shown as it is now.
#[test]
fn an_update_applies_to_a_text_holding_its_old_text_once_or_with_replace_all() {
    let root = tempfile::tempdir().unwrap();
    let store = store(root.path(), &[("@project/MAP.md", "now\n")]);
    let at = from_now(0);
    let twice = update(3, "@project/MAP.md", "a", "b", &at);
    let every = LedgerNote {
        seq: 5,
        replace_all: true,
        ..update(5, "@project/MAP.md", "a", "b", &at)
    };
    let ledger = ledger(vec![
        write(2, "@project/MAP.md", "a a", &at),
        twice,
        write(4, "@project/MAP.md", "a a", &at),
        every,
    ]);
    let texts = note_texts(&ledger, &store, root.path());
    assert_shown_now(&texts, 3, "now\n");
    assert_eq!(texts.by_seq[&5].source, TextSource::Replayed { seq: 4 });
    assert_eq!(texts.by_seq[&5].text, "b b");
}

/// A commit made in the very second of a call may already hold the call's
/// result: only a commit at least a second older than the call stands for
/// the note before it.
#[test]
fn a_commit_in_the_second_of_the_call_is_not_taken_for_the_note_before_it() {
    let root = tempfile::tempdir().unwrap();
    let store = store(root.path(), &[("@project/MAP.md", "alpha beta\n")]);
    // The call's time first: the commit's second is the same or later.
    let at = from_now(0);
    commit_dated(root.path(), 0);
    let ledger = ledger(vec![update(2, "@project/MAP.md", "beta", "gamma", &at)]);
    let texts = note_texts(&ledger, &store, root.path());
    assert!(texts.git);
    assert_shown_now(&texts, 2, "alpha beta\n");
}

/// A call whose address names no note in the root takes no text from the
/// notes' Git history, and the calls after it take their own.
#[test]
fn a_call_to_no_note_takes_no_audited_text_from_the_calls_after_it() {
    let root = tempfile::tempdir().unwrap();
    let store = store(root.path(), &[("@project/MAP.md", "alpha beta\n")]);
    commit_dated(root.path(), -3600);
    let at = from_now(0);
    let ledger = ledger(vec![
        update(2, "@nowhere/x.md", "a", "b", &at),
        update(3, "@project/MAP.md", "beta", "gamma", &at),
    ]);
    let texts = note_texts(&ledger, &store, root.path());
    assert!(
        matches!(texts.by_seq[&3].source, TextSource::Git { .. }),
        "{:?}",
        texts.by_seq[&3]
    );
    assert_eq!(texts.by_seq[&3].text, "alpha gamma\n");
}

/// The note of the call at `seq` is shown as it is now, holding `text`.
fn assert_shown_now(texts: &NoteTexts, seq: u32, text: &str) {
    let shown = &texts.by_seq[&seq];
    assert!(
        matches!(shown.source, TextSource::Current { .. }),
        "{shown:?}"
    );
    assert_eq!(shown.text, text);
}
