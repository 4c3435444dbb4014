//! `notesoup-pi dream` with real Pi as the dreamer, `notesoup-pi dream
//! doctor [clean [--apply]]`, and `notesoup-pi dream-tools`, the dreamer's
//! tools server (spec section 10). The reference host's scripted dreamer
//! is `notesoup-pi-reference dream --script FILE` (crate
//! `notesoup-pi-testkit`).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use notesoup_core::dream::{
    DEFAULT_MIN_HOURS, DEFAULT_MIN_SESSIONS, DreamOptions, DreamOutput, DreamTools, OutputLine,
    Stream, clean_temp_files, doctor, run_dream_with,
};

use crate::dreamer::{DEFAULT_TIMEOUT, PiDreamer, dreamer_setting, pi_executable};

/// Tidy a notes home with real Pi as the dreamer (gated, locked, audited
/// with Git), or check it.
///
/// The dreamer is `pi --mode json` in the notes home holding only the
/// jailed dream tools (read, grep, find, ls, write, edit and the
/// wastebasket rule's delete), which `notesoup-pi dream-tools` serves; Pi's own
/// tools, extensions, skills and context files are off. The model is
/// --dreamer, else `notesoup.dreamer` in Pi's settings, else Pi's default.
#[derive(Debug, Parser)]
#[command(name = "notesoup-pi dream", args_conflicts_with_subcommands = true)]
struct DreamCli {
    #[command(subcommand)]
    command: Option<DreamCommand>,
    /// The notes home (default: $PI_NOTES_HOME, else ~/.agents/notes).
    #[arg(long, value_name = "DIR")]
    notes_home: Option<PathBuf>,
    /// Hours since the last dream before another may run.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MIN_HOURS)]
    min_hours: f64,
    /// Session homes changed since the last dream before another may run.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MIN_SESSIONS)]
    min_sessions: usize,
    /// Run even when the time and material gates say no (never past the lock).
    #[arg(long)]
    force: bool,
    /// The model pattern the dreamer runs on (pi --model).
    #[arg(long, value_name = "PATTERN")]
    dreamer: Option<String>,
    /// A playbook file instead of the packaged one.
    #[arg(long, value_name = "PATH")]
    playbook: Option<PathBuf>,
    /// Stop the dreamer after this many seconds; the run then fails and the
    /// lock is released.
    #[arg(long, value_name = "SECS", default_value_t = DEFAULT_TIMEOUT.as_secs())]
    timeout: u64,
    /// The `pi` to run (default: $NOTESOUP_PI, else `pi` on PATH).
    #[arg(long, value_name = "PATH")]
    pi: Option<PathBuf>,
    /// Refused: the scripted dreamer is the reference host's
    /// (`notesoup-pi-reference dream --script FILE`).
    #[arg(long, value_name = "FILE")]
    script: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
enum DreamCommand {
    /// Read-only checks of the notes home; exit 1 when issues are found.
    Doctor(DoctorArgs),
}

#[derive(Debug, clap::Args)]
struct DoctorArgs {
    #[command(subcommand)]
    command: Option<DoctorCommand>,
    /// The notes home (default: $PI_NOTES_HOME, else ~/.agents/notes).
    #[arg(long, global = true, value_name = "DIR")]
    notes_home: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
enum DoctorCommand {
    /// List the temporary files interrupted writes left (older than a
    /// minute, writer gone); --apply removes them.
    Clean {
        /// Remove them.
        #[arg(long)]
        apply: bool,
    },
}

/// Runs `dream …` and returns the exit code.
pub fn main(args: &[String]) -> ExitCode {
    let cli = match DreamCli::try_parse_from(
        std::iter::once("notesoup-pi dream".to_owned()).chain(args.iter().cloned()),
    ) {
        Ok(cli) => cli,
        // --help and mistakes alike: clap prints them (help to stdout with
        // status 0, a mistake to stderr with status 2).
        Err(error) => {
            let _ = error.print();
            return ExitCode::from(u8::try_from(error.exit_code()).unwrap_or(2));
        }
    };
    match cli.command {
        Some(DreamCommand::Doctor(args)) => run_doctor(args),
        None => dream(cli),
    }
}

fn dream(cli: DreamCli) -> ExitCode {
    if cli.script.is_some() {
        eprintln!(
            "notesoup-pi dream: --script replays the reference host's scripted dreamer: run notesoup-pi-reference dream --script FILE (crate notesoup-pi-testkit)"
        );
        return ExitCode::from(2);
    }
    let home = match resolve_home(cli.notes_home) {
        Ok(home) => home,
        Err(error) => return failed(&error),
    };
    let notesoup_pi = match std::env::current_exe() {
        Ok(path) => path,
        Err(error) => return failed(&format!("cannot find the notesoup-pi binary: {error}")),
    };
    let env = |name: &str| std::env::var(name).ok();
    let mut options = DreamOptions::new(home, jiff::Timestamp::now());
    options.min_hours = cli.min_hours;
    options.min_sessions = cli.min_sessions;
    options.force = cli.force;
    options.playbook = cli.playbook;
    // The flag wins, then the `dreamer` setting, then Pi's own default
    // model. A bad setting warns (inside the run, after the lock).
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let (setting, warnings) = dreamer_setting(env, &cwd);
    options.model_pattern = cli.dreamer.or(setting);
    options.model_warnings = warnings;
    let mut dreamer = PiDreamer {
        pi: pi_executable(cli.pi, env),
        notesoup_pi,
        timeout: std::time::Duration::from_secs(cli.timeout.max(1)),
        work_dir: std::env::temp_dir().join(format!("notesoup-pi-dream-{}", uuid::Uuid::new_v4())),
    };
    // Each line is shown as the run reaches it: the gates before the
    // dreamer starts, the report and audit after it ends.
    let output = run_dream_with(&options, &mut dreamer, &mut print_line);
    ExitCode::from(u8::try_from(output.exit_code).unwrap_or(1))
}

fn run_doctor(args: DoctorArgs) -> ExitCode {
    let home = match resolve_home(args.notes_home) {
        Ok(home) => home,
        Err(error) => return failed(&error),
    };
    let output = match args.command {
        Some(DoctorCommand::Clean { apply }) => {
            clean_temp_files(&home, apply, std::time::SystemTime::now()).output()
        }
        None => doctor(&home).output(),
    };
    print_output(&output)
}

/// `notesoup-pi dream-tools --notes-home DIR`: serves the dream tools as
/// JSON lines on stdio until stdin closes.
pub fn serve_tools(notes_home: PathBuf) -> ExitCode {
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

fn failed(message: &str) -> ExitCode {
    eprintln!("notesoup-pi dream: {message}");
    ExitCode::FAILURE
}

/// `--notes-home`, else the notes root (`PI_NOTES_HOME`, else
/// `~/.agents/notes`), absolute: Pi and the dream tools start in it.
fn resolve_home(home: Option<PathBuf>) -> Result<PathBuf, String> {
    let env = |name: &str| std::env::var(name).ok();
    match home {
        Some(dir) => std::path::absolute(&dir)
            .map_err(|err| format!("--notes-home {}: {err}", dir.display())),
        None => notesoup_core::notes::default_root(env)
            .ok_or_else(|| "no notes home: give --notes-home or set PI_NOTES_HOME".to_owned()),
    }
}

/// Prints one dream line to its stream.
fn print_line(line: &OutputLine) {
    match line.stream {
        Stream::Stdout => outln!("{}", line.text),
        Stream::Stderr => eprintln!("{}", line.text),
    }
}

fn print_output(output: &DreamOutput) -> ExitCode {
    output.lines.iter().for_each(print_line);
    ExitCode::from(u8::try_from(output.exit_code).unwrap_or(1))
}
