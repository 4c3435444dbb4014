//! The bridge without Node: the built `notesoup-pi serve` over real pipes,
//! fed the lines a shim would send, and the Pi package's files.

use std::path::Path;
use std::process::Command;

use notesoup_pi::bridge::package;
use notesoup_pi::bridge::protocol::PROTOCOL_VERSION;
use notesoup_test_support::child::Proc;
use notesoup_test_support::files;
use serde_json::{Value, json};

/// Every event the shim takes on demand, in the order a run meets them.
const EVERY_ON_DEMAND_EVENT: [&str; 4] = [
    "turn_start",
    "turn_end",
    "agent_before_settle",
    "agent_settled",
];

/// A running `notesoup-pi serve` with a notes home in a temp dir.
struct Sidecar {
    proc: Proc,
    _temp: Option<tempfile::TempDir>,
    notes: std::path::PathBuf,
}

impl Sidecar {
    fn start() -> Self {
        let temp = tempfile::tempdir().unwrap();
        let mut sidecar = Self::start_in(&temp.path().join("notes"), &temp.path().join("cache"));
        sidecar._temp = Some(temp);
        sidecar
    }

    /// A sidecar over the notes root `notes` keeping its caches in `cache`
    /// (its `XDG_CACHE_HOME`).
    fn start_in(notes: &Path, cache: &Path) -> Self {
        let proc = Proc::spawn(
            Command::new(env!("CARGO_BIN_EXE_notesoup-pi"))
                .arg("serve")
                .env("PI_NOTES_HOME", notes)
                .env("PI_NOTES_AGENT", "tester")
                .env("XDG_CACHE_HOME", cache),
        );
        Self {
            proc,
            _temp: None,
            notes: notes.to_owned(),
        }
    }

    /// Starts the session in `cwd` (`session_start`, the shim performing
    /// the boot's action); the root boot's text.
    fn session_start(&mut self, cwd: &Path) -> String {
        let action = self.boot_action(cwd);
        let message = &action["body"]["action"]["args"]["message"];
        assert_eq!(message["customType"], "notesoup/boot", "{action}");
        let text = match &message["content"] {
            Value::String(text) => text.clone(),
            content => content[0]["text"].as_str().unwrap().to_owned(),
        };
        let boot = json!({"type": "custom_message", "customType": "notesoup/boot", "content": message["content"],
            "display": false, "details": message["details"], "id": "a1b2c3d4", "parentId": null,
            "timestamp": "2026-01-01T00:00:01.000Z"});
        self.send(json!({"type": "actionResult", "body": {
            "id": action["body"]["id"], "state": state(cwd, vec![boot], 0, Some("a1b2c3d4")),
        }}));
        let result = self.next();
        assert_eq!(result["type"], "result", "{result}");
        text
    }

    /// Sends a fresh session's `session_start` in `cwd` (event 1); the
    /// boot's action.
    fn boot_action(&mut self, cwd: &Path) -> Value {
        self.send(json!({"type": "event", "body": {
            "id": 1, "name": "session_start", "payload": {"type": "session_start", "reason": "startup"},
            "state": state(cwd, vec![], 0, None),
        }}));
        let action = self.next();
        assert_eq!(action["type"], "action", "{action}");
        assert_eq!(action["body"]["action"]["kind"], "sendMessage", "{action}");
        action
    }

    /// The project folder of the sessions, created.
    fn project(&self) -> std::path::PathBuf {
        let cwd = self.notes.parent().unwrap().join("project");
        std::fs::create_dir_all(&cwd).unwrap();
        cwd
    }

    /// A sidecar past the handshake, with a project folder: the sidecar,
    /// the project and the `ready` answer.
    fn ready_in_a_project() -> (Self, std::path::PathBuf, Value) {
        let mut sidecar = Self::start();
        let cwd = sidecar.project();
        let ready = sidecar.handshake();
        (sidecar, cwd, ready)
    }

    /// Sends the hello of Pi 1.6.0 at this protocol; the `ready` answer.
    fn handshake(&mut self) -> Value {
        self.send(
            json!({"type": "hello", "body": {"protocol": PROTOCOL_VERSION, "piVersion": "1.6.0"}}),
        );
        let ready = self.next();
        assert_eq!(ready["type"], "ready");
        ready
    }

    /// The event's result, each nested action before it answered as the
    /// shim does, with `state`; the actions, in order.
    fn result_answering(&mut self, state: &Value) -> (Value, Vec<Value>) {
        let mut actions = Vec::new();
        loop {
            let message = self.next();
            if message["type"] == "result" {
                return (message, actions);
            }
            assert_eq!(message["type"], "action", "{message}");
            self.send(json!({"type": "actionResult", "body": {
                "id": message["body"]["id"], "state": state,
            }}));
            actions.push(message["body"]["action"].clone());
        }
    }

    fn send(&mut self, message: Value) {
        self.proc.send(&message);
    }

    fn next(&mut self) -> Value {
        self.proc.next()
    }

    fn finish(self) -> std::process::ExitStatus {
        self.proc.finish().0
    }
}

/// The session state the Pi package sends with an event.
pub fn state(cwd: &Path, entries: Vec<Value>, from: u32, leaf: Option<&str>) -> Value {
    json!({
        "sessionId": "01a2324d-b8ef-7034-88ed-c5815690112d",
        "header": {"type": "session", "version": 3, "id": "01a2324d-b8ef-7034-88ed-c5815690112d",
                   "timestamp": "2026-01-01T00:00:00.000Z", "cwd": cwd},
        "entriesFrom": from,
        "entries": entries,
        "leafId": leaf,
        "cwd": cwd,
        "idle": true,
        "pendingMessages": false,
        "signalAborted": false,
        "model": {"provider": "faux", "id": "faux-1", "contextWindow": 200000, "maxTokens": 8192},
        "settings": {"global": {}, "project": {}},
        "projectTrusted": true,
    })
}

#[test]
fn the_handshake_names_tools_commands_and_events() {
    let mut sidecar = Sidecar::start();
    let ready = sidecar.handshake();
    let body = &ready["body"];
    assert_eq!(body["protocol"], PROTOCOL_VERSION);
    assert_eq!(body["apiLevel"], "0.87");
    // The names of the ready body's `tools` or `commands`.
    let names = |key: &str| -> Vec<&str> {
        body[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect()
    };
    let tools = names("tools");
    assert_eq!(tools[..2], ["get_context_remaining", "wipe_memory"]);
    assert_eq!(tools.len(), 11);
    // Shared tools declare the shape of their structuredContent; the budget
    // tools answer with plain JSON text and declare none.
    let spec = |name: &str| {
        body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap()
            .clone()
    };
    assert!(spec("notes_write")["outputSchema"].is_object());
    assert!(spec("wipe_memory").get("outputSchema").is_none());
    assert_eq!(spec("notes_write")["executionMode"], "sequential");
    let commands = names("commands");
    assert_eq!(commands, ["notesoup", "fresh-window"]);
    assert!(
        body["events"]
            .as_array()
            .unwrap()
            .contains(&json!("turn_end"))
    );
    // Forwarded, but subscribed to only while a result asks for it (or,
    // for `turn_end`, while the turn's own messages say so).
    assert_eq!(body["onDemand"], json!(EVERY_ON_DEMAND_EVENT));
    // The usage is read only by the budget: every forwarded event's state
    // but `context`'s and `turn_end`'s leaves it out, and those exchanges,
    // tool calls and commands have the sidecar compute it.
    let forwarded = body["events"].as_array().unwrap();
    let omitted = body["usageOmitted"].as_array().unwrap();
    assert_eq!(omitted.len(), forwarded.len() - 2, "{omitted:?}");
    assert!(!omitted.contains(&json!("context")) && !omitted.contains(&json!("turn_end")));
    assert!(omitted.iter().all(|event| forwarded.contains(event)));
    assert_eq!(
        body["usageComputed"],
        json!(["context", "turn_end", "execute_tool", "command"])
    );
    assert!(
        body["events"]
            .as_array()
            .unwrap()
            .contains(&json!("agent_before_settle"))
    );
    assert!(sidecar.finish().success());
}

#[test]
fn a_protocol_mismatch_or_an_old_pi_is_refused() {
    for (hello, code) in [
        (
            json!({"protocol": PROTOCOL_VERSION + 1, "piVersion": "1.6.0"}),
            "protocol_mismatch",
        ),
        (
            json!({"protocol": PROTOCOL_VERSION, "piVersion": "0.58.3"}),
            "host_too_old",
        ),
    ] {
        let mut sidecar = Sidecar::start();
        sidecar.send(json!({"type": "hello", "body": hello}));
        let refused = sidecar.next();
        assert_eq!(refused["type"], "refused");
        assert_eq!(refused["body"]["code"], code);
        assert_eq!(sidecar.finish().code(), Some(3));
    }
}

#[test]
fn session_start_sends_the_root_boot_through_a_nested_action_and_tools_write_notes() {
    let (mut sidecar, cwd, _) = Sidecar::ready_in_a_project();

    sidecar.send(json!({"type": "event", "body": {
        "id": 1, "name": "session_start", "payload": {"type": "session_start", "reason": "startup"},
        "state": state(&cwd, vec![], 0, None),
    }}));
    // The boot is an action the shim performs before the event's result.
    let action = sidecar.next();
    assert_eq!(action["type"], "action");
    assert_eq!(action["body"]["action"]["kind"], "sendMessage");
    let message = &action["body"]["action"]["args"]["message"];
    assert_eq!(message["customType"], "notesoup/boot");
    assert_eq!(
        action["body"]["action"]["args"]["options"]["triggerTurn"],
        false
    );
    let boot = json!({"type": "custom_message", "customType": "notesoup/boot", "content": message["content"],
        "display": false, "details": message["details"], "id": "a1b2c3d4", "parentId": null,
        "timestamp": "2026-01-01T00:00:01.000Z"});
    sidecar.send(json!({"type": "actionResult", "body": {
        "id": action["body"]["id"], "state": state(&cwd, vec![boot], 0, Some("a1b2c3d4")),
    }}));
    let result = sidecar.next();
    assert_eq!(result["type"], "result");
    assert_eq!(
        result["body"],
        json!({"id": 1, "value": null, "onDemand": []})
    );

    sidecar.send(json!({"type": "event", "body": {
        "id": 2, "name": "execute_tool",
        "payload": {"toolCallId": "call_1", "name": "notes_write",
                    "params": {"address": "@human/style.md", "content": "Short answers.\n"}},
        "state": state(&cwd, vec![], 1, Some("a1b2c3d4")),
    }}));
    let result = sidecar.next();
    assert_eq!(result["type"], "result");
    assert_eq!(result["body"]["id"], 2);
    assert!(result["body"]["value"]["content"][0]["text"].is_string());
    // Core's compact JSON travels as the result's structuredContent.
    let structured = &result["body"]["value"]["structuredContent"];
    assert_eq!(structured["address"], "@human/style.md", "{result}");
    assert_eq!(structured["outcome"], "created", "{result}");
    let note = std::fs::read_to_string(sidecar.notes.join("human/style.md")).unwrap();
    assert!(note.ends_with("Short answers.\n"), "{note}");
    assert!(sidecar.finish().success());
}

/// Each start of Pi is a new sidecar: its first boot reads the boot
/// shelves and note heads the last one saved in the cache directory
/// (`$XDG_CACHE_HOME/notesoup`, made the owner's alone). Whatever changed in
/// the store since they were kept, the boot is the one a sidecar without
/// any cache gives, and damaged caches are passed over and made anew.
#[test]
fn a_new_sidecar_boots_through_the_caches_the_last_one_kept() {
    let temp = tempfile::tempdir().unwrap();
    let (notes, cache) = (temp.path().join("notes"), temp.path().join("cache"));
    let cwd = temp.path().join("project");
    std::fs::create_dir_all(&cwd).unwrap();
    let key = notesoup_core::notes::project_key(&cwd);
    let dir = notes.join("project").join(&key);
    std::fs::create_dir_all(&dir).unwrap();
    // As notesoup writes: a temporary file renamed over the note.
    let note = |name: &str, day: u8, title: &str| {
        files::renamed_note(&dir, name, day, title);
    };
    let mut runs = 0;
    // The root boot of a new sidecar, with the kept caches or (`uncached`)
    // with an empty cache directory of its own.
    let mut boot = |uncached: bool| {
        runs += 1;
        let empty = temp.path().join(format!("empty-cache-{runs}"));
        let mut sidecar = Sidecar::start_in(&notes, if uncached { &empty } else { &cache });
        sidecar.handshake();
        let boot = sidecar.session_start(&cwd);
        assert!(sidecar.finish().success());
        if uncached {
            assert!(empty.join("notesoup").is_dir(), "the empty cache was used");
        }
        boot
    };
    let kept_file = |kind: &str| files::kept_file(&cache.join("notesoup"), kind, &key);
    note("alpha", 2, "alpha");
    note("beta", 1, "beta");
    files::settle();
    let first = boot(false);
    assert!(
        first.contains("@project/alpha.md") && first.contains("@project/beta.md"),
        "{first}"
    );
    assert_eq!(first, boot(true));
    let shelves = kept_file("boot-shelves");
    let heads = kept_file("note-heads");
    // The index's JSON line names the notes (each folder's file ids follow).
    assert!(String::from_utf8_lossy(&std::fs::read(&shelves).unwrap()).contains("beta.md"));
    // Served from the kept shelf: the next start lists nothing, so it
    // keeps no new heads.
    let saved_heads = std::fs::read(&heads).unwrap();
    assert_eq!(boot(false), first);
    assert_eq!(std::fs::read(&heads).unwrap(), saved_heads);
    let edited = files::boots_follow_outside_changes(&dir, &shelves, &heads, &mut boot);
    // Deleted: the next start lists, and keeps them again.
    std::fs::remove_dir_all(cache.join("notesoup")).unwrap();
    assert_eq!(boot(false), edited);
    assert!(kept_file("boot-shelves").is_file());
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(cache.join("notesoup"))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o700, "the caches are the owner's alone");
}

#[test]
fn the_package_folder_matches_the_embedded_package_and_core_s_skills() {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("package");
    for (relative, text) in package::files() {
        let on_disk = std::fs::read_to_string(folder.join(relative)).unwrap();
        assert_eq!(on_disk, text, "{relative}");
    }
    // And every file of the folder is embedded: an installed package is
    // the whole folder.
    let embedded: Vec<&str> = package::files().iter().map(|(path, _)| *path).collect();
    for entry in walkdir::WalkDir::new(&folder) {
        let entry = entry.unwrap();
        if entry.file_type().is_file() {
            let relative = entry.path().strip_prefix(&folder).unwrap();
            let relative = relative.to_str().unwrap();
            assert!(embedded.contains(&relative), "{relative} is not embedded");
        }
    }
    // The skills and the playbook the dream skill reads are byte-identical
    // copies of core's assets.
    for asset in notesoup_core::dream::DreamAsset::ALL {
        assert_eq!(
            std::fs::read_to_string(folder.join(asset.path())).unwrap(),
            asset.text(),
            "{}",
            asset.path()
        );
    }
    assert!(
        folder
            .join("skills/dream")
            .join("../../playbook.md")
            .is_file()
    );
    let manifest: Value = serde_json::from_str(package::PACKAGE_JSON).unwrap();
    assert_eq!(
        manifest["pi"]["extensions"],
        json!(["./extensions/notesoup.ts"])
    );
    assert_eq!(manifest["pi"]["skills"], json!(["./skills"]));
    assert_eq!(
        manifest["peerDependencies"]["@earendil-works/pi-coding-agent"],
        "*"
    );
    // The shim and the sidecar speak the same protocol version.
    assert!(
        package::SHIM.contains(&format!("const PROTOCOL = {PROTOCOL_VERSION};")),
        "bump PROTOCOL in package/extensions/notesoup.ts"
    );
}

/// The shim serves each new sidecar with `package/extensions/ready.json`
/// from its hello on, and registers its tools, commands and events while Pi
/// loads: it must be exactly the handshake's `ready` body.
/// `NOTESOUP_PI_WRITE_READY=1` writes it.
#[test]
fn the_shipped_handshake_is_the_sidecar_s() {
    let mut sidecar = Sidecar::start();
    let ready = sidecar.handshake();
    assert!(sidecar.finish().success());
    let text = serde_json::to_string_pretty(&ready["body"]).unwrap() + "\n";
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("package/extensions/ready.json");
    if std::env::var_os("NOTESOUP_PI_WRITE_READY").is_some() {
        std::fs::write(&path, &text).unwrap();
    }
    assert!(
        std::fs::read_to_string(&path).unwrap_or_default() == text,
        "{} is not the sidecar's handshake: run NOTESOUP_PI_WRITE_READY=1 \
         cargo test -p notesoup-pi --test pi the_shipped_handshake",
        path.display()
    );
}

/// Runs one `execute_tool` event of `history_search` for `unicorn` with
/// `state`, answering `resendEntries` with `resent`; returns the result and
/// how many times the sidecar asked for the entries.
fn search_with(sidecar: &mut Sidecar, state: Value, resent: &Value) -> (Value, usize) {
    sidecar.send(json!({"type": "event", "body": {
        "id": 1, "name": "execute_tool",
        "payload": {"toolCallId": "call_1", "name": "history_search", "params": {"query": "unicorn"}},
        "state": state,
    }}));
    let mut resends = 0;
    loop {
        let message = sidecar.next();
        if message["type"] == "result" {
            return (message, resends);
        }
        assert_eq!(message["type"], "action", "{message}");
        assert_eq!(
            message["body"]["action"]["kind"], "resendEntries",
            "{message}"
        );
        resends += 1;
        sidecar.send(json!({"type": "actionResult", "body": {
            "id": message["body"]["id"], "state": resent,
        }}));
    }
}

/// A session Pi has written is read from its file: the event carries no
/// entry, only `onDisk`, and the history tool finds what the file holds. A
/// file whose ids are not Pi's makes the sidecar ask for every entry.
#[test]
fn a_written_session_is_mirrored_from_its_file_and_a_wrong_one_is_resent() {
    use notesoup_pi::bridge::protocol::ids_hash;
    let session_id = "01a2324d-b8ef-7034-88ed-c5815690112d";
    let entries = vec![
        json!({"type": "message", "id": "e0000001", "parentId": null, "timestamp": "2026-01-01T00:00:01.000Z",
               "message": {"role": "user", "content": "Where is the unicorn?", "timestamp": 1}}),
        json!({"type": "custom", "customType": "other", "data": {}, "id": "e0000002", "parentId": "e0000001",
               "timestamp": "2026-01-01T00:00:02.000Z"}),
    ];
    for (hash_ids, expect_resends) in [(["e0000001", "e0000002"], 0), (["e0000009", "e0000002"], 1)]
    {
        let mut sidecar = Sidecar::start();
        let cwd = sidecar.project();
        let file = cwd.join("session.jsonl");
        let header = json!({"type": "session", "version": 3, "id": session_id,
                            "timestamp": "2026-01-01T00:00:00.000Z", "cwd": cwd});
        let text: String = std::iter::once(&header)
            .chain(&entries)
            .map(|line| format!("{line}\n"))
            .collect();
        std::fs::write(&file, text).unwrap();
        sidecar.handshake();
        let mut on_disk = state(&cwd, vec![], 2, Some("e0000002"));
        on_disk["sessionFile"] = json!(file);
        on_disk["onDisk"] =
            json!({"count": 2, "lastId": "e0000002", "idsHash": ids_hash(hash_ids)});
        let mut resent = state(&cwd, entries.clone(), 0, Some("e0000002"));
        resent["sessionFile"] = json!(file);
        let (result, resends) = search_with(&mut sidecar, on_disk, &resent);
        assert_eq!(resends, expect_resends, "{result}");
        assert!(result["body"]["error"].is_null(), "{result}");
        assert!(
            result["body"]["value"]["content"][0]["text"]
                .as_str()
                .is_some_and(|text| text.contains("unicorn")),
            "{result}"
        );
        assert!(sidecar.finish().success());
    }
}

/// A sidecar past the handshake in a project, sent a fresh session's
/// `session_start` (event 1): the sidecar, the project and the boot's
/// action.
fn booting() -> (Sidecar, std::path::PathBuf, Value) {
    let (mut sidecar, cwd, _) = Sidecar::ready_in_a_project();
    let action = sidecar.boot_action(&cwd);
    (sidecar, cwd, action)
}

/// A report that leaves one entry to a session file the shim never names.
fn unreadable_on_disk(cwd: &Path) -> Value {
    use notesoup_pi::bridge::protocol::ids_hash;
    let mut report = state(cwd, vec![], 1, Some("a1b2c3d4"));
    report["onDisk"] = json!({"count": 1, "lastId": "a1b2c3d4", "idsHash": ids_hash(["a1b2c3d4"])});
    report
}

/// An action's answer whose report the session file lets down makes the
/// sidecar ask for every entry once, inside the same event; an answer to
/// that request which lets it down too ends the sidecar with the reason
/// instead of asking again.
#[test]
fn an_answer_the_file_lets_down_is_resent_once_and_never_asked_again() {
    for resent_all in [true, false] {
        let (mut sidecar, cwd, action) = booting();
        sidecar.send(json!({"type": "actionResult", "body": {
            "id": action["body"]["id"], "state": unreadable_on_disk(&cwd),
        }}));
        let resend = sidecar.next();
        assert_eq!(
            resend["body"]["action"]["kind"], "resendEntries",
            "{resend}"
        );
        assert_ne!(resend["body"]["id"], action["body"]["id"], "{resend}");
        let boot = json!({"type": "custom_message", "customType": "notesoup/boot", "content": "boot",
            "display": false, "id": "a1b2c3d4", "parentId": null, "timestamp": "2026-01-01T00:00:01.000Z"});
        let resent = if resent_all {
            state(&cwd, vec![boot], 0, Some("a1b2c3d4"))
        } else {
            unreadable_on_disk(&cwd)
        };
        sidecar.send(
            json!({"type": "actionResult", "body": {"id": resend["body"]["id"], "state": resent}}),
        );
        let (status, stdout, stderr) = sidecar.proc.output(b"");
        if resent_all {
            // The event ends as usual.
            let result: Value = serde_json::from_str(&stdout).unwrap();
            assert_eq!(
                result["body"],
                json!({"id": 1, "value": null, "onDemand": []}),
                "{result}"
            );
            assert!(status.success(), "{stderr}");
        } else {
            // Nothing more is asked.
            assert_eq!(stdout, "", "{stderr}");
            assert!(!status.success(), "{stderr}");
            assert!(stderr.contains("no session file"), "{stderr}");
        }
    }
}

/// An answer that names another action is not taken for this one's: the
/// sidecar ends, saying which answer it waited for.
#[test]
fn an_answer_to_another_action_is_refused() {
    let (mut sidecar, cwd, action) = booting();
    let id = action["body"]["id"].as_u64().unwrap();
    sidecar.send(json!({"type": "actionResult", "body": {
        "id": id + 1, "state": state(&cwd, vec![], 0, None),
    }}));
    let (status, stdout, stderr) = sidecar.proc.output(b"");
    assert_eq!(stdout, "", "{stderr}");
    assert!(!status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("expected actionResult {id}, got actionResult")),
        "{stderr}"
    );
}

/// `context` crosses the pipe without the context's messages: the handshake
/// has the shim leave them out, a request clear of the budget's lines gets
/// `null` (Pi keeps its messages), and one past the warning line gets
/// exactly one message to append, the hidden warning, once per window.
#[test]
fn context_carries_no_messages_and_the_warning_comes_back_as_one_appended_message() {
    let (mut sidecar, cwd, ready) = Sidecar::ready_in_a_project();
    let omit = ready["body"]["omit"].as_array().unwrap();
    assert!(
        omit.contains(&json!({"event": "context", "paths": ["messages"]})),
        "{omit:?}"
    );
    // What the shim sends: the payload without its messages.
    let context = |id: u32, tokens: u64, entries: Vec<Value>, from: u32, leaf: &str| {
        let mut state = state(&cwd, entries, from, Some(leaf));
        state["contextUsage"] = json!({"tokens": tokens, "contextWindow": 200000, "percent": 0});
        json!({"type": "event", "body": {"id": id, "name": "context",
            "payload": {"type": "context"}, "state": state}})
    };
    let user = json!({"type": "message", "id": "e0000001", "parentId": null,
        "timestamp": "2026-01-01T00:00:01.000Z",
        "message": {"role": "user", "content": "Hello.", "timestamp": 1}});
    // Clear of the lines: Pi keeps its messages, and no turn end is
    // needed unless the turn itself reaches the warning line: the window
    // less Pi's default reserve and the runway, 16,384 tokens each.
    sidecar.send(context(1, 20_000, vec![user], 0, "e0000001"));
    assert_eq!(
        sidecar.next()["body"],
        json!({"id": 1, "value": null, "onDemand": [], "turnEndAt": 200_000 - 2 * 16_384})
    );
    // A model chosen mid-run: until the next request sets the line for its
    // window, every turn's end is delivered (no `turnEndAt`).
    let model =
        json!({"provider": "anthropic", "id": "small", "contextWindow": 50000, "maxTokens": 8192});
    sidecar.send(
        json!({"type": "event", "body": {"id": 10, "name": "model_select",
        "payload": {"type": "model_select", "model": model, "source": "set"},
        "state": state(&cwd, vec![], 1, Some("e0000001"))}}),
    );
    assert_eq!(
        sidecar.next()["body"],
        json!({"id": 10, "value": null, "onDemand": []})
    );
    // Past the reminder line (40,960 tokens left) and short of the
    // warning line: the reminder is staged to be saved at the turn's end,
    // which is needed now, the reset reducer still idle; the run's
    // settlement drops it if it is not saved.
    sidecar.send(context(2, 162_000, vec![], 1, "e0000001"));
    assert_eq!(
        sidecar.next()["body"],
        json!({"id": 2, "value": null, "onDemand": ["turn_end", "agent_settled"],
            "turnEndAt": 200_000 - 2 * 16_384})
    );
    // Past the warning line: the warning alone, to append.
    sidecar.send(context(20, 190_000, vec![], 1, "e0000001"));
    // A nested action (a notice) is answered as the shim does.
    let (result, _) = sidecar.result_answering(&state(&cwd, vec![], 1, Some("e0000001")));
    let body = result["body"].as_object().unwrap();
    assert_eq!(body.len(), 4, "{result}");
    assert_eq!(body["id"], 20);
    // The warning armed a close-out, and waits to be saved at the turn's
    // end: the turn's end and the settlement may act on them now, and the
    // next turn's start announces the warning once it is durable.
    assert_eq!(body["onDemand"], json!(EVERY_ON_DEMAND_EVENT));
    assert_eq!(body["turnEndAt"], 200_000 - 2 * 16_384);
    let value = body["value"].as_object().unwrap();
    assert_eq!(value.keys().collect::<Vec<_>>(), ["append"], "{result}");
    let append = value["append"].as_array().unwrap();
    assert_eq!(append.len(), 1, "{result}");
    assert_eq!(append[0]["role"], "custom");
    assert_eq!(append[0]["customType"], "notesoup/warning");
    assert_eq!(append[0]["display"], false);
    // The warning goes out once per window.
    sidecar.send(context(3, 190_000, vec![], 1, "e0000001"));
    assert_eq!(
        sidecar.next()["body"],
        json!({"id": 3, "value": null,
            "onDemand": EVERY_ON_DEMAND_EVENT,
            "turnEndAt": 200_000 - 2 * 16_384})
    );
    assert!(sidecar.finish().success());
}

/// What the Pi package sends of one message under a `summarize` rule: the
/// rule's dotted fields, the whole message for a whole role, or the index
/// of its role among the plain roles.
fn summarized(rule: &Value, message: &Value) -> Value {
    let whole_roles = rule["wholeRoles"].as_array().unwrap();
    if whole_roles.contains(&message["role"]) {
        return message.clone();
    }
    let plain_roles = rule["plainRoles"].as_array().unwrap();
    if let Some(code) = plain_roles.iter().position(|role| *role == message["role"]) {
        return json!(code);
    }
    let mut picked = json!({});
    for field in rule["fields"].as_array().unwrap() {
        let pointer = format!("/{}", field.as_str().unwrap().replace('.', "/"));
        if let Some(value) = message.pointer(&pointer) {
            let keys: Vec<&str> = field.as_str().unwrap().split('.').collect();
            let mut into = &mut picked;
            for key in &keys[..keys.len() - 1] {
                into = into
                    .as_object_mut()
                    .unwrap()
                    .entry(*key)
                    .or_insert_with(|| json!({}));
            }
            into[*keys.last().unwrap()] = value.clone();
        }
    }
    picked
}

/// `context_with_system` crosses the pipe with its messages summarised
/// (role, custom type, a boot's window and session; system messages whole)
/// and comes back as an edit of Pi's messages: none, a fork's copied root
/// boot dropped (kept ranges around it), a legacy window cut at its boot
/// (the replayed system head, then the messages from the boot on), and a
/// window without its boot cancelled (the system head alone).
#[test]
fn context_with_system_carries_summaries_and_comes_back_as_an_edit() {
    let (mut sidecar, cwd, ready) = Sidecar::ready_in_a_project();
    let rules = ready["body"]["summarize"].as_array().unwrap();
    assert_eq!(rules.len(), 1, "{rules:?}");
    let rule = rules[0].clone();
    assert_eq!(rule["event"], "context_with_system");
    assert_eq!(rule["list"], "messages");
    assert_eq!(rule["wholeRoles"], json!(["system"]));
    assert_eq!(rule["plainRoles"][0], "user");
    let session = "01a2324d-b8ef-7034-88ed-c5815690112d";
    let secret = "SECRET-CONTENT";
    let system = json!({"role": "system", "content": "You are Pi.", "sections": {"a": "one"},
        "timestamp": 1});
    let user = |n: u32| json!({"role": "user", "content": format!("{secret} {n}"), "timestamp": n});
    let boot = |window: &str, owner: Option<&str>| {
        let mut details = json!({"windowId": window, "notes": secret});
        if let Some(owner) = owner {
            details["sessionId"] = json!(owner);
        }
        json!({"role": "custom", "customType": "notesoup/boot", "content": format!("{secret} boot"),
            "display": false, "details": details, "timestamp": 3})
    };
    let mut next_id = 0;
    let mut exchange = |sidecar: &mut Sidecar,
                        entries: Vec<Value>,
                        from: u32,
                        leaf: Option<&str>,
                        messages: &[Value]| {
        next_id += 1;
        let payload = json!({"type": "context_with_system",
            "messages": messages.iter().map(|m| summarized(&rule, m)).collect::<Vec<_>>()});
        let line = payload.to_string();
        assert!(!line.contains(secret), "{line}");
        let state = state(&cwd, entries, from, leaf);
        sidecar.send(
            json!({"type": "event", "body": {"id": next_id, "name": "context_with_system",
            "payload": payload, "state": state.clone()}}),
        );
        loop {
            let message = sidecar.next();
            if message["type"] == "result" {
                assert_eq!(message["body"]["id"], next_id, "{message}");
                assert!(message["body"].get("error").is_none(), "{message}");
                return message["body"]["value"].clone();
            }
            assert_eq!(message["type"], "action", "{message}");
            sidecar.send(json!({"type": "actionResult", "body": {
                "id": message["body"]["id"], "state": state.clone(),
            }}));
        }
    };
    let root = "pcw:01a2324d:root";
    // The root window with its own boot: Pi's messages stay.
    let own = [system.clone(), boot(root, Some(session)), user(2)];
    assert_eq!(exchange(&mut sidecar, vec![], 0, None, &own), Value::Null);
    // A fork's copied root boot gives way: every message but it is kept.
    let forked = [
        system.clone(),
        boot("pcw:ffffffff:root", Some("ffffffff-0000")),
        user(2),
        boot(root, Some(session)),
        user(4),
    ];
    assert_eq!(
        exchange(&mut sidecar, vec![], 0, None, &forked),
        json!({"keep": [{"from": 0, "to": 1}, {"from": 2, "to": 5}]})
    );
    // A legacy window: cut at its boot, the system head first.
    let window = "pcw:01a2324d:0000beef";
    let marker = json!({"type": "custom", "id": "e0000001", "parentId": null,
        "timestamp": "2026-01-01T00:00:01.000Z", "customType": "pi-context/reset-marker",
        "data": {"windowId": window}});
    let legacy = [system.clone(), user(2), boot(window, None), user(4)];
    let head = json!({"role": "system", "content": "You are Pi.", "sections": {"a": "one"},
        "timestamp": 1});
    assert_eq!(
        exchange(&mut sidecar, vec![marker], 0, Some("e0000001"), &legacy),
        json!({"head": head, "keep": [{"from": 2, "to": 4}]})
    );
    // The same window without its boot: cancelled, the system head alone.
    let lost = [system.clone(), user(2), user(4)];
    assert_eq!(
        exchange(&mut sidecar, vec![], 1, Some("e0000001"), &lost),
        json!({"head": head, "keep": []})
    );
    assert!(sidecar.finish().success());
}

/// `notesoup-pi serve` keeps the index of a long session file it mirrored
/// from disk in its cache directory
/// (`$XDG_CACHE_HOME/notesoup/pi-session-index/<session id>`, the owner's
/// alone) by the time it exits, and a short session's it does not keep.
#[test]
fn serve_keeps_the_index_of_a_long_session_file_it_read() {
    for (entries, kept) in [(2_100, true), (100, false)] {
        let temp = tempfile::tempdir().unwrap();
        let (notes, cache) = (temp.path().join("notes"), temp.path().join("cache"));
        let cwd = temp.path().join("project");
        std::fs::create_dir_all(&cwd).unwrap();
        let header = state(&cwd, vec![], 0, None)["header"].clone();
        let session_id = header["id"].as_str().unwrap().to_owned();
        let ids: Vec<String> = (1..=entries).map(|n| format!("{n:08x}")).collect();
        let mut text = format!("{header}\n");
        for (at, id) in ids.iter().enumerate() {
            let parent = at.checked_sub(1).map(|before| ids[before].clone());
            let entry = json!({"type": "message", "id": id, "parentId": parent,
                "timestamp": "2026-01-01T00:00:01.000Z",
                "message": {"role": "user", "content": "a question", "timestamp": 1}});
            text += &format!("{entry}\n");
        }
        let file = temp.path().join("session.jsonl");
        std::fs::write(&file, text).unwrap();
        let mut sidecar = Sidecar::start_in(&notes, &cache);
        sidecar.handshake();
        let last = ids.last().unwrap().clone();
        let mut report = state(&cwd, vec![], entries as u32, Some(&last));
        report["sessionFile"] = json!(file);
        report["onDisk"] = json!({"count": entries, "lastId": last,
            "idsHash": notesoup_pi::bridge::protocol::ids_hash(ids.iter().map(String::as_str))});
        sidecar.send(json!({"type": "event", "body": {
            "id": 1, "name": "session_start", "payload": {"type": "session_start", "reason": "resume"},
            "state": report,
        }}));
        // The window's boot is appended (the session has none): Pi's
        // answer reports it after the entries on disk.
        loop {
            let line = sidecar.next();
            if line["type"] == "result" {
                assert_eq!(line["body"]["error"], Value::Null, "{line}");
                break;
            }
            assert_eq!(line["type"], "action", "{line}");
            let boot = json!({"type": "custom_message", "customType": "notesoup/boot",
                "content": line["body"]["action"]["args"]["message"]["content"], "display": false,
                "details": line["body"]["action"]["args"]["message"]["details"],
                "id": "b0000001", "parentId": last, "timestamp": "2026-01-01T00:00:02.000Z"});
            sidecar.send(json!({"type": "actionResult", "body": {
                "id": line["body"]["id"], "state": state(&cwd, vec![boot], entries as u32, Some("b0000001")),
            }}));
        }
        assert!(sidecar.finish().success());
        let index = cache.join("notesoup/pi-session-index").join(&session_id);
        assert_eq!(index.is_file(), kept, "{entries} entries");
        if kept {
            use std::os::unix::fs::PermissionsExt;
            let dir = std::fs::metadata(index.parent().unwrap()).unwrap();
            assert_eq!(dir.permissions().mode() & 0o777, 0o700);
        }
    }
}

/// `/notesoup` answers through Pi's notice: its report (naming the Pi the
/// hello named) as information, an argument it does not take with its
/// usage as a warning. The shim performs the notice and answers it.
#[test]
fn the_notesoup_command_notifies_its_report_and_its_usage() {
    let (mut sidecar, cwd, _) = Sidecar::ready_in_a_project();
    sidecar.session_start(&cwd);
    for (id, args, level, said) in [
        (2, "", "info", "· Pi 1.6.0 · window "),
        (3, "bogus", "warning", "Usage: /notesoup [on|off]"),
    ] {
        sidecar.send(
            json!({"type": "event", "body": {"id": id, "name": "command",
            "payload": {"name": "notesoup", "args": args},
            "state": state(&cwd, vec![], 1, Some("a1b2c3d4"))}}),
        );
        let (result, actions) = sidecar.result_answering(&state(&cwd, vec![], 1, Some("a1b2c3d4")));
        assert_eq!(result["body"]["id"], id, "{result}");
        let [notice] = &actions[..] else {
            panic!("one notice: {actions:?}")
        };
        assert_eq!(notice["kind"], "notify", "{notice}");
        assert_eq!(notice["args"]["level"], level, "{notice}");
        let message = notice["args"]["message"].as_str().unwrap();
        assert!(message.contains(said), "{message}");
    }
    assert!(sidecar.finish().success());
}

/// A bare `/fresh-window` sends the hidden close-out prompt, then says
/// what comes next by whether Pi's agent was idle, as the state says.
#[test]
fn fresh_window_says_what_comes_next_by_whether_the_agent_is_idle() {
    for (idle, said) in [
        (true, "then stops in a fresh window"),
        (false, "the reset commits when the run settles"),
    ] {
        let (mut sidecar, cwd, _) = Sidecar::ready_in_a_project();
        sidecar.session_start(&cwd);
        let mut now = state(&cwd, vec![], 1, Some("a1b2c3d4"));
        now["idle"] = json!(idle);
        sidecar.send(json!({"type": "event", "body": {"id": 2, "name": "command",
            "payload": {"name": "fresh-window", "args": ""}, "state": now}}));
        let (result, actions) = sidecar.result_answering(&state(&cwd, vec![], 1, Some("a1b2c3d4")));
        let kinds: Vec<&str> = actions
            .iter()
            .map(|a| a["kind"].as_str().unwrap())
            .collect();
        assert_eq!(result["body"]["id"], 2, "{result}");
        assert_eq!(kinds, ["sendMessage", "notify"], "idle {idle}");
        let text = actions[1]["args"]["message"].as_str().unwrap();
        assert!(text.contains(said), "idle {idle}: {text}");
        assert!(sidecar.finish().success());
    }
}
