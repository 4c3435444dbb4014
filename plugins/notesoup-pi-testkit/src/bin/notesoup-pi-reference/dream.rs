//! `notesoup-pi-reference dream --script FILE`: core's dream (spec section
//! 10.1) with the reference host's scripted dreamer, whose turns come from
//! FILE. The checks (`dream doctor`) are the adapter's: `notesoup-pi dream
//! doctor`.

use std::path::PathBuf;

use notesoup_core::dream::Stream;
use notesoup_core::notes::NotesIdentity;
use notesoup_core::plumbing::{DreamFlags, Dreamer, DreamerSetting};
use notesoup_pi_testkit::{ReferenceDreamHost, ScriptedModel, parse_dream_script};

/// `dream`'s flags.
#[derive(Debug, clap::Args)]
pub struct ReferenceDreamArgs {
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
/// an error (exit 2). The flow is core's dream command, the one every host
/// binary runs; the scripted dreamer runs in this process, so no lines about
/// a dreamer process are said.
pub fn run(args: ReferenceDreamArgs) -> Result<u8, String> {
    let text = std::fs::read_to_string(&args.script)
        .map_err(|err| format!("cannot read script {}: {err}", args.script.display()))?;
    let steps = parse_dream_script(&text)?;
    let flags = DreamFlags {
        notes_home: args.notes_home,
        min_hours: args.min_hours,
        min_sessions: args.min_sessions,
        force: args.force,
        dreamer: args.dreamer,
        playbook: args.playbook,
    };
    let root = NotesIdentity::default_root(|name| std::env::var(name).ok());
    let options = flags
        .options(root, DreamerSetting::default(), jiff::Timestamp::now())
        .map_err(|error| error.to_string())?;
    let mut model = ScriptedModel::new(200_000);
    for step in steps {
        model.push(step);
    }
    let mut runner = ReferenceDreamHost::new(model);
    let dreamer = Dreamer {
        runner: &mut runner,
        process: None,
        progress: None,
    };
    let code = dreamer.run(&options, &mut |line| match line.stream {
        Stream::Stdout => outln!("{}", line.text),
        Stream::Stderr => eprintln!("{}", line.text),
    });
    Ok(u8::try_from(code).unwrap_or(1))
}
