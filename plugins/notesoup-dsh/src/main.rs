//! The `notesoup-dsh` binary, for dsh (DeepSeek Harness): its own commands
//! (the sidecar, the bundle writer, the installer, and `dream-tools`, which
//! `dream` starts) next to the commands every notesoup binary shares
//! (`notes`, `boot`, `history`, `doctor`, `dream`, `completions`, `man`:
//! `notesoup-cli`, over [`DshCli`]).

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, ExitCode};

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand};
use notesoup_cli::SharedCommand;
use notesoup_core::dream::DreamTools;
use notesoup_core::notes::{agent_slug, default_root};
use notesoup_dsh::boot::NotesPlace;
use notesoup_dsh::bundle::{self, Engine};
use notesoup_dsh::cli::{DshCli, DshDreamerArgs, DshSessionArgs};
use notesoup_dsh::server::{self, Sidecar};
use notesoup_dsh::{dream_tools, settings};

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
    /// Write the bundle and add it to a dsh profile (`dsh plugin add`), or
    /// print the `--patch` overlay rows with --print-patch. notesoup's
    /// compaction engine is mounted unless --no-engine is given.
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
    DreamTools {
        /// The notes home the tools are jailed to.
        #[arg(long)]
        notes_home: PathBuf,
    },
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

fn main() -> ExitCode {
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
            server::serve(sidecar, stdin, stdout).context("serving")?;
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
        } => install(&profile, dir, engine.engine(), print_patch, force),
        Cmd::DreamTools { notes_home } => {
            let tools = DreamTools::new(notes_home);
            let stdin = std::io::stdin().lock();
            let stdout = std::io::stdout().lock();
            dream_tools::serve(&tools, stdin, stdout).context("serving the dream tools")?;
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Shared(shared) => Ok(notesoup_cli::run::<Cli, DshCli>(&mut DshCli, *shared)),
    }
}

fn notes_place() -> Result<NotesPlace> {
    let root = default_root(env).context("no notes root: set PI_NOTES_HOME or HOME")?;
    Ok(NotesPlace {
        root,
        agent: agent_slug(env),
    })
}

/// Writes one line to stderr; a closed stderr is ignored like a closed
/// stdout.
fn say(text: &str) -> Result<()> {
    match writeln!(std::io::stderr(), "{text}") {
        Err(error) if error.kind() != std::io::ErrorKind::BrokenPipe => Err(error.into()),
        _ => Ok(()),
    }
}

/// Writes text to stdout; a broken pipe comes back as an error that `main`
/// ends quietly on.
fn print(text: &str) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(text.as_bytes())?;
    stdout.flush()?;
    Ok(())
}

/// `$XDG_DATA_HOME/notesoup/dsh-bundle`, else `~/.local/share/notesoup/dsh-bundle`.
/// Never inside the notes root: doctor would flag it and the dream's audit
/// would commit it.
fn default_bundle_dir() -> Option<PathBuf> {
    let nonempty = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    let data = nonempty("XDG_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| nonempty("HOME").map(|home| PathBuf::from(home).join(".local/share")))?;
    Some(data.join("notesoup").join("dsh-bundle"))
}

/// What leaving the engine out costs, said at install.
const NO_ENGINE_COST: &str = "notesoup-dsh: without the engine dsh's own compaction stays on: it summarizes the conversation at 80 % context pressure (before notesoup's hard reserve on most models), on /compact and on context overflow, instead of opening a fresh window from the notes. Install again without --no-engine to turn summaries off.";

fn install(
    profile: &str,
    dir: Option<PathBuf>,
    engine: Engine,
    print_patch: bool,
    force: bool,
) -> Result<ExitCode> {
    let dir = match dir {
        Some(dir) => dir,
        None => {
            default_bundle_dir().context("neither XDG_DATA_HOME nor HOME is set: pass --dir")?
        }
    };
    bundle::write_with(&dir, engine, force)?;
    let dir = dir.canonicalize().unwrap_or(dir);
    let binary = std::env::current_exe().context("locating notesoup-dsh")?;
    let quote = |path: &std::path::Path| serde_json::Value::from(path.display().to_string());
    if print_patch {
        let mut patch = String::new();
        if engine == Engine::Mounted {
            patch.push_str("- id: compaction-basic\n  disabled: true\n");
        }
        patch.push_str(&format!(
            "- insert:\n    - id: notesoup\n      name: {}\n      config:\n        binary: {}\n",
            quote(&dir.join("index.js")),
            quote(&binary)
        ));
        if engine == Engine::Mounted {
            patch.push_str(&format!(
                "    - id: notesoup-engine\n      name: {}\n",
                quote(&dir.join("engine.js"))
            ));
        }
        print(&patch)?;
        if engine == Engine::Left {
            say(NO_ENGINE_COST)?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let status = Command::new("dsh")
        .args(["plugin", "--profile", profile, "add"])
        .arg(&dir)
        .status()
        .context("running dsh plugin add (is dsh on PATH?)")?;
    if !status.success() {
        bail!("dsh plugin add failed ({status})");
    }
    say(&format!(
        "notesoup-dsh: added to profile {profile}{}; the sidecar is found as notesoup-dsh on PATH",
        match engine {
            Engine::Mounted =>
                " with notesoup's compaction engine (/compact, context overflow and the pressure line reset instead of summarizing)",
            Engine::Left => " without notesoup's compaction engine",
        }
    ))?;
    if engine == Engine::Left {
        say(NO_ENGINE_COST)?;
    }
    Ok(ExitCode::SUCCESS)
}
