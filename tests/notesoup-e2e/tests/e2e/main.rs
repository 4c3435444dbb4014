//! Cross-host end-to-end tests: Claude Code's MCP server and hooks, the dsh
//! sidecar and the Pi extension on its reference host, all on one notes root
//! in a temporary directory.

// Tests may unwrap: a panic is how a test fails.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod cli;
mod docs_paths;
mod hosts;
#[cfg(feature = "npm-dist")]
mod npm_dist;
mod shared_notes;
mod tool_schemas;
mod type_names;

/// The Pi adapter's real-Pi harness (the driver of Pi's own agent loop),
/// shared rather than copied; the npm install test runs it on the
/// installed package.
#[cfg(feature = "npm-dist")]
#[allow(dead_code)]
#[path = "../../../../plugins/notesoup-pi/tests/real_pi/support.rs"]
mod pi_support;

/// The harness's `notesoup-pi`: none of this checkout's. The install test
/// points it at nothing, so only the installed package's sidecar can serve.
#[cfg(feature = "npm-dist")]
fn sidecar() -> std::path::PathBuf {
    std::path::PathBuf::from("/nonexistent/notesoup-pi")
}
