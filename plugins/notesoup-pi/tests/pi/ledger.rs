//! `notesoup-pi report` over sessions real Pi 1.6.0 wrote (the goldens of
//! `cargo xtask golden-pi`): each window's end read from the markers,
//! compactions and tool calls, the fill from the replies' usage, and the
//! table and JSON a person and a script read.
//!
//! Pi never recorded a forced reset for these goldens (a scripted model
//! never fills a window), so the hard-reserve and overflow cases are built
//! from the recorded `notesoup-boundary` rows: the marker's `origin` set to
//! `forced`, and for overflow the reply before it turned into the error Pi
//! records when the provider refuses a request as too long.

use std::process::Command;

use serde_json::Value;

fn golden(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(format!("{name}.jsonl"))
}

fn report(file: &std::path::Path, extra: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_notesoup-pi"))
        .arg("report")
        .arg(file)
        .args(extra)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
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
