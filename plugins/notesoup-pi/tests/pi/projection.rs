//! Projection behaviour beyond the goldens: notesoup's reset windows (the
//! legacy marker-only slice has no Pi oracle), tree edge cases Pi would hang
//! or crash on, and estimator corner cases.

use std::path::Path;

use notesoup_pi::estimate::{coding_agent, pi_ai};
use notesoup_pi::json::to_js_string;
use notesoup_pi::projection::{
    MarkerOrigin, WindowProjection, is_checkpoint_backed, project, project_path, reset_markers,
    window_projection,
};
use notesoup_pi::session::{AgentMessage, Entry, Leaf, SessionFile};

fn golden(name: &str) -> SessionFile {
    SessionFile::read(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/golden/{name}.jsonl")),
    )
    .unwrap()
}

/// An entry from its JSON.
fn entry(value: serde_json::Value) -> Entry {
    serde_json::from_value(value).unwrap()
}

fn roles(messages: impl IntoIterator<Item = impl AsRef<AgentMessage>>) -> Vec<String> {
    messages
        .into_iter()
        .map(|m| {
            let m = m.as_ref();
            match m {
                AgentMessage::Custom(custom) => format!("custom:{}", custom.custom_type),
                other => other.role().to_owned(),
            }
        })
        .collect()
}

#[test]
fn checkpoint_backed_markers_use_pi_projection() {
    let file = golden("retain-none");
    let index = file.index();
    let branch = index.path(Leaf::Last);
    let markers = reset_markers(&branch);
    let found: Vec<(&str, MarkerOrigin, bool)> = markers
        .iter()
        .map(|m| (m.window_id, m.origin, is_checkpoint_backed(&branch, m)))
        .collect();
    assert_eq!(
        found,
        [
            ("pcw:0195f000:aaaa1111", MarkerOrigin::Normal, true),
            ("pcw:0195f000:bbbb2222", MarkerOrigin::Forced, true)
        ]
    );
    let projection = project(&index, Leaf::Last);
    assert!(matches!(
        window_projection(&projection, &branch),
        WindowProjection::Checkpoint { marker } if marker.window_id == "pcw:0195f000:bbbb2222"
    ));
    // Retain-none keeps the system/tool state and the empty summary, nothing earlier.
    assert_eq!(
        roles(&projection.messages),
        [
            "system",
            "compactionSummary",
            "custom:notesoup/boot",
            "custom:notesoup/continuation"
        ]
    );
}

/// The roles of the legacy golden's window, sliced at its boot: the
/// folded system head, the boot, the continuation and the new exchange.
const LEGACY_SLICE_ROLES: [&str; 5] = [
    "system",
    "custom:pi-context/boot",
    "custom:pi-context/continuation",
    "user",
    "assistant",
];

#[test]
fn legacy_marker_slices_at_its_boot_and_folds_the_system_prefix() {
    let file = golden("legacy-marker");
    let index = file.index();
    let branch = index.path(Leaf::Last);
    let projection = project(&index, Leaf::Last);
    let WindowProjection::LegacySlice { marker, messages } =
        window_projection(&projection, &branch)
    else {
        panic!("expected a legacy slice");
    };
    assert_eq!(marker.window_id, "pcw:legacy:0001");
    assert_eq!(
        marker.origin,
        MarkerOrigin::Normal,
        "a legacy marker without origin reads as normal"
    );
    assert!(!is_checkpoint_backed(&branch, &marker));
    assert_eq!(
        roles(&messages),
        LEGACY_SLICE_ROLES,
        "earlier conversation excluded"
    );
    // The head replays the prompt, both section versions folded, and the tools.
    let AgentMessage::System(head) = messages[0].as_ref() else {
        panic!()
    };
    assert_eq!(to_js_string(&head.sections).unwrap(), r#"{"s":"<s>2</s>"}"#);
    assert_eq!(head.tools_added.as_ref().map(Vec::len), Some(1));
}

/// A boot of another window between a legacy marker and its own boot is
/// not where the window starts.
#[test]
fn a_legacy_slice_starts_at_the_boot_of_its_own_window() {
    let golden = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/legacy-marker.jsonl"),
    )
    .unwrap();
    let other_boot = r#"{"type":"custom_message","customType":"pi-context/boot","content":"Another window's boot.","display":false,"details":{"windowId":"pcw:legacy:9999"},"id":"0therb00","parentId":"ccb578cf","timestamp":"2026-03-01T09:02:40.000Z"}"#;
    let text: Vec<String> = golden
        .lines()
        .flat_map(|line| {
            let mut lines = vec![line.replace(
                r#""id":"1d51722a","parentId":"ccb578cf""#,
                r#""id":"1d51722a","parentId":"0therb00""#,
            )];
            if line.contains(r#""id":"ccb578cf""#) {
                lines.push(other_boot.to_owned());
            }
            lines
        })
        .collect();
    assert_eq!(text.len(), golden.lines().count() + 1);
    let file = SessionFile::parse(text.join("\n").as_bytes());
    let index = file.index();
    let branch = index.path(Leaf::Last);
    let projection = project(&index, Leaf::Last);
    let WindowProjection::LegacySlice { messages, .. } = window_projection(&projection, &branch)
    else {
        panic!("expected a legacy slice");
    };
    assert_eq!(roles(&messages), LEGACY_SLICE_ROLES);
}

#[test]
fn legacy_marker_without_boot_has_no_safe_context() {
    let file = golden("legacy-marker");
    let index = file.index();
    // The leaf right after the marker's system patch: the boot is not there yet.
    let marker_at = file
        .entries()
        .iter()
        .position(|e| matches!(e, Entry::Custom(_)))
        .unwrap();
    let leaf = file.entries()[marker_at + 1].id();
    let branch = index.branch(leaf);
    let projection = project(&index, Leaf::Id(leaf));
    assert!(matches!(
        window_projection(&projection, &branch),
        WindowProjection::MissingBoot { .. }
    ));
}

/// Only a retain-none compaction with an empty summary backs the marker
/// after it: one with a summary, or one that keeps earlier entries, is a
/// generic compaction.
#[test]
fn a_generic_compaction_does_not_back_a_marker() {
    for (summary, first_kept, backed) in [
        ("not empty", "c1", false),
        ("", "u1", false),
        ("", "c1", true),
    ] {
        let text = [
            r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}"#.to_owned(),
            r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"a","timestamp":1}}"#.to_owned(),
            format!(
                r#"{{"type":"compaction","id":"c1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","summary":"{summary}","firstKeptEntryId":"{first_kept}","tokensBefore":5}}"#
            ),
            r#"{"type":"custom","customType":"notesoup/reset-marker","data":{"windowId":"w1","origin":"normal"},"id":"m1","parentId":"c1","timestamp":"2026-01-01T00:00:03.000Z"}"#.to_owned(),
        ]
        .join("\n");
        let file = SessionFile::parse(text.as_bytes());
        let index = file.index();
        let branch = index.path(Leaf::Last);
        let markers = reset_markers(&branch);
        assert_eq!(markers.len(), 1);
        assert_eq!(
            is_checkpoint_backed(&branch, &markers[0]),
            backed,
            "{summary:?} {first_kept}"
        );
    }
}

#[test]
fn leaves_follow_pi_fallbacks() {
    let file = golden("branches");
    let index = file.index();
    assert!(
        project(&index, Leaf::Null).messages.is_empty(),
        "a null leaf selects nothing"
    );
    let last = project(&index, Leaf::Last).messages.len();
    assert_eq!(
        project(&index, Leaf::Id("no-such-id")).messages.len(),
        last,
        "an unknown leaf falls back to the last entry"
    );
    assert!(index.branch("no-such-id").is_empty());
}

#[test]
fn parent_cycles_end_the_walk_instead_of_hanging() {
    let text = [
        r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}"#,
        r#"{"type":"message","id":"a","parentId":"b","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"a","timestamp":1}}"#,
        r#"{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"b","timestamp":2}}"#,
        r#"{"type":"message","id":"c","parentId":"c","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"user","content":"c","timestamp":3}}"#,
    ]
    .join("\n");
    let file = SessionFile::parse(text.as_bytes());
    let index = file.index();
    let ids = |leaf: &str| {
        index
            .branch(leaf)
            .iter()
            .map(|e| e.id().to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(ids("b"), ["a", "b"]);
    assert_eq!(ids("c"), ["c"]);
    assert_eq!(project_path(&index.branch("b")).messages.len(), 2);
}

#[test]
fn pi_ai_usage_is_invalidated_by_an_older_insertion_and_by_missing_timestamps() {
    let line = |role_json: &str| serde_json::from_str::<AgentMessage>(role_json).unwrap();
    let assistant = |ts: i64| {
        line(&format!(
            r#"{{"role":"assistant","content":[{{"type":"text","text":"abcdefg"}}],"api":"a","provider":"p","model":"m","usage":{{"input":100,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}}},"stopReason":"stop","timestamp":{ts}}}"#
        ))
    };
    let user = |ts: i64| {
        line(&format!(
            r#"{{"role":"user","content":"abcdefg","timestamp":{ts}}}"#
        ))
    };
    // totalTokens 0 falls back to the sum of the parts.
    let fresh = pi_ai::estimate_context_tokens(&[user(1), assistant(2), user(3)]);
    assert_eq!(
        (
            fresh.usage_tokens,
            fresh.trailing_tokens,
            fresh.last_usage_index
        ),
        (100, 2, Some(1))
    );
    let stale = pi_ai::estimate_context_tokens(&[user(5), assistant(2)]);
    assert_eq!(
        (stale.tokens, stale.last_usage_index),
        (4, None),
        "a newer prefix invalidates the usage"
    );
    let unknown = line(r#"{"role":"mystery"}"#);
    let poisoned = pi_ai::estimate_context_tokens(&[unknown, assistant(2)]);
    assert_eq!(
        poisoned.last_usage_index, None,
        "NaN timestamps never apply"
    );
    // The coding-agent estimator has no timestamp rule.
    assert_eq!(
        coding_agent::estimate_context_tokens(&[user(5), assistant(2)]).last_usage_index,
        Some(1)
    );
}

/// `calculateContextTokens` is `totalTokens || input + output + cacheRead +
/// cacheWrite`, and an assistant reply whose usage counts 0 that way is no
/// usage (Pi skips "all-zero usage messages").
#[test]
fn context_tokens_are_the_total_or_the_sum_of_every_part_and_zero_is_no_usage() {
    let usage = |parts: &str| -> notesoup_pi::session::Usage {
        serde_json::from_str(&format!(
            r#"{{{parts},"cost":{{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}}}"#
        ))
        .unwrap()
    };
    let parts = r#""input":1000,"output":200,"cacheRead":30,"cacheWrite":4"#;
    assert_eq!(
        notesoup_pi::estimate::calculate_context_tokens(&usage(&format!(
            r#"{parts},"totalTokens":0"#
        ))),
        1234
    );
    assert_eq!(
        notesoup_pi::estimate::calculate_context_tokens(&usage(&format!(
            r#"{parts},"totalTokens":7"#
        ))),
        7
    );
    let message = |json: String| serde_json::from_str::<AgentMessage>(&json).unwrap();
    let reply = |parts: &str| {
        message(format!(
            r#"{{"role":"assistant","content":[{{"type":"text","text":"abcdefg"}}],"api":"a","provider":"p","model":"m","usage":{{{parts},"totalTokens":0,"cost":{{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}}},"stopReason":"stop","timestamp":2}}"#
        ))
    };
    let question = message(r#"{"role":"user","content":"abcdefg","timestamp":1}"#.to_owned());
    let zero = r#""input":0,"output":0,"cacheRead":0,"cacheWrite":0"#;
    for estimate in [
        coding_agent::estimate_context_tokens(&[question.clone(), reply(zero)]),
        pi_ai::estimate_context_tokens(&[question.clone(), reply(zero)]),
    ] {
        assert_eq!(
            (estimate.usage_tokens, estimate.last_usage_index),
            (0, None),
            "an all-zero usage is no usage"
        );
    }
    let counted = coding_agent::estimate_context_tokens(&[question, reply(parts)]);
    assert_eq!(
        (counted.usage_tokens, counted.last_usage_index),
        (1234, Some(1))
    );
}

/// pi-ai's `estimateToolsTokens`: an empty tool list counts nothing (its
/// JSON, `[]`, would be a token), a list counts its JSON.
#[test]
fn a_system_message_counts_its_tool_lists_only_when_they_hold_tools() {
    let system = |tools: &str| {
        serde_json::from_str::<AgentMessage>(&format!(
            r#"{{"role":"system","content":"abcdefg"{tools},"timestamp":1}}"#
        ))
        .unwrap()
    };
    let bare = pi_ai::estimate_message_tokens(&system(""));
    assert_eq!(bare, 2);
    assert_eq!(
        pi_ai::estimate_message_tokens(&system(r#","toolsAdded":[],"toolsRemoved":[]"#)),
        bare
    );
    let one = r#"{"name":"t","description":"d","parameters":{}}"#;
    assert_eq!(
        pi_ai::estimate_message_tokens(&system(&format!(r#","toolsAdded":[{one}]"#))),
        // 48 characters of JSON, 3.5 to a token.
        bare + 14
    );
}

/// One entry may stand at many places on a branch (a window branch's
/// stand-in for every message): every place of a marker is found, and an
/// entry that is no marker is none anywhere, repeated or not.
#[test]
fn reset_markers_are_found_among_repeated_entries() {
    let stand_in = entry(
        serde_json::json!({"type": "message", "id": "u", "parentId": null,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": {"role": "user", "content": "a question", "timestamp": 1}}),
    );
    let other = entry(
        serde_json::json!({"type": "custom", "id": "c", "parentId": null,
        "timestamp": "2026-01-01T00:00:00.000Z", "customType": "other", "data": {"windowId": "x"}}),
    );
    let marker = entry(
        serde_json::json!({"type": "custom", "id": "m", "parentId": null,
        "timestamp": "2026-01-01T00:00:00.000Z", "customType": "notesoup/reset-marker",
        "data": {"windowId": "pcw:0195f000:aaaa1111", "origin": "forced"}}),
    );
    let branch = [
        &stand_in, &stand_in, &marker, &marker, &stand_in, &other, &other, &marker, &stand_in,
    ];
    let found: Vec<(usize, &str, MarkerOrigin)> = reset_markers(&branch)
        .iter()
        .map(|m| (m.position, m.window_id, m.origin))
        .collect();
    let at = |position| (position, "pcw:0195f000:aaaa1111", MarkerOrigin::Forced);
    assert_eq!(found, [at(2), at(3), at(7)]);
}

/// One entry of a generated branch: ids come from a pool of four, so they
/// repeat.
#[derive(Debug, Clone)]
enum Step {
    User,
    Assistant { usable: bool },
    Compaction { kept: usize },
}

fn usage_step() -> impl proptest::strategy::Strategy<Value = (usize, Step)> {
    use proptest::prelude::*;
    (
        0..4usize,
        prop_oneof![
            Just(Step::User),
            any::<bool>().prop_map(|usable| Step::Assistant { usable }),
            any::<usize>().prop_map(|kept| Step::Compaction { kept }),
        ],
    )
}

/// `AgentSession.getContextUsage()`'s tokens as Pi computes them (1.6.0),
/// written out plainly: every id compared, the first match by id taken.
/// The branches generated hold no system message.
fn pi_usage_tokens(
    projection: &notesoup_pi::projection::Projection<'_>,
    branch: &[notesoup_pi::estimate::BranchStep<'_>],
) -> Option<u64> {
    let usable = |message: &AgentMessage| {
        matches!(message, AgentMessage::Assistant(assistant)
            if assistant.stop_reason == notesoup_pi::session::StopReason::Stop)
    };
    if let Some(latest) = branch.iter().rev().find(|step| step.compaction) {
        let projected: Vec<&str> = projection
            .entries
            .iter()
            .filter(|entry| projection.messages_of(entry).iter().any(|m| usable(m)))
            .map(|entry| entry.source.id())
            .collect();
        let after = branch
            .iter()
            .position(|step| step.id == latest.id)
            .map_or(0, |index| index + 1);
        if !branch[after..]
            .iter()
            .any(|step| projected.contains(&step.id))
        {
            return None;
        }
    }
    let estimate = coding_agent::estimate_context_tokens(&projection.messages);
    if let Some(usage_index) = estimate.last_usage_index {
        let usage_entry = projection
            .entries
            .iter()
            .find(|entry| usage_index < entry.messages.1);
        let usage_position = usage_entry
            .and_then(|entry| branch.iter().position(|step| step.id == entry.source.id()));
        let invalidating = branch
            .iter()
            .rposition(|step| step.context_edit || step.compaction);
        let trusted = match (usage_position, invalidating) {
            (Some(usage), Some(invalidating)) => usage > invalidating,
            (Some(_), None) => true,
            (None, _) => false,
        };
        if trusted {
            return Some(estimate.tokens);
        }
    }
    Some(
        projection
            .message_refs()
            .map(coding_agent::estimate_tokens)
            .sum(),
    )
}

proptest::proptest! {
    /// The sidecar's usage (which matches the newest entry with usage in
    /// its place before it compares ids) is Pi's, ids repeated or not; read
    /// from the end (the sidecar's first try), where it answers, it is
    /// Pi's on a branch as Pi builds one: walked through its id map, so no
    /// id stands twice on it.
    #[test]
    fn context_usage_is_pi_s(
        steps in proptest::collection::vec(usage_step(), 1..24),
        unique in proptest::bool::ANY,
    ) {
        let entries = usage_entries(&steps, unique);
        let (path, branch) = (entries.iter().collect::<Vec<_>>(), steps_of(&entries));
        let projection = project_path(&path);
        // The whole branch, and each part of it from some entry on: the
        // sidecar passes the branch from its newest compaction on.
        for from in 0..branch.len() {
            proptest::prop_assert_eq!(
                coding_agent::context_usage_tokens(&projection, &branch[from..]),
                pi_usage_tokens(&projection, &branch[from..]),
                "the branch from {}", from
            );
        }
        if !unique {
            return Ok(());
        }
        let newest = path
            .iter()
            .rposition(|entry| matches!(entry, Entry::Compaction(_)));
        let tail = path[newest.map_or(0, |at| at + 1)..]
            .iter()
            .rev()
            .map(|entry| (entry.id(), *entry));
        let read = coding_agent::usage_from_the_end(tail, newest.map(|at| path[at].id()));
        let pi = pi_usage_tokens(&projection, &branch);
        proptest::prop_assert!(read.is_none() || read == Some(pi), "{:?} against Pi's {:?}", read, pi);
        // It answers after a compaction, and without one whenever a usable
        // usage follows.
        let usable_after = steps[newest.map_or(0, |at| at + 1)..]
            .iter()
            .any(|(_, step)| matches!(step, Step::Assistant { usable: true }));
        proptest::prop_assert_eq!(read.is_some(), usable_after || newest.is_some());
    }
}

/// What Pi's usage reads of each of `entries`.
fn steps_of(entries: &[Entry]) -> Vec<notesoup_pi::estimate::BranchStep<'_>> {
    entries
        .iter()
        .map(notesoup_pi::estimate::BranchStep::of)
        .collect()
}

/// The entries of `steps`, each the child of the one before: ids from a
/// pool of four (so they repeat), or each its own (`unique`); a compaction
/// keeps from an earlier entry's id.
fn usage_entries(steps: &[(usize, Step)], unique: bool) -> Vec<Entry> {
    let pool = ["a", "b", "c", "d"];
    let id = |at: usize| {
        if unique {
            format!("e{at}")
        } else {
            pool[steps[at].0].to_owned()
        }
    };
    steps
        .iter()
        .enumerate()
        .map(|(at, (_, step))| {
            let mut entry = match step {
                Step::User => serde_json::json!({"type": "message",
                    "message": {"role": "user", "content": "a question", "timestamp": at}}),
                Step::Assistant { usable } => serde_json::json!({"type": "message",
                    "message": {"role": "assistant",
                        "content": [{"type": "text", "text": "an answer"}],
                        "api": "faux", "provider": "faux", "model": "faux-1",
                        "usage": {"input": 7, "output": 3, "cacheRead": 0, "cacheWrite": 0,
                            "totalTokens": 10,
                            "cost": {"input": 0, "output": 0, "cacheRead": 0,
                                "cacheWrite": 0, "total": 0}},
                        "stopReason": if *usable { "stop" } else { "aborted" },
                        "timestamp": at}}),
                Step::Compaction { kept } => serde_json::json!({"type": "compaction",
                    "summary": "so far", "tokensBefore": 10,
                    "firstKeptEntryId": if unique { id(kept % at.max(1)) } else { pool[kept % pool.len()].to_owned() }}),
            };
            entry["id"] = id(at).into();
            entry["parentId"] = if at == 0 { serde_json::Value::Null } else { id(at - 1).into() };
            entry["timestamp"] = "2026-01-01T00:00:00.000Z".into();
            serde_json::from_value(entry).unwrap()
        })
        .collect()
}

/// A branch that does not end as the projection does (not one the sidecar
/// builds): the newest projected entry with usage is compared by id with
/// the step in its place, and when they differ, every id is.
#[test]
fn usage_is_found_by_id_when_the_branch_and_the_projection_differ() {
    let answer = entry(
        serde_json::json!({"type": "message", "id": "a", "parentId": null,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": {"role": "assistant", "content": [{"type": "text", "text": "an answer"}],
            "api": "faux", "provider": "faux", "model": "faux-1",
            "usage": {"input": 7, "output": 3, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 10,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
            "stopReason": "stop", "timestamp": 1}}),
    );
    let projection = project_path(&[&answer]);
    let step = |id, compaction| notesoup_pi::estimate::BranchStep {
        id,
        compaction,
        context_edit: false,
    };
    for (branch, expected) in [
        (vec![step("c", true), step("z", false)], None),
        (
            vec![step("c", true), step("a", false), step("z", false)],
            Some(10),
        ),
    ] {
        assert_eq!(
            coding_agent::context_usage_tokens(&projection, &branch),
            pi_usage_tokens(&projection, &branch)
        );
        assert_eq!(
            coding_agent::context_usage_tokens(&projection, &branch).is_some(),
            expected.is_some()
        );
    }
}
