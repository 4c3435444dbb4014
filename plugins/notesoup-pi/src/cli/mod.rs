//! The `notesoup-pi` command: [`main`] parses the process's arguments and
//! runs one subcommand. The `notesoup-pi` binary is this function and
//! nothing else, so any binary that calls it is the same command (the
//! reference host's real-Pi test builds one, `notesoup-pi-testkit`'s
//! `notesoup-pi-under-test`, instead of a second build of this crate).
//!
//! Pi's own commands:
//! - `notesoup-pi serve` is the sidecar the Pi package starts: the JSON-lines
//!   bridge on stdio (see [`crate::bridge`]).
//! - `notesoup-pi install [--dir DIR] [--print] [--force]` puts the Pi package
//!   in place and runs `pi install DIR` (`--print`: prints the command and
//!   writes nothing).
//! - `notesoup-pi context FILE [--leaf ID]` prints the provider context Pi
//!   would build at the leaf, with notesoup's window projection, as JSON.
//! - `notesoup-pi dream-tools --notes-home DIR` serves the dreamer's jailed
//!   tools to the dream extension inside the dreamer's Pi.
//!
//! The commands every notesoup binary shares (`notes`, `boot`, `history`,
//! `doctor`, `dream`, `completions`, `man`) are `notesoup-cli`'s, over
//! [`PiCli`] (`host.rs`): a session is a Pi session file, and the dreamer is
//! real Pi (`crate::dreamer`).
//!
//! The demo and the scripted dreamer run the reference Pi host: they are
//! `notesoup-pi-reference demo` and `notesoup-pi-reference dream --script
//! FILE` in the `notesoup-pi-testkit` crate.

/// `println!` that ends the process quietly when the reader of stdout has
/// gone (`notesoup-pi context FILE | head -1`), instead of panicking.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(error) = writeln!(std::io::stdout().lock(), $($arg)*) {
            $crate::cli::stdout_failed(&error);
        }
    }};
}

mod host;
mod inspect;
mod install;
mod serve;
mod session;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use notesoup_cli::{DreamToolsArgs, SharedCommand};
use notesoup_core::dream::DreamTools;

pub use host::{PiCli, PiDreamerArgs, PiSessionArgs, VERSION};

/// notesoup for Pi: the sidecar the Pi package starts, its installer, and
/// what the notes, the history tools and the provider see for any Pi
/// session.
#[derive(Debug, Parser)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// The sidecar the notesoup Pi package starts (JSON lines on stdio).
    Serve,
    /// Write the Pi package and run `pi install DIR` (or print the command).
    Install {
        /// Where the package goes (default ~/.local/share/notesoup/pi-package).
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Only print the files it would write and the `pi install`
        /// command; nothing is written.
        #[arg(long)]
        print: bool,
        /// Install into a directory that holds files notesoup did not
        /// write (files at the package's paths are replaced; links are
        /// still never followed).
        #[arg(long)]
        force: bool,
    },
    /// The provider context at the leaf, as JSON, with notesoup's window
    /// projection.
    Context {
        /// A Pi session file.
        file: PathBuf,
        /// The leaf entry (default: the file's last entry).
        #[arg(long)]
        leaf: Option<String>,
    },
    /// Serve the dreamer's jailed tools as JSON lines on stdio; the dream
    /// extension inside the dreamer's Pi starts this.
    #[command(hide = true)]
    DreamTools(DreamToolsArgs),
    #[command(flatten)]
    Shared(Box<SharedCommand<PiSessionArgs, PiDreamerArgs>>),
}

/// Stdout failed: a reader that went away ends the process quietly, with
/// status 0; anything else is reported.
fn stdout_failed(error: &std::io::Error) -> ! {
    if error.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    eprintln!("notesoup-pi: cannot write to stdout: {error}");
    std::process::exit(1);
}

/// The `notesoup-pi` command: parses `std::env::args_os()` (help and usage
/// name it `notesoup-pi` whatever the executable's file is called) and runs
/// the subcommand.
pub fn main() -> ExitCode {
    let cli = notesoup_cli::parse::<Cli, PiCli>();
    match cli.command {
        Command::Serve => serve::main(&[]),
        Command::Install { dir, print, force } => install::main(dir, print, force),
        Command::Context { file, leaf } => match inspect::context(&file, leaf.as_deref()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("notesoup-pi context: {error:#}");
                ExitCode::FAILURE
            }
        },
        Command::DreamTools(DreamToolsArgs { notes_home }) => serve_dream_tools(notes_home),
        Command::Shared(shared) => notesoup_cli::run::<Cli, PiCli>(&mut PiCli, *shared),
    }
}

/// `notesoup-pi dream-tools --notes-home DIR`: serves the dream tools as
/// JSON lines on stdio until stdin closes.
fn serve_dream_tools(notes_home: PathBuf) -> ExitCode {
    let home = match std::path::absolute(&notes_home) {
        Ok(home) => home,
        Err(error) => {
            eprintln!(
                "notesoup-pi dream-tools: --notes-home {}: {error}",
                notes_home.display()
            );
            return ExitCode::from(2);
        }
    };
    let tools = DreamTools::new(home);
    let stdin = std::io::stdin().lock();
    let stdout = std::io::stdout().lock();
    match crate::dream_tools::serve(&tools, stdin, stdout) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("notesoup-pi dream-tools: {error}");
            ExitCode::FAILURE
        }
    }
}
