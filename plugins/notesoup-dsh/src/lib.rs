//! notesoup for dsh (DeepSeek Harness): the `notesoup-dsh serve` JSON-lines
//! sidecar, its decisions, and the embedded thin Cordis bundle.
//!
//! The sidecar owns every decision; the bundle only forwards dsh events and
//! performs the writes the sidecar plans. See `docs/dsh.md`.
//!
//! Depends on `notesoup-core` only; it must never depend on another plugin
//! (`notesoup-pi`, `notesoup-claude`). `cargo xtask check-deps` enforces this.

pub mod boot;
pub mod budget;
pub mod bundle;
pub mod cli;
pub mod decode;
pub mod dream;
pub mod dream_log;
pub mod dream_tools;
pub mod history;
pub mod messages;
pub mod mirror;
pub mod protocol;
pub mod reset;
pub mod server;
pub mod settings;
pub mod tools;
pub mod window;
