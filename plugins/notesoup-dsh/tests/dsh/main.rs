//! Integration tests of notesoup-dsh: decisions on recorded dsh session logs,
//! the sidecar over its protocol, the adversarial corpora against the real
//! binary, and (feature `reference-hosts`) real dsh end to end.

mod adversarial;
mod bounded;
mod cli;
#[cfg(feature = "reference-hosts")]
mod dream;
#[cfg(feature = "reference-hosts")]
mod e2e;
#[cfg(feature = "reference-hosts")]
mod harness;
mod history;
mod ledger;
#[cfg(feature = "reference-hosts")]
mod npm;
mod recorded;
mod shared;
mod sidecar;
#[cfg(feature = "reference-hosts")]
mod typecheck;

use std::path::{Path, PathBuf};

use notesoup_dsh::boot::NotesPlace;
use notesoup_dsh::decode::{BOOT_SECTION, SessionEvent, SessionLog, read_session_jsonl};
use notesoup_dsh::mirror::SessionMirror;
use notesoup_dsh::server::Sidecar;
use serde_json::{Value, json};

/// A recorded session log from `fixtures/`.
pub fn fixture_log(name: &str) -> SessionLog {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/dsh/fixtures")
        .join(name);
    let file = std::fs::File::open(&path).expect("fixture exists");
    read_session_jsonl(std::io::BufReader::new(file)).expect("fixture decodes")
}

/// The fixtures folder.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/dsh/fixtures")
}

/// The sidecar driven in-process over its JSON lines.
#[derive(Debug)]
pub struct Client {
    pub sidecar: Sidecar,
    next_id: u64,
}

impl Client {
    pub fn new(root: &std::path::Path) -> Self {
        let place = NotesPlace {
            root: root.to_path_buf(),
            agent: "anonymous".into(),
            cache: None,
        };
        Self {
            sidecar: Sidecar::new(place),
            next_id: 1,
        }
    }

    /// A client whose sidecar said hello with default settings.
    pub fn greeted(root: &std::path::Path) -> Self {
        let mut client = Self::new(root);
        client.ok("hello", hello());
        client
    }

    pub fn call(&mut self, op: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let line = json!({"id": id, "op": op, "params": params}).to_string();
        let answer: Value =
            serde_json::from_str(&self.sidecar.answer_line(&line)).expect("json line");
        assert_eq!(answer["id"], id);
        answer
    }

    pub fn ok(&mut self, op: &str, params: Value) -> Value {
        let answer = self.call(op, params);
        assert!(answer.get("error").is_none(), "{op}: {answer}");
        answer["result"].clone()
    }
}

/// The seqs of the boots the model sees: the events on the mirror's
/// surface that carry a boot section.
pub fn boots_on_the_surface(mirror: &SessionMirror) -> Vec<u64> {
    mirror
        .surface()
        .iter()
        .filter_map(|seq| mirror.event(*seq))
        .filter(|e| {
            e.source()
                .is_some_and(|s| s.section(BOOT_SECTION).is_some())
        })
        .map(|e| e.seq)
        .collect()
}

/// A `session` parameter: the events from seq `from`.
pub fn session(id: &str, cwd: &str, from: u64, events: &[SessionEvent]) -> Value {
    json!({"id": id, "cwd": cwd, "model": "scripted/scripted-model", "from": from, "events": events})
}

/// `hello` parameters with default settings.
pub fn hello() -> Value {
    json!({"protocol": 1, "bundle": "0.1.0", "dsh": "0.1.0-rc.8", "settings": {}})
}

/// The old opt-in was this variable alone, and without the feature it now
/// selects nothing: fail rather than let such a run pass without dsh.
#[cfg(not(feature = "reference-hosts"))]
#[test]
fn reference_hosts_need_the_feature() {
    assert_ne!(
        std::env::var("NOTESOUP_REFERENCE_HOSTS").ok().as_deref(),
        Some("1"),
        "NOTESOUP_REFERENCE_HOSTS=1 but notesoup-dsh was built without its reference-hosts feature: \
         run `cargo test -p notesoup-dsh --features reference-hosts` (or --all-features)"
    );
}
