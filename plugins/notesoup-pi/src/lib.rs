//! notesoup as a Pi extension: the `PiExtension`/`PiHost` boundary a Rust Pi
//! host embeds, Pi's session data model, the reset lifecycle and Pi history
//! decoding.
//!
//! Depends on `notesoup-core` only; it must never depend on another plugin
//! (`notesoup-claude`, `notesoup-dsh`). `cargo xtask check-deps` enforces this.
