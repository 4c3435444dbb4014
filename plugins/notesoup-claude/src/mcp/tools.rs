//! The tools `notesoup mcp` serves: core's tool surface, resolved against
//! the calling Claude session. Results are text only, unless
//! `NOTESOUP_MCP_STRUCTURED` asks for each tool's `outputSchema` and a
//! success's `structuredContent` (core's compact JSON) next to the text:
//! Claude Code 2.1.332 would hand the model that JSON instead of the text,
//! so the plugin leaves it off.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use notesoup_core::history::History;
use notesoup_core::notes::{HeadCache, project_key};
use notesoup_core::settings::WarnOnce;
use notesoup_core::tools::{ListedTool, Refusal, RefusalCode, ToolOutput};
use serde_json::Value;

use super::caller::{KnownCaller, resolve_kept};
use super::protocol::{CallMeta, RpcError, ToolDef, ToolHost, ToolText, code};
use crate::env::HostEnv;
use crate::state::{SessionState, StateDir};
use crate::tool_host::{Caller, ClaudeToolHost, claude_description, claude_tools};
use crate::transcript::decode::{ChainFile, decode_chain};
use crate::transcript::incremental::{ChainError, ChainHistory};

/// The tool host of one `notesoup mcp` process.
#[derive(Debug)]
pub struct NotesoupTools {
    env: HostEnv,
    /// The project the server was started for (`CLAUDE_PROJECT_DIR`, else
    /// its working directory).
    project_dir: PathBuf,
    project_key: String,
    /// What `tools/list` shows, from core's surface.
    tools: Vec<&'static ListedTool>,
    /// The last decoded chain, kept and extended as its transcript grows.
    history_cache: Option<CachedHistory>,
    /// The session the last `tool_use` row named.
    known_caller: Option<KnownCaller>,
    /// Note heads kept between listings, watched for changes.
    heads: Arc<HeadCache>,
    /// Settings warnings said on stderr (Claude Code keeps a server's
    /// stderr in its logs), each once for the server's life.
    warned: WarnOnce,
}

/// A chain's kept decode and the history built from it. One entry only:
/// the server serves one conversation at a time, and a 50 MB transcript
/// decodes to a few times its size.
pub type CachedHistory = ChainHistory;

/// The history of `state`'s chain: the cached one while none of its files
/// changed, else brought up to date (and cached).
pub fn cached_chain_history(
    cache: &mut Option<CachedHistory>,
    state: &SessionState,
) -> Result<History, Refusal> {
    cached_chain(cache, state).cloned()
}

/// The cached history of `state`'s chain, lent, not copied. When the newest
/// transcript grew, only its new bytes are decoded (see
/// [`ChainHistory::update`]); any other change decodes the chain again.
pub fn cached_chain<'c>(
    cache: &'c mut Option<CachedHistory>,
    state: &SessionState,
) -> Result<&'c History, Refusal> {
    let files = chain_files(state);
    let update = match cache {
        Some(cached) => cached.update(&state.notes_session_id, &files),
        None => ChainHistory::decode(&state.notes_session_id, &files).map(|cached| {
            *cache = Some(cached);
        }),
    };
    if let Err(err) = update {
        *cache = None;
        return Err(match err {
            ChainError::Io(_) => Refusal::new(RefusalCode::IoError, err.to_string()),
            ChainError::Transcript(err) => {
                Refusal::new(RefusalCode::InternalError, err.to_string())
            }
        });
    }
    cache
        .as_ref()
        .map(ChainHistory::history)
        .ok_or_else(|| Refusal::new(RefusalCode::InternalError, "the history cache is empty"))
}

fn chain_files(state: &SessionState) -> Vec<ChainFile> {
    state
        .transcripts()
        .into_iter()
        .map(|link| ChainFile {
            session_id: link.session_id,
            path: link.transcript_path,
        })
        .collect()
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
            known_caller: None,
            heads: Arc::new(HeadCache::new().watching()),
            warned: WarnOnce::new(),
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
    known_caller: &'a mut Option<KnownCaller>,
    heads: &'a Arc<HeadCache>,
}

impl Caller for McpCaller<'_> {
    fn head_cache(&self) -> Option<Arc<HeadCache>> {
        Some(Arc::clone(self.heads))
    }

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
        Ok(resolve_kept(
            self.known_caller,
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
    let files = chain_files(state);
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
        let caller = McpCaller {
            env: &self.env,
            project_dir: &self.project_dir,
            project_key: &self.project_key,
            tool_use_id: meta.tool_use_id.as_deref(),
            history_cache: &mut self.history_cache,
            known_caller: &mut self.known_caller,
            heads: &self.heads,
        };
        let mut host = ClaudeToolHost::new(&self.env, &self.project_dir, &self.project_key, caller);
        // A name this server does not list is a protocol error in MCP (not
        // a tool result), and its message repeats at most a short prefix.
        let Some(output) = crate::tool_host::run(&mut host, name, arguments) else {
            return Err(RpcError::new(
                code::INVALID_PARAMS,
                format!("unknown tool: {}", super::protocol::shown(name)),
            ));
        };
        for warning in self.warned.fresh(host.take_warnings()) {
            // A closed stderr leaves nowhere to say it.
            let _ = writeln!(std::io::stderr(), "{warning}");
        }
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
