//! Properties: walking pages visits every visible event once, every result
//! fits the budget, read windows reconstruct documents.

use std::collections::BTreeSet;

use crate::history::{
    History, ItemKind, MessageRole, Role, SeqSpan, ToolStatus, Transcript, TranscriptItem,
    TranscriptWindow,
};
use crate::tools::history::{
    HistoryListParams, HistoryReadParams, HistorySearchParams, HistoryWindowsParams, history_list,
    history_read, history_search, history_windows,
};
use proptest::prelude::*;
use serde_json::Value;

use super::fixture::{assert_fits, call, message, result_with, tool_result};

/// One generated item kind; seqs and ids are assigned in order.
#[derive(Debug, Clone)]
pub(super) enum Gen {
    Message(MessageRole, bool),
    Call(u8),
    Result(u8),
    NewWindow,
    OffBranch(u8),
}

pub(super) fn gen_item() -> impl Strategy<Value = Gen> {
    prop_oneof![
        3 => (prop_oneof![Just(MessageRole::User), Just(MessageRole::Assistant), Just(MessageRole::Context)], any::<bool>())
            .prop_map(|(role, empty)| Gen::Message(role, empty)),
        2 => (0u8..4).prop_map(Gen::Call),
        2 => (0u8..4).prop_map(Gen::Result),
        1 => Just(Gen::NewWindow),
        1 => (1u8..4).prop_map(Gen::OffBranch),
    ]
}

fn build(gens: &[Gen]) -> History {
    History::new(transcript_of(gens)).unwrap()
}

/// The transcript `gens` describe: the window, call and result ids, texts
/// and seqs depend only on the steps before, so the transcript of a prefix
/// of `gens` is a transcript the whole one continues.
pub(super) fn transcript_of(gens: &[Gen]) -> Transcript {
    let mut windows = vec![TranscriptWindow {
        id: "root".into(),
        created_at: None,
        items: vec![],
    }];
    let mut off_branch = vec![];
    let mut seq = 0;
    for step in gens {
        let items = &mut windows.last_mut().unwrap().items;
        let mut push = |item: TranscriptItem| items.push(item);
        match step {
            Gen::Message(role, empty) => {
                seq += 1;
                push(message(seq, *role, if *empty { "" } else { "Word ΣΟΦΟΣ" }));
            }
            Gen::Call(id) => {
                seq += 1;
                push(call(seq, &format!("tool{id}"), &format!("id{id}"), "{}"));
            }
            Gen::Result(id) => {
                seq += 1;
                push(tool_result(seq, &format!("id{id}"), "out"));
            }
            Gen::NewWindow => {
                let id = format!("w{}", windows.len());
                windows.push(TranscriptWindow {
                    id,
                    created_at: None,
                    items: vec![],
                });
            }
            Gen::OffBranch(count) => {
                off_branch.push(SeqSpan {
                    first: seq + 1,
                    last: seq + u32::from(*count),
                });
                seq += u32::from(*count);
            }
        }
    }
    Transcript {
        session_id: "s".into(),
        highest_seq: seq,
        off_branch,
        windows,
    }
}

fn event_seqs(page: &Value) -> Vec<u32> {
    page["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|item| item["seq"].as_u64())
        .map(|seq| seq as u32)
        .collect()
}

fn fold_count(page: &Value) -> u64 {
    page["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|item| item["count"].as_u64())
        .sum()
}

/// Walks pages from `start` in one direction, collecting event seqs and folded counts.
fn walk(history: &History, base: &HistoryListParams, older: bool) -> (Vec<u32>, u64) {
    let mut params = base.clone();
    let (mut seqs, mut folded) = (vec![], 0);
    if !older {
        params.after = Some(0);
    }
    for _ in 0..10_000 {
        let output = history_list(history, &params);
        assert!(!output.is_error, "{}", output.text);
        let page = output.json.to_value();
        let mut page_seqs = event_seqs(&page);
        assert!(
            page_seqs.windows(2).all(|pair| pair[0] < pair[1]),
            "ascending rows"
        );
        folded += fold_count(&page);
        let anchor = if older {
            &page["older_before"]
        } else {
            &page["newer_after"]
        };
        if older {
            page_seqs.extend(seqs);
            seqs = page_seqs;
        } else {
            seqs.extend(page_seqs);
        }
        match anchor.as_u64() {
            Some(seq) if older => params.before = Some(seq as u32),
            Some(seq) => params.after = Some(seq as u32),
            None => return (seqs, folded),
        }
    }
    panic!("walk did not end");
}

fn roles_strategy() -> impl Strategy<Value = Option<Vec<Role>>> {
    prop_oneof![
        2 => Just(None),
        1 => proptest::sample::subsequence(vec![Role::User, Role::Assistant, Role::Tool, Role::Context], 1..=4).prop_map(Some),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn walking_older_and_newer_visits_each_visible_event_once(
        gens in prop::collection::vec(gen_item(), 0..60),
        roles in roles_strategy(),
        limit in 1u32..6,
        window_choice in 0usize..4,
    ) {
        let history = build(&gens);
        let window = (window_choice < history.windows().len() && window_choice > 0)
            .then(|| history.windows()[window_choice].id.clone());
        let in_window = |event: &crate::history::HistoryEvent| {
            window.as_ref().is_none_or(|id| &history.windows()[event.window].id == id)
        };
        let expected: Vec<u32> = history.events().iter()
            .filter(|event| in_window(event))
            .filter(|event| match &roles {
                Some(roles) => roles.contains(&event.role),
                None => matches!(event.role, Role::User | Role::Assistant) && !event.document.is_empty(),
            })
            .map(|event| event.seq)
            .collect();
        let foldable = history.events().iter()
            .filter(|event| in_window(event) && matches!(event.role, Role::Tool | Role::Context))
            .count() as u64;
        let params = HistoryListParams { limit: Some(limit), roles: roles.clone(), window_id: window.clone(), ..Default::default() };
        for older in [true, false] {
            let (seqs, folded) = walk(&history, &params, older);
            prop_assert_eq!(&seqs, &expected, "older: {}", older);
            let unique: BTreeSet<u32> = seqs.iter().copied().collect();
            prop_assert_eq!(unique.len(), seqs.len());
            if roles.is_none() {
                prop_assert_eq!(folded, foldable, "every tool/context event folded once (older: {})", older);
            } else {
                prop_assert_eq!(folded, 0);
            }
        }
    }

    #[test]
    fn read_windows_reconstruct_the_document(
        text in "(?s)[a-zé😀\n\"\\\\\u{1}]{0,300}",
        start in -320i32..320,
        limits in prop::collection::vec(1u32..40, 1..100),
    ) {
        let history = super::fixture::history(vec![super::fixture::window("root", vec![message(1, MessageRole::User, &text)])]);
        let total = text.chars().count() as i64;
        let params = |offset: i32, limit: u32| HistoryReadParams { seq: 1, offset_chars: Some(offset), limit_chars: Some(limit) };
        let first = history_read(&history, &params(start, limits[0]));
        if i64::from(start) > total {
            let json = first.json.to_value();
            prop_assert_eq!(json["code"].as_str(), Some("invalid_offset"));
            return Ok(());
        }
        let resolved = if start < 0 { (total + i64::from(start)).max(0) } else { i64::from(start) } as usize;
        let mut rebuilt = String::new();
        let mut output = first;
        for limit in limits.iter().cycle().skip(1).take(1000) {
            let json = output.json.to_value();
            rebuilt.push_str(json["text"].as_str().unwrap());
            match json["next_offset_chars"].as_u64() {
                Some(next) => output = history_read(&history, &params(next as i32, *limit)),
                None => break,
            }
        }
        let expected: String = text.chars().skip(resolved).collect();
        prop_assert_eq!(rebuilt, expected);
    }
}

/// Large, multi-byte and astral inputs in every position a result shows.
fn huge_strategy() -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec!["a", "é", "😀", "\u{1}", "\"", "\n", "日本"]),
        0usize..300_000,
        "[a-z😀]{0,20}",
    )
        .prop_map(|(unit, count, tail)| format!("{}{tail}", unit.repeat(count)))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn every_history_result_fits_the_budget(
        text in huge_strategy(),
        name in huge_strategy(),
        window_id in "[a-z😀]{1,40}",
        max_chars in prop::option::of(1u32..2_000_000),
        limit in prop::option::of(1u32..200),
    ) {
        let mut items = vec![message(1, MessageRole::User, &text), message(2, MessageRole::Assistant, &text.chars().take(150_000).collect::<String>())];
        items.push(call(3, &name, "x", "{}"));
        items.push(result_with(4, "x", &text, |result| {
            result.status = ToolStatus::Error;
            result.output_truncated = true;
            result.full_output_path = Some(name.chars().take(100).collect());
        }));
        for seq in 5..40 {
            items.push(TranscriptItem { seq, created_at: None, kind: ItemKind::Message { role: MessageRole::User, text: format!("{seq} {}", name.chars().take(3000).collect::<String>()) } });
        }
        let history = History::new(Transcript {
            session_id: "s".into(),
            highest_seq: 39,
            off_branch: vec![],
            windows: vec![TranscriptWindow { id: window_id.clone(), created_at: Some(text.chars().take(50).collect()), items }],
        }).unwrap();
        assert_fits(&history_windows(&history, &HistoryWindowsParams {}));
        for roles in [None, Some(vec![Role::Tool]), Some(vec![Role::User, Role::Tool])] {
            let list = history_list(&history, &HistoryListParams { limit, roles: roles.clone(), max_chars_per_item: max_chars, ..Default::default() });
            assert_fits(&list);
            prop_assert!(!list.is_error, "{}", list.text);
            let search = history_search(&history, &HistorySearchParams {
                query: vec!["a", "😀", "\"", "1"].into(), limit, roles, before: None, after: None,
                window_id: Some(window_id.clone()), max_chars_per_item: max_chars,
            });
            assert_fits(&search);
        }
        for seq in [1, 3, 4, 39] {
            for offset in [None, Some(-5), Some(100_000)] {
                assert_fits(&history_read(&history, &HistoryReadParams { seq, offset_chars: offset, limit_chars: Some(50_000) }));
            }
        }
    }
}
