//! The sidecar's mirror of the session, read from the session file where Pi
//! has written it, equals what Pi holds (ids, order, leaf) after every event,
//! for random sessions, appends, branches and compactions, including a
//! session file edited, truncated or removed under it, or not yet written.
//!
//! Pi is modelled as its `SessionManager` 1.6.0 behaves (docs/pi.md, "When
//! Pi writes the session file"): nothing is written until the session holds
//! a user or assistant message, then the header and every entry at once,
//! then each entry as it is appended. The shim is modelled as
//! `package/extensions/notesoup.ts` builds its state; its answer to
//! `resendEntries` is given by the pipe's far end.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{SyncSender, sync_channel};
use std::time::Duration;

use proptest::prelude::*;
use serde_json::{Value, json};

use super::super::host::{BridgeHost, Channel, Incoming};
use super::super::protocol::{
    ActionResult, OnDisk, SessionState, SettingsState, ShimMessage, SidecarMessage, ids_hash,
};
use crate::host::{PiApiLevel, PiHost};
use crate::projection::project;
use crate::session::{Entry, EntryIndex, Leaf};

const SESSION_ID: &str = "0195-mirror-session";

/// Pi's session manager, as far as the mirror can tell.
struct Pi {
    file: PathBuf,
    entries: Vec<Value>,
    leaf: Option<String>,
    /// Whether the file has been written (`flushed` in Pi).
    flushed: bool,
    next_id: u32,
}

impl Pi {
    fn new(file: PathBuf) -> Self {
        Self {
            file,
            entries: Vec::new(),
            leaf: None,
            flushed: false,
            next_id: 0,
        }
    }

    fn header() -> Value {
        json!({"type": "session", "version": 3, "id": SESSION_ID,
               "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/work/project"})
    }

    fn ids(&self) -> Vec<String> {
        self.entries
            .iter()
            .map(|entry| entry["id"].as_str().unwrap_or("").to_owned())
            .collect()
    }

    /// `_appendEntry` and `_persist`.
    fn append(&mut self, mut entry: Value) {
        self.next_id += 1;
        let id = format!("{:08x}", self.next_id.wrapping_mul(2_654_435_761));
        entry["id"] = json!(id);
        entry["parentId"] = self.leaf.clone().map_or(Value::Null, Value::String);
        entry["timestamp"] = json!("2026-01-01T00:00:01.000Z");
        self.entries.push(entry.clone());
        self.leaf = Some(id);
        let conversation = self.entries.iter().any(|entry| {
            entry["type"] == "message"
                && matches!(
                    entry["message"]["role"].as_str(),
                    Some("user" | "assistant")
                )
        });
        if !self.flushed {
            if !conversation {
                return;
            }
            let mut text = format!("{}\n", Pi::header());
            for entry in &self.entries {
                text.push_str(&format!("{entry}\n"));
            }
            std::fs::write(&self.file, text).expect("write the session");
            self.flushed = true;
        } else {
            let mut file = std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .open(&self.file)
                .expect("open the session");
            writeln!(file, "{entry}").expect("append to the session");
        }
    }
}

/// What can happen between two events.
#[derive(Debug, Clone)]
enum Step {
    User,
    Assistant,
    Custom,
    ModelChange,
    /// A compaction keeping the entry at this index (modulo the length).
    Compaction(usize),
    /// `branch()` to the entry at this index (modulo the length).
    Branch(usize),
    /// The session file edited under both: an entry's id changed at this
    /// index (modulo the length).
    EditId(usize),
    /// The session file cut to this fraction (in 1/8) of its length.
    Truncate(u8),
    /// The session file removed.
    Remove,
    /// The sidecar restarted: a fresh mirror, as at `session_start`.
    Restart,
    /// An event: the shim reports the state and the sidecar mirrors it.
    Event,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => Just(Step::User),
        4 => Just(Step::Assistant),
        2 => Just(Step::Custom),
        1 => Just(Step::ModelChange),
        1 => any::<usize>().prop_map(Step::Compaction),
        2 => any::<usize>().prop_map(Step::Branch),
        1 => any::<usize>().prop_map(Step::EditId),
        1 => (0u8..8).prop_map(Step::Truncate),
        1 => Just(Step::Remove),
        1 => Just(Step::Restart),
        6 => Just(Step::Event),
    ]
}

/// The shim's side of the mirror (`mirror` in the shim).
#[derive(Default)]
struct Shim {
    session_id: String,
    sent: usize,
}

impl Shim {
    /// `state(ctx)`: entries since the last report, or, for a mirror
    /// starting over, none of those the session file holds.
    fn state(&mut self, pi: &Pi, resend: bool) -> SessionState {
        let known = self.session_id == SESSION_ID && pi.entries.len() >= self.sent;
        let mut from = if known { self.sent } else { 0 };
        let mut on_disk = None;
        if !known && !resend && !pi.entries.is_empty() && pi.file.exists() {
            let ids = pi.ids();
            on_disk = Some(OnDisk {
                count: u32::try_from(ids.len()).expect("few entries"),
                last_id: ids.last().cloned().unwrap_or_default(),
                ids_hash: ids_hash(ids.iter().map(String::as_str)),
            });
            from = pi.entries.len();
        }
        self.session_id = SESSION_ID.to_owned();
        self.sent = pi.entries.len();
        SessionState {
            session_id: SESSION_ID.to_owned(),
            header: Pi::header(),
            entries_from: u32::try_from(from).expect("few entries"),
            entries: pi.entries[from..].to_vec(),
            on_disk,
            leaf_id: pi.leaf.clone(),
            cwd: "/work/project".to_owned(),
            session_file: Some(pi.file.display().to_string()),
            idle: true,
            pending_messages: false,
            signal_aborted: false,
            context_usage: None,
            model: None,
            settings: SettingsState {
                global: json!({}),
                project: json!({}),
                compaction: None,
                error: None,
            },
            project_trusted: false,
        }
    }
}

/// The pipe's far end: answers `resendEntries` at once with every entry,
/// as the shim does, and counts the requests.
struct FarEnd {
    to: SyncSender<Incoming>,
    answer: SessionState,
    resends: usize,
}

impl Write for FarEnd {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        for line in bytes.split(|&b| b == b'\n').filter(|line| !line.is_empty()) {
            let message: SidecarMessage =
                serde_json::from_slice(line).map_err(std::io::Error::other)?;
            let SidecarMessage::Action(request) = message else {
                return Err(std::io::Error::other("only actions are expected"));
            };
            assert_eq!(request.action.name(), "resendEntries");
            self.resends += 1;
            let answer = ShimMessage::ActionResult(ActionResult {
                id: request.id,
                error: None,
                state: self.answer.clone(),
            });
            let text = serde_json::to_vec(&answer).map_err(std::io::Error::other)?;
            self.to
                .send(Incoming::Line(text))
                .map_err(std::io::Error::other)?;
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// One event: the shim's report mirrored by a host that keeps `mirror`
/// (the sidecar's entries, carried between events as the host would keep
/// them). Returns the host's ids and leaf and how many resends it asked for.
fn mirror_event(
    shim: &mut Shim,
    pi: &Pi,
    previous: Option<SessionState>,
) -> (Vec<String>, Option<String>, usize, SessionState) {
    let state = shim.state(pi, false);
    // What the shim answers to `resendEntries`: every entry, no `onDisk`.
    let answer = Shim::default().state(pi, true);
    let (to, incoming) = sync_channel(4);
    let mut far = FarEnd {
        to: to.clone(),
        answer,
        resends: 0,
    };
    let (ids, leaf) = {
        let channel = Channel::new(incoming, &mut far);
        let mut host = BridgeHost::new(
            channel,
            PiApiLevel::V0_87,
            "1.6.0".to_owned(),
            Duration::from_secs(5),
        );
        if let Some(previous) = previous {
            host.apply_state(previous).expect("the previous mirror");
            // Walked now, the previous leaf's path is kept for the next walk.
            let _ = host.branch(None);
        }
        host.sync(state.clone()).expect("the mirror follows");
        // The kept id table and leaf path give what a fresh index gives.
        let fresh = EntryIndex::new(host.entries());
        let ids_of = |branch: Vec<&Entry>| -> Vec<String> {
            branch.iter().map(|e| e.id().to_owned()).collect()
        };
        if let Some(leaf) = host.leaf_id() {
            assert_eq!(ids_of(host.branch(None)), ids_of(fresh.branch(leaf)));
            assert_eq!(ids_of(host.branch(None)), ids_of(fresh.branch(leaf)));
        }
        if let Some(first) = host.entries().first() {
            let id = first.id().to_owned();
            assert_eq!(ids_of(host.branch(Some(&id))), ids_of(fresh.branch(&id)));
        }
        let leaf = host.leaf_id().map_or(Leaf::Null, Leaf::Id);
        assert_eq!(
            format!("{:?}", host.build_projection()),
            format!("{:?}", project(&fresh, leaf)),
        );
        for entry in host.entries() {
            assert!(std::ptr::eq(
                host.entry(entry.id()).expect("every id is found"),
                fresh.get(entry.id()).expect("every id is indexed"),
            ));
        }
        (
            host.entries().iter().map(|e| e.id().to_owned()).collect(),
            host.leaf_id().map(str::to_owned),
        )
    };
    // The state the host now mirrors, whole, to rebuild it next time.
    let mut whole = Shim::default().state(pi, true);
    whole.leaf_id = leaf.clone();
    (ids, leaf, far.resends, whole)
}

fn run(steps: &[Step], dir: &Path) -> Result<(), TestCaseError> {
    let mut pi = Pi::new(dir.join("session.jsonl"));
    let mut shim = Shim::default();
    // The sidecar's mirror between events, as a whole state it can rebuild
    // from (each event builds a fresh host over it).
    let mut kept: Option<SessionState> = None;
    for step in steps {
        match step {
            Step::User => pi.append(json!({"type": "message",
                "message": {"role": "user", "content": "a question", "timestamp": 1}})),
            Step::Assistant => pi.append(json!({"type": "message",
                "message": {"role": "assistant", "content": [{"type": "text", "text": "an answer"}],
                    "api": "faux", "provider": "faux", "model": "faux-1",
                    "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
                        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
                    "stopReason": "stop", "timestamp": 2}})),
            Step::Custom => pi.append(json!({"type": "custom", "customType": "mirror-test", "data": {"n": 1}})),
            Step::ModelChange => pi.append(json!({"type": "model_change", "provider": "faux", "modelId": "faux-1"})),
            Step::Compaction(at) => {
                if let Some(kept_id) = pick(&pi, *at) {
                    pi.append(json!({"type": "compaction", "summary": "so far",
                        "firstKeptEntryId": kept_id, "tokensBefore": 10}));
                }
            }
            Step::Branch(at) => {
                if let Some(id) = pick(&pi, *at) {
                    pi.leaf = Some(id);
                }
            }
            Step::EditId(at) => edit_id(&pi, *at),
            Step::Truncate(eighths) => {
                if let Ok(meta) = std::fs::metadata(&pi.file) {
                    let file = std::fs::OpenOptions::new().write(true).open(&pi.file).expect("open");
                    file.set_len(meta.len() * u64::from(*eighths) / 8).expect("truncate");
                }
            }
            Step::Remove => {
                let _ = std::fs::remove_file(&pi.file);
            }
            Step::Restart => {
                shim = Shim::default();
                kept = None;
            }
            Step::Event => {
                let (ids, leaf, _, whole) = mirror_event(&mut shim, &pi, kept.take());
                prop_assert_eq!(&ids, &pi.ids(), "the mirror's ids and order");
                prop_assert_eq!(&leaf, &pi.leaf, "the mirror's leaf");
                kept = Some(whole);
            }
        }
    }
    Ok(())
}

fn pick(pi: &Pi, at: usize) -> Option<String> {
    (!pi.entries.is_empty()).then(|| pi.ids()[at % pi.entries.len()].clone())
}

/// Changes one entry's id in the file (not in Pi's memory).
fn edit_id(pi: &Pi, at: usize) {
    let Ok(text) = std::fs::read_to_string(&pi.file) else {
        return;
    };
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    if lines.len() < 2 {
        return;
    }
    let line = 1 + at % (lines.len() - 1);
    if let Ok(mut entry) = serde_json::from_str::<Value>(&lines[line]) {
        entry["id"] = json!("edited0");
        lines[line] = entry.to_string();
        std::fs::write(&pi.file, lines.join("\n") + "\n").expect("rewrite");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn the_mirror_equals_what_pi_holds(steps in proptest::collection::vec(step(), 1..60)) {
        let dir = tempfile::tempdir().expect("a temp dir");
        run(&steps, dir.path())?;
    }
}

/// A written session's first event is read from the file: no resend, and
/// the state on the line carries no entry.
#[test]
fn a_written_session_is_read_from_its_file() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let mut pi = Pi::new(dir.path().join("session.jsonl"));
    pi.append(json!({"type": "model_change", "provider": "faux", "modelId": "faux-1"}));
    for _ in 0..20 {
        pi.append(json!({"type": "message",
            "message": {"role": "user", "content": "a question", "timestamp": 1}}));
    }
    let mut shim = Shim::default();
    assert!(
        shim.state(&pi, false).entries.is_empty(),
        "nothing on the line"
    );
    let mut shim = Shim::default();
    let (ids, leaf, resends, _) = mirror_event(&mut shim, &pi, None);
    assert_eq!(ids, pi.ids());
    assert_eq!(leaf, pi.leaf);
    assert_eq!(resends, 0, "the file held every entry");
}

/// A session file whose ids differ from Pi's in the middle, with the same
/// count and last id, is not taken for Pi's: the entries are sent instead.
#[test]
fn an_id_edited_in_the_middle_is_caught() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let mut pi = Pi::new(dir.path().join("session.jsonl"));
    for _ in 0..10 {
        pi.append(json!({"type": "message",
            "message": {"role": "user", "content": "a question", "timestamp": 1}}));
    }
    edit_id(&pi, 4);
    let mut shim = Shim::default();
    let (ids, _, resends, _) = mirror_event(&mut shim, &pi, None);
    assert_eq!(ids, pi.ids());
    assert_eq!(resends, 1);
}
