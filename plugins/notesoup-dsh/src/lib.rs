//! notesoup for dsh (DeepSeek Harness): the `notesoup-dsh serve` JSON-lines
//! sidecar, its decisions, and the embedded thin Cordis bundle.
//!
//! Depends on `notesoup-core` only; it must never depend on another plugin
//! (`notesoup-pi`, `notesoup-claude`). `cargo xtask check-deps` enforces this.
