//! The sidecar over its JSON-lines protocol, fed the recorded log the way the
//! bundle feeds it: each event once, in batches.

use notesoup_dsh::boot::{NotesPlace, store};
use serde_json::{Value, json};

use notesoup_dsh::decode::SessionLog;
use notesoup_test_support::files::put;

use crate::{Client, fixture_log, hello, session};

/// The recorded log (a wipe and its reset), its session id and folder.
fn recorded() -> (SessionLog, String, String) {
    let log = fixture_log("wipe-reset.session.jsonl");
    let id = log.header.id.clone();
    let cwd = log.header.cwd.clone().expect("cwd");
    (log, id, cwd)
}

/// A client greeted over a notes folder of its own (kept while it is held).
fn greeted() -> (tempfile::TempDir, Client) {
    let notes = tempfile::tempdir().expect("tempdir");
    let client = Client::greeted(notes.path());
    (notes, client)
}

#[test]
fn hello_first_and_version_checked() {
    let notes = tempfile::tempdir().expect("tempdir");
    let mut client = Client::new(notes.path());
    let early = client.call("window.open", json!({"session": session("s", "/", 0, &[])}));
    assert_eq!(early["error"]["code"], "protocol_mismatch");
    let wrong = client.call("hello", json!({"protocol": 2, "bundle": "x", "dsh": "y"}));
    assert_eq!(wrong["error"]["code"], "protocol_mismatch");
    let garbage: Value =
        serde_json::from_str(&client.sidecar.answer_line("{\"id\": 9, \"op\": 3}")).expect("json");
    assert_eq!(
        garbage,
        json!({"id": 9, "error": {"code": "bad_request", "message": garbage["error"]["message"]}})
    );
    let greeted = client.ok("hello", hello());
    assert_eq!(greeted["protocol"], 1);
    assert_eq!(greeted["dsh"], "0.1.0-rc.8");
}

#[test]
fn the_recorded_session_through_the_protocol() {
    let (log, id, cwd) = recorded();
    let (notes, mut client) = greeted();

    // The agent appears with its first snapshot logged: the boot it keeps.
    let opened = client.ok(
        "window.open",
        json!({"session": session(&id, &cwd, 0, &log.events[..9])}),
    );
    assert_eq!(opened["window_id"], format!("dsh:{id}:1"));
    assert!(
        opened["context_text"]
            .as_str()
            .expect("text")
            .starts_with("<context_window>")
    );
    assert_eq!(opened["pending_reset"], Value::Null);

    // A gap asks for the whole log again.
    let gap = client.call(
        "budget.decide",
        json!({"session": session(&id, &cwd, 20, &log.events[20..21])}),
    );
    assert_eq!(gap["error"]["code"], "resync");

    // Before step 2: 7,821 of 131,072 tokens used decides nothing.
    let budget = client.ok(
        "budget.decide",
        json!({"session": session(&id, &cwd, 9, &log.events[9..23]),
        "total_tokens": 7821, "context_window": 131072}),
    );
    assert_eq!(
        budget,
        json!({"action": "none", "remaining_tokens": 123251, "message": null})
    );
    let remaining = client.ok("tool", json!({"session": session(&id, &cwd, 23, &[]), "name": "get_context_remaining", "arguments": {}}));
    assert_eq!(remaining["text"], "{\"remaining_tokens\":90483}");

    // wipe_memory once, then already pending; both end the turn.
    let wipe = client.ok("tool", json!({"session": session(&id, &cwd, 23, &log.events[23..31]), "name": "wipe_memory", "arguments": {}}));
    assert_eq!(wipe["text"], "{\"status\":\"rollover_requested\"}");
    assert_eq!(wipe["conclude_turn"], true);
    assert_eq!(
        wipe["reset"],
        json!({"origin": "normal", "trigger": "tool", "prompt": null})
    );
    let again = client.ok(
        "tool",
        json!({"session": session(&id, &cwd, 31, &[]), "name": "wipe_memory", "arguments": {}}),
    );
    assert_eq!(again["text"], "{\"status\":\"rollover_already_pending\"}");

    // The note written in window 1 shows in window 2's boot.
    store(
        &NotesPlace {
            root: notes.path().to_path_buf(),
            agent: "anonymous".into(),
            cache: None,
        },
        Some(&id),
        &cwd,
        Some("scripted-model"),
        true,
    )
    .expect("store")
    .write("checkpoint.md", "# Goal\nkeep going", None)
    .expect("write");
    let surface = [7, 8, 18, 21, 29, 31];
    let plan = client.ok(
        "reset.plan",
        json!({"session": session(&id, &cwd, 31, &log.events[31..34]),
        "surface": surface, "origin": "normal", "trigger": "tool"}),
    );
    assert_eq!(plan["window_id"], format!("dsh:{id}:2"));
    assert_eq!(plan["replace"], json!({"start": 7, "end": 31}));
    assert_eq!(plan["source_event_seqs"], json!(surface));
    assert_eq!(plan["context_text"], "");
    let boot = plan["message"]["content"][0]["text"]
        .as_str()
        .expect("boot");
    assert!(
        boot.contains(&format!(
            "Current context window id: dsh:{id}:2\nPrevious context window id: dsh:{id}:1\n"
        )),
        "{boot}"
    );
    assert!(boot.contains("checkpoint.md"), "{boot}");
    assert_eq!(plan["message"]["source"]["windowId"], format!("dsh:{id}:2"));
    assert_eq!(plan["followup"]["source"]["notice"], "continuation");

    // The marker lands: the log now recovers window 2 with its boot in the marker.
    let reopened = client.ok(
        "window.open",
        json!({"session": session(&id, &cwd, 34, &log.events[34..])}),
    );
    assert_eq!(reopened["window_id"], format!("dsh:{id}:2"));
    assert_eq!(reopened["context_text"], "");
    assert_eq!(reopened["pending_reset"], Value::Null);
}

#[test]
fn a_wipe_without_its_reset_is_recovered_as_pending() {
    let (log, id, _) = recorded();
    let (_notes, mut client) = greeted();
    let opened = client.ok(
        "window.open",
        json!({"session": session(&id, "/", 0, &log.events[..34])}),
    );
    assert_eq!(opened["pending_reset"]["trigger"], "tool");
}

#[test]
fn fresh_window_steers_a_close_out_once() {
    let (_notes, mut client) = greeted();
    let first = client.ok(
        "command.fresh_window",
        json!({"session": session("s", "/", 0, &[]), "prompt": "fix the build"}),
    );
    assert_eq!(
        first["reset"],
        json!({"origin": "normal", "trigger": "manual", "prompt": "fix the build"})
    );
    assert_eq!(first["steer"]["source"]["notice"], "close-out");
    assert!(
        first["steer"]["content"][0]["text"]
            .as_str()
            .expect("text")
            .contains("fix the build")
    );
    let second = client.ok(
        "command.fresh_window",
        json!({"session": session("s", "/", 0, &[]), "prompt": null}),
    );
    assert_eq!(second["steer"], Value::Null);
    assert_eq!(second["reset"], Value::Null);
}

#[test]
fn notes_tools_write_to_the_session_homes() {
    let (log, id, cwd) = recorded();
    let (notes, mut client) = greeted();
    let mut tool = |from: u64, name: &str, arguments: Value| {
        client.ok(
            "tool",
            json!({"session": session(&id, &cwd, from, if from == 0 { &log.events[..9] } else { &[] }),
                   "name": name, "arguments": arguments}),
        )
    };

    let written = tool(
        0,
        "notes_write",
        json!({"address": "checkpoint.md", "content": "# Goal\nship the dsh adapter"}),
    );
    assert_eq!(written["is_error"], false, "{written}");
    let receipt = written["text"].as_str().expect("text");
    assert!(
        receipt.starts_with("created checkpoint.md (project work-"),
        "the session note belongs to the cwd's project: {receipt}"
    );
    let on_disk = notes
        .path()
        .join("pi/session")
        .join(&id)
        .join("checkpoint.md");
    let text = std::fs::read_to_string(&on_disk).expect("the note is on disk");
    assert!(text.ends_with("# Goal\nship the dsh adapter"), "{text}");

    let updated = tool(
        9,
        "notes_update",
        json!({"address": "checkpoint.md", "edits": [{"oldText": "ship", "newText": "finish"}]}),
    );
    assert_eq!(updated["result"]["change_kind"], "body");
    assert!(
        updated["text"]
            .as_str()
            .expect("text")
            .ends_with("diff:\n 1 # Goal\n-2 ship the dsh adapter\n+2 finish the dsh adapter"),
        "{updated}"
    );
    let read = tool(9, "notes_read", json!({"address": "checkpoint.md"}));
    assert_eq!(read["result"]["text"], "# Goal\nfinish the dsh adapter");
    let listed = tool(9, "notes_list", json!({}));
    assert_eq!(listed["result"]["files"][0]["address"], "checkpoint.md");

    let refused = tool(9, "notes_read", json!({"address": "@nowhere/x.md"}));
    assert_eq!(refused["is_error"], true);
    assert_eq!(refused["result"]["code"], "invalid_address");
    let unknown = client.call(
        "tool",
        json!({"session": session(&id, &cwd, 9, &[]), "name": "notes_delete", "arguments": {}}),
    );
    // Core's one table answers a name it does not hold.
    assert_eq!(unknown["result"]["is_error"], true);
    assert_eq!(unknown["result"]["result"]["code"], "unknown_tool");
}

#[test]
fn a_reset_is_followed_by_the_human_s_prompt_by_nothing_or_by_the_continuation() {
    let (log, id, cwd) = recorded();
    let followup = |trigger: &str, prompt: Value| {
        let (_notes, mut client) = greeted();
        let plan = client.ok(
            "reset.plan",
            json!({"session": session(&id, &cwd, 0, &log.events[..34]),
                   "surface": [7, 8, 18, 21, 29, 31], "origin": "normal",
                   "trigger": trigger, "prompt": prompt}),
        );
        plan["followup"].clone()
    };

    let carried = followup("manual", json!("carry on with the parser"));
    assert_eq!(carried["content"][0]["text"], "carry on with the parser");
    assert_eq!(carried["source"], json!({"kind": "user"}));
    assert_eq!(followup("manual", Value::Null), Value::Null);
    assert_eq!(followup("compaction", Value::Null), Value::Null);
    for trigger in ["tool", "budget", "overflow"] {
        let greeting = followup(trigger, Value::Null);
        assert_eq!(greeting["source"]["notice"], "continuation", "{trigger}");
        assert_eq!(
            greeting["source"]["summary"],
            format!("notesoup: fresh context window dsh:{id}:2"),
            "{trigger}"
        );
    }
}

#[test]
fn only_a_successful_wipe_in_the_current_window_is_a_pending_reset() {
    let (log, id, _) = recorded();
    let pending = |edit: &dyn Fn(&mut Vec<notesoup_dsh::decode::SessionEvent>)| {
        let mut events = log.events[..34].to_vec();
        edit(&mut events);
        let (_notes, mut client) = greeted();
        let opened = client.ok(
            "window.open",
            json!({"session": session(&id, "/", 0, &events)}),
        );
        opened["pending_reset"].clone()
    };
    let wipe_call = log.events[..34]
        .iter()
        .position(|event| event.kind == "tool/call" && event.data["name"] == "wipe_memory")
        .expect("the wipe's call");
    let wipe_result = log.events[..34]
        .iter()
        .position(|event| {
            event.kind == "tool/result"
                && event.data["message"]["content"][0]["toolCallId"]
                    == log.events[wipe_call].data["callId"]
        })
        .expect("the wipe's result");

    assert_eq!(pending(&|_| {})["trigger"], "tool");
    let failed = |events: &mut Vec<notesoup_dsh::decode::SessionEvent>| {
        events[wipe_result].data["message"]["content"][0]["isError"] = json!(true);
    };
    assert_eq!(pending(&failed), Value::Null, "a failed wipe");
    let renamed = |events: &mut Vec<notesoup_dsh::decode::SessionEvent>| {
        events[wipe_call].data["name"] = json!("notes_write");
    };
    assert_eq!(pending(&renamed), Value::Null, "another tool's call");
}

#[test]
fn a_refused_reset_plan_drops_the_request() {
    let (log, id, _) = recorded();
    let (_notes, mut client) = greeted();
    let wipe = json!({"session": session(&id, "/", 0, &log.events[..31]), "name": "wipe_memory", "arguments": {}});
    assert_eq!(
        client.ok("tool", wipe)["text"],
        "{\"status\":\"rollover_requested\"}"
    );
    // dsh's surface differs from the mirror's: nothing is planned.
    let refused = client.call(
        "reset.plan",
        json!({"session": session(&id, "/", 31, &[]), "surface": [7], "origin": "normal", "trigger": "tool"}),
    );
    assert_eq!(refused["error"]["code"], "reset_refused");
    let again = client.ok(
        "tool",
        json!({"session": session(&id, "/", 31, &[]), "name": "wipe_memory", "arguments": {}}),
    );
    assert_eq!(again["text"], "{\"status\":\"rollover_requested\"}");
    assert_eq!(again["reset"]["trigger"], "tool");
}

#[test]
fn a_long_log_goes_ahead_in_sync_batches() {
    let (log, id, cwd) = recorded();
    let (notes, mut whole) = greeted();
    let at_once = whole.ok(
        "window.open",
        json!({"session": session(&id, &cwd, 0, &log.events)}),
    );

    let mut client = Client::greeted(notes.path());
    let first = client.ok(
        "session.sync",
        json!({"session": session(&id, &cwd, 0, &log.events[..10])}),
    );
    assert_eq!(first, json!({"next": 10}));
    let gap = client.call(
        "session.sync",
        json!({"session": session(&id, &cwd, 12, &log.events[12..20])}),
    );
    assert_eq!(gap["error"]["code"], "resync");
    let second = client.ok(
        "session.sync",
        json!({"session": session(&id, &cwd, 10, &log.events[10..20])}),
    );
    assert_eq!(second, json!({"next": 20}));
    let batched = client.ok(
        "window.open",
        json!({"session": session(&id, &cwd, 20, &log.events[20..])}),
    );
    assert_eq!(batched, at_once);
    assert_eq!(batched["window_id"], format!("dsh:{id}:2"));
}

/// Writes `content` to `address` through the `notes_write` tool of a sidecar
/// greeted with `settings`.
fn write_through(settings: Value, address: &str, content: &str) -> (Value, tempfile::TempDir) {
    let notes = tempfile::tempdir().expect("tempdir");
    let mut client = Client::new(notes.path());
    let mut greeting = hello();
    greeting["settings"] = settings;
    client.ok("hello", greeting);
    let answer = client.ok(
        "tool",
        json!({"session": session("session-guard", "/work", 0, &[]), "name": "notes_write",
               "arguments": {"address": address, "content": content}}),
    );
    (answer, notes)
}

#[test]
fn the_secret_guard_follows_the_setting() {
    let key = "# Keys\naws_access_key_id = AKIAIOSFODNN7EXAMPLX\n";
    let (refused, notes) = write_through(json!({}), "@human/keys", key);
    assert_eq!(refused["is_error"], true, "{refused}");
    assert_eq!(refused["result"]["code"], "secret_detected", "{refused}");
    assert!(!notes.path().join("human/keys.md").exists());
    let (stored, notes) = write_through(json!({"secretGuard": false}), "@human/keys", key);
    assert_eq!(stored["is_error"], false, "{stored}");
    assert!(notes.path().join("human/keys.md").exists());
}

/// A project's `.dsh/notesoup.json` comes with its repository: it may turn
/// the guard on, never off; only the user's own settings turn it off.
#[test]
fn a_project_turns_the_secret_guard_on_never_off() {
    let key = "# Keys\naws_access_key_id = AKIAIOSFODNN7EXAMPLX\n";
    let notes = tempfile::tempdir().expect("tempdir");
    let relaxed = tempfile::tempdir().expect("project");
    let strict = tempfile::tempdir().expect("project");
    let plain = tempfile::tempdir().expect("project");
    let settings = |dir: &tempfile::TempDir, text: &str| {
        put(&dir.path().join(".dsh/notesoup.json"), text);
    };
    settings(&relaxed, r#"{"notesoup": {"secretGuard": false}}"#);
    settings(&strict, r#"{"notesoup": {"secretGuard": true}}"#);
    // Not a boolean: no project setting, the sidecar's value holds.
    settings(&plain, r#"{"notesoup": {"secretGuard": "off"}}"#);
    let write = |row: Value, project: &tempfile::TempDir, address: &str| {
        let mut client = Client::new(notes.path());
        let mut greeting = hello();
        greeting["settings"] = row;
        client.ok("hello", greeting);
        let cwd = project.path().display().to_string();
        client.ok(
            "tool",
            json!({"session": session("session-project", &cwd, 0, &[]), "name": "notes_write",
                   "arguments": {"address": address, "content": key}}),
        )
    };
    let refused = write(json!({}), &relaxed, "@project/keys");
    assert_eq!(refused["result"]["code"], "secret_detected", "{refused}");
    let refused = write(json!({}), &plain, "@project/keys");
    assert_eq!(refused["result"]["code"], "secret_detected", "{refused}");
    // The project tightens the row's setting.
    let refused = write(json!({"secretGuard": false}), &strict, "@project/keys");
    assert_eq!(refused["result"]["code"], "secret_detected", "{refused}");
    // The user's own false holds beside the project's, or its non-boolean.
    let stored = write(json!({"secretGuard": false}), &plain, "@project/keys");
    assert_eq!(stored["is_error"], false, "{stored}");
    let stored = write(json!({"secretGuard": false}), &relaxed, "@project/keys");
    assert_eq!(stored["is_error"], false, "{stored}");
}

#[test]
fn boots_stay_within_boot_max_chars() {
    let notes = tempfile::tempdir().expect("tempdir");
    let place = NotesPlace {
        root: notes.path().to_path_buf(),
        agent: "anonymous".into(),
        cache: None,
    };
    // Far more notes than a 4,000-character boot can show.
    let notes_store = store(
        &place,
        Some("session-big"),
        "/work",
        Some("scripted-model"),
        true,
    )
    .expect("store");
    for index in 0..60 {
        notes_store
            .write(
                &format!("@human/page-{index:02}"),
                &format!(
                    "# A long title for page {index} {}\nbody\n",
                    "word ".repeat(20)
                ),
                None,
            )
            .expect("write");
    }
    for (settings, bound) in [(json!({}), 10_000), (json!({"bootMaxChars": 4000}), 4_000)] {
        let mut client = Client::new(notes.path());
        let mut greeting = hello();
        greeting["settings"] = settings;
        let greeted = client.ok("hello", greeting);
        assert_eq!(greeted["warnings"], json!([]));
        let opened = client.ok(
            "window.open",
            json!({"session": session("session-big", "/work", 0, &[])}),
        );
        let boot = opened["context_text"].as_str().expect("boot");
        assert!(
            boot.chars().count() <= bound,
            "{} > {bound}",
            boot.chars().count()
        );
        assert!(boot.contains("page-"), "{boot}");
    }
}

#[test]
fn settings_problems_and_another_dsh_warn_once_at_hello() {
    let notes = tempfile::tempdir().expect("tempdir");
    let mut client = Client::new(notes.path());
    let mut greeting = hello();
    greeting["settings"] = json!({"automaticResets": "yes", "reserveTokens": 0});
    greeting["running_dsh"] = json!("0.1.5-rc.2");
    let greeted = client.ok("hello", greeting);
    let warnings: Vec<&str> = greeted["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(warnings.len(), 3, "{warnings:#?}");
    assert!(
        warnings.iter().all(|w| w.starts_with("notesoup: ")),
        "{warnings:#?}"
    );
    assert!(warnings.iter().any(|w| w.starts_with(
        "notesoup: automaticResets must be true or false (got \"yes\"); keeping automatic resets on."
    )));
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("notesoup: reserveTokens must be a positive integer"))
    );
    assert!(warnings.iter().any(|w| {
        w.starts_with("notesoup: this is dsh 0.1.5-rc.2, but notesoup-dsh")
            && w.contains("dsh 0.1.0-rc.8 only")
    }));
    let mut pinned = hello();
    pinned["running_dsh"] = json!("0.1.0-rc.8");
    assert_eq!(
        Client::new(notes.path()).ok("hello", pinned)["warnings"],
        json!([])
    );
}
