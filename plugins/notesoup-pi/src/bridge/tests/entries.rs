//! [`EntryMirror`] on its own: which entry an id names, each entry's parent
//! and type, across the entries read from the session file, the lines the
//! file holds past Pi's entries, and the entries the shim sent, and what
//! cutting the mirror back keeps.

use std::path::Path;

use serde_json::{Value, json};

use super::super::mirror::EntryMirror;
use crate::session::{Entry, LazySession};

const HEADER: &str = r#"{"type":"session","version":3,"id":"0195-entries","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work"}"#;

/// An entry of `kind` (`m`: a user message, `c`: a compaction keeping
/// nothing, else a custom entry) under `id`, its parent `parent`.
fn entry(kind: char, id: &str, parent: Option<&str>) -> Value {
    let mut value = match kind {
        'm' => {
            json!({"type": "message", "message": {"role": "user", "content": id, "timestamp": 1}})
        }
        'c' => {
            json!({"type": "compaction", "summary": "s", "firstKeptEntryId": id, "tokensBefore": 10})
        }
        _ => json!({"type": "custom", "customType": "x"}),
    };
    let object = value.as_object_mut().expect("an object");
    object.insert("id".into(), json!(id));
    object.insert("parentId".into(), json!(parent));
    object.insert("timestamp".into(), json!("2026-01-01T00:00:01.000Z"));
    value
}

fn decoded(value: Value) -> Entry {
    serde_json::from_value(value).expect("an entry")
}

/// A mirror of a file whose first four entries are Pi's (`a` ← `b` ← `c`,
/// `c` a compaction, and `d`, whose parent `x` is not among them) and whose
/// last two lines are past them: one reusing `b`'s id, and `x`.
fn mirror(dir: &Path) -> EntryMirror {
    let lines = [
        entry('m', "a", None),
        entry('m', "b", Some("a")),
        entry('c', "c", Some("b")),
        entry('m', "d", Some("x")),
        entry('k', "b", Some("a")),
        entry('k', "x", Some("d")),
    ];
    let mut text = format!("{HEADER}\n");
    for line in &lines {
        text.push_str(&format!("{line}\n"));
    }
    let path = dir.join("session.jsonl");
    std::fs::write(&path, text).expect("write the session");
    EntryMirror::from_disk(LazySession::read(&path).expect("read the session"), 4)
}

fn ids(mirror: &EntryMirror) -> Vec<&str> {
    mirror.ids(mirror.len()).collect()
}

#[test]
fn ids_parents_and_types_read_through_the_file_and_the_tail() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let mut mirror = mirror(dir.path());
    assert_eq!(ids(&mirror), ["a", "b", "c", "d"]);
    // An id past Pi's entries names nothing; one also among them names
    // the entry among them.
    assert_eq!(mirror.position_of("x"), None);
    assert_eq!(mirror.position_of("b"), Some(1));
    assert_eq!(mirror.position_of("d"), Some(3));
    // `c`'s parent, `b`, is a later line in the index: the mirror's `b`.
    assert_eq!(mirror.parent_position(2), Some(1));
    assert_eq!(mirror.parent_position(3), None);
    assert_eq!(mirror.parent_position(0), None);
    let kinds: Vec<(bool, bool)> = (0..4)
        .map(|at| (mirror.is_message(at), mirror.is_compaction(at)))
        .collect();
    assert_eq!(
        kinds,
        [(true, false), (true, false), (false, true), (true, false)]
    );

    // Appended: a new id, then one naming an entry on disk (it shadows it,
    // as a later duplicate does in Pi's id map), then a tail duplicate.
    assert!(!mirror.push(decoded(entry('m', "e", Some("d")))));
    assert!(mirror.push(decoded(entry('k', "a", Some("e")))));
    assert!(!mirror.push(decoded(entry('c', "f", Some("a")))));
    assert!(mirror.push(decoded(entry('k', "f", Some("f")))));
    assert_eq!(ids(&mirror), ["a", "b", "c", "d", "e", "a", "f", "f"]);
    assert_eq!(mirror.position_of("a"), Some(5));
    assert_eq!(mirror.position_of("f"), Some(7));
    // `b`'s parent is now the tail's `a`.
    assert_eq!(mirror.parent_position(1), Some(5));
    assert_eq!(mirror.parent_position(4), Some(3));
    assert_eq!(mirror.parent_position(6), Some(5));
    assert!(mirror.is_compaction(6));
    assert!(!mirror.is_compaction(7));
    assert!(mirror.is_message(4));
}

#[test]
fn cutting_back_keeps_the_first_entries_wherever_the_cut_falls() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let grown = |dir: &Path| {
        let mut mirror = mirror(dir);
        mirror.push(decoded(entry('m', "e", Some("d"))));
        mirror.push(decoded(entry('k', "a", Some("e"))));
        mirror.push(decoded(entry('m', "g", Some("a"))));
        mirror
    };

    // At or past the end: nothing to cut.
    for len in [7, 8] {
        let mut mirror = grown(dir.path());
        assert!(!mirror.truncate(len));
        assert_eq!(ids(&mirror), ["a", "b", "c", "d", "e", "a", "g"]);
    }

    // At the file's last entry: the entries from the file stay.
    let mut mirror = grown(dir.path());
    assert!(mirror.truncate(4));
    assert_eq!(ids(&mirror), ["a", "b", "c", "d"]);
    assert!(mirror.disk().is_some());

    // In the tail: the entries from the file stay, and the cut-off tail
    // no longer shadows `a`.
    let mut mirror = grown(dir.path());
    assert!(mirror.truncate(5));
    assert_eq!(ids(&mirror), ["a", "b", "c", "d", "e"]);
    assert_eq!(mirror.position_of("a"), Some(0));
    assert_eq!(mirror.parent_position(1), Some(0));
    assert_eq!(mirror.position_of("g"), None);
    assert!(mirror.disk().is_some());

    let mut mirror = grown(dir.path());
    assert!(mirror.truncate(6));
    assert_eq!(ids(&mirror), ["a", "b", "c", "d", "e", "a"]);
    assert_eq!(mirror.parent_position(1), Some(5));

    // Into the entries from the file: those kept, decoded.
    let mut mirror = grown(dir.path());
    assert!(mirror.truncate(3));
    assert_eq!(ids(&mirror), ["a", "b", "c"]);
    assert!(mirror.disk().is_none());
    assert_eq!(mirror.parent_position(2), Some(1));
    assert!(mirror.is_compaction(2));
    assert_eq!(mirror.position_of("d"), None);

    let mut mirror = grown(dir.path());
    assert!(mirror.truncate(0));
    assert_eq!(mirror.len(), 0);
}
