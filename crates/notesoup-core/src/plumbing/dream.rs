//! The dream command as every host's binary runs it (`notesoup dream`,
//! `notesoup-pi dream`, `notesoup-dsh dream`, and the reference Pi host's
//! `notesoup-pi-reference dream --script`): its options from the command
//! line and the `dreamer` setting, the lines about a dreamer run as a child
//! process (started, finished, failed, stopped at its deadline), the run's
//! own lines as they happen, and the exit code. A host supplies only its
//! dreamer; nothing here prints: every line goes to the host's sink.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use jiff::Timestamp;

use crate::dream::{
    DreamOptions, DreamRequest, DreamResult, DreamRunner, Ended, OutputLine, run_dream_with,
};

/// Why a command did not find the notes home it works on.
#[derive(Debug, thiserror::Error)]
pub enum NotesHomeError {
    /// No `--notes-home`, and neither `PI_NOTES_HOME` nor a home directory.
    #[error(
        "the notes root is unknown: neither PI_NOTES_HOME nor HOME is set; set HOME (the root is then ~/.agents/notes) or PI_NOTES_HOME, or pass --notes-home"
    )]
    Unknown,
    /// `--notes-home` could not be made absolute (no current directory).
    #[error("--notes-home {path}: {source}")]
    Unresolved {
        /// The path as given.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// The notes home a command works on: `--notes-home` made absolute (a
/// dreamer starts in it and hands it on to its tools server, so a relative
/// path would be read from the wrong place), else the host's notes root
/// (core's [`NotesIdentity::default_root`]: `PI_NOTES_HOME`, else `~/.agents/notes`).
///
/// [`NotesIdentity::default_root`]: crate::notes::NotesIdentity::default_root
pub fn notes_home(given: Option<&Path>, root: Option<PathBuf>) -> Result<PathBuf, NotesHomeError> {
    match given {
        Some(path) => std::path::absolute(path).map_err(|source| NotesHomeError::Unresolved {
            path: path.to_owned(),
            source,
        }),
        None => root.ok_or(NotesHomeError::Unknown),
    }
}

/// What a dream command line asks for, before the home is found.
#[derive(Debug, Clone, Default)]
pub struct DreamFlags {
    /// `--notes-home`.
    pub notes_home: Option<PathBuf>,
    /// `--min-hours` (default `DEFAULT_MIN_HOURS`).
    pub min_hours: Option<f64>,
    /// `--min-sessions` (default `DEFAULT_MIN_SESSIONS`).
    pub min_sessions: Option<usize>,
    /// `--force`.
    pub force: bool,
    /// `--dreamer`: the model pattern, over the setting.
    pub dreamer: Option<String>,
    /// `--playbook`.
    pub playbook: Option<PathBuf>,
}

/// The host's `dreamer` setting: the pattern (if set and valid) and the
/// warnings reading it gave, printed once the run holds the lock.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DreamerSetting {
    /// The model pattern.
    pub pattern: Option<String>,
    /// What was wrong with the settings read for it.
    pub warnings: Vec<String>,
}

impl DreamFlags {
    /// The run's options at `now`: the home ([`notes_home`] over the host's
    /// notes `root`), the gates, and the model (`--dreamer`, else the
    /// setting, else the host's own choice).
    pub fn options(
        self,
        root: Option<PathBuf>,
        setting: DreamerSetting,
        now: Timestamp,
    ) -> Result<DreamOptions, NotesHomeError> {
        let home = notes_home(self.notes_home.as_deref(), root)?;
        let mut options = DreamOptions::new(home, now);
        options.min_hours = self.min_hours.unwrap_or(DreamOptions::DEFAULT_MIN_HOURS);
        options.min_sessions = self
            .min_sessions
            .unwrap_or(DreamOptions::DEFAULT_MIN_SESSIONS);
        options.force = self.force;
        options.model_pattern = self.dreamer.or(setting.pattern);
        options.model_warnings = setting.warnings;
        options.playbook = self.playbook;
        Ok(options)
    }
}

/// A dreamer run as a child process under a deadline: the command that is
/// started, as the lines name it, its program and its deadline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DreamerProcess {
    /// How the lines name it: `claude -p`, `pi --mode json`, `dsh --profile headless`.
    pub command: String,
    /// The program started: a path, or a bare name looked up on `PATH`.
    /// One that is not there fails the dream before it starts.
    pub program: PathBuf,
    /// How to get the program when it is not there, e.g. `install Claude
    /// Code, or name it with --claude PATH`.
    pub install_hint: String,
    /// The `PATH` a bare program name is looked up on (the host's
    /// environment's: core reads none).
    pub search_path: Option<std::ffi::OsString>,
    /// When it is stopped.
    pub timeout: Duration,
}

impl DreamerProcess {
    /// Why the program cannot be started, when it cannot: it is not on
    /// [`search_path`](Self::search_path), or the path names no executable
    /// file.
    pub fn missing(&self) -> Option<String> {
        let program = &self.program;
        let path_variable = self.search_path.as_deref();
        let why = if program.components().count() > 1 {
            match std::fs::metadata(program) {
                Ok(meta) if is_executable(&meta) => return None,
                Ok(_) => "is not an executable file",
                Err(_) => "does not exist",
            }
        } else {
            let found = path_variable
                .into_iter()
                .flat_map(std::env::split_paths)
                .any(|dir| {
                    std::fs::metadata(dir.join(program)).is_ok_and(|meta| is_executable(&meta))
                });
            if found {
                return None;
            }
            "is not on PATH"
        };
        Some(format!(
            "the dreamer {} {why} ({})",
            program.display(),
            self.install_hint
        ))
    }
}

#[cfg(unix)]
fn is_executable(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.is_file() && meta.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn is_executable(meta: &std::fs::Metadata) -> bool {
    meta.is_file()
}

/// How a dream is going, told each time the dreamer calls a dream tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DreamProgress {
    /// Since the dreamer started.
    pub elapsed: Duration,
    /// The dream-tool calls so far.
    pub tool_calls: usize,
    /// The distinct notes written, edited or deleted so far.
    pub notes_changed: usize,
    /// The call this is told for, when it changes a note: the tool and
    /// the path as given.
    pub change: Option<crate::dream::DreamWrite>,
}

/// Told of the run's progress.
pub(crate) type ProgressSink<'a> = &'a mut dyn FnMut(&DreamProgress);

/// The host's dreamer for one dream command.
pub struct Dreamer<'a> {
    /// Runs the dreamer.
    pub runner: &'a mut dyn DreamRunner,
    /// Set for a dreamer run as a child process: its start and end are
    /// said on stderr. A dreamer that runs in this process (the reference
    /// host's scripted one) has no such lines.
    pub process: Option<DreamerProcess>,
    /// Told of each dream-tool call the runner sees as it comes (the
    /// command line's progress), when set.
    pub progress: Option<ProgressSink<'a>>,
}

impl std::fmt::Debug for Dreamer<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dreamer")
            .field("process", &self.process)
            .finish_non_exhaustive()
    }
}

/// Hands a line to the sink. The run and the dreamer take turns, so the
/// sink is never borrowed twice; were it, the line would be dropped rather
/// than the command stopped.
fn say(sink: &Sink<'_>, line: &OutputLine) {
    if let Ok(mut sink) = sink.try_borrow_mut() {
        (*sink)(line);
    }
}

/// Where the command's lines go, shared by the run and the dreamer.
type Sink<'p> = RefCell<&'p mut dyn FnMut(&OutputLine)>;

/// The host's dreamer, with its start and end said and its progress told.
struct Told<'a, 's, 'p> {
    inner: &'a mut dyn DreamRunner,
    process: Option<DreamerProcess>,
    progress: RefCell<Option<ProgressSink<'a>>>,
    sink: &'s Sink<'p>,
}

impl Told<'_, '_, '_> {
    /// Runs the dreamer, telling the progress sink of each tool call.
    fn run_told(&mut self, request: DreamRequest<'_>) -> DreamResult {
        let started = Instant::now();
        let calls = std::cell::Cell::new(0_usize);
        let changed = RefCell::new(std::collections::BTreeSet::new());
        let progress = &self.progress;
        let forward = request.on_tool_call;
        let on_tool_call = |name: &str, arguments: &serde_json::Value| {
            forward(name, arguments);
            calls.set(calls.get() + 1);
            let change = crate::dream::DreamWrite::from_tool_event(name, arguments);
            if let (Some(change), Ok(mut changed)) = (&change, changed.try_borrow_mut()) {
                changed.insert(change.path.clone());
            }
            if let Ok(mut progress) = progress.try_borrow_mut()
                && let Some(progress) = progress.as_mut()
            {
                progress(&DreamProgress {
                    elapsed: started.elapsed(),
                    tool_calls: calls.get(),
                    notes_changed: changed.try_borrow().map_or(0, |changed| changed.len()),
                    change,
                });
            }
        };
        self.inner.run(DreamRequest {
            on_tool_call: &on_tool_call,
            ..request
        })
    }
}

impl DreamRunner for Told<'_, '_, '_> {
    fn ready(&self) -> Result<(), String> {
        self.inner.ready()?;
        match &self.process {
            Some(process) => match process.missing() {
                Some(reason) => Err(reason),
                None => Ok(()),
            },
            None => Ok(()),
        }
    }

    fn run(&mut self, request: DreamRequest<'_>) -> DreamResult {
        let Some(process) = self.process.clone() else {
            return self.run_told(request);
        };
        let timeout = process.timeout.as_secs();
        say(
            self.sink,
            &OutputLine::stderr(format!(
                "dream: the dreamer is running ({}, at most {timeout} s)",
                process.command
            )),
        );
        let started = Instant::now();
        let result = self.run_told(request);
        let elapsed = started.elapsed().as_secs();
        let line = match result.error.as_deref() {
            None => format!("dream: the dreamer finished after {elapsed} s"),
            Some(error) if error == Ended::timeout_error(process.timeout) => {
                format!("dream: stopped the dreamer after {timeout} s")
            }
            Some(_) => format!("dream: the dreamer failed after {elapsed} s"),
        };
        say(self.sink, &OutputLine::stderr(line));
        result
    }
}

impl DreamFlags {
    /// How long a dreamer run as a child process may run when the command line
    /// does not say (`--timeout`).
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30 * 60);

    /// `--timeout SECS` as the deadline a child-process dreamer runs under (at
    /// least a second: a zero deadline would stop it before it started).
    pub fn timeout(seconds: u64) -> Duration {
        Duration::from_secs(seconds.max(1))
    }
}

impl DreamerSetting {
    /// The agent a host runs as its dreamer: the command line's path, else the
    /// host's variable (`NOTESOUP_CLAUDE`, `NOTESOUP_PI`, `NOTESOUP_DSH`: its
    /// value through the host's lookup), else `name` looked up on PATH. A path
    /// (not a bare name) is made absolute: the dreamer starts in the notes
    /// home, where a relative path would name another file.
    pub fn executable(given: Option<PathBuf>, variable: Option<String>, name: &str) -> PathBuf {
        let chosen = given.or_else(|| variable.filter(|v| !v.is_empty()).map(PathBuf::from));
        match chosen {
            Some(path) if path.components().count() > 1 => {
                std::path::absolute(&path).unwrap_or(path)
            }
            Some(bare) => bare,
            None => PathBuf::from(name),
        }
    }
}

impl Dreamer<'_> {
    /// Runs the dream command: every line goes to `sink` as the run reaches
    /// it (the gates before the dreamer starts, the report and audit after it
    /// ends); returns the exit code: 0 for a run or a skip, 1 for a failure.
    pub fn run(self, options: &DreamOptions, sink: &mut dyn FnMut(&OutputLine)) -> i32 {
        let dreamer = self;
        let sink: Sink<'_> = RefCell::new(sink);
        let mut told = Told {
            inner: dreamer.runner,
            process: dreamer.process,
            progress: RefCell::new(dreamer.progress),
            sink: &sink,
        };
        run_dream_with(options, &mut told, &mut |line| say(&sink, line)).exit_code
    }
}

#[cfg(test)]
impl DreamerProcess {
    /// The tests' dreamer `program`: run as `agent -p`, installed as "install
    /// the agent".
    pub(crate) fn test_agent(
        program: &Path,
        search_path: Option<&Path>,
        timeout: Duration,
    ) -> DreamerProcess {
        DreamerProcess {
            command: "agent -p".to_owned(),
            program: program.to_owned(),
            install_hint: "install the agent".to_owned(),
            search_path: search_path.map(|dir| dir.as_os_str().to_owned()),
            timeout,
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn process(program: &Path, search_path: Option<&Path>) -> DreamerProcess {
        DreamerProcess::test_agent(program, search_path, Duration::from_secs(1))
    }

    fn file(path: &Path, mode: u32) {
        std::fs::write(path, b"#!/bin/sh\n").unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    /// A dreamer named by a path must be an executable file there; one named
    /// bare must be an executable file in a directory of the search path.
    #[test]
    fn a_dreamer_is_missing_unless_an_executable_file_is_there() {
        let dir = tempfile::tempdir().unwrap();
        let (runs, reads) = (dir.path().join("agent"), dir.path().join("notes"));
        file(&runs, 0o755);
        file(&reads, 0o644);
        let why = |program: &Path, search: Option<&Path>| process(program, search).missing();
        assert_eq!(why(&runs, None), None);
        assert_eq!(
            why(&reads, None).unwrap(),
            format!(
                "the dreamer {} is not an executable file (install the agent)",
                reads.display()
            )
        );
        let gone = dir.path().join("gone");
        assert_eq!(
            why(&gone, None).unwrap(),
            format!(
                "the dreamer {} does not exist (install the agent)",
                gone.display()
            )
        );
        // A directory is no executable file, whatever its mode.
        assert!(why(dir.path(), None).is_some());
        let on_path = |name: &str, search: Option<&Path>| why(Path::new(name), search);
        assert_eq!(on_path("agent", Some(dir.path())), None);
        for (name, search) in [
            ("notes", Some(dir.path())),
            ("gone", Some(dir.path())),
            ("agent", None),
        ] {
            assert_eq!(
                on_path(name, search).unwrap(),
                format!("the dreamer {name} is not on PATH (install the agent)")
            );
        }
    }

    /// The command line's path, else the host's variable unless empty, else
    /// the host's name; a path is made absolute, a bare name left for the
    /// search path.
    #[test]
    fn the_dreamer_is_the_flag_the_variable_or_the_name() {
        let pick = |given: Option<&str>, variable: Option<&str>| {
            DreamerSetting::executable(
                given.map(PathBuf::from),
                variable.map(str::to_owned),
                "agent",
            )
        };
        assert_eq!(pick(None, None), PathBuf::from("agent"));
        assert_eq!(pick(None, Some("")), PathBuf::from("agent"));
        assert_eq!(pick(None, Some("other")), PathBuf::from("other"));
        assert_eq!(pick(Some("mine"), Some("other")), PathBuf::from("mine"));
        assert_eq!(pick(Some("/opt/agent"), None), PathBuf::from("/opt/agent"));
        let relative = pick(None, Some("bin/agent"));
        assert!(relative.is_absolute(), "{}", relative.display());
        assert!(relative.ends_with("bin/agent"));
    }

    /// `--notes-home` made absolute, else the host's root, else an error.
    #[test]
    fn the_notes_home_is_the_flag_made_absolute_or_the_root() {
        let home = PathBuf::from("/home/someone/.agents/notes");
        let root = Some(home.clone());
        let given = notes_home(Some(Path::new("notes")), root.clone()).unwrap();
        assert!(
            given.is_absolute() && given.ends_with("notes"),
            "{}",
            given.display()
        );
        assert_eq!(
            notes_home(Some(Path::new("/srv/notes")), root.clone()).unwrap(),
            PathBuf::from("/srv/notes")
        );
        assert_eq!(notes_home(None, root).unwrap(), home);
        assert!(matches!(
            notes_home(None, None),
            Err(NotesHomeError::Unknown)
        ));
    }

    /// `--timeout 0` still gives the dreamer a second; without the flag it
    /// has the documented half hour (`--timeout 1800`).
    #[test]
    fn a_timeout_is_at_least_a_second() {
        assert_eq!(DreamFlags::timeout(0), Duration::from_secs(1));
        assert_eq!(DreamFlags::timeout(90), Duration::from_secs(90));
        assert_eq!(DreamFlags::DEFAULT_TIMEOUT, Duration::from_secs(1800));
    }
}
