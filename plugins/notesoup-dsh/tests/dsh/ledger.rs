//! `notesoup-dsh report` over the session logs the pinned dsh recorded: a
//! scripted model called `get_context_remaining`, then `wipe_memory`, then
//! answered in the fresh window (`wipe-reset`); and, through notesoup's
//! engine, a reply past the hard reserve, then a request the provider
//! refused as too long (`reserve-overflow`, kept from `e2e.rs`'s
//! `budget_lines_and_overflow_through_the_engine`, its temporary directory
//! written as `/tmp/e2e1`).
//!
//! The `report --all` cases also take the `wipe-reset` recording with its
//! marker's `origin` set to `forced`, and for overflow the `step/end`
//! before the reset logged instead as a request error naming the same
//! failure.

use std::path::{Path, PathBuf};
use std::process::Command;

use notesoup_test_support::child::stdout_of;
use serde_json::Value;

const LOG: &str = "wipe-reset.session.jsonl";

fn recorded() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/dsh/fixtures")
        .join(LOG)
}

/// A project, its dsh home and a notes root, in a temporary directory.
struct Project {
    dir: tempfile::TempDir,
    project: PathBuf,
    home: PathBuf,
    /// The project's path as dsh names its session folder.
    safe: String,
}

impl Project {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let project = dir.path().join("proj");
        std::fs::create_dir_all(&project).expect("project");
        let home = dir.path().join("dsh-home");
        let safe = project
            .to_string_lossy()
            .trim_start_matches('/')
            .replace('/', "-");
        Self {
            dir,
            project,
            home,
            safe,
        }
    }

    /// `log` as the project's session `name`, written `minutes` past a
    /// fixed start.
    fn session(&self, name: &str, log: &Path, minutes: u64) {
        let folder = self
            .home
            .join("sessions")
            .join(format!("--{}--", self.safe))
            .join(name);
        std::fs::create_dir_all(&folder).expect("folder");
        let path = folder.join("session.jsonl");
        std::fs::copy(log, &path).expect("log");
        let start =
            std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_780_000_000);
        std::fs::File::options()
            .write(true)
            .open(&path)
            .expect("log")
            .set_modified(start + std::time::Duration::from_secs(60 * minutes))
            .expect("time");
    }

    /// `notesoup-dsh report <args>` in the project: it succeeds; its stdout
    /// with the temporary paths scrubbed.
    fn report(&self, args: &[&str]) -> String {
        stdout_of(
            Command::new(env!("CARGO_BIN_EXE_notesoup-dsh"))
                .arg("report")
                .args(args)
                .current_dir(&self.project)
                .env("PI_NOTES_HOME", self.dir.path().join("notes"))
                .env("DSH_HOME", &self.home),
        )
        .replace(&format!("--{}--", self.safe), "--[PROJECT]--")
        .replace(&self.dir.path().display().to_string(), "[DIR]")
    }

    /// `report --json` parsed.
    fn json(&self, args: &[&str]) -> Value {
        let args = [args, &["--json"]].concat();
        serde_json::from_str(&self.report(&args)).expect("json")
    }
}

/// `notesoup-dsh report <log> <extra>`.
fn report(log: &Path, extra: &[&str]) -> String {
    let log = log.to_str().expect("path");
    Project::new().report(&[&[log], extra].concat())
}

/// `notesoup-dsh report <log> --json`, parsed.
fn ledger(log: &Path) -> Value {
    serde_json::from_str(&report(log, &["--json"])).expect("json")
}

/// How each window of a ledger's JSON ended.
pub(crate) fn ends(ledger: &Value) -> Vec<String> {
    ledger["windows"]
        .as_array()
        .expect("windows")
        .iter()
        .map(|w| w["end"].as_str().expect("end").to_owned())
        .collect()
}

#[test]
fn a_wipe_memory_reset_then_an_open_window() {
    let ledger = ledger(&recorded());
    assert_eq!(ends(&ledger), ["tool", "open"]);
    let first = &ledger["windows"][0];
    // dsh logged the model route's window and each reply's usage.
    assert_eq!(first["context_window"], 131_072);
    assert_eq!(first["tokens_at_end"], 110);
    assert_eq!(first["tool_calls"], 2);
    let second = &ledger["windows"][1];
    assert_eq!(second["reorientation"]["tool_calls"], 0);
    assert_eq!(second["reorientation"]["reached_work"], false);
    insta::assert_snapshot!("report_table_wipe_reset", report(&recorded(), &[]));
}

/// dsh's own record of a forced reset at the hard reserve (the warning
/// before it) and of one after the provider refused a request as too long
/// (the stream's `finish` with `CONTEXT_WINDOW_EXCEEDED`).
#[test]
fn a_recorded_hard_reserve_then_a_recorded_overflow() {
    let log = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/dsh/fixtures")
        .join("reserve-overflow.session.jsonl");
    let ledger = ledger(&log);
    assert_eq!(ends(&ledger), ["hard_reserve", "overflow", "open"]);
    let first = &ledger["windows"][0];
    assert_eq!(first["tokens_at_end"], 120_010);
    assert_eq!(first["notices"][0]["kind"], "warning");
    assert_eq!(ledger["ends"]["hard_reserve"], 1);
    assert_eq!(ledger["ends"]["overflow"], 1);
    insta::assert_snapshot!("report_table_reserve_overflow", report(&log, &[]));
}

/// The recording with its marker forced; with `overflow`, the step before
/// the reset ends in dsh's context-window error instead.
fn forced(overflow: bool) -> tempfile::TempPath {
    let text = std::fs::read_to_string(recorded()).expect("fixture");
    let mut lines = Vec::new();
    for line in text.lines() {
        let mut event: Value = serde_json::from_str(line).expect("json line");
        if event["data"]["source"]["form"] == "snapshot" && event["seq"] == 34 {
            event["data"]["source"]["origin"] = "forced".into();
        }
        if overflow && event["seq"] == 32 {
            event["type"] = "agent/request-error".into();
            event["data"] = serde_json::json!({"error": {"code": "CONTEXT_WINDOW_EXCEEDED"}});
        }
        lines.push(event.to_string());
    }
    let file = tempfile::NamedTempFile::new().expect("temp file");
    std::fs::write(file.path(), lines.join("\n") + "\n").expect("write");
    file.into_temp_path()
}

#[test]
fn a_forced_reset_is_the_hard_reserve_or_an_overflow() {
    assert_eq!(ends(&ledger(&forced(false))), ["hard_reserve", "open"]);
    assert_eq!(ends(&ledger(&forced(true))), ["overflow", "open"]);
}

/// `report --all` over a project's session logs in the dsh home, and the
/// budget lines of its settings file in the window dsh logged.
#[test]
fn every_session_of_a_project_and_the_budget_lines_of_the_settings() {
    let project = Project::new();
    for (minutes, session) in ["s1", "s2"].iter().enumerate() {
        project.session(session, &recorded(), minutes as u64);
    }
    std::fs::write(
        project.home.join("notesoup.json"),
        r#"{"notesoup": {"reserveTokens": 20000, "reminderMarginTokens": 10000}}"#,
    )
    .expect("settings");
    let all = project.json(&["--all"]);
    assert_eq!(all["sessions"].as_array().expect("sessions").len(), 2);
    assert_eq!(all["resets_by_origin"]["tool"], 2);
    let log = recorded();
    let one = project.json(&["--session", log.to_str().expect("path")]);
    // In dsh's 131,072-token window: the reminder 30,000 tokens before the
    // end, the warning 36,384 (the reserve and a 16,384 runway), the reserve
    // 20,000.
    assert_eq!(
        one["budget"],
        serde_json::json!({"context_window": 131_072, "reminder_at": 101_072,
            "warning_at": 94_688, "reserve_at": 111_072})
    );
}

/// `report --all` as a person and a script read it, over three sessions of
/// one project: the recording, then it with its reset forced at the hard
/// reserve, then forced by an overflow; each log written a minute after the
/// one before, and the temporary paths scrubbed.
#[test]
fn report_all_table_and_json_over_the_recorded_sessions() {
    let project = Project::new();
    let hard = forced(false);
    let overflow = forced(true);
    for (minutes, (session, log)) in [
        ("s1", recorded()),
        ("s2", hard.to_path_buf()),
        ("s3", overflow.to_path_buf()),
    ]
    .iter()
    .enumerate()
    {
        project.session(session, log, minutes as u64);
    }
    insta::assert_snapshot!("report_all_table", project.report(&["--all"]));
    let json = project.json(&["--all"]);
    insta::assert_snapshot!(
        "report_all_json",
        serde_json::to_string_pretty(&json).expect("json")
    );
}
