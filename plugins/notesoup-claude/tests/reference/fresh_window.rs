//! `/fresh-window [prompt]` on real Claude Code 2.1.332: the skill runs
//! the close-out, the Stop hook records it, and after `/clear` the next
//! window's first context ends with the prompt, verbatim.

use crate::claude::{BOOT_TEXT, Headless, inline_data_dir, one_starting};
use notesoup_test_support::fake_anthropic::{Reply, texts};

const PROMPT: &str = "write the tests next, then ship";

#[test]
fn fresh_window_closes_out_and_carries_its_prompt_through_clear() {
    let _terminal = crate::hosts::shared();
    let claude = Headless::new();
    let (sb, api) = (&claude.sb, &claude.api);
    api.script(vec![Reply::text("Closed out.")]);
    let first = claude.turn(&format!("/fresh-window {PROMPT}"), &[]);
    let session = first["session_id"].as_str().unwrap().to_owned();
    let requests = api.take_requests();
    let sent = texts(&requests[0]);
    // Claude Code runs the plugin's skill with the prompt as its arguments.
    assert!(
        sent.iter()
            .any(|t| t.contains(&format!("<command-args>{PROMPT}</command-args>"))),
        "{sent:#?}"
    );
    assert!(sent.iter().any(|t| t.contains("# Close out this window")));
    let record: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(inline_data_dir(sb).join(format!("sessions/{session}.json")))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(record["window"]["closeOutDone"], true, "{record}");
    assert_eq!(record["nextWindowPrompt"], PROMPT);

    let cleared = claude.turn("/clear", &["--resume", &session]);
    let next = cleared["session_id"].as_str().unwrap().to_owned();
    api.take_requests();
    api.script(vec![Reply::text("On it.")]);
    claude.turn("go on", &["--resume", &next]);
    let requests = api.take_requests();
    let boot = one_starting(&texts(&requests[0]), BOOT_TEXT);
    assert!(
        boot.contains(&format!("Current context window id: claude:{next}:2\n")),
        "{boot}"
    );
    assert!(
        boot.contains(&format!(
            "The human asked for this window (with /fresh-window):\n{PROMPT}\n"
        )),
        "{}",
        &boot[boot.len().saturating_sub(600)..]
    );
}
