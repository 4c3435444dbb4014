//! The extension on the reference host: repair and malformed files, the
//! other hooks, commands, settings, tools and the version gate.

use notesoup_pi::extension::{Notesoup, NotesoupConfig};
use notesoup_pi::host::{
    BoundaryContextPreview, BoundaryOutcome, BoundaryState, NotifyLevel, PiApiLevel, PiExtension,
    SessionStartReason, ToolInvocation, TurnEndEvent, TurnStartEvent,
};
use notesoup_pi::session::{AgentMessage, DiagnosticCode, Entry, SessionFile};
use notesoup_pi_testkit::{Step, message_text};
use serde_json::{Value, json};

use crate::support::{ROOT, Scene, window};

const HEADER: &str = r#"{"type":"session","version":3,"id":"0195f000-0000-7000-8000-00000000abcd","timestamp":"2026-03-01T09:00:00.000Z","cwd":"/work/project"}"#;

fn line(json: Value) -> String {
    json.to_string()
}

fn usage() -> Value {
    json!({"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}})
}

/// An old window (user, assistant), then a checkpoint and a marker.
fn reset_prefix() -> Vec<String> {
    vec![
        HEADER.to_owned(),
        line(
            json!({"type":"message","id":"u1","parentId":null,"timestamp":"2026-03-01T09:00:01.000Z","message":{"role":"user","content":"Old work with secrets.","timestamp":1}}),
        ),
        line(
            json!({"type":"message","id":"a1","parentId":"u1","timestamp":"2026-03-01T09:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"Old answer."}],"api":"a","provider":"scripted","model":"scripted-1","usage":usage(),"stopReason":"stop","timestamp":2}}),
        ),
        line(
            json!({"type":"compaction","id":"c1","parentId":"a1","timestamp":"2026-03-01T09:00:03.000Z","summary":"","firstKeptEntryId":"c1","tokensBefore":15,"fromHook":true}),
        ),
        line(
            json!({"type":"custom","customType":"notesoup/reset-marker","data":{"windowId":"pcw:0195f000:dead0001","origin":"normal"},"id":"m1","parentId":"c1","timestamp":"2026-03-01T09:00:04.000Z"}),
        ),
    ]
}

fn text_of_request(scene: &Scene, index: isize) -> Vec<String> {
    scene
        .request_messages(index)
        .iter()
        .map(message_text)
        .collect()
}

#[test]
fn malformed_files_are_read_repaired_and_lose_no_byte() {
    let mut lines = reset_prefix();
    // An unknown entry type (its own root) and a garbage line.
    lines.insert(
        1,
        r#"{"type":"future_entry","id":"f1","parentId":null,"timestamp":"2026-03-01T09:00:00.500Z","payload":{"x":1}}"#.to_owned(),
    );
    lines.push("this line is not JSON".to_owned());
    // The marker stays the leaf: a torn last line follows it.
    let mut original = lines.join("\n").into_bytes();
    original.extend_from_slice(b"\n{\"type\":\"message\",\"id\":\"t1\",\"par");
    let mut scene = Scene::from_file(&original, 200_000);
    let codes: Vec<DiagnosticCode> = SessionFile::parse(&original)
        .diagnostics()
        .iter()
        .map(|d| d.code)
        .collect();
    assert_eq!(
        codes,
        [
            DiagnosticCode::UnknownEntryType,
            DiagnosticCode::InvalidJson,
            DiagnosticCode::TruncatedLine
        ]
    );

    // Session start repairs the boundary that misses its boot and
    // continuation: appended, boot first, nothing else touched.
    scene.harness.start(SessionStartReason::Resume);
    let on_disk = std::fs::read(scene.session_file()).unwrap();
    assert!(on_disk.starts_with(&original), "every original byte kept");
    let added = SessionFile::parse(&on_disk[original.len()..]);
    let kinds: Vec<String> = added
        .entries()
        .iter()
        .map(notesoup_pi_testkit::entry_kind)
        .collect();
    assert_eq!(
        kinds,
        [
            "custom_message:notesoup/boot",
            "custom_message:notesoup/continuation"
        ]
    );
    let boot_details = match &added.entries()[0] {
        Entry::CustomMessage(boot) => boot.details.clone().unwrap(),
        other => panic!("{other:?}"),
    };
    assert_eq!(boot_details["windowId"], "pcw:0195f000:dead0001");
    // Repaired once: a second start adds nothing.
    scene.harness.start(SessionStartReason::Resume);
    assert_eq!(
        std::fs::read(scene.session_file()).unwrap().len(),
        on_disk.len()
    );

    // The window now works and never sees the old conversation.
    scene.answer_with("Fresh.", "New work.");
    let request = text_of_request(&scene, -1);
    assert!(request.iter().all(|t| !t.contains("secrets")));
    let boot = request
        .iter()
        .position(|t| t.starts_with("<context_window>"))
        .unwrap();
    assert!(request[boot].contains("Current context window id: pcw:0195f000:dead0001"));
    assert!(request[boot + 1].starts_with("You wake up blank"));
    assert!(scene.notices().is_empty(), "{:?}", scene.notices());
}

#[test]
fn a_boundary_followed_by_work_is_not_repaired_and_is_never_sent_raw() {
    let mut lines = reset_prefix();
    lines.push(line(json!({"type":"message","id":"u2","parentId":"m1","timestamp":"2026-03-01T09:00:05.000Z","message":{"role":"user","content":"Later work.","timestamp":5}})));
    let original = format!("{}\n", lines.join("\n")).into_bytes();
    let mut scene = Scene::resumed_unchanged(&original, 200_000, "no repair");
    scene.answer_with("never asked", "Go on.");
    let cancelled = scene.harness.host.requests.last().unwrap();
    assert!(cancelled.cancelled);
    assert!(
        cancelled
            .messages
            .iter()
            .all(|m| matches!(m, AgentMessage::System(_)))
    );
    assert_eq!(
        scene.notices_at(NotifyLevel::Error),
        [
            "notesoup: active context window pcw:0195f000:dead0001 has no visible boot; request cancelled safely. Use /fresh-window to start another window."
        ]
    );
    assert_eq!(scene.settlements(), [true]);

    // A second request of the same window is cancelled too, without a
    // second notice.
    scene.harness.prompt("Still there?");
    assert!(scene.harness.host.requests.last().unwrap().cancelled);
    assert_eq!(scene.notices_at(NotifyLevel::Error).len(), 1);

    // /fresh-window is the way out: its close-out runs and commits a window.
    scene.model().push(Step::text("Closing out."));
    scene.harness.command("/fresh-window").unwrap();
    assert_eq!(scene.markers().last().unwrap().0, window(1));
    assert_eq!(
        scene.model().steps_left(),
        1,
        "the cancelled step is still queued"
    );
}

#[test]
fn compact_is_cancelled_while_on_or_while_a_marker_exists() {
    let mut scene = Scene::new(200_000);
    scene.harness.compact();
    let cancelled = |scene: &Scene| {
        scene.events(|e| match e {
            notesoup_pi_testkit::HostEvent::Compaction { cancelled, .. } => Some(*cancelled),
            _ => None,
        })
    };
    assert_eq!(cancelled(&scene), [true]);
    assert_eq!(
        scene.notices(),
        [
            "notesoup: /compact is off while notesoup manages context windows; use /fresh-window for a fresh window."
        ]
    );
    // Off with no marker: Pi's compaction may run.
    scene.harness.command("/notesoup off").unwrap();
    scene.harness.compact();
    assert_eq!(cancelled(&scene), [true, false]);

    // Off with a marker on the branch: still cancelled.
    let mut scene = Scene::scripted(
        200_000,
        [Step::tool("wipe_memory", json!({})), Step::text("Fresh.")],
    );
    scene.harness.prompt("Wipe.");
    scene.harness.command("/notesoup off").unwrap();
    scene.harness.compact();
    assert_eq!(cancelled(&scene), [true]);
}

#[test]
fn tree_summaries_across_a_reset_are_suppressed() {
    let (mut scene, first_answer) = Scene::wiped_once([]);
    let fresh_leaf = scene.leaf();

    // Back across the reset, with a summary asked for: none is written.
    scene.harness.navigate(&first_answer, true);
    assert!(!scene.branch_kinds().iter().any(|k| k == "branch_summary"));
    assert_eq!(
        scene.harness.host.session.leaf_id(),
        Some(first_answer.as_str())
    );
    assert_eq!(
        last_notice(&scene),
        "notesoup: skipped branch summary across a reset window; navigation continues without erased history."
    );
    // Forward into the reset branch without a summary: no notice.
    let notices = scene.notices().len();
    scene.harness.navigate(&fresh_leaf, false);
    assert_eq!(scene.notices().len(), notices);

    // Without any marker, the summary is Pi's.
    let mut scene = Scene::new(200_000);
    scene.model().push(Step::text("A.")).push(Step::text("B."));
    scene.harness.prompt("One.");
    let first = scene.leaf();
    scene.harness.prompt("Two.");
    scene.harness.navigate(&first, true);
    assert!(scene.branch_kinds().iter().any(|k| k == "branch_summary"));
    assert!(scene.notices().is_empty());
}

#[test]
fn a_fork_gets_its_own_root_boot_in_the_projection() {
    // Copied from another session whose id shares the first 8 characters.
    let lines = [
        HEADER.to_owned(),
        line(
            json!({"type":"custom_message","customType":"notesoup/boot","content":"Boot of the origin.","display":false,"details":{"windowId":ROOT,"sessionId":"0195f000-9999-7000-8000-000000000000"},"id":"b0","parentId":null,"timestamp":"2026-03-01T09:00:01.000Z"}),
        ),
        line(
            json!({"type":"message","id":"u1","parentId":"b0","timestamp":"2026-03-01T09:00:02.000Z","message":{"role":"user","content":"Copied work.","timestamp":2}}),
        ),
        line(
            json!({"type":"message","id":"a1","parentId":"u1","timestamp":"2026-03-01T09:00:03.000Z","message":{"role":"assistant","content":[{"type":"text","text":"Copied answer."}],"api":"a","provider":"scripted","model":"scripted-1","usage":usage(),"stopReason":"stop","timestamp":3}}),
        ),
    ];
    let mut scene = Scene::from_file(format!("{}\n", lines.join("\n")).as_bytes(), 200_000);
    scene.harness.start(SessionStartReason::Fork);
    assert_eq!(
        scene.branch_tail(1),
        ["custom_message:notesoup/boot"],
        "a fresh root boot for this session"
    );
    scene.answer_with("Hello.", "Continue.");
    let request = text_of_request(&scene, -1);
    assert!(request.iter().all(|t| t != "Boot of the origin."));
    let boots = request
        .iter()
        .filter(|t| t.starts_with("<context_window>"))
        .count();
    assert_eq!(boots, 1);
    assert!(
        request.iter().any(|t| t == "Copied work."),
        "conversation kept"
    );
}

#[test]
fn legacy_pi_context_windows_are_read() {
    let golden = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../notesoup-pi/tests/golden/legacy-marker.jsonl");
    let original = std::fs::read(golden).unwrap();
    let mut scene =
        Scene::resumed_unchanged(&original, 200_000, "a complete legacy tail needs no repair");
    scene.answer_with("Legacy fresh.", "Next.");
    let request = text_of_request(&scene, -1);
    // The empty text is the system patch declaring notesoup's tools, which
    // the old transcript never declared.
    assert_eq!(
        request,
        [
            "Prompt.",
            "Legacy boot.",
            "Legacy continuation.",
            "New window work.",
            "New answer.",
            "",
            "Next."
        ]
    );
    // The folded system head keeps both prompt patches of the old file.
    let system = match &scene.harness.host.requests.last().unwrap().messages[0] {
        AgentMessage::System(system) => system.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        system.sections.unwrap()["s"],
        "<s>2</s>",
        "the later section patch wins"
    );
    scene.harness.compact();
    assert!(
        scene.events(|e| match e {
            notesoup_pi_testkit::HostEvent::Compaction { cancelled, .. } => Some(*cancelled),
            _ => None,
        }) == [true]
    );
}

/// The model answers "One." with `first` and "Two." with `second`.
fn one_two(scene: &mut Scene, first: Step, second: Step) {
    scene.model().push(first).push(second);
    scene.prompt_each(&["One.", "Two."]);
}

fn with_settings(scene: &mut Scene, global: Value, project: Value, trusted: bool) {
    let settings = scene.harness.host.settings.as_mut().unwrap();
    settings.global = global;
    settings.project = project;
    scene.harness.host.trusted = trusted;
}

#[test]
fn settings_come_from_the_host_project_over_global_per_key() {
    for (trusted, expect) in [(true, 1), (false, 0)] {
        let mut scene = Scene::new(100_000);
        with_settings(
            &mut scene,
            json!({"notesoup": {"reminderMarginTokens": 10_000, "dreamer": "x"}}),
            json!({"notesoup": {"reminderMarginTokens": 50_000}}),
            trusted,
        );
        one_two(
            &mut scene,
            Step::text("Busy.").with_input_tokens(40_000),
            Step::text("More."),
        );
        // 60k left: under the project's reminder line (66,384), above the
        // global one (26,384).
        assert_eq!(
            scene.on_branch("notesoup/guidance"),
            expect,
            "trusted {trusted}"
        );
    }

    // An invalid margin warns once and the default applies.
    let mut scene = Scene::new(100_000);
    with_settings(
        &mut scene,
        json!({"notesoup": {"reminderMarginTokens": -3}}),
        json!({}),
        true,
    );
    one_two(&mut scene, Step::text("A."), Step::text("B."));
    assert_eq!(
        scene.notices_at(NotifyLevel::Warning),
        [
            "notesoup: notesoup.reminderMarginTokens must be a positive integer; using the default reminder margin."
        ]
    );

    // Unreadable settings: defaults, with one warning.
    let mut scene = Scene::unstarted(100_000);
    scene.harness.host.settings = Err("settings.json: unexpected token".to_owned());
    scene.harness.start(SessionStartReason::Startup);
    one_two(
        &mut scene,
        Step::text("A.").with_input_tokens(70_000),
        Step::text("B."),
    );
    assert_eq!(
        scene.notices_at(NotifyLevel::Warning)[0],
        "notesoup: could not read settings; using defaults (settings.json: unexpected token)"
    );
    assert!(
        scene.on_branch("notesoup/warning") > 0,
        "automatic resets default to on"
    );

    // The reserve is Pi's compaction reserve: 30k moves the warning line to 46,384.
    let mut scene = Scene::new(100_000);
    scene
        .harness
        .host
        .settings
        .as_mut()
        .unwrap()
        .compaction
        .reserve_tokens = 30_000;
    one_two(
        &mut scene,
        Step::text("Busy.").with_input_tokens(55_000),
        Step::text("More."),
    );
    assert!(scene.on_branch("notesoup/warning") > 0);
}

#[test]
fn the_notesoup_command_reports_and_toggles() {
    let mut scene = Scene::scripted(100_000, [Step::text("ok").with_input_tokens(50_000)]);
    scene.harness.prompt("Hi.");
    scene.harness.command("/notesoup").unwrap();
    let version = env!("CARGO_PKG_VERSION");
    // 100000 - 50001 left, minus the 32768 warning runway line.
    assert_eq!(
        last_notice(&scene),
        format!(
            "notesoup: on · v{version} · Pi 1.6.0 · window {ROOT} · 17231 tokens before close-out"
        )
    );
    scene.harness.command("/notesoup bogus").unwrap();
    assert_eq!(last_notice(&scene), "Usage: /notesoup [on|off]");
    scene.harness.command("/notesoup off").unwrap();
    assert_eq!(
        last_notice(&scene),
        format!("notesoup: off · v{version} · Pi 1.6.0 · window {ROOT}")
    );
    scene.harness.command("/fresh-window").unwrap();
    assert_eq!(
        last_notice(&scene),
        "notesoup: /fresh-window requires /notesoup on."
    );
    let wipe = call(&mut scene, "wipe_memory", json!({}));
    assert_eq!(
        wipe,
        r#"{"error":"notesoup is off (/notesoup on to enable)"}"#
    );
    // Off stops new resets, the hard reserve included.
    scene
        .model()
        .push(Step::text("huge").with_input_tokens(95_000));
    scene.harness.prompt("Big.");
    assert!(scene.markers().is_empty());
    scene.harness.command("/notesoup on").unwrap();
    assert!(last_notice(&scene).starts_with("notesoup: on · "));
}

/// The text of the newest notice.
fn last_notice(scene: &Scene) -> &str {
    scene.harness.host.notices.last().unwrap().text.as_str()
}

fn call(scene: &mut Scene, name: &str, params: Value) -> String {
    let result = scene.harness.extension.execute_tool(
        &mut scene.harness.host,
        &ToolInvocation {
            tool_call_id: "t".to_owned(),
            name: name.to_owned(),
            params,
        },
    );
    result
        .content
        .iter()
        .map(|b| match b {
            notesoup_pi::session::ContentBlock::Text(t) => t.text.clone(),
            _ => String::new(),
        })
        .collect()
}

#[test]
fn get_context_remaining_counts_down_to_the_warning_line() {
    let mut scene = Scene::scripted(100_000, [Step::text("ok").with_input_tokens(50_000)]);
    scene.harness.prompt("Hi.");
    assert_eq!(
        call(&mut scene, "get_context_remaining", json!({})),
        r#"{"remaining_tokens":17231}"#
    );
    scene.harness.host.model = None;
    assert_eq!(
        call(&mut scene, "get_context_remaining", json!({})),
        r#"{"remaining_tokens":null}"#
    );
}

#[test]
fn tools_and_commands_register_in_order() {
    let scene = Scene::new(1000);
    let extension = &scene.harness.extension;
    let names: Vec<String> = extension.tools().into_iter().map(|t| t.name).collect();
    assert_eq!(
        names,
        [
            "get_context_remaining",
            "wipe_memory",
            "history_windows",
            "history_list",
            "history_search",
            "history_read",
            "notes_write",
            "notes_update",
            "notes_read",
            "notes_list",
            "notes_search"
        ]
    );
    let wipe = &extension.tools()[1];
    assert_eq!(
        wipe.description,
        "Clear your in-context memory and start a fresh context window. Your session, notes, and history survive."
    );
    let commands: Vec<String> = extension.commands().into_iter().map(|c| c.name).collect();
    assert_eq!(commands, ["notesoup", "fresh-window"]);
}

#[test]
fn hosts_without_the_boundary_api_are_refused() {
    let refused = Notesoup::new(
        NotesoupConfig {
            notes_home: "/tmp/notes".into(),
            agent: "a".into(),
        },
        PiApiLevel::V0_58,
    )
    .unwrap_err();
    assert_eq!(refused.code(), "host_too_old");
    assert!(
        refused
            .to_string()
            .starts_with("notesoup requires Pi >= 0.87.0")
    );
}

#[test]
fn a_failed_reset_keeps_the_window_and_the_budget_drafts() {
    let mut scene = Scene::unstarted(100_000);
    scene.harness.extension = Notesoup::new(
        NotesoupConfig {
            notes_home: "".into(),
            agent: "tester".into(),
        },
        PiApiLevel::V0_87,
    )
    .unwrap();
    scene.harness.start(SessionStartReason::Startup);
    assert!(scene.notices()[0].starts_with("notesoup: could not build the notes boot ("));
    scene
        .model()
        .push(Step::text("Busy.").with_input_tokens(70_000))
        .push(Step::tool("wipe_memory", json!({})))
        .push(Step::text("never asked"));
    scene.prompt_each(&["One.", "Two."]);
    assert!(scene.markers().is_empty());
    assert_eq!(
        scene.branch_tail(3),
        [
            "message:assistant",
            "message:toolResult",
            "custom_message:notesoup/warning"
        ],
        "the warning kept, no boundary, no continuation"
    );
    assert!(
        scene
            .notices()
            .iter()
            .any(|n| n.starts_with("notesoup: could not build reset ("))
    );
    assert!(!scene.notices().iter().any(|n| n.contains("memory cleared")));
}

/// The `turn_end` payload for the leaf assistant message.
fn turn_end_event(scene: &Scene) -> TurnEndEvent {
    let leaf = scene
        .harness
        .host
        .session
        .branch()
        .last()
        .cloned()
        .cloned()
        .unwrap();
    TurnEndEvent {
        turn_index: 0,
        message: leaf.message().unwrap().clone(),
        tool_results: Vec::new(),
        message_entry_id: Some(leaf.id().to_owned()),
        tool_result_entry_ids: Some(Vec::new()),
        boundary: Some(BoundaryState {
            entries: Vec::new(),
            continue_run: false,
            context: BoundaryContextPreview {
                context_entries: Vec::new(),
                context_messages: Vec::new(),
                llm_messages: Vec::new(),
                pending_messages: Vec::new(),
                can_continue: true,
            },
            outcome: BoundaryOutcome::Completed,
        }),
    }
}

#[test]
fn a_reset_proposed_before_a_tree_switch_is_never_announced() {
    for switch in [false, true] {
        let mut scene = Scene::new(200_000);
        scene.answer_with("Hello.", "Hi.");
        let first = scene.harness.host.session.branch()[1].id().to_owned();
        call(&mut scene, "wipe_memory", json!({}));
        let event = turn_end_event(&scene);
        let result = scene
            .harness
            .extension
            .turn_end(&mut scene.harness.host, &event);
        let drafts = result.entries.unwrap();
        scene.harness.host.session.apply_drafts(&drafts).unwrap();
        let committed_leaf = scene.leaf();
        if switch {
            scene.harness.navigate(&first, false);
            scene.harness.navigate(&committed_leaf, false);
        }
        scene.harness.extension.turn_start(
            &mut scene.harness.host,
            &TurnStartEvent {
                turn_index: 1,
                timestamp: 0,
            },
        );
        let announced = scene.notices().iter().any(|n| n.contains("memory cleared"));
        assert_eq!(announced, !switch, "switch {switch}");
    }
}

#[test]
fn notes_tools_speak_pi_and_survive_the_reset() {
    let mut scene = Scene::scripted(
        200_000,
        [
            Step::tool(
                "notes_write",
                json!({"address": "@project/plan.md", "content": "# Plän 🚀\n\nstep one\nstep two\n"}),
            ),
            Step::tool(
                "notes_update",
                json!({"address": "@project/plan.md", "edits": [{"oldText": "step two", "newText": "step 2 ✅"}]}),
            ),
            Step::tool("wipe_memory", json!({})),
            Step::tool("history_search", json!({"query": "PLÄN"})),
            Step::text("Found the plan."),
        ],
    );
    scene.harness.prompt("Plan it.");
    let results = scene.tool_results();
    assert!(results[0].starts_with("created @project/plan.md (project project-"));
    assert!(
        results[1].contains("diff:\n 1 # Plän 🚀\n 2 \n 3 step one\n-4 step two\n+4 step 2 ✅"),
        "{}",
        results[1]
    );
    // The fresh window's boot shows the note; the history search finds the
    // pre-reset call by seq, case-insensitively.
    let fresh_boot = text_of_request(&scene, 3)[2].clone();
    assert!(
        fresh_boot.contains("Plän 🚀 — @project/plan.md · "),
        "{fresh_boot}"
    );
    // Seq 1 is the root boot, 2 the prompt, 3 the assistant turn, 4 its call.
    assert!(
        results[3].starts_with("seq 4 | window pcw:0195f000:root | tool"),
        "{}",
        results[3]
    );
}

#[cfg(unix)]
#[test]
fn an_unreadable_home_is_named_once_per_window() {
    let mut scene = Scene::unstarted(200_000);
    let elsewhere = scene.dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::create_dir_all(scene.notes_home()).unwrap();
    // A linked home is never followed: the store reports it unavailable.
    std::os::unix::fs::symlink(&elsewhere, scene.notes_home().join("human")).unwrap();
    scene.harness.start(SessionStartReason::Startup);
    scene
        .model()
        .push(Step::tool("wipe_memory", json!({})))
        .push(Step::text("Fresh."));
    scene.harness.prompt("Wipe.");
    let notice =
        "notesoup: notes index incomplete for @human; notes_list can retry after recovery.";
    let shown = scene.notices().iter().filter(|n| **n == notice).count();
    assert_eq!(shown, 2, "once for the root window, once for the fresh one");
    // The model sees the drawer line in both boots.
    let boots = scene.custom_message_texts("notesoup/boot");
    assert_eq!(boots.len(), 2);
    assert!(
        boots
            .iter()
            .all(|b| b.contains("This drawer wouldn't open — ask notes_list to try again."))
    );
    // A later session start in the same window does not repeat it.
    scene.harness.start(SessionStartReason::Resume);
    assert_eq!(scene.notices().iter().filter(|n| **n == notice).count(), 2);
}

#[test]
fn windows_follow_the_branch() {
    let (mut scene, first_answer) = Scene::wiped_once([Step::text("Back in the root window.")]);
    assert!(call(&mut scene, "history_windows", json!({})).contains(&window(1)));
    // Navigating back before the reset: the sibling branch has no marker.
    scene.harness.navigate(&first_answer, false);
    let windows = call(&mut scene, "history_windows", json!({}));
    assert!(!windows.contains(&window(1)), "{windows}");
    scene.harness.command("/notesoup").unwrap();
    assert!(last_notice(&scene).contains(&format!("window {ROOT}")));
    scene.harness.prompt("Carry on here.");
    let request = text_of_request(&scene, -1);
    assert!(request.iter().any(|t| t == "First answer."));
    assert!(request.iter().all(|t| !t.starts_with("You wake up blank")));
}

#[test]
fn a_model_switch_drops_staged_budget_drafts() {
    for switch in [false, true] {
        let mut scene = Scene::scripted(100_000, [Step::text("Busy.").with_input_tokens(70_000)]);
        scene.harness.prompt("One.");
        // The next request stages the warning...
        let staged = scene.harness.extension.context(&mut scene.harness.host);
        assert_eq!(staged.len(), 1, "the warning goes out with the request");
        // ...and a model switch before the turn ends drops it.
        if switch {
            let model = scene.harness.model.info.clone();
            scene.harness.extension.model_select(
                &mut scene.harness.host,
                &notesoup_pi::host::ModelSelectEvent {
                    model,
                    previous_model: None,
                    source: "set".to_owned(),
                },
            );
        }
        let event = turn_end_event(&scene);
        let result = scene
            .harness
            .extension
            .turn_end(&mut scene.harness.host, &event);
        assert_eq!(result.entries.is_some(), !switch, "switch {switch}");
    }
}
