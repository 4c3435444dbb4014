//! `notesoup-pi-reference`: the reference Pi host's commands.
//!
//! - `notesoup-pi-reference demo [--notes-home DIR] [--keep]` runs the
//!   embedded scenario as a real session in a temporary directory and
//!   narrates it: what the model saw, the window ids, the JSONL entries
//!   written and the notes on disk. Everything printed comes from that run.
//! - `notesoup-pi-reference dream [FLAGS] --script FILE` runs core's dream
//!   with the reference host's scripted dreamer replaying FILE (see
//!   `dream.rs`).
//!
//! The adapter's own commands (`serve`, `install`, `history`, `context`,
//! `dream`) are the `notesoup-pi` binary's.

/// `println!` that ends the process quietly when the reader of stdout has
/// gone (`notesoup-pi-reference demo | head -1`), instead of panicking.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(error) = writeln!(std::io::stdout().lock(), $($arg)*) {
            crate::stdout_failed(&error);
        }
    }};
}

mod demo;
mod dream;
mod scenario;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// `--version`: the release, and the Pi it models.
const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (Pi 1.6.0 reference host)");

/// The reference Pi host (Pi 1.6.0's session manager and agent loop with a
/// scripted model): the demo and the scripted dreamer.
#[derive(Debug, Parser)]
#[command(name = "notesoup-pi-reference", version = VERSION)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a scripted Pi session through a context-window reset and narrate
    /// it.
    Demo {
        /// Keep the notes in DIR (default: inside the temporary directory).
        #[arg(long, value_name = "DIR")]
        notes_home: Option<PathBuf>,
        /// Keep the temporary directory (session file and notes).
        #[arg(long)]
        keep: bool,
    },
    /// Tidy a notes home with the scripted dreamer: gates, lock, baseline
    /// audit, the dreamer replaying --script, report, final audit.
    Dream(dream::ReferenceDreamArgs),
}

/// Stdout failed: a reader that went away ends the process quietly, with
/// status 0; anything else is reported.
fn stdout_failed(error: &std::io::Error) -> ! {
    if error.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    eprintln!("notesoup-pi-reference: cannot write to stdout: {error}");
    std::process::exit(1);
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Demo { notes_home, keep } => match demo::run(notes_home, keep) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("notesoup-pi-reference demo: {error:#}");
                ExitCode::FAILURE
            }
        },
        Command::Dream(args) => match dream::run(args) {
            Ok(code) => ExitCode::from(code),
            Err(error) => {
                eprintln!("notesoup-pi-reference dream: {error}");
                ExitCode::from(2)
            }
        },
    }
}
