//! `BridgeHost`: a [`PiHost`] that mirrors the session the shim reports and
//! relays every action to the shim as a nested request, and the [`Channel`]
//! both travel over.

use std::cell::{Cell, Ref, RefCell};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TryRecvError};
use std::time::{Duration, Instant};

use notesoup_core::plumbing::{CappedLines, LineRead};
use serde_json::Value;

use super::BridgeError;
use super::kept::KeptIndexes;
use super::mirror::EntryMirror;
use super::protocol::{
    AbortArgs, Action, ActionRequest, ActionResult, AppendEntryArgs, EventRequest, NotifyArgs,
    OnDisk, SendMessageArgs, SessionState, ShimMessage, SidecarMessage, ids_hash,
};
use crate::estimate::{BranchStep, coding_agent};
use crate::host::{
    CompactionSettings, ContextUsage, CustomMessageDraft, HostError, HostSettings, MessageSummary,
    ModelInfo, NotifyLevel, PiApiLevel, PiHost, SendOptions,
};
use crate::projection::{Projection, project_path, reset_markers};
use crate::session::{AgentMessage, Entry, LazySession, SessionHeader};

/// The longest piece of text from the shim an error message repeats, in
/// characters: a refusal or a stderr line stays short whatever was sent.
pub(crate) const SHOWN_CHARS: usize = 120;

/// `text` cut to [`SHOWN_CHARS`] characters, marked with its length when cut.
pub(crate) fn shown(text: &str) -> String {
    match text.char_indices().nth(SHOWN_CHARS) {
        Some((at, _)) => format!("{}… ({} bytes)", &text[..at], text.len()),
        None => text.to_owned(),
    }
}

/// One line as the reader thread hands it over.
pub(crate) enum Incoming {
    /// A whole line within the cap.
    Line(Vec<u8>),
    /// A line over the cap, discarded as it streamed past; its first bytes.
    TooLong { prefix: Vec<u8>, bytes: u64 },
    /// The shim closed the pipe.
    Closed,
    /// Reading the pipe failed.
    Failed(std::io::Error),
}

/// Reads the shim's lines with core's capped reader and hands them over one
/// at a time, until the pipe ends or nobody listens. It runs on a thread of
/// its own so that a wait for a nested action's answer can be bounded.
pub(crate) fn read_lines(input: impl BufRead, to: &SyncSender<Incoming>) {
    let mut lines = CappedLines::new(input);
    loop {
        let incoming = match lines.next_line() {
            Ok(LineRead::Line(line)) if LineRead::is_blank(line) => continue,
            Ok(LineRead::Line(line)) => Incoming::Line(line.to_vec()),
            Ok(LineRead::TooLong { prefix, bytes }) => Incoming::TooLong {
                prefix: prefix.to_vec(),
                bytes,
            },
            Ok(LineRead::Eof) => Incoming::Closed,
            Err(error) => Incoming::Failed(error),
        };
        let last = matches!(incoming, Incoming::Closed | Incoming::Failed(_));
        if to.send(incoming).is_err() || last {
            return;
        }
    }
}

/// What [`Channel::receive`] brought.
#[derive(Debug)]
pub(crate) enum Received {
    /// A protocol message (boxed: an event is large, a refusal is not).
    Message(Box<ShimMessage>),
    /// A line that is no message: over the cap, too dense to parse, or not
    /// this protocol's JSON. `event` is the id of the event it shows, so that
    /// event's result can carry the refusal.
    Unreadable { event: Option<u32>, why: String },
    /// The shim closed the pipe.
    Closed,
    /// The deadline passed first.
    TimedOut,
}

/// What a message is, in a few words (never its content).
pub(crate) fn kind(message: &ShimMessage) -> String {
    match message {
        ShimMessage::Hello(_) => "hello".to_owned(),
        ShimMessage::Event(event) => format!("event {}", event.id),
        ShimMessage::ActionResult(result) => format!("actionResult {}", result.id),
    }
}

/// The id of the event a line that is no message shows: from the parsed
/// line, else from its start as the shim writes it
/// (`{"type":"event","body":{"id":N,…`, which survives the cut of an
/// over-long line).
fn event_id(line: &[u8]) -> Option<u32> {
    #[derive(serde::Deserialize)]
    struct Body {
        id: u32,
    }
    #[derive(serde::Deserialize)]
    struct Probe {
        #[serde(rename = "type")]
        kind: String,
        body: Body,
    }
    if let Ok(probe) = serde_json::from_slice::<Probe>(line) {
        return (probe.kind == "event").then_some(probe.body.id);
    }
    let rest = line.strip_prefix(br#"{"type":"event","body":"#)?;
    LineRead::leading_id(rest).and_then(|id| u32::try_from(id).ok())
}

/// A `context_with_system` event line as the shim writes it
/// (`{"type":"event","body":{"id":…,"name":"context_with_system","payload":{…,"messages":[…]},…}}`),
/// read with its message summaries decoded in the same pass: its payload,
/// thousands of small objects, is never built as a value (the event's
/// `payload` is `null`, its `summaries` set). Any other line, or one this
/// reading refuses (a duplicate field, an escaped key, a summary
/// [`MessageSummary::from_json`] refuses), is `None`: the caller decodes it
/// whole, and whatever it makes of it stands. Nesting counts as in the
/// whole line's decoding, so its depth limit holds alike.
pub(super) fn summarized_event(line: &[u8]) -> Option<ShimMessage> {
    #[derive(serde::Deserialize)]
    struct Line<'a> {
        #[serde(rename = "type")]
        kind: &'a str,
        #[serde(borrow)]
        body: Body<'a>,
    }
    #[derive(serde::Deserialize)]
    struct Body<'a> {
        id: u32,
        name: &'a str,
        payload: Payload,
        state: SessionState,
    }
    #[derive(serde::Deserialize)]
    struct Payload {
        messages: Vec<Summary>,
    }
    const START: &[u8] = br#"{"type":"event","body":{"id":"#;
    const NAME: &[u8] = br#","name":"context_with_system","payload":{"#;
    let rest = line.strip_prefix(START)?;
    let digits = rest.iter().take_while(|byte| byte.is_ascii_digit()).count();
    if !rest[digits..].starts_with(NAME) {
        return None;
    }
    let read: Line<'_> = serde_json::from_slice(line).ok()?;
    if read.kind != "event" || read.body.name != "context_with_system" {
        return None;
    }
    Some(ShimMessage::Event(EventRequest {
        id: read.body.id,
        name: read.body.name.to_owned(),
        payload: Value::Null,
        state: read.body.state,
        summaries: Some(
            read.body
                .payload
                .messages
                .into_iter()
                .map(|summary| summary.0)
                .collect(),
        ),
    }))
}

/// One message summary of a `context_with_system` line
/// ([`summarized_event`]): a role's number, or an object's fields, each
/// value decoded as a JSON value but the `role`, read as a string in place
/// (anything else refuses the line, which is then decoded whole), made a
/// [`MessageSummary`].
struct Summary(MessageSummary);

impl<'de> serde::Deserialize<'de> for Summary {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Fields;
        impl<'de> serde::de::Visitor<'de> for Fields {
            type Value = Summary;

            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("a message summary")
            }

            /// A [`PLAIN_ROLES`](crate::host::PLAIN_ROLES) number.
            fn visit_u64<E: serde::de::Error>(self, code: u64) -> Result<Summary, E> {
                MessageSummary::plain(code).map(Summary).map_err(E::custom)
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Summary, A::Error> {
                // The few fields a summary holds stay here; more spill.
                const KEPT: usize = 4;
                let mut kept: [(&'de str, Value); KEPT] = Default::default();
                let mut spilled: Vec<(&'de str, Value)> = Vec::new();
                let mut count = 0;
                // The string `role` (a later one wins) and its field's index.
                let mut role: Option<(&'de str, usize)> = None;
                while let Some(name) = map.next_key::<&'de str>()? {
                    let value = if name == "role" {
                        role = Some((map.next_value::<&'de str>()?, count));
                        Value::Null
                    } else {
                        map.next_value()?
                    };
                    match kept.get_mut(count) {
                        Some(slot) => *slot = (name, value),
                        None => spilled.push((name, value)),
                    }
                    count += 1;
                }
                let Some((text, at)) = role else {
                    return Err(serde::de::Error::custom("a message summary has no role"));
                };
                let summary = if spilled.is_empty() {
                    MessageSummary::from_fields(&mut kept[..count], text, at)
                } else {
                    let mut fields: Vec<(&'de str, Value)> = kept.into_iter().collect();
                    fields.append(&mut spilled);
                    MessageSummary::from_fields(&mut fields, text, at)
                };
                summary.map(Summary).map_err(serde::de::Error::custom)
            }
        }
        deserializer.deserialize_any(Fields)
    }
}

/// The two ends of the shim's pipe: lines from the reader thread, and the
/// writer.
pub(crate) struct Channel<'io> {
    incoming: Receiver<Incoming>,
    /// A line taken by [`Channel::is_waiting`], handed out first.
    waiting: Option<Incoming>,
    writer: &'io mut dyn Write,
}

impl std::fmt::Debug for Channel<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Channel").finish_non_exhaustive()
    }
}

impl<'io> Channel<'io> {
    pub(crate) fn new(incoming: Receiver<Incoming>, writer: &'io mut dyn Write) -> Self {
        Self {
            incoming,
            waiting: None,
            writer,
        }
    }

    /// Whether a line (or the pipe's end) is there to be received, without
    /// waiting for one.
    pub(crate) fn is_waiting(&mut self) -> bool {
        if self.waiting.is_none() {
            self.waiting = match self.incoming.try_recv() {
                Ok(incoming) => Some(incoming),
                Err(TryRecvError::Empty) => None,
                Err(TryRecvError::Disconnected) => Some(Incoming::Closed),
            };
        }
        self.waiting.is_some()
    }

    /// Writes one line and flushes it: the shim waits for it.
    pub(crate) fn send(&mut self, message: &SidecarMessage) -> Result<(), BridgeError> {
        let mut text = serde_json::to_string(message).map_err(BridgeError::Encode)?;
        text.push('\n');
        self.writer
            .write_all(text.as_bytes())
            .and_then(|()| self.writer.flush())
            .map_err(BridgeError::Io)
    }

    /// The next line, waited for until `deadline` (for ever without one).
    /// Blank lines are skipped.
    pub(crate) fn receive(&mut self, deadline: Option<Instant>) -> Result<Received, BridgeError> {
        let incoming = match (self.waiting.take(), deadline) {
            (Some(incoming), _) => incoming,
            // A reader thread that is gone has nothing more to give.
            (None, None) => self.incoming.recv().unwrap_or(Incoming::Closed),
            (None, Some(deadline)) => match self
                .incoming
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            {
                Ok(incoming) => incoming,
                Err(RecvTimeoutError::Timeout) => return Ok(Received::TimedOut),
                Err(RecvTimeoutError::Disconnected) => Incoming::Closed,
            },
        };
        Ok(match incoming {
            Incoming::Closed => Received::Closed,
            Incoming::Failed(error) => return Err(BridgeError::Io(error)),
            Incoming::TooLong { prefix, bytes } => Received::Unreadable {
                event: event_id(&prefix),
                why: format!(
                    "a line of {bytes} bytes, over the limit of {max_bytes}, was discarded unread",
                    max_bytes = LineRead::MAX_BYTES
                ),
            },
            Incoming::Line(line) if LineRead::too_many_tokens(&line, LineRead::MAX_TOKENS) => {
                Received::Unreadable {
                    event: event_id(&line),
                    why: format!(
                        "a line of more than {max_tokens} commas, colons and opening brackets was not parsed",
                        max_tokens = LineRead::MAX_TOKENS
                    ),
                }
            }
            Incoming::Line(line) => {
                match summarized_event(&line).map_or_else(|| serde_json::from_slice(&line), Ok) {
                    Ok(message) => Received::Message(Box::new(message)),
                    Err(error) => Received::Unreadable {
                        event: event_id(&line),
                        why: format!("an unreadable line ({})", shown(&error.to_string())),
                    },
                }
            }
        })
    }
}

/// The leaf's path (positions in the mirror, root first) and what the
/// handlers read of it at every event, kept while new entries only extend
/// it: a branch of 100,000 entries is neither walked nor scanned again for
/// each event.
#[derive(Debug, Default)]
struct LeafPath {
    /// The position the path ends at; `None`: nothing kept.
    tip: Option<usize>,
    /// The positions from the root to `tip`.
    positions: Vec<usize>,
    /// The indexes in `positions` of the entries that are not messages
    /// (the only ones the window rules read whole).
    others: Vec<usize>,
    /// The indexes in `positions` of the entries of type `compaction`.
    compactions: Vec<usize>,
    /// Where the context's messages begin on the path
    /// ([`BridgeHost::context_start`]) once found; a compaction added to
    /// the path clears it.
    context_start: Cell<Option<usize>>,
}

impl LeafPath {
    fn clear(&mut self) {
        *self = Self::default();
    }

    /// Adds the entry at `position` at the path's end.
    fn push(&mut self, mirror: &EntryMirror, position: usize) {
        let at = self.positions.len();
        self.positions.push(position);
        if !mirror.is_message(position) {
            self.others.push(at);
        }
        if mirror.is_compaction(position) {
            self.compactions.push(at);
            self.context_start.set(None);
        }
    }
}

/// The session as the shim last reported it, and the way back to the shim.
#[derive(Debug)]
pub struct BridgeHost<'io> {
    channel: Channel<'io>,
    api_level: PiApiLevel,
    pi_version: String,
    session_id: String,
    header: Option<SessionHeader>,
    /// Pi's entries: those on disk when the mirror started read lazily,
    /// with an id table kept as they change, so that an event's branch
    /// walks neither decode nor hash every entry again.
    mirror: EntryMirror,
    /// The leaf's path the last time it was walked, with what the window
    /// rules and the projection read of it: an event's many branch walks,
    /// and the next event's after a few appends, start from it instead of
    /// hashing every id on the way. Cleared whenever a kept path may no
    /// longer hold (the mirror rebuilt or cut, an id reused).
    leaf_path: RefCell<LeafPath>,
    leaf_id: Option<String>,
    cwd: PathBuf,
    session_file: Option<PathBuf>,
    idle: bool,
    pending_messages: bool,
    signal_aborted: bool,
    context_usage: Option<ContextUsage>,
    /// The state left the usage to the sidecar (`usageLocal`).
    usage_local: bool,
    model: Option<ModelInfo>,
    settings: Result<HostSettings, String>,
    project_trusted: bool,
    next_action: u32,
    /// How long an action's answer is waited for.
    action_timeout: Duration,
    /// Set when the pipe broke during an action: the serve loop stops.
    broken: Option<String>,
    /// Set when an action of the current event went unanswered: the event
    /// fails, and no further action of it is sent.
    timed_out: Option<String>,
    /// The action whose answer stopped being waited for: its answer, should
    /// it still come, is no surprise.
    late_action: Option<u32>,
    /// What the projection reads is still to be decoded ahead, between
    /// events ([`Self::warm`]): set when the mirror reads the session file.
    warming: bool,
    /// Where the session file's index is kept for the next sidecar.
    kept: Option<KeptIndexes>,
    /// The mirror read the session file and its index is worth keeping:
    /// saved once nothing else is left to do ([`Self::warm`]).
    keep_pending: bool,
}

impl<'io> BridgeHost<'io> {
    pub(crate) fn new(
        channel: Channel<'io>,
        api_level: PiApiLevel,
        pi_version: String,
        action_timeout: Duration,
    ) -> Self {
        Self {
            channel,
            api_level,
            pi_version,
            session_id: String::new(),
            header: None,
            mirror: EntryMirror::default(),
            leaf_path: RefCell::new(LeafPath::default()),
            leaf_id: None,
            cwd: PathBuf::new(),
            session_file: None,
            idle: true,
            pending_messages: false,
            signal_aborted: false,
            context_usage: None,
            usage_local: false,
            model: None,
            settings: Ok(HostSettings::default()),
            project_trusted: false,
            next_action: 0,
            action_timeout,
            broken: None,
            timed_out: None,
            late_action: None,
            warming: false,
            kept: None,
            keep_pending: false,
        }
    }

    /// Keeps the index of each session file the mirror reads under
    /// `cache_dir` (core's `BootCaches::dir`), so that the next sidecar
    /// reads only what Pi appended since (see `kept.rs`).
    pub(crate) fn keeping_indexes(mut self, cache_dir: Option<&Path>) -> Self {
        self.kept = cache_dir.map(KeptIndexes::new);
        self
    }

    pub(crate) fn channel(&mut self) -> &mut Channel<'io> {
        &mut self.channel
    }

    pub(crate) fn broken(&self) -> Option<&str> {
        self.broken.as_deref()
    }

    /// Why the event just handled must fail (an action went unanswered);
    /// cleared for the next event.
    pub(crate) fn take_timed_out(&mut self) -> Option<String> {
        self.timed_out.take()
    }

    /// Takes the answer to an action that was given up on, if `result` is
    /// one: its state is still the session's, so the mirror follows it.
    pub(crate) fn take_late_answer(&mut self, result: &ActionResult) -> bool {
        if self.late_action != Some(result.id) {
            return false;
        }
        self.late_action = None;
        // A mirror that cannot follow fails the next event with the reason.
        let _ = self.apply_state(result.state.clone());
        true
    }

    /// Updates the mirror from the shim's report, and when the session file
    /// does not hold the entries the report leaves to it, asks the shim for
    /// every entry (`resendEntries`) and takes its answer instead.
    pub(crate) fn sync(&mut self, state: SessionState) -> Result<(), BridgeError> {
        match self.apply_state(state) {
            Err(BridgeError::Resync(_)) => self
                .perform(Action::ResendEntries(AbortArgs {}))
                .map_err(|error| BridgeError::Decode(error.to_string())),
            other => other,
        }
    }

    /// Updates the mirror from the shim's report. Entries are appended from
    /// `entriesFrom`; a new session id or `entriesFrom: 0` starts over. The
    /// entries before `entriesFrom` that the report leaves to the session
    /// file (`onDisk`) are read from it, unless the mirror already holds
    /// them; a file that does not hold them is [`BridgeError::Resync`],
    /// the mirror left as it was.
    pub(crate) fn apply_state(&mut self, state: SessionState) -> Result<(), BridgeError> {
        let from = state.entries_from as usize;
        let same_session = state.session_id == self.session_id;
        if let Some(on_disk) = &state.on_disk {
            let count = on_disk.count as usize;
            let held = same_session
                && self.mirror.len() >= count
                && count > 0
                && self.mirror.id(count - 1) == on_disk.last_id
                && ids_hash(self.mirror.ids(count)) == on_disk.ids_hash;
            if !held {
                let kept = self
                    .kept
                    .as_mut()
                    .and_then(|kept| kept.load(&state.session_id));
                let read = read_on_disk(
                    state.session_file.as_deref(),
                    &state.session_id,
                    on_disk,
                    kept.as_deref(),
                )?;
                self.keep_pending = self.kept.as_ref().is_some_and(|kept| {
                    read.disk()
                        .is_some_and(|session| kept.worth_saving(session))
                });
                self.mirror = read;
                self.leaf_path.get_mut().clear();
                self.warming = true;
            }
            if from < count {
                return Err(BridgeError::Resync(format!(
                    "the shim sent entries from {from}, before the {count} it left to the session file"
                )));
            }
        } else if !same_session || from == 0 {
            self.mirror = EntryMirror::default();
            self.leaf_path.get_mut().clear();
        }
        // The entries kept from the session file must still be there.
        self.mirror
            .check()
            .map_err(|why| BridgeError::Resync(shown(&why)))?;
        if from > self.mirror.len() {
            return Err(BridgeError::Resync(format!(
                "the shim sent entries from {from} but the mirror holds {}",
                self.mirror.len()
            )));
        }
        if self.mirror.truncate(from) {
            self.leaf_path.get_mut().clear();
        }
        let mut decoded = Ok(());
        for value in state.entries {
            match serde_json::from_value(value) {
                // A later duplicate id wins, as in Pi's `byId`; an id that
                // now names another entry may break a kept path.
                Ok(entry) => {
                    if self.mirror.push(entry) {
                        self.leaf_path.get_mut().clear();
                    }
                }
                Err(error) => {
                    decoded = Err(BridgeError::Decode(format!(
                        "an entry: {}",
                        shown(&error.to_string())
                    )));
                    break;
                }
            }
        }
        decoded?;
        self.session_id = state.session_id;
        self.header = serde_json::from_value(state.header).ok();
        self.leaf_id = state.leaf_id;
        self.cwd = PathBuf::from(state.cwd);
        self.session_file = state.session_file.map(PathBuf::from);
        self.idle = state.idle;
        self.pending_messages = state.pending_messages;
        self.signal_aborted = state.signal_aborted;
        self.usage_local = state.usage_local;
        self.context_usage = state
            .context_usage
            .and_then(|value| serde_json::from_value(value).ok());
        self.model = state
            .model
            .and_then(|value| serde_json::from_value(value).ok());
        self.settings = match state.settings.error {
            Some(error) => Err(error),
            None => Ok(HostSettings {
                global: state.settings.global,
                project: state.settings.project,
                compaction: state
                    .settings
                    .compaction
                    .and_then(|value| serde_json::from_value::<CompactionSettings>(value).ok())
                    .unwrap_or_default(),
            }),
        };
        self.project_trusted = state.project_trusted;
        Ok(())
    }

    fn parent_position(&self, position: usize) -> Option<usize> {
        self.mirror.parent_position(position)
    }

    /// The same, keeping the index of a session of any size.
    #[cfg(test)]
    pub(crate) fn keeping_every_index(mut self) -> Self {
        self.kept = self.kept.map(KeptIndexes::keeping_every_size);
        self
    }

    /// How many of the mirror's entries were restored from a kept index.
    #[cfg(test)]
    pub(crate) fn restored(&self) -> usize {
        self.mirror.disk().map_or(0, LazySession::restored)
    }

    /// The mirror's ids in order, read without decoding an entry.
    #[cfg(test)]
    pub(crate) fn ids(&self) -> Vec<String> {
        self.mirror
            .ids(self.mirror.len())
            .map(str::to_owned)
            .collect()
    }

    /// How many entries read from the session file have been decoded.
    #[cfg(test)]
    pub(crate) fn decoded(&self) -> usize {
        self.mirror.decoded()
    }

    /// The positions from the root to the entry `from` names (default: the
    /// leaf); empty when no entry has that id.
    fn branch_positions(&self, from: Option<&str>) -> Vec<usize> {
        let Some(id) = from.or(self.leaf_id()) else {
            return Vec::new();
        };
        let Some(start) = self.mirror.position_of(id) else {
            return Vec::new();
        };
        if self.leaf_id() == Some(id) {
            self.leaf_path(start).positions.clone()
        } else {
            self.path_to(start)
        }
    }

    /// The positions `build_projection` reads, in path order.
    fn projection_positions(&self) -> Vec<usize> {
        // `buildSessionPath`: no leaf, no path; an unknown leaf id is the
        // last entry's path.
        let Some(leaf) = self.leaf_id() else {
            return Vec::new();
        };
        let start = match self.mirror.position_of(leaf) {
            Some(start) => start,
            None => match self.mirror.len().checked_sub(1) {
                Some(last) => last,
                None => return Vec::new(),
            },
        };
        let leaf = self.leaf_path(start);
        let positions = &leaf.positions;
        let from = self.context_start(&leaf);
        let assistant_before = positions[..from].iter().rposition(|&position| {
            self.mirror.is_message(position)
                && matches!(
                    self.mirror.entry(position),
                    Entry::Message(message) if matches!(message.message, AgentMessage::Assistant(_))
                )
        });
        // In path order: the entries before `from` that are not messages,
        // with that assistant message among them, then every entry from
        // `from` on.
        let mut needed = Vec::with_capacity(leaf.others.len() + positions.len() - from + 1);
        let mut assistant = assistant_before;
        for &at in leaf.others.iter().take_while(|&&at| at < from) {
            if let Some(before) = assistant.filter(|&before| before < at) {
                needed.push(positions[before]);
                assistant = None;
            }
            needed.push(positions[at]);
        }
        needed.extend(assistant.map(|before| positions[before]));
        needed.extend_from_slice(&positions[from..]);
        needed
    }

    /// From now on, decode ahead what the projection reads ([`Self::warm`]),
    /// as after the mirror read the session file.
    #[cfg(test)]
    pub(crate) fn start_warming(&mut self) {
        self.warming = true;
    }

    /// Once the mirror has read the session file (a `session_start` that
    /// resumes a session, or any event that starts the mirror over), decodes
    /// ahead what a request's projection reads when the leaf's window is a
    /// reset window (the budget estimates over its projection at every
    /// request; outside one, Pi's usage is read from the end and the
    /// projection is seldom built), a batch at a time on this thread, while
    /// no line waits: Pi prepares its first request on its own thread
    /// meanwhile. A line that arrives pauses it until that event is
    /// answered (the event decodes what it needs itself); it ends when
    /// everything is decoded.
    pub(crate) fn warm(&mut self) {
        /// Under the count `LazySession` decodes on several threads.
        const BATCH: usize = 128;
        const _: () = assert!(BATCH < crate::session::PARALLEL_MIN);
        if self.channel.is_waiting() {
            return;
        }
        if self.warming && reset_markers(&self.window_branch(None)).is_empty() {
            self.warming = false;
        }
        if self.warming {
            let needed = self.mirror.undecoded(self.projection_positions());
            for batch in needed.chunks(BATCH) {
                if self.channel.is_waiting() {
                    return;
                }
                self.mirror.prefetch(batch);
            }
            self.warming = false;
        }
        self.keep_index();
    }

    /// Saves the session file's index for the next sidecar when the mirror
    /// read the file since the last save and the index is worth keeping:
    /// once nothing else is left to do ([`Self::warm`]), or as the sidecar
    /// ends.
    pub(crate) fn keep_index(&mut self) {
        if std::mem::take(&mut self.keep_pending)
            && let (Some(kept), Some(disk)) = (&mut self.kept, self.mirror.disk())
        {
            kept.save(&self.session_id, disk);
        }
    }

    /// [`Self::branch_positions`], with the branch's entries that are not
    /// messages decoded ahead in one pass (its messages are left to decode
    /// when read).
    fn branch_positions_prefetched(&self, from: Option<&str>) -> Vec<usize> {
        let positions = self.branch_positions(from);
        let needed: Vec<usize> = positions
            .iter()
            .copied()
            .filter(|&position| !self.mirror.is_message(position))
            .collect();
        self.mirror.prefetch(&needed);
        positions
    }

    /// The path from the root to the entry at `start`, the leaf's: the kept
    /// path when the leaf has not moved, the kept path extended when the
    /// leaf descends from its tip within a few steps (the usual append),
    /// else walked afresh.
    fn leaf_path(&self, start: usize) -> Ref<'_, LeafPath> {
        {
            let mut kept = self.leaf_path.borrow_mut();
            if kept.tip != Some(start) {
                match kept.tip.and_then(|tip| self.walk_to(start, tip)) {
                    Some(fresh) => {
                        for &position in fresh.iter().rev() {
                            kept.push(&self.mirror, position);
                        }
                    }
                    None => {
                        kept.clear();
                        for position in self.walk(start) {
                            kept.push(&self.mirror, position);
                        }
                    }
                }
                kept.tip = Some(start);
            }
        }
        self.leaf_path.borrow()
    }

    /// The positions from the root to the entry at `start`, root first, as
    /// `EntryIndex::branch` walks them, for an entry that is not the leaf:
    /// a walk that reaches the kept leaf path within a few steps extends it.
    fn path_to(&self, start: usize) -> Vec<usize> {
        {
            let kept = self.leaf_path.borrow();
            if let Some(tip) = kept.tip {
                if tip == start {
                    return kept.positions.clone();
                }
                if let Some(fresh) = self.walk_to(start, tip) {
                    let mut whole = kept.positions.clone();
                    whole.extend(fresh.iter().rev());
                    return whole;
                }
            }
        }
        self.walk(start)
    }

    /// The entries from `start` up to, not including, `tip`, `start` first,
    /// when `tip` is an ancestor of `start` a few steps up; `None` when it
    /// is not (or the walk meets a cycle first).
    fn walk_to(&self, start: usize, tip: usize) -> Option<Vec<usize>> {
        const STEPS: usize = 64;
        let mut fresh = vec![start];
        let mut current = start;
        while fresh.len() <= STEPS {
            match self.parent_position(current) {
                Some(parent) if parent == tip => return Some(fresh),
                Some(parent) if !fresh.contains(&parent) => {
                    fresh.push(parent);
                    current = parent;
                }
                _ => return None,
            }
        }
        None
    }

    /// The positions from the root to the entry at `start`, root first, as
    /// `EntryIndex::branch` walks them (a cycle ends the walk before the
    /// first repeated entry).
    fn walk(&self, start: usize) -> Vec<usize> {
        let mut visited = vec![false; self.mirror.len()];
        visited[start] = true;
        let mut walked = vec![start];
        let mut current = start;
        while let Some(parent) = self.parent_position(current) {
            if std::mem::replace(&mut visited[parent], true) {
                break;
            }
            walked.push(parent);
            current = parent;
        }
        walked.reverse();
        walked
    }

    /// Where on the leaf's path the messages the context can use begin: the
    /// newest compaction's first kept entry (the compaction itself when it
    /// keeps none), or the start. Found once per path and newest compaction.
    /// Pi's usage tokens read from the leaf back to the newest usable
    /// usage after the newest compaction, no projection built (a resumed
    /// session's first request would decode its whole context for it):
    /// `coding_agent::usage_from_the_end`, on a branch with no
    /// `context_edit`. `None` when the answer does not lie there.
    fn usage_from_the_end(&self) -> Option<Option<u64>> {
        let start = self.mirror.position_of(self.leaf_id()?)?;
        let leaf = self.leaf_path(start);
        let positions = &leaf.positions;
        let edited = leaf.others.iter().any(|&at| {
            matches!(
                self.mirror.window_entry(positions[at]),
                Entry::ContextEdit(_)
            )
        });
        if edited {
            return None;
        }
        let newest = leaf.compactions.iter().rev().copied().find(|&at| {
            matches!(
                self.mirror.window_entry(positions[at]),
                Entry::Compaction(_)
            )
        });
        let tail = positions[newest.map_or(0, |at| at + 1)..]
            .iter()
            .rev()
            .map(|&position| (self.mirror.id(position), self.mirror.entry(position)));
        let compaction_id = newest.map(|at| self.mirror.id(positions[at]));
        coding_agent::usage_from_the_end(tail, compaction_id)
    }

    fn context_start(&self, leaf: &LeafPath) -> usize {
        if let Some(from) = leaf.context_start.get() {
            return from;
        }
        let from = self.context_start_on(&leaf.positions, leaf.compactions.last().copied());
        leaf.context_start.set(Some(from));
        from
    }

    /// [`Self::context_start`] on `positions`, whose newest entry of type
    /// `compaction` is at `newest`.
    fn context_start_on(&self, positions: &[usize], newest: Option<usize>) -> usize {
        let Some(at) = newest else {
            return 0;
        };
        let Entry::Compaction(compaction) = self.mirror.entry(positions[at]) else {
            // A malformed compaction is no compaction: keep everything.
            return 0;
        };
        positions[..at]
            .iter()
            .position(|&position| self.mirror.id(position) == compaction.first_kept_entry_id)
            .unwrap_or(at)
    }

    /// Sends `action` and waits for its answer, whose state replaces the
    /// mirror. Nothing else may arrive in between: the shim answers an action
    /// before it does anything else for this handler.
    fn perform(&mut self, action: Action) -> Result<(), HostError> {
        if let Some(why) = self.broken.as_ref().or(self.timed_out.as_ref()) {
            return Err(HostError::Rejected {
                message: why.clone(),
            });
        }
        self.next_action = self.next_action.wrapping_add(1);
        let id = self.next_action;
        match self.round_trip(id, action) {
            Ok(None) => Ok(()),
            Ok(Some(error)) => Err(HostError::Rejected {
                message: shown(&error),
            }),
            Err(error @ BridgeError::ActionTimedOut { .. }) => {
                let message = error.to_string();
                self.timed_out = Some(message.clone());
                self.late_action = Some(id);
                Err(HostError::Rejected { message })
            }
            Err(error) => {
                let message = error.to_string();
                self.broken = Some(message.clone());
                Err(HostError::Rejected { message })
            }
        }
    }

    /// Sends `action` and waits, at most the action timeout, for its answer.
    fn round_trip(&mut self, id: u32, action: Action) -> Result<Option<String>, BridgeError> {
        let name = action.name();
        self.channel
            .send(&SidecarMessage::Action(ActionRequest { id, action }))?;
        let deadline = Instant::now() + self.action_timeout;
        match self.channel.receive(Some(deadline))? {
            Received::Message(message) => match *message {
                ShimMessage::ActionResult(result) if result.id == id => {
                    // The answer to `resendEntries` carries every entry, so
                    // a file that lets the mirror down is asked about once.
                    match self.apply_state(result.state) {
                        Err(BridgeError::Resync(_)) if name != "resendEntries" => {
                            self.next_action = self.next_action.wrapping_add(1);
                            let resend = self.next_action;
                            if let Some(error) =
                                self.round_trip(resend, Action::ResendEntries(AbortArgs {}))?
                            {
                                return Err(BridgeError::Decode(shown(&error)));
                            }
                        }
                        other => other?,
                    }
                    Ok(result.error)
                }
                other => Err(BridgeError::Decode(format!(
                    "expected actionResult {id}, got {}",
                    kind(&other)
                ))),
            },
            Received::Unreadable { why, .. } => Err(BridgeError::Decode(format!(
                "expected actionResult {id}, got {why}"
            ))),
            Received::Closed => Err(BridgeError::Closed),
            Received::TimedOut => Err(BridgeError::ActionTimedOut {
                id,
                action: name,
                waited: self.action_timeout,
            }),
        }
    }
}

/// The first `on_disk.count` entries of the session file at `file`, once
/// checked to be the ones Pi holds: the header names `session_id`, the
/// file holds at least that many entries, the last of them has Pi's id and
/// their ids hash to Pi's. They are only indexed here: each is decoded when
/// a handler reads it.
/// Pi appends each entry to the file as it adds it, once the session has a
/// conversation (docs/pi.md, "When Pi writes the session file"), so a file
/// that fails a check was edited, truncated or not yet written.
fn read_on_disk(
    file: Option<&str>,
    session_id: &str,
    on_disk: &OnDisk,
    kept: Option<&[u8]>,
) -> Result<EntryMirror, BridgeError> {
    let count = on_disk.count as usize;
    let file = file.ok_or_else(|| BridgeError::Resync("no session file".to_owned()))?;
    let read = |kept| {
        LazySession::read_kept(Path::new(file), kept)
            .map_err(|error| BridgeError::Resync(shown(&error.to_string())))
    };
    let check = |session: &LazySession| {
        if session.header().map(|header| header.id.as_str()) != Some(session_id) {
            return Err(BridgeError::Resync(
                "the session file's header names another session".to_owned(),
            ));
        }
        if count == 0
            || session.len() < count
            || session.id(count - 1) != on_disk.last_id
            || ids_hash((0..count).map(|position| session.id(position))) != on_disk.ids_hash
        {
            return Err(BridgeError::Resync(format!(
                "the session file does not hold Pi's first {count} entries"
            )));
        }
        Ok(())
    };
    let mut session = read(kept)?;
    // A kept index that does not give Pi's entries is passed over.
    if session.restored() > 0 && check(&session).is_err() {
        session = read(None)?;
    }
    check(&session)?;
    Ok(EntryMirror::from_disk(session, count))
}

fn to_value<T: serde::Serialize>(value: &T) -> Result<Value, HostError> {
    serde_json::to_value(value).map_err(|error| HostError::Rejected {
        message: error.to_string(),
    })
}

impl PiHost for BridgeHost<'_> {
    fn api_level(&self) -> PiApiLevel {
        self.api_level
    }

    fn pi_version(&self) -> &str {
        &self.pi_version
    }

    fn append_entry(
        &mut self,
        custom_type: &str,
        data: Option<Value>,
    ) -> Result<String, HostError> {
        self.perform(Action::AppendEntry(AppendEntryArgs {
            custom_type: custom_type.to_owned(),
            data,
        }))?;
        // Pi's appendEntry returns nothing; the new entry becomes the leaf.
        self.leaf_id.clone().ok_or_else(|| HostError::Rejected {
            message: "appendEntry left no leaf".to_owned(),
        })
    }

    fn send_message(
        &mut self,
        message: CustomMessageDraft,
        options: SendOptions,
    ) -> Result<(), HostError> {
        let message = to_value(&message)?;
        let options = to_value(&options)?;
        self.perform(Action::SendMessage(SendMessageArgs { message, options }))
    }

    fn notify(&mut self, message: &str, level: NotifyLevel) {
        let level = match level {
            NotifyLevel::Info => "info",
            NotifyLevel::Warning => "warning",
            NotifyLevel::Error => "error",
        };
        // A notice that cannot be shown is lost with the pipe; the serve loop
        // reports the broken pipe itself.
        let _ = self.perform(Action::Notify(NotifyArgs {
            message: message.to_owned(),
            level: level.to_owned(),
        }));
    }

    fn abort(&mut self) {
        let _ = self.perform(Action::Abort(AbortArgs {}));
    }

    fn is_idle(&self) -> bool {
        self.idle
    }

    fn signal_aborted(&self) -> bool {
        self.signal_aborted
    }

    fn has_pending_messages(&self) -> bool {
        self.pending_messages
    }

    /// Pi's value when the state carries it; computed from the mirror, as
    /// Pi 1.6.0's `getContextUsage()` does, when the shim left it out for
    /// the sidecar (`usageLocal`).
    fn context_usage(&self) -> Option<ContextUsage> {
        if !self.usage_local {
            return self.context_usage;
        }
        let context_window = self.model.as_ref()?.context_window;
        if context_window == 0 {
            return None;
        }
        let usage = |tokens: Option<u64>| ContextUsage {
            tokens,
            context_window,
            percent: tokens.map(|tokens| tokens as f64 / context_window as f64 * 100.0),
        };
        if let Some(tokens) = self.usage_from_the_end() {
            return Some(usage(tokens));
        }
        let projection = self.build_projection();
        // Ids and types only: a message on the branch is not decoded for it
        // (the projection has decoded every other entry).
        let leaf = self
            .leaf_id()
            .and_then(|id| self.mirror.position_of(id))
            .map(|start| self.leaf_path(start));
        let (positions, compactions): (&[usize], &[usize]) = match &leaf {
            Some(leaf) => (&leaf.positions, &leaf.compactions),
            None => (&[], &[]),
        };
        // From the newest compaction on: Pi's computation reads nothing
        // before it (the compaction is found by its id, and an id stands
        // once on a branch, which Pi walks through its id map), so the
        // steps before it are never turned into ids.
        let newest_compaction = compactions
            .iter()
            .rev()
            .copied()
            .find(|&at| {
                matches!(
                    self.mirror.window_entry(positions[at]),
                    Entry::Compaction(_)
                )
            })
            .unwrap_or(0);
        let branch: Vec<BranchStep<'_>> = positions[newest_compaction..]
            .iter()
            .map(|&position| {
                let entry = self.mirror.window_entry(position);
                BranchStep {
                    id: self.mirror.id(position),
                    compaction: matches!(entry, Entry::Compaction(_)),
                    context_edit: matches!(entry, Entry::ContextEdit(_)),
                }
            })
            .collect();
        Some(usage(coding_agent::context_usage_tokens(
            &projection,
            &branch,
        )))
    }

    fn model(&self) -> Option<ModelInfo> {
        self.model.clone()
    }

    fn settings(&self) -> Result<HostSettings, HostError> {
        self.settings
            .clone()
            .map_err(|message| HostError::Rejected { message })
    }

    fn is_project_trusted(&self) -> bool {
        self.project_trusted
    }

    fn session_id(&self) -> &str {
        &self.session_id
    }

    fn header(&self) -> Option<&SessionHeader> {
        self.header.as_ref()
    }

    fn cwd(&self) -> &Path {
        &self.cwd
    }

    fn session_file(&self) -> Option<&Path> {
        self.session_file.as_deref()
    }

    fn entries(&self) -> Vec<&Entry> {
        self.mirror.all()
    }

    fn entry(&self, id: &str) -> Option<&Entry> {
        self.mirror
            .position_of(id)
            .map(|position| self.mirror.entry(position))
    }

    fn branch(&self, from: Option<&str>) -> Vec<&Entry> {
        let positions = self.branch_positions(from);
        self.mirror.prefetch(&positions);
        positions
            .into_iter()
            .map(|position| self.mirror.entry(position))
            .collect()
    }

    /// Only the branch's entries that are not messages are decoded. The
    /// leaf's branch is built from its kept path: the stand-in everywhere,
    /// then the entries that are not messages in their places.
    fn window_branch(&self, from: Option<&str>) -> Vec<&Entry> {
        let Some(id) = from.or(self.leaf_id()) else {
            return Vec::new();
        };
        let Some(start) = self.mirror.position_of(id) else {
            return Vec::new();
        };
        if self.leaf_id() != Some(id) {
            return self
                .branch_positions_prefetched(from)
                .into_iter()
                .map(|position| self.mirror.window_entry(position))
                .collect();
        }
        let leaf = self.leaf_path(start);
        let others: Vec<usize> = leaf.others.iter().map(|&at| leaf.positions[at]).collect();
        self.mirror.prefetch(&others);
        let mut branch = vec![self.mirror.stand_in(); leaf.positions.len()];
        for (&at, &position) in leaf.others.iter().zip(&others) {
            branch[at] = self.mirror.entry(position);
        }
        branch
    }

    /// Decodes what the projection reads, as `LazySession::context_path`
    /// does: every entry on the path that is not a message, the messages
    /// from the newest compaction's first kept entry on, and the newest
    /// assistant message before them (the model).
    fn build_projection(&self) -> Projection<'_> {
        let needed = self.projection_positions();
        self.mirror.prefetch(&needed);
        let path: Vec<&Entry> = needed
            .into_iter()
            .map(|position| self.mirror.entry(position))
            .collect();
        project_path(&path)
    }

    fn leaf_id(&self) -> Option<&str> {
        self.leaf_id.as_deref()
    }
}
