//! The tools `notesoup mcp` serves: core's operations and schemas, resolved
//! against the calling Claude session. Results are text only.

use std::path::PathBuf;

use notesoup_core::history::History;
use notesoup_core::notes::{NoteStore, project_key};
use notesoup_core::tools::history::{history_list, history_read, history_search, history_windows};
use notesoup_core::tools::notes::{
    NotesListParams, NotesReadParams, NotesSearchParams, NotesUpdateParams, NotesWriteParams,
    note_kind_diff, notes_list, notes_read, notes_search, notes_update, notes_write,
};
use notesoup_core::tools::{Refusal, RefusalCode, ToolOutput, parse_arguments, schemas};
use serde::de::DeserializeOwned;
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

    fn history_call(&self, name: &str, arguments: Value, meta: &CallMeta) -> ToolOutput {
        match name {
            "history_windows" => self.with_history(arguments, meta, history_windows),
            "history_list" => self.with_history(arguments, meta, history_list),
            "history_search" => self.with_history(arguments, meta, history_search),
            _ => self.with_history(arguments, meta, history_read),
        }
    }

    fn notes_call(&self, name: &str, arguments: Value, meta: &CallMeta) -> ToolOutput {
        match name {
            "notes_write" => self.with_store(
                arguments,
                meta,
                |p: &NotesWriteParams| vec![&p.address],
                notes_write,
            ),
            "notes_update" => self.with_store(
                arguments,
                meta,
                |p: &NotesUpdateParams| {
                    let mut addresses = vec![p.address.as_str()];
                    addresses.extend(p.rename_to.as_deref());
                    addresses
                },
                |store, params| notes_update(store, params, &note_kind_diff),
            ),
            "notes_read" => self.with_store(
                arguments,
                meta,
                |p: &NotesReadParams| vec![&p.address],
                notes_read,
            ),
            "notes_list" => {
                self.with_store(arguments, meta, |_: &NotesListParams| vec![], notes_list)
            }
            _ => self.with_store(
                arguments,
                meta,
                |_: &NotesSearchParams| vec![],
                notes_search,
            ),
        }
    }

    /// Parses the arguments, opens the caller's notes store, runs `op`.
    /// Without a known session only the durable homes are served: an
    /// operation on a session address is refused.
    fn with_store<P: DeserializeOwned>(
        &self,
        arguments: Value,
        meta: &CallMeta,
        addresses: fn(&P) -> Vec<&str>,
        op: impl FnOnce(&NoteStore, &P) -> ToolOutput,
    ) -> ToolOutput {
        let params = match parse_arguments::<P>(arguments) {
            Ok(params) => params,
            Err(refusal) => return ToolOutput::refusal(&refusal),
        };
        let caller = match self.caller(meta) {
            Ok(caller) => caller.map(|(state, _)| state),
            Err(error) => return refusal(RefusalCode::IoError, error),
        };
        let (session, project_key) = match &caller {
            Some(state) => (
                Some(state.notes_session_id.as_str()),
                state.project_key.as_str(),
            ),
            None => (None, self.project_key.as_str()),
        };
        match store::open(&self.env, session, project_key, &addresses(&params)) {
            Ok(store) => op(&store, &params),
            Err(refused) => refused,
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

/// Names of the notes tools.
const NOTES_TOOLS: [&str; 5] = [
    "notes_write",
    "notes_update",
    "notes_read",
    "notes_list",
    "notes_search",
];

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
        } else if NOTES_TOOLS.contains(&name) {
            self.notes_call(name, arguments, meta)
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
