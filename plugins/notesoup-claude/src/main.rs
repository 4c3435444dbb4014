//! The `notesoup` binary: MCP server, hook handler and command line.

use std::process::ExitCode;

use notesoup_claude::cli::{ClaudeCli, Cli, run};
use notesoup_claude::env::HostEnv;

/// See the crate manifest: the decode of a long transcript is allocation
/// bound.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = notesoup_cli::parse::<Cli, ClaudeCli>();
    run(cli, HostEnv::from_process())
}
