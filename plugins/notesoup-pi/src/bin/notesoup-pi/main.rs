//! `notesoup-pi`: notesoup on the reference Pi host.
//!
//! `notesoup-pi demo [--notes-home DIR] [--keep]` runs the embedded scenario
//! as a real session in a temporary directory and narrates it: what the
//! model saw, the window ids, the JSONL entries written and the notes on
//! disk. Everything printed comes from that run.

mod demo;
mod scenario;

use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "usage: notesoup-pi demo [--notes-home DIR] [--keep]

  demo    run a scripted Pi session through a context-window reset and narrate it
          --notes-home DIR   keep the notes in DIR (default: inside the temporary directory)
          --keep             keep the temporary directory (session file and notes)";

/// The demo's options.
#[derive(Debug, Default)]
struct DemoOptions {
    notes_home: Option<PathBuf>,
    keep: bool,
}

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
                options.notes_home = Some(PathBuf::from(dir));
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(options)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
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
        Some("--help" | "-h" | "help") => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!("{USAGE}");
            ExitCode::from(2)
        }
    }
}
