//! The tools `notesoup mcp` serves: core's tool surface, resolved against
//! the calling Claude session. Results are text only, unless
//! `NOTESOUP_MCP_STRUCTURED` asks for each tool's `outputSchema` and a
//! success's `structuredContent` (core's compact JSON) next to the text:
//! Claude Code 2.1.332 would hand the model that JSON instead of the text,
//! so the plugin leaves it off.

use std::path::PathBuf;

use notesoup_core::history::History;
use notesoup_core::notes::project_key;
use notesoup_core::tools::{Refusal, RefusalCode, ToolOutput, ToolSpec};
use serde_json::Value;

use super::caller::resolve;
use super::protocol::{CallMeta, RpcError, ToolDef, ToolHost, ToolText, code};
use crate::env::HostEnv;
use crate::state::{SessionState, StateDir};
use crate::tool_host::{Caller, ClaudeToolHost, claude_description, claude_tools};
use crate::transcript::decode::{ChainFile, decode_chain};

/// The tool host of one `notesoup mcp` process.
#[derive(Debug)]
pub struct NotesoupTools {
    env: HostEnv,
    /// The project the server was started for (`CLAUDE_PROJECT_DIR`, else
    /// its working directory).
    project_dir: PathBuf,
    project_key: String,
    /// What `tools/list` shows, from core's surface.
    tools: Vec<&'static ToolSpec>,
    /// The last decoded chain, reused while its files are unchanged.
    history_cache: Option<CachedHistory>,
}

/// A chain's decoded history and what its files were when it was decoded.
/// One entry only: the server serves one conversation at a time, and a
/// 50 MB transcript decodes to a few times its size.
#[derive(Debug)]
pub struct CachedHistory {
    notes_session_id: String,
    files: Vec<(PathBuf, Option<FileStamp>)>,
    history: History,
}

/// What tells a file changed: the transcript is appended to, and a
/// truncation, a replacement (another inode) or a rewrite in place (another
/// modification time) shows here too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStamp {
    len: u64,
    modified: Option<std::time::SystemTime>,
    inode: u64,
    device: u64,
}

impl FileStamp {
    /// The stamp of `path`, `None` when there is no regular file (it decodes
    /// as empty).
    pub fn of(path: &std::path::Path) -> Option<Self> {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(path)
            .ok()
            .filter(std::fs::Metadata::is_file)?;
        Some(Self {
            len: meta.len(),
            modified: meta.modified().ok(),
            inode: meta.ino(),
            device: meta.dev(),
        })
    }
}

/// The history of `state`'s chain: the cached one while none of its files
/// changed, else decoded again (and cached).
pub fn cached_chain_history(
    cache: &mut Option<CachedHistory>,
    state: &SessionState,
) -> Result<History, Refusal> {
    cached_chain(cache, state).cloned()
}

/// The cached history of `state`'s chain, decoded again when any of its
/// files changed; lent, not copied.
pub fn cached_chain<'c>(
    cache: &'c mut Option<CachedHistory>,
    state: &SessionState,
) -> Result<&'c History, Refusal> {
    let files: Vec<(PathBuf, Option<FileStamp>)> = state
        .transcripts()
        .into_iter()
        .map(|link| {
            let stamp = FileStamp::of(&link.transcript_path);
            (link.transcript_path, stamp)
        })
        .collect();
    let fresh = cache.as_ref().is_some_and(|cached| {
        cached.notes_session_id == state.notes_session_id && cached.files == files
    });
    if !fresh {
        // Dropped before decoding, so two decoded chains never sit in memory.
        *cache = None;
        let history = chain_history(state)?;
        *cache = Some(CachedHistory {
            notes_session_id: state.notes_session_id.clone(),
            files,
            history,
        });
    }
    cache
        .as_ref()
        .map(|cached| &cached.history)
        .ok_or_else(|| Refusal::new(RefusalCode::InternalError, "the history cache is empty"))
}

impl NotesoupTools {
    /// A host for `project_dir`.
    pub fn new(env: HostEnv, project_dir: PathBuf) -> Self {
        let project_key = project_key(&project_dir);
        Self {
            env,
            project_dir,
            project_key,
            tools: claude_tools(),
            history_cache: None,
        }
    }
}

/// The session of one `tools/call`, found from its `_meta`.
#[derive(Debug)]
struct McpCaller<'a> {
    env: &'a HostEnv,
    project_dir: &'a PathBuf,
    project_key: &'a str,
    tool_use_id: Option<&'a str>,
    history_cache: &'a mut Option<CachedHistory>,
}

impl Caller for McpCaller<'_> {
    fn history(&mut self, state: &SessionState) -> Result<History, Refusal> {
        cached_chain_history(self.history_cache, state)
    }

    /// Warm calls read the kept history in place.
    fn with_history(
        &mut self,
        state: &SessionState,
        run: &mut dyn FnMut(&History) -> ToolOutput,
    ) -> ToolOutput {
        match cached_chain(self.history_cache, state) {
            Ok(history) => run(history),
            Err(refusal) => ToolOutput::refusal(&refusal),
        }
    }

    fn session(&mut self) -> Result<Option<SessionState>, String> {
        let Some(data) = self.env.data_dir() else {
            return Ok(None);
        };
        Ok(resolve(
            &StateDir::new(data),
            self.env.transcripts_dir(self.project_dir).as_deref(),
            self.project_key,
            self.tool_use_id,
        )?
        .map(|(state, _)| state))
    }
}

/// The history of a session's whole `/clear` chain.
pub fn chain_history(state: &SessionState) -> Result<History, Refusal> {
    let files: Vec<ChainFile> = state
        .transcripts()
        .into_iter()
        .map(|link| ChainFile {
            session_id: link.session_id,
            path: link.transcript_path,
        })
        .collect();
    let transcript = decode_chain(&state.notes_session_id, &files).map_err(|err| {
        Refusal::new(
            RefusalCode::IoError,
            format!("transcript unreadable: {err}"),
        )
    })?;
    History::new(transcript)
        .map_err(|err| Refusal::new(RefusalCode::InternalError, err.to_string()))
}

impl ToolHost for NotesoupTools {
    fn tools(&self) -> Vec<ToolDef> {
        self.tools
            .iter()
            .map(|tool| ToolDef {
                name: tool.name.to_owned(),
                description: claude_description(tool),
                input_schema: tool.input_schema.clone(),
                read_only: Some(tool.read_only),
                output_schema: self
                    .env
                    .mcp_structured
                    .then(|| tool.output_schema.clone())
                    .flatten(),
            })
            .collect()
    }

    fn call(
        &mut self,
        name: &str,
        arguments: Value,
        meta: &CallMeta,
    ) -> Result<ToolText, RpcError> {
        // A name this server never listed is a protocol error in MCP (not a
        // tool result), and its message repeats at most a short prefix.
        if !self.tools.iter().any(|tool| tool.name == name) {
            return Err(RpcError::new(
                code::INVALID_PARAMS,
                format!("unknown tool: {}", super::protocol::shown(name)),
            ));
        }
        let caller = McpCaller {
            env: &self.env,
            project_dir: &self.project_dir,
            project_key: &self.project_key,
            tool_use_id: meta.tool_use_id.as_deref(),
            history_cache: &mut self.history_cache,
        };
        let mut host = ClaudeToolHost::new(
            &self.env,
            &self.project_dir,
            &self.project_key,
            caller,
            &arguments,
        );
        let output = crate::tool_host::run(&mut host, name, arguments);
        Ok(ToolText {
            // Successes only: a refusal's `{error, code}` is not the tool's
            // output schema, and its text is what every client shows.
            structured: (self.env.mcp_structured && !output.is_error)
                .then(|| output.json.to_string()),
            text: output.text,
            is_error: output.is_error,
        })
    }
}
