//! The reference Pi host: Pi 1.6.0's session manager, agent loop and
//! boundary rules in Rust, with a scripted model, so an extension runs real
//! sessions offline, in a temporary directory, writing real v3 JSONL.
//!
//! Depends on `notesoup-core` and the Pi adapter `notesoup-pi` only; of
//! the other crates only `tests/notesoup-e2e` may depend on it (it never
//! ships inside the adapter, whose own tests use no reference host). `cargo
//! xtask check-deps` enforces this. This crate's tests are the scripted-loop
//! tests of the Pi extension.
//! The `notesoup-pi-reference` binary runs it: `demo` and the scripted
//! `dream --script FILE`.
//!
//! - [`SessionManager`]: the v3 file, lazy flush, 8-hex ids, the leaf.
//! - [`HostState`]: `PiHost` (queues, notices, settings, usage) and the
//!   event log.
//! - [`Harness`]: the loop (prompts, commands, steering and follow-ups,
//!   abort, tools, `turn_end` / `agent_before_settle` / `agent_settled`,
//!   tree navigation, compaction hooks, reopening from disk).
//! - [`ScriptedModel`]: steps of text, tool calls, errors and aborts, usage
//!   at chars/4.
//!
//! - [`ReferenceDreamHost`]: the dreamer's in-memory session over the
//!   scripted model (core's `DreamRunner`, with core's dream tool table and
//!   router).
//!
//! What it does not do: generate compaction or branch summaries (an
//! uncancelled compaction is logged, not run; a requested tree summary the
//! extension does not supply is a fixed text), retry provider errors, or
//! run more than one extension.

mod agent;
mod clock;
mod dream;
mod host;
mod model;
mod session;

pub use agent::{Harness, HostTool, HostToolFn};
pub use clock::{Clock, IdSource, iso};
pub use dream::{DreamSessionRecord, ReferenceDreamHost, parse_dream_script};
pub use host::{HostEvent, HostState, Notice, ProviderRequest, entry_kind};
pub use model::{ModelRequest, ScriptedModel, ScriptedReply, Step, UserAction, message_text};
pub use session::SessionManager;
