//! The `report --html` page in a real browser: headless Chromium (Debian's
//! `chromium`, installed by `cargo xtask hosts chromium`) loads the page of
//! a recorded `/clear` chain from a file with networking disabled, and the
//! test reads back the DOM it built (the window rows, the reset markers by
//! origin, the summary) and keeps a screenshot under
//! `target/tmp/report-page/`. Chromium's console log goes to stderr, where
//! no console message and no blocked load may appear.

use std::path::PathBuf;
use std::process::Command;

use notesoup_claude::transcript::decode::{ChainFile, decode_chain_with_signals};
use notesoup_core::history::{History, session_ledger};

use crate::support::{CHAIN_1, CHAIN_2, fixture};

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

#[test]
fn the_report_page_renders_in_headless_chromium() {
    let chromium = chromium();
    let files = [
        ChainFile {
            session_id: CHAIN_1.into(),
            path: fixture("chain-1-compact.jsonl"),
        },
        ChainFile {
            session_id: CHAIN_2.into(),
            path: fixture("chain-2-after-clear.jsonl"),
        },
    ];
    let (transcript, signals) = decode_chain_with_signals(CHAIN_1, &files).unwrap();
    let ledger = session_ledger(&History::new(transcript).unwrap(), &signals);
    // Claude Code's lines in the chain's 200,000-token window.
    let policy = notesoup_core::budget::BudgetPolicy::new(30_000, 24_576);
    let report = notesoup_cli::SessionReport {
        budget: Some(notesoup_cli::BudgetLines::new(&policy, 200_000)),
        ledger,
        texts: notesoup_cli::NoteTexts::default(),
    };
    let page = notesoup_cli::render_html(&report);
    // Self-contained: nothing for the browser to fetch, nothing to run.
    for external in ["src=", "<script", "<link", "@import", "url("] {
        assert!(!page.contains(external), "{external} in the page");
    }

    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("report-page");
    std::fs::create_dir_all(&out).unwrap();
    let html = out.join("chain.html");
    std::fs::write(&html, &page).unwrap();
    let profile = tempfile::tempdir().unwrap();
    let url = format!("file://{}", html.display());

    let dom = headless(&chromium, profile.path())
        .arg("--dump-dom")
        .arg(&url)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&dom.stderr);
    assert!(dom.status.success(), "chromium failed: {stderr}");
    let dom = String::from_utf8(dom.stdout).unwrap();
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
    for noise in ["CONSOLE", "Refused to", "net::ERR"] {
        assert!(
            !stderr.contains(noise),
            "{noise} in chromium's log: {stderr}"
        );
    }

    let screenshot = out.join("chain.png");
    let _ = std::fs::remove_file(&screenshot);
    let shot = headless(&chromium, profile.path())
        .arg(format!("--screenshot={}", screenshot.display()))
        .arg(&url)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&shot.stderr);
    assert!(shot.status.success(), "chromium failed: {stderr}");
    let png = std::fs::read(&screenshot).unwrap();
    assert!(png.starts_with(b"\x89PNG"), "a PNG screenshot");
    for noise in ["CONSOLE", "Refused to", "net::ERR"] {
        assert!(
            !stderr.contains(noise),
            "{noise} in chromium's log: {stderr}"
        );
    }
}

/// `report --all`'s page: one row per session and a chart per trend, as
/// Chromium builds it, with nothing fetched and nothing logged.
#[test]
fn the_all_sessions_page_renders_in_headless_chromium() {
    let chromium = chromium();
    let files = [
        ChainFile {
            session_id: CHAIN_1.into(),
            path: fixture("chain-1-compact.jsonl"),
        },
        ChainFile {
            session_id: CHAIN_2.into(),
            path: fixture("chain-2-after-clear.jsonl"),
        },
    ];
    let (transcript, signals) = decode_chain_with_signals(CHAIN_1, &files).unwrap();
    let chain = session_ledger(&History::new(transcript).unwrap(), &signals);
    let automatic = fixture("compactions/automatic-compaction.jsonl");
    let (transcript, signals) = decode_chain_with_signals(
        "automatic",
        &[ChainFile {
            session_id: "automatic".into(),
            path: automatic,
        }],
    )
    .unwrap();
    let single = session_ledger(&History::new(transcript).unwrap(), &signals);
    let report = notesoup_cli::ProjectReport::new(
        "/work/<proj>".to_owned(),
        vec![
            notesoup_cli::SessionRow::of("chain", &chain),
            notesoup_cli::SessionRow::of("automatic", &single),
        ],
    );
    let page = notesoup_cli::render_all_html(&report);
    for external in ["src=", "<script", "<link", "@import", "url("] {
        assert!(!page.contains(external), "{external} in the page");
    }
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("report-page");
    std::fs::create_dir_all(&out).unwrap();
    let html = out.join("all.html");
    std::fs::write(&html, &page).unwrap();
    let profile = tempfile::tempdir().unwrap();
    let url = format!("file://{}", html.display());
    let dom = headless(&chromium, profile.path())
        .arg("--dump-dom")
        .arg(&url)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&dom.stderr);
    assert!(dom.status.success(), "chromium failed: {stderr}");
    let dom = String::from_utf8(dom.stdout).unwrap();
    assert_eq!(dom.matches("<tr class=\"session\"").count(), 2, "{dom}");
    assert_eq!(dom.matches("<figure class=\"trend\"").count(), 5, "{dom}");
    assert!(
        dom.contains("data-sessions=\"2\" data-windows=\"5\" data-resets=\"3\""),
        "{dom}"
    );
    assert!(dom.contains("/work/&lt;proj&gt;"), "the project is escaped");
    for noise in ["CONSOLE", "Refused to", "net::ERR"] {
        assert!(
            !stderr.contains(noise),
            "{noise} in chromium's log: {stderr}"
        );
    }
    let screenshot = out.join("all.png");
    let _ = std::fs::remove_file(&screenshot);
    let shot = headless(&chromium, profile.path())
        .arg(format!("--screenshot={}", screenshot.display()))
        .arg(&url)
        .output()
        .unwrap();
    assert!(
        shot.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&shot.stderr)
    );
    assert!(std::fs::read(&screenshot).unwrap().starts_with(b"\x89PNG"));
}
