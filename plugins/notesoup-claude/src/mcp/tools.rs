//! The tools `notesoup mcp` serves: core's operations and schemas, resolved
//! against the calling Claude session. Results are text only.

use std::path::PathBuf;

use notesoup_core::history::History;
use notesoup_core::notes::project_key;
use notesoup_core::tools::notes::note_kind_diff;
use notesoup_core::tools::{
    HISTORY_TOOLS, NOTES_TOOLS, Refusal, RefusalCode, ToolOutput, call_history_tool,
    call_notes_tool, schemas,
};
use serde_json::Value;

use super::caller::{Resolution, resolve};
use super::protocol::{CallMeta, RpcError, ToolDef, ToolHost, ToolText, code};
use crate::env::HostEnv;
use crate::state::{SessionState, StateDir};
use crate::store::{self, NO_SESSION, refusal};
use crate::transcript::decode::{ChainFile, decode_chain};

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

    /// The caller's session, or `Err` with the refusal to send.
    fn session(&self, meta: &CallMeta) -> Result<Option<SessionState>, ToolOutput> {
        self.caller(meta)
            .map(|caller| caller.map(|(state, _)| state))
            .map_err(|error| refusal(RefusalCode::IoError, error))
    }

    /// A notes tool on the caller's store. Without a known session only the
    /// durable homes are served: a session address is refused.
    fn notes_call(&self, name: &str, arguments: Value, meta: &CallMeta) -> ToolOutput {
        let state = match self.session(meta) {
            Ok(state) => state,
            Err(refused) => return refused,
        };
        let (session, project_key) = match &state {
            Some(state) => (
                Some(state.notes_session_id.as_str()),
                state.project_key.as_str(),
            ),
            None => (None, self.project_key.as_str()),
        };
        let addresses: Vec<&str> = ["address", "rename_to"]
            .iter()
            .filter_map(|key| arguments.get(*key)?.as_str())
            .collect();
        let store = match store::open(&self.env, session, project_key, &addresses) {
            Ok(store) => store,
            Err(refused) => return refused,
        };
        call_notes_tool(&store, name, arguments, &note_kind_diff).unwrap_or_else(|| {
            refusal(
                RefusalCode::InternalError,
                format!("not a notes tool: {name}"),
            )
        })
    }

    /// A history tool over the caller's `/clear` chain, decoded now.
    fn history_call(&self, name: &str, arguments: Value, meta: &CallMeta) -> ToolOutput {
        let state = match self.session(meta) {
            Ok(Some(state)) => state,
            Ok(None) => return refusal(RefusalCode::InvalidScope, NO_SESSION),
            Err(refused) => return refused,
        };
        match chain_history(&state) {
            Ok(history) => call_history_tool(&history, name, arguments).unwrap_or_else(|| {
                refusal(
                    RefusalCode::InternalError,
                    format!("not a history tool: {name}"),
                )
            }),
            Err(refused) => ToolOutput::refusal(&refused),
        }
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
        } else if NOTES_TOOLS.contains(&name) {
            self.notes_call(name, arguments, meta)
        } else {
            return Err(RpcError::new(
                code::INVALID_PARAMS,
                format!("unknown tool: {}", super::protocol::shown(name)),
            ));
        };
        Ok(ToolText {
            text: output.text,
            is_error: output.is_error,
        })
    }
}
