//! The sidecar's mirror of the session, read from the session file where Pi
//! has written it, equals what Pi holds (ids, order, leaf) after every event,
//! for random sessions, appends, branches, compactions and resets, including
//! a session file edited, truncated or removed under it, or not yet written.
//! The mirror is kept from event to event, as `notesoup-pi serve` keeps it,
//! so the entries it reads lazily from the file are read after the file
//! changed. After every event, what the handlers read (the window branch,
//! the projection, the window rules over both) is checked against Pi's own
//! entries, and on some events every entry, decoded.
//!
//! Pi is modelled as its `SessionManager` 1.6.0 behaves (docs/pi.md, "When
//! Pi writes the session file"): nothing is written until the session holds
//! a user or assistant message, then the header and every entry at once,
//! then each entry as it is appended. The shim is modelled as
//! `package/extensions/notesoup.ts` builds its state; its answer to
//! `resendEntries` is given by the pipe's far end.

use std::cell::{Cell, RefCell};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::mpsc::{SyncSender, sync_channel};
use std::time::Duration;

use proptest::prelude::*;
use serde_json::{Value, json};

use super::super::host::{BridgeHost, Channel, Incoming, Received};
use super::super::protocol::{
    ActionResult, OnDisk, SessionState, SettingsState, ShimMessage, SidecarMessage, ids_hash,
};
use crate::estimate::{BranchStep, coding_agent};
use crate::host::{ContextUsage, PiApiLevel, PiHost};
use crate::projection::{is_checkpoint_backed, project, reset_markers, window_projection};
use crate::reset::Kind;
use crate::reset::window::{
    active_window, boundary_committed, has_marker, inspect_tail, root_window_id, window_entries,
    window_has, window_has_boot,
};
use crate::session::{AgentMessage, Entry, EntryIndex, Leaf};

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

    /// The id the next appended entry gets.
    fn next_id(&self) -> String {
        format!("{:08x}", (self.next_id + 1).wrapping_mul(2_654_435_761))
    }

    /// Pi's entries, decoded.
    fn decoded(&self) -> Vec<Entry> {
        self.entries
            .iter()
            .map(|entry| serde_json::from_value(entry.clone()).expect("Pi's entry"))
            .collect()
    }

    /// `_appendEntry` and `_persist`.
    fn append(&mut self, mut entry: Value) {
        self.next_id += 1;
        let id = format!("{:08x}", self.next_id.wrapping_mul(2_654_435_761));
        debug_assert_eq!(entry.get("id"), None);
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
    /// A reset as notesoup writes it: the retain-none checkpoint, the
    /// marker, the hidden boot and the continuation (the last two dropped
    /// when `complete` is false).
    Reset {
        complete: bool,
    },
    /// A legacy reset: a `pi-context/` marker and boot, no checkpoint.
    LegacyReset,
    /// A hidden custom message of notesoup's (the warning).
    Warning,
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
    /// An event: the shim reports the state and the sidecar mirrors it;
    /// `full` also checks every entry, decoded; `ahead` first decodes
    /// what the projection reads, as the sidecar does between events after
    /// a `session_start`.
    Event {
        full: bool,
        ahead: bool,
    },
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => Just(Step::User),
        4 => Just(Step::Assistant),
        2 => Just(Step::Custom),
        1 => Just(Step::ModelChange),
        1 => any::<usize>().prop_map(Step::Compaction),
        1 => any::<bool>().prop_map(|complete| Step::Reset { complete }),
        1 => Just(Step::LegacyReset),
        1 => Just(Step::Warning),
        2 => any::<usize>().prop_map(Step::Branch),
        1 => any::<usize>().prop_map(Step::EditId),
        1 => (0u8..8).prop_map(Step::Truncate),
        1 => Just(Step::Remove),
        1 => Just(Step::Restart),
        6 => any::<u8>().prop_map(|n| Step::Event {
            full: n % 3 == 0,
            ahead: n % 3 == 1
        }),
    ]
}

/// The model's context window in the shim's states.
const CONTEXT_WINDOW: u64 = 200_000;

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
            // The usage left to the sidecar, as for `context` and `turn_end`.
            context_usage: None,
            usage_local: true,
            model: Some(json!({"provider": "faux", "id": "faux-1",
                "contextWindow": CONTEXT_WINDOW, "maxTokens": 8192})),
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
    answer: Rc<RefCell<Option<SessionState>>>,
    resends: Rc<Cell<usize>>,
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
            self.resends.set(self.resends.get() + 1);
            let state = self.answer.borrow().clone();
            let state = state.ok_or_else(|| std::io::Error::other("no answer is set"))?;
            let answer = ShimMessage::ActionResult(ActionResult {
                id: request.id,
                error: None,
                state,
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

/// The sidecar: one host, kept from event to event.
struct Sidecar {
    host: BridgeHost<'static>,
    /// What the shim answers to `resendEntries`: every entry, no `onDisk`.
    answer: Rc<RefCell<Option<SessionState>>>,
    resends: Rc<Cell<usize>>,
    /// The pipe's lines, as the reader thread hands them over.
    lines: SyncSender<Incoming>,
}

impl Sidecar {
    /// A sidecar keeping session indexes under `cache`.
    fn keeping(cache: &Path) -> Self {
        let mut sidecar = Self::new();
        sidecar.host = sidecar.host.keeping_indexes(Some(cache));
        sidecar
    }

    /// A sidecar keeping the index of a session of any size under `cache`.
    fn keeping_every_index(cache: &Path) -> Self {
        let mut sidecar = Self::keeping(cache);
        sidecar.host = sidecar.host.keeping_every_index();
        sidecar
    }

    fn new() -> Self {
        let (to, incoming) = sync_channel(4);
        let answer = Rc::new(RefCell::new(None));
        let resends = Rc::new(Cell::new(0));
        // The far end lives as long as the test process: a few bytes a case.
        let lines = to.clone();
        let far: &'static mut FarEnd = Box::leak(Box::new(FarEnd {
            to,
            answer: Rc::clone(&answer),
            resends: Rc::clone(&resends),
        }));
        let host = BridgeHost::new(
            Channel::new(incoming, far),
            PiApiLevel::V0_87,
            "1.6.0".to_owned(),
            Duration::from_secs(5),
        );
        Self {
            host,
            answer,
            resends,
            lines,
        }
    }

    /// One event: the shim's report mirrored.
    fn event(&mut self, shim: &mut Shim, pi: &Pi) {
        *self.answer.borrow_mut() = Some(Shim::default().state(pi, true));
        let state = shim.state(pi, false);
        self.host.sync(state).expect("the mirror follows");
    }
}

fn ids_of(branch: &[&Entry]) -> Vec<String> {
    branch.iter().map(|e| e.id().to_owned()).collect()
}

/// The window rules give the same answers over `window` (a window branch)
/// as over `branch` (every entry of the same branch).
fn same_rules(window: &[&Entry], branch: &[&Entry]) -> Result<(), TestCaseError> {
    let (seen, held) = (
        active_window(window, SESSION_ID),
        active_window(branch, SESSION_ID),
    );
    prop_assert_eq!(&seen.id, &held.id);
    prop_assert_eq!(seen.start, held.start);
    prop_assert_eq!(&seen.previous, &held.previous);
    prop_assert_eq!(
        seen.marker.map(|m| m.position),
        held.marker.map(|m| m.position)
    );
    prop_assert_eq!(inspect_tail(window), inspect_tail(branch));
    prop_assert_eq!(has_marker(window), has_marker(branch));
    prop_assert_eq!(
        window_has_boot(window, &seen, SESSION_ID),
        window_has_boot(branch, &held, SESSION_ID)
    );
    for kind in [Kind::Boot, Kind::Warning, Kind::Continuation] {
        prop_assert_eq!(
            window_has(window, &seen, kind),
            window_has(branch, &held, kind)
        );
    }
    let mut windows = vec![root_window_id(SESSION_ID)];
    for (seen, held) in reset_markers(window).iter().zip(reset_markers(branch)) {
        prop_assert_eq!(seen.position, held.position);
        prop_assert_eq!(
            is_checkpoint_backed(window, seen),
            is_checkpoint_backed(branch, &held)
        );
        windows.push(held.window_id.to_owned());
    }
    prop_assert_eq!(reset_markers(window).len(), reset_markers(branch).len());
    for id in &windows {
        prop_assert_eq!(
            boundary_committed(window, id),
            boundary_committed(branch, id)
        );
        prop_assert_eq!(
            window_entries(window, id, SESSION_ID).map(<[&Entry]>::len),
            window_entries(branch, id, SESSION_ID).map(<[&Entry]>::len)
        );
    }
    Ok(())
}

/// What the handlers read of the mirror is what Pi holds: ids, order and
/// leaf (read from the index alone), the window branch and the projection;
/// with `full`, every entry decoded and the whole branches.
fn check_mirror(host: &BridgeHost<'_>, pi: &Pi, full: bool) -> Result<(), TestCaseError> {
    prop_assert_eq!(host.ids(), pi.ids(), "the mirror's ids and order");
    prop_assert_eq!(host.leaf_id(), pi.leaf.as_deref(), "the mirror's leaf");
    let held = pi.decoded();
    let fresh = EntryIndex::new(&held);
    let pi_branch = pi
        .leaf
        .as_deref()
        .map_or_else(Vec::new, |leaf| fresh.branch(leaf));
    let window = host.window_branch(None);
    prop_assert_eq!(window.len(), pi_branch.len());
    for (seen, held) in window.iter().zip(&pi_branch) {
        if held.entry_type() == "message" {
            prop_assert_eq!(seen.entry_type(), "message");
        } else {
            prop_assert_eq!(format!("{seen:?}"), format!("{held:?}"));
        }
    }
    same_rules(&window, &pi_branch)?;
    // From entries that are not the leaf, as a marker's check reads them:
    // the first, one in the middle and the last Pi holds.
    let ids = pi.ids();
    for id in [ids.first(), ids.get(ids.len() / 2), ids.last()]
        .into_iter()
        .flatten()
    {
        let from_host = host.window_branch(Some(id));
        let from_pi = fresh.branch(id);
        prop_assert_eq!(
            from_host.len(),
            from_pi.len(),
            "the window branch from {}",
            id
        );
        for (seen, held) in from_host.iter().zip(&from_pi) {
            // Messages are stand-ins there: no rule reads them.
            if held.entry_type() == "message" {
                prop_assert_eq!(seen.entry_type(), "message");
            } else {
                prop_assert_eq!(seen.id(), held.id(), "the window branch from {}", id);
            }
        }
    }
    let leaf = pi.leaf.as_deref().map_or(Leaf::Null, Leaf::Id);
    let projection = host.build_projection();
    prop_assert_eq!(
        format!("{projection:?}"),
        format!("{:?}", project(&fresh, leaf)),
        "the projection"
    );
    // The usage the sidecar computes is the one over Pi's own entries.
    let steps: Vec<BranchStep<'_>> = pi_branch
        .iter()
        .map(|entry| BranchStep::of(entry))
        .collect();
    let tokens = coding_agent::context_usage_tokens(&project(&fresh, leaf), &steps);
    prop_assert_eq!(
        host.context_usage(),
        Some(ContextUsage {
            tokens,
            context_window: CONTEXT_WINDOW,
            percent: tokens.map(|tokens| tokens as f64 / CONTEXT_WINDOW as f64 * 100.0),
        }),
        "the context usage"
    );
    if full {
        let all = host.entries();
        prop_assert_eq!(
            format!("{all:?}"),
            format!("{:?}", held.iter().collect::<Vec<_>>())
        );
        let branch = host.branch(None);
        prop_assert_eq!(ids_of(&branch), ids_of(&pi_branch));
        // Over the same entries, the window branch and the whole branch
        // decide the window's context alike (its legacy slice matches
        // entries by address).
        prop_assert_eq!(
            format!("{:?}", window_projection(&projection, &window)),
            format!("{:?}", window_projection(&projection, &branch))
        );
        if let Some(first) = held.first() {
            prop_assert_eq!(
                ids_of(&host.branch(Some(first.id()))),
                ids_of(&fresh.branch(first.id()))
            );
        }
        for entry in &held {
            let position = fresh.position(entry.id()).expect("every id is indexed");
            prop_assert!(std::ptr::eq(
                host.entry(entry.id()).expect("every id is found"),
                all[position],
            ));
        }
    }
    Ok(())
}

fn run(steps: &[Step], dir: &Path) -> Result<(), TestCaseError> {
    let mut pi = Pi::new(dir.join("session.jsonl"));
    let mut shim = Shim::default();
    // Each sidecar keeps the index of the session file it reads for the
    // next one (after an `ahead` step), whatever the session's size.
    let cache = dir.join("cache");
    let mut sidecar = Sidecar::keeping_every_index(&cache);
    let mut windows = 0;
    for step in steps {
        match step {
            Step::User => pi.append(question()),
            Step::Assistant => pi.append(answer()),
            Step::Custom => {
                pi.append(json!({"type": "custom", "customType": "mirror-test", "data": {"n": 1}}))
            }
            Step::ModelChange => pi.append(model_change()),
            Step::Compaction(at) => {
                if let Some(kept_id) = pick(&pi, *at) {
                    pi.append(compaction(&kept_id));
                }
            }
            Step::Reset { complete } => {
                windows += 1;
                let window = format!("pcw:0195-mir:{windows:08x}");
                let own = pi.next_id();
                pi.append(json!({"type": "compaction", "summary": "",
                    "firstKeptEntryId": own, "tokensBefore": 10}));
                pi.append(
                    json!({"type": "custom", "customType": "notesoup/reset-marker",
                    "data": {"windowId": window, "origin": "normal"}}),
                );
                if *complete {
                    pi.append(
                        json!({"type": "custom_message", "customType": "notesoup/boot",
                        "content": "the boot", "display": false,
                        "details": {"windowId": window, "sessionId": SESSION_ID}}),
                    );
                    pi.append(
                        json!({"type": "custom_message", "customType": "notesoup/continuation",
                        "content": "go on", "display": false}),
                    );
                }
            }
            Step::LegacyReset => {
                windows += 1;
                let window = format!("pcw:0195-mir:{windows:08x}");
                pi.append(
                    json!({"type": "custom", "customType": "pi-context/reset-marker",
                    "data": {"windowId": window}}),
                );
                pi.append(
                    json!({"type": "custom_message", "customType": "pi-context/boot",
                    "content": "the boot", "display": false, "details": {"windowId": window}}),
                );
            }
            Step::Warning => pi.append(json!({"type": "custom_message",
                "customType": "notesoup/warning", "content": "almost full", "display": false})),
            Step::Branch(at) => {
                if let Some(id) = pick(&pi, *at) {
                    pi.leaf = Some(id);
                }
            }
            Step::EditId(at) => edit_id(&pi, *at),
            Step::Truncate(eighths) => {
                if let Ok(meta) = std::fs::metadata(&pi.file) {
                    let file = std::fs::OpenOptions::new()
                        .write(true)
                        .open(&pi.file)
                        .expect("open");
                    file.set_len(meta.len() * u64::from(*eighths) / 8)
                        .expect("truncate");
                }
            }
            Step::Remove => {
                let _ = std::fs::remove_file(&pi.file);
            }
            Step::Restart => {
                shim = Shim::default();
                // Idle before Pi restarts: the index it read is kept.
                sidecar.host.warm();
                drop(sidecar);
                sidecar = Sidecar::keeping_every_index(&cache);
            }
            Step::Event { full, ahead } => {
                sidecar.event(&mut shim, &pi);
                if *ahead {
                    sidecar.host.start_warming();
                    sidecar.host.warm();
                }
                check_mirror(&sidecar.host, &pi, *full)?;
            }
        }
    }
    Ok(())
}

/// A fresh sidecar's first event over `pi`: the host and how many resends
/// it asked for.
fn first_event(pi: &Pi) -> (Sidecar, usize) {
    let mut sidecar = Sidecar::new();
    sidecar.event(&mut Shim::default(), pi);
    let resends = sidecar.resends.get();
    (sidecar, resends)
}

/// Pi's user message entry (`append` gives it its id, parent and time).
fn question() -> Value {
    json!({"type": "message",
        "message": {"role": "user", "content": "a question", "timestamp": 1}})
}

/// Pi's assistant message entry.
fn answer() -> Value {
    json!({"type": "message",
        "message": {"role": "assistant", "content": [{"type": "text", "text": "an answer"}],
            "api": "faux", "provider": "faux", "model": "faux-1",
            "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
            "stopReason": "stop", "timestamp": 2}})
}

/// Pi's model change entry.
fn model_change() -> Value {
    json!({"type": "model_change", "provider": "faux", "modelId": "faux-1"})
}

/// A session written at `file`: a model change, then `count` entries made
/// by `entry`.
fn after_a_model_change(file: PathBuf, count: usize, entry: fn() -> Value) -> Pi {
    let mut pi = Pi::new(file);
    pi.append(model_change());
    for _ in 0..count {
        pi.append(entry());
    }
    pi
}

/// Pi's compaction entry keeping from `kept_id`.
fn compaction(kept_id: &str) -> Value {
    json!({"type": "compaction", "summary": "so far",
        "firstKeptEntryId": kept_id, "tokensBefore": 10})
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

/// A written session's first event is read from the file: no resend, and
/// the state on the line carries no entry.
#[test]
fn a_written_session_is_read_from_its_file() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let pi = after_a_model_change(dir.path().join("session.jsonl"), 20, question);
    let mut shim = Shim::default();
    assert!(
        shim.state(&pi, false).entries.is_empty(),
        "nothing on the line"
    );
    let (sidecar, resends) = first_event(&pi);
    assert_eq!(sidecar.host.ids(), pi.ids());
    assert_eq!(sidecar.host.leaf_id(), pi.leaf.as_deref());
    assert_eq!(resends, 0, "the file held every entry");
}

/// A session of ten questions, written to `session.jsonl` in `dir`.
fn ten_questions(dir: &Path) -> Pi {
    let mut pi = Pi::new(dir.join("session.jsonl"));
    for _ in 0..10 {
        pi.append(question());
    }
    pi
}

/// A session file whose ids differ from Pi's in the middle, with the same
/// count and last id, is not taken for Pi's: the entries are sent instead.
#[test]
fn an_id_edited_in_the_middle_is_caught() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let pi = ten_questions(dir.path());
    edit_id(&pi, 4);
    let (sidecar, resends) = first_event(&pi);
    assert_eq!(sidecar.host.ids(), pi.ids());
    assert_eq!(resends, 1);
}

/// An entry edited in place after the mirror indexed the file (its line
/// as long as before, the last line unchanged) is found as it is read
/// back: from then on the mirror says it no longer holds the file.
#[test]
fn an_entry_edited_after_indexing_is_caught_as_it_is_read() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let pi = ten_questions(dir.path());
    let session = crate::session::LazySession::read_kept(&pi.file, None).expect("indexed");
    let mirror = super::super::mirror::EntryMirror::from_disk(session, 10);
    assert_eq!(mirror.check(), Ok(()));
    let id = &pi.ids()[4];
    let text = std::fs::read_to_string(&pi.file).expect("the file");
    let edited = text.replacen(
        &format!(r#""id":"{id}""#),
        &format!(r#""id":"{}""#, "e".repeat(id.len())),
        1,
    );
    assert_ne!(edited, text);
    std::fs::write(&pi.file, edited).expect("rewrite");
    assert_eq!(mirror.check(), Ok(()), "not read back yet");
    assert_eq!(mirror.entry(3).id(), pi.ids()[3]);
    assert_eq!(mirror.check(), Ok(()), "an entry as indexed");
    let _ = mirror.entry(4);
    assert_eq!(
        mirror.check(),
        Err("the session file changed under the mirror".to_owned())
    );
}

/// A session of a model change and 500 entries made by `entry`, written
/// to `session.jsonl` in `dir`, and a sidecar after its first event, which
/// decodes nothing.
fn synced(dir: &Path, entry: fn() -> Value) -> (Pi, Sidecar) {
    let pi = after_a_model_change(dir.join("session.jsonl"), 500, entry);
    let (sidecar, _) = first_event(&pi);
    assert_eq!(sidecar.host.decoded(), 0, "syncing decodes nothing");
    (pi, sidecar)
}

/// Pi's usage is read from the leaf back to the newest usable usage: a
/// session of 500 answers decodes the last one (and the model change, an
/// entry that is not a message), not the context before it.
#[test]
fn the_usage_reads_back_to_the_newest_usage_only() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let (pi, sidecar) = synced(dir.path(), answer);
    let usage = sidecar.host.context_usage().expect("a usage");
    assert_eq!(usage.tokens, Some(2), "the last answer's total tokens");
    assert_eq!(sidecar.host.decoded(), 2);
    check_mirror(&sidecar.host, &pi, true).expect("the mirror is Pi's");
}

/// A long session read from its file decodes, for what the handlers read at
/// `session_start` (the window branch, the projection), only the entries
/// that are not messages and the messages since the newest compaction.
#[test]
fn the_handlers_decode_only_what_they_read() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let (_, sidecar) = synced(dir.path(), question);
    let window = sidecar.host.window_branch(None);
    assert_eq!(window.len(), 501);
    assert_eq!(sidecar.host.decoded(), 1, "only the model change");
    // A compaction keeping the last three messages: the projection needs
    // those, the compaction and the model change (and, for the model, the
    // newest assistant message before them: there is none, so every
    // earlier message is looked at).
    let mut pi = after_a_model_change(dir.path().join("compacted.jsonl"), 500, answer);
    let kept = pi.ids()[498].clone();
    pi.append(compaction(&kept));
    let (sidecar, _) = first_event(&pi);
    let _ = sidecar.host.window_branch(None);
    let _ = sidecar.host.build_projection();
    // The usage reads no more than the window branch and the projection.
    let usage = sidecar.host.context_usage().expect("a usage");
    assert_eq!(usage.tokens, None, "no answer after the compaction");
    // The model change, the compaction, the three kept messages and the
    // assistant message before them.
    assert_eq!(sidecar.host.decoded(), 6);
    check_mirror(&sidecar.host, &pi, true).expect("the mirror is Pi's");
}

/// `pi` followed by a thinking-level change to high, a hidden custom
/// message, a question and a compaction keeping from that custom message,
/// and a sidecar after its first event over it.
fn kept_by_a_compaction(mut pi: Pi) -> (Pi, Sidecar) {
    pi.append(json!({"type": "thinking_level_change", "thinkingLevel": "high"}));
    pi.append(
        json!({"type": "custom_message", "customType": "mirror-test",
        "content": "kept", "display": false}),
    );
    let kept = pi.ids()[pi.ids().len() - 1].clone();
    pi.append(question());
    pi.append(compaction(&kept));
    let (sidecar, _) = first_event(&pi);
    (pi, sidecar)
}

/// The projection reads, before the context's start, the entries that are
/// not messages (the newest model and thinking level are among them), and
/// the entry the context starts at once: here a custom message kept by a
/// compaction, after a model change and a thinking-level change that no
/// answer follows.
#[test]
fn the_projection_reads_what_comes_before_the_context_start_once() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let mut pi = after_a_model_change(dir.path().join("session.jsonl"), 4, answer);
    pi.append(json!({"type": "model_change", "provider": "faux", "modelId": "faux-2"}));
    let (pi, sidecar) = kept_by_a_compaction(pi);
    let projection = sidecar.host.build_projection();
    let kept_messages = projection
        .message_refs()
        .filter(|message| matches!(message, AgentMessage::Custom(custom) if custom.custom_type == "mirror-test"))
        .count();
    assert_eq!(kept_messages, 1, "the kept custom message, once");
    assert_eq!(
        projection
            .model
            .as_ref()
            .map(|model| model.model_id.as_str()),
        Some("faux-2")
    );
    assert_eq!(projection.thinking_level, "high");
    check_mirror(&sidecar.host, &pi, true).expect("the mirror is Pi's");
}

/// Once the mirror has read the session file, what the projection reads is
/// decoded between events while no line waits, and only that: a waiting
/// line pauses it (and is received as it came), and the next request's
/// projection and usage then decode nothing more.
#[test]
fn the_projection_is_decoded_ahead_between_events() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let mut pi = after_a_model_change(dir.path().join("compacted.jsonl"), 500, answer);
    let kept = pi.ids()[300].clone();
    pi.append(compaction(&kept));
    // Outside a reset window nothing is decoded ahead: Pi's usage is read
    // from the end. The window branch's entries that are not messages are
    // read to find its reset markers.
    let (mut sidecar, _) = first_event(&pi);
    sidecar.host.warm();
    assert_eq!(
        sidecar.host.decoded(),
        2,
        "the model change and the compaction"
    );
    // A reset window's projection is.
    pi.append(
        json!({"type": "custom", "customType": "pi-context/reset-marker",
        "data": {"windowId": "pcw:0195-mir:00000001"}}),
    );
    for _ in 0..40 {
        pi.append(question());
    }
    // What the projection reads, counted on a mirror of its own.
    let (reference, _) = first_event(&pi);
    let _ = reference.host.build_projection();
    let read = reference.host.decoded();
    assert!(read > 200, "the kept messages and those after: {read}");

    let (mut sidecar, _) = first_event(&pi);
    let line = br#"{"type":"event"}"#.to_vec();
    sidecar
        .lines
        .send(Incoming::Line(line.clone()))
        .expect("a line");
    sidecar.host.warm();
    assert_eq!(sidecar.host.decoded(), 0, "a waiting line pauses it");
    let Ok(Received::Unreadable { .. }) = sidecar.host.channel().receive(None) else {
        panic!("the waiting line is received first");
    };
    sidecar.host.warm();
    assert_eq!(sidecar.host.decoded(), read, "what the projection reads");
    let _ = sidecar.host.build_projection();
    let _ = sidecar.host.context_usage();
    assert_eq!(sidecar.host.decoded(), read, "nothing more");
    // Done: a later call decodes nothing, even with more to decode.
    let _ = sidecar.host.entries();
    let all = sidecar.host.decoded();
    sidecar.host.warm();
    assert_eq!(sidecar.host.decoded(), all);
    check_mirror(&sidecar.host, &pi, true).expect("the mirror is Pi's");
}

/// The leaf's kept path, and what is kept with it (its entries that are not
/// messages, its compactions, where its context starts), follows the
/// session from event to event: entries appended to the leaf, a compaction
/// appended (the context starts anew), the leaf moved back and forth,
/// entries appended off the path kept, resets, a fresh mirror, and entries
/// resent when the file is cut.
#[test]
fn the_kept_leaf_path_follows_the_session() {
    use Step::{
        Assistant, Branch, Compaction, Custom, LegacyReset, Reset, Restart, Truncate, User, Warning,
    };
    let event = || Step::Event {
        full: false,
        ahead: false,
    };
    let steps = [
        User,
        Assistant,
        event(),
        Custom,
        User,
        Assistant,
        event(),
        // A compaction appended to the leaf, keeping the third entry.
        Compaction(2),
        event(),
        User,
        Assistant,
        // A fresh mirror walks the path with the compaction on it; another
        // compaction appended, keeping more, starts the context earlier.
        Restart,
        event(),
        Compaction(0),
        event(),
        // Back before the compaction, an entry off the kept path, then
        // forth again past the compaction.
        Branch(3),
        event(),
        User,
        Warning,
        event(),
        Branch(9),
        event(),
        Assistant,
        event(),
        Branch(13),
        event(),
        // Compactions on the new path, then resets.
        Compaction(1),
        Compaction(5),
        event(),
        Reset { complete: true },
        event(),
        LegacyReset,
        User,
        event(),
        Branch(0),
        event(),
        Branch(30),
        User,
        event(),
        Restart,
        event(),
        User,
        event(),
        Truncate(4),
        User,
        Assistant,
        Step::Event {
            full: true,
            ahead: false,
        },
    ];
    let dir = tempfile::tempdir().expect("a temp dir");
    run(&steps, dir.path()).expect("the mirror is Pi's at every event");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn the_mirror_equals_what_pi_holds(steps in proptest::collection::vec(step(), 1..60)) {
        let dir = tempfile::tempdir().expect("a temp dir");
        run(&steps, dir.path())?;
    }
}

/// A sidecar keeping indexes saves the session file's index once the event
/// that read the file is answered (`warm`, between events), and the next
/// sidecar restores it and reads only what Pi appended since. A kept index
/// that does not give Pi's ids is passed over: the file is read whole (no
/// resend) and its index kept anew.
#[test]
fn the_next_sidecar_restores_the_index_the_last_one_kept() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let cache = dir.path().join("cache");
    let kept = cache.join("pi-session-index").join(SESSION_ID);
    let mut pi = after_a_model_change(dir.path().join("session.jsonl"), 2_500, question);
    let start = |pi: &Pi| {
        let mut sidecar = Sidecar::keeping(&cache);
        sidecar.event(&mut Shim::default(), pi);
        let restored = sidecar.host.restored();
        assert_eq!(sidecar.host.ids(), pi.ids());
        assert_eq!(sidecar.resends.get(), 0, "read from the file");
        sidecar.host.warm();
        // Dropped: waits for the save.
        restored
    };
    assert_eq!(start(&pi), 0);
    let saved = std::fs::read(&kept).expect("the index kept");
    for _ in 0..3 {
        pi.append(question());
    }
    assert_eq!(start(&pi), 2_501, "the model change and the questions");
    assert_eq!(
        std::fs::read(&kept).expect("still kept"),
        saved,
        "three entries more are not worth a new save"
    );
    // The index of a file whose 100th entry had another id of the same
    // length (the probes at the start and the end still match).
    let original = std::fs::read(&pi.file).expect("the session file");
    let id = pi.ids()[99].clone();
    let text = String::from_utf8(original.clone()).expect("text");
    std::fs::write(&pi.file, text.replacen(&id, "eeeeeeee", 1)).expect("edit");
    let edited = crate::session::LazySession::read(&pi.file).expect("read");
    std::fs::write(&kept, edited.keep().expect("an index")).expect("plant");
    std::fs::write(&pi.file, &original).expect("restore");
    assert_eq!(start(&pi), 0, "passed over");
    assert_ne!(std::fs::read(&kept).expect("kept anew"), saved);
    assert_eq!(start(&pi), 2_504);
}

/// A shim that starts over while the sidecar keeps its mirror (Pi reloads
/// the extension) reports the entries Pi has written as on disk: the
/// mirror is kept when it holds them (the same count, last id and ids),
/// without reading the file, and read again otherwise.
#[test]
fn a_shim_starting_over_keeps_the_mirror_only_when_it_holds_the_entries() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let mut pi = ten_questions(dir.path());
    let (mut sidecar, resends) = first_event(&pi);
    assert_eq!(resends, 0);

    // Held: the file is not read (it is gone), nothing is asked for.
    let text = std::fs::read(&pi.file).expect("the file");
    let state = Shim::default().state(&pi, false);
    assert!(state.on_disk.is_some() && state.entries.is_empty());
    std::fs::remove_file(&pi.file).expect("remove");
    sidecar.host.sync(state).expect("the mirror follows");
    assert_eq!(sidecar.resends.get(), 0, "the mirror held them");
    assert_eq!(sidecar.host.ids(), pi.ids());

    // Not held, each check failing alone: the entries are asked for.
    std::fs::write(&pi.file, &text).expect("restore");
    let wrong: [fn(&mut OnDisk); 2] = [
        |on_disk| on_disk.ids_hash = ids_hash(["other"]),
        |on_disk| on_disk.last_id = "other".to_owned(),
    ];
    for (case, wrong) in wrong.into_iter().enumerate() {
        let mut state = Shim::default().state(&pi, false);
        wrong(state.on_disk.as_mut().expect("on disk"));
        *sidecar.answer.borrow_mut() = Some(Shim::default().state(&pi, true));
        sidecar.host.sync(state).expect("the mirror follows");
        assert_eq!(sidecar.resends.get(), case + 1, "case {case}");
        assert_eq!(sidecar.host.ids(), pi.ids());
    }

    // More entries on disk than the mirror holds: read from the file.
    pi.append(question());
    pi.append(question());
    let state = Shim::default().state(&pi, false);
    sidecar.host.sync(state).expect("the mirror follows");
    assert_eq!(sidecar.resends.get(), 2, "the file held them");
    assert_eq!(sidecar.host.ids(), pi.ids());
}

/// A report whose entries do not follow on from what the mirror holds is
/// not patched up: entries from before those it leaves to the file, or
/// from past the mirror's end, have every entry asked for; entries from
/// inside the mirror replace those from there on.
#[test]
fn entries_out_of_step_are_asked_for_and_from_inside_replace_the_rest() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let pi = ten_questions(dir.path());
    let (mut sidecar, _) = first_event(&pi);
    *sidecar.answer.borrow_mut() = Some(Shim::default().state(&pi, true));
    let from = |at: u32, on_disk: bool| {
        let mut state = Shim::default().state(&pi, !on_disk);
        state.entries_from = at;
        state.entries = pi.entries[(at as usize).min(pi.entries.len())..].to_vec();
        state
    };
    sidecar
        .host
        .sync(from(5, true))
        .expect("the mirror follows");
    assert_eq!(sidecar.resends.get(), 1, "from before the file's entries");
    sidecar
        .host
        .sync(from(12, false))
        .expect("the mirror follows");
    assert_eq!(sidecar.resends.get(), 2, "from past the mirror");
    sidecar
        .host
        .sync(from(5, false))
        .expect("the mirror follows");
    assert_eq!(sidecar.resends.get(), 2, "from inside the mirror");
    assert_eq!(sidecar.host.ids(), pi.ids());
}

/// The newest answer before the context start goes into the projection in
/// path order among the entries that are not messages: an answer after a
/// model change names the model.
#[test]
fn the_answer_before_the_context_start_keeps_its_place_in_the_path() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let mut pi = Pi::new(dir.path().join("session.jsonl"));
    pi.append(json!({"type": "model_change", "provider": "faux", "modelId": "faux-2"}));
    pi.append(answer());
    let (pi, sidecar) = kept_by_a_compaction(pi);
    let projection = sidecar.host.build_projection();
    assert_eq!(
        projection
            .model
            .as_ref()
            .map(|model| model.model_id.as_str()),
        Some("faux-1"),
        "the answer's model, newer than the model change"
    );
    assert_eq!(projection.thinking_level, "high");
    check_mirror(&sidecar.host, &pi, true).expect("the mirror is Pi's");
}

/// What a state says of Pi's agent (idle, messages queued, the run's
/// signal aborted) and of the session (its header and file, the settings,
/// whether the project is trusted) is what the host answers until the next
/// state.
#[test]
fn the_agent_s_flags_and_the_session_s_facts_are_the_last_state_s() {
    let mut sidecar = Sidecar::new();
    for (idle, pending, aborted, trusted) in
        [(true, false, false, false), (false, true, true, true)]
    {
        let file = format!("/work/{idle}.jsonl");
        let state: SessionState = serde_json::from_value(json!({
            "sessionId": SESSION_ID,
            "header": {"type": "session", "version": 3, "id": SESSION_ID,
                       "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/work"},
            "sessionFile": file,
            "entriesFrom": 0, "entries": [], "leafId": null, "cwd": "/work",
            "idle": idle, "pendingMessages": pending, "signalAborted": aborted,
            "settings": {"global": {"theme": "dark"}, "project": {}},
            "projectTrusted": trusted,
        }))
        .expect("a state");
        sidecar.host.sync(state).expect("the mirror follows");
        let host: &dyn PiHost = &sidecar.host;
        assert_eq!(
            (
                host.is_idle(),
                host.has_pending_messages(),
                host.signal_aborted()
            ),
            (idle, pending, aborted)
        );
        assert_eq!(host.is_project_trusted(), trusted);
        assert_eq!(
            host.header().map(|header| header.id.as_str()),
            Some(SESSION_ID)
        );
        assert_eq!(host.session_file(), Some(Path::new(&file)));
        let settings = host.settings().expect("settings");
        assert_eq!(settings.global, json!({"theme": "dark"}));
    }
}
