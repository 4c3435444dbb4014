//! Calling a tool by name with JSON arguments, for hosts that receive calls
//! that way (an MCP server, the dsh protocol).

use serde_json::Value;

use super::history::{history_list, history_read, history_search, history_windows};
use super::notes::{notes_list, notes_read, notes_search, notes_update, notes_write};
use super::{ToolOutput, parse_arguments};
use crate::history::History;
use crate::notes::{Change, NoteStore};

/// The history tool names.
pub const HISTORY_TOOLS: [&str; 4] = [
    "history_windows",
    "history_list",
    "history_search",
    "history_read",
];

/// The notes tool names.
pub const NOTES_TOOLS: [&str; 5] = [
    "notes_write",
    "notes_update",
    "notes_read",
    "notes_list",
    "notes_search",
];

/// Runs the history tool `name` with `arguments`; `None` when `name` is not
/// a history tool (so a host decodes its transcript only for these names,
/// checked with [`HISTORY_TOOLS`]). Bad arguments are an `invalid_arguments`
/// refusal.
pub fn call_history_tool(history: &History, name: &str, arguments: Value) -> Option<ToolOutput> {
    let output = match name {
        "history_windows" => parse_arguments(arguments).map(|p| history_windows(history, &p)),
        "history_list" => parse_arguments(arguments).map(|p| history_list(history, &p)),
        "history_search" => parse_arguments(arguments).map(|p| history_search(history, &p)),
        "history_read" => parse_arguments(arguments).map(|p| history_read(history, &p)),
        _ => return None,
    };
    Some(output.unwrap_or_else(|refusal| ToolOutput::refusal(&refusal)))
}

/// Runs the notes tool `name` with `arguments`, rendering update diffs with
/// `diff`; `None` when `name` is not a notes tool. Bad arguments are an
/// `invalid_arguments` refusal.
pub fn call_notes_tool(
    store: &NoteStore,
    name: &str,
    arguments: Value,
    diff: &dyn Fn(&Change) -> String,
) -> Option<ToolOutput> {
    let output = match name {
        "notes_write" => parse_arguments(arguments).map(|p| notes_write(store, &p)),
        "notes_update" => parse_arguments(arguments).map(|p| notes_update(store, &p, diff)),
        "notes_read" => parse_arguments(arguments).map(|p| notes_read(store, &p)),
        "notes_list" => parse_arguments(arguments).map(|p| notes_list(store, &p)),
        "notes_search" => parse_arguments(arguments).map(|p| notes_search(store, &p)),
        _ => return None,
    };
    Some(output.unwrap_or_else(|refusal| ToolOutput::refusal(&refusal)))
}
