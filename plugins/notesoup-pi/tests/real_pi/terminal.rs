//! The real `pi` command in a tmux pane: the package installed with
//! `notesoup-pi install` (which runs `pi install <dir>`) into a temporary
//! agent directory, the model served by a fake OpenAI-compatible endpoint on
//! 127.0.0.1 configured through Pi's `models.json`, typed prompts.

use std::path::PathBuf;

use serde_json::{Value, json};

use super::support::{Endpoint, Pi, PiHome, assert_tmux, message_texts, walk};

#[test]
fn the_pi_command_installs_notesoup_writes_a_note_resets_and_answers_from_its_boot() {
    let pi = Pi::from_env();
    assert_tmux();
    let home = PiHome::new(&pi, "notesoup-pi-term-");
    let (root, agent, notes) = (&home.root, &home.agent, &home.notes);

    // Step one of the README: notesoup-pi install (pi is on PATH, so it runs
    // `pi install <dir>` itself).
    let package = home.install();
    let settings: Value =
        serde_json::from_str(&std::fs::read_to_string(agent.join("settings.json")).unwrap())
            .unwrap();
    let recorded = settings["packages"][0].as_str().expect("a package entry");
    assert_eq!(
        agent.join(recorded).canonicalize().unwrap(),
        package.canonicalize().unwrap()
    );
    let sidecar: Value =
        serde_json::from_str(&std::fs::read_to_string(package.join("sidecar.json")).unwrap())
            .unwrap();
    assert_eq!(
        PathBuf::from(sidecar["command"].as_str().unwrap()),
        PathBuf::from(env!("CARGO_BIN_EXE_notesoup-pi"))
    );

    // The fake endpoint and models.json.
    let script = json!([
        {"tools": [{"name": "notes_write", "args": {"address": "@project/answer.md", "content": "The answer is 42.\n"}}]},
        {"text": "Saved the answer in my notes."},
        {"tools": [{"name": "wipe_memory", "args": {}}]},
        {"text": "Fresh window: the answer is in @project/answer.md."},
    ]);
    let server = Endpoint::start(&pi, root, &script);
    let models = server.models_json(&[("fake-1", "Fake One")]);
    std::fs::write(agent.join("models.json"), models.to_string()).unwrap();

    // The real pi command in a pane.
    let pane = home.start_pi(
        format!("notesoup-pi-{}", std::process::id()),
        " --model fake/fake-1",
    );
    pane.wait_for("the notesoup extension loaded", |pane| {
        pane.contains("notesoup.ts") && pane.contains("fake-1")
    });

    pane.type_line("Remember: the answer is 42.");
    pane.wait_for("the note written and the answer", |pane| {
        pane.contains("Saved the answer in my notes.")
    });
    let written = std::fs::read_to_string(
        walk(&notes.join("project"))
            .into_iter()
            .find(|p| p.ends_with("answer.md"))
            .expect("the note on disk"),
    )
    .unwrap();
    assert!(written.ends_with("The answer is 42.\n"), "{written}");
    let first = message_texts(&server.requests()[0]);
    assert!(
        first
            .iter()
            .any(|(role, text)| role == "user" && text.starts_with("<context_window>")),
        "the root boot went out first: {first:?}"
    );

    pane.type_line("Now wipe your memory.");
    pane.wait_for("the fresh window's answer", |pane| {
        pane.contains("Fresh window: the answer is in @project/answer.md.")
    });
    let pane = pane.text();
    assert!(pane.contains("notesoup: memory cleared · pcw:"), "{pane}");

    // The fresh window's request: the boot (showing the note) and the
    // continuation, no turn from before the reset.
    let all = server.requests();
    assert_eq!(all.len(), 4);
    let fresh = message_texts(&all[3]);
    let text: String = fresh.iter().map(|(_, t)| t.as_str()).collect();
    assert!(text.contains("@project/answer.md"), "{fresh:?}");
    assert!(text.contains("You wake up blank"), "{fresh:?}");
    assert!(!text.contains("Remember: the answer is 42."), "{fresh:?}");
    assert!(!text.contains("Now wipe your memory."), "{fresh:?}");
    drop(pane);
    drop(server);
}
