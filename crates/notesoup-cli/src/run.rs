//! Parsing a host binary's command line and running a shared command.

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};

use crate::args::SharedCommand;
use crate::host::{CliHost, UsageError};
use crate::out::Out;

/// The widest help is wrapped to, however wide the terminal: longer lines
/// are hard to read.
const MAX_HELP_WIDTH: usize = 100;

/// The binary's whole command line `C` (its host commands and the shared
/// ones), named and versioned as host `H` names its binary, whatever the
/// executable's file is called. Help is wrapped to the terminal's width
/// (stdout's, else stderr's, else stdin's; else `$COLUMNS`, else 100), at
/// most `MAX_HELP_WIDTH` (100) columns: the same text on every binary for the
/// same width.
pub fn command<C: CommandFactory, H: CliHost>() -> clap::Command {
    C::command()
        .name(H::BIN)
        .bin_name(H::BIN)
        .version(H::VERSION)
        .max_term_width(MAX_HELP_WIDTH)
}

/// Parses the process's arguments as `C`. `--help` and `--version` print and
/// exit 0; a mistake is said on stderr and exits 2.
pub fn parse<C: CommandFactory + FromArgMatches, H: CliHost>() -> C {
    let mut matches = command::<C, H>().get_matches();
    C::from_arg_matches_mut(&mut matches)
        .unwrap_or_else(|error| error.format(&mut command::<C, H>()).exit())
}

/// Runs a shared command of binary `C` over `host`; the process's exit code.
pub fn run<C: CommandFactory, H: CliHost>(
    host: &mut H,
    shared: SharedCommand<H::SessionArgs, H::DreamerArgs>,
) -> ExitCode {
    let mut out = Out::new();
    let code = match shared {
        SharedCommand::Notes(args) => {
            let result = crate::notes::run(host, args, &mut out);
            settle::<H>(&mut out, "notes", result)
        }
        SharedCommand::Boot(args) => {
            let result = crate::boot::run(host, &args, &mut out);
            settle::<H>(&mut out, "boot", result)
        }
        SharedCommand::History(args) => {
            let result = crate::history::run(host, args, &mut out);
            settle::<H>(&mut out, "history", result)
        }
        SharedCommand::Report(args) => {
            let result = crate::report::run(host, args, &mut out);
            settle::<H>(&mut out, "report", result)
        }
        SharedCommand::Doctor(args) => {
            let result = crate::maintenance::doctor(host, args, &mut out);
            settle::<H>(&mut out, "doctor", result)
        }
        SharedCommand::Sync(args) => {
            let result = crate::sync::run::<H>(host, args, &mut out);
            settle::<H>(&mut out, "sync", result)
        }
        SharedCommand::Dream(args) => {
            let result = crate::maintenance::dream(host, args, &mut out);
            settle::<H>(&mut out, "dream", result)
        }
        SharedCommand::Completions { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut command::<C, H>(), H::BIN, &mut script);
            out.print(&String::from_utf8_lossy(&script));
            0
        }
        SharedCommand::Man => {
            let result = crate::pages::man_page(command::<C, H>()).map(|page| {
                out.print(&page);
                0
            });
            settle::<H>(&mut out, "man", result.map_err(anyhow::Error::from))
        }
    };
    ExitCode::from(out.finish(H::BIN, code))
}

/// A command's exit code: its own, or, when it failed, 1 (2 for a mistake
/// in how it was called) with the reason on stderr as `<bin> <command>:
/// <reason>`.
fn settle<H: CliHost>(out: &mut Out, name: &str, result: anyhow::Result<u8>) -> u8 {
    match result {
        Ok(code) => code,
        Err(error) => {
            out.warn(&format!("{} {name}: {error:#}", H::BIN));
            if error.downcast_ref::<UsageError>().is_some() {
                2
            } else {
                1
            }
        }
    }
}
