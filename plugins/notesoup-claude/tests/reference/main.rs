//! Conformance with the real reference hosts: Claude Code 2.1.332 and the
//! Python MCP SDK 2.3.0. Opt-in (feature `reference-hosts`), because the hosts
//! are large installs:
//!
//! ```sh
//! eval "$(cargo xtask claude-hosts)"
//! cargo test -p notesoup-claude --features reference-hosts --test reference
//! ```
//!
//! A missing host fails the test with the command that installs it.

#![allow(clippy::unwrap_used)]

mod claude;
mod compactions;
mod dream;
mod fresh_window;
mod history_records;
mod hosts;
mod inspector;
mod plugin;
mod python_client;
mod report_page;
mod reset_mod;
mod session;
mod structured;
#[path = "../claude/support.rs"]
#[allow(dead_code)]
mod support;
mod sync;
