//! notesoup inside real Pi 1.6.0: the package loaded from its folder by Pi's
//! own package discovery, Pi's agent loop and session manager, the
//! `notesoup-pi serve` sidecar. Feature `real-pi`; `cargo xtask ci` installs
//! Pi first.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

mod boot;
mod compaction;
mod completions;
mod dream;
mod embedding;
mod payload;
mod support;
mod sync;
mod terminal;
mod typecheck;
mod usage;

use notesoup_test_support::pi_session::{RESET, reset_between};
use serde_json::json;
use support::{Report, World, error, find_note, text, tool};

/// This crate's `notesoup-pi`, for `support`.
fn sidecar() -> std::path::PathBuf {
    env!("CARGO_BIN_EXE_notesoup-pi").into()
}

const ROOT_BOOT: &str = "user: <context_window>⏎Agent name: tester (brain: faux-1)⏎First co";
const SUMMARY: &str = "user: The conversation history before this point was compacted int";
const FRESH_BOOT: &str = ROOT_BOOT;
const CONTINUATION: &str = "user: You wake up blank, puffy-eyed, and clearly robbed. Your memo";

/// Request `index` opens a fresh window: after the system prompt, Pi's
/// empty summary, the fresh boot and the continuation.
#[track_caller]
fn assert_opens_fresh_window(report: &Report, index: isize) {
    assert_eq!(
        report.request(index)[1..4],
        [SUMMARY, FRESH_BOOT, CONTINUATION]
    );
}

#[test]
fn root_boot_notes_tools_wipe_and_history_in_pi_s_own_loop() {
    let world = World::new(200_000);
    let report = world.start(json!([
        {"respond": [
            tool("notes_write", json!({"address": "@project/plan.md", "content": "# Plan\nShip the sidecar.\n"})),
            text("Noted."),
        ]},
        {"prompt": "Remember: the tokenizer bug is in lexer.rs."},
        {"respond": [tool("wipe_memory", json!({})), text("Fresh and ready.")]},
        {"prompt": "Please wipe."},
        {"respond": [
            tool("history_search", json!({"query": "tokenizer"})),
            // Seqs depend only on entry kinds: the first prompt is seq 2.
            tool("history_read", json!({"seq": 2})),
            text("Found it."),
        ]},
        {"prompt": "Where was the bug?"},
    ]));
    report.assert_finished(0);

    // The root boot is the first thing the model saw, before the prompt.
    assert_eq!(report.request(0)[0], ROOT_BOOT);
    assert_eq!(
        report.request(0).last().unwrap(),
        "user: Remember: the tokenizer bug is in lexer.rs."
    );

    // notes_write wrote a real file in the project home.
    let note = find_note(&world.notes_home().join("project"), "plan.md").expect("the note");
    let body = std::fs::read_to_string(note).unwrap();
    assert!(body.ends_with("# Plan\nShip the sidecar.\n"), "{body}");

    // wipe_memory: Pi saved the retain-none boundary itself.
    let kinds = report.kinds();
    let at = kinds
        .iter()
        .position(|k| k == "compaction")
        .expect("a checkpoint");
    assert_eq!(
        kinds[at - 2..at + 5],
        reset_between(
            &["message:assistant", "message:toolResult"],
            &["message:assistant"]
        )
    );
    let entries = report.entries();
    let checkpoint = &entries[at];
    assert_eq!(checkpoint["summary"], "");
    assert_eq!(
        checkpoint["firstKeptEntryId"], checkpoint["id"],
        "retain-none"
    );
    assert_eq!(checkpoint["fromHook"], true);
    let markers = report.markers();
    assert_eq!(markers.len(), 1);
    assert_eq!(markers[0].1, "normal");
    assert!(
        report
            .notice_texts()
            .contains(&format!("notesoup: memory cleared · {}", markers[0].0).as_str()),
        "{:?}",
        report.notices
    );

    // The next provider request holds the fresh boot and the continuation
    // and nothing from before the reset.
    assert_opens_fresh_window(&report, 3);
    let fresh_text: String = report.requests[3].iter().map(|(_, t)| t.as_str()).collect();
    assert!(!fresh_text.contains("tokenizer bug"), "no pre-reset turn");
    assert!(
        fresh_text.contains("@project/plan.md"),
        "the boot shows the note"
    );

    // history_search finds the pre-reset prompt by seq.
    let last = &report.requests[5];
    let (role, found) = last.last().unwrap();
    assert_eq!(role, "toolResult");
    assert!(found.contains("tokenizer bug is in lexer.rs"), "{found}");
    assert!(found.starts_with("seq 2 | window pcw:"), "{found}");
    // …and history_read returns that whole pre-reset turn by its seq.
    let (role, read) = report.requests[6].last().unwrap();
    assert_eq!(role, "toolResult");
    assert!(
        read.contains("Remember: the tokenizer bug is in lexer.rs."),
        "{read}"
    );
}

#[test]
fn budget_reminder_warning_and_close_out_as_the_window_fills() {
    let world = World::new(100_000);
    let big = "x".repeat(240_000);
    let more = "y".repeat(40_000);
    let report = world.start(json!([
        {"respond": [text("Worked a lot.")]},
        {"prompt": format!("Do the big job. {big}")},
        {"respond": [tool("wipe_memory", json!({})), text("Fresh window.")]},
        {"prompt": format!("Continue. {more}")},
    ]));
    report.assert_finished(0);
    let kinds = report.kinds();
    // The reminder was staged at the first request and saved at its turn end.
    let reminder = kinds
        .iter()
        .position(|k| k == "custom_message:notesoup/guidance")
        .expect("a reminder");
    // The warning went out with the request that crossed the line…
    support::assert_final_warning(&report.request(1));
    // …and was saved before the boundary, after the reminder.
    let at = kinds
        .iter()
        .position(|k| k == "compaction")
        .expect("a checkpoint");
    assert!(reminder < at);
    assert_eq!(
        kinds[at - 1..at + 5],
        reset_between(&["custom_message:notesoup/warning"], &["message:assistant"])
    );
    report.assert_notice("context almost full");
    assert_opens_fresh_window(&report, 2);
}

/// A tool reads the context usage the sidecar computes from its mirror
/// (the state of a tool call leaves Pi's out): as the window fills, what
/// `get_context_remaining` reports plus Pi's own `getContextUsage()`
/// tokens at that moment is the window less the warning line (Pi's default
/// reserve, 16,384, plus the 16,384-token runway) at every call.
#[test]
fn a_tool_reads_the_context_usage_pi_itself_reports() {
    let world = World::new(200_000);
    let mut steps = Vec::new();
    for (round, size) in [2_000, 30_000, 60_000].into_iter().enumerate() {
        steps
            .push(json!({"respond": [tool("get_context_remaining", json!({})), text("Counted.")]}));
        steps.push(json!({"prompt": format!("Round {round}. {}", "z".repeat(size))}));
    }
    let report = world.start(serde_json::Value::Array(steps));
    report.assert_finished(0);
    let pi_tokens: Vec<u64> = report
        .tool_usages
        .iter()
        .filter(|usage| usage["tool"] == "get_context_remaining")
        .map(|usage| usage["tokens"].as_u64().expect("Pi knows the usage"))
        .collect();
    let reported: Vec<u64> = report
        .requests
        .iter()
        .filter_map(|request| {
            let (role, text) = request.last()?;
            let value: serde_json::Value = serde_json::from_str(text).ok()?;
            (role == "toolResult").then(|| value["remaining_tokens"].as_u64())?
        })
        .collect();
    assert_eq!(pi_tokens.len(), 3, "{:?}", report.tool_usages);
    assert_eq!(reported.len(), 3, "{:?}", report.requests);
    assert!(pi_tokens.windows(2).all(|w| w[0] < w[1]), "{pi_tokens:?}");
    let sums: Vec<u64> = pi_tokens
        .iter()
        .zip(&reported)
        .map(|(p, r)| p + r)
        .collect();
    assert_eq!(sums, [200_000 - 32_768; 3], "{pi_tokens:?} {reported:?}");
}

/// In real Pi the `context` lines carry no messages, and the warning still
/// goes out last in the request that crosses the line: the sidecar answers
/// it as one message to append, which the shim adds after Pi's. The
/// `context_with_system` lines carry the messages summarised, without
/// their content.
#[test]
fn context_lines_carry_no_messages_and_the_warning_is_appended_by_the_shim() {
    let mut world = World::new(100_000);
    let lines = world.path("bridge-in.jsonl");
    world.sidecar = teeing_sidecar(&world, &lines);
    let big = "x".repeat(240_000);
    let more = "y".repeat(40_000);
    let report = world.start(json!([
        {"respond": [text("Worked a lot.")]},
        {"prompt": format!("Do the big job. {big}")},
        {"respond": [text("Noted.")]},
        {"prompt": format!("Continue. {more}")},
    ]));
    report.assert_finished(0);
    support::assert_final_warning(&report.request(1));
    let sent = std::fs::read_to_string(&lines).unwrap();
    let contexts: Vec<serde_json::Value> = sent
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .filter(|message| message["type"] == "event" && message["body"]["name"] == "context")
        .collect();
    assert!(contexts.len() >= 2, "{contexts:?}");
    for context in &contexts {
        let payload = context["body"]["payload"].as_object().unwrap();
        assert!(!payload.contains_key("messages"), "{payload:?}");
    }
    // `context_with_system` carries each message summarised: no content
    // but the system messages', and a message holding only its role as
    // that role's number (the user's is 0).
    let with_system: Vec<serde_json::Value> = sent
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .filter(|message| {
            message["type"] == "event" && message["body"]["name"] == "context_with_system"
        })
        .collect();
    assert!(with_system.len() >= 2, "{with_system:?}");
    for context in &with_system {
        let messages = context["body"]["payload"]["messages"].as_array().unwrap();
        assert!(messages.iter().any(|m| *m == 0), "{messages:?}");
        assert!(
            messages.iter().all(|m| m.is_u64() || m.is_object()),
            "{messages:?}"
        );
        for message in messages.iter().filter(|m| m["role"] != "system") {
            assert!(message.get("content").is_none(), "{message}");
        }
        let line = context.to_string();
        assert!(
            !line.contains(&big) && !line.contains(&more),
            "a message's content was sent"
        );
    }
    assert_mirror_follows_pi(&lines, &report.session_file);
}

#[test]
fn fresh_window_bare_and_with_text() {
    let world = World::new(200_000);
    let report = world.start(json!([
        {"respond": [
            tool("notes_write", json!({"address": "checkpoint.md", "content": "# Checkpoint\nGoal: lexer.\n"})),
            tool("wipe_memory", json!({})),
            text("unused"),
        ]},
        {"prompt": "/fresh-window"},
    ]));
    // The close-out committed at settlement and the run stopped there.
    report.assert_finished(1);
    assert_eq!(report.markers().len(), 1);
    assert!(
        report.notice_texts()[0]
            .starts_with("notesoup: the agent closes out its notes, then stops in a fresh window."),
        "{:?}",
        report.notices
    );
    let kinds = report.kinds();
    assert!(kinds.contains(&"custom_message:notesoup/manual-wipe".to_owned()));
    assert_eq!(kinds[kinds.len() - 4..], RESET);

    // With text: the fresh window continues with the text verbatim.
    let world = World::new(200_000);
    let task = "  Now port the lexer to Rust, please:\n  tokens first.  ";
    let report = world.start(json!([
        {"respond": [
            tool("notes_write", json!({"address": "checkpoint.md", "content": "# Checkpoint\n"})),
            text("Notes saved."),
            text("Porting the lexer."),
        ]},
        {"prompt": format!("/fresh-window {task}")},
    ]));
    report.assert_finished(0);
    assert_eq!(report.markers().len(), 1);
    let fresh = &report.requests[2];
    assert_eq!(fresh.last().unwrap().1, task);
    assert_opens_fresh_window(&report, 2);
}

#[test]
fn compact_is_cancelled_while_notesoup_is_on_and_the_command_toggles() {
    let world = World::new(200_000);
    // Enough history that Pi has something to compact (it keeps 20k tokens).
    let long = "w".repeat(120_000);
    let report = world.start(json!([
        {"respond": [text("Hello."), text("Again.")]},
        {"prompt": format!("Hi. {long}")},
        {"prompt": "More."},
        {"compact": true},
        {"prompt": "/notesoup"},
        {"prompt": "/notesoup off"},
        {"prompt": "/notesoup on"},
    ]));
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert_eq!(
        report.compact_error.as_deref(),
        Some("Compaction cancelled"),
        "Pi reports the cancelled /compact"
    );
    assert!(!report.kinds().contains(&"compaction".to_owned()));
    let notices = report.notice_texts();
    assert!(
        notices.contains(
            &"notesoup: /compact is off while notesoup manages context windows; use /fresh-window for a fresh window."
        ),
        "{notices:?}"
    );
    let status: Vec<&str> = notices
        .iter()
        .copied()
        .filter(|n| n.starts_with("notesoup: o"))
        .collect();
    assert_eq!(status.len(), 3, "{notices:?}");
    assert!(status[0].starts_with("notesoup: on · v"), "{status:?}");
    assert!(
        status[0].contains(" · Pi 1.6.0 · window pcw:"),
        "{status:?}"
    );
    assert!(status[1].starts_with("notesoup: off"), "{status:?}");
    assert!(status[2].starts_with("notesoup: on"), "{status:?}");
}

#[test]
fn hard_reserve_forces_a_reset() {
    let world = World::new(100_000);
    let huge = "z".repeat(340_000);
    let report = world.start(json!([
        {"respond": [text("A huge answer."), text("Fresh after the forced reset.")]},
        {"prompt": format!("Go. {huge}")},
    ]));
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert_eq!(
        report.pending_responses, 0,
        "continued once in the fresh window"
    );
    let markers = report.markers();
    assert_eq!(markers.len(), 1);
    assert_eq!(markers[0].1, "forced");
    assert_opens_fresh_window(&report, 1);
    // The report reads the forced reset at the reserve from Pi's file.
    assert_eq!(report.ledger_ends(), ["hard_reserve", "open"]);
}

/// `turn_end` reaches the sidecar only for the turns that need it. An
/// ordinary turn, a tool call and its answer, goes by without it; a turn
/// that starts short of the budget's lines (no reminder or warning staged,
/// no reset armed) and crosses the reserve by its own tool results is held
/// by the shim, which counts the turn's tokens as Pi does, and ends in the
/// forced reset.
#[test]
fn turn_end_is_held_only_for_a_turn_that_may_act() {
    let mut world = World::new(100_000);
    let lines = world.path("bridge-in.jsonl");
    world.sidecar = teeing_sidecar(&world, &lines);
    // A note whose reads fill tool results (30,000 characters, about 7,500
    // tokens, each).
    let human = world.notes_home().join("human");
    std::fs::create_dir_all(&human).unwrap();
    std::fs::write(human.join("big.md"), "A long fact.\n".repeat(4_000)).unwrap();
    let read =
        json!({"name": "notes_read", "args": {"address": "@human/big.md", "limit_chars": 30_000}});
    let report = world.start(json!([
        {"respond": [
            tool("notes_write", json!({"address": "@project/plan.md", "content": "# Plan\n"})),
            text("Noted."),
        ]},
        {"prompt": "Remember the plan."},
        // About 45,000 tokens at the request: clear of the reminder line
        // (40,960 tokens left); six reads take the turn past the reserve
        // (16,384 left).
        {"respond": [
            {"tools": [read, read, read, read, read, read]},
            text("Fresh after the forced reset."),
        ]},
        {"prompt": format!("Read it six times. {}", "q".repeat(160_000))},
    ]));
    report.assert_finished(0);
    assert_eq!(report.markers().len(), 1, "{:?}", report.kinds());
    assert_eq!(report.markers()[0].1, "forced");
    assert_eq!(report.ledger_ends(), ["hard_reserve", "open"]);
    // Four turns: the note written, its answer, the reads, the answer in
    // the fresh window; the sidecar saw the end of the reads only, and the
    // start of the last turn only: the forced reset waited to be announced
    // then, and nothing before it.
    let sent: Vec<serde_json::Value> = std::fs::read_to_string(&lines)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let count = |name: &str| {
        sent.iter()
            .filter(|line| line["type"] == "event" && line["body"]["name"] == name)
            .count()
    };
    assert_eq!(count("turn_start"), 1);
    assert_eq!(count("turn_end"), 1);
    report.assert_notice("notesoup: memory cleared");
}

#[test]
fn overflow_recovers_once_through_a_forced_reset() {
    let world = World::new(200_000);
    let report = world.start(json!([
        {"respond": [
            error("prompt is too long: 213462 tokens > 200000 maximum"),
            text("Recovered in a fresh window."),
        ]},
        {"prompt": "Huge request."},
    ]));
    report.assert_finished(0);
    let kinds = report.kinds();
    let at = kinds
        .iter()
        .position(|k| k == "context_edit")
        .expect("Pi's omission");
    assert_eq!(
        kinds[at - 1..],
        reset_between(
            &["message:assistant", "context_edit"],
            &["message:assistant"]
        )
    );
    assert_eq!(report.markers()[0].1, "forced");
    // The report reads the refused request before the forced reset.
    assert_eq!(report.ledger_ends(), ["overflow", "open"]);
}

#[test]
fn resume_keeps_windows_and_boot_and_the_sidecar_restarts_after_a_kill() {
    let world = World::new(200_000);
    let first = world.start(json!([
        {"respond": [tool("wipe_memory", json!({})), text("Fresh.")]},
        {"prompt": "The secret word is walnut. Please wipe."},
        // The sidecar dies mid-session: one notice, Pi keeps answering.
        {"killSidecar": true},
        {"respond": [text("Still here without notesoup.")]},
        {"prompt": "Are you there?"},
    ]));
    first.assert_finished(0);
    let unavailable: Vec<&str> = first
        .notice_texts()
        .into_iter()
        .filter(|n| n.starts_with("notesoup unavailable: "))
        .collect();
    assert_eq!(unavailable.len(), 1, "{:?}", first.notices);
    // The committed reset stays (it is Pi's own compaction) and the file
    // is whole.
    assert_eq!(first.markers().len(), 1);
    assert_eq!(first.request(-1).last().unwrap(), "user: Are you there?");
    assert!(
        !first
            .requests
            .last()
            .unwrap()
            .iter()
            .any(|(_, t)| t.contains("walnut")),
        "Pi's own projection still cuts at the checkpoint"
    );

    // Reopening the file: session_start starts the sidecar again; the window
    // and its boot stay, no second root boot, the old turn stays out.
    let second = world.run(
        Some(&first.session_file),
        json!([
            {"respond": [tool("get_context_remaining", json!({})), text("Resumed.")]},
            {"prompt": "Resumed?"},
        ]),
    );
    second.assert_finished(0);
    assert!(
        !second
            .notice_texts()
            .iter()
            .any(|n| n.starts_with("notesoup unavailable")),
        "{:?}",
        second.notices
    );
    assert_eq!(second.markers(), first.markers());
    let boots = second
        .kinds()
        .iter()
        .filter(|k| *k == "custom_message:notesoup/boot")
        .count();
    assert_eq!(boots, 2, "the root boot and the fresh window's, no more");
    let request = second.request(0);
    assert_eq!(request[1..3], [SUMMARY, FRESH_BOOT]);
    assert!(!second.requests[0].iter().any(|(_, t)| t.contains("walnut")));
    let remaining = &second.requests[1].last().unwrap().1;
    assert!(remaining.contains("remaining_tokens"), "{remaining}");
}

#[test]
fn a_missing_sidecar_leaves_pi_working_with_one_notice() {
    let world = World::without_sidecar(200_000);
    let report = world.start(json!([
        {"respond": [text("Plain Pi.")]},
        {"prompt": "Hello."},
    ]));
    report.assert_unavailable_once("notesoup unavailable: ");
    // Plain Pi, and the agent told that its memory tools are unavailable
    // (`embedding.rs` checks it is told once): registered as Pi loaded the
    // package, they are not offered.
    assert!(
        !report.offered[0]
            .iter()
            .any(|name| name.starts_with("notes_")),
        "{:?}",
        report.offered
    );
    let request = report.request(0);
    assert_eq!(request[..2], ["system: ", "user: Hello."]);
    assert_eq!(request.len(), 3, "{request:?}");
    assert!(
        request[2].starts_with("user: notesoup is unavailable in this session ("),
        "{request:?}"
    );
}

/// An executable script standing in for `notesoup-pi` (the shim runs
/// `<binary> serve`, and `<binary> --version` when the handshake fails);
/// it says it is this package's version.
fn fake_sidecar(world: &World, name: &str, body: &str) -> std::path::PathBuf {
    fake_sidecar_of_version(world, name, env!("CARGO_PKG_VERSION"), body)
}

fn fake_sidecar_of_version(
    world: &World,
    name: &str,
    version: &str,
    body: &str,
) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = world.path(name);
    let answer_version = format!(
        "if [ \"$1\" = --version ]; then echo 'notesoup-pi {version} (stand-in)'; exit 0; fi"
    );
    std::fs::write(&path, format!("#!/bin/sh\n{answer_version}\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[test]
fn a_sidecar_of_another_version_leaves_pi_working_with_the_documented_notice() {
    let version = env!("CARGO_PKG_VERSION");
    let notice = |sidecar: &std::path::Path| {
        format!(
            "notesoup unavailable: {} is version 0.0.1 but the notesoup-pi Pi package is {version}; \
             install matching versions: `pi install npm:notesoup-pi@0.0.1`, or a notesoup-pi binary \
             of version {version} (`cargo install notesoup-pi --version {version}`)",
            sidecar.display()
        )
    };
    // An older release that speaks this protocol: its handshake says its
    // version. It answers the `session_start` event that follows the hello
    // on the line with an action, which the shim never performs.
    let protocol = notesoup_pi::bridge::protocol::PROTOCOL_VERSION;
    let same_protocol = format!(
        r#"read hello
echo '{{"type":"ready","body":{{"protocol":{protocol},"version":"0.0.1","apiLevel":"0.87","tools":[],"commands":[],"events":[],"omit":[],"summarize":[]}}}}'
read event
echo '{{"type":"action","body":{{"id":1,"action":{{"kind":"appendEntry","args":{{"customType":"notesoup/older"}}}}}}}}'
read rest"#
    );
    // One that speaks another protocol refuses the handshake; its
    // `--version` says why.
    let other_protocol = r#"read hello
echo '{"type":"refused","body":{"protocol":3,"code":"protocol_mismatch","message":"the Pi package speaks protocol 5 but notesoup-pi speaks 3"}}'"#;
    for (name, body) in [
        ("older-notesoup-pi", same_protocol.as_str()),
        ("oldest-notesoup-pi", other_protocol),
    ] {
        let mut world = World::new(200_000);
        world.sidecar = fake_sidecar_of_version(&world, name, "0.0.1", body);
        let report = world.run(
            None,
            json!([
                {"respond": [text("Plain Pi.")]},
                {"prompt": "Hello."},
            ]),
        );
        assert_eq!(report.pending_responses, 0, "{name}");
        assert_eq!(report.notice_texts(), [notice(&world.sidecar)], "{name}");
        assert!(
            !report.kinds().iter().any(|k| k.contains("notesoup/")),
            "{name}"
        );
    }
}

/// A sidecar of this version whose handshake names other tools and events
/// than the package's `ready.json` (built from other sources): Pi
/// offers its tools alone, and forwards it none of the events it did not
/// name.
#[test]
fn a_handshake_that_differs_from_the_shipped_one_is_the_one_served() {
    let mut world = World::new(200_000);
    let protocol = notesoup_pi::bridge::protocol::PROTOCOL_VERSION;
    let version = env!("CARGO_PKG_VERSION");
    let lines = world.path("lines.jsonl");
    world.sidecar = fake_sidecar(
        &world,
        "other-notesoup-pi",
        &format!(
            r#"read hello
echo '{{"type":"ready","body":{{"protocol":{protocol},"version":"{version}","apiLevel":"0.87","tools":[{{"name":"notes_read","label":"Read","description":"Reads.","parameters":{{"type":"object","properties":{{}}}}}}],"commands":[],"events":[],"omit":[],"summarize":[],"onDemand":[]}}}}'
n=0
while read line; do
  n=$((n+1))
  printf '%s\n' "$line" >> '{}'
  echo "{{\"type\":\"result\",\"body\":{{\"id\":$n,\"value\":null}}}}"
done"#,
            lines.display()
        ),
    );
    let report = world.start(json!([
        {"respond": [text("Hello.")]},
        {"prompt": "Hello."},
    ]));
    assert_eq!(report.pending_responses, 0);
    assert!(report.notice_texts().is_empty(), "{:?}", report.notices);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert_eq!(report.offered, [["notes_read"]]);
    // `session_start` and `session_shutdown`, which the shim always
    // forwards; none of the shipped events (`context`, say).
    let sent = std::fs::read_to_string(&lines).unwrap();
    let names: Vec<String> = sent
        .lines()
        .map(|line| {
            serde_json::from_str::<serde_json::Value>(line).unwrap()["body"]["name"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(names, ["session_start", "session_shutdown"]);
}

/// A package without its shipped handshake (`extensions/ready.json`)
/// registers what the sidecar's handshake names at `session_start`, and
/// works as the whole package does.
#[test]
fn a_package_without_its_shipped_handshake_takes_the_sidecar_s() {
    let mut world = World::new(200_000);
    let package = world.path("package-without-ready");
    for (relative, text) in notesoup_pi::bridge::package::files() {
        if relative == "extensions/ready.json" {
            continue;
        }
        let path = package.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    world.package = package;
    let report = world.start(json!([
        {"respond": [
            tool("notes_write", json!({"address": "@project/plan.md", "content": "# Plan\nKept.\n"})),
            text("Noted."),
        ]},
        {"prompt": "Remember the plan."},
    ]));
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert!(report.notice_texts().is_empty(), "{:?}", report.notices);
    assert!(report.offered[0].iter().any(|name| name == "notes_write"));
    assert!(find_note(&world.notes_home(), "plan.md").is_some());
}

#[test]
fn a_protocol_mismatch_leaves_pi_working_with_one_notice() {
    let mut world = World::new(200_000);
    // A sidecar of another protocol version refuses the handshake.
    world.sidecar = fake_sidecar(
        &world,
        "old-notesoup-pi",
        r#"read hello
echo '{"type":"refused","body":{"protocol":3,"code":"protocol_mismatch","message":"the Pi package speaks protocol 2 but notesoup-pi speaks 3"}}'"#,
    );
    let report = world.start(json!([
        {"respond": [text("Plain Pi.")]},
        {"prompt": "Hello."},
    ]));
    assert_eq!(report.pending_responses, 0);
    assert_eq!(
        report.notice_texts(),
        ["notesoup unavailable: the Pi package speaks protocol 2 but notesoup-pi speaks 3"]
    );
    assert!(!report.kinds().iter().any(|k| k.contains("notesoup/")));
}

#[test]
fn a_sidecar_dying_during_a_tool_call_fails_that_call_and_pi_carries_on() {
    let mut world = World::new(200_000);
    let real = env!("CARGO_BIN_EXE_notesoup-pi");
    let dying =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/real_pi/dying_sidecar.mjs");
    world.sidecar = fake_sidecar(
        &world,
        "dying-notesoup-pi",
        &format!(
            "exec '{}' '{}' '{real}' \"$@\"",
            world.pi.node.display(),
            dying.display()
        ),
    );
    let report = world.start(json!([
        {"respond": [
            tool("notes_write", json!({"address": "@project/plan.md", "content": "lost\n"})),
            text("The tool failed; carrying on."),
        ]},
        {"prompt": "Write the plan."},
        {"respond": [text("Still here.")]},
        {"prompt": "Are you there?"},
    ]));
    report.assert_unavailable_once("notesoup unavailable: the sidecar exited");
    // The call failed as an error result; no note was written; the root
    // boot sent before the crash stays; the file is whole.
    let entries = report.entries();
    let result = entries
        .iter()
        .find(|e| e["message"]["role"] == "toolResult")
        .expect("a tool result");
    assert_eq!(result["message"]["isError"], true);
    assert!(find_note(&world.notes_home(), "plan.md").is_none());
    assert!(
        report
            .kinds()
            .contains(&"custom_message:notesoup/boot".to_owned())
    );
    // The next run is told, once, that the memory tools are gone and why,
    // and is not offered them.
    assert!(report.offered[0].iter().any(|name| name == "notes_write"));
    assert!(
        !report
            .offered
            .last()
            .unwrap()
            .iter()
            .any(|name| name.starts_with("notes_")),
        "{:?}",
        report.offered
    );
    let last = report.request(-1);
    assert_eq!(last[last.len() - 2], "user: Are you there?");
    assert!(
        last[last.len() - 1]
            .starts_with("user: notesoup is unavailable in this session (the sidecar exited"),
        "{last:?}"
    );
}

/// A sidecar that copies every line the shim sends it into `lines`.
fn teeing_sidecar(world: &World, lines: &std::path::Path) -> std::path::PathBuf {
    fake_sidecar(
        world,
        "teeing-notesoup-pi",
        &format!(
            "tee '{}' | '{}' serve",
            lines.display(),
            crate::sidecar().display()
        ),
    )
}

/// Follows the mirror the shim builds in the sidecar from the lines it
/// sent: at every state the mirror is a prefix of the entries Pi wrote
/// (ids in order) and holds the leaf, and no entry went on the line twice.
fn assert_mirror_follows_pi(lines: &std::path::Path, session_file: &std::path::Path) {
    let written: Vec<String> = std::fs::read_to_string(session_file)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .filter(|entry| entry["type"] != "session")
        .map(|entry| entry["id"].as_str().unwrap().to_owned())
        .collect();
    let mut mirror: Vec<String> = Vec::new();
    let (mut states, mut sent) = (0, 0);
    for line in std::fs::read_to_string(lines).unwrap().lines() {
        let message: serde_json::Value = serde_json::from_str(line).unwrap();
        let Some(state) = message["body"].get("state") else {
            continue;
        };
        states += 1;
        let from = state["entriesFrom"].as_u64().unwrap() as usize;
        if let Some(on_disk) = state.get("onDisk") {
            let count = on_disk["count"].as_u64().unwrap() as usize;
            assert_eq!(from, count, "{state}");
            mirror = written[..count].to_vec();
        }
        assert!(from <= mirror.len(), "entriesFrom {from} past the mirror");
        mirror.truncate(from);
        let entries = state["entries"].as_array().unwrap();
        sent += entries.len();
        mirror.extend(entries.iter().map(|e| e["id"].as_str().unwrap().to_owned()));
        assert!(
            written.starts_with(&mirror),
            "the mirror {mirror:?} is not what Pi wrote {written:?}"
        );
        if let Some(leaf) = state["leafId"].as_str() {
            assert!(
                mirror.iter().any(|id| id == leaf),
                "leaf {leaf} not mirrored"
            );
        }
    }
    assert!(states > 5, "{states} states");
    assert!(
        sent <= written.len(),
        "{sent} entries sent for {} written: some went twice",
        written.len()
    );
}

/// Seeded runs of session changes with no event between them (appends at
/// the leaf, the leaf moved to any entry, entries left off its path), each
/// followed by a prompt: the entries reach the sidecar once and in order,
/// whichever way the shim finds them.
#[test]
fn the_mirror_follows_pi_through_changes_made_between_events() {
    for seed in [1, 7, 42] {
        let mut world = World::new(200_000);
        let lines = world.path("bridge-in.jsonl");
        world.sidecar = teeing_sidecar(&world, &lines);
        let mut steps = vec![
            json!({"respond": [text("Noted.")]}),
            json!({"prompt": "First question."}),
        ];
        for round in 0..4 {
            steps.push(json!({"shuffle": {"seed": seed * 10 + round, "steps": 6}}));
            steps.push(json!({"respond": [text("Still here.")]}));
            steps.push(json!({"prompt": format!("Round {round}.")}));
        }
        let report = world.start(serde_json::Value::Array(steps));
        report.assert_finished(0);
        assert_mirror_follows_pi(&lines, &report.session_file);
    }
}

#[test]
fn tree_navigation_across_a_reset_skips_the_summary_and_keeps_the_windows() {
    let mut world = World::new(200_000);
    let lines = world.path("bridge-in.jsonl");
    world.sidecar = teeing_sidecar(&world, &lines);
    let report = world.start(json!([
        {"respond": [text("Noted.")]},
        {"prompt": "First question."},
        {"respond": [tool("wipe_memory", json!({})), text("Fresh.")]},
        {"prompt": "Please wipe."},
        // Back to before the reset, asking for a summary of the
        // abandoned branch: it holds a reset, so notesoup supplies an
        // empty one and Pi writes no branch_summary (no model call).
        {"navigate": {"userMessage": 1, "summarize": true}},
        {"respond": [text("On the old branch.")]},
        {"prompt": "Hello from the old branch."},
        {"asideOffPath": "Off the path."},
        {"respond": [text("Still here.")]},
        {"prompt": "And now?"},
    ]));
    report.assert_finished(0);
    assert!(
        report.notice_texts().contains(
            &"notesoup: skipped branch summary across a reset window; navigation continues without erased history."
        ),
        "{:?}",
        report.notices
    );
    assert!(!report.kinds().contains(&"branch_summary".to_owned()));
    // The old branch has no marker: its window is the root window, whose
    // boot is still the first thing the model sees; no second root boot.
    let last = report.request(-1);
    assert_eq!(last[0], ROOT_BOOT);
    assert_eq!(last[last.len() - 3], "user: Hello from the old branch.");
    assert_eq!(last.last().unwrap(), "user: And now?");
    let boots = report
        .kinds()
        .iter()
        .filter(|k| *k == "custom_message:notesoup/boot")
        .count();
    assert_eq!(boots, 2, "the root boot and the reset's boot, no more");
    // The entries appended after the move, and the one left off the
    // leaf's path, all reach the sidecar once.
    assert_mirror_follows_pi(&lines, &report.session_file);
}
