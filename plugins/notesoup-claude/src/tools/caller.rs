//! Who is calling: the Claude session a tool call comes from, its notes
//! identity and store, and the settings over its project. The MCP server
//! and the command line both ask here; nothing else works out a caller.
//!
//! The command line knows its session before the call. The MCP server
//! finds it per call: MCP 2026-07-28 requests are stateless and one server
//! process outlives `/clear`, so the transcript whose assistant row holds
//! the `tool_use` the call names (`_meta["claudecode/toolUseId"]`) belongs
//! to the caller (a subagent's transcript resolves to its parent session).
//! When that row is not on disk yet (transcripts are written
//! asynchronously), a history call waits for it (bounded) and otherwise
//! the project's most recently recorded session stands in.
//!
//! A running server keeps what does not change between calls: the session
//! a `tool_use` row named (while its transcript is the project's newest),
//! the notes identity (rebuilt only for another session or project), and
//! the settings (read again only when a settings file's stamp changed).

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use notesoup_core::notes::{HeadCache, NoteStore, NotesIdentity, project_key};
use notesoup_core::plumbing::BootCaches;
use notesoup_core::settings::WarnOnce;
use notesoup_core::tools::{Refusal, RefusalCode};

use crate::env::HostEnv;
use crate::files::is_absent;
use crate::names::notes_identity;
use crate::settings::{self, ClaudeSettings};
use crate::state::{ClaudeSessionState, StateDir};
use crate::transcript::row::{Block, Row};
use crate::transcript::tail::{Needles, ReverseLines};

/// Why the session's history is unavailable (session notes are refused by
/// core with `no_session`).
pub const NO_SESSION: &str = "no Claude Code session is known to notesoup here yet (no notesoup hook has run for this project), so this session's notes and history are not available; the durable homes @project/, @human/, @self/ and @model/ still are.";

/// The caller of the tool calls of one process.
#[derive(Debug)]
pub struct Caller {
    env: HostEnv,
    /// The project served when no session is known (the server's
    /// `CLAUDE_PROJECT_DIR` or working directory; the command line's
    /// `--cwd`).
    project_dir: PathBuf,
    project_key: String,
    finding: Finding,
    /// The `tool_use` the current call answers.
    tool_use_id: Option<String>,
    /// The current call's session, once looked up.
    session: Option<Option<ClaudeSessionState>>,
    /// The last notes identity built.
    identity: Option<NotesIdentity>,
    /// The last settings read.
    settings: Option<KeptSettings>,
    /// Note heads kept between listings, when the process keeps them.
    heads: Heads,
    /// Settings warnings already given, each given once.
    warned: WarnOnce,
    /// Warnings not given yet.
    warnings: Vec<String>,
}

/// The note heads a caller keeps between listings.
#[derive(Debug)]
enum Heads {
    /// None: every listing reads the notes (a command run once).
    NotKept,
    /// Kept, not loaded yet: the first store opened starts from those the
    /// hooks' boots saved for it.
    ToLoad,
    /// Kept, watched between listings (see [`HeadCache::watching`]).
    Kept(Arc<HeadCache>),
}

/// How the calling session is found.
#[derive(Debug)]
enum Finding {
    /// Known before any call.
    Known(Option<ClaudeSessionState>),
    /// From each call's `tool_use` row, keeping the session the last such
    /// row named.
    ByToolUse(Option<KnownCaller>),
}

impl Caller {
    /// The caller of a command run in a known session (`None`: outside
    /// any, the durable homes of `project_dir` alone).
    pub fn known(
        env: &HostEnv,
        project_dir: &Path,
        project_key: &str,
        session: Option<ClaudeSessionState>,
    ) -> Self {
        Self::new(
            env.clone(),
            project_dir.to_path_buf(),
            project_key.to_owned(),
            Finding::Known(session),
            Heads::NotKept,
        )
    }

    /// The caller of each call a running server serves for `project_dir`,
    /// found from the call's `tool_use` id, with the note heads kept (and,
    /// on Linux, watched) between listings, starting from those the hooks'
    /// boots saved for the store.
    pub fn by_tool_use(env: HostEnv, project_dir: PathBuf) -> Self {
        let project_key = project_key(&project_dir);
        Self::new(
            env,
            project_dir,
            project_key,
            Finding::ByToolUse(None),
            Heads::ToLoad,
        )
    }

    fn new(
        env: HostEnv,
        project_dir: PathBuf,
        project_key: String,
        finding: Finding,
        heads: Heads,
    ) -> Self {
        Self {
            env,
            project_dir,
            project_key,
            finding,
            tool_use_id: None,
            session: None,
            identity: None,
            settings: None,
            heads,
            warned: WarnOnce::new(),
            warnings: Vec::new(),
        }
    }

    /// The environment the caller was made with.
    pub fn env(&self) -> &HostEnv {
        &self.env
    }

    /// A new call, answering the `tool_use` `tool_use_id` (Claude Code's
    /// `_meta["claudecode/toolUseId"]`): its session is looked up afresh.
    pub fn begin(&mut self, tool_use_id: Option<&str>) {
        match (tool_use_id, &mut self.tool_use_id) {
            // The last call's buffer, reused.
            (Some(id), Some(kept)) => {
                kept.clear();
                kept.push_str(id);
            }
            (id, kept) => *kept = id.map(str::to_owned),
        }
        self.session = None;
    }

    /// The calling session, `None` when no session is known. A call whose
    /// `tool_use` row is not on disk yet is served by the project's latest
    /// session at once: notes need only the session's identity, which that
    /// session names.
    pub fn session(&mut self) -> Result<Option<&ClaudeSessionState>, Refusal> {
        self.find_session(Duration::ZERO)
    }

    /// The calling session for a history call, which reads the session's
    /// transcript: a call whose `tool_use` row is not on disk yet waits for
    /// it (at most [`TOOL_USE_WAIT`]) while a transcript is being written,
    /// so the history holds the rows before the call.
    pub fn session_with_transcript(&mut self) -> Result<Option<&ClaudeSessionState>, Refusal> {
        self.find_session(TOOL_USE_WAIT)
    }

    fn find_session(&mut self, wait: Duration) -> Result<Option<&ClaudeSessionState>, Refusal> {
        if self.session.is_none() {
            let found = match &mut self.finding {
                Finding::Known(state) => state.clone(),
                Finding::ByToolUse(kept) => match self.env.data_dir() {
                    None => None,
                    Some(data) => resolve_kept(
                        kept,
                        &StateDir::new(data),
                        self.env.transcripts_dir(&self.project_dir).as_deref(),
                        &self.project_key,
                        self.tool_use_id.as_deref(),
                        wait,
                    )
                    .map_err(|error| Refusal::new(RefusalCode::IoError, error))?
                    .map(|(state, _)| state),
                },
            };
            self.session = Some(found);
        }
        Ok(self.session.as_ref().and_then(Option::as_ref))
    }

    /// The calling session's notes store: its chain's notes session and
    /// project, else (no session known) the durable homes of the served
    /// project, for which core refuses session notes with `no_session`.
    /// The credential guard is as the project's settings say.
    pub fn store(&mut self) -> Result<NoteStore, Refusal> {
        self.session()?;
        let state = self.session.as_ref().and_then(Option::as_ref);
        let (notes_session, project_key, project_dir) = match state {
            Some(state) => (
                Some(state.notes_session_id.as_str()),
                state.project_key.as_str(),
                state.cwd.as_path(),
            ),
            None => (None, self.project_key.as_str(), self.project_dir.as_path()),
        };
        let kept = self.identity.as_ref().filter(|identity| {
            identity.session_id() == notes_session && identity.project_key() == project_key
        });
        let identity = match kept {
            Some(identity) => identity.clone(),
            None => {
                let identity = notes_identity(&self.env, notes_session, project_key)
                    .map_err(|error| Refusal::new(RefusalCode::InternalError, error))?;
                self.identity = Some(identity.clone());
                identity
            }
        };
        let settings = kept_settings(&mut self.settings, &self.env, project_dir);
        let secret_guard = settings.settings.secret_guard;
        let fresh = self.warned.fresh(&settings.warnings);
        self.warnings.extend(fresh);
        let store = NoteStore::new(identity).with_secret_guard(secret_guard);
        Ok(match self.heads_for(store.identity()) {
            Some(heads) => store.with_head_cache(heads),
            None => store,
        })
    }

    /// The heads kept for every store this caller opens, loaded at the
    /// first from those saved for `identity`'s store (the hooks save them
    /// per project and notes root, so a server meets one such file).
    fn heads_for(&mut self, identity: &NotesIdentity) -> Option<Arc<HeadCache>> {
        if let Heads::ToLoad = self.heads {
            let saved = match self.env.cache_dir() {
                Some(dir) => BootCaches::saved_heads(&dir, identity),
                None => HeadCache::new(),
            };
            self.heads = Heads::Kept(Arc::new(saved.watching()));
        }
        match &self.heads {
            Heads::Kept(heads) => Some(Arc::clone(heads)),
            Heads::NotKept | Heads::ToLoad => None,
        }
    }

    /// The settings warnings not given yet, each given once for the life of
    /// the caller (the command line shows them on stderr, the server once
    /// on its stderr).
    pub fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }
}

/// The settings of a project as last read, with the stamps their files had
/// just before.
#[derive(Debug)]
struct KeptSettings {
    project_dir: PathBuf,
    /// `None` when a file could not be stamped or had not settled: the
    /// settings are read again at the next call.
    stamps: Option<[FileStamp; 2]>,
    settings: ClaudeSettings,
}

/// How long a settings file must have stood unchanged before a read of it
/// is kept: a file rewritten in place within one timestamp tick and to the
/// same length keeps its stamp, so a read taken during that tick is not
/// trusted.
const SETTLE: Duration = Duration::from_secs(2);

/// The settings of `project_dir`: the kept ones while neither file's stamp
/// changed, else read again (and kept).
fn kept_settings<'k>(
    kept: &'k mut Option<KeptSettings>,
    env: &HostEnv,
    project_dir: &Path,
) -> &'k ClaudeSettings {
    let files = settings::files(env, project_dir);
    let now = SystemTime::now();
    let stamps = match (
        stamp(files[0].as_deref(), now),
        stamp(files[1].as_deref(), now),
    ) {
        (Some(user), Some(project)) => Some([user, project]),
        _ => None,
    };
    let unchanged = kept.as_ref().is_some_and(|kept| {
        kept.project_dir == project_dir && stamps.is_some() && kept.stamps == stamps
    });
    if !unchanged {
        *kept = None;
    }
    &kept
        .get_or_insert_with(|| KeptSettings {
            project_dir: project_dir.to_path_buf(),
            stamps,
            settings: settings::load(env, project_dir),
        })
        .settings
}

/// What a settings file looked like: its device, inode, length,
/// modification and change times, or that there is none.
#[derive(Debug, Clone, PartialEq, Eq)]
enum FileStamp {
    Absent,
    Present(u64, u64, u64, SystemTime, SystemTime),
}

/// The stamp of the file at `path` (followed through links, as the
/// settings are read); `None` when it cannot be had or the file changed
/// less than [`SETTLE`] before `now`.
fn stamp(path: Option<&Path>, now: SystemTime) -> Option<FileStamp> {
    let Some(path) = path else {
        return Some(FileStamp::Absent);
    };
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Some(FileStamp::Absent),
        Err(_) => return None,
    };
    let (device, inode, changed) = file_identity(&meta)?;
    let modified = meta.modified().ok()?;
    let settled = |time: SystemTime| now.duration_since(time).is_ok_and(|age| age >= SETTLE);
    (settled(modified) && settled(changed)).then_some(FileStamp::Present(
        device,
        inode,
        meta.len(),
        modified,
        changed,
    ))
}

/// The file's device, inode and change time: the change time moves on
/// every write and every rename onto the name, and no user can set it.
#[cfg(unix)]
fn file_identity(meta: &std::fs::Metadata) -> Option<(u64, u64, SystemTime)> {
    use std::os::unix::fs::MetadataExt;
    let changed = Duration::new(
        u64::try_from(meta.ctime()).ok()?,
        u32::try_from(meta.ctime_nsec()).ok()?,
    );
    Some((
        meta.dev(),
        meta.ino(),
        SystemTime::UNIX_EPOCH.checked_add(changed)?,
    ))
}

/// Off unix there is no inode or change time: the modification time
/// stands in.
#[cfg(not(unix))]
fn file_identity(meta: &std::fs::Metadata) -> Option<(u64, u64, SystemTime)> {
    Some((0, 0, meta.modified().ok()?))
}

/// Transcripts looked at, newest first: the caller's is being written to.
const MAX_FILES: usize = 16;
/// How long a history call whose `tool_use` row is in no transcript yet
/// waits for it, while a transcript is being written or the latest
/// session's is not on disk yet.
pub const TOOL_USE_WAIT: Duration = Duration::from_secs(2);
/// A transcript modified this recently is being written.
const WRITING: Duration = Duration::from_secs(3);
/// Bytes read from the end of each: the `tool_use` row is near the end.
const MAX_TAIL_BYTES: u64 = 8 * 1024 * 1024;

/// How the caller was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolution {
    /// Through the `tool_use` row in its transcript.
    ToolUse,
    /// The session an earlier call's `tool_use` row named, whose transcript
    /// is still the project's newest.
    Kept,
    /// The project's latest recorded session.
    Latest,
}

/// The caller a `tool_use` row named last, kept by a long-lived server so
/// the next call costs stat checks rather than transcript reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownCaller {
    transcripts_dir: PathBuf,
    session_id: String,
}

/// The caller's session state, as [`resolve`] finds it, keeping the session
/// a `tool_use` row named in `known`. While that session's transcript (or
/// one of its sub-agents') is the project's newest, later calls are served
/// by it without reading transcripts; a newer transcript of another session
/// resolves again. A call whose row is in no transcript waits for it, at
/// most `wait`, while a transcript is being written or the latest recorded
/// session's is not on disk yet.
pub fn resolve_kept(
    known: &mut Option<KnownCaller>,
    states: &StateDir,
    transcripts_dir: Option<&Path>,
    project_key: &str,
    tool_use_id: Option<&str>,
    wait: Duration,
) -> Result<Option<(ClaudeSessionState, Resolution)>, String> {
    let (Some(dir), Some(id)) = (transcripts_dir, tool_use_id) else {
        return resolve(states, transcripts_dir, project_key, tool_use_id);
    };
    let found = candidates(dir).map_err(|e| e.to_string())?;
    if let Some(kept) = known.as_ref()
        && kept.transcripts_dir == dir
        && newest_is(&found, &kept.session_id)
        && let Some(state) = states.load(&kept.session_id).map_err(|e| e.to_string())?
    {
        return Ok(Some((state, Resolution::Kept)));
    }
    *known = None;
    let needle = format!("\"{id}\"");
    let deadline = std::time::Instant::now() + wait;
    let mut found = found;
    loop {
        for (_, session_id, path) in found.iter().take(MAX_FILES) {
            if holds_tool_use(path, id, needle.as_bytes()).map_err(|e| e.to_string())? {
                if let Some(state) = states.load(session_id).map_err(|e| e.to_string())? {
                    *known = Some(KnownCaller {
                        transcripts_dir: dir.to_path_buf(),
                        session_id: session_id.clone(),
                    });
                    return Ok(Some((state, Resolution::ToolUse)));
                }
                return latest(states, project_key);
            }
        }
        // Claude Code writes the transcript asynchronously, in batches: the
        // call's row, even the session's first rows, can land after the
        // call. While a transcript is being written, or the latest
        // session's is not on disk yet, give the row a moment to land.
        if std::time::Instant::now() >= deadline
            || !(being_written(&found) || latest_transcript_pending(states, project_key))
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
        found = candidates(dir).map_err(|e| e.to_string())?;
    }
    latest(states, project_key)
}

/// The project's latest recorded session, when no `tool_use` row named one.
fn latest(
    states: &StateDir,
    project_key: &str,
) -> Result<Option<(ClaudeSessionState, Resolution)>, String> {
    Ok(states
        .latest(project_key)
        .map_err(|e| e.to_string())?
        .map(|state| (state, Resolution::Latest)))
}

/// Whether the project's latest recorded session (a hook recorded it, so a
/// Claude Code session is under way) has no transcript on disk yet.
fn latest_transcript_pending(states: &StateDir, project_key: &str) -> bool {
    states
        .latest(project_key)
        .ok()
        .flatten()
        .is_some_and(|state| std::fs::symlink_metadata(&state.transcript_path).is_err())
}

/// Whether the newest of `found` was modified in the last [`WRITING`].
fn being_written(found: &[(SystemTime, String, PathBuf)]) -> bool {
    found.first().is_some_and(|(modified, _, _)| {
        SystemTime::now()
            .duration_since(*modified)
            .is_ok_and(|age| age < WRITING)
    })
}

/// Whether `session_id`'s newest transcript is strictly newer than every
/// other session's (`found` is newest first).
fn newest_is(found: &[(SystemTime, String, PathBuf)], session_id: &str) -> bool {
    let Some((newest, session, _)) = found.first() else {
        return false;
    };
    session == session_id
        && found
            .iter()
            .find(|(_, other, _)| other != session_id)
            .is_none_or(|(time, _, _)| time < newest)
}

/// The caller's session state, if any session is known.
pub fn resolve(
    states: &StateDir,
    transcripts_dir: Option<&Path>,
    project_key: &str,
    tool_use_id: Option<&str>,
) -> Result<Option<(ClaudeSessionState, Resolution)>, String> {
    if let (Some(dir), Some(id)) = (transcripts_dir, tool_use_id)
        && let Some(session_id) = find_tool_use(dir, id).map_err(|e| e.to_string())?
        && let Some(state) = states.load(&session_id).map_err(|e| e.to_string())?
    {
        return Ok(Some((state, Resolution::ToolUse)));
    }
    Ok(states
        .latest(project_key)
        .map_err(|e| e.to_string())?
        .map(|state| (state, Resolution::Latest)))
}

/// The session whose transcript (or subagent transcript) holds the assistant
/// `tool_use` block with id `tool_use_id`.
pub fn find_tool_use(dir: &Path, tool_use_id: &str) -> io::Result<Option<String>> {
    let needle = format!("\"{tool_use_id}\"");
    for (_, session_id, path) in candidates(dir)?.into_iter().take(MAX_FILES) {
        if holds_tool_use(&path, tool_use_id, needle.as_bytes())? {
            return Ok(Some(session_id));
        }
    }
    Ok(None)
}

/// `<dir>/<session>.jsonl` and `<dir>/<session>/subagents/*.jsonl`, newest
/// first, each with its modification time and the session it belongs to.
fn candidates(dir: &Path) -> io::Result<Vec<(SystemTime, String, PathBuf)>> {
    let mut found: Vec<(SystemTime, String, PathBuf)> = Vec::new();
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(err) => return Err(err),
    };
    let mut push = |session: &str, path: PathBuf| {
        // Only regular files: a FIFO among them must not hold up every call.
        if let Ok(meta) = path.metadata()
            && meta.is_file()
            && let Ok(modified) = meta.modified()
        {
            found.push((modified, session.to_owned(), path));
        }
    };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(session) = name.strip_suffix(".jsonl") {
            push(session, path);
        } else if let Ok(subagents) = std::fs::read_dir(path.join("subagents")) {
            for sub in subagents.filter_map(Result::ok) {
                if sub.file_name().to_string_lossy().ends_with(".jsonl") {
                    push(&name, sub.path());
                }
            }
        }
    }
    found.sort_by_key(|entry| std::cmp::Reverse(entry.0));
    Ok(found)
}

fn holds_tool_use(path: &Path, tool_use_id: &str, needle: &[u8]) -> io::Result<bool> {
    let mut lines = match ReverseLines::open(path) {
        Ok(lines) => lines.tail_only(MAX_TAIL_BYTES),
        Err(err) if is_absent(&err) => return Ok(false),
        Err(err) => return Err(err),
    };
    let needles = Needles::new(&[needle]);
    while let Some(line) = lines.next_line_containing(&needles)? {
        if let Some(row) = Row::parse(&line)
            && row.kind == "assistant"
            && row
                .message
                .iter()
                .flat_map(|m| &m.content.0)
                .any(|b| matches!(b, Block::ToolUse { id, .. } if id == tool_use_id))
        {
            return Ok(true);
        }
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool_use_row(id: &str) -> String {
        format!(
            r#"{{"type":"assistant","uuid":"u","message":{{"id":"m","model":"c","content":[{{"type":"tool_use","id":"{id}","name":"mcp__plugin_notesoup_notesoup__notes_list","input":{{}}}}]}}}}"#
        )
    }

    /// Sets `path`'s modification time.
    fn set_mtime(path: &Path, time: SystemTime) {
        std::fs::File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(time)
            .unwrap();
    }

    /// Appends the assistant row of `tool_use` to the transcript at `path`.
    fn append_row(path: &Path, tool_use: &str) {
        let mut text = std::fs::read_to_string(path).unwrap_or_default();
        text.push_str(&(tool_use_row(tool_use) + "\n"));
        std::fs::write(path, text).unwrap();
    }

    /// Two recorded sessions of project `p-12345678`, `sa` then `sb` (the
    /// latest record), their transcripts named in the second folder, not
    /// written yet: the data folder, the transcripts folder, the records.
    fn two_sessions() -> (tempfile::TempDir, tempfile::TempDir, StateDir) {
        let data = tempfile::tempdir().unwrap();
        let transcripts = tempfile::tempdir().unwrap();
        let states = StateDir::new(data.path());
        for id in ["sa", "sb"] {
            let state = ClaudeSessionState::new_chain(
                id,
                transcripts.path().join(format!("{id}.jsonl")),
                "/w".into(),
                "p-12345678".into(),
            );
            states.save(&state).unwrap();
        }
        (data, transcripts, states)
    }

    /// The session [`resolve_kept`] finds for `tool_use` in project
    /// `p-12345678`, and how.
    fn kept(
        known: &mut Option<KnownCaller>,
        states: &StateDir,
        transcripts: &tempfile::TempDir,
        tool_use: &str,
        wait: Duration,
    ) -> (String, Resolution) {
        resolve_kept(
            known,
            states,
            Some(transcripts.path()),
            "p-12345678",
            Some(tool_use),
            wait,
        )
        .unwrap()
        .map(|(state, how)| (state.session_id, how))
        .unwrap()
    }

    /// A server's caller keeps one notes identity and rebuilds it only for
    /// another notes session or project: each call's store is its own
    /// caller's, whichever was served before.
    #[test]
    fn each_call_s_store_is_its_own_session_s_and_project_s() {
        let dir = tempfile::tempdir().unwrap();
        let served = dir.path().join("w");
        let env = HostEnv {
            notes_root: Some(dir.path().join("notes")),
            plugin_data: Some(dir.path().join("data")),
            claude_dir: Some(dir.path().join("claude")),
            ..HostEnv::default()
        };
        let transcripts = env.transcripts_dir(&served).unwrap();
        std::fs::create_dir_all(&transcripts).unwrap();
        let states = StateDir::new(dir.path().join("data"));
        let (here, there) = (project_key(&served), project_key(Path::new("/elsewhere")));
        // sc continues sa's notes session in another project.
        for (id, notes_session, project) in [
            ("sa", "sa", &here),
            ("sb", "sb", &here),
            ("sc", "sa", &there),
        ] {
            let mut state = ClaudeSessionState::new_chain(
                id,
                transcripts.join(format!("{id}.jsonl")),
                served.clone(),
                project.clone(),
            );
            state.notes_session_id = notes_session.to_owned();
            states.save(&state).unwrap();
            std::fs::write(
                transcripts.join(format!("{id}.jsonl")),
                tool_use_row(&format!("toolu_{id}")) + "\n",
            )
            .unwrap();
        }
        // The newest transcript is no caller's, so no call is served by the
        // session the one before it named.
        let newest = transcripts.join("sz.jsonl");
        std::fs::write(&newest, "").unwrap();
        set_mtime(&newest, SystemTime::now() + Duration::from_secs(60));
        let mut caller = Caller::by_tool_use(env, served.clone());
        for (tool_use, notes_session, project) in [
            ("toolu_sa", "sa", &here),
            // The same notes session in another project.
            ("toolu_sc", "sa", &there),
            ("toolu_sb", "sb", &here),
            // Another notes session in the same project.
            ("toolu_sa", "sa", &here),
        ] {
            caller.begin(Some(tool_use));
            let store = caller.store().unwrap();
            assert_eq!(
                (
                    store.identity().session_id(),
                    store.identity().project_key()
                ),
                (Some(notes_session), project.as_str()),
                "{tool_use}"
            );
        }
    }

    /// The settings are read again only when a file's stamp changed or
    /// could not be had: the kept ones are handed out while both files stay
    /// as they were stamped.
    #[test]
    fn settings_are_kept_while_their_files_stand_as_stamped() {
        let dir = tempfile::tempdir().unwrap();
        let env = HostEnv {
            claude_dir: Some(dir.path().join("claude")),
            ..HostEnv::default()
        };
        let (one, other) = (dir.path().join("one"), dir.path().join("other"));
        std::fs::create_dir_all(&one).unwrap();
        std::fs::create_dir_all(&other).unwrap();
        let mut kept = None;
        // Neither file is there: what was read stands; a mark set on it
        // shows the next call hands out the kept settings.
        let marked = |kept: &mut Option<KeptSettings>| {
            kept.as_mut().unwrap().settings.settings.boot_max_chars = 4321;
        };
        kept_settings(&mut kept, &env, &one);
        marked(&mut kept);
        assert_eq!(
            kept_settings(&mut kept, &env, &one).settings.boot_max_chars,
            4321
        );
        // Another project's settings are its own.
        assert_eq!(
            kept_settings(&mut kept, &env, &other)
                .settings
                .boot_max_chars,
            10_000
        );
        // A project file just written has not settled: read at each call.
        std::fs::create_dir_all(one.join(".claude")).unwrap();
        std::fs::write(
            one.join(".claude").join(settings::SETTINGS_FILE),
            r#"{"notesoup":{"bootMaxChars":6000}}"#,
        )
        .unwrap();
        for _ in 0..2 {
            assert_eq!(
                kept_settings(&mut kept, &env, &one).settings.boot_max_chars,
                6000
            );
            marked(&mut kept);
        }
        // A file that cannot be stamped (its folder is a file) is read at
        // each call too.
        std::fs::write(other.join(".claude"), "").unwrap();
        for _ in 0..2 {
            assert_eq!(
                kept_settings(&mut kept, &env, &other)
                    .settings
                    .boot_max_chars,
                10_000
            );
            marked(&mut kept);
        }
    }

    /// A settings file that has stood unchanged for [`SETTLE`] is read
    /// once; written again (even with its old modification time put back)
    /// it is read anew until it settles.
    #[test]
    fn a_settled_settings_file_is_read_once_and_again_once_rewritten() {
        let dir = tempfile::tempdir().unwrap();
        let claude = dir.path().join("claude");
        std::fs::create_dir_all(&claude).unwrap();
        let env = HostEnv {
            claude_dir: Some(claude.clone()),
            ..HostEnv::default()
        };
        let file = claude.join(settings::SETTINGS_FILE);
        std::fs::write(&file, r#"{"notesoup":{"bootMaxChars":6000}}"#).unwrap();
        let old = SystemTime::now() - Duration::from_secs(3600);
        set_mtime(&file, old);
        // The change time cannot be set back: wait for it to settle.
        std::thread::sleep(SETTLE + Duration::from_millis(100));
        let project = dir.path().join("w");
        let mut kept = None;
        let read = |kept: &mut Option<KeptSettings>| {
            let chars = kept_settings(kept, &env, &project).settings.boot_max_chars;
            kept.as_mut().unwrap().settings.settings.boot_max_chars = 4321;
            chars
        };
        assert_eq!(read(&mut kept), 6000);
        assert_eq!(read(&mut kept), 4321, "kept");
        // Rewritten in place to the same length, its modification time put
        // back: the change time still tells, and the new text is read until
        // it has settled.
        std::fs::write(&file, r#"{"notesoup":{"bootMaxChars":7000}}"#).unwrap();
        set_mtime(&file, old);
        assert_eq!(read(&mut kept), 7000);
        assert_eq!(read(&mut kept), 7000, "read again: not settled yet");
    }

    /// The `tool_use` row is looked for in a transcript's last 8 MiB: a row
    /// a few megabytes back is found.
    #[test]
    fn a_tool_use_row_megabytes_back_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let filler = r#"{"type":"user","message":{"content":"filler"}}"#.to_owned() + "\n";
        let after = filler.repeat(3 * 1024 * 1024 / filler.len());
        std::fs::write(
            dir.path().join("s1.jsonl"),
            tool_use_row("toolu_a") + "\n" + &after,
        )
        .unwrap();
        assert_eq!(
            find_tool_use(dir.path(), "toolu_a").unwrap().as_deref(),
            Some("s1")
        );
    }

    #[test]
    fn finds_main_and_subagent_transcripts() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("s1.jsonl"), tool_use_row("toolu_a") + "\n").unwrap();
        let sub = dir.path().join("s2").join("subagents");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(sub.join("agent-x.jsonl"), tool_use_row("toolu_b")).unwrap();
        // A mention in a user row is not the call.
        std::fs::write(
            dir.path().join("s3.jsonl"),
            r#"{"type":"user","message":{"content":"see \"toolu_c\""}}"#,
        )
        .unwrap();
        assert_eq!(
            find_tool_use(dir.path(), "toolu_a").unwrap().as_deref(),
            Some("s1")
        );
        assert_eq!(
            find_tool_use(dir.path(), "toolu_b").unwrap().as_deref(),
            Some("s2")
        );
        assert_eq!(find_tool_use(dir.path(), "toolu_c").unwrap(), None);
        assert_eq!(
            find_tool_use(&dir.path().join("none"), "toolu_a").unwrap(),
            None
        );
    }

    #[test]
    fn a_kept_caller_serves_until_another_session_writes_a_newer_transcript() {
        let (_data, transcripts, states) = two_sessions();
        let write = |id: &str, tool_use: &str| {
            let path = transcripts.path().join(format!("{id}.jsonl"));
            append_row(&path, tool_use);
            // Modification times must tell the writes apart.
            let later = SystemTime::now()
                + std::time::Duration::from_secs(
                    u64::try_from(std::fs::read_dir(transcripts.path()).unwrap().count()).unwrap(),
                );
            set_mtime(&path, later);
        };
        let mut known = None;
        let mut call =
            |tool_use: &str| kept(&mut known, &states, &transcripts, tool_use, Duration::ZERO);
        write("sb", "toolu_b");
        write("sa", "toolu_a");
        assert_eq!(call("toolu_a"), ("sa".to_owned(), Resolution::ToolUse));
        // Its transcript is the newest: kept, whatever the id.
        assert_eq!(call("toolu_a2"), ("sa".to_owned(), Resolution::Kept));
        // Another session wrote later: resolved again.
        write("sb", "toolu_b2");
        assert_eq!(call("toolu_b2"), ("sb".to_owned(), Resolution::ToolUse));
        assert_eq!(call("toolu_b3"), ("sb".to_owned(), Resolution::Kept));
        // A call from an older transcript while sb is newest is served by
        // the kept caller; once sa writes again it is found.
        write("sa", "toolu_a3");
        assert_eq!(call("toolu_a3"), ("sa".to_owned(), Resolution::ToolUse));
    }

    /// Claude Code may call a tool before the call's row is in the
    /// transcript it is writing: a history call waits (bounded) for the
    /// row; a notes call does not wait.
    #[test]
    fn a_history_call_whose_row_lands_late_is_found_by_its_tool_use() {
        let (_data, transcripts, states) = two_sessions();
        // sb is the latest record (its transcript on disk), sa the session
        // being written.
        std::fs::write(
            transcripts.path().join("sb.jsonl"),
            tool_use_row("toolu_b") + "\n",
        )
        .unwrap();
        let sa = transcripts.path().join("sa.jsonl");
        std::fs::write(&sa, tool_use_row("toolu_earlier") + "\n").unwrap();
        let resolve = |wait| kept(&mut None, &states, &transcripts, "toolu_late", wait);
        let (notes, history) = std::thread::scope(|scope| {
            scope.spawn(|| {
                std::thread::sleep(std::time::Duration::from_millis(200));
                append_row(&sa, "toolu_late");
            });
            (resolve(Duration::ZERO), resolve(TOOL_USE_WAIT))
        });
        assert_eq!(notes, ("sb".to_owned(), Resolution::Latest));
        assert_eq!(history, ("sa".to_owned(), Resolution::ToolUse));
    }

    /// Claude Code writes a session's first rows in a batch that can land
    /// after its first calls: while the latest recorded session has no
    /// transcript on disk, a history call waits for it too, even when no
    /// other transcript is being written.
    #[test]
    fn a_history_call_waits_for_the_latest_sessions_first_rows() {
        let (_data, transcripts, states) = two_sessions();
        // sa's transcript is old; sb, the latest record, has none yet.
        let sa = transcripts.path().join("sa.jsonl");
        std::fs::write(&sa, tool_use_row("toolu_a") + "\n").unwrap();
        let old = SystemTime::now() - Duration::from_secs(60);
        set_mtime(&sa, old);
        let sb = transcripts.path().join("sb.jsonl");
        let history = std::thread::scope(|scope| {
            scope.spawn(|| {
                std::thread::sleep(std::time::Duration::from_millis(200));
                std::fs::write(&sb, tool_use_row("toolu_first") + "\n").unwrap();
            });
            kept(
                &mut None,
                &states,
                &transcripts,
                "toolu_first",
                TOOL_USE_WAIT,
            )
        });
        assert_eq!(history, ("sb".to_owned(), Resolution::ToolUse));
    }

    /// With no transcript being written and the latest session's on disk,
    /// a history call whose row is nowhere does not wait: it is served by
    /// the latest session at once (a row written a moment later is not
    /// waited for).
    #[test]
    fn a_history_call_does_not_wait_when_nothing_is_being_written() {
        let (_data, transcripts, states) = two_sessions();
        let old = SystemTime::now() - Duration::from_secs(60);
        for id in ["sa", "sb"] {
            let path = transcripts.path().join(format!("{id}.jsonl"));
            std::fs::write(&path, tool_use_row(&format!("toolu_{id}")) + "\n").unwrap();
            set_mtime(&path, old);
        }
        let sa = transcripts.path().join("sa.jsonl");
        let history = std::thread::scope(|scope| {
            scope.spawn(|| {
                std::thread::sleep(std::time::Duration::from_millis(300));
                append_row(&sa, "toolu_late");
            });
            kept(
                &mut None,
                &states,
                &transcripts,
                "toolu_late",
                TOOL_USE_WAIT,
            )
        });
        assert_eq!(history, ("sb".to_owned(), Resolution::Latest));
    }

    /// A transcripts folder that cannot be listed is an error, not an empty
    /// folder; a missing one is empty.
    #[test]
    fn a_transcripts_folder_that_cannot_be_read_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("file");
        std::fs::write(&file, "").unwrap();
        assert!(find_tool_use(&file, "toolu_a").is_err());
        assert_eq!(
            find_tool_use(&dir.path().join("none"), "toolu_a").unwrap(),
            None
        );
    }

    #[test]
    fn falls_back_to_the_latest_session_of_the_project() {
        let data = tempfile::tempdir().unwrap();
        let transcripts = tempfile::tempdir().unwrap();
        let states = StateDir::new(data.path());
        assert_eq!(
            resolve(
                &states,
                Some(transcripts.path()),
                "p-12345678",
                Some("toolu_z")
            )
            .unwrap(),
            None
        );
        let mut a = ClaudeSessionState::new_chain(
            "sa",
            "/t/sa.jsonl".into(),
            "/w".into(),
            "p-12345678".into(),
        );
        states.save(&a).unwrap();
        let b = ClaudeSessionState::new_chain(
            "sb",
            "/t/sb.jsonl".into(),
            "/w".into(),
            "p-12345678".into(),
        );
        states.save(&b).unwrap();
        std::fs::write(transcripts.path().join("sa.jsonl"), tool_use_row("toolu_a")).unwrap();
        let resolved = |tool_use| {
            let (found, how) = resolve(
                &states,
                Some(transcripts.path()),
                "p-12345678",
                Some(tool_use),
            )
            .unwrap()
            .unwrap();
            (found.session_id, how)
        };
        assert_eq!(resolved("toolu_a"), ("sa".to_owned(), Resolution::ToolUse));
        assert_eq!(
            resolved("toolu_unflushed"),
            ("sb".to_owned(), Resolution::Latest)
        );
        a.window_ordinal = 2;
        states.save(&a).unwrap();
        let (found, _) = resolve(&states, None, "p-12345678", None).unwrap().unwrap();
        assert_eq!(found.session_id, "sa");
    }

    /// A server's first store starts from the heads the hooks' boots saved
    /// for it; with none saved it starts empty; a command run once keeps
    /// none.
    #[test]
    fn a_server_starts_from_the_heads_the_hooks_saved() {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path().join("notes");
        let env = |cache: &str| {
            let vars = [
                ("PI_NOTES_HOME", root.clone()),
                ("XDG_CACHE_HOME", temp.path().join(cache)),
                ("CLAUDE_PLUGIN_DATA", temp.path().join("data")),
            ];
            HostEnv::from_lookup(|name| {
                vars.iter()
                    .find(|(var, _)| *var == name)
                    .map(|(_, value)| value.to_string_lossy().into_owned())
            })
        };
        let identity = NotesIdentity::new(&root, "s1", "p-12345678", "a", "m").unwrap();
        let store = NoteStore::new(identity.clone());
        for name in ["a", "b"] {
            store
                .write(&format!("@project/{name}"), "# A note\n\ntext\n", None)
                .unwrap();
        }
        // Heads are saved only from notes that settled.
        std::thread::sleep(HeadCache::DEFAULT_SETTLE + Duration::from_millis(100));
        // A hook's boot saves them.
        let caches = BootCaches::new(env("cache").cache_dir());
        caches.snapshot(&store).unwrap();
        drop(caches);
        let kept = |caller: &mut Caller| caller.heads_for(&identity).map(|heads| heads.len());
        let mut server = Caller::by_tool_use(env("cache"), PathBuf::from("/w"));
        assert_eq!(kept(&mut server), Some(2));
        // Loaded once: the same heads for the stores after.
        let first = server.heads_for(&identity).unwrap();
        assert!(Arc::ptr_eq(&first, &server.heads_for(&identity).unwrap()));
        let mut elsewhere = Caller::by_tool_use(env("other-cache"), PathBuf::from("/w"));
        assert_eq!(kept(&mut elsewhere), Some(0));
        let mut command = Caller::known(&env("cache"), Path::new("/w"), "p-12345678", None);
        assert_eq!(kept(&mut command), None);
    }
}
