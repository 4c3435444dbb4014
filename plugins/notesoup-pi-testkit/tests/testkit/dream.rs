//! The dream composition end to end: core's `run_dream` with the reference
//! host's scripted dreamer (`ReferenceDreamHost`), on real notes
//! in a temporary home with a real Git audit; and `notesoup-pi-reference
//! dream --script FILE`.

use std::fs;
use std::path::Path;
use std::process::Command;

use notesoup_core::dream::{DreamOptions, DreamOutput, Stream, run_dream};
use notesoup_pi::session::AgentMessage;
use notesoup_pi_testkit::{ReferenceDreamHost, ScriptedModel, Step};
use notesoup_test_support::child;
use notesoup_test_support::dreamer::{self, CRUMPLED, LIVE};
use serde_json::json;

/// A notes home with one live and one crumpled note.
fn home() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let notes = dir.path().join("notes");
    dreamer::live_and_crumpled(&notes);
    dir
}

fn options(home: &Path) -> DreamOptions {
    let mut options = DreamOptions::new(home, jiff::Timestamp::now());
    options.force = true;
    options
}

fn stdout(output: &DreamOutput) -> Vec<&str> {
    output
        .lines
        .iter()
        .filter(|line| line.stream == Stream::Stdout)
        .map(|line| line.text.as_str())
        .collect()
}

fn git_log(home: &Path) -> Vec<String> {
    let (code, log, stderr) = child::outcome(
        Command::new("git")
            .args(["log", "--format=%s"])
            .current_dir(home),
    );
    assert_eq!(code, 0, "{stderr}");
    log.lines().map(str::to_owned).collect()
}

/// `(tool name, is_error, text)` of every tool result of the session.
fn tool_results(host: &ReferenceDreamHost) -> Vec<(String, bool, String)> {
    host.messages
        .iter()
        .filter_map(|message| match message {
            AgentMessage::ToolResult(result) => Some((
                result.tool_name.clone(),
                result.is_error,
                notesoup_pi_testkit::message_text(message),
            )),
            _ => None,
        })
        .collect()
}

/// The dreamer of the end-to-end run: looks around, edits the live note,
/// deletes the crumpled one, then tries two things the jail refuses.
fn dreamer_steps() -> Vec<Step> {
    vec![
        Step::tools(
            None,
            vec![
                ("ls", json!({"path": "project/demo-1a2b3c4d"})),
                ("find", json!({"path": "project"})),
                ("grep", json!({"query": "PARSER"})),
                ("read", json!({"path": LIVE})),
            ],
        ),
        Step::tools(
            Some("Tidying."),
            vec![
                (
                    "edit",
                    json!({"path": LIVE, "edits": [{"oldText": "is slow", "newText": "is slow; profile the tokenizer first"}]}),
                ),
                ("delete", json!({"path": CRUMPLED})),
                ("delete", json!({"path": LIVE})),
                (
                    "write",
                    json!({"path": "../outside.md", "content": "escape"}),
                ),
            ],
        ),
        Step::text("Edited the parser note; emptied the wastebasket."),
    ]
}

#[test]
fn a_scripted_dreamer_tidies_the_home_inside_the_jail_with_an_audit() {
    let dir = home();
    let home = dir.path().join("notes");
    let mut model = ScriptedModel::new(200_000);
    for step in dreamer_steps() {
        model.push(step);
    }
    let mut dreamer = ReferenceDreamHost::new(model);
    let output = run_dream(&options(&home), &mut dreamer);
    assert_eq!(output.exit_code, 0, "{output:#?}");

    let session = dreamer.session.clone().unwrap();
    assert_eq!(session.cwd, home);
    assert_eq!(session.thinking_level, "off");
    assert_eq!(
        session.tools,
        ["read", "grep", "find", "ls", "write", "edit", "delete"]
    );
    assert_eq!(
        session.prompt,
        notesoup_core::dream::DreamAsset::Playbook.text()
    );

    let results = tool_results(&dreamer);
    let shown: Vec<(&str, bool)> = results
        .iter()
        .map(|(name, error, _)| (name.as_str(), *error))
        .collect();
    assert_eq!(
        shown,
        [
            ("ls", false),
            ("find", false),
            ("grep", false),
            ("read", false),
            ("edit", false),
            ("delete", false),
            ("delete", true),
            ("write", true),
        ]
    );
    assert_eq!(results[0].2, "old-idea.md\nparser.md");
    assert_eq!(results[1].2, format!("{CRUMPLED}\n{LIVE}"));
    assert_eq!(results[2].2, format!("{LIVE}:7: The parser is slow."));
    assert!(results[3].2.contains("The parser is slow."));
    assert_eq!(results[5].2, format!("deleted {CRUMPLED}"));

    let live = fs::read_to_string(home.join(LIVE)).unwrap();
    assert!(live.contains("The parser is slow; profile the tokenizer first."));
    assert!(!home.join(CRUMPLED).exists());
    assert!(!dir.path().join("outside.md").exists());

    let report_line = *stdout(&output).last().unwrap();
    let report_path = Path::new(report_line);
    assert_eq!(report_path.parent().unwrap(), home.join("dreams"));
    let stamp = report_path.file_stem().unwrap().to_str().unwrap();
    let report = fs::read_to_string(report_path).unwrap();
    assert_eq!(
        report,
        format!(
            "# Dream {stamp}\n\nEdited the parser note; emptied the wastebasket.\n\n\
             - edit: {LIVE}\n- delete: {CRUMPLED}\n- delete: {LIVE}\n- write: ../outside.md\n"
        )
    );
    assert_eq!(
        git_log(&home),
        [format!("dream {stamp}"), format!("baseline {stamp}")]
    );
}

#[test]
fn a_provider_error_fails_the_run_and_keeps_the_partial_writes() {
    let dir = home();
    let home = dir.path().join("notes");
    let mut model = ScriptedModel::new(200_000);
    model
        .push(Step::tool(
            "write",
            json!({"path": "project/demo-1a2b3c4d/new.md", "content": "new\n"}),
        ))
        .push(Step::error("overloaded_error: try again"));
    let mut dreamer = ReferenceDreamHost::new(model);
    let output = run_dream(&options(&home), &mut dreamer);
    assert_eq!(output.exit_code, 1);
    let failure = output
        .lines
        .iter()
        .find(|line| line.stream == Stream::Stderr)
        .unwrap();
    let report_path = failure
        .text
        .strip_prefix("dream: run failed: ")
        .and_then(|rest| rest.rsplit_once("; see "))
        .unwrap()
        .1;
    let stamp = Path::new(report_path)
        .file_stem()
        .unwrap()
        .to_str()
        .unwrap();
    assert_eq!(
        fs::read_to_string(report_path).unwrap(),
        format!(
            "# Dream {stamp} (failed)\n\ndreamer failed: overloaded_error: try again\n\n- write: project/demo-1a2b3c4d/new.md\n"
        )
    );
    assert_eq!(
        git_log(&home),
        [
            format!("dream {stamp} (failed)"),
            format!("baseline {stamp}")
        ]
    );
}

#[test]
fn an_unresolved_model_pattern_fails_before_any_session() {
    let dir = home();
    let home = dir.path().join("notes");
    let mut options = options(&home);
    options.model_pattern = Some("opus".to_owned());
    let mut dreamer = ReferenceDreamHost::new(ScriptedModel::new(1000));
    let output = run_dream(&options, &mut dreamer);
    assert_eq!(output.exit_code, 1);
    assert!(dreamer.session.is_none());
    let report = fs::read_dir(home.join("dreams"))
        .unwrap()
        .map(|entry| fs::read_to_string(entry.unwrap().path()).unwrap())
        .next()
        .unwrap();
    assert!(report.contains(
        "\n\ndreamer model pattern \"opus\" did not resolve to an available model\n\n- no changes\n"
    ));
}

fn binary(args: &[&str], home: &Path) -> (i32, String, String) {
    child::outcome(
        Command::new(env!("CARGO_BIN_EXE_notesoup-pi-reference"))
            .args(args)
            .arg("--notes-home")
            .arg(home),
    )
}

#[test]
fn the_dream_subcommand_replays_a_script_and_reports() {
    let dir = home();
    let home = dir.path().join("notes");
    let script = dir.path().join("script.json");
    fs::write(
        &script,
        json!([
            {"tools": [{"name": "delete", "arguments": {"path": CRUMPLED}}]},
            {"text": "Emptied the wastebasket."}
        ])
        .to_string(),
    )
    .unwrap();
    let script = script.to_str().unwrap();

    let (code, out, err) = binary(
        &[
            "dream",
            "--force",
            "--dreamer",
            "scripted-1",
            "--script",
            script,
        ],
        &home,
    );
    assert_eq!(code, 0, "{out}\n{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[..2],
        [
            "time gate: no prior dream",
            "material gate: only 0 changed sessions"
        ]
    );
    let report = fs::read_to_string(lines[2]).unwrap();
    assert!(report.ends_with(
        "\n\nEmptied the wastebasket.\n\n- delete: project/demo-1a2b3c4d/old-idea.md\n"
    ));
    assert!(!home.join(CRUMPLED).exists());

    // The stamp is fresh now: the time gate stops a second run.
    let (code, out, _) = binary(&["dream", "--script", script], &home);
    assert_eq!(
        (code, out.as_str()),
        (
            0,
            "time gate: last dream is too recent\ndream: skipped; pass --force to dream anyway (it never bypasses the lock)\n"
        )
    );

    let doctor = notesoup_core::dream::doctor(&home).output();
    assert_eq!(doctor.exit_code, 0);
    assert_eq!(
        stdout(&doctor),
        [format!("doctor: OK ({})", home.display()).as_str()]
    );
}

#[test]
fn the_dream_subcommand_fails_on_a_provider_error_a_missing_script_and_a_bad_script() {
    let dir = home();
    let home = dir.path().join("notes");
    let script = dir.path().join("script.json");
    fs::write(&script, r#"[{"error": "401 invalid api key"}]"#).unwrap();
    let (code, _, err) = binary(
        &["dream", "--force", "--script", script.to_str().unwrap()],
        &home,
    );
    assert_eq!(code, 1);
    let path = err
        .trim()
        .strip_prefix("dream: run failed: ")
        .and_then(|rest| rest.rsplit_once("; see "))
        .unwrap()
        .1;
    assert!(
        fs::read_to_string(path)
            .unwrap()
            .contains("\n\ndreamer failed: 401 invalid api key\n\n- no changes\n")
    );

    let (code, out, err) = binary(&["dream", "--force"], &home);
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(err.contains("--script"), "{err}");

    fs::write(&script, r#"[{"text": "a", "error": "b"}]"#).unwrap();
    let (code, _, err) = binary(&["dream", "--script", script.to_str().unwrap()], &home);
    assert_eq!(code, 2);
    assert!(err.contains("step 0 needs exactly one of"), "{err}");
}
