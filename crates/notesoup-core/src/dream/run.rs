//! The dream run: gates, lock, baseline audit, the host's dreamer, report,
//! final audit, and release or fail of the lock.

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use jiff::Timestamp;

use super::audit::{audit_commit, withheld_lines};
use super::gates::{DEFAULT_MIN_HOURS, DEFAULT_MIN_SESSIONS, material_gate, time_gate};
use super::lock::{DreamLock, last_run};
use super::report::finish_dream;
use super::result::DreamResult;
use super::tools::DreamTools;
use super::{DreamError, DreamOutput, OutputLine, PLAYBOOK};

/// What a host's dreamer is given.
pub struct DreamRequest<'a> {
    /// The single user prompt: the playbook text.
    pub prompt: &'a str,
    /// The notes home; the dreamer's working directory.
    pub home: &'a Path,
    /// The model pattern to resolve (`--dreamer`, else settings), or `None`
    /// for the host's automatic choice.
    pub model_pattern: Option<&'a str>,
    /// The jailed write/edit/delete and read-only tools to offer.
    pub tools: &'a DreamTools,
    /// Told of each dream-tool call as the dreamer makes it (its name and
    /// arguments), by a runner that sees its dreamer's calls as they come:
    /// the command line shows the run's progress from it.
    pub on_tool_call: &'a dyn Fn(&str, &serde_json::Value),
}

impl fmt::Debug for DreamRequest<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DreamRequest")
            .field("home", &self.home)
            .field("model_pattern", &self.model_pattern)
            .field("tools", &self.tools)
            .finish_non_exhaustive()
    }
}

/// A host's dreamer: one agent session over the notes home, with thinking
/// off and only the tools of [`DreamRequest::tools`].
pub trait DreamRunner {
    /// Whether the dreamer can start at all (its program is there), asked
    /// before the run takes the lock or touches the home: a dream that
    /// cannot start leaves nothing behind. The reason when it cannot.
    fn ready(&self) -> Result<(), String> {
        Ok(())
    }

    /// Runs the dreamer to completion. A failure to even start a session is
    /// reported as [`DreamResult::failed`].
    fn run(&mut self, request: DreamRequest<'_>) -> DreamResult;
}

/// The options of `dream` (the CLI flags, resolved by the host).
#[derive(Debug, Clone)]
pub struct DreamOptions {
    /// `--notes-home`, else the notes root.
    pub home: PathBuf,
    /// `--min-hours` (default 24).
    pub min_hours: f64,
    /// `--min-sessions` (default 3).
    pub min_sessions: usize,
    /// `--force`: bypasses the gates, never the lock.
    pub force: bool,
    /// `--dreamer`, else the settings pattern.
    pub model_pattern: Option<String>,
    /// Warnings from reading the settings pattern, printed to stderr.
    pub model_warnings: Vec<String>,
    /// `--playbook`, else the packaged [`DreamAsset::Playbook`](super::DreamAsset::Playbook).
    pub playbook: Option<PathBuf>,
    /// The clock reading this run starts at.
    pub now: Timestamp,
}

impl DreamOptions {
    /// Default minimum age of the last run, in hours (`--min-hours`).
    pub const DEFAULT_MIN_HOURS: f64 = DEFAULT_MIN_HOURS;
    /// Default minimum number of changed session homes (`--min-sessions`).
    pub const DEFAULT_MIN_SESSIONS: usize = DEFAULT_MIN_SESSIONS;

    /// The defaults for `home` at `now`.
    pub fn new(home: impl Into<PathBuf>, now: Timestamp) -> Self {
        DreamOptions {
            home: home.into(),
            min_hours: DEFAULT_MIN_HOURS,
            min_sessions: DEFAULT_MIN_SESSIONS,
            force: false,
            model_pattern: None,
            model_warnings: Vec::new(),
            playbook: None,
            now,
        }
    }
}

/// Printed when a gate stops the run (a skip, not a failure).
const SKIPPED: &str = "dream: skipped; pass --force to dream anyway (it never bypasses the lock)";

/// Runs one dream per the spec's run sequence and returns the exit code and
/// the lines to print, in order. The host sets `PI_NOTES_HOME` and prints.
pub fn run_dream(options: &DreamOptions, runner: &mut dyn DreamRunner) -> DreamOutput {
    run_dream_with(options, runner, &mut |_| {})
}

/// [`run_dream`], handing each line to `progress` as it happens (the gates
/// before the dreamer starts, the report and audit after it ends), so a
/// command line can show the run as it goes. The output still holds every
/// line.
pub(crate) fn run_dream_with(
    options: &DreamOptions,
    runner: &mut dyn DreamRunner,
    progress: &mut dyn FnMut(&OutputLine),
) -> DreamOutput {
    let mut out = Progress {
        output: DreamOutput::default(),
        progress,
    };
    run_steps(options, runner, &mut out);
    out.output
}

/// The output being built, and who is told of each line as it comes.
struct Progress<'p> {
    output: DreamOutput,
    progress: &'p mut dyn FnMut(&OutputLine),
}

impl Progress<'_> {
    fn push(&mut self, line: OutputLine) {
        (self.progress)(&line);
        self.output.lines.push(line);
    }
}

fn run_steps(options: &DreamOptions, runner: &mut dyn DreamRunner, out: &mut Progress<'_>) {
    let home = options.home.as_path();
    let since = last_run(home);
    let time = time_gate(since, options.now, options.min_hours);
    out.push(OutputLine::stdout(time.reason));
    if !time.ok && !options.force {
        out.push(OutputLine::stdout(SKIPPED));
        return;
    }
    let material = material_gate(home, since, options.min_sessions);
    out.push(OutputLine::stdout(material.reason));
    if !material.ok && !options.force {
        out.push(OutputLine::stdout(SKIPPED));
        return;
    }

    // A dream that cannot start (no playbook, no dreamer) says why and
    // leaves nothing behind: no home, lock, Git repository, commit or
    // report.
    let prompt = match read_playbook(options.playbook.as_deref()).and_then(|prompt| {
        runner.ready()?;
        Ok(prompt)
    }) {
        Ok(prompt) => prompt,
        Err(reason) => {
            out.push(OutputLine::stderr(format!(
                "dream: cannot start: {reason}; nothing was changed"
            )));
            out.output.exit_code = 1;
            return;
        }
    };
    if let Err(err) = fs::create_dir_all(home) {
        out.push(OutputLine::stderr(format!(
            "dream: cannot create notes home {}: {err}",
            home.display()
        )));
        out.output.exit_code = 1;
        return;
    }

    let mut lock = match DreamLock::acquire(home, options.now) {
        Ok(lock) => lock,
        Err(DreamError::LockHeld) => {
            // Another run holds it: this run failed, and --force does not
            // change that. (A dream that died frees it: it is no longer held.)
            out.push(OutputLine::stderr(DreamError::LockHeld.to_string()));
            out.push(OutputLine::stderr(format!(
                "dream: not run: another dream is running (it holds {}); try again when it has ended",
                home.join(super::LOCK_FILE).display()
            )));
            out.output.exit_code = 1;
            return;
        }
        Err(err) => {
            out.push(OutputLine::stderr(format!("dream: {err}")));
            out.output.exit_code = 1;
            return;
        }
    };
    if let Some(stale) = lock.stale() {
        out.push(OutputLine::stderr(format!(
            "dream: took over {}, a stale lock left by a dream that is gone (it held {stale:?})",
            home.join(super::LOCK_FILE).display()
        )));
    }
    let stamp = lock.stamp();
    for warning in &options.model_warnings {
        out.push(OutputLine::stderr(warning.clone()));
    }

    match audit_commit(home, &format!("baseline {stamp}")) {
        Ok(baseline) => {
            for line in withheld_lines("baseline", &baseline.withheld) {
                out.push(line);
            }
        }
        Err(err) => {
            out.push(OutputLine::stderr(format!(
                "dream: baseline audit failed: {err}"
            )));
            out.output.exit_code = 1;
            settle(&mut lock, out);
            return;
        }
    }

    let tools = DreamTools::new(home).at(options.now);
    let result = runner.run(DreamRequest {
        prompt: &prompt,
        home,
        model_pattern: options.model_pattern.as_deref(),
        tools: &tools,
        on_tool_call: &|_, _| {},
    });
    let finished = finish_dream(home, &stamp, &result);
    out.output.exit_code = finished.exit_code;
    for line in finished.lines {
        out.push(line);
    }
    settle(&mut lock, out);
}

/// Releases the lock after a successful run, fails it otherwise.
fn settle(lock: &mut DreamLock, out: &mut Progress<'_>) {
    let settled = if out.output.exit_code == 0 {
        lock.release()
    } else {
        lock.fail()
    };
    if let Err(err) = settled {
        out.push(OutputLine::stderr(format!("dream: {err}")));
        out.output.exit_code = 1;
    }
}

fn read_playbook(path: Option<&Path>) -> Result<String, String> {
    match path {
        None => Ok(PLAYBOOK.to_owned()),
        Some(path) => fs::read_to_string(path)
            .map_err(|err| format!("cannot read playbook {}: {err}", path.display())),
    }
}
