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

pub mod estimate;
pub mod host;
pub mod json;
pub mod projection;
pub mod session;
