//! The host plumbing every binary's command line shares: the notes home a
//! command works on, opening the store for an identity, and the dream
//! command's flow (its options, the lines about the dreamer process, the
//! exit code).

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use jiff::Timestamp;
use notesoup_core::dream::{
    DreamRequest, DreamResult, DreamRunner, DreamTool, DreamWrite, Ended, OutputLine, Stream,
};
use notesoup_core::plumbing::{
    DreamFlags, DreamProgress, Dreamer, DreamerProcess, DreamerSetting, NotesHomeError, NotesOwner,
    notes_home,
};

#[test]
fn the_notes_home_is_the_flag_made_absolute_else_the_root() {
    let given = notes_home(Some(Path::new("notes")), None).unwrap();
    assert!(given.is_absolute() && given.ends_with("notes"), "{given:?}");
    let root = PathBuf::from("/srv/notes");
    assert_eq!(notes_home(None, Some(root.clone())).unwrap(), root);
    assert_eq!(
        notes_home(Some(Path::new("/elsewhere")), Some(root)).unwrap(),
        PathBuf::from("/elsewhere")
    );
    let unknown = notes_home(None, None).unwrap_err();
    assert!(matches!(unknown, NotesHomeError::Unknown));
    assert_eq!(
        unknown.to_string(),
        "the notes root is unknown: neither PI_NOTES_HOME nor HOME is set; set HOME (the root is then ~/.agents/notes) or PI_NOTES_HOME, or pass --notes-home"
    );
}

#[test]
fn the_store_s_identity_has_a_session_only_when_one_is_known() {
    let owner = |session_id| NotesOwner {
        root: Path::new("/srv/notes"),
        session_id,
        project_key: "proj-1a2b3c4d",
        agent: "tester",
        model: "model-1",
    };
    let with = owner(Some("s1")).open().unwrap();
    assert_eq!(with.identity().session_id(), Some("s1"));
    assert_eq!(with.identity().project_key(), "proj-1a2b3c4d");
    assert_eq!(owner(None).identity().unwrap().session_id(), None);
    let refused = owner(Some("../up")).identity().unwrap_err();
    assert_eq!(refused.identity_field(), Some("sessionId"));
}

#[test]
fn dream_options_take_the_flag_over_the_setting() {
    let now: Timestamp = "2026-09-15T09:31:45Z".parse().unwrap();
    let setting = DreamerSetting {
        pattern: Some("from-settings".into()),
        warnings: vec!["notesoup: a warning".into()],
    };
    let flags = DreamFlags {
        notes_home: Some(PathBuf::from("/srv/notes")),
        ..DreamFlags::default()
    };
    let options = flags.clone().options(None, setting.clone(), now).unwrap();
    assert_eq!(options.home, PathBuf::from("/srv/notes"));
    assert_eq!(options.model_pattern.as_deref(), Some("from-settings"));
    assert_eq!(options.model_warnings, ["notesoup: a warning"]);
    assert_eq!((options.min_hours, options.min_sessions), (24.0, 3));
    let flagged = DreamFlags {
        dreamer: Some("flagged".into()),
        min_hours: Some(0.5),
        min_sessions: Some(0),
        force: true,
        ..flags
    }
    .options(None, setting, now)
    .unwrap();
    assert_eq!(flagged.model_pattern.as_deref(), Some("flagged"));
    assert_eq!((flagged.min_hours, flagged.min_sessions), (0.5, 0));
    assert!(flagged.force);
    assert!(
        DreamFlags::default()
            .options(None, DreamerSetting::default(), now)
            .is_err()
    );
}

/// A dreamer that answers at once with `error`.
struct Answering(Option<String>);

impl DreamRunner for Answering {
    fn run(&mut self, _request: DreamRequest<'_>) -> DreamResult {
        DreamResult {
            report: "Report: nothing to do.".into(),
            writes: Vec::new(),
            error: self.0.clone(),
        }
    }
}

/// The options of a forced dream over a fresh notes home in `dir`.
fn forced(dir: &Path) -> notesoup_core::dream::DreamOptions {
    DreamFlags {
        notes_home: Some(dir.join("notes")),
        force: true,
        ..DreamFlags::default()
    }
    .options(None, DreamerSetting::default(), Timestamp::now())
    .unwrap()
}

/// The stderr lines a dream command said about its dreamer, and its exit
/// code.
fn dreamer_lines(error: Option<String>, process: Option<DreamerProcess>) -> (Vec<String>, i32) {
    let dir = tempfile::tempdir().unwrap();
    let options = forced(dir.path());
    let mut lines: Vec<OutputLine> = Vec::new();
    let mut runner = Answering(error);
    let code = Dreamer {
        runner: &mut runner,
        process,
        progress: None,
    }
    .run(&options, &mut |line| lines.push(line.clone()));
    let about: Vec<String> = lines
        .into_iter()
        .filter(|line| line.stream == Stream::Stderr && line.text.contains("the dreamer"))
        .map(|line| line.text)
        .collect();
    (about, code)
}

fn process() -> Option<DreamerProcess> {
    Some(DreamerProcess {
        command: "agent -p".into(),
        program: "/bin/sh".into(),
        install_hint: "install the agent".into(),
        search_path: None,
        timeout: Duration::from_secs(5),
    })
}

#[test]
fn a_child_process_dreamer_s_start_and_end_are_said_once() {
    let (lines, code) = dreamer_lines(None, process());
    assert_eq!(code, 0);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(
        lines[0],
        "dream: the dreamer is running (agent -p, at most 5 s)"
    );
    assert!(
        lines[1].starts_with("dream: the dreamer finished after ") && lines[1].ends_with(" s"),
        "{lines:?}"
    );

    let (lines, code) = dreamer_lines(Some("dreamer failed: 401".into()), process());
    assert_eq!(code, 1);
    assert!(
        lines[1].starts_with("dream: the dreamer failed after "),
        "{lines:?}"
    );

    let timed_out = Ended::timeout_error(Duration::from_secs(5));
    let (lines, code) = dreamer_lines(Some(timed_out), process());
    assert_eq!(code, 1);
    assert_eq!(lines[1], "dream: stopped the dreamer after 5 s");

    // A dreamer in this process (the reference host's) has no such lines.
    let (lines, code) = dreamer_lines(None, None);
    assert_eq!((lines.len(), code), (0, 0), "{lines:?}");
}

/// A dreamer that makes the given dream-tool calls, then answers.
struct Calling(Vec<(&'static str, serde_json::Value)>);

impl DreamRunner for Calling {
    fn run(&mut self, request: DreamRequest<'_>) -> DreamResult {
        for (name, arguments) in &self.0 {
            (request.on_tool_call)(name, arguments);
        }
        DreamResult::default()
    }
}

#[test]
fn the_progress_counts_the_calls_and_the_distinct_notes_changed() {
    let dir = tempfile::tempdir().unwrap();
    let at = |path: &str| serde_json::json!({"path": path, "content": "x"});
    let mut runner = Calling(vec![
        ("write", at("human/a.md")),
        ("read", at("human/a.md")),
        ("edit", at("human/a.md")),
        ("delete", at("human/b.md")),
    ]);
    let mut told: Vec<DreamProgress> = Vec::new();
    let code = Dreamer {
        runner: &mut runner,
        process: None,
        progress: Some(&mut |progress| told.push(progress.clone())),
    }
    .run(&forced(dir.path()), &mut |_| {});
    assert_eq!(code, 0);
    let change = |tool, path: &str| {
        Some(DreamWrite {
            tool,
            path: path.into(),
        })
    };
    let seen: Vec<_> = told
        .into_iter()
        .map(|p| (p.tool_calls, p.notes_changed, p.change))
        .collect();
    assert_eq!(
        seen,
        [
            (1, 1, change(DreamTool::Write, "human/a.md")),
            (2, 1, None),
            (3, 1, change(DreamTool::Edit, "human/a.md")),
            (4, 2, change(DreamTool::Delete, "human/b.md")),
        ]
    );
}

#[test]
fn a_dreamer_process_that_is_not_there_stops_the_dream_before_it_starts() {
    let dir = tempfile::tempdir().unwrap();
    let options = forced(dir.path());
    let mut absent = process().unwrap();
    absent.program = dir.path().join("no-agent");
    let mut lines: Vec<String> = Vec::new();
    let mut runner = Answering(None);
    let code = Dreamer {
        runner: &mut runner,
        process: Some(absent.clone()),
        progress: None,
    }
    .run(&options, &mut |line| lines.push(line.text.clone()));
    assert_eq!(code, 1);
    // After the gates' lines (forced past them).
    assert_eq!(
        lines.last(),
        Some(&format!(
            "dream: cannot start: the dreamer {} does not exist (install the agent); nothing was changed",
            absent.program.display()
        )),
        "{lines:?}"
    );
    assert!(!options.home.exists(), "nothing was made");
}

#[test]
fn the_dreamer_s_debug_form_names_its_process() {
    let mut runner = Answering(None);
    let dreamer = Dreamer {
        runner: &mut runner,
        process: process(),
        progress: None,
    };
    let debug = format!("{dreamer:?}");
    assert!(
        debug.starts_with("Dreamer { process: Some(DreamerProcess { command: \"agent -p\""),
        "{debug}"
    );
}

#[test]
fn the_dreamer_executable_is_the_flag_then_the_variable_then_the_name() {
    assert_eq!(
        DreamerSetting::executable(None, None, "pi"),
        PathBuf::from("pi")
    );
    assert_eq!(
        DreamerSetting::executable(None, Some(String::new()), "pi"),
        PathBuf::from("pi")
    );
    assert_eq!(
        DreamerSetting::executable(None, Some("/opt/pi".into()), "pi"),
        PathBuf::from("/opt/pi")
    );
    assert_eq!(
        DreamerSetting::executable(Some("pi-1.6".into()), Some("/opt/pi".into()), "pi"),
        PathBuf::from("pi-1.6")
    );
    let relative = DreamerSetting::executable(Some("bin/pi".into()), None, "pi");
    assert!(relative.is_absolute() && relative.ends_with("bin/pi"));
}
