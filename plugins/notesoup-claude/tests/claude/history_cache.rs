//! The MCP server's history cache never serves a stale decode: for random
//! transcripts written in random pieces (appends that end mid-line
//! included; tool calls answered in a later append; rewinds), the cached
//! history equals a fresh decode after every append.

use std::io::Write;

use notesoup_claude::state::ClaudeSessionState;
use notesoup_claude::tools::history::{cached_chain_history, chain_history};
use proptest::prelude::*;

/// One transcript row of a few kinds, chained by uuid.
fn row(kind: u8, n: usize) -> String {
    let parent = if n == 0 {
        "null".to_owned()
    } else {
        format!("\"r{}\"", n - 1)
    };
    let call = n % 3;
    match kind % 7 {
        0 => format!(
            r#"{{"type":"user","uuid":"r{n}","parentUuid":{parent},"isSidechain":false,"message":{{"role":"user","content":"prompt {n}"}}}}"#
        ),
        1 => format!(
            r#"{{"type":"assistant","uuid":"r{n}","parentUuid":{parent},"isSidechain":false,"message":{{"id":"m{n}","model":"claude-opus-5-5","role":"assistant","content":[{{"type":"text","text":"answer {n}"}}]}}}}"#
        ),
        2 => format!(
            r#"{{"type":"system","subtype":"compact_boundary","uuid":"r{n}","parentUuid":null,"logicalParentUuid":{parent},"content":"Conversation compacted"}}"#
        ),
        3 => format!(
            r#"{{"type":"assistant","uuid":"r{n}","parentUuid":{parent},"isSidechain":false,"message":{{"id":"m{n}","model":"claude-opus-5-5","role":"assistant","content":[{{"type":"tool_use","id":"t{call}","name":"Bash","input":{{"command":"ls {n}"}}}}]}}}}"#
        ),
        4 => format!(
            r#"{{"type":"user","uuid":"r{n}","parentUuid":{parent},"isSidechain":false,"message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"t{call}","content":"out {n}","is_error":false}}]}}}}"#
        ),
        // A rewind: the prompt continues from the row before the previous
        // one, so the previous row leaves the branch.
        5 => {
            let grandparent = if n < 2 {
                "null".to_owned()
            } else {
                format!("\"r{}\"", n - 2)
            };
            format!(
                r#"{{"type":"user","uuid":"r{n}","parentUuid":{grandparent},"isSidechain":false,"message":{{"role":"user","content":"again {n}"}}}}"#
            )
        }
        _ => "not json at all".to_owned(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn the_cache_equals_a_fresh_decode_after_every_append(
        kinds in proptest::collection::vec(any::<u8>(), 1..40),
        cuts in proptest::collection::vec(1usize..400, 1..12),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s1.jsonl");
        let state = ClaudeSessionState::new_chain("s1", path.clone(), dir.path().into(), "p-12345678".into());
        let text: String = kinds
            .iter()
            .enumerate()
            .map(|(n, kind)| row(*kind, n) + "\n")
            .collect();
        let bytes = text.as_bytes();
        let mut cache = None;
        let mut written = 0;
        let mut file = std::fs::File::create(&path).unwrap();
        for cut in cuts.iter().chain(std::iter::once(&bytes.len())) {
            let end = (written + cut).min(bytes.len());
            file.write_all(&bytes[written..end]).unwrap();
            file.flush().unwrap();
            written = end;
            let cached = cached_chain_history(&mut cache, &state).unwrap();
            let fresh = chain_history(&state).unwrap();
            prop_assert_eq!(cached, fresh);
            // Asked again without a change: the same.
            let again = cached_chain_history(&mut cache, &state).unwrap();
            prop_assert_eq!(again, chain_history(&state).unwrap());
            if written == bytes.len() {
                break;
            }
        }
    }
}

/// The first window's start comes with the first timestamped row. When
/// that row is appended after the history was built, the kept decode is
/// extended but the history refuses it (a window changed its start): the
/// history is built again from the files, not served stale.
#[test]
fn a_first_timestamp_after_the_history_was_built_builds_it_again() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s1.jsonl");
    let state =
        ClaudeSessionState::new_chain("s1", path.clone(), dir.path().into(), "p-12345678".into());
    std::fs::write(
        &path,
        "{\"type\":\"user\",\"uuid\":\"r0\",\"parentUuid\":null,\"message\":{\"content\":\"one\"}}\n",
    )
    .unwrap();
    let mut cache = None;
    let first = cached_chain_history(&mut cache, &state).unwrap();
    assert_eq!(first.windows()[0].created_at, None);
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.write_all(b"{\"type\":\"user\",\"uuid\":\"r1\",\"parentUuid\":\"r0\",\"timestamp\":\"2026-01-01T00:00:00Z\",\"message\":{\"content\":\"two\"}}\n").unwrap();
    let cached = cached_chain_history(&mut cache, &state).unwrap();
    assert_eq!(cached, chain_history(&state).unwrap());
    assert_eq!(
        cached.windows()[0].created_at.as_deref(),
        Some("2026-01-01T00:00:00Z")
    );
    assert_eq!(cached.events().len(), 2);
}

/// The recorded compactions that keep rows, grown a line at a time: the
/// server's cached history equals a fresh one after each line, with one
/// window per compaction at the end.
#[test]
fn the_cache_equals_a_fresh_decode_on_each_recorded_compaction() {
    for (name, windows) in crate::decode::COMPACTIONS {
        if !name.starts_with("kept-") {
            continue;
        }
        let (session, recorded) = crate::decode::compaction(name);
        let bytes = std::fs::read(&recorded.path).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(format!("{session}.jsonl"));
        let state = ClaudeSessionState::new_chain(
            &session,
            path.clone(),
            dir.path().into(),
            "p-12345678".into(),
        );
        let mut file = std::fs::File::create(&path).unwrap();
        let mut cache = None;
        for line in bytes.split_inclusive(|byte| *byte == b'\n') {
            file.write_all(line).unwrap();
            file.flush().unwrap();
            let cached = cached_chain_history(&mut cache, &state).unwrap();
            assert_eq!(cached, chain_history(&state).unwrap(), "{name}");
        }
        let cached = cached_chain_history(&mut cache, &state).unwrap();
        assert_eq!(cached.windows().len(), windows, "{name}");
    }
}
