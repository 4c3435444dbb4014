//! The repository's adversarial corpora through Pi's entry points: every
//! address through the extension's `notes_write` tool, and every dreamer
//! path through the dream tools a Pi dreamer session calls. Each case gets
//! the corpus's answer, and nothing outside the notes root changes.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;

use notesoup_core::dream::{DreamTools, audit_commit, call_dream_tool};
use notesoup_pi::host::{PiExtension, ToolInvocation};
use notesoup_test_support::adversarial::corpus;
use notesoup_test_support::files::{put, tree};
use serde_json::json;

use crate::support::Scene;

#[test]
fn the_address_corpus_through_notes_write() {
    let cases = corpus("addresses.jsonl");
    assert!(cases.len() >= 150);
    let mut scene = Scene::new(200_000);
    let outside = scene.dir.path().join("project");
    let mut answered = std::collections::BTreeMap::<String, usize>::new();
    for case in &cases {
        let address = case["address"].as_str().unwrap();
        let expected = case["code"].as_str().unwrap();
        let before = tree(&outside);
        let result = scene.harness.extension.execute_tool(
            &mut scene.harness.host,
            &ToolInvocation {
                tool_call_id: "t".to_owned(),
                name: "notes_write".to_owned(),
                params: json!({"address": address, "content": "x"}),
            },
        );
        let label = format!("{address:?} ({})", case["why"]);
        if expected == "ok" {
            assert_eq!(result.is_error, None, "{label}: {:?}", result.content);
        } else {
            assert_eq!(result.is_error, Some(true), "{label}: written");
            let wire = result
                .structured_content
                .as_ref()
                .expect("a refusal")
                .to_value();
            assert_eq!(wire["code"], expected, "{label}");
        }
        assert_eq!(
            tree(&outside),
            before,
            "{label}: nothing outside the notes root"
        );
        *answered.entry(expected.to_owned()).or_default() += 1;
    }
    eprintln!("Pi notes_write, address corpus: {answered:?}");
}

#[test]
fn the_dreamer_paths_corpus_through_the_dream_tools() {
    let cases = corpus("dreamer-paths.jsonl");
    assert!(cases.len() >= 60);
    for case in &cases {
        let path = case["path"].as_str().unwrap();
        let expected = case["code"].as_str().unwrap();
        for op in case["ops"].as_array().unwrap() {
            let op = op.as_str().unwrap();
            let dir = tempfile::tempdir().unwrap();
            let home = fs::canonicalize(dir.path()).unwrap().join("notes");
            let outside = fs::canonicalize(dir.path()).unwrap().join("outside");
            fixture(&home, &outside);
            let before = (tree(&home), tree(&outside));
            let arguments = match op {
                "write" => json!({"path": path, "content": "pwned\n"}),
                "edit" => json!({"path": path, "edits": [{"oldText": "x", "newText": "pwned"}]}),
                _ => json!({"path": path}),
            };
            let result = call_dream_tool(&DreamTools::new(&home), op, arguments)
                .unwrap_or_else(|| panic!("{op} is a dream tool"));
            let label = format!("{op} {path:?} ({})", case["why"]);
            match (expected, result) {
                ("ok", Ok(_)) => {}
                ("ok", Err(error)) => panic!("{label}: {error}"),
                (_, Ok(done)) => panic!("{label}: expected {expected}, got {done}"),
                (_, Err(error)) => {
                    let prefix = match expected {
                        "not_a_note" => {
                            format!("write jail: {path} is not a note the dreamer may write: ")
                        }
                        _ => "write jail: ".to_owned(),
                    };
                    assert!(error.starts_with(&prefix), "{label}: {error}");
                    assert_eq!(
                        (tree(&home), tree(&outside)),
                        before,
                        "{label}: nothing changed"
                    );
                }
            }
        }
    }
}

/// The notes root the dreamer-paths corpus describes.
fn fixture(home: &Path, outside: &Path) {
    // A real audit repository: the baseline the dream's delete reads is
    // committed once the notes are in.
    fs::create_dir_all(home).unwrap();
    audit_commit(home, "init").unwrap();
    put(&home.join("dreams/2026-01-01.md"), "# Dream\n");
    put(
        &home.join(".dream.lock"),
        "1 00000000-0000-0000-0000-000000000000\n",
    );
    put(&home.join(".dream.lock.last-run"), "2026-01-01T00:00:00Z\n");
    put(
        &home.join("human/prefs.md"),
        "---\norigin: user\n---\n\nx\n",
    );
    put(
        &home.join("human/old.md"),
        "---\norigin: self\ncrumpledAt: 2026-01-01T00:00:00.000+00:00\n---\n\nx\n",
    );
    put(&home.join("human/x.txt"), "x\n");
    put(&home.join("human/x.md.bak"), "x\n");
    put(&outside.join("x.md"), "x\n");
    symlink(home.join(".git"), home.join("human/to-git")).unwrap();
    symlink(
        home.join(".git/config"),
        home.join("human/to-git-config.md"),
    )
    .unwrap();
    symlink(outside, home.join("human/out-link")).unwrap();
    symlink(outside.join("x.md"), home.join("human/out-file.md")).unwrap();
    audit_commit(home, "baseline").unwrap();
}
