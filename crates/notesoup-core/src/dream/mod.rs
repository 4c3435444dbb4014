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
mod lock;
mod protocol;
mod report;
mod result;
mod run;
mod scan;
mod surface;
#[cfg(test)]
mod tests;
mod tools;
mod tree;
mod wastebasket;

pub use audit::{AuditedText, audit_commit, audited_texts, purge_secrets};
pub(crate) use deadline::Deadline;
pub use deadline::Ended;
pub use doctor::{clean_temp_files, doctor};
pub(crate) use error::DreamError;
pub(crate) use lock::LOCK_FILE;
pub use protocol::serve_dream_tools;
pub use result::{DreamResult, DreamTool, DreamWrite};
pub(crate) use run::run_dream_with;
pub use run::{DreamOptions, DreamRequest, DreamRunner, run_dream};
pub use surface::{call_dream_tool, dream_tool_table};
pub use tools::DreamTools;

#[cfg(test)]
pub(crate) use audit::AuditCommit;
// What the area's own tests name beside the public surface.
#[cfg(test)]
pub(crate) use audit::{AUDIT_EMAIL, AUDIT_NAME};
#[cfg(test)]
pub(crate) use gates::{Gate, material_gate, time_gate};
#[cfg(test)]
pub(crate) use jail::{jail_read_path, jail_write_path};
#[cfg(test)]
pub(crate) use lock::{
    DreamLock, LAST_RUN_FILE, LockState, iso_utc, last_run, lock_state, remove_stale_lock,
    run_stamp,
};
#[cfg(test)]
pub(crate) use report::render_report;
#[cfg(test)]
pub(crate) use tools::{GrepMatch, TextEdit, delete_crumpled_note};

/// The canonical dream playbook, the dreamer's single prompt.
const PLAYBOOK: &str = include_str!("../../assets/playbook.md");

/// A file every host ships byte for byte in its package: the playbook and
/// the two skills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DreamAsset {
    /// The dream playbook, the dreamer's single prompt (`playbook.md`).
    Playbook,
    /// `skills/dream/SKILL.md`; it reads `../../playbook.md`.
    DreamSkill,
    /// `skills/memory/SKILL.md`.
    MemorySkill,
}

impl DreamAsset {
    /// Every packaged file, for hosts that lay out a package directory.
    pub const ALL: [DreamAsset; 3] = [
        DreamAsset::Playbook,
        DreamAsset::DreamSkill,
        DreamAsset::MemorySkill,
    ];

    /// The file's path relative to the package root.
    pub const fn path(self) -> &'static str {
        match self {
            DreamAsset::Playbook => "playbook.md",
            DreamAsset::DreamSkill => "skills/dream/SKILL.md",
            DreamAsset::MemorySkill => "skills/memory/SKILL.md",
        }
    }

    /// The file's canonical text.
    pub const fn text(self) -> &'static str {
        match self {
            DreamAsset::Playbook => PLAYBOOK,
            DreamAsset::DreamSkill => include_str!("../../assets/skills/dream/SKILL.md"),
            DreamAsset::MemorySkill => include_str!("../../assets/skills/memory/SKILL.md"),
        }
    }
}

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
