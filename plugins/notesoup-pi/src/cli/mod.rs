//! The `notesoup-pi` command: [`main`] parses the process's arguments and
//! runs one subcommand. The `notesoup-pi` binary is this function and
//! nothing else, so any binary that calls it is the same command (the
//! reference host's real-Pi test builds one, `notesoup-pi-testkit`'s
//! `notesoup-pi-under-test`, instead of a second build of this crate).
//!
//! - `notesoup-pi serve` is the sidecar the Pi package starts: the JSON-lines
//!   bridge on stdio (see [`crate::bridge`]).
//! - `notesoup-pi install [--dir DIR] [--print] [--force]` puts the Pi package
//!   in place and runs `pi install DIR` (`--print`: prints the command and
//!   writes nothing).
//! - `notesoup-pi history FILE windows|list|search|read [ARGS] [--leaf ID]`
//!   prints what a history tool answers for any Pi session file.
//! - `notesoup-pi context FILE [--leaf ID]` prints the provider context Pi
//!   would build at the leaf, with notesoup's window projection, as JSON.
//! - `notesoup-pi boot [--stats]` prints the boot of a session's live window
//!   (see `boot.rs`).
//! - `notesoup-pi dream [FLAGS]` runs core's dream with real Pi as the
//!   dreamer (`dreamer.rs`), which `notesoup-pi dream-tools` serves;
//!   `notesoup-pi dream doctor` checks the notes home.
//!
//! The demo and the scripted dreamer run the reference Pi host: they are
//! `notesoup-pi-reference demo` and `notesoup-pi-reference dream --script
//! FILE` in the `notesoup-pi-testkit` crate.

/// `println!` that ends the process quietly when the reader of stdout has
/// gone (`notesoup-pi history FILE list | head -1`), instead of panicking.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(error) = writeln!(std::io::stdout().lock(), $($arg)*) {
            $crate::cli::stdout_failed(&error);
        }
    }};
}

mod boot;
mod dreamer;
mod inspect;
mod install;
mod serve;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// `--version`: the release, and the Pi and bridge protocol it speaks.
const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (Pi 1.6.0, bridge protocol 2)");

/// notesoup for Pi: the sidecar the Pi package starts, its installer, and
/// what the history tools and the provider see for any Pi session file.
#[derive(Debug, Parser)]
#[command(name = "notesoup-pi", bin_name = "notesoup-pi", version = VERSION)]
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
    /// What a history tool answers for a Pi session file (a refusal goes to
    /// stderr, exit 1).
    History(HistoryArgs),
    /// The provider context at the leaf, as JSON, with notesoup's window
    /// projection.
    Context {
        /// A Pi session file.
        file: PathBuf,
        /// The leaf entry (default: the file's last entry).
        #[arg(long)]
        leaf: Option<String>,
    },
    /// The boot notesoup gives Pi for a session's live window; --stats: each
    /// section's characters and estimated tokens.
    Boot(boot::BootArgs),
    /// Tidy a notes home with real Pi as the dreamer, or check it (`dream
    /// doctor [clean [--apply]]`); see `notesoup-pi dream --help`.
    #[command(disable_help_flag = true)]
    Dream {
        /// The dream's own arguments.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Serve the dreamer's jailed tools as JSON lines on stdio; the dream
    /// extension inside the dreamer's Pi starts this.
    DreamTools {
        /// The notes home the tools are jailed to.
        #[arg(long, value_name = "DIR")]
        notes_home: PathBuf,
    },
}

/// `history FILE TOOL [ARGS_JSON] [flags]`: the flags and the JSON object
/// give the tool's parameters together (a flag wins).
#[derive(Debug, clap::Args)]
struct HistoryArgs {
    /// A Pi session file.
    file: PathBuf,
    /// windows, list, search or read.
    tool: String,
    /// The tool's parameters as a JSON object, e.g. '{"query":"tokenizer"}'.
    arguments: Option<String>,
    /// The leaf entry (default: the file's last entry).
    #[arg(long)]
    leaf: Option<String>,
    /// search: a literal to find (repeat for any of several).
    #[arg(long)]
    query: Vec<String>,
    /// read: the event's seq.
    #[arg(long)]
    seq: Option<u32>,
    /// read: where to start, in characters (negative: from the end).
    #[arg(long, allow_negative_numbers = true)]
    offset: Option<i32>,
    /// list, search: the most rows.
    #[arg(long)]
    limit: Option<u32>,
    /// list, search: only events before this seq.
    #[arg(long)]
    before: Option<u32>,
    /// list, search: only events after this seq.
    #[arg(long)]
    after: Option<u32>,
    /// list, search: one window (an id, or @previous).
    #[arg(long)]
    window: Option<String>,
    /// list, search: roles, comma-separated or repeated.
    #[arg(long, value_delimiter = ',')]
    role: Vec<String>,
    /// Print the tool's compact JSON result instead of its text.
    #[arg(long)]
    json: bool,
}

impl HistoryArgs {
    /// The tool's parameters: the JSON object, then the flags over it.
    fn parameters(&self) -> anyhow::Result<serde_json::Value> {
        let mut object = match &self.arguments {
            Some(text) => match serde_json::from_str(text) {
                Ok(serde_json::Value::Object(object)) => object,
                Ok(_) => anyhow::bail!("the arguments must be a JSON object"),
                Err(error) => anyhow::bail!("the arguments are not JSON: {error}"),
            },
            None => serde_json::Map::new(),
        };
        let mut set = |key: &str, value: serde_json::Value| {
            object.insert(key.to_owned(), value);
        };
        match self.query.as_slice() {
            [] => {}
            [one] => set("query", one.as_str().into()),
            many => set("query", many.into()),
        }
        if let Some(seq) = self.seq {
            set("seq", seq.into());
        }
        if let Some(offset) = self.offset {
            set("offset_chars", offset.into());
        }
        if let Some(limit) = self.limit {
            set("limit", limit.into());
        }
        if let Some(before) = self.before {
            set("before", before.into());
        }
        if let Some(after) = self.after {
            set("after", after.into());
        }
        if let Some(window) = &self.window {
            set("window_id", window.as_str().into());
        }
        if !self.role.is_empty() {
            set("roles", self.role.clone().into());
        }
        Ok(serde_json::Value::Object(object))
    }
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
    let cli = Cli::parse();
    match cli.command {
        Command::Serve => serve::main(&[]),
        Command::Install { dir, print, force } => install::main(dir, print, force),
        Command::History(args) => {
            let result = args.parameters().and_then(|parameters| {
                inspect::history(
                    &args.file,
                    &args.tool,
                    parameters,
                    args.leaf.as_deref(),
                    args.json,
                )
            });
            match result {
                Ok(true) => ExitCode::SUCCESS,
                Ok(false) => ExitCode::FAILURE,
                Err(error) => {
                    eprintln!("notesoup-pi history: {error:#}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Context { file, leaf } => match inspect::context(&file, leaf.as_deref()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("notesoup-pi context: {error:#}");
                ExitCode::FAILURE
            }
        },
        Command::Boot(args) => match boot::main(&args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("notesoup-pi boot: {error:#}");
                ExitCode::FAILURE
            }
        },
        Command::Dream { args } => dreamer::main(&args),
        Command::DreamTools { notes_home } => dreamer::serve_tools(notes_home),
    }
}
