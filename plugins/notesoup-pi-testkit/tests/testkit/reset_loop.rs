//! Scripted-loop tests of the reset lifecycle on the reference host.

use notesoup_pi::host::NotifyLevel;
use notesoup_pi::session::Entry;
use notesoup_pi_testkit::{HostEvent, ScriptedReply, Step, UserAction};
use notesoup_test_support::pi_session::{RESET, reset_between};
use serde_json::json;

use crate::support::{FRESH_WINDOW, ROOT, Scene, window};

#[test]
fn a_direct_wipe_without_warning_commits_at_turn_end_and_continues() {
    let mut scene = Scene::new(200_000);
    assert!(scene.notes_home().ends_with("notes"));
    scene
        .model()
        .push(Step::tool("wipe_memory", json!({})))
        .push(Step::text("Fresh and ready."));

    // The tool batch, then exactly one boundary in draft order.
    assert_eq!(
        scene.kinds_after(|harness| harness.prompt("Please wipe.")),
        reset_between(
            &[
                "message:system",
                "message:user",
                "message:assistant",
                "message:toolResult"
            ],
            &["message:assistant"]
        )
    );
    assert_eq!(scene.markers(), [(window(1), "normal".to_owned())]);
    // The tool answered, and the run went on once in the fresh window.
    assert_eq!(scene.request_count(), 2);
    assert_eq!(scene.request(-1), FRESH_WINDOW);
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

/// The texts of every user and custom message of the branch after `from`
/// entries, for delivery counts.
fn delivered(scene: &Scene, text: &str) -> usize {
    scene
        .harness
        .host
        .session
        .entries()
        .iter()
        .filter(|entry| match entry.message() {
            Some(message) => notesoup_pi_testkit::message_text(message) == text,
            None => false,
        })
        .count()
}

fn checkpoint_note() -> Step {
    Step::tool(
        "notes_write",
        json!({"address": "checkpoint.md", "content": "# Checkpoint\n\nNext: keep going.\n"}),
    )
}

#[test]
fn idle_fresh_window_closes_out_commits_at_settle_and_stops() {
    let mut scene = Scene::scripted(
        200_000,
        [
            checkpoint_note(),
            Step::tool("wipe_memory", json!({})),
            Step::text("unused"),
        ],
    );
    let before = scene.entry_count();
    scene.harness.command("/fresh-window").unwrap();

    assert_eq!(
        scene.kinds_since(before),
        reset_between(
            &[
                "message:system",
                "custom_message:notesoup/manual-wipe",
                "message:assistant",
                "message:toolResult",
                "message:assistant",
                "message:toolResult"
            ],
            &[]
        )
    );
    // The agent's own wipe only acknowledged; the commit came at settlement
    // and the run stopped in the fresh window.
    let wipe = scene.harness.host.session.entries()[before + 5].clone();
    let text = notesoup_pi_testkit::message_text(wipe.message().unwrap());
    assert_eq!(text, r#"{"status":"rollover_already_pending"}"#);
    assert_eq!(scene.request_count(), 2);
    assert_eq!(scene.model().steps_left(), 1);
    assert_eq!(scene.markers(), [(window(1), "normal".to_owned())]);
    assert_eq!(
        scene.notices(),
        [
            "notesoup: the agent closes out its notes, then stops in a fresh window.",
            &format!("notesoup: memory cleared · {}", window(1)),
        ]
    );
    // The close-out prompt is the warning text under the manual type.
    assert!(scene.request(0)[2].starts_with("user: <context_window_guidance>⏎Final warning"));
    assert_eq!(
        scene.events(|e| match e {
            HostEvent::BeforeSettle { drafts, continued } => Some((*drafts, *continued)),
            _ => None,
        }),
        [(4, false)]
    );
}

#[test]
fn fresh_window_with_text_continues_with_the_text_verbatim() {
    let mut scene = Scene::new(200_000);
    let task = "  Now port the lexer to Rust, please:\n  tokens first.  ";
    scene
        .model()
        .push(checkpoint_note())
        .push(Step::text("Notes saved."))
        .push(Step::text("Porting the lexer."));
    scene
        .harness
        .command(&format!("/fresh-window {task}"))
        .unwrap();

    // The closing window read the task, quoted, after the warning text.
    let close_out = &scene.harness.host.requests[0].messages[2];
    let close_out = notesoup_pi_testkit::message_text(close_out);
    assert!(close_out.contains("which will continue with it verbatim"));
    assert!(close_out.contains(">   Now port the lexer to Rust, please:"));
    // The fresh window got the text verbatim, visible, after the continuation.
    let fresh = &scene.harness.host.requests[2].messages;
    let last = notesoup_pi_testkit::message_text(fresh.last().unwrap());
    assert_eq!(last, task);
    assert_eq!(
        scene.request(2)[..4],
        [
            "system: You are a coding agent running in the notesoup reference hos…".to_owned(),
            "user: The conversation history before this point was compacted int…".to_owned(),
            "user: <context_window>⏎Agent name: tester (brain: scripted-1)⏎Firs…".to_owned(),
            "user: You wake up blank, puffy-eyed, and clearly robbed. Your memo…".to_owned(),
        ]
    );
    let prompt_entry = scene
        .harness
        .host
        .session
        .entries()
        .iter()
        .find_map(|e| match e {
            Entry::CustomMessage(c) if c.custom_type == "notesoup/reset-prompt" => Some(c.clone()),
            _ => None,
        })
        .unwrap();
    assert!(prompt_entry.display);
    assert_eq!(
        scene.notices()[0],
        "notesoup: after closing out notes, the agent continues with your prompt in a fresh window."
    );
    assert_eq!(scene.model().steps_left(), 0);
    assert_eq!(scene.settlements(), [false]);
}

fn read_tool() -> notesoup_pi_testkit::HostTool {
    notesoup_pi_testkit::HostTool {
        declaration: notesoup_pi::session::ToolDeclaration {
            name: "read".to_owned(),
            description: "Read a file.".to_owned(),
            parameters: json!({"type": "object"}),
            constrained_sampling: None,
            extra: serde_json::Map::new(),
        },
        run: Box::new(|args| Ok(format!("contents of {}", args["path"]))),
    }
}

#[test]
fn streaming_fresh_window_steers_the_run_and_commits_when_it_settles() {
    let mut scene = with_read_tool(Scene::new(200_000));
    scene
        .model()
        .push(
            Step::tool("read", json!({"path": "a.rs"}))
                .during(UserAction::Command("/fresh-window".to_owned())),
        )
        .push(checkpoint_note())
        .push(Step::text("Closed out."));
    scene.harness.prompt("Read a.rs.");

    assert_eq!(
        scene.notices()[0],
        "notesoup: the reset commits when the run settles."
    );
    // The close-out prompt was steered into the running turn, after the tool
    // result.
    let second = scene.request(1);
    assert!(second[second.len() - 1].starts_with("user: <context_window_guidance>⏎Final warning"));
    assert_eq!(scene.markers(), [(window(1), "normal".to_owned())]);
    assert_eq!(scene.request_count(), 3);
    assert_eq!(scene.branch_tail(4), RESET);
}

/// `scene` with the host's `read` tool added.
fn with_read_tool(mut scene: Scene) -> Scene {
    scene.harness = std::mem::replace(&mut scene.harness, placeholder()).with_tool(read_tool());
    scene
}

/// A throwaway harness to swap the real one out while adding tools.
fn placeholder() -> notesoup_pi_testkit::Harness<notesoup_pi::extension::Notesoup> {
    Scene::unstarted(1).harness
}

#[test]
fn same_window_requests_deduplicate() {
    let mut scene = Scene::scripted(
        200_000,
        [
            Step::tools(
                None,
                vec![("wipe_memory", json!({})), ("wipe_memory", json!({}))],
            ),
            Step::text("Fresh."),
        ],
    );
    scene.harness.prompt("Wipe twice.");
    let results = scene.tool_results();
    assert_eq!(
        results,
        [
            r#"{"status":"rollover_requested"}"#,
            r#"{"status":"rollover_already_pending"}"#
        ]
    );
    assert_eq!(scene.markers().len(), 1, "one boundary");

    // Two /fresh-window commands in one idle window: the second keeps the first.
    let mut scene = Scene::new(200_000);
    scene.model().push(
        Step::text("Closing out.").during(UserAction::Command("/fresh-window other".to_owned())),
    );
    scene.harness.command("/fresh-window").unwrap();
    assert_eq!(
        scene.notices()[..2],
        [
            "notesoup: the agent closes out its notes, then stops in a fresh window.",
            "notesoup: a fresh-window request is already pending; keeping its original prompt and behavior.",
        ]
    );
    assert_eq!(scene.markers().len(), 1);
    assert_eq!(
        scene.on_branch("notesoup/reset-prompt"),
        0,
        "the original bare request stands"
    );
    assert_eq!(scene.request_count(), 1, "the bare request stopped");
}

#[test]
fn budget_close_out_with_wipe_commits_warning_before_marker() {
    let mut scene = Scene::scripted(
        100_000,
        [
            Step::text("Worked a lot.").with_input_tokens(70_000),
            Step::tool("wipe_memory", json!({})),
            Step::text("Fresh window."),
        ],
    );
    scene.harness.prompt("Do the big job.");
    assert!(scene.markers().is_empty());
    scene.harness.prompt("Continue.");

    // The warning went out with the request that crossed the line…
    let warned = scene.request(1);
    assert!(
        warned
            .last()
            .unwrap()
            .starts_with("user: <context_window_guidance>⏎Final warning")
    );
    // …and was saved before the boundary.
    assert_eq!(
        scene.branch_tail(7),
        reset_between(
            &["message:toolResult", "custom_message:notesoup/warning"],
            &["message:assistant"]
        )
    );
    assert_eq!(scene.markers(), [(window(1), "normal".to_owned())]);
    // The fresh window keeps the system and tool state and the empty
    // summary, and excludes the earlier conversation.
    let fresh = &scene.harness.host.requests[2].messages;
    let system = match &fresh[0] {
        notesoup_pi::session::AgentMessage::System(system) => system,
        other => panic!("expected the system head, got {other:?}"),
    };
    assert!(system.tools_added.as_ref().is_some_and(|t| t.len() == 11));
    assert_eq!(scene.request(2), FRESH_WINDOW);
    let summary = notesoup_pi_testkit::message_text(&fresh[1]);
    assert!(summary.ends_with("<summary>\n\n</summary>"), "{summary:?}");
    assert_eq!(
        scene.notices(),
        [
            "notesoup: context almost full; close out the current memory window.",
            &format!("notesoup: memory cleared · {}", window(1)),
        ]
    );
}

#[test]
fn budget_close_out_alone_never_resets() {
    let mut scene = Scene::scripted(
        100_000,
        [
            Step::text("Worked a lot.").with_input_tokens(70_000),
            Step::text("I will keep going."),
            Step::text("Still going.").with_input_tokens(72_000),
        ],
    );
    scene.prompt_each(&["Do the big job.", "Continue.", "More."]);
    assert!(scene.markers().is_empty(), "no reset without wipe_memory");
    // The warning is durable once and never repeated in the window.
    assert_eq!(scene.on_branch("notesoup/warning"), 1);
    assert!(!scene.request(2).last().unwrap().contains("Final warning"));
}

#[test]
fn the_reminder_is_staged_once_per_window() {
    let mut scene = Scene::scripted(
        100_000,
        [
            Step::text("Reading.").with_input_tokens(60_000),
            Step::text("Still reading."),
            Step::tool("wipe_memory", json!({})),
            Step::text("Fresh."),
            Step::text("New window work.").with_input_tokens(61_000),
            Step::text("Again."),
        ],
    );
    scene.prompt_each(&[
        "Read.",
        "Read more.",
        "Wipe now.",
        "Work in the new window.",
        "And more.",
    ]);
    let guidance = scene.custom_message_texts("notesoup/guidance");
    assert_eq!(guidance.len(), 2, "once in each window");
    // 100000 - (60000 + output + trailing) - 32768: the countdown is frozen.
    assert!(guidance[0].contains("Only 7"), "{}", guidance[0]);
    assert!(guidance[0].contains("tokens left before your final warning"));
}

#[test]
fn hard_reserve_forces_a_reset_at_turn_end() {
    let mut scene = Scene::scripted(
        100_000,
        [
            Step::text("A huge answer.").with_input_tokens(90_000),
            Step::text("Fresh after the forced reset."),
        ],
    );
    scene.harness.prompt("Go.");
    assert_eq!(scene.markers(), [(window(1), "forced".to_owned())]);
    assert_eq!(
        scene.request_count(),
        2,
        "continued once in the fresh window"
    );
    assert_eq!(scene.model().steps_left(), 0);

    // Automatic resets off: no warning, no hard reserve.
    let mut scene = Scene::new(100_000);
    scene.automatic_resets_off();
    scene
        .model()
        .push(Step::text("A huge answer.").with_input_tokens(90_000))
        .push(Step::text("Next."));
    scene.prompt_each(&["Go.", "Again."]);
    assert!(scene.markers().is_empty());
    assert_eq!(scene.on_branch("notesoup/warning"), 0);
    assert!(
        scene.on_branch("notesoup/guidance") > 0,
        "the reminder still comes"
    );
}

#[test]
fn hard_reserve_in_a_bare_manual_close_out_commits_and_cancels_the_follow_up() {
    let mut scene = with_read_tool(Scene::new(100_000));
    scene
        .model()
        .push(Step::tool("read", json!({"path": "big.rs"})).with_input_tokens(90_000))
        .push(Step::text("never asked"));
    scene.harness.command("/fresh-window").unwrap();
    assert_eq!(scene.markers(), [(window(1), "forced".to_owned())]);
    // Pi's tool-batch follow-up was cancelled before the provider: only the
    // system head, and the run ended as aborted.
    let last = scene.harness.host.requests.last().unwrap();
    assert!(last.cancelled);
    assert_eq!(
        scene.request(-1),
        ["system: You are a coding agent running in the notesoup reference hos…"]
    );
    assert_eq!(scene.model().steps_left(), 1);
    assert_eq!(scene.settlements(), [true]);
    assert!(scene.harness.extension.control().request == notesoup_pi::reset::RequestPhase::None);
    // The next prompt works normally in the fresh window.
    scene.harness.prompt("Hello again.");
    assert!(!scene.harness.host.requests.last().unwrap().cancelled);
    assert_eq!(scene.model().steps_left(), 0);
}

#[test]
fn hard_reserve_in_a_manual_close_out_answers_queued_input_before_stopping() {
    let mut scene = with_read_tool(Scene::new(100_000));
    scene
        .model()
        .push(
            Step::tool("read", json!({"path": "big.rs"}))
                .with_input_tokens(90_000)
                .during(UserAction::Steer("Also mention the tests.".to_owned())),
        )
        .push(Step::text("Noted: the tests."))
        .push(Step::text("never asked"));
    scene.harness.command("/fresh-window").unwrap();
    assert_eq!(scene.markers(), [(window(1), "forced".to_owned())]);
    assert_eq!(delivered(&scene, "Also mention the tests."), 1);
    // The steer went into the fresh window and was answered; then the run stopped.
    assert_eq!(
        scene.request(-1).last().unwrap(),
        "user: Also mention the tests."
    );
    assert!(!scene.harness.host.requests.last().unwrap().cancelled);
    assert_eq!(scene.model().steps_left(), 1);
    assert_eq!(scene.settlements(), [false]);
}

#[test]
fn hard_reserve_in_a_manual_close_out_with_text_continues_once() {
    let mut scene = Scene::scripted(
        100_000,
        [
            Step::text("Closing out.").with_input_tokens(90_000),
            Step::text("On the next task."),
            Step::text("never asked"),
        ],
    );
    scene.harness.command("/fresh-window next task").unwrap();
    assert_eq!(scene.markers(), [(window(1), "forced".to_owned())]);
    assert_eq!(scene.request(-1).last().unwrap(), "user: next task");
    assert_eq!(scene.model().steps_left(), 1);
}

#[test]
fn a_real_abort_clears_the_close_out() {
    let mut scene = Scene::scripted(
        200_000,
        [
            Step::reply(ScriptedReply::UserAbort),
            Step::text("Closing out again."),
        ],
    );
    scene.harness.command("/fresh-window").unwrap();
    assert!(scene.markers().is_empty());
    assert_eq!(scene.settlements(), [true]);
    // agent_before_settle was skipped; nothing stays armed.
    assert!(
        scene
            .events(|e| match e {
                HostEvent::BeforeSettle { .. } => Some(()),
                _ => None,
            })
            .is_empty()
    );
    assert_eq!(
        *scene.harness.extension.control(),
        notesoup_pi::reset::ResetControl::default()
    );
    // A new request arms afresh and commits.
    scene.harness.command("/fresh-window").unwrap();
    assert_eq!(
        scene.notices(),
        [
            "notesoup: the agent closes out its notes, then stops in a fresh window.",
            "notesoup: the agent closes out its notes, then stops in a fresh window.",
            &format!("notesoup: memory cleared · {}", window(1)),
        ]
    );
}

#[test]
fn synthetic_aborts_and_errors_never_commit_a_close_out() {
    for reply in [
        ScriptedReply::SyntheticAbort,
        ScriptedReply::Error("internal server error".to_owned()),
    ] {
        let mut scene = Scene::new(200_000);
        scene.model().push(Step::reply(reply.clone()));
        scene.harness.command("/fresh-window").unwrap();
        assert!(scene.markers().is_empty(), "{reply:?}");
        assert_eq!(scene.settlements(), [false], "{reply:?}: no actual abort");
        assert_eq!(
            *scene.harness.extension.control(),
            notesoup_pi::reset::ResetControl::default()
        );
    }
    // A failed turn after wipe_memory drops the request too.
    let mut scene = Scene::new(200_000);
    scene.model().push(Step::tools(
        None,
        vec![("wipe_memory", json!({})), ("no_such_tool", json!({}))],
    ));
    scene.model().push(Step::error("internal server error"));
    scene.harness.prompt("Go.");
    // wipe_memory terminated but the batch did not (one result did not), so
    // the reset committed at turn_end and the follow-up failed afterwards.
    assert_eq!(scene.markers().len(), 1);
}

#[test]
fn steering_and_follow_ups_are_delivered_once_before_the_stop() {
    let mut scene = Scene::scripted(
        200_000,
        [
            Step::text("Closing out.")
                .during(UserAction::Steer("Also note the API change.".to_owned()))
                .during(UserAction::FollowUp("Then summarize.".to_owned())),
            checkpoint_note(),
            Step::text("Noted the API change."),
            Step::text("Summary: done."),
            Step::text("never asked"),
        ],
    );
    scene.harness.command("/fresh-window").unwrap();
    assert_eq!(delivered(&scene, "Also note the API change."), 1);
    assert_eq!(delivered(&scene, "Then summarize."), 1);
    let kinds = scene.branch_kinds();
    let marker = kinds
        .iter()
        .position(|k| k == "custom:notesoup/reset-marker")
        .unwrap();
    let follow_up = scene
        .harness
        .host
        .session
        .branch()
        .iter()
        .position(|e| {
            e.message()
                .is_some_and(|m| notesoup_pi_testkit::message_text(m) == "Then summarize.")
        })
        .unwrap();
    assert!(
        follow_up < marker,
        "queued work ran in the old window first"
    );
    assert_eq!(scene.model().steps_left(), 1, "then the run stopped");
    assert_eq!(kinds.len(), marker + 3);
}

/// A session of 200,000 tokens whose model overflows on the next prompt
/// and then answers.
fn overflow_then_an_answer() -> Scene {
    Scene::scripted(
        200_000,
        [
            Step::error("prompt is too long: 213462 tokens > 200000 maximum"),
            Step::text("Recovered in a fresh window."),
        ],
    )
}

#[test]
fn overflow_recovers_once_through_a_forced_reset() {
    let mut scene = overflow_then_an_answer();
    assert_eq!(
        scene.kinds_after(|harness| harness.prompt("Huge request.")),
        reset_between(
            &[
                "message:system",
                "message:user",
                "message:assistant",
                "context_edit"
            ],
            &["message:assistant"]
        )
    );
    assert_eq!(scene.markers(), [(window(1), "forced".to_owned())]);
    assert_eq!(
        scene.events(|e| match e {
            HostEvent::Compaction { reason, cancelled } => Some((reason.clone(), *cancelled)),
            _ => None,
        }),
        [("overflow".to_owned(), true)],
        "Pi's own overflow compaction was cancelled"
    );

    // A second overflow in the same chain does not recover again.
    let mut scene = Scene::scripted(
        200_000,
        [
            Step::error("prompt is too long"),
            Step::error("prompt is too long"),
            Step::text("never asked"),
        ],
    );
    scene.harness.prompt("Huge request.");
    assert_eq!(scene.markers().len(), 1);
    assert_eq!(scene.request_count(), 2);
    assert_eq!(scene.model().steps_left(), 1);

    // A manual close-out that overflows commits and stops, without retry and
    // even with automatic resets off.
    let mut scene = Scene::new(200_000);
    scene.automatic_resets_off();
    scene
        .model()
        .push(Step::error("prompt is too long"))
        .push(Step::text("never asked"));
    scene.harness.command("/fresh-window").unwrap();
    assert_eq!(scene.markers(), [(window(1), "forced".to_owned())]);
    assert_eq!(scene.request_count(), 1);
}

#[test]
fn an_overflow_is_told_by_its_message_when_pi_has_no_model() {
    let mut scene = overflow_then_an_answer();
    scene.harness.host.model = None;
    scene.harness.prompt("Huge request.");
    assert_eq!(scene.markers(), [(window(1), "forced".to_owned())]);
    assert_eq!(
        scene.model().steps_left(),
        0,
        "answered in the fresh window"
    );
}

#[test]
fn an_overflow_with_steering_queued_leaves_the_queued_work_to_run_first() {
    let mut scene = Scene::scripted(
        200_000,
        [
            Step::error("prompt is too long")
                .during(UserAction::Steer("Smaller, please.".to_owned())),
            Step::text("A smaller answer."),
        ],
    );
    scene.harness.prompt("Huge request.");
    assert!(
        scene.markers().is_empty(),
        "no recovery while work is queued"
    );
    assert_eq!(delivered(&scene, "Smaller, please."), 1);
    assert_eq!(scene.model().steps_left(), 0);
}

#[test]
fn a_failed_turn_at_the_hard_reserve_commits_nothing() {
    // About 90,000 tokens of prompt in a window of 100,000: past the hard
    // reserve, but the provider fails the turn without an overflow.
    let huge = "word ".repeat(72_000);
    let mut scene = Scene::scripted(
        100_000,
        [
            Step::error("internal server error"),
            Step::text("never asked"),
        ],
    );
    scene.harness.prompt(&huge);
    assert!(scene.markers().is_empty());
    assert_eq!(scene.request_count(), 1, "the failed run was not continued");
}

#[test]
fn two_resets_then_reopening_the_file_keeps_the_latest_window() {
    let mut scene = Scene::scripted(
        200_000,
        [
            Step::tool("wipe_memory", json!({})),
            Step::text("Fresh one."),
            Step::tool("wipe_memory", json!({})),
            Step::text("Fresh two."),
            Step::text("Third answer."),
        ],
    );
    scene.prompt_each(&["First task.", "Second task."]);
    assert_eq!(
        scene.markers(),
        [
            (window(1), "normal".to_owned()),
            (window(2), "normal".to_owned())
        ]
    );
    let entries = scene.entry_count();
    scene
        .harness
        .reopen(
            notesoup_pi_testkit::Clock::stepping_from("2026-03-02T09:00:00.000Z"),
            notesoup_pi_testkit::IdSource::sequential(),
        )
        .unwrap();
    assert_eq!(scene.entry_count(), entries, "nothing to repair or re-boot");
    scene.harness.prompt("Third task.");
    assert_eq!(
        scene.request(-1),
        [
            &FRESH_WINDOW[..],
            &["assistant: Fresh two.", "user: Third task."]
        ]
        .concat()
    );
    let boot =
        notesoup_pi_testkit::message_text(&scene.harness.host.requests.last().unwrap().messages[2]);
    assert!(boot.contains(&format!("Current context window id: {}", window(2))));
    assert!(boot.contains(&format!("Previous context window id: {}", window(1))));
    // On disk: two retain-none checkpoints, every line intact.
    let file = scene.read_file();
    let checkpoints: Vec<bool> = file
        .entries()
        .iter()
        .filter_map(|e| match e {
            Entry::Compaction(c) => Some(c.is_retain_none() && c.summary.is_empty()),
            _ => None,
        })
        .collect();
    assert_eq!(checkpoints, [true, true]);
    assert!(file.diagnostics().is_empty());
    assert_eq!(file.entries().len(), scene.entry_count());
}
