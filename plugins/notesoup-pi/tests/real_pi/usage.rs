//! The context usage the sidecar computes from its mirror
//! (`estimate::coding_agent::context_usage_tokens`) is Pi 1.6.0's own
//! `AgentSession.getContextUsage()`: at every leaf of every golden session
//! and of sessions real Pi wrote with notesoup on (prompts, notesoup's
//! resets, Pi's own threshold and manual compactions, a `/tree` move), Pi's
//! value (`usage.mjs`) and the sidecar's are equal, tokens and percent.

use std::path::{Path, PathBuf};
use std::process::Command;

use notesoup_pi::estimate::{BranchStep, coding_agent};
use notesoup_pi::projection::project;
use notesoup_pi::session::{Leaf, SessionFile};
use serde_json::{Value, json};

use crate::support::{World, adapter_dir, text, three_long_parts, wait_bounded};

/// The sidecar's computation over one leaf of a session file, as
/// `{tokens, contextWindow, percent}` (`null` tokens and percent when
/// unknown after a compaction).
fn sidecar_usage(file: &SessionFile, leaf: Option<&str>, context_window: u64) -> Value {
    let index = file.index();
    let branch = leaf.map(|id| index.branch(id)).unwrap_or_default();
    let steps: Vec<BranchStep<'_>> = branch.iter().map(|entry| BranchStep::of(entry)).collect();
    let projection = project(&index, leaf.map_or(Leaf::Null, Leaf::Id));
    let tokens = coding_agent::context_usage_tokens(&projection, &steps);
    // Read from the end, where it answers, it answers the same.
    if !branch
        .iter()
        .any(|entry| matches!(entry, notesoup_pi::session::Entry::ContextEdit(_)))
    {
        let newest = branch
            .iter()
            .rposition(|entry| matches!(entry, notesoup_pi::session::Entry::Compaction(_)));
        let tail = branch[newest.map_or(0, |at| at + 1)..]
            .iter()
            .rev()
            .map(|entry| (entry.id(), *entry));
        if let Some(read) = coding_agent::usage_from_the_end(tail, newest.map(|at| branch[at].id()))
        {
            assert_eq!(read, tokens, "read from the end at {leaf:?}");
        }
    }
    json!({
        "tokens": tokens,
        "contextWindow": context_window,
        "percent": tokens.map(|tokens| tokens as f64 / context_window as f64 * 100.0),
    })
}

/// Pi's `getContextUsage()` at every leaf of `files`, then the sidecar's
/// at each: equal. Returns how many leaves were compared.
fn compare(world: &World, files: &[PathBuf]) -> usize {
    let plan = json!({
        "agentDir": world.path("usage-agent"),
        "cwd": world.path("project"),
        "sessionDir": world.path("usage-sessions"),
        "contextWindow": world.context_window,
        "files": files,
    });
    let plan_file = world.path("usage-plan.json");
    std::fs::write(&plan_file, plan.to_string()).unwrap();
    let child = Command::new(&world.pi.node)
        .arg(adapter_dir().join("tests/real_pi/usage.mjs"))
        .arg(&plan_file)
        .env("NOTESOUP_PI_NODE_MODULES", &world.pi.node_modules)
        .env("HOME", world.temp.path())
        .env("PI_CODING_AGENT_DIR", world.path("usage-agent"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let output = wait_bounded(child, "usage.mjs");
    assert!(
        output.status.success(),
        "usage.mjs failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let reports: Vec<Value> = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(reports.len(), files.len());
    let mut compared = 0;
    for report in reports {
        let path = Path::new(report["file"].as_str().unwrap());
        let file = SessionFile::read(path).unwrap();
        for leaf in report["leaves"].as_array().unwrap() {
            let leaf_id = leaf["leafId"].as_str();
            let pi = &leaf["usage"];
            assert!(pi.is_object(), "{}: Pi gave no usage", path.display());
            let window = pi["contextWindow"].as_u64().unwrap();
            assert_eq!(window, world.context_window);
            let ours = sidecar_usage(&file, leaf_id, window);
            assert_eq!(
                ours["tokens"],
                pi["tokens"],
                "{} @ {leaf_id:?}",
                path.display()
            );
            assert_eq!(
                ours["percent"].as_f64(),
                pi["percent"].as_f64(),
                "{} @ {leaf_id:?}: percent",
                path.display()
            );
            compared += 1;
        }
    }
    compared
}

#[test]
fn the_sidecar_computes_pi_s_own_context_usage_at_every_leaf() {
    // Copies of the goldens: opening a session under an agent session
    // appends Pi's thinking level to the file.
    let small = World::new(40_000);
    let golden = adapter_dir().join("tests/golden");
    let copies = small.path("goldens");
    std::fs::create_dir_all(&copies).unwrap();
    let mut files: Vec<PathBuf> = std::fs::read_to_string(golden.join("scenarios.txt"))
        .unwrap()
        .lines()
        .map(|name| {
            let copy = copies.join(format!("{name}.jsonl"));
            std::fs::copy(golden.join(format!("{name}.jsonl")), &copy).unwrap();
            copy
        })
        .collect();

    // Sessions real Pi writes with notesoup on: a small window, so
    // notesoup's budget resets the window (a retain-none compaction) ...
    let report = small.start(json!([
        {"respond": [text("One.")]},
        {"prompt": format!("Part one. {}", "a".repeat(60_000))},
        {"respond": [text("Two."), text("Fresh.")]},
        {"prompt": format!("Part two. {}", "b".repeat(60_000))},
        {"respond": [text("Three.")]},
        {"prompt": "Part three."},
        {"respond": [text("Four.")]},
        {"compact": true},
        {"respond": [text("Five.")]},
        {"prompt": "After the manual compaction."},
        {"navigate": {"userMessage": 1, "summarize": false}},
        {"respond": [text("Six.")]},
        {"prompt": "On another branch."},
    ]));
    files.push(report.session_file.clone());
    // ... and Pi's own threshold compaction on, with a large reserve.
    let large = World::large_reserve();
    let report = large.start(three_long_parts());
    let large_file = report.session_file.clone();

    let mut compared = compare(&small, &files);
    compared += compare(&large, &[large_file]);
    assert!(compared >= 60, "only {compared} leaves compared");
}
