//! `history_search`.

use crate::tools::history::{HistorySearchParams, history_search};
use crate::tools::{ToolOutput, parse_arguments};
use insta::assert_snapshot;
use serde_json::json;

use super::fixture::*;

fn search(params: serde_json::Value) -> ToolOutput {
    let params: HistorySearchParams = parse_arguments(params).unwrap();
    history_search(&session(), &params)
}

fn hits(output: &ToolOutput) -> Vec<(u64, u64)> {
    output.json.to_value()["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| {
            (
                item["seq"].as_u64().unwrap(),
                item["offset_chars"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn searches_every_role_case_insensitively_and_never_folds() {
    let output = search(json!({"query": "PARSER"}));
    assert_eq!(hits(&output), [(2, 31), (4, 18), (8, 4), (9, 18)]);
    assert_snapshot!(ok_text(&output));
}

#[test]
fn queries_combine_with_or_and_previews_start_at_the_earliest_match() {
    let output = search(json!({"query": ["212", "SUITE"], "max_chars_per_item": 12}));
    assert_eq!(hits(&output), [(13, 18), (15, 74), (17, 4)]);
    assert_snapshot!(ok_text(&output));
}

#[test]
fn matching_is_unicode_aware() {
    let history = history(vec![window(
        "root",
        vec![
            user(1, "😀 Größe ÉTÉ"),
            user(2, "nothing"),
            assistant(3, "σοφος ΣΟΦΟΣ"),
        ],
    )]);
    let run = |query: serde_json::Value| {
        hits(&history_search(
            &history,
            &parse_arguments(json!({"query": query})).unwrap(),
        ))
    };
    assert_eq!(run(json!("été")), [(1, 8)]);
    assert_eq!(run(json!("GRÖSSE")), []);
    assert_eq!(run(json!("größe")), [(1, 2)]);
    assert_eq!(run(json!("σοφοσ")), [(3, 0)]);
}

#[test]
fn roles_windows_and_anchors_narrow_the_search() {
    assert_eq!(
        hits(&search(json!({"query": "parser", "roles": ["tool"]}))),
        [(4, 18), (9, 18)]
    );
    assert_eq!(
        hits(&search(json!({"query": "test", "window_id": "@previous"}))),
        [(2, 23), (5, 23)]
    );
    let page = search(json!({"query": "test", "limit": 1}));
    assert_eq!(hits(&page), [(17, 8)]);
    assert_eq!(page.json.to_value()["older_before"], 17);
    let older = search(json!({"query": "test", "limit": 1, "before": 17}));
    assert_eq!(hits(&older), [(15, 23)]);
    let newer = search(json!({"query": "test", "limit": 2, "after": 2}));
    assert_eq!(hits(&newer), [(5, 23), (15, 23)]);
    assert_eq!(newer.json.to_value()["newer_after"], 15);
}

#[test]
fn bad_queries_are_invalid_query() {
    for query in [json!([]), json!(["ok", 3]), json!(""), json!(["a", ""])] {
        let output = search(json!({"query": query}));
        let json = refusal(&output, "invalid_query");
        assert!(!json["error"].as_str().unwrap().is_empty());
    }
    assert_snapshot!(search(json!({"query": ""})).text);
}
