//! The `report --html` page in a real browser: headless Chromium (Debian's
//! `chromium`, installed by `cargo xtask hosts chromium`) loads the page of
//! a recorded `/clear` chain from a file with networking disabled, and the
//! test reads back the DOM it built (the window rows, the reset markers by
//! origin, the summary) and keeps a screenshot under
//! `target/tmp/report-page/`; so too for `report --all`'s page and for the
//! page of a session whose notes were written (each note's text, where it
//! comes from, and the links from the window row to it). Chromium's console log goes to stderr, where
//! no console message and no blocked load may appear.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{chain_ledger, recorded_ledger};

const INSTALL: &str = "install it with `eval \"$(cargo xtask hosts chromium)\"` (Debian's chromium package; it sets NOTESOUP_CHROMIUM)";

fn chromium() -> PathBuf {
    let path = std::env::var_os("NOTESOUP_CHROMIUM")
        .filter(|p| !p.is_empty())
        .map_or_else(|| PathBuf::from("/usr/bin/chromium"), PathBuf::from);
    assert!(
        path.exists(),
        "Chromium is not at {}; {INSTALL}",
        path.display()
    );
    path
}

/// Chromium, headless, with every host name unresolvable and every request
/// sent to a closed proxy: the page gets no network whatever it asks for.
fn headless(chromium: &PathBuf, profile: &std::path::Path) -> Command {
    let mut command = Command::new(chromium);
    command.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-extensions",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--host-resolver-rules=MAP * ~NOTFOUND",
        "--proxy-server=http://127.0.0.1:9",
        "--enable-logging=stderr",
        "--v=0",
        "--window-size=1200,1400",
    ]);
    command.arg(format!("--user-data-dir={}", profile.display()));
    command
}

/// Where the pages and screenshots are kept: `target/tmp/report-page/`.
fn out_dir() -> PathBuf {
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("report-page");
    std::fs::create_dir_all(&out).unwrap();
    out
}

/// Nothing for the browser to fetch, nothing to run.
fn assert_self_contained(page: &str) {
    for external in ["src=", "<script", "<link", "@import", "url("] {
        assert!(!page.contains(external), "{external} in the page");
    }
}

/// No console message and no blocked load in Chromium's log.
fn assert_quiet(stderr: &str) {
    for noise in ["CONSOLE", "Refused to", "net::ERR"] {
        assert!(
            !stderr.contains(noise),
            "{noise} in chromium's log: {stderr}"
        );
    }
}

/// One headless Chromium with its own profile, loading pages from files.
struct Browser {
    chromium: PathBuf,
    profile: tempfile::TempDir,
}

impl Browser {
    fn new() -> Self {
        Self {
            chromium: chromium(),
            profile: tempfile::tempdir().unwrap(),
        }
    }

    /// The DOM Chromium built from `url`; it ran and logged nothing.
    fn dom(&self, url: &str) -> String {
        let dom = headless(&self.chromium, self.profile.path())
            .arg("--dump-dom")
            .arg(url)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&dom.stderr);
        assert!(dom.status.success(), "chromium failed: {stderr}");
        assert_quiet(&stderr);
        String::from_utf8(dom.stdout).unwrap()
    }

    /// A screenshot of `url` kept at `screenshot`: a PNG, and nothing
    /// logged.
    fn screenshot(&self, url: &str, screenshot: &Path) {
        let _ = std::fs::remove_file(screenshot);
        let shot = headless(&self.chromium, self.profile.path())
            .arg(format!("--screenshot={}", screenshot.display()))
            .arg(url)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&shot.stderr);
        assert!(shot.status.success(), "chromium failed: {stderr}");
        assert!(
            std::fs::read(screenshot).unwrap().starts_with(b"\x89PNG"),
            "a PNG screenshot"
        );
        assert_quiet(&stderr);
    }
}

/// `page` checked self-contained and kept as `name` under the output
/// directory; its `file://` URL.
fn keep_page(name: &str, page: &str) -> String {
    assert_self_contained(page);
    let html = out_dir().join(name);
    std::fs::write(&html, page).unwrap();
    format!("file://{}", html.display())
}

#[test]
fn the_report_page_renders_in_headless_chromium() {
    let browser = Browser::new();
    let ledger = chain_ledger();
    // Claude Code's lines in the chain's 200,000-token window.
    let policy = notesoup_core::budget::BudgetPolicy::new(30_000, 24_576);
    let report = notesoup_cli::SessionReport {
        budget: Some(notesoup_cli::BudgetLines::new(&policy, 200_000)),
        ledger,
        texts: notesoup_cli::NoteTexts::default(),
    };
    let url = keep_page("chain.html", &notesoup_cli::render_html(&report));
    let dom = browser.dom(&url);
    // The rows and markers Chromium built from the page.
    assert_eq!(dom.matches("<tr class=\"window\"").count(), 3, "{dom}");
    assert_eq!(dom.matches("<g class=\"reset\"").count(), 2, "{dom}");
    assert!(dom.contains("data-origin=\"host_compaction\""));
    assert!(dom.contains("data-origin=\"clear\""));
    assert!(dom.contains("data-windows=\"3\" data-resets=\"2\" data-slipped=\"1\""));
    assert_eq!(dom.matches("<polyline class=\"fill\"").count(), 3);
    for line in ["reminder", "warning", "reserve"] {
        assert!(
            dom.contains(&format!("<g class=\"budget\" data-line=\"{line}\"")),
            "{line}: {dom}"
        );
    }
    browser.screenshot(&url, &out_dir().join("chain.png"));
}

/// `report --all`'s page: one row per session and a chart per trend, as
/// Chromium builds it, with nothing fetched and nothing logged.
#[test]
fn the_all_sessions_page_renders_in_headless_chromium() {
    let browser = Browser::new();
    let chain = chain_ledger();
    let single = recorded_ledger(&[("automatic", "compactions/automatic-compaction.jsonl")]);
    let report = notesoup_cli::ProjectReport::new(
        "/work/<proj>".to_owned(),
        vec![
            notesoup_cli::SessionRow::of("chain", &chain),
            notesoup_cli::SessionRow::of("automatic", &single),
        ],
    );
    let url = keep_page("all.html", &notesoup_cli::render_all_html(&report));
    let dom = browser.dom(&url);
    assert_eq!(dom.matches("<tr class=\"session\"").count(), 2, "{dom}");
    assert_eq!(dom.matches("<figure class=\"trend\"").count(), 5, "{dom}");
    assert!(
        dom.contains("data-sessions=\"2\" data-windows=\"5\" data-resets=\"3\""),
        "{dom}"
    );
    assert!(dom.contains("/work/&lt;proj&gt;"), "the project is escaped");
    browser.screenshot(&url, &out_dir().join("all.png"));
}

/// A session's page with the texts of the notes it wrote, built by the
/// real binary from a session whose calls updated a note the notes' Git
/// history holds, updated it again, and wrote a new one: Chromium's DOM
/// holds each note's `<details>` with its text and where that text comes
/// from, and every link from a window row lands on one of them.
#[test]
fn the_report_page_with_note_texts_renders_in_headless_chromium() {
    use crate::support::{Sandbox, map_update, reply_row, tool_rows};

    const SESSION: &str = "44444444-4444-4444-8444-444444444444";
    let browser = Browser::new();
    let sb = Sandbox::new();
    // The audit history holds the note's text before the session; the note
    // has changed since, so only Git can say what the update applied to.
    let later = sb.map_in_git_history();
    let first = map_update("beta", "gamma");
    let second = map_update("gamma", "delta");
    let third = serde_json::json!({"address": "@project/TODO.md",
        "content": "# Todo\nship <it> & check\n"});
    let mut rows = vec![reply_row("r1", 60_000)];
    rows.extend(tool_rows("1", "notes_update", &first, &later));
    rows.extend(tool_rows("2", "notes_update", &second, &later));
    rows.extend(tool_rows("3", "notes_write", &third, &later));
    // One thread: each row's parent is the row before it (the first's is
    // the SessionStart hook's context row).
    let mut parent = "h1".to_owned();
    let rows: Vec<String> = rows
        .iter()
        .map(|row| {
            let mut row: serde_json::Value = serde_json::from_str(row).unwrap();
            row["parentUuid"] = parent.clone().into();
            parent = row["uuid"].as_str().unwrap().to_owned();
            row.to_string()
        })
        .collect();
    sb.start_session(SESSION, &rows);

    let html = out_dir().join("notes.html");
    sb.run_ok(&[
        "report",
        "--session",
        SESSION,
        "--html",
        html.to_str().unwrap(),
    ]);
    let page = std::fs::read_to_string(&html).unwrap();
    assert_self_contained(&page);
    let url = format!("file://{}", html.display());
    let dom = browser.dom(&url);

    // One `<details>` per note call, in call order, each with where its text
    // comes from and the text itself as Chromium parsed it.
    let details: Vec<&str> = dom
        .split("<details class=\"note\" ")
        .skip(1)
        .map(|rest| &rest[..rest.find("</details>").expect("closed")])
        .collect();
    assert_eq!(details.len(), 3, "{dom}");
    let expected = [
        (
            "git",
            "@project/MAP.md",
            "This update applied to the note as audit commit ",
            "<pre># Map\nalpha gamma\n</pre>",
        ),
        (
            "replayed",
            "@project/MAP.md",
            "This update applied to the note as this session's call at seq ",
            "<pre># Map\nalpha delta\n</pre>",
        ),
        (
            "written",
            "@project/TODO.md",
            "The content this call wrote.",
            "<pre># Todo\nship &lt;it&gt; &amp; check\n</pre>",
        ),
    ];
    let mut ids = Vec::new();
    for (one, (kind, address, source, text)) in details.iter().zip(expected) {
        let id = one
            .strip_prefix("id=\"")
            .and_then(|rest| rest.split('"').next())
            .expect("an id");
        assert!(id.starts_with("note-"), "{one}");
        assert!(one.contains(&format!("data-source=\"{kind}\"")), "{one}");
        assert!(one.contains(address), "{one}");
        assert!(
            one.contains(&format!("<p class=\"source\">{source}")),
            "{kind}: {one}"
        );
        assert!(one.contains(text), "{kind}: {one}");
        ids.push(id.to_owned());
    }
    // The replayed update names the call it applied to: the first update.
    let first_seq = ids[0].trim_start_matches("note-");
    assert!(
        details[1].contains(&format!("call at seq {first_seq} left it.")),
        "{}",
        details[1]
    );
    // The window row links to each note, and each link lands on one.
    let links: Vec<&str> = dom
        .split("<a href=\"#")
        .skip(1)
        .map(|rest| rest.split('"').next().expect("a target"))
        .collect();
    assert_eq!(links, ids, "{dom}");
    assert!(dom.contains("data-git=\"true\""), "{dom}");

    // The screenshot, opened at the first note the row links to.
    browser.screenshot(&format!("{url}#{}", ids[0]), &out_dir().join("notes.png"));
}
