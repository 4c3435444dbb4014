//! Parsing a host binary's command line and running a shared command.

use std::path::Path;
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};
use notesoup_core::tools::ToolOutput;

use crate::args::{SessionArgs, SharedCommand};
use crate::hints::cli_text;
use crate::host::{CliHost, Target, UsageError};
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
        SharedCommand::Doctor(args) => {
            let result = crate::maintenance::doctor(host, args, &mut out);
            settle::<H>(&mut out, "doctor", result)
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

/// A tool's result as the command's: its text (in this command line's
/// words: its hints and a refusal's message as the flags to type) or its
/// compact JSON (the tool's own), on stdout; a refusal on stderr, exit 1.
pub(crate) fn tool_result(out: &mut Out, output: ToolOutput, as_json: bool) -> u8 {
    let shown = if as_json {
        output.json.as_str().to_owned()
    } else {
        cli_text(&output)
    };
    if output.is_error {
        out.warn(&shown);
        1
    } else {
        out.print(&shown);
        0
    }
}

/// The target the session flags name: `--cwd` checked to be a directory and
/// made absolute, `--notes-home` made absolute, else the host's notes root;
/// `session` (the flag, or `history`'s FILE) as given.
pub(crate) fn target<'a, H: CliHost>(
    host: &H,
    args: &'a SessionArgs<H::SessionArgs>,
    session: Option<&'a str>,
) -> anyhow::Result<Target<'a, H::SessionArgs>> {
    let cwd = match &args.cwd {
        Some(dir) => {
            let absolute = absolute("--cwd", dir)?;
            if !absolute.is_dir() {
                anyhow::bail!("--cwd {}: not a directory", dir.display());
            }
            Some(absolute)
        }
        None => None,
    };
    let notes_root = match &args.notes_home {
        Some(dir) => Some(absolute("--notes-home", dir)?),
        None => host.notes_root(),
    };
    Ok(Target {
        cwd,
        session: session.or(args.session.as_deref()),
        notes_root,
        host: &args.host,
    })
}

fn absolute(flag: &str, path: &Path) -> anyhow::Result<std::path::PathBuf> {
    std::path::absolute(path).map_err(|error| anyhow::anyhow!("{flag} {}: {error}", path.display()))
}
