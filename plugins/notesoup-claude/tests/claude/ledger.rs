//! The window ledger and `notesoup report` over transcripts Claude Code
//! 2.1.332 recorded: a `/clear` chain (a compaction in its first session,
//! then the session `/clear` started) and an automatic compaction, whose
//! summaries are what notesoup's resets are meant to replace.

use std::fmt::Write as _;
use std::process::Command;

use notesoup_core::history::EndReason;
use notesoup_test_support::child::stdout_of;
use serde_json::Value;

use crate::support::{
    CHAIN_1, CHAIN_2, Sandbox, chain_ledger, fixture, map_update, reply_row, tool_rows,
};

#[test]
fn a_compaction_then_a_clear_then_an_open_window() {
    let ledger = chain_ledger();
    let ends: Vec<EndReason> = ledger.windows.iter().map(|w| w.end).collect();
    assert_eq!(
        ends,
        [EndReason::HostCompaction, EndReason::Clear, EndReason::Open]
    );
    // Claude Code's `/compact` wrote a summary: it slipped through.
    assert_eq!(ledger.windows[0].slipped_summaries, 1);
    assert_eq!(ledger.slipped_summaries, 1);
    // Every window's fill is its last reply's context tokens, in a
    // 200,000-token window (no `[1m]` model).
    for window in &ledger.windows {
        assert_eq!(window.context_window, Some(200_000), "{}", window.window_id);
        assert_eq!(
            window.tokens_at_end,
            window.fill.last().map(|&(_, tokens)| tokens)
        );
        assert!(window.tokens_at_end.is_some(), "{}", window.window_id);
    }
    let mut table = String::new();
    for window in &ledger.windows {
        let _ = writeln!(
            table,
            "{} {:?}-{:?} {} {:?} {:?}",
            window.window_id,
            window.first_seq,
            window.last_seq,
            window.end.as_str(),
            window.tokens_at_end,
            window.reorientation,
        );
    }
    insta::assert_snapshot!("ledger_chain", table);
    insta::assert_snapshot!("report_table_chain", notesoup_cli::render_table(&ledger));
}

fn report(args: &[&str]) -> String {
    stdout_of(
        Command::new(env!("CARGO_BIN_EXE_notesoup"))
            .arg("report")
            .args(args)
            .env("CLAUDE_PLUGIN_DATA", "/nonexistent-notesoup-report"),
    )
}

#[test]
fn report_reads_an_automatic_compaction_from_its_transcript() {
    let file = fixture("compactions/automatic-compaction.jsonl");
    let json: Value =
        serde_json::from_str(&report(&["--session", file.to_str().unwrap(), "--json"])).unwrap();
    let windows = json["windows"].as_array().unwrap();
    assert_eq!(windows.len(), 2);
    assert_eq!(windows[0]["end"], "host_compaction");
    // The boundary's `preTokens`: how full the window was when compacted.
    assert_eq!(windows[0]["tokens_at_end"], 990_418);
    assert_eq!(windows[1]["end"], "open");
    assert_eq!(json["slipped_summaries"], 1);
    assert_eq!(json["ends"]["host_compaction"], 1);
    // `--transcript` is the same flag; `--html` writes the page beside the
    // table.
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    let text = report(&[
        "--transcript",
        file.to_str().unwrap(),
        "--html",
        page.to_str().unwrap(),
    ]);
    assert!(text.contains("host_compaction"), "{text}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert_eq!(html.matches("<tr class=\"window\"").count(), 2);
    assert!(html.contains("<g class=\"reset\" data-origin=\"host_compaction\">"));
}

const S1: &str = "11111111-1111-4111-8111-111111111111";
const S2: &str = "22222222-2222-4222-8222-222222222222";
const S3: &str = "33333333-3333-4333-8333-333333333333";

#[test]
fn report_all_lists_a_clear_chain_once_and_the_page_embeds_the_notes_at_their_calls() {
    let sb = Sandbox::new();
    sb.start_session(S1, &[reply_row("r1", 150_000)]);
    assert_eq!(
        sb.hook("session-end", &sb.payload("SessionEnd-clear", S1)),
        None
    );
    sb.hook("session-start", &sb.payload("SessionStart-clear", S2))
        .unwrap();
    sb.append_transcript(S2, &[reply_row("r2", 40_000)]);
    // The third session updates a note the notes' Git history holds.
    let later = sb.map_in_git_history();
    let update = map_update("beta", "gamma");
    let mut rows = vec![reply_row("r3", 90_000)];
    rows.extend(tool_rows("1", "notes_update", &update, &later));
    sb.start_session(S3, &rows);

    let json: Value = serde_json::from_str(&sb.run_ok(&["report", "--all", "--json"])).unwrap();
    let sessions = json["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 2, "{json:#}");
    assert_eq!(
        sessions[0]["session_id"], S1,
        "the chain, under its first id"
    );
    assert_eq!(sessions[0]["resets_by_origin"]["clear"], 1);
    assert_eq!(sessions[0]["fill_at_reset_percent"], 75.0);
    assert_eq!(sessions[1]["session_id"], S3);
    assert_eq!(sessions[1]["notes_written"], 1);
    assert_eq!(json["resets"], 1);

    let page = sb.project.join("report.html");
    sb.run_ok(&["report", "--session", S3, "--html", page.to_str().unwrap()]);
    let html = std::fs::read_to_string(&page).unwrap();
    // Claude Code's lines in a 200,000-token window: the reserve is 15%.
    for (line, at) in [
        ("reminder", 145_424),
        ("warning", 153_616),
        ("reserve", 170_000),
    ] {
        assert!(
            html.contains(&format!("data-line=\"{line}\" data-tokens=\"{at}\"")),
            "{line}"
        );
    }
    assert!(html.contains("data-git=\"true\""));
    assert!(html.contains("data-source=\"git\""), "{html}");
    assert!(html.contains("<pre># Map\nalpha gamma\n</pre>"), "{html}");

    let all = sb.project.join("all.html");
    sb.run_ok(&["report", "--all", "--html", all.to_str().unwrap()]);
    let html = std::fs::read_to_string(&all).unwrap();
    assert_eq!(html.matches("<tr class=\"session\"").count(), 2);
}

/// `--all` reports every session: a session or a transcript beside it is a
/// usage error.
#[test]
fn report_all_takes_no_session() {
    let sb = Sandbox::new();
    for args in [
        &["report", "--all", "--session", S1][..],
        &["report", "--all", "/some/transcript.jsonl"][..],
    ] {
        let output = sb.run(args, b"");
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(
            String::from_utf8_lossy(&output.stderr)
                .contains("--all reports every session: give no session"),
            "{args:?}"
        );
    }
}

/// When the notes cannot be read, the page says why and shows each note as
/// its call carried it.
#[test]
fn report_page_says_why_the_notes_texts_could_not_be_read() {
    let mut sb = Sandbox::new();
    let at = jiff::Timestamp::now().to_string();
    let mut rows = vec![reply_row("r1", 90_000)];
    rows.extend(tool_rows(
        "1",
        "notes_update",
        &map_update("beta", "gamma"),
        &at,
    ));
    sb.start_session(S1, &rows);
    // No notes root: neither `PI_NOTES_HOME` nor a home folder.
    sb.set_env("PI_NOTES_HOME", "");
    sb.set_env("HOME", "");
    let page = sb.project.join("report.html");
    sb.run_ok(&["report", "--session", S1, "--html", page.to_str().unwrap()]);
    let html = std::fs::read_to_string(&page).unwrap();
    let said = html
        .split_once("The notes' texts could not be read (")
        .and_then(|(_, rest)| rest.split_once("):"))
        .map(|(why, _)| why)
        .unwrap_or_else(|| panic!("{html}"));
    assert!(said.contains("the notes root is unknown"), "{said}");
}

/// The session Claude Code 2.1.332 recorded as it compacted a window on its
/// own (`compactions/automatic-compaction.jsonl`).
const AUTOMATIC: &str = "2f774857-624a-41ee-a54a-d4b0b123e752";

/// Sets the time `file` was last written to `seconds` past a fixed start.
fn touch(file: &std::path::Path, seconds: u64) {
    let start = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_780_000_000);
    std::fs::File::options()
        .write(true)
        .open(file)
        .unwrap()
        .set_modified(start + std::time::Duration::from_secs(seconds))
        .unwrap();
}

#[test]
fn report_all_table_and_json_over_the_recorded_sessions() {
    let sb = Sandbox::new();
    // The recorded `/clear` chain, started and cleared through the hooks as
    // Claude Code ran them, then the recorded automatic compaction.
    sb.hook(
        "session-start",
        &sb.payload("SessionStart-startup", CHAIN_1),
    )
    .unwrap();
    assert_eq!(
        sb.hook("session-end", &sb.payload("SessionEnd-clear", CHAIN_1)),
        None
    );
    sb.hook("session-start", &sb.payload("SessionStart-clear", CHAIN_2))
        .unwrap();
    sb.hook(
        "session-start",
        &sb.payload("SessionStart-startup", AUTOMATIC),
    )
    .unwrap();
    for (session, file) in [
        (CHAIN_1, "chain-1-compact.jsonl"),
        (CHAIN_2, "chain-2-after-clear.jsonl"),
        (AUTOMATIC, "compactions/automatic-compaction.jsonl"),
    ] {
        let path = sb.transcript(session);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::copy(fixture(file), &path).unwrap();
    }
    // The records' times order the sessions: fixed, a minute apart.
    for (index, session) in [CHAIN_1, CHAIN_2, AUTOMATIC].iter().enumerate() {
        touch(
            &sb.data.join("sessions").join(format!("{session}.json")),
            60 * index as u64,
        );
    }
    // The automatic compaction was recorded against a scripted API that
    // reported 990,418 tokens in a model's 200,000-token window: the row
    // says so (495.2% at its reset) rather than hide it.
    let scrub = |text: String| text.replace(&sb.project.display().to_string(), "[PROJECT]");
    let table = scrub(sb.run_ok(&["report", "--all"]));
    insta::assert_snapshot!("report_all_table", table);
    let json: Value =
        serde_json::from_str(&scrub(sb.run_ok(&["report", "--all", "--json"]))).unwrap();
    assert_eq!(json["sessions"].as_array().unwrap().len(), 2, "{json:#}");
    insta::assert_snapshot!(
        "report_all_json",
        serde_json::to_string_pretty(&json).unwrap()
    );
}
