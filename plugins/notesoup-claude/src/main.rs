//! The `notesoup` binary: MCP server, hook handler and command line.

use std::process::ExitCode;

/// See the crate manifest: the decode of a long transcript is allocation
/// bound.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    notesoup_claude::cli::main()
}
