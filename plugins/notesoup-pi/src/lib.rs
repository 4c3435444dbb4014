//! notesoup as a Pi extension: the `PiExtension`/`PiHost` boundary a Rust Pi
//! host embeds, Pi's session data model, the reset lifecycle and Pi history
//! decoding.
//!
//! Depends on `notesoup-core` only; it must never depend on another plugin
//! (`notesoup-claude`, `notesoup-dsh`). `cargo xtask check-deps` enforces this.
//!
//! - [`session`]: session file v3 types, a lossless reader and writer, the tree.
//! - [`projection`]: Pi's context building (`buildContextEntries`,
//!   `buildSessionProjection`, `convertToLlm`) and the legacy marker slice.
//! - [`estimate`]: Pi's two token estimators.
//! - [`json`]: JSON exactly as JavaScript writes it.
//! - [`host`]: the `PiExtension` / `PiHost` boundary and Pi's event types.
//! - [`bridge`]: `notesoup-pi serve`, the sidecar the Pi package talks to:
//!   its JSON-lines protocol and a `PiHost` that mirrors real Pi's session.
//! - [`reset`]: the reset lifecycle: reducer, windows, boundaries.
//! - [`extension`]: the notesoup extension (`Notesoup`, a `PiExtension`).
//! - [`dreamer`]: `notesoup-pi dream`'s dreamer, real Pi holding only the
//!   jailed dream tools, which [`dream_tools`] serves.
//! - [`history`]: Pi history decoding into core's history model.
//! - [`overflow`]: pi-ai's context-overflow detection.
//! - [`cli`]: the `notesoup-pi` command ([`cli::main`]), which the binary
//!   of that name runs.
//!
//! The reference Pi host that drives the scripted-loop tests and the demo is
//! its own crate, `notesoup-pi-testkit` (next to this one).

pub mod bridge;
pub mod cli;
pub mod dream_tools;
pub mod dreamer;
pub mod estimate;
pub mod extension;
pub mod history;
pub mod host;
pub mod json;
pub mod overflow;
pub mod projection;
pub mod reset;
pub mod session;
