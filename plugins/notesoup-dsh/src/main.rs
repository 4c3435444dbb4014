//! The `notesoup-dsh` binary: the sidecar, the bundle writer, the installer,
//! the boot preview, and the dream and doctor over the notes home, for dsh
//! (DeepSeek Harness).

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, ExitCode};

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand};
use notesoup_core::dream::{
    DEFAULT_MIN_HOURS, DEFAULT_MIN_SESSIONS, DreamOptions, DreamOutput, DreamTools, Stream,
    clean_temp_files, run_dream,
};
use notesoup_core::notes::{agent_slug, default_root};
use notesoup_dsh::boot::{self, NotesPlace};
use notesoup_dsh::bundle::{self, Engine};
use notesoup_dsh::dream::DshDreamer;
use notesoup_dsh::server::{self, Sidecar};
use notesoup_dsh::{dream_tools, settings};

#[derive(Debug, Parser)]
#[command(
    name = "notesoup-dsh",
    version,
    about = "notesoup for dsh (DeepSeek Harness)"
)]
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
    /// Print the boot a new window of a session would open with (its first
    /// window unless the session's notes say otherwise), or its size with
    /// --stats.
    Boot(BootArgs),
    /// Tidy the notes home with a headless dsh dreamer holding only the
    /// jailed dream tools (gated, locked, audited with Git).
    Dream(DreamArgs),
    /// Check the notes home without changing anything; exit 1 on findings.
    /// `doctor clean` lists stale temporary files (--apply removes them).
    Doctor(DoctorArgs),
    /// Serve the dreamer's jailed tools as JSON lines; `dream` starts this
    /// inside the dreamer's dsh.
    #[command(hide = true)]
    DreamTools {
        /// The notes home the tools are jailed to.
        #[arg(long)]
        notes_home: PathBuf,
    },
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

#[derive(Debug, Args)]
struct BootArgs {
    /// The session's working directory (default: the current directory).
    #[arg(long)]
    cwd: Option<PathBuf>,
    /// The dsh session id (default: a preview session named `preview`).
    #[arg(long)]
    session: Option<String>,
    /// The agent's model id (default: none, the `unknown` model home).
    #[arg(long)]
    model: Option<String>,
    /// Print the size of each boot section in characters and estimated
    /// tokens (characters / 4) instead of the boot.
    #[arg(long)]
    stats: bool,
}

#[derive(Debug, Args)]
struct DreamArgs {
    /// The notes home (default: the notes root, $PI_NOTES_HOME or
    /// ~/.agents/notes).
    #[arg(long)]
    notes_home: Option<PathBuf>,
    /// Hours since the last dream before another may run.
    #[arg(long, default_value_t = DEFAULT_MIN_HOURS)]
    min_hours: f64,
    /// Session homes changed since the last dream before another may run.
    #[arg(long, default_value_t = DEFAULT_MIN_SESSIONS)]
    min_sessions: usize,
    /// Run even when the time and material gates say no (never past the lock).
    #[arg(long)]
    force: bool,
    /// The model the dreamer runs on: `provider/model` or a model id (default:
    /// the `dreamer` setting, else the profile's default model).
    #[arg(long)]
    dreamer: Option<String>,
    /// A playbook file instead of the packaged one.
    #[arg(long)]
    playbook: Option<PathBuf>,
    /// The dsh profile the dreamer boots; it must answer one task and exit.
    #[arg(long, default_value = "headless")]
    profile: String,
    /// The dsh executable (default: $NOTESOUP_DSH, else dsh on PATH).
    #[arg(long)]
    dsh: Option<PathBuf>,
    /// Stop the dreamer after this many seconds; the run then fails and the
    /// lock is released.
    #[arg(long, default_value_t = notesoup_dsh::dream::DEFAULT_TIMEOUT.as_secs())]
    timeout: u64,
}

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
struct DoctorArgs {
    #[command(subcommand)]
    command: Option<DoctorCmd>,
    /// The notes home (default: the notes root).
    #[arg(long)]
    notes_home: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
enum DoctorCmd {
    /// List notesoup's stale temporary files (older than a minute, writer
    /// gone); --apply removes them.
    Clean {
        /// Remove them instead of listing them.
        #[arg(long)]
        apply: bool,
        /// The notes home (default: the notes root).
        #[arg(long)]
        notes_home: Option<PathBuf>,
    },
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
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
        Cmd::Boot(args) => boot_command(&args),
        Cmd::Dream(args) => dream(args),
        Cmd::Doctor(args) => doctor(args),
        Cmd::DreamTools { notes_home } => {
            let tools = DreamTools::new(notes_home);
            let stdin = std::io::stdin().lock();
            let stdout = std::io::stdout().lock();
            dream_tools::serve(&tools, stdin, stdout).context("serving the dream tools")?;
            Ok(ExitCode::SUCCESS)
        }
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

fn boot_command(args: &BootArgs) -> Result<ExitCode> {
    let place = notes_place()?;
    let cwd = match &args.cwd {
        Some(cwd) => cwd.clone(),
        None => std::env::current_dir().context("no current directory")?,
    };
    if !cwd.is_dir() {
        bail!("--cwd {} is not a directory", cwd.display());
    }
    // dsh records a session's cwd as an absolute path; the project key is
    // derived from it.
    let cwd = std::path::absolute(&cwd).context("resolving --cwd")?;
    let (record, mut warnings) = match settings::settings_file(env) {
        Some(path) => settings::read_file(&path),
        None => Default::default(),
    };
    let resolved = settings::validate(&record);
    warnings.extend(resolved.warnings);
    for warning in &warnings {
        say(warning)?;
    }
    let chosen = resolved.settings.core;
    let store = boot::store(
        &place,
        args.session.as_deref(),
        &cwd.display().to_string(),
        args.model.as_deref(),
        chosen.secret_guard,
    )?;
    if args.session.is_none() {
        say(
            "notesoup-dsh: a preview boot with no session (window ids dsh:preview:N, no session notes; pass --session to name a dsh session)",
        )?;
    }
    let sections = boot::sections(&store, 1, jiff::Timestamp::now(), chosen.boot_max_chars)?;
    if args.stats {
        print(&boot::stats(&sections))?;
        print(&format!(
            "bound: {} characters (bootMaxChars)\n",
            chosen.boot_max_chars
        ))?;
    } else {
        print(&format!("{}\n", sections.join()))?;
    }
    Ok(ExitCode::SUCCESS)
}

fn notes_home(given: Option<PathBuf>) -> Result<PathBuf> {
    match given {
        Some(home) => Ok(home),
        None => default_root(env)
            .context("the notes root is unknown: pass --notes-home or set PI_NOTES_HOME"),
    }
}

fn dream(args: DreamArgs) -> Result<ExitCode> {
    // The dreamer's dsh runs in the notes home and hands the path on to the
    // dream tools, so a relative path would be read from the wrong place.
    let home =
        std::path::absolute(notes_home(args.notes_home)?).context("resolving the notes home")?;
    let notesoup_dsh = std::env::current_exe().context("locating notesoup-dsh")?;
    let mut options = DreamOptions::new(home, jiff::Timestamp::now());
    options.min_hours = args.min_hours;
    options.min_sessions = args.min_sessions;
    options.force = args.force;
    options.playbook = args.playbook;
    // The command line wins, then the `dreamer` setting, then the profile's
    // default model. A bad setting warns (inside the run, after the lock).
    let (record, mut warnings) = match settings::settings_file(env) {
        Some(path) => settings::read_file(&path),
        None => Default::default(),
    };
    let resolved = settings::validate(&record);
    warnings.extend(
        resolved
            .warnings
            .into_iter()
            .filter(|warning| warning.starts_with("notesoup: dreamer ")),
    );
    options.model_pattern = args.dreamer.or(resolved.settings.core.dreamer);
    options.model_warnings = warnings;
    let work = std::env::temp_dir().join(format!("notesoup-dsh-dream-{}", uuid::Uuid::new_v4()));
    let mut dreamer = DshDreamer {
        dsh: dsh_executable(args.dsh)?,
        profile: args.profile,
        notesoup_dsh,
        work_dir: work.clone(),
        timeout: std::time::Duration::from_secs(args.timeout.max(1)),
    };
    let output = run_dream(&options, &mut dreamer);
    // The dreamer's bundle and session log are scratch; the audit keeps
    // what matters.
    let _ = std::fs::remove_dir_all(&work);
    print_output(&output)
}

/// `--dsh`, else `$NOTESOUP_DSH`, else `dsh` on PATH. A path (not a bare
/// name looked up on PATH) is made absolute: dsh starts in the notes home.
fn dsh_executable(given: Option<PathBuf>) -> Result<PathBuf> {
    match given.or_else(|| {
        env("NOTESOUP_DSH")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    }) {
        Some(path) if path.components().count() > 1 => {
            std::path::absolute(&path).context("resolving the dsh executable")
        }
        Some(name) => Ok(name),
        None => Ok(PathBuf::from("dsh")),
    }
}

fn doctor(args: DoctorArgs) -> Result<ExitCode> {
    let output = match args.command {
        Some(DoctorCmd::Clean {
            apply,
            notes_home: home,
        }) => {
            let home = notes_home(home.or(args.notes_home))?;
            clean_temp_files(&home, apply, std::time::SystemTime::now()).output()
        }
        None => notesoup_core::dream::doctor(&notes_home(args.notes_home)?).output(),
    };
    print_output(&output)
}

/// Prints a dream command's lines to their streams; its exit code.
fn print_output(output: &DreamOutput) -> Result<ExitCode> {
    for line in &output.lines {
        match line.stream {
            Stream::Stdout => print(&format!("{}\n", line.text))?,
            Stream::Stderr => say(&line.text)?,
        }
    }
    Ok(ExitCode::from(u8::try_from(output.exit_code).unwrap_or(1)))
}
