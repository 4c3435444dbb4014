//! A host with no session yet: its identity has none, the durable homes work,
//! and every way of naming a session note is refused with `no_session`
//! without touching the disk.

use crate::boot::BootSnapshot;
use crate::history::History;
use crate::notes::{NoteStore, NotesIdentity, Scope};
use crate::tools::{Refusal, RefusalCode, ToolContext, ToolOutput, call_tool};
use serde_json::{Value, json};

struct Host {
    identity: NotesIdentity,
}

impl ToolContext for Host {
    fn notes(&mut self) -> Result<NoteStore, Refusal> {
        Ok(NoteStore::new(self.identity.clone()))
    }

    fn history(&mut self) -> Result<History, Refusal> {
        Err(Refusal::new(RefusalCode::NoSession, "no session yet"))
    }
}

fn code(output: &ToolOutput) -> Value {
    output.json.to_value()["code"].clone()
}

fn sessionless(dir: &tempfile::TempDir) -> Host {
    Host {
        identity: NotesIdentity::without_session(dir.path(), "p-1", "alice", "gpt").expect("valid"),
    }
}

#[test]
fn an_identity_without_a_session_has_none_and_can_gain_one() {
    let identity = NotesIdentity::without_session("/n", "p", "a", "m").expect("valid");
    assert_eq!(identity.session_id(), None);
    let started = identity.with_session("s1").expect("valid");
    assert_eq!(started.session_id(), Some("s1"));
    assert_eq!(
        (started.project_key(), started.agent(), started.model()),
        ("p", "a", "m")
    );
    assert_eq!(
        identity
            .with_session("../x")
            .expect_err("bad")
            .identity_field(),
        Some("sessionId")
    );
    assert_eq!(
        NotesIdentity::without_session("/n", "", "a", "m")
            .expect_err("bad")
            .identity_field(),
        Some("projectKey")
    );
}

#[test]
fn session_addresses_are_refused_with_no_session() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut host = sessionless(&dir);
    let written = call_tool(
        &mut host,
        "notes_write",
        json!({"address": "@project/plan", "content": "durable"}),
    );
    assert!(!written.is_error, "{}", written.text);

    for (tool, arguments) in [
        ("notes_write", json!({"address": "todo", "content": "x"})),
        ("notes_read", json!({"address": "todo"})),
        (
            "notes_update",
            json!({"address": "todo", "edits": [{"oldText": "a", "newText": "b"}]}),
        ),
        (
            "notes_update",
            json!({"address": "@project/plan", "rename_to": "moved"}),
        ),
    ] {
        let output = call_tool(&mut host, tool, arguments.clone());
        assert!(output.is_error, "{tool} {arguments}: {}", output.text);
        assert_eq!(code(&output), "no_session", "{tool} {arguments}");
        assert!(
            output.text.starts_with("error: no_session: no session yet"),
            "{tool}: {}",
            output.text
        );
    }
    assert!(
        !dir.path().join("pi").exists(),
        "no session home was made up"
    );
    // A bare glob is a filter over the homes there are: it matches no
    // session note, and refuses nothing.
    let listed = call_tool(&mut host, "notes_list", json!({"pattern": "*"}));
    assert!(!listed.is_error, "{}", listed.text);
    assert_eq!(
        listed.json.to_value()["files"],
        json!([]),
        "{}",
        listed.text
    );
    // The session scope, asked for by name, is refused.
    let store = NoteStore::new(host.identity.clone());
    let scoped = store
        .list(&crate::notes::ListQuery {
            scope: Some(Scope::Session),
            ..Default::default()
        })
        .expect_err("no session");
    assert_eq!(scoped.code(), RefusalCode::NoSession);
    // A malformed bare address is still malformed first.
    let bad = call_tool(&mut host, "notes_read", json!({"address": "../x"}));
    assert_eq!(code(&bad), "invalid_address");
    // The note the refused rename named is where it was.
    let read = call_tool(&mut host, "notes_read", json!({"address": "@project/plan"}));
    assert!(!read.is_error, "{}", read.text);
}

#[test]
fn listing_everything_lists_the_durable_homes_and_the_boot_has_an_empty_session_shelf() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut host = sessionless(&dir);
    for address in ["@project/plan", "@human/prefs", "@self/diary"] {
        let output = call_tool(
            &mut host,
            "notes_write",
            json!({"address": address, "content": "durable"}),
        );
        assert!(!output.is_error, "{}", output.text);
    }
    let listed = call_tool(&mut host, "notes_list", json!({}));
    assert!(!listed.is_error, "{}", listed.text);
    for address in ["@project/plan.md", "@human/prefs.md", "@self/diary.md"] {
        assert!(listed.text.contains(address), "{}", listed.text);
    }
    let found = call_tool(&mut host, "notes_search", json!({"query": "durable"}));
    assert!(!found.is_error, "{}", found.text);
    assert!(found.text.contains("@human/prefs.md"), "{}", found.text);

    let store = NoteStore::new(host.identity.clone());
    let snapshot = BootSnapshot::load(&store).expect("boot");
    assert!(snapshot.unavailable().is_empty());
    let session = snapshot.home(Scope::Session).expect("a session shelf");
    assert_eq!(session, &crate::boot::HomeShelf::from_rows(Vec::new()));
    assert!(!dir.path().join("pi").exists());

    // Once the session starts, the same root serves session notes.
    host.identity = host.identity.with_session("s1").expect("valid");
    let written = call_tool(
        &mut host,
        "notes_write",
        json!({"address": "todo", "content": "now"}),
    );
    assert!(!written.is_error, "{}", written.text);
    assert!(dir.path().join("pi/session/s1/todo.md").is_file());
}
