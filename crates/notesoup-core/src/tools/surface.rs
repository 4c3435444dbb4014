//! The one tool surface: a table of every tool notesoup offers (name,
//! description, parameter and output schemas, read-only or not, handler) and
//! one entry point that routes a call by name. Hosts register the table and
//! hand every call to [`call_tool`]; they keep no tool names, no argument
//! peeking and no unknown-tool error of their own.
//!
//! The two budget tools are host-neutral operations over [`BudgetHost`]:
//! the host says how many tokens remain and whether a reset can be asked
//! for; the texts and status strings are here.

use std::sync::OnceLock;

use schemars::JsonSchema;
use serde_json::{Value, json};

use super::history::{
    HistoryPage, HistoryReadData, HistoryWindowsData, history_list, history_read, history_search,
    history_windows,
};
use super::notes::{
    NotesListData, NotesReadData, NotesSearchData, NotesUpdateData, NotesWriteData, notes_list,
    notes_read, notes_search, notes_update, notes_write,
};
use super::schemas::{self, ToolSchema};
use super::{Refusal, RefusalCode, ToolOutput, parse_arguments};
use crate::history::History;
use crate::notes::NoteStore;

/// `get_context_remaining`.
pub const GET_CONTEXT_REMAINING: &str = "get_context_remaining";
/// `wipe_memory`.
pub const WIPE_MEMORY: &str = "wipe_memory";

/// The description of `get_context_remaining`.
pub const REMAINING_DESCRIPTION: &str = "How many tokens are left before this context window closes out (zero = wiped). Returns {\"remaining_tokens\": N}, or null when usage is unknown.";
/// The description of `wipe_memory`.
pub const WIPE_DESCRIPTION: &str = "Clear your in-context memory and start a fresh context window. Your session, notes, and history survive.";
/// `wipe_memory`'s answer while notesoup is off.
pub const WIPE_WHILE_OFF: &str = "notesoup is off (/notesoup on to enable)";

/// Which family a tool belongs to: what it needs from its host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolFamily {
    /// The notes tools, over the caller's [`NoteStore`].
    Notes,
    /// The history tools, over the calling session's decoded [`History`].
    History,
    /// `get_context_remaining` and `wipe_memory`, over a [`BudgetHost`].
    Budget,
}

/// One tool as every host registers it.
#[derive(Debug, Clone)]
pub struct ToolSpec {
    /// The name the model calls.
    pub name: &'static str,
    /// The model-facing description.
    pub description: String,
    /// JSON Schema of the parameters.
    pub input_schema: Value,
    /// JSON Schema of a successful result's structured content (`None` for
    /// the budget tools, which answer with plain JSON text).
    pub output_schema: Option<Value>,
    /// The tool changes nothing (hosts may mark it read-only).
    pub read_only: bool,
    /// Calls must run one at a time, in order (the writing tools).
    pub sequential: bool,
    /// What it needs from its host.
    pub family: ToolFamily,
    handler: Handler,
}

type Handler = fn(&mut dyn ToolHost, Value) -> ToolOutput;

/// What the tools need from the host that runs them. Each is asked for only
/// by the tools that use it, so a history call never opens the store and a
/// notes call never decodes the transcript.
pub trait ToolHost {
    /// The caller's notes store.
    fn notes(&mut self) -> Result<NoteStore, Refusal>;
    /// The calling session's decoded history.
    fn history(&mut self) -> Result<History, Refusal>;
    /// Runs a history tool over the calling session's history. A host that
    /// keeps a decoded history between calls lends it here instead of
    /// handing out a copy.
    fn with_history(&mut self, run: &mut dyn FnMut(&History) -> ToolOutput) -> ToolOutput {
        match self.history() {
            Ok(history) => run(&history),
            Err(refusal) => ToolOutput::refusal(&refusal),
        }
    }
    /// The host's budget; `None` on a host without the budget tools.
    fn budget(&mut self) -> Option<&mut dyn BudgetHost> {
        None
    }
}

/// What `wipe_memory` asked of the host's reset lifecycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResetRequest {
    /// A reset will follow this tool batch.
    Requested,
    /// This window already has one pending.
    AlreadyPending,
    /// notesoup is off; nothing will happen.
    Off,
}

/// The budget and reset side of a host.
pub trait BudgetHost {
    /// The countdown to the warning line (zero = wiped), `None` when usage
    /// is unknown.
    fn remaining_tokens(&mut self) -> Option<u64>;
    /// Asks for a reset at the end of this tool batch.
    fn request_reset(&mut self) -> ResetRequest;
}

/// Every tool in the order hosts list them: the notes tools, the history
/// tools, then the budget tools. Built once per process (the schemas are
/// generated), then shared.
pub fn tool_table() -> &'static [ToolSpec] {
    static TABLE: OnceLock<Vec<ToolSpec>> = OnceLock::new();
    TABLE.get_or_init(build_table)
}

/// The tool called `name`, if notesoup offers one.
pub fn tool_spec(name: &str) -> Option<&'static ToolSpec> {
    tool_table().iter().find(|tool| tool.name == name)
}

fn build_table() -> Vec<ToolSpec> {
    let mut table = Vec::with_capacity(11);
    for (schema, output, handler) in notes_entries() {
        table.push(spec(schema, output, ToolFamily::Notes, handler));
    }
    for (schema, output, handler) in history_entries() {
        table.push(spec(schema, output, ToolFamily::History, handler));
    }
    table.push(ToolSpec {
        name: GET_CONTEXT_REMAINING,
        description: REMAINING_DESCRIPTION.to_owned(),
        input_schema: no_parameters(),
        output_schema: None,
        read_only: true,
        sequential: false,
        family: ToolFamily::Budget,
        handler: context_remaining,
    });
    table.push(ToolSpec {
        name: WIPE_MEMORY,
        description: WIPE_DESCRIPTION.to_owned(),
        input_schema: no_parameters(),
        output_schema: None,
        read_only: false,
        sequential: true,
        family: ToolFamily::Budget,
        handler: wipe_memory,
    });
    table
}

/// The tools a host offers: every tool, or without the budget family on a
/// host that keeps no budget.
pub fn tools_for(with_budget: bool) -> impl Iterator<Item = &'static ToolSpec> {
    tool_table()
        .iter()
        .filter(move |tool| with_budget || tool.family != ToolFamily::Budget)
}

/// Runs the tool `name` with `arguments` for `host`. An unknown name, bad
/// arguments, or a budget tool on a host without a budget are refusals.
pub fn call_tool(host: &mut dyn ToolHost, name: &str, arguments: Value) -> ToolOutput {
    match tool_spec(name) {
        Some(tool) => (tool.handler)(host, arguments),
        None => ToolOutput::refusal(&Refusal::new(
            RefusalCode::UnknownTool,
            format!("unknown tool {:?}", clip(name, 64)),
        )),
    }
}

/// At most `max` characters of a name the caller sent, marked when cut.
fn clip(name: &str, max: usize) -> String {
    match name.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &name[..end]),
        None => name.to_owned(),
    }
}

type Entry = (ToolSchema, Value, Handler);

fn notes_entries() -> Vec<Entry> {
    let handlers: [(Value, Handler); 5] = [
        (output_schema::<NotesWriteData>(), |host, args| {
            notes_call(host, args, |store, p| notes_write(store, &p))
        }),
        (output_schema::<NotesUpdateData>(), |host, args| {
            notes_call(host, args, |store, p| {
                notes_update(store, &p, &super::notes::note_line_diff)
            })
        }),
        (output_schema::<NotesReadData>(), |host, args| {
            notes_call(host, args, |store, p| notes_read(store, &p))
        }),
        (output_schema::<NotesListData>(), |host, args| {
            notes_call(host, args, |store, p| notes_list(store, &p))
        }),
        (output_schema::<NotesSearchData>(), |host, args| {
            notes_call(host, args, |store, p| notes_search(store, &p))
        }),
    ];
    schemas::notes()
        .into_iter()
        .zip(handlers)
        .map(|(schema, (output, handler))| (schema, output, handler))
        .collect()
}

fn history_entries() -> Vec<Entry> {
    let handlers: [(Value, Handler); 4] = [
        (output_schema::<HistoryWindowsData>(), |host, args| {
            history_call(host, args, |history, p| history_windows(history, &p))
        }),
        (output_schema::<HistoryPage>(), |host, args| {
            history_call(host, args, |history, p| history_list(history, &p))
        }),
        (output_schema::<HistoryPage>(), |host, args| {
            history_call(host, args, |history, p| history_search(history, &p))
        }),
        (output_schema::<HistoryReadData>(), |host, args| {
            history_call(host, args, |history, p| history_read(history, &p))
        }),
    ];
    schemas::history()
        .into_iter()
        .zip(handlers)
        .map(|(schema, (output, handler))| (schema, output, handler))
        .collect()
}

fn spec(schema: ToolSchema, output: Value, family: ToolFamily, handler: Handler) -> ToolSpec {
    ToolSpec {
        name: schema.name,
        description: schema.description,
        input_schema: schema.input_schema,
        output_schema: Some(output),
        read_only: !schema.sequential,
        sequential: schema.sequential,
        family,
        handler,
    }
}

/// Arguments are parsed before the store is opened: a malformed call costs
/// no disk access.
fn notes_call<P: serde::de::DeserializeOwned>(
    host: &mut dyn ToolHost,
    arguments: Value,
    run: impl FnOnce(&NoteStore, P) -> ToolOutput,
) -> ToolOutput {
    let params = match parse_arguments(arguments) {
        Ok(params) => params,
        Err(refusal) => return ToolOutput::refusal(&refusal),
    };
    match host.notes() {
        Ok(store) => run(&store, params),
        Err(refusal) => ToolOutput::refusal(&refusal),
    }
}

/// Arguments are parsed before the transcript is decoded.
fn history_call<P: serde::de::DeserializeOwned>(
    host: &mut dyn ToolHost,
    arguments: Value,
    run: impl FnOnce(&History, P) -> ToolOutput,
) -> ToolOutput {
    let params = match parse_arguments(arguments) {
        Ok(params) => params,
        Err(refusal) => return ToolOutput::refusal(&refusal),
    };
    let mut params = Some(params);
    let mut run = Some(run);
    host.with_history(&mut |history| match (params.take(), run.take()) {
        (Some(params), Some(run)) => run(history, params),
        _ => ToolOutput::refusal(&Refusal::new(
            RefusalCode::InternalError,
            "a history tool ran twice",
        )),
    })
}

fn no_budget() -> ToolOutput {
    ToolOutput::refusal(&Refusal::new(
        RefusalCode::UnknownTool,
        "this host keeps no context budget",
    ))
}

/// `{"remaining_tokens": N | null}`.
fn context_remaining(host: &mut dyn ToolHost, arguments: Value) -> ToolOutput {
    if let Err(refusal) = parse_arguments::<NoParameters>(arguments) {
        return ToolOutput::refusal(&refusal);
    }
    match host.budget() {
        Some(budget) => ToolOutput::plain_json(
            &json!({"remaining_tokens": budget.remaining_tokens()}),
            false,
        ),
        None => no_budget(),
    }
}

/// `{"status": "rollover_requested" | "rollover_already_pending"}` (ending
/// the tool batch), or `{"error": …}` while notesoup is off.
fn wipe_memory(host: &mut dyn ToolHost, arguments: Value) -> ToolOutput {
    if let Err(refusal) = parse_arguments::<NoParameters>(arguments) {
        return ToolOutput::refusal(&refusal);
    }
    let Some(budget) = host.budget() else {
        return no_budget();
    };
    match budget.request_reset() {
        ResetRequest::Requested => {
            ToolOutput::plain_json(&json!({"status": "rollover_requested"}), true)
        }
        ResetRequest::AlreadyPending => {
            ToolOutput::plain_json(&json!({"status": "rollover_already_pending"}), true)
        }
        ResetRequest::Off => ToolOutput::plain_json(&json!({"error": WIPE_WHILE_OFF}), false),
    }
}

/// The budget tools take no parameters; an unknown one is refused like any
/// tool's.
#[derive(serde::Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoParameters {}

fn no_parameters() -> Value {
    json!({"type": "object", "properties": {}, "additionalProperties": false})
}

fn output_schema<T: JsonSchema>() -> Value {
    schemas::input_schema::<T>()
}
