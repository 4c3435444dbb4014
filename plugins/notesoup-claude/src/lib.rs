//! notesoup as a Claude Code plugin: the library behind the `notesoup` binary
//! (stdio MCP server, hooks, human CLI) and Claude Code transcript decoding.
//!
//! Depends on `notesoup-core` only; it must never depend on another plugin
//! (`notesoup-pi`, `notesoup-dsh`). `cargo xtask check-deps` enforces this.
