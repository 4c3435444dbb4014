//! `notesoup-pi report` over sessions real Pi 1.6.0 wrote (the goldens of
//! `cargo xtask golden-pi`): each window's end read from the markers,
//! compactions and tool calls, the fill from the replies' usage, and the
//! table and JSON a person and a script read.
//!
//! Pi never recorded a forced reset for these goldens (a scripted model
//! never fills a window), so the hard-reserve and overflow cases here are
//! built from the recorded `notesoup-boundary` rows: the marker's `origin`
//! set to `forced`, and for overflow the reply before it turned into the
//! error Pi records when the provider refuses a request as too long. The
//! real-Pi suite (`tests/real_pi/main.rs`, feature `real-pi`) reads both
//! ends from sessions real Pi writes as it resets at the hard reserve and
//! after an overflow.

use std::process::Command;

use notesoup_test_support::child::stdout_of;
use serde_json::Value;

fn golden(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(format!("{name}.jsonl"))
}

fn report(file: &std::path::Path, extra: &[&str]) -> String {
    stdout_of(
        Command::new(env!("CARGO_BIN_EXE_notesoup-pi"))
            .arg("report")
            .arg(file)
            .args(extra),
    )
}

fn ledger(file: &std::path::Path) -> Value {
    serde_json::from_str(&report(file, &["--json"])).unwrap()
}

fn ends(ledger: &Value) -> Vec<&str> {
    ledger["windows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["end"].as_str().unwrap())
        .collect()
}

#[test]
fn a_wipe_memory_reset_then_an_open_window() {
    let ledger = ledger(&golden("notesoup-boundary"));
    assert_eq!(ends(&ledger), ["tool", "open"]);
    let first = &ledger["windows"][0];
    // The compaction notesoup's reset wrote measured the window.
    assert_eq!(first["tokens_at_end"], 3538);
    assert_eq!(
        ledger["slipped_summaries"], 0,
        "notesoup's own compaction is empty"
    );
    let second = &ledger["windows"][1];
    assert_eq!(second["tokens_at_end"], 3663);
    assert_eq!(second["reorientation"]["reached_work"], false);
    assert_eq!(ledger["ends"]["tool"], 1);
    assert_eq!(ledger["ends"]["open"], 1);
}

#[test]
fn a_fresh_window_is_a_manual_reset() {
    let ledger = ledger(&golden("notesoup-settle"));
    assert_eq!(ends(&ledger), ["manual", "open"]);
}

#[test]
fn a_warning_then_a_plain_reset_is_the_budget() {
    let ledger = ledger(&golden("retain-none"));
    assert_eq!(ends(&ledger)[0], "budget");
    let notices = &ledger["windows"][0]["notices"];
    assert_eq!(notices[0]["kind"], "warning");
    // The warning came after the reply that used 920 tokens.
    assert_eq!(notices[0]["tokens"], 920);
}

#[test]
fn a_summary_compaction_slipped_through() {
    let ledger = ledger(&golden("compaction"));
    assert_eq!(ends(&ledger), ["open"]);
    assert_eq!(ledger["slipped_summaries"], 1);
    assert_eq!(ledger["windows"][0]["slipped_summaries"], 1);
}

/// `notesoup-boundary` with its marker forced; `overflow` also turns the
/// reply before the reset into Pi's record of a refused, too-long request.
fn forced_boundary(overflow: bool) -> tempfile::TempPath {
    let text = std::fs::read_to_string(golden("notesoup-boundary")).unwrap();
    let mut lines = Vec::new();
    for line in text.lines() {
        let mut row: Value = serde_json::from_str(line).unwrap();
        if row["customType"] == "notesoup/reset-marker" {
            row["data"]["origin"] = "forced".into();
        }
        if overflow && row["message"]["stopReason"] == "toolUse" {
            row["message"]["stopReason"] = "error".into();
            row["message"]["errorMessage"] =
                "prompt is too long: 213462 tokens > 200000 maximum".into();
        }
        lines.push(row.to_string());
    }
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), lines.join("\n") + "\n").unwrap();
    file.into_temp_path()
}

#[test]
fn a_forced_reset_is_the_hard_reserve_or_an_overflow() {
    let hard = forced_boundary(false);
    assert_eq!(ends(&ledger(&hard)), ["hard_reserve", "open"]);
    let overflow = forced_boundary(true);
    assert_eq!(ends(&ledger(&overflow)), ["overflow", "open"]);
}

#[test]
fn the_table_and_json_of_a_recorded_session() {
    let file = golden("retain-none");
    insta::assert_snapshot!("report_table_retain_none", report(&file, &[]));
    let json: Value = serde_json::from_str(&report(&file, &["--json"])).unwrap();
    insta::assert_snapshot!(
        "report_json_retain_none",
        serde_json::to_string_pretty(&json).unwrap()
    );
}

/// The project's path as Pi names its session folder (`--<safe>--`).
fn safe_name(project: &std::path::Path) -> String {
    project
        .to_string_lossy()
        .trim_start_matches('/')
        .replace('/', "-")
}

/// A project whose Pi session folder holds `goldens` (oldest first, by
/// their times written), plus `extra` files as they are: the agent
/// directory, the project directory and the folder.
fn project_with(
    goldens: &[&std::path::Path],
    extra: &[(&str, &str)],
) -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join("proj");
    std::fs::create_dir_all(&project).unwrap();
    let safe = safe_name(&project);
    let folder = home
        .path()
        .join("agent/sessions")
        .join(format!("--{safe}--"));
    std::fs::create_dir_all(&folder).unwrap();
    let start = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_772_000_000);
    let mut written = 0;
    for (index, golden) in goldens.iter().enumerate() {
        let path = folder.join(format!(
            "2026-03-0{}T09-00-00-000Z_s{index}.jsonl",
            index + 1
        ));
        std::fs::copy(golden, &path).unwrap();
        let file = std::fs::File::options().write(true).open(&path).unwrap();
        file.set_modified(start + std::time::Duration::from_secs(60 * index as u64))
            .unwrap();
        written = index + 1;
    }
    for (index, (name, text)) in extra.iter().enumerate() {
        let path = folder.join(name);
        std::fs::write(&path, text).unwrap();
        let file = std::fs::File::options().write(true).open(&path).unwrap();
        file.set_modified(start + std::time::Duration::from_secs(60 * (written + index) as u64))
            .unwrap();
    }
    (home, project, folder)
}

fn report_all(
    home: &std::path::Path,
    project: &std::path::Path,
    extra: &[&str],
) -> (i32, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_notesoup-pi"))
        .args(["report", "--all", "--cwd"])
        .arg(project)
        .args(extra)
        .env("PI_CODING_AGENT_DIR", home.join("agent"))
        .env("PI_NOTES_HOME", home.join("notes"))
        .output()
        .unwrap();
    // The folder Pi names after the project holds the temporary path too.
    let safe = safe_name(project);
    let scrub = |text: &[u8]| {
        String::from_utf8_lossy(text)
            .replace(&format!("--{safe}--"), "--[PROJECT]--")
            .replace(&home.display().to_string(), "[HOME]")
    };
    (
        output.status.code().unwrap(),
        scrub(&output.stdout),
        scrub(&output.stderr),
    )
}

#[test]
fn every_session_of_a_project_with_the_trends_across_them() {
    let hard = forced_boundary(false);
    let overflow = forced_boundary(true);
    let goldens = [
        golden("retain-none"),
        golden("notesoup-boundary"),
        golden("notesoup-settle"),
        golden("compaction"),
        hard.to_path_buf(),
        overflow.to_path_buf(),
    ];
    let files: Vec<&std::path::Path> = goldens.iter().map(std::path::PathBuf::as_path).collect();
    let (home, project, _) = project_with(&files, &[]);
    let (code, table, stderr) = report_all(home.path(), &project, &[]);
    assert_eq!(code, 0, "{stderr}");
    insta::assert_snapshot!("report_all_table", table);
    let html = home.path().join("all.html");
    let (code, json, stderr) = report_all(
        home.path(),
        &project,
        &["--json", "--html", html.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{stderr}");
    let json: Value = serde_json::from_str(&json).unwrap();
    insta::assert_snapshot!(
        "report_all_json",
        serde_json::to_string_pretty(&json).unwrap()
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert_eq!(page.matches("<tr class=\"session\"").count(), 6);
    assert_eq!(page.matches("<figure class=\"trend\"").count(), 5);
    for external in ["src=", "<script", "<link", "@import", "url("] {
        assert!(!page.contains(external), "{external} in the page");
    }
}

#[test]
fn an_unreadable_session_is_a_row_that_says_why_and_exit_1() {
    let (home, project, folder) = project_with(&[&golden("retain-none")], &[]);
    // Listed by its name, but not a file Pi could have written.
    std::fs::create_dir(folder.join("2026-03-09T09-00-00-000Z_bad.jsonl")).unwrap();
    let (code, table, stderr) = report_all(home.path(), &project, &[]);
    assert_eq!(code, 1, "{table}");
    assert!(table.contains("unreadable: "), "{table}");
    assert!(
        stderr.starts_with("notesoup-pi report: [HOME]/agent/sessions/"),
        "{stderr}"
    );
    // A session named as well as --all is a usage mistake.
    let (code, _, stderr) = report_all(home.path(), &project, &["--session", "x"]);
    assert_eq!(code, 2, "{stderr}");
    // A project with no session: nothing to report, said plainly.
    let empty = home.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let (code, table, _) = report_all(home.path(), &empty, &[]);
    assert_eq!(code, 0);
    assert!(table.contains(": 0 sessions, 0 windows"), "{table}");
}
