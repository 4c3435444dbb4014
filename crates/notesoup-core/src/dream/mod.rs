//! Dream: tidying a notes home offline. Lock, gates, jail, the wastebasket
//! rule's delete, Git audit, doctor, report and the run itself; the agent that
//! dreams is supplied by a host through [`DreamRunner`].
//!
//! Hosts print what these functions return ([`DreamOutput`]); nothing here
//! writes to stdout or stderr or reads the environment.

mod audit;
mod deadline;
mod doctor;
mod error;
mod gates;
mod jail;
mod lines;
mod lock;
mod report;
mod run;
mod scan;
mod surface;
mod tools;
mod tree;
mod wastebasket;

pub use audit::{
    AUDIT_EMAIL, AUDIT_NAME, AuditCommit, HistorySecret, LOCK_EXCLUDE, PurgeReport, audit_commit,
    purge_secrets, secrets_in_history,
};
pub use deadline::{Deadline, DreamerPipes, Ended};
pub use doctor::{
    CleanReport, DoctorFinding, DoctorReport, MovedEntry, STALE_TEMP_AGE, clean_temp_files, doctor,
};
pub use error::DreamError;
pub use gates::{DEFAULT_MIN_HOURS, DEFAULT_MIN_SESSIONS, Gate, material_gate, time_gate};
pub use jail::{jail_read_path, jail_write_path};
pub use lines::{
    DreamAnswer, DreamCall, DreamErrorCode, DreamProtocolError, DreamToolParams, DreamToolResult,
    answer_dream_line, serve_dream_tools,
};
pub use lock::{
    DreamLock, LAST_RUN_FILE, LOCK_FILE, LockState, iso_utc, last_run, lock_state,
    remove_stale_lock, run_stamp,
};
pub use report::{audit_failure_section, finish_dream, render_report, report_path};
pub use run::{
    DreamOptions, DreamRequest, DreamResult, DreamRunner, DreamTool, DreamWrite, run_dream,
    run_dream_with,
};
pub use surface::{DreamToolSpec, call_dream_tool, dream_tool_table};
pub use tools::{DreamTools, GrepMatch, TextEdit, delete_crumpled_note};
pub use wastebasket::WASTEBASKET_DAYS;

/// The canonical dream playbook, the dreamer's single prompt. Every host
/// ships this exact text as `playbook.md`.
pub const PLAYBOOK: &str = include_str!("../../assets/playbook.md");
/// The canonical `skills/dream/SKILL.md`; it reads `../../playbook.md`.
pub const DREAM_SKILL: &str = include_str!("../../assets/skills/dream/SKILL.md");
/// The canonical `skills/memory/SKILL.md`.
pub const MEMORY_SKILL: &str = include_str!("../../assets/skills/memory/SKILL.md");

/// The packaged files as `(path relative to the package root, content)`, for
/// hosts that lay out a package directory.
pub const PACKAGED_FILES: [(&str, &str); 3] = [
    ("playbook.md", PLAYBOOK),
    ("skills/dream/SKILL.md", DREAM_SKILL),
    ("skills/memory/SKILL.md", MEMORY_SKILL),
];

/// Which stream a line goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

/// One line a host prints (without its newline).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputLine {
    /// Where it goes.
    pub stream: Stream,
    /// The text.
    pub text: String,
}

impl OutputLine {
    /// A stdout line.
    pub fn stdout(text: impl Into<String>) -> Self {
        OutputLine {
            stream: Stream::Stdout,
            text: text.into(),
        }
    }

    /// A stderr line.
    pub fn stderr(text: impl Into<String>) -> Self {
        OutputLine {
            stream: Stream::Stderr,
            text: text.into(),
        }
    }
}

/// The result of a dream command: its exit code and the lines to print, in
/// order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DreamOutput {
    /// The process exit code.
    pub exit_code: i32,
    /// The lines, stdout and stderr interleaved as they happened.
    pub lines: Vec<OutputLine>,
}
