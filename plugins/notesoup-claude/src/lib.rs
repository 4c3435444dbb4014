//! notesoup as a Claude Code plugin: the library behind the `notesoup` binary
//! (stdio MCP server, hooks, human CLI) and Claude Code transcript decoding.
//!
//! Depends on `notesoup-core` only; it must never depend on another plugin
//! (`notesoup-pi`, `notesoup-dsh`). `cargo xtask check-deps` enforces this.
//! Everything host-neutral (notes, boot, budget texts, history paging, tool
//! rendering) is core's; this crate only speaks Claude Code.

// Tests may unwrap: a panic is how a test fails.
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod boot;
pub mod budget;
pub mod cli;
pub mod dream;
pub mod env;
pub mod files;
pub mod hook;
pub mod install;
pub mod mcp;
pub mod names;
pub mod settings;
pub mod shown;
pub mod state;
pub mod tools;
pub mod transcript;
pub mod window;
