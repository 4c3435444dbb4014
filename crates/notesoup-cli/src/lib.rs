//! The commands every notesoup host binary shares, written once: `notes`,
//! `boot`, `history`, `report`, `doctor` (also `dream doctor`), `sync`, `dream`, `completions
//! <shell>`, `man`, and `--version`.
//!
//! A host's binary (`notesoup` for Claude Code, `notesoup-pi`,
//! `notesoup-dsh`) flattens [`SharedCommand`] into its own clap command
//! line next to its host commands, parses with [`parse`] and hands a shared
//! command to [`run`] with its [`CliHost`]: the host says only what differs
//! (how a session is found and its tools opened, how its boot is rendered,
//! its dreamer); the flags, help texts, output lines and exit codes are this
//! crate's, so they are the same on every binary.
//!
//! Exit codes: 0 done (a dream skipped by its gates too), 1 failed (a
//! refusal, a finding, a failed dream), 2 called wrongly (clap's own, and
//! [`UsageError`]).
//!
//! This crate depends on `notesoup-core` only, never on a plugin; core never
//! depends on it (`cargo xtask check-deps` enforces both).

// Tests may unwrap: a panic is how a test fails.
#![cfg_attr(test, allow(clippy::unwrap_used))]

mod args;
mod boot;
mod hints;
mod history;
mod host;
mod maintenance;
mod notes;
mod out;
mod pages;
mod report;
mod run;
mod sync;
mod target;
mod tools;

pub use args::{
    BootArgs, DoctorArgs, DoctorCommand, DreamArgs, DreamSubcommand, DreamToolsArgs, HistoryArgs,
    HistoryCommand, NoHostArgs, NotesArgs, NotesCommand, PageArgs, ReportArgs, SeqOrParams,
    SessionArgs, SharedCommand, SyncArgs,
};
pub use boot::boot_stats;
pub use host::{
    BootView, CliHost, HostDreamer, Purpose, Target, UsageError, files_oldest_first, in_parallel,
    no_session_recorded,
};
pub use out::Out;
pub use pages::man_page;
pub use report::{
    BudgetLines, NoteText, NoteTexts, ProjectReport, SessionReport, SessionRow, TextSource, Trend,
    render_all_html, render_all_table, render_html, render_table,
};
pub use run::{command, parse, run};
pub use tools::CommandTools;
