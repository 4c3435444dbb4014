//! The plugin's own records under `${CLAUDE_PLUGIN_DATA}`: one small JSON
//! record per Claude session (hooks write it, the MCP server reads it), a
//! per-project pointer to the latest session, and the per-project hand-off
//! marker that carries a `/clear` chain into the next session.
//!
//! Layout:
//! ```text
//! sessions/<sessionId>.json          ClaudeSessionState
//! projects/<projectKey>/latest       the session id a hook last touched
//! projects/<projectKey>/handoff.json HandOff, written at SessionEnd(clear)
//! ```

use std::io;
use std::path::{Path, PathBuf};

use notesoup_core::plumbing::SmallFileError;
use serde::{Deserialize, Serialize};

use crate::files;
use crate::window::WindowId;

/// Why a state operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// A session id or project key that cannot name a file safely.
    #[error("unsafe {what} {value:?}: only letters, digits, '-', '_' and '.' are allowed")]
    UnsafeName {
        /// What the name is (`session id`, `project key`).
        what: &'static str,
        /// The offending value.
        value: String,
    },
    /// A filesystem error, with the path it happened on.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// A record that is not a regular file within its bound (a link, FIFO,
    /// device or directory under its name, or one far too large): not read.
    #[error("{0}")]
    Refused(SmallFileError),
    /// A record that is not the JSON this plugin writes.
    #[error("{path}: not a notesoup record: {source}")]
    Malformed {
        /// The file.
        path: PathBuf,
        /// The parse error.
        source: serde_json::Error,
    },
}

/// One earlier transcript of a `/clear` chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChainLink {
    /// The Claude session id of that transcript.
    pub session_id: String,
    /// Its JSONL file.
    pub transcript_path: PathBuf,
}

/// Per-window flags: each notice is delivered at most once per window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WindowFlags {
    /// A boot for this window was injected.
    pub boot_injected: bool,
    /// The budget reminder was delivered.
    pub reminder_shown: bool,
    /// The close-out warning was delivered (as context or as a Stop block).
    pub warning_shown: bool,
    /// The first Stop after the warning recorded the close-out.
    pub close_out_done: bool,
    /// The reset mod placed this window's boot in the conversation itself,
    /// so the SessionStart(`compact`) of its compaction adds no second one.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub boot_by_mod: bool,
    /// The reset mod opened this window and no prompt, tool batch or Stop
    /// has come since: the transcript may still end with the old window's
    /// usage, so no budget decision is taken from it yet.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub opened_by_mod: bool,
}

/// What a mod reset changed, kept until it is committed so a failed
/// compaction can give the window back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResetFrom {
    /// `previous_window_id` before the reset.
    pub previous_window_id: Option<String>,
    /// The flags of the window the reset left.
    pub window: WindowFlags,
}

/// Everything notesoup remembers about one Claude session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClaudeSessionState {
    /// The Claude session id.
    pub session_id: String,
    /// The session's transcript file.
    pub transcript_path: PathBuf,
    /// The session's working directory.
    pub cwd: PathBuf,
    /// The notes project key derived from `cwd`.
    pub project_key: String,
    /// The Claude session id of the chain's first window: the notes session.
    pub notes_session_id: String,
    /// The live window's ordinal in the chain.
    pub window_ordinal: u64,
    /// The window before the live one, when there is one.
    #[serde(default)]
    pub previous_window_id: Option<String>,
    /// Earlier transcripts of the `/clear` chain, oldest first.
    #[serde(default)]
    pub chain: Vec<ChainLink>,
    /// Flags of the live window.
    #[serde(default)]
    pub window: WindowFlags,
    /// A mod reset in flight (boot placed, compaction not yet committed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reset_from: Option<ResetFrom>,
    /// The human's prompt for the next window, from `/fresh-window
    /// <prompt>`, verbatim; placed after the next window's boot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_window_prompt: Option<String>,
}

impl ClaudeSessionState {
    /// The state of a session that starts a new chain (window 1).
    pub fn new_chain(
        session_id: &str,
        transcript_path: PathBuf,
        cwd: PathBuf,
        project_key: String,
    ) -> Self {
        Self {
            session_id: session_id.to_owned(),
            transcript_path,
            cwd,
            project_key,
            notes_session_id: session_id.to_owned(),
            window_ordinal: 1,
            previous_window_id: None,
            chain: Vec::new(),
            window: WindowFlags::default(),
            reset_from: None,
            next_window_prompt: None,
        }
    }

    /// The chain's root window.
    pub fn root_window(&self) -> WindowId {
        WindowId::new(self.notes_session_id.clone(), 1)
    }

    /// The live window.
    pub fn window_id(&self) -> WindowId {
        WindowId::new(self.session_id.clone(), self.window_ordinal)
    }

    /// Opens the next window of this session (after a compaction): the
    /// ordinal grows by one and every per-window flag starts clear.
    pub fn open_next_window(&mut self) {
        self.previous_window_id = Some(self.window_id().to_string());
        self.window_ordinal += 1;
        self.window = WindowFlags::default();
    }

    /// Every transcript of the chain, oldest first, this session's last.
    pub fn transcripts(&self) -> Vec<ChainLink> {
        let mut all = self.chain.clone();
        all.push(ChainLink {
            session_id: self.session_id.clone(),
            transcript_path: self.transcript_path.clone(),
        });
        all
    }
}

/// Where a hand-off came from (`"forced"` is reserved for a mod's
/// hard-reserve reset).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    /// A close-out followed by the user's `/clear`.
    Normal,
    /// A reset forced at the hard reserve.
    Forced,
}

/// The per-project marker SessionEnd(`clear`) leaves for the next
/// SessionStart(`clear`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HandOff {
    /// The chain's notes session id.
    pub notes_session_id: String,
    /// The Claude session that was cleared.
    pub previous_session_id: String,
    /// Its transcript.
    pub previous_transcript_path: PathBuf,
    /// The chain's root window id.
    pub root_window_id: String,
    /// The window that was live when the session was cleared.
    pub window_id: String,
    /// That window's ordinal.
    pub ordinal: u64,
    /// How the hand-off came about.
    pub origin: Origin,
    /// When SessionEnd wrote it (local ISO with offset).
    pub created_at: String,
    /// The prompt `/fresh-window <prompt>` left for the next window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
}

/// The plugin data directory and the records in it.
#[derive(Debug, Clone)]
pub struct StateDir {
    root: PathBuf,
}

impl StateDir {
    /// The records under `root` (`${CLAUDE_PLUGIN_DATA}`).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// The data directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn session_path(&self, session_id: &str) -> Result<PathBuf, StateError> {
        safe_name("session id", session_id)?;
        Ok(self
            .root
            .join("sessions")
            .join(format!("{session_id}.json")))
    }

    fn project_dir(&self, project_key: &str) -> Result<PathBuf, StateError> {
        Ok(self
            .root
            .join("projects")
            .join(project_dir_name(project_key)))
    }

    /// The state of `session_id`, if one was recorded.
    pub fn load(&self, session_id: &str) -> Result<Option<ClaudeSessionState>, StateError> {
        let path = self.session_path(session_id)?;
        read_json(&path)
    }

    /// Records `state` and marks it as the project's latest session.
    pub fn save(&self, state: &ClaudeSessionState) -> Result<(), StateError> {
        let path = self.session_path(&state.session_id)?;
        write_json(&path, state)?;
        let latest = self.project_dir(&state.project_key)?.join("latest");
        files::write_atomic(&latest, state.session_id.as_bytes()).map_err(|source| StateError::Io {
            path: latest,
            source,
        })
    }

    /// The session a hook of `project_key` last recorded.
    pub fn latest(&self, project_key: &str) -> Result<Option<ClaudeSessionState>, StateError> {
        let path = self.project_dir(project_key)?.join("latest");
        let Some(bytes) = files::read_record(&path).map_err(StateError::from)? else {
            return Ok(None);
        };
        let session_id = String::from_utf8_lossy(&bytes);
        self.load(session_id.trim())
    }

    /// Writes the project's hand-off marker, replacing an older one.
    pub fn put_hand_off(&self, project_key: &str, hand_off: &HandOff) -> Result<(), StateError> {
        write_json(&self.hand_off_path(project_key)?, hand_off)
    }

    /// Atomically takes the project's hand-off marker: of two takers, only
    /// one gets it.
    pub fn take_hand_off(&self, project_key: &str) -> Result<Option<HandOff>, StateError> {
        let path = self.hand_off_path(project_key)?;
        let Some(bytes) = files::take(&path).map_err(StateError::from)? else {
            return Ok(None);
        };
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|source| StateError::Malformed { path, source })
    }

    fn hand_off_path(&self, project_key: &str) -> Result<PathBuf, StateError> {
        Ok(self.project_dir(project_key)?.join("handoff.json"))
    }
}

/// The directory name of a project's records. A project key is the
/// project folder's name (any characters: spaces, accents, a newline) plus
/// `-<8 hex of the path's sha1>`, so characters outside the safe set become
/// `-` and a long name keeps its head and the hash: the name stays one safe
/// path segment, and the hash keeps projects apart.
fn project_dir_name(project_key: &str) -> String {
    const MAX: usize = 120;
    let safe: String = project_key
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .collect();
    // Only ASCII is left, so byte offsets are char offsets.
    let name = if safe.len() > MAX {
        format!("{}{}", &safe[..MAX - 9], &safe[safe.len() - 9..])
    } else {
        safe
    };
    match name.as_str() {
        "" | "." | ".." => format!("-{name}"),
        _ => name,
    }
}

fn safe_name(what: &'static str, value: &str) -> Result<(), StateError> {
    let ok = !value.is_empty()
        && value != "."
        && value != ".."
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(StateError::UnsafeName {
            what,
            value: value.chars().take(200).collect(),
        })
    }
}

impl From<SmallFileError> for StateError {
    fn from(error: SmallFileError) -> Self {
        match error {
            SmallFileError::Io { path, source } => Self::Io { path, source },
            refused => Self::Refused(refused),
        }
    }
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Option<T>, StateError> {
    let Some(bytes) = files::read_record(path)? else {
        return Ok(None);
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|source| StateError::Malformed {
            path: path.to_owned(),
            source,
        })
}

fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), StateError> {
    let bytes = serde_json::to_vec(value).map_err(|source| StateError::Malformed {
        path: path.to_owned(),
        source,
    })?;
    files::write_atomic(path, &bytes).map_err(|source| StateError::Io {
        path: path.to_owned(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(sid: &str, key: &str) -> ClaudeSessionState {
        ClaudeSessionState::new_chain(
            sid,
            PathBuf::from(format!("/t/{sid}.jsonl")),
            PathBuf::from("/w"),
            key.into(),
        )
    }

    /// A state store in a temp dir of its own (kept while it is held).
    fn store() -> (tempfile::TempDir, StateDir) {
        let dir = tempfile::tempdir().unwrap();
        let store = StateDir::new(dir.path());
        (dir, store)
    }

    #[test]
    fn states_round_trip_and_track_the_latest_session() {
        let (_dir, store) = store();
        assert_eq!(store.load("s1").unwrap(), None);
        assert!(store.latest("w-12345678").unwrap().is_none());
        let mut one = state("s1", "w-12345678");
        one.open_next_window();
        store.save(&one).unwrap();
        store.save(&state("s2", "w-12345678")).unwrap();
        assert_eq!(store.load("s1").unwrap(), Some(one.clone()));
        assert_eq!(
            store.latest("w-12345678").unwrap().unwrap().session_id,
            "s2"
        );
        assert_eq!(one.window_id().to_string(), "claude:s1:2");
        assert_eq!(one.previous_window_id.as_deref(), Some("claude:s1:1"));
        assert_eq!(one.root_window().to_string(), "claude:s1:1");
    }

    #[test]
    fn any_project_key_names_one_safe_directory() {
        let long = format!("{}-0123abcd", "é".repeat(200));
        for (key, name) in [
            ("w-12345678", "w-12345678".to_owned()),
            ("My Project-12345678", "My-Project-12345678".to_owned()),
            ("x\ny/..-12345678", "x-y-..-12345678".to_owned()),
            ("..", "-..".to_owned()),
            ("", "-".to_owned()),
            (long.as_str(), format!("{}-0123abcd", "-".repeat(111))),
        ] {
            assert_eq!(project_dir_name(key), name, "{key:?}");
        }
        let (_dir, store) = store();
        let a = state("s1", "My Project-12345678");
        store.save(&a).unwrap();
        assert_eq!(store.latest("My Project-12345678").unwrap(), Some(a));
        assert_eq!(store.latest("My-Project-87654321").unwrap(), None);
    }

    #[test]
    fn unsafe_names_are_refused() {
        let (_dir, store) = store();
        for bad in ["", "..", "a/b", "a\\b", "x y"] {
            assert!(matches!(
                store.load(bad),
                Err(StateError::UnsafeName { .. })
            ));
        }
    }

    #[test]
    fn the_hand_off_is_taken_once() {
        let (dir, store) = store();
        let hand_off = HandOff {
            notes_session_id: "s1".into(),
            previous_session_id: "s2".into(),
            previous_transcript_path: "/t/s2.jsonl".into(),
            root_window_id: "claude:s1:1".into(),
            window_id: "claude:s2:3".into(),
            ordinal: 3,
            origin: Origin::Normal,
            created_at: "2026-01-01T00:00:00+00:00".into(),
            prompt: None,
        };
        store.put_hand_off("p-12345678", &hand_off).unwrap();
        let json =
            std::fs::read_to_string(dir.path().join("projects/p-12345678/handoff.json")).unwrap();
        assert_eq!(
            json,
            r#"{"notesSessionId":"s1","previousSessionId":"s2","previousTranscriptPath":"/t/s2.jsonl","rootWindowId":"claude:s1:1","windowId":"claude:s2:3","ordinal":3,"origin":"normal","createdAt":"2026-01-01T00:00:00+00:00"}"#
        );
        assert_eq!(store.take_hand_off("p-12345678").unwrap(), Some(hand_off));
        assert_eq!(store.take_hand_off("p-12345678").unwrap(), None);
    }

    #[test]
    fn a_garbage_record_is_reported_not_trusted() {
        let (dir, store) = store();
        std::fs::create_dir_all(dir.path().join("sessions")).unwrap();
        std::fs::write(dir.path().join("sessions/s1.json"), "{nope").unwrap();
        assert!(matches!(
            store.load("s1"),
            Err(StateError::Malformed { .. })
        ));
    }
}
