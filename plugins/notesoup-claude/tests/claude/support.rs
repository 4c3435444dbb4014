//! Shared helpers: fixtures recorded from Claude Code 2.1.332.

use std::path::PathBuf;

/// The first session of the recorded chain: startup, a Bash call, an MCP
/// `history_list` call, a reminder, a Stop block, `/compact`, then `/clear`.
pub const CHAIN_1: &str = "b692a2c7-03fa-4b17-808f-de9efe7f18df";
/// The second session: the chain after `/clear`, with an MCP
/// `history_windows` call.
pub const CHAIN_2: &str = "0eed47c1-e495-4b2e-94a8-752513f12e74";

/// A file under `tests/claude/fixtures/`.
pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/claude/fixtures")
        .join(name)
}
