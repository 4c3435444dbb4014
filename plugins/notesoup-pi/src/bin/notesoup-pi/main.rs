//! `notesoup-pi`: notesoup for Pi.
//!
//! - `notesoup-pi serve` is the sidecar the Pi package starts: the JSON-lines
//!   bridge on stdio (see `notesoup_pi::bridge`).
//! - `notesoup-pi install [--dir DIR] [--print]` puts the Pi package in place
//!   and runs `pi install DIR` (or prints the command).
//! - `notesoup-pi demo [--notes-home DIR] [--keep]` runs the embedded
//!   scenario as a real session in a temporary directory and narrates it:
//!   what the model saw, the window ids, the JSONL entries written and the
//!   notes on disk. Everything printed comes from that run.
//! - `notesoup-pi history FILE windows|list|search|read [ARGS] [--leaf ID]`
//!   prints what a history tool answers for any Pi session file.
//! - `notesoup-pi context FILE [--leaf ID]` prints the provider context Pi
//!   would build at the leaf, with notesoup's window projection, as JSON.
//! - `notesoup-pi dream [FLAGS] --script FILE` and `notesoup-pi dream doctor`
//!   run core's dream with the reference host's scripted dreamer (this
//!   binary has no real model; see `dream.rs`).
//!
//! `demo` and `dream` run the reference host and need the `testkit` feature.

/// `println!` that ends the process quietly when the reader of stdout has
/// gone (`notesoup-pi demo | head -1`), instead of panicking.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(error) = writeln!(std::io::stdout().lock(), $($arg)*) {
            crate::stdout_failed(&error);
        }
    }};
}

#[cfg(feature = "testkit")]
mod demo;
#[cfg(feature = "testkit")]
mod dream;
mod inspect;
mod install;
#[cfg(feature = "testkit")]
mod scenario;
mod serve;

use std::path::Path;
use std::process::ExitCode;

const USAGE: &str = "usage: notesoup-pi serve
       notesoup-pi install [--dir DIR] [--print]
       notesoup-pi demo [--notes-home DIR] [--keep]
       notesoup-pi history FILE windows|list|search|read [ARGS_JSON] [--leaf ID]
       notesoup-pi context FILE [--leaf ID]
       notesoup-pi dream [--notes-home DIR] [--min-hours N] [--min-sessions N] [--force]
                         [--dreamer PATTERN] [--playbook PATH] --script FILE
       notesoup-pi dream doctor [clean [--apply]] [--notes-home DIR]
       notesoup-pi --version

  serve    the sidecar the notesoup Pi package starts (JSON lines on stdio)
  install  copy the Pi package to DIR (default ~/.local/share/notesoup/pi-package) and run
           `pi install DIR`; --print only prints the command
  demo     run a scripted Pi session through a context-window reset and narrate it
           --notes-home DIR   keep the notes in DIR (default: inside the temporary directory)
           --keep             keep the temporary directory (session file and notes)
  history  what history_<tool> answers for a Pi session file (a refusal goes to stderr,
           exit 1), e.g.
           notesoup-pi history s.jsonl search '{\"query\":\"tokenizer\"}'
  context  the provider context at the leaf (default: the file's last entry), as JSON
  dream    tidy a notes home with a scripted dreamer (no real model here); see notesoup-pi dream --help
  (demo and dream need a build with --features testkit)";

/// The demo's options.
#[cfg(feature = "testkit")]
#[derive(Debug, Default)]
struct DemoOptions {
    notes_home: Option<std::path::PathBuf>,
    keep: bool,
}

#[cfg(feature = "testkit")]
fn parse_demo(args: &[String]) -> Result<DemoOptions, String> {
    let mut options = DemoOptions::default();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--keep" => options.keep = true,
            "--notes-home" => {
                let dir = args
                    .next()
                    .ok_or_else(|| "--notes-home needs a directory".to_owned())?;
                options.notes_home = Some(std::path::PathBuf::from(dir));
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(options)
}

/// Runs `history` or `context`; `Ok(false)` when the tool refused.
fn inspect_command(command: &str, args: &[String]) -> anyhow::Result<bool> {
    let mut leaf = None;
    let mut positional = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        if arg == "--leaf" {
            leaf = Some(
                args.next()
                    .ok_or_else(|| anyhow::anyhow!("--leaf needs an entry id"))?
                    .as_str(),
            );
        } else {
            positional.push(arg.as_str());
        }
    }
    match (command, positional.as_slice()) {
        ("history", [file, tool]) => inspect::history(Path::new(file), tool, None, leaf),
        ("history", [file, tool, arguments]) => {
            inspect::history(Path::new(file), tool, Some(arguments), leaf)
        }
        ("context", [file]) => inspect::context(Path::new(file), leaf).map(|()| true),
        _ => anyhow::bail!("wrong arguments\n{USAGE}"),
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

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("serve") => serve::main(&args[1..]),
        Some("install") => install::main(&args[1..]),
        #[cfg(feature = "testkit")]
        Some("demo") => match parse_demo(&args[1..]) {
            Ok(options) => match demo::run(options.notes_home, options.keep) {
                Ok(()) => ExitCode::SUCCESS,
                Err(error) => {
                    eprintln!("notesoup-pi demo: {error:#}");
                    ExitCode::FAILURE
                }
            },
            Err(error) => {
                eprintln!("notesoup-pi demo: {error}\n{USAGE}");
                ExitCode::from(2)
            }
        },
        Some(command @ ("history" | "context")) => match inspect_command(command, &args[1..]) {
            Ok(true) => ExitCode::SUCCESS,
            Ok(false) => ExitCode::FAILURE,
            Err(error) => {
                eprintln!("notesoup-pi {command}: {error:#}");
                ExitCode::FAILURE
            }
        },
        #[cfg(feature = "testkit")]
        Some("dream") => ExitCode::from(dream::main(&args[1..])),
        #[cfg(not(feature = "testkit"))]
        Some(command @ ("demo" | "dream")) => {
            eprintln!(
                "notesoup-pi {command} runs the reference host: build with --features testkit"
            );
            ExitCode::from(2)
        }
        Some("--help" | "-h" | "help") => {
            outln!("{USAGE}");
            ExitCode::SUCCESS
        }
        Some("--version" | "-V") => {
            outln!(
                "notesoup-pi {} (Pi 1.6.0, bridge protocol {})",
                env!("CARGO_PKG_VERSION"),
                notesoup_pi::bridge::protocol::PROTOCOL_VERSION
            );
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!("{USAGE}");
            ExitCode::from(2)
        }
    }
}
