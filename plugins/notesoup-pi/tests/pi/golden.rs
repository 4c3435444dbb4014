//! Conformance with the real Pi SDK 1.6.0: the committed goldens in
//! `tests/golden` were written by Pi's own SessionManager (`cargo xtask
//! golden-pi`); each `.expected.json` is Pi's own reading of its file.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use notesoup_pi::estimate::{coding_agent, pi_ai};
use notesoup_pi::json::to_js_string;
use notesoup_pi::projection::{context_entries, convert_to_llm, current_system_message, project};
use notesoup_pi::session::{
    AgentMessage, Entry, EntryIndex, Leaf, SessionFile, entry_line, header_line,
};
use serde::Serialize;
use serde_json::Value;

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

fn scenarios() -> Vec<String> {
    let list = std::fs::read_to_string(golden_dir().join("scenarios.txt")).unwrap();
    list.lines().map(str::to_owned).collect()
}

/// Each scenario in turn: its name, its file parsed, its bytes and Pi's own
/// reading of it.
fn goldens() -> impl Iterator<Item = (String, SessionFile, Vec<u8>, Value)> {
    let dir = golden_dir();
    scenarios().into_iter().map(move |name| {
        let bytes = std::fs::read(dir.join(format!("{name}.jsonl"))).unwrap();
        let expected: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join(format!("{name}.expected.json"))).unwrap(),
        )
        .unwrap();
        (name, SessionFile::parse(&bytes), bytes, expected)
    })
}

/// JSON as `JSON.stringify` writes it, for exact comparison (key order included).
fn js<T: Serialize + ?Sized>(value: &T) -> String {
    to_js_string(value).unwrap()
}

#[test]
fn every_scenario_is_committed() {
    let names = scenarios();
    assert!(names.len() >= 8, "{names:?}");
    for name in &names {
        assert!(
            golden_dir().join(format!("{name}.jsonl")).is_file(),
            "{name}"
        );
    }
}

#[test]
fn goldens_parse_cleanly_and_fully_typed() {
    for (name, file, _, _) in goldens() {
        assert!(
            file.diagnostics().is_empty(),
            "{name}: {:?}",
            file.diagnostics()
        );
        assert!(file.is_loadable_by_pi(), "{name}");
        for entry in file.entries() {
            assert!(
                !matches!(entry, Entry::Unknown(_)),
                "{name}: untyped entry {}",
                entry.id()
            );
            if let Some(message) = entry.message() {
                assert!(
                    !matches!(message, AgentMessage::Unknown(_)),
                    "{name}: untyped message in {}",
                    entry.id()
                );
            }
        }
    }
}

/// Serialising the typed header and entries reproduces Pi's lines byte for byte.
#[test]
fn typed_reserialisation_is_byte_identical() {
    for (name, file, bytes, _) in goldens() {
        let text = String::from_utf8(bytes).unwrap();
        let mut lines = text.lines();
        assert_eq!(
            header_line(file.header().unwrap()).unwrap(),
            lines.next().unwrap(),
            "{name}: header"
        );
        for (entry, line) in file.entries().iter().zip(lines) {
            assert_eq!(
                entry_line(entry).unwrap(),
                line,
                "{name}: entry {}",
                entry.id()
            );
        }
    }
}

#[test]
fn rewrite_is_byte_identical() {
    for (name, file, bytes, _) in goldens() {
        assert_eq!(file.to_jsonl().unwrap(), bytes, "{name}");
    }
}

/// Labels as Pi rebuilds them from `label` entries in file order: a later
/// label replaces an earlier one, and one with no or empty text clears it.
/// (No golden session holds a label.)
#[test]
fn labels_are_rebuilt_in_file_order() {
    let label = |id: &str, target: &str, text: Option<&str>| {
        let text = text.map_or(String::new(), |text| format!(r#","label":"{text}""#));
        format!(
            r#"{{"type":"label","id":"{id}","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","targetId":"{target}"{text}}}"#
        )
    };
    let text = [
        r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}"#.to_owned(),
        label("l1", "a", Some("first")),
        label("l2", "a", Some("second")),
        label("l3", "b", Some("kept")),
        label("l4", "c", Some("gone")),
        label("l5", "c", None),
        label("l6", "d", Some("gone too")),
        label("l7", "d", Some("")),
    ]
    .join("\n");
    let file = SessionFile::parse(text.as_bytes());
    let index = file.index();
    let mut labels: Vec<(&str, &str)> = index.labels().into_iter().collect();
    labels.sort_unstable();
    assert_eq!(labels, [("a", "second"), ("b", "kept")]);
}

#[test]
fn file_metadata_matches_pi() {
    for (name, file, _, expected) in goldens() {
        let index = file.index();
        assert_eq!(
            index.last_id(),
            expected["fileLeafId"].as_str(),
            "{name}: leaf"
        );
        assert_eq!(
            index.session_name(),
            expected["sessionName"].as_str(),
            "{name}: session name"
        );
        let labels = index.labels();
        let expected_labels = expected["labels"].as_object().unwrap();
        assert_eq!(
            labels.len(),
            expected_labels.len(),
            "{name}: labels {labels:?}"
        );
        for (target, label) in expected_labels {
            assert_eq!(
                labels.get(target.as_str()).copied(),
                label.as_str(),
                "{name}: label of {target}"
            );
        }
    }
}

fn ids(entries: &[&Entry]) -> Vec<String> {
    entries.iter().map(|entry| entry.id().to_owned()).collect()
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect()
}

/// One leaf of one scenario against Pi's dump, field by field.
fn check_leaf(name: &str, index: &EntryIndex<'_>, expected: &Value) {
    let leaf_id = expected["leafId"].as_str();
    let at = format!("{name} @ {leaf_id:?}");
    let leaf = leaf_id.map_or(Leaf::Null, Leaf::Id);
    let branch = leaf_id.map(|id| index.branch(id)).unwrap_or_default();
    assert_eq!(ids(&branch), strings(&expected["branch"]), "{at}: branch");
    let path = index.path(leaf);
    assert_eq!(
        ids(&context_entries(&path)),
        strings(&expected["contextEntries"]),
        "{at}: context entries"
    );

    let projection = project(index, leaf);
    let shape: Vec<(String, usize)> = projection
        .entries
        .iter()
        .map(|e| (e.source.id().to_owned(), e.range().len()))
        .collect();
    let expected_shape: Vec<(String, usize)> = expected["projection"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["sourceId"].as_str().unwrap().to_owned(),
                e["messageCount"].as_u64().unwrap() as usize,
            )
        })
        .collect();
    assert_eq!(shape, expected_shape, "{at}: projected entries");
    assert_eq!(
        js(&projection.messages),
        js(&expected["projection"]["messages"]),
        "{at}: projected messages"
    );
    assert_eq!(
        projection.thinking_level,
        expected["projection"]["thinkingLevel"].as_str().unwrap(),
        "{at}"
    );
    assert_eq!(
        js(&projection.model),
        js(&expected["projection"]["model"]),
        "{at}: model"
    );

    let llm = convert_to_llm(projection.message_refs());
    assert_eq!(js(&llm), js(&expected["llm"]), "{at}: convertToLlm");
    let system = current_system_message(projection.message_refs()).map(AgentMessage::System);
    assert_eq!(
        js(&system),
        js(&expected["currentSystemMessage"]),
        "{at}: current system message"
    );

    let estimates = &expected["estimates"];
    let per_message: Vec<u64> = projection
        .message_refs()
        .map(coding_agent::estimate_tokens)
        .collect();
    assert_eq!(
        js(&per_message),
        js(&estimates["codingAgentPerMessage"]),
        "{at}: estimateTokens"
    );
    assert_eq!(
        js(&coding_agent::estimate_context_tokens(&projection.messages)),
        js(&estimates["codingAgent"]),
        "{at}: coding-agent estimateContextTokens"
    );
    assert_eq!(
        js(&coding_agent::estimate_projected_context_tokens(
            &projection,
            &branch
        )),
        js(&estimates["projected"]),
        "{at}: estimateProjectedContextTokens"
    );
    let llm_refs: Vec<&AgentMessage> = llm.iter().map(Cow::as_ref).collect();
    let per_llm: Vec<u64> = llm_refs
        .iter()
        .map(|m| pi_ai::estimate_message_tokens(m))
        .collect();
    assert_eq!(
        js(&per_llm),
        js(&estimates["piAiPerMessage"]),
        "{at}: pi-ai estimateMessageTokens"
    );
    assert_eq!(
        js(&pi_ai::estimate_context_tokens(&llm_refs)),
        js(&estimates["piAi"]),
        "{at}: pi-ai estimateContextTokens"
    );
}

#[test]
fn projection_and_estimates_match_pi() {
    let mut leaves = 0;
    for (name, file, _, expected) in goldens() {
        let index = file.index();
        for leaf in expected["leaves"].as_array().unwrap() {
            check_leaf(&name, &index, leaf);
            leaves += 1;
        }
    }
    assert!(leaves >= 15, "only {leaves} leaves checked");
}
