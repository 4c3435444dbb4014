//! The window ledger and `notesoup report` over transcripts Claude Code
//! 2.1.332 recorded: a `/clear` chain (a compaction in its first session,
//! then the session `/clear` started) and an automatic compaction, whose
//! summaries are what notesoup's resets are meant to replace.

use std::fmt::Write as _;
use std::process::Command;

use notesoup_claude::transcript::decode::{ChainFile, decode_chain_with_signals};
use notesoup_core::history::{EndReason, History, SessionLedger, session_ledger};
use serde_json::Value;

use crate::support::{CHAIN_1, CHAIN_2, fixture};

fn chain_ledger() -> SessionLedger {
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
    session_ledger(&History::new(transcript).unwrap(), &signals)
}

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
    let output = Command::new(env!("CARGO_BIN_EXE_notesoup"))
        .arg("report")
        .args(args)
        .env("CLAUDE_PLUGIN_DATA", "/nonexistent-notesoup-report")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
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
