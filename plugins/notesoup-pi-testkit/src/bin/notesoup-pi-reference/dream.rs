//! `notesoup-pi-reference dream --script FILE`: core's dream (spec section
//! 10.1) with the reference host's scripted dreamer, whose turns come from
//! FILE. The checks (`dream doctor`) are the adapter's: `notesoup-pi dream
//! doctor`.

use std::path::PathBuf;

use notesoup_core::dream::{DreamOptions, DreamOutput, Stream, run_dream};
use notesoup_pi_testkit::{ReferenceDreamHost, ScriptedModel, parse_dream_script};

/// `dream`'s flags.
#[derive(Debug, clap::Args)]
pub struct DreamArgs {
    /// The notes home (default: $PI_NOTES_HOME, else ~/.agents/notes).
    #[arg(long, value_name = "DIR")]
    notes_home: Option<PathBuf>,
    /// Time gate in hours (default 24).
    #[arg(long, value_name = "N")]
    min_hours: Option<f64>,
    /// Material gate in sessions (default 3).
    #[arg(long, value_name = "N")]
    min_sessions: Option<usize>,
    /// Bypass the gates (never the lock).
    #[arg(long)]
    force: bool,
    /// Model pattern (the scripted model is scripted/scripted-1).
    #[arg(long, value_name = "PATTERN")]
    dreamer: Option<String>,
    /// The prompt (default: the packaged playbook).
    #[arg(long, value_name = "PATH")]
    playbook: Option<PathBuf>,
    /// The dreamer's turns as JSON: [{"tools":[{"name":"read","arguments":
    /// {"path":"x.md"}}]}, {"text":"report"}, {"error":"..."}].
    #[arg(long, value_name = "FILE")]
    script: PathBuf,
}

/// Runs the dream and returns the exit code; a bad script or notes home is
/// an error (exit 2).
pub fn run(args: DreamArgs) -> Result<u8, String> {
    let text = std::fs::read_to_string(&args.script)
        .map_err(|err| format!("cannot read script {}: {err}", args.script.display()))?;
    let steps = parse_dream_script(&text)?;
    let mut options = DreamOptions::new(resolve_home(args.notes_home)?, jiff::Timestamp::now());
    options.force = args.force;
    if let Some(hours) = args.min_hours {
        options.min_hours = hours;
    }
    if let Some(sessions) = args.min_sessions {
        options.min_sessions = sessions;
    }
    options.model_pattern = args.dreamer;
    options.playbook = args.playbook;
    let mut model = ScriptedModel::new(200_000);
    for step in steps {
        model.push(step);
    }
    let mut dreamer = ReferenceDreamHost::new(model);
    Ok(print(&run_dream(&options, &mut dreamer)))
}

/// `--notes-home`, else the notes root (`PI_NOTES_HOME`, else
/// `~/.agents/notes`), absolute.
fn resolve_home(home: Option<PathBuf>) -> Result<PathBuf, String> {
    let env = |name: &str| std::env::var(name).ok();
    match home {
        Some(dir) => std::path::absolute(&dir)
            .map_err(|err| format!("--notes-home {}: {err}", dir.display())),
        None => notesoup_core::notes::default_root(env)
            .ok_or_else(|| "no notes home: give --notes-home or set PI_NOTES_HOME".to_owned()),
    }
}

fn print(output: &DreamOutput) -> u8 {
    for line in &output.lines {
        match line.stream {
            Stream::Stdout => outln!("{}", line.text),
            Stream::Stderr => eprintln!("{}", line.text),
        }
    }
    u8::try_from(output.exit_code).unwrap_or(1)
}
