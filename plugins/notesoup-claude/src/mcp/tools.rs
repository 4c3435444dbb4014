//! The tools `notesoup mcp` serves: core's operations and schemas, resolved
//! against the calling Claude session. Results are text only.

use std::path::PathBuf;

use notesoup_core::history::History;
use notesoup_core::notes::project_key;
use notesoup_core::tools::history::{history_list, history_read, history_search, history_windows};
use notesoup_core::tools::{Refusal, RefusalCode, ToolOutput, parse_arguments, schemas};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::caller::{Resolution, resolve};
use super::protocol::{CallMeta, RpcError, ToolDef, ToolHost, ToolText, code};
use crate::env::HostEnv;
use crate::state::{SessionState, StateDir};
use crate::transcript::decode::{ChainFile, decode_chain};

/// Why history (and session notes) need a session.
pub const NO_SESSION: &str = "no Claude Code session is known to notesoup here yet (no notesoup hook has run for this project), so this session's notes and history are not available; the durable homes @project/, @human/, @self/ and @model/ are";

/// The tool host of one `notesoup mcp` process.
#[derive(Debug)]
pub struct NotesoupTools {
    env: HostEnv,
    /// The project the server was started for (`CLAUDE_PROJECT_DIR`, else
    /// its working directory).
    project_dir: PathBuf,
    project_key: String,
}

impl NotesoupTools {
    /// A host for `project_dir`.
    pub fn new(env: HostEnv, project_dir: PathBuf) -> Self {
        let project_key = project_key(&project_dir);
        Self {
            env,
            project_dir,
            project_key,
        }
    }

    /// The calling session, if one is known.
    fn caller(&self, meta: &CallMeta) -> Result<Option<(SessionState, Resolution)>, String> {
        let Some(data) = self.env.data_dir() else {
            return Ok(None);
        };
        resolve(
            &StateDir::new(data),
            self.env.transcripts_dir(&self.project_dir).as_deref(),
            &self.project_key,
            meta.tool_use_id.as_deref(),
        )
    }

    fn history_call(&self, name: &str, arguments: Value, meta: &CallMeta) -> ToolOutput {
        match name {
            "history_windows" => self.with_history(arguments, meta, history_windows),
            "history_list" => self.with_history(arguments, meta, history_list),
            "history_search" => self.with_history(arguments, meta, history_search),
            _ => self.with_history(arguments, meta, history_read),
        }
    }

    /// Parses the arguments, decodes the caller's `/clear` chain, runs `op`.
    fn with_history<P: DeserializeOwned>(
        &self,
        arguments: Value,
        meta: &CallMeta,
        op: fn(&History, &P) -> ToolOutput,
    ) -> ToolOutput {
        let params = match parse_arguments::<P>(arguments) {
            Ok(params) => params,
            Err(refusal) => return ToolOutput::refusal(&refusal),
        };
        let state = match self.caller(meta) {
            Ok(Some((state, _))) => state,
            Ok(None) => return refusal(RefusalCode::InvalidScope, NO_SESSION),
            Err(error) => return refusal(RefusalCode::IoError, error),
        };
        let files: Vec<ChainFile> = state
            .transcripts()
            .into_iter()
            .map(|link| ChainFile {
                session_id: link.session_id,
                path: link.transcript_path,
            })
            .collect();
        let history = decode_chain(&state.notes_session_id, &files)
            .map_err(|err| {
                Refusal::new(
                    RefusalCode::IoError,
                    format!("transcript unreadable: {err}"),
                )
            })
            .and_then(|transcript| {
                History::new(transcript)
                    .map_err(|err| Refusal::new(RefusalCode::InternalError, err.to_string()))
            });
        match history {
            Ok(history) => op(&history, &params),
            Err(refusal) => ToolOutput::refusal(&refusal),
        }
    }
}

fn refusal(code: RefusalCode, message: impl Into<String>) -> ToolOutput {
    ToolOutput::refusal(&Refusal::new(code, message))
}

/// Names of the history tools.
const HISTORY_TOOLS: [&str; 4] = [
    "history_windows",
    "history_list",
    "history_search",
    "history_read",
];

impl ToolHost for NotesoupTools {
    fn tools(&self) -> Vec<ToolDef> {
        schemas::all()
            .into_iter()
            .map(|schema| ToolDef {
                name: schema.name.to_owned(),
                description: schema.description,
                input_schema: schema.input_schema,
            })
            .collect()
    }

    fn call(
        &mut self,
        name: &str,
        arguments: Value,
        meta: &CallMeta,
    ) -> Result<ToolText, RpcError> {
        let output = if HISTORY_TOOLS.contains(&name) {
            self.history_call(name, arguments, meta)
        } else {
            return Err(RpcError::new(
                code::INVALID_PARAMS,
                format!("unknown tool: {name}"),
            ));
        };
        Ok(ToolText {
            text: output.text,
            is_error: output.is_error,
        })
    }
}
