//! Host-neutral core of notesoup: the notes store and its five homes, the boot,
//! the history model, the budget policy, the shared tool operations, settings,
//! the dream, and the plumbing every host adapter shares (the capped line
//! reader and the bounded small-file reader).
//!
//! This crate is synchronous std code. It must never depend on a plugin
//! (`notesoup-pi`, `notesoup-claude`, `notesoup-dsh`), a host SDK, or an async
//! runtime or front end (`tokio`, `rmcp`, `clap`). `cargo xtask check-deps`
//! enforces this. Host words (command names, hook texts, host wire formats)
//! belong to the plugin that owns the host.

#![deny(missing_docs)]
#![warn(unreachable_pub)]

// The unit tests name the crate as other crates do.
#[cfg(test)]
extern crate self as notesoup_core;

pub mod boot;
pub mod budget;
pub mod dream;
pub mod durable;
mod git_tree;
pub mod history;
pub mod install;
pub mod notes;
pub mod plumbing;
pub mod settings;
pub mod sync;
pub mod tools;
mod wire;
