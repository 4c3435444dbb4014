//! The tools' names as the agent sees them, written once for the tests of
//! core and of every host that checks which tools it offers.

/// The notes tools, in the order every host lists them.
pub const NOTES_TOOLS: [&str; 5] = [
    "notes_write",
    "notes_update",
    "notes_read",
    "notes_list",
    "notes_search",
];

/// The history tools, listed after the notes tools.
pub const HISTORY_TOOLS: [&str; 4] = [
    "history_windows",
    "history_list",
    "history_search",
    "history_read",
];

/// The context tools a host that manages context windows offers after the
/// shared ones.
pub const CONTEXT_TOOLS: [&str; 2] = ["get_context_remaining", "wipe_memory"];

/// The shared tools every host lists: the notes tools, then the history
/// tools.
pub fn shared_tools() -> Vec<&'static str> {
    [&NOTES_TOOLS[..], &HISTORY_TOOLS[..]].concat()
}
