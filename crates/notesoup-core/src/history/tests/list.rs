//! `history_windows` and `history_list`.

use crate::history::Role;
use crate::tools::history::{
    HistoryListParams, HistoryWindowsParams, history_list, history_windows,
};
use insta::assert_snapshot;
use serde_json::json;

use super::fixture::*;

fn list(params: serde_json::Value) -> crate::tools::ToolOutput {
    let params: HistoryListParams = crate::tools::parse_arguments(params).unwrap();
    history_list(&session(), &params)
}

#[test]
fn windows_text() {
    let mut windows = vec![];
    windows.extend(session_windows());
    windows.push(window("pcw:3", vec![]));
    let output = history_windows(&history(windows), &HistoryWindowsParams {});
    assert_snapshot!(ok_text(&output));
    assert_eq!(
        output.json.to_value()["windows"][2],
        json!({"window_id": "pcw:3", "created_at": "2026-09-15T10:00:05+00:00", "first_seq": null, "last_seq": null, "item_count": 0, "end": "open", "tokens_at_end": null, "checkpoint_written": false})
    );
}

/// With the host's signals each window says why it ended, how full it was
/// and whether a checkpoint was written in it.
#[test]
fn windows_carry_their_ledger_fields() {
    use crate::history::{EndReason, WindowSignals};
    let mut history = history(vec![
        window(
            "root",
            vec![
                call(
                    1,
                    "notes_write",
                    "c1",
                    r#"{"address":"checkpoint","content":"goal"}"#,
                ),
                tool_result(2, "c1", "{}"),
                call(3, "wipe_memory", "c2", "{}"),
                tool_result(4, "c2", "{}"),
            ],
        ),
        window("pcw:2", vec![user(5, "again")]),
    ]);
    history.set_window_signals(vec![
        WindowSignals {
            fill: vec![(1, 3_538)],
            ended_by: Some(EndReason::Budget),
            ..WindowSignals::default()
        },
        WindowSignals {
            fill: vec![(5, 900)],
            ..WindowSignals::default()
        },
    ]);
    let output = history_windows(&history, &HistoryWindowsParams {});
    assert_eq!(
        ok_text(&output),
        "session session-1\n\
         window root | seqs 1-3 | 2 events | ended: tool at 3538 tokens | checkpoint written\n\
         window pcw:2 | seqs 5-5 | 1 event | open at 900 tokens"
    );
    let json = output.json.to_value();
    assert_eq!(json["windows"][0]["end"], "tool");
    assert_eq!(json["windows"][0]["tokens_at_end"], 3538);
    assert_eq!(json["windows"][0]["checkpoint_written"], true);
}

fn session_windows() -> Vec<crate::history::TranscriptWindow> {
    vec![
        window("root", vec![user(1, "hello"), assistant(2, "hi")]),
        window("pcw:2", vec![user(3, "again")]),
    ]
}

#[test]
fn windows_beyond_the_budget_are_counted() {
    let windows = (0..2000)
        .map(|index| window(&format!("pcw:{index:04}-{}", "w".repeat(40)), vec![]))
        .collect();
    let output = history_windows(&history(windows), &HistoryWindowsParams {});
    assert_fits(&output);
    let json = output.json.to_value();
    let shown = json["windows"].as_array().unwrap().len();
    assert!(shown > 100, "{shown}");
    assert_eq!(json["more"], 2000 - shown);
    assert!(output.text.ends_with(&format!(
        "\n{} more windows not shown; history_list also reports window ids on events",
        2000 - shown
    )));
}

#[test]
fn a_session_id_too_large_for_any_response_is_refused() {
    let mut transcript = transcript(vec![]);
    transcript.session_id = "s".repeat(40_000);
    let history = crate::history::History::new(transcript).unwrap();
    refusal(
        &history_windows(&history, &HistoryWindowsParams {}),
        "output_too_large",
    );
}

#[test]
fn conversation_view_folds_tool_and_context_runs() {
    let output = list(json!({}));
    assert_snapshot!(ok_text(&output));
    let json = output.json.to_value();
    assert_eq!(json["older_before"], json!(null));
    assert_eq!(json["newer_after"], json!(null));
    assert_eq!(
        json["items"][0],
        json!({"folded": true, "first_seq": 1, "last_seq": 1, "count": 1, "tools": {}})
    );
    assert_eq!(
        json["items"][2],
        json!({"folded": true, "first_seq": 4, "last_seq": 5, "count": 2, "tools": {"read": 1, "bash": 1}})
    );
}

#[test]
fn explicit_roles_list_every_matching_event_without_folds() {
    let output = list(json!({"roles": ["tool"], "limit": 2}));
    assert_snapshot!(ok_text(&output));
    let json = output.json.to_value();
    assert_eq!(json["older_before"], 9);
    assert_eq!(json["newer_after"], json!(null));
    assert_eq!(json["items"][1]["tool"], "bash");
    assert_eq!(json["items"][1]["tool_status"], "ok");
}

#[test]
fn anchors_select_pages_in_each_direction() {
    fn seqs(output: &crate::tools::ToolOutput) -> Vec<u64> {
        let json = output.json.to_value();
        json["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|item| item["seq"].as_u64())
            .collect()
    }
    let all = json!(["user", "assistant", "tool", "context"]);
    let check = |params: serde_json::Value,
                 expect: &[u64],
                 older: serde_json::Value,
                 newer: serde_json::Value| {
        let mut params = params;
        params["roles"] = all.clone();
        let output = list(params.clone());
        assert_eq!(seqs(&output), expect, "{params}");
        let json = output.json.to_value();
        assert_eq!(
            (json["older_before"].clone(), json["newer_after"].clone()),
            (older, newer),
            "{params}"
        );
    };
    check(json!({"limit": 3}), &[14, 15, 17], json!(14), json!(null));
    check(
        json!({"limit": 3, "before": 14}),
        &[11, 12, 13],
        json!(11),
        json!(null),
    );
    check(
        json!({"limit": 3, "after": 4}),
        &[5, 8, 9],
        json!(null),
        json!(9),
    );
    check(
        json!({"limit": 3, "after": 13}),
        &[14, 15, 17],
        json!(null),
        json!(null),
    );
    check(
        json!({"limit": 10, "after": 2, "before": 9}),
        &[3, 4, 5, 8],
        json!(null),
        json!(null),
    );
    check(
        json!({"limit": 2, "after": 2, "before": 9}),
        &[3, 4],
        json!(null),
        json!(4),
    );
    check(
        json!({"limit": 2, "before": 1}),
        &[],
        json!(null),
        json!(null),
    );
}

#[test]
fn folds_at_page_edges_follow_the_anchors() {
    // Newest page of one conversation row: the run before it belongs to the
    // older page, the run after it (none newer) is folded here.
    let output = list(json!({"limit": 1, "before": 12}));
    assert_snapshot!(ok_text(&output));
    // The older page picks up the run up to its `before` bound.
    let older = list(json!({"limit": 1, "before": 11}));
    assert_snapshot!(ok_text(&older));
}

#[test]
fn window_ids_narrow_the_page() {
    let output = list(json!({"window_id": "@previous"}));
    let json = output.json.to_value();
    assert!(
        json["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|item| item.get("window_id").is_none_or(|id| id == "root"))
    );
    let current = list(json!({"window_id": "pcw:2", "roles": ["user"]}));
    assert_snapshot!(ok_text(&current));
}

#[test]
fn unknown_windows_are_refused_with_known_ids() {
    let json = refusal(&list(json!({"window_id": "nope"})), "unknown_window_id");
    assert_eq!(json["error"], "unknown window_id \"nope\"");
    assert_eq!(
        json["details"],
        json!({"window_id": "nope", "known_windows": ["root", "pcw:2"]})
    );

    let many = history(
        (0..30)
            .map(|index| window(&format!("w{index}"), vec![]))
            .collect(),
    );
    let params = HistoryListParams {
        window_id: Some("x".to_owned()),
        ..Default::default()
    };
    let json = refusal(&history_list(&many, &params), "unknown_window_id");
    assert_eq!(
        json["details"]["known_windows"].as_array().unwrap().len(),
        25
    );
    assert_eq!(json["details"]["known_windows_omitted"], 5);

    // Exactly as many windows as are named: none omitted, and no count.
    let named = history(
        (0..25)
            .map(|index| window(&format!("w{index}"), vec![]))
            .collect(),
    );
    let json = refusal(&history_list(&named, &params), "unknown_window_id");
    assert_eq!(
        json["details"]["known_windows"].as_array().unwrap().len(),
        25
    );
    assert_eq!(json["details"].get("known_windows_omitted"), None);

    let single = history(vec![window("root", vec![user(1, "hi")])]);
    let params = HistoryListParams {
        window_id: Some("@previous".to_owned()),
        ..Default::default()
    };
    let output = history_list(&single, &params);
    refusal(&output, "unknown_window_id");
    assert_snapshot!(output.text);
}

#[test]
fn an_empty_selection_says_so() {
    let params = HistoryListParams {
        roles: Some(vec![Role::User]),
        after: Some(17),
        ..Default::default()
    };
    assert_eq!(
        ok_text(&history_list(&session(), &params)),
        "no events match this selection"
    );
}

#[test]
fn bad_arguments_are_refused() {
    refusal(&list(json!({"limit": 0})), "invalid_arguments");
    refusal(&list(json!({"max_chars_per_item": 0})), "invalid_arguments");
    refusal(&list(json!({"roles": []})), "invalid_arguments");
    let unknown: Result<HistoryListParams, _> =
        crate::tools::parse_arguments(json!({"limit": 1, "cursor": "x"}));
    let refusal = unknown.unwrap_err();
    assert_eq!(refusal.code().as_str(), "invalid_arguments");
    assert!(
        refusal.message().contains("cursor"),
        "{}",
        refusal.message()
    );
}

#[test]
fn long_documents_get_partial_previews() {
    let text = format!("{}é{}", "a".repeat(1500), "b".repeat(100));
    let history = history(vec![window("root", vec![user(1, &text)])]);
    let output = history_list(
        &history,
        &HistoryListParams {
            max_chars_per_item: Some(10),
            ..Default::default()
        },
    );
    assert_snapshot!(ok_text(&output));
    // A document exactly as long as the preview is shown whole.
    let exact = history_list(
        &history,
        &HistoryListParams {
            max_chars_per_item: Some(1601),
            ..Default::default()
        },
    );
    assert_eq!(exact.json.to_value()["items"][0]["truncated"], false);
    let default = history_list(&history, &HistoryListParams::default());
    let json = default.json.to_value();
    assert_eq!(json["items"][0]["truncated"], true);
    assert_eq!(json["items"][0]["total_chars"], 1601);
    assert_eq!(
        json["items"][0]["content"]
            .as_str()
            .unwrap()
            .chars()
            .count(),
        1200
    );
}

#[test]
fn folds_list_at_most_twenty_short_tool_names() {
    let mut items = vec![user(1, "go")];
    let mut seq = 2;
    for index in 0..25 {
        let name = if index == 24 {
            "x".repeat(121)
        } else {
            format!("tool{index}")
        };
        items.push(call(seq, &name, &format!("c{index}"), "{}"));
        seq += 1;
    }
    items.push(call(seq, "tool0", "again", "{}"));
    items.push(assistant(seq + 1, "done"));
    let output = history_list(
        &history(vec![window("root", items)]),
        &HistoryListParams::default(),
    );
    let json = output.json.to_value();
    let fold = &json["items"][1];
    assert_eq!(fold["count"], 26);
    assert_eq!(fold["tools"].as_object().unwrap().len(), 20);
    assert_eq!(fold["tools"]["tool0"], 2);
    assert_eq!(fold["omitted_tools"], 5);
    assert!(output.text.contains(" | 5 more tool names not listed\n\t→ expand: {\"after\":1,\"before\":28,\"roles\":[\"tool\",\"context\"]}"), "{}", output.text);
}

/// The newest page of `history` with previews of up to `max_chars`, checked
/// to fit the response budget.
fn fitting_page(history: &crate::history::History, max_chars: u32) -> crate::tools::ToolOutput {
    let params = HistoryListParams {
        max_chars_per_item: Some(max_chars),
        ..Default::default()
    };
    let output = history_list(history, &params);
    assert_fits(&output);
    output
}

#[test]
fn a_first_row_too_large_whole_gets_a_shorter_preview() {
    let text = "😀".repeat(20_000);
    let history = history(vec![window("root", vec![user(1, "older"), user(2, &text)])]);
    let output = fitting_page(&history, 50_000);
    let json = output.json.to_value();
    let items = json["items"].as_array().unwrap();
    assert_eq!(items.len(), 1, "only the shortened newest row fits");
    assert_eq!(items[0]["seq"], 2);
    assert_eq!(items[0]["truncated"], true);
    let shown = items[0]["content"].as_str().unwrap().chars().count();
    assert!(shown > 7_000 && shown < 8_192, "{shown}");
    assert_eq!(json["older_before"], 2);
    assert!(output.text.starts_with("seq 2 | window root | user\n[preview of 20000 chars from offset 0; read this seq for the rest]\n😀"));
}

/// Rows the byte budget leaves out are more to page through, though the
/// selection held no more than the limit: the page points at them.
#[test]
fn rows_left_out_for_the_budget_are_paged_to() {
    let text = "a".repeat(12_000);
    let history = history(vec![window(
        "root",
        (1..=3).map(|seq| user(seq, &text)).collect(),
    )]);
    let json = fitting_page(&history, 12_000).json.to_value();
    let seqs: Vec<_> = json["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["seq"].clone())
        .collect();
    assert_eq!(seqs, [json!(2), json!(3)]);
    assert_eq!(json["older_before"], 2);
}

#[test]
fn a_tool_name_too_large_to_show_is_omitted() {
    let name = "n".repeat(40_000);
    let history = history(vec![window(
        "root",
        vec![call(1, &name, "x", "{}"), tool_result(2, "x", "done")],
    )]);
    let params = HistoryListParams {
        roles: Some(vec![Role::Tool]),
        ..Default::default()
    };
    let output = history_list(&history, &params);
    assert_fits(&output);
    let json = output.json.to_value();
    let item = &json["items"][0];
    assert_eq!(item["tool_name_omitted"], true);
    assert!(item.get("tool").is_none());
    assert_eq!(item["truncated"], true);
    assert!(ok_text(&output).starts_with("seq 1 | window root | tool\ntool name omitted | status ok\n[preview of 40023 chars from offset 0; read this seq for the rest]\nnnn"));
}

#[test]
fn a_page_that_cannot_fit_even_at_its_smallest_is_refused() {
    let history = history(vec![window(&"w".repeat(40_000), vec![user(1, "hello")])]);
    let output = history_list(&history, &HistoryListParams::default());
    let json = refusal(&output, "page_too_large");
    assert_eq!(
        json["error"],
        "1 history rows and their fold summary do not fit one response even at their smallest; narrow the range with before/after or read one seq"
    );
    assert_eq!(json["details"], json!({"rows": 1}));
    let search = crate::tools::history::history_search(
        &history,
        &crate::tools::parse_arguments(json!({"query": "hello"})).unwrap(),
    );
    refusal(&search, "page_too_large");
}
