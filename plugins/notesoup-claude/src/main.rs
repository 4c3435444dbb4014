//! The `notesoup` binary: MCP server, hook handler and command line.

use std::process::ExitCode;

use clap::Parser;
use notesoup_claude::cli::{Cli, run};
use notesoup_claude::env::HostEnv;

/// See the crate manifest: the decode of a long transcript is allocation
/// bound.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let code = run(cli, HostEnv::from_process());
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}
