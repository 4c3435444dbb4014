//! The `notesoup-dsh` command: [`main`] parses the process's arguments and
//! runs one subcommand. The `notesoup-dsh` binary is this function and
//! nothing else, so any binary that calls it is the same command.
//!
//! dsh's own commands: the sidecar (`serve`), the bundle writer (`bundle`),
//! the installer (`install`, `install.rs`) and `dream-tools`, which `dream`
//! starts; next to them the commands every notesoup binary shares (`notes`,
//! `boot`, `history`, `doctor`, `dream`, `completions`, `man`:
//! `notesoup-cli`, over [`DshCli`], `host.rs`).

mod host;
mod install;

pub use host::{DshCli, DshDreamerArgs, DshSessionArgs, VERSION};

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::boot::NotesPlace;
use crate::bundle::{self, Engine};
use crate::server::{self, Sidecar};
use crate::{dream_tools, settings};
use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};
use notesoup_cli::{DreamToolsArgs, SharedCommand};
use notesoup_core::dream::DreamTools;
use notesoup_core::notes::NotesIdentity;

/// notesoup for dsh (DeepSeek Harness): the sidecar the bundle starts, the
/// bundle and its installer, and the notes, boot, history and dream of dsh
/// sessions.
#[derive(Debug, Parser)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// Run the JSON-lines sidecar on stdin/stdout (spawned by the bundle).
    Serve,
    /// Write the Cordis bundle into a directory.
    Bundle {
        /// Where to write it.
        #[arg(long)]
        out: PathBuf,
        #[command(flatten)]
        engine: EngineArgs,
        /// Write into a directory that holds files notesoup did not write
        /// (files at the bundle's paths are replaced; links are still never
        /// followed).
        #[arg(long)]
        force: bool,
    },
    /// Write the bundle and add it to a dsh profile (`dsh plugin add`;
    /// without dsh on PATH, print that command), or print the `--patch`
    /// overlay rows with --print-patch. notesoup's compaction engine is
    /// mounted unless --no-engine is given.
    Install {
        /// The dsh profile.
        #[arg(long, default_value = "web")]
        profile: String,
        /// Where the bundle goes (default: $XDG_DATA_HOME/notesoup/dsh-bundle,
        /// else ~/.local/share/notesoup/dsh-bundle).
        #[arg(long)]
        dir: Option<PathBuf>,
        #[command(flatten)]
        engine: EngineArgs,
        /// Print a `--patch` overlay instead of running `dsh plugin add`.
        #[arg(long)]
        print_patch: bool,
        /// Write into a directory that holds files notesoup did not write
        /// (files at the bundle's paths are replaced; links are still never
        /// followed).
        #[arg(long)]
        force: bool,
    },
    /// Serve the dreamer's jailed tools as JSON lines; `dream` starts this
    /// inside the dreamer's dsh.
    #[command(hide = true)]
    DreamTools(DreamToolsArgs),
    #[command(flatten)]
    Shared(Box<SharedCommand<DshSessionArgs, DshDreamerArgs>>),
}

#[derive(Debug, Args)]
struct EngineArgs {
    /// Leave notesoup's compaction engine out. dsh's own summary compaction
    /// then stays on: it summarizes at 80 % context pressure (before
    /// notesoup's hard reserve on most models), on /compact and on context
    /// overflow, instead of resetting to a fresh window.
    #[arg(long, conflicts_with = "engine")]
    no_engine: bool,
    /// Mount notesoup's compaction engine (the default; kept for older
    /// command lines).
    #[arg(long, hide = true)]
    engine: bool,
}

impl EngineArgs {
    fn engine(&self) -> Engine {
        if self.no_engine {
            Engine::Left
        } else {
            Engine::Mounted
        }
    }
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// The `notesoup-dsh` command: parses `std::env::args_os()` (help and usage
/// name it `notesoup-dsh` whatever the executable's file is called) and runs
/// the subcommand.
pub fn main() -> ExitCode {
    match run(notesoup_cli::parse::<Cli, DshCli>()) {
        Ok(code) => code,
        // A reader that went away (`notesoup-dsh boot | head -1`) leaves
        // nothing to report to: end quietly, as a filter does.
        Err(error) if is_broken_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => {
            // stderr may be gone too; there is nowhere else to say it.
            let _ = writeln!(std::io::stderr(), "notesoup-dsh: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Cmd::Serve => {
            let place = notes_place()?;
            let (record, warnings) = match settings::settings_file(env) {
                Some(path) => settings::read_file(&path),
                None => Default::default(),
            };
            let sidecar = Sidecar::new(place).with_settings_file(record, warnings);
            let stdin = std::io::stdin().lock();
            let stdout = std::io::stdout().lock();
            let served = server::serve(sidecar, stdin, stdout);
            crate::boot::wait_for_saves();
            served.context("serving")?;
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Bundle { out, engine, force } => {
            bundle::write_with(&out, engine.engine(), force)?;
            say(&format!(
                "notesoup-dsh: bundle written to {}",
                out.display()
            ))?;
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Install {
            profile,
            dir,
            engine,
            print_patch,
            force,
        } => install::install(install::InstallRequest {
            profile,
            dir,
            engine: engine.engine(),
            print_patch,
            force,
        }),
        Cmd::DreamTools(DreamToolsArgs { notes_home }) => {
            let tools = DreamTools::new(notes_home);
            let stdin = std::io::stdin().lock();
            let stdout = std::io::stdout().lock();
            dream_tools::serve(&tools, stdin, stdout).context("serving the dream tools")?;
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Shared(shared) => {
            let code = notesoup_cli::run::<Cli, DshCli>(&mut DshCli, *shared);
            crate::boot::wait_for_saves();
            Ok(code)
        }
    }
}

fn notes_place() -> Result<NotesPlace> {
    let root =
        NotesIdentity::default_root(env).context("no notes root: set PI_NOTES_HOME or HOME")?;
    Ok(NotesPlace {
        root,
        agent: NotesIdentity::agent_slug(env),
        cache: notesoup_core::plumbing::BootCaches::dir(env),
    })
}

/// Writes one line to stderr; a closed stderr is ignored like a closed
/// stdout.
pub(super) fn say(text: &str) -> Result<()> {
    match writeln!(std::io::stderr(), "{text}") {
        Err(error) if error.kind() != std::io::ErrorKind::BrokenPipe => Err(error.into()),
        _ => Ok(()),
    }
}

/// Writes text to stdout; a broken pipe comes back as an error that `main`
/// ends quietly on.
pub(super) fn print(text: &str) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(text.as_bytes())?;
    stdout.flush()?;
    Ok(())
}
