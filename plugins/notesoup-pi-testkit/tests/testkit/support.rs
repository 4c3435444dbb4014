//! Scenes for the scripted-loop tests: notesoup on the reference host in a
//! temporary directory, with a deterministic clock, entry ids and window ids.

use std::path::{Path, PathBuf};

use notesoup_pi::extension::{Notesoup, NotesoupConfig};
use notesoup_pi::host::{NotifyLevel, PiApiLevel, SessionStartReason};
use notesoup_pi::session::{AgentMessage, Entry, SessionFile};
use notesoup_pi_testkit::{
    Clock, Harness, HostEvent, HostState, IdSource, ScriptedModel, SessionManager, Step,
    entry_kind, message_text,
};
use tempfile::TempDir;

pub const SESSION_ID: &str = "0195f000-0000-7000-8000-00000000abcd";
pub const ROOT: &str = "pcw:0195f000:root";
pub const START: &str = "2026-03-01T09:00:00.000Z";

/// The head of every request in a fresh window, as [`Scene::request`]
/// shows it: the system prompt, the empty summary, the boot and the
/// continuation.
pub const FRESH_WINDOW: [&str; 4] = [
    "system: You are a coding agent running in the notesoup reference hos…",
    "user: The conversation history before this point was compacted int…",
    "user: <context_window>⏎Agent name: tester (brain: scripted-1)⏎Firs…",
    "user: You wake up blank, puffy-eyed, and clearly robbed. Your memo…",
];

/// Window ids minted in order: `pcw:0195f000:00000001`, …
pub fn window(n: u32) -> String {
    format!("pcw:0195f000:{n:08x}")
}

pub struct Scene {
    pub dir: TempDir,
    pub harness: Harness<Notesoup>,
}

impl Scene {
    /// A started session with a model of `context_window` tokens.
    pub fn new(context_window: u64) -> Self {
        let mut scene = Self::unstarted(context_window);
        scene.harness.start(SessionStartReason::Startup);
        scene
    }

    /// A started session whose model of `context_window` tokens answers
    /// with `steps`, in order.
    pub fn scripted(context_window: u64, steps: impl IntoIterator<Item = Step>) -> Self {
        let mut scene = Self::new(context_window);
        for step in steps {
            scene.model().push(step);
        }
        scene
    }

    /// A started session of 200000 tokens that answered "First." with
    /// "First answer." and then wiped its memory on "Wipe." (the fresh
    /// window answering "Fresh."), its model scripted with `then` after;
    /// with the leaf of the first answer.
    pub fn wiped_once(then: impl IntoIterator<Item = Step>) -> (Self, String) {
        let mut scene = Self::scripted(
            200_000,
            [
                Step::text("First answer."),
                Step::tool("wipe_memory", serde_json::json!({})),
                Step::text("Fresh."),
            ]
            .into_iter()
            .chain(then),
        );
        scene.harness.prompt("First.");
        let first_answer = scene.leaf();
        scene.harness.prompt("Wipe.");
        (scene, first_answer)
    }

    /// A session whose `session_start` has not run yet.
    pub fn unstarted(context_window: u64) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().join("project");
        let sessions = dir.path().join("sessions");
        std::fs::create_dir_all(&cwd).unwrap();
        std::fs::create_dir_all(&sessions).unwrap();
        let session = SessionManager::create(
            &sessions,
            &cwd,
            SESSION_ID,
            Clock::stepping_from(START),
            IdSource::sequential(),
        );
        let host = HostState::new(session, None, &cwd);
        let harness = Harness::new(
            host,
            extension(dir.path()),
            ScriptedModel::new(context_window),
        );
        Self { dir, harness }
    }

    /// A session opened from `bytes` written as its file (not started).
    pub fn from_file(bytes: &[u8], context_window: u64) -> Self {
        let mut scene = Self::unstarted(context_window);
        let path = scene.dir.path().join("sessions").join("opened.jsonl");
        std::fs::write(&path, bytes).unwrap();
        scene.harness.host.session = SessionManager::open(
            &path,
            Clock::stepping_from("2026-03-05T09:00:00.000Z"),
            IdSource::sequential(),
        )
        .unwrap();
        scene
    }

    /// A session resumed from `bytes` written as its file, after checking
    /// that resuming left the file byte for byte as it was (`why` says why
    /// nothing needed a repair).
    #[track_caller]
    pub fn resumed_unchanged(bytes: &[u8], context_window: u64, why: &str) -> Self {
        let mut scene = Self::from_file(bytes, context_window);
        scene.harness.start(SessionStartReason::Resume);
        assert_eq!(std::fs::read(scene.session_file()).unwrap(), bytes, "{why}");
        scene
    }

    /// The model answers the next prompt with `reply`; then the user sends
    /// `prompt`.
    pub fn answer_with(&mut self, reply: &str, prompt: &str) {
        self.model().push(Step::text(reply));
        self.harness.prompt(prompt);
    }

    /// The user sends each of `prompts` in turn.
    pub fn prompt_each(&mut self, prompts: &[&str]) {
        for prompt in prompts {
            self.harness.prompt(prompt);
        }
    }

    /// The session's leaf id.
    pub fn leaf(&self) -> String {
        self.harness.host.session.leaf_id().unwrap().to_owned()
    }

    pub fn notes_home(&self) -> PathBuf {
        self.dir.path().join("notes")
    }

    pub fn model(&mut self) -> &mut ScriptedModel {
        &mut self.harness.model
    }

    /// The kinds of the branch's entries, root first.
    pub fn branch_kinds(&self) -> Vec<String> {
        self.harness
            .host
            .session
            .branch()
            .into_iter()
            .map(entry_kind)
            .collect()
    }

    /// How many custom messages of `custom_type` the branch holds.
    pub fn on_branch(&self, custom_type: &str) -> usize {
        let kind = format!("custom_message:{custom_type}");
        self.branch_kinds().iter().filter(|k| **k == kind).count()
    }

    /// The kinds of the last `count` entries of the branch.
    pub fn branch_tail(&self, count: usize) -> Vec<String> {
        let kinds = self.branch_kinds();
        kinds[kinds.len().saturating_sub(count)..].to_vec()
    }

    /// The text of every tool result in the session, in order.
    pub fn tool_results(&self) -> Vec<String> {
        self.harness
            .host
            .session
            .entries()
            .iter()
            .filter_map(|e| match e.message() {
                Some(m @ AgentMessage::ToolResult(_)) => Some(message_text(m)),
                _ => None,
            })
            .collect()
    }

    /// Turns Pi's automatic resets (its compaction setting) off.
    pub fn automatic_resets_off(&mut self) {
        if let Ok(settings) = &mut self.harness.host.settings {
            settings.compaction.enabled = false;
        }
    }

    /// Runs `act` on the harness; the kinds of the entries it appended.
    pub fn kinds_after(&mut self, act: impl FnOnce(&mut Harness<Notesoup>)) -> Vec<String> {
        let before = self.entry_count();
        act(&mut self.harness);
        self.kinds_since(before)
    }

    /// The kinds of every entry appended since `from` (an index into the
    /// session's entries).
    pub fn kinds_since(&self, from: usize) -> Vec<String> {
        self.harness.host.session.entries()[from..]
            .iter()
            .map(entry_kind)
            .collect()
    }

    pub fn entry_count(&self) -> usize {
        self.harness.host.session.entries().len()
    }

    /// Every notice text, in order.
    pub fn notices(&self) -> Vec<&str> {
        self.harness
            .host
            .notices
            .iter()
            .map(|n| n.text.as_str())
            .collect()
    }

    pub fn notices_at(&self, level: NotifyLevel) -> Vec<&str> {
        self.harness
            .host
            .notices
            .iter()
            .filter(|n| n.level == level)
            .map(|n| n.text.as_str())
            .collect()
    }

    /// The texts of the session's custom messages of `custom_type`, in file
    /// order (every branch).
    pub fn custom_message_texts(&self, custom_type: &str) -> Vec<String> {
        self.harness
            .host
            .session
            .entries()
            .iter()
            .filter_map(|e| match e {
                Entry::CustomMessage(c) if c.custom_type == custom_type => {
                    c.content.as_ref().map(|c| c.text(""))
                }
                _ => None,
            })
            .collect()
    }

    /// The reset markers' `(windowId, origin)` on the branch.
    pub fn markers(&self) -> Vec<(String, String)> {
        self.harness
            .host
            .session
            .branch()
            .into_iter()
            .filter_map(|entry| match entry {
                Entry::Custom(custom) if custom.custom_type == "notesoup/reset-marker" => {
                    let data = custom.data.as_ref()?;
                    Some((
                        data["windowId"].as_str()?.to_owned(),
                        data["origin"].as_str()?.to_owned(),
                    ))
                }
                _ => None,
            })
            .collect()
    }

    /// The provider request `index` (negative from the end) as lines
    /// `role: text` (text cut at 60 chars).
    pub fn request(&self, index: isize) -> Vec<String> {
        self.request_messages(index).iter().map(describe).collect()
    }

    /// The messages of request `index` (negative counts from the end).
    pub fn request_messages(&self, index: isize) -> &[AgentMessage] {
        let requests = &self.harness.host.requests;
        let at = if index < 0 {
            requests.len() as isize + index
        } else {
            index
        } as usize;
        &requests[at].messages
    }

    pub fn request_count(&self) -> usize {
        self.harness.host.requests.len()
    }

    pub fn session_file(&self) -> PathBuf {
        self.harness.host.session.file().unwrap().to_owned()
    }

    /// Reads the session file back.
    pub fn read_file(&self) -> SessionFile {
        SessionFile::read(&self.session_file()).unwrap()
    }

    /// Events of the log matching `pick`.
    pub fn events<T>(&self, pick: impl Fn(&HostEvent) -> Option<T>) -> Vec<T> {
        self.harness.host.log.iter().filter_map(pick).collect()
    }

    /// Settled events: `true` when aborted.
    pub fn settlements(&self) -> Vec<bool> {
        self.events(|e| match e {
            HostEvent::Settled { aborted } => Some(*aborted),
            _ => None,
        })
    }
}

/// notesoup with a notes home under `dir` and deterministic window ids.
pub fn extension(dir: &Path) -> Notesoup {
    let mut counter = 0u32;
    Notesoup::new(
        NotesoupConfig {
            notes_home: dir.join("notes"),
            agent: "tester".to_owned(),
        },
        PiApiLevel::V0_87,
    )
    .unwrap()
    .with_window_ids(move || {
        counter += 1;
        format!("{counter:08x}")
    })
}

/// `role: text` for a provider message; custom types are gone after
/// `convertToLlm`, so boots and continuations show by their first words.
pub fn describe(message: &AgentMessage) -> String {
    let text = message_text(message).replace('\n', "⏎");
    let mut short: String = text.chars().take(60).collect();
    if text.chars().count() > 60 {
        short.push('…');
    }
    let role = message.role();
    match message {
        AgentMessage::Assistant(assistant) => {
            let calls: Vec<String> = assistant
                .content
                .iter()
                .filter_map(|block| match block {
                    notesoup_pi::session::ContentBlock::ToolCall(call) => Some(call.name.clone()),
                    _ => None,
                })
                .collect();
            if calls.is_empty() {
                format!("{role}: {short}")
            } else {
                format!("{role}: {short} [{}]", calls.join(", "))
            }
        }
        AgentMessage::ToolResult(result) => format!("{role}({}): {short}", result.tool_name),
        _ => format!("{role}: {short}"),
    }
}
