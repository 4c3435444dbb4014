//! What notesoup says on Pi: notices, usage lines and tool descriptions.
//! Host words live here, not in core.

/// `/fresh-window` while notesoup is off.
pub const FRESH_WINDOW_REQUIRES_ON: &str = "notesoup: /fresh-window requires /notesoup on.";
/// `/fresh-window <text>` armed.
pub const FRESH_WINDOW_WITH_PROMPT: &str =
    "notesoup: after closing out notes, the agent continues with your prompt in a fresh window.";
/// A bare `/fresh-window` armed while idle.
pub const FRESH_WINDOW_IDLE: &str =
    "notesoup: the agent closes out its notes, then stops in a fresh window.";
/// A bare `/fresh-window` armed while the agent runs.
pub const FRESH_WINDOW_BUSY: &str = "notesoup: the reset commits when the run settles.";
/// A second `/fresh-window` for the same window.
pub const FRESH_WINDOW_PENDING: &str = "notesoup: a fresh-window request is already pending; keeping its original prompt and behavior.";
/// `/notesoup` with an argument other than `on` or `off`.
pub const NOTESOUP_USAGE: &str = "Usage: /notesoup [on|off]";
/// A manual `/compact` while notesoup manages the windows.
pub const COMPACT_CANCELLED: &str = "notesoup: /compact is off while notesoup manages context windows; use /fresh-window for a fresh window.";
/// `/tree` across a reset window.
pub const TREE_SUMMARY_SKIPPED: &str = "notesoup: skipped branch summary across a reset window; navigation continues without erased history.";
/// The warning became durable.
pub const CONTEXT_ALMOST_FULL: &str =
    "notesoup: context almost full; close out the current memory window.";

/// A verified reset.
pub fn memory_cleared(window_id: &str) -> String {
    format!("notesoup: memory cleared · {window_id}")
}

/// The boundary could not be built; the window stays.
pub fn reset_failed(error: &str) -> String {
    format!("notesoup: could not build reset ({error})")
}

/// A boot could not be built at session start or repair.
pub fn boot_failed(error: &str) -> String {
    format!("notesoup: could not build the notes boot ({error})")
}

/// Settings could not be read.
pub fn settings_unreadable(error: &str) -> String {
    format!("notesoup: could not read settings; using defaults ({error})")
}

/// A home could not be read while building a boot (once per window).
pub fn notes_index_incomplete(labels: &[&str]) -> String {
    format!(
        "notesoup: notes index incomplete for {}; notes_list can retry after recovery.",
        labels.join(", ")
    )
}

/// A reset window whose boot is not in the request.
pub fn missing_boot(window_id: &str) -> String {
    format!(
        "notesoup: active context window {window_id} has no visible boot; request cancelled safely. Use /fresh-window to start another window."
    )
}

/// The version gate.
pub fn requires_boundary_api(level: &str) -> String {
    format!(
        "notesoup requires Pi >= 0.87.0 (the boundary API: turn_end drafts, agent_before_settle, retain-none compaction, context_with_system); this host speaks the {level} extension API"
    )
}
