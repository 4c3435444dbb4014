//! Cross-host end-to-end tests: Claude Code's MCP server and hooks, the dsh
//! sidecar and the Pi extension on its reference host, all on one notes root
//! in a temporary directory.

// Tests may unwrap: a panic is how a test fails.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod cli;
mod docs_paths;
mod hosts;
mod shared_notes;
mod tool_schemas;
mod type_names;
