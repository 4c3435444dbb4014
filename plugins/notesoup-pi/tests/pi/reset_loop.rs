//! Scripted-loop tests of the reset lifecycle on the reference host.

use notesoup_pi::host::NotifyLevel;
use notesoup_pi::session::Entry;
use notesoup_pi::testkit::{HostEvent, Step};
use serde_json::json;

use crate::support::{ROOT, Scene, window};

#[test]
fn a_direct_wipe_without_warning_commits_at_turn_end_and_continues() {
    let mut scene = Scene::new(200_000);
    assert!(scene.notes_home().ends_with("notes"));
    scene
        .model()
        .push(Step::tool("wipe_memory", json!({})))
        .push(Step::text("Fresh and ready."));
    let before = scene.entry_count();
    scene.harness.prompt("Please wipe.");

    // The tool batch, then exactly one boundary in draft order.
    assert_eq!(
        scene.kinds_since(before),
        [
            "message:system",
            "message:user",
            "message:assistant",
            "message:toolResult",
            "compaction",
            "custom:notesoup/reset-marker",
            "custom_message:notesoup/boot",
            "custom_message:notesoup/continuation",
            "message:assistant",
        ]
    );
    assert_eq!(scene.markers(), [(window(1), "normal".to_owned())]);
    // The tool answered, and the run went on once in the fresh window.
    assert_eq!(scene.request_count(), 2);
    assert_eq!(
        scene.request(-1),
        [
            "system: You are a coding agent running in the notesoup reference hos…",
            "user: The conversation history before this point was compacted int…",
            "user: <context_window>⏎Agent name: tester (brain: scripted-1)⏎Firs…",
            "user: You wake up blank, puffy-eyed, and clearly robbed. Your memo…",
        ]
    );
    let results = scene.events(|e| match e {
        HostEvent::TurnEnd {
            continued, drafts, ..
        } => Some((*drafts, *continued)),
        _ => None,
    });
    assert_eq!(results, [(4, true), (0, false)]);
    assert_eq!(
        scene.notices_at(NotifyLevel::Info),
        [format!("notesoup: memory cleared · {}", window(1))]
    );
    assert_eq!(scene.settlements(), [false]);

    // The file on disk holds the same branch, byte-identical on rewrite.
    let file = scene.read_file();
    assert!(file.diagnostics().is_empty(), "{:?}", file.diagnostics());
    assert_eq!(
        file.to_jsonl().unwrap(),
        std::fs::read(scene.session_file()).unwrap()
    );
    let checkpoint = file
        .entries()
        .iter()
        .find_map(|e| match e {
            Entry::Compaction(c) => Some(c),
            _ => None,
        })
        .unwrap();
    assert!(checkpoint.is_retain_none());
    assert_eq!(checkpoint.summary, "");
    assert_eq!(checkpoint.from_hook, Some(true));
    assert!(checkpoint.system_message.is_some(), "system state kept");
    assert_eq!(scene.notices().len(), 1);
    let _ = ROOT;
}
