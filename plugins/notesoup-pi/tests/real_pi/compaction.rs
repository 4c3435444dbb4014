//! Pi's own automatic compaction, enabled in Pi's settings, while notesoup
//! is on: Pi's agent loop runs past its compaction threshold, and no
//! compaction with a summary is ever saved. notesoup cancels Pi's threshold
//! compaction, or resets the window first; its resets are retain-none
//! checkpoints with an empty summary. With notesoup off the same settings
//! make Pi summarize, which shows the threshold really fires.

use notesoup_test_support::pi_session::reset_between;
use serde_json::{Value, json};

use super::support::{Report, World, text, three_long_parts, tool};

/// Every compaction entry the session file holds.
fn compaction_entries(report: &Report) -> Vec<Value> {
    report
        .entries()
        .into_iter()
        .filter(|e| e["type"] == "compaction")
        .collect()
}

/// No compaction entry carries a summary: each is notesoup's retain-none
/// checkpoint (empty summary, first kept entry itself, from the hook).
fn assert_no_summary_saved(report: &Report) {
    for entry in compaction_entries(report) {
        assert_eq!(entry["summary"], "", "a summary was saved: {entry}");
        assert_eq!(
            entry["firstKeptEntryId"], entry["id"],
            "retain-none: {entry}"
        );
        assert_eq!(entry["fromHook"], true, "{entry}");
    }
    for event in &report.compactions {
        if event["type"] == "compaction_end" {
            assert!(
                event["summary"].is_null(),
                "Pi finished a compaction with a summary: {event}"
            );
        }
    }
}

fn events(report: &Report) -> Vec<String> {
    report
        .compactions
        .iter()
        .map(|e| {
            let mut line = format!(
                "{} {}",
                e["type"].as_str().unwrap(),
                e["reason"].as_str().unwrap()
            );
            if e["type"] == "compaction_end" {
                line.push_str(&format!(" aborted={}", e["aborted"]));
            }
            line
        })
        .collect()
}

/// A window of 100,000 tokens and Pi's compaction on with a reserve of
/// 80,000: Pi's threshold (`contextTokens > window − reserveTokens`) is at
/// 20,000 tokens. notesoup clamps a reserve above half the window to half
/// the window (one warning), so its own lines come later: the warning at
/// 33,616 tokens, the hard reserve at 50,000.
#[test]
fn a_large_reserve_pi_s_threshold_compaction_is_cancelled_and_notesoup_resets_without_a_summary() {
    let world = World::large_reserve();
    let report = world.start(three_long_parts());
    report.assert_finished(0);
    assert_no_summary_saved(&report);

    // Pi's threshold compaction fired after part two (and again before part
    // three's run) and notesoup cancelled it each time: nothing was saved,
    // nothing was summarized.
    let events = events(&report);
    assert!(
        events.len() >= 2
            && events.chunks(2).all(|pair| pair
                == [
                    "compaction_start threshold".to_owned(),
                    "compaction_end threshold aborted=true".to_owned()
                ]),
        "{events:?}"
    );
    // Part three's request still holds part one whole: no summary stands in
    // for it.
    let third = report.request(2);
    assert!(
        third.iter().any(|m| m.starts_with("user: Part one. aaaa")),
        "{third:?}"
    );
    assert!(
        !third.iter().any(|m| m.contains("compacted int")),
        "{third:?}"
    );

    // Instead, notesoup's hard reserve reset the window (forced), as a
    // retain-none checkpoint, and the run went on in the fresh window.
    let kinds = report.kinds();
    let at = kinds
        .iter()
        .position(|k| k == "compaction")
        .expect("a reset");
    assert_eq!(kinds[at..], reset_between(&[], &["message:assistant"]));
    assert_eq!(compaction_entries(&report).len(), 1);
    assert_eq!(report.markers().len(), 1);
    assert_eq!(report.markers()[0].1, "forced");
    assert_eq!(
        report.notice_texts()[..2],
        [
            "notesoup: reserveTokens 80000 leaves too little of the 100000-token context window; clamped to 50000 tokens.",
            "notesoup: context almost full; close out the current memory window.",
        ]
    );
}

/// Pi's compaction on with a small reserve (2,000 of 100,000): Pi's
/// threshold is at 98,000 tokens, the same line as notesoup's hard reserve,
/// and notesoup's warning comes 16,384 tokens before it. The warning closes
/// the window out (the model calls `wipe_memory`) and the reset commits at
/// the turn's end, before Pi checks its threshold: Pi never starts a
/// compaction.
#[test]
fn a_small_reserve_notesoup_resets_first_and_pi_never_compacts() {
    let mut world = World::new(100_000);
    world.settings["compaction"] =
        json!({"enabled": true, "reserveTokens": 2_000, "keepRecentTokens": 1_000});
    let report = world.start(json!([
        {"respond": [tool("wipe_memory", json!({})), text("Fresh window.")]},
        {"prompt": format!("Do the big job. {}", "d".repeat(320_000))},
    ]));
    report.assert_finished(0);
    assert_no_summary_saved(&report);
    assert!(report.compactions.is_empty(), "{:?}", events(&report));
    super::support::assert_final_warning(&report.request(0));
    assert_eq!(compaction_entries(&report).len(), 1);
    assert_eq!(report.markers().len(), 1);
}

/// The control: the large reserve with notesoup off from the start (no
/// reset marker on the branch). Pi's threshold compaction then runs its own
/// summarizer on the model and saves a summary.
#[test]
fn with_notesoup_off_the_same_settings_make_pi_summarize() {
    let world = World::large_reserve();
    let report = world.start(json!([
        {"prompt": "/notesoup off"},
        {"respond": [
            text("First part read."),
            text("Second part read."),
            text("Summary: parts one and two were read."),
        ]},
        {"prompt": format!("Part one. {}", "a".repeat(60_000))},
        {"prompt": format!("Part two. {}", "b".repeat(40_000))},
    ]));
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert_eq!(
        report.pending_responses, 0,
        "the summary request took the third reply"
    );
    let summaries: Vec<String> = compaction_entries(&report)
        .iter()
        .map(|e| e["summary"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(summaries.len(), 1, "{summaries:?}");
    assert!(
        summaries[0].contains("Summary: parts one and two were read."),
        "{summaries:?}"
    );
    assert!(report.markers().is_empty());
}
