//! The whole dream run driven by a scripted `DreamRunner`, including
//! failure propagation to the exit code.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use jiff::Timestamp;
use notesoup_core::dream::{
    DreamLock, DreamOptions, DreamOutput, DreamRequest, DreamResult, DreamRunner, DreamTool,
    DreamWrite, LAST_RUN_FILE, LOCK_FILE, PLAYBOOK, TextEdit, last_run, run_dream,
};

use super::support::{
    AWS_KEY, committed_files, git, hours_before, put, render_output, set_mtime,
    three_fresh_sessions, tree_hash,
};

const STAMP: &str = "2026-09-15T09-31-45-392Z";

fn now() -> Timestamp {
    "2026-09-15T09:31:45.392Z".parse().expect("timestamp")
}

/// One thing the scripted dreamer does.
enum Step {
    Write(&'static str, &'static str),
    Edit(&'static str, &'static str, &'static str),
    Delete(&'static str),
    /// Something outside the tools, e.g. breaking the repository.
    Sabotage(fn(&Path)),
}

/// A dreamer that follows a script through the jailed tools and records
/// its writes the way a host does.
struct ScriptedRunner {
    steps: Vec<Step>,
    report: &'static str,
    error: Option<&'static str>,
    calls: usize,
    prompt: String,
    model_pattern: Option<String>,
    tool_results: Vec<String>,
}

impl ScriptedRunner {
    fn new(steps: Vec<Step>, report: &'static str) -> Self {
        ScriptedRunner {
            steps,
            report,
            error: None,
            calls: 0,
            prompt: String::new(),
            model_pattern: None,
            tool_results: Vec::new(),
        }
    }

    fn failing(steps: Vec<Step>, error: &'static str) -> Self {
        ScriptedRunner {
            error: Some(error),
            ..ScriptedRunner::new(steps, "partial report")
        }
    }
}

impl DreamRunner for ScriptedRunner {
    fn run(&mut self, request: DreamRequest<'_>) -> DreamResult {
        self.calls += 1;
        self.prompt = request.prompt.to_owned();
        self.model_pattern = request.model_pattern.map(str::to_owned);
        let mut writes = Vec::new();
        for step in &self.steps {
            let (tool, path, result) = match *step {
                Step::Write(path, content) => {
                    (DreamTool::Write, path, request.tools.write(path, content))
                }
                Step::Edit(path, old, new) => {
                    let edit = TextEdit {
                        old_text: old.into(),
                        new_text: new.into(),
                    };
                    (DreamTool::Edit, path, request.tools.edit(path, &[edit]))
                }
                Step::Delete(path) => (DreamTool::Delete, path, request.tools.delete(path)),
                Step::Sabotage(sabotage) => {
                    sabotage(request.home);
                    continue;
                }
            };
            writes.push(DreamWrite {
                tool,
                path: path.to_owned(),
            });
            self.tool_results.push(match result {
                Ok(text) => text,
                Err(err) => format!("error: {}: {err}", err.code()),
            });
        }
        DreamResult {
            report: self.report.to_owned(),
            writes,
            error: self.error.map(str::to_owned),
        }
    }
}

const CRUMPLED: &str = "---\norigin: self\ncrumpledAt: 2026-09-01T10:00:00.000+02:00\nlastAccessed: 2026-09-01T10:00:00.000+02:00\n---\n\nold\n";

/// A home with three fresh sessions and a few human notes.
fn home_with_material() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("notes");
    three_fresh_sessions(&home);
    put(
        &home,
        "human/MAP.md",
        "- `@human/prefs.md` prefs\n- `@human/old.md` old\n",
    );
    put(
        &home,
        "human/prefs.md",
        "---\norigin: user\n---\n\nLikes tabs.\n",
    );
    put(&home, "human/old.md", CRUMPLED);
    put(&home, "human/live.md", "---\norigin: self\n---\n\nlive\n");
    (dir, home)
}

fn options(home: &Path) -> DreamOptions {
    DreamOptions::new(home, now())
}

fn report_text(home: &Path) -> String {
    fs::read_to_string(home.join(format!("dreams/{STAMP}.md"))).expect("report")
}

fn lines(output: &DreamOutput, home: &Path) -> String {
    render_output(output, home)
}

#[test]
fn a_scripted_dream_runs_end_to_end() {
    let (_dir, home) = home_with_material();
    let mut runner = ScriptedRunner::new(
        vec![
            Step::Write("human/new.md", "---\norigin: self\n---\n\nnew\n"),
            Step::Edit(
                "human/prefs.md",
                "Likes tabs.",
                "Likes tabs (said 2026-09-14).",
            ),
            Step::Edit(
                "human/MAP.md",
                "- `@human/old.md` old\n",
                "- `@human/new.md` new\n",
            ),
            Step::Delete("human/old.md"),
            Step::Delete("human/live.md"),
            Step::Write("../escape.md", "x"),
        ],
        "## human\n\n- inspected: MAP, prefs, old, live\n- changed: prefs (dated)\n- deleted: old\n",
    );
    let mut options = options(&home);
    options.model_pattern = Some("sonnet".to_owned());
    let output = run_dream(&options, &mut runner);

    insta::assert_snapshot!("run_success_output", lines(&output, &home));
    insta::assert_snapshot!("run_success_report", report_text(&home));
    assert_eq!(runner.calls, 1);
    assert_eq!(runner.prompt, PLAYBOOK);
    assert_eq!(runner.model_pattern.as_deref(), Some("sonnet"));
    assert_eq!(
        runner.tool_results,
        [
            "wrote human/new.md (26 bytes)".to_owned(),
            "edited human/prefs.md (1 edits)".to_owned(),
            "edited human/MAP.md (1 edits)".to_owned(),
            "deleted human/old.md".to_owned(),
            "error: not_crumpled: delete: human/live.md is not a crumpled note; only the wastebasket rule permits deletion"
                .to_owned(),
            format!("error: outside_home: write jail: ../escape.md is outside notes home {}", home.display()),
        ]
    );
    assert!(!home.parent().expect("parent").join("escape.md").exists());

    // Lock released, stamp kept.
    assert!(!home.join(LOCK_FILE).exists());
    assert_eq!(
        fs::read_to_string(home.join(LAST_RUN_FILE)).expect("stamp"),
        "2026-09-15T09:31:45.392Z"
    );

    // The audit: baseline, then the dream with its report, read with git.
    assert_eq!(
        git(&home, &["log", "--format=%s"]),
        format!("dream {STAMP}\nbaseline {STAMP}\n")
    );
    assert_eq!(
        git(&home, &["diff", "--name-status", "HEAD~1", "HEAD"]),
        format!(
            "A\tdreams/{STAMP}.md\nM\thuman/MAP.md\nA\thuman/new.md\nD\thuman/old.md\nM\thuman/prefs.md\n"
        )
    );
    assert_eq!(git(&home, &["status", "--porcelain"]), "");
}

#[test]
fn a_dreamer_error_fails_the_run_and_restores_the_stamp() {
    let (_dir, home) = home_with_material();
    let stamp = put(&home, LAST_RUN_FILE, "2026-09-01T00:00:00.000Z");
    let previous = hours_before(SystemTime::from(now()), 48);
    set_mtime(&stamp, previous);
    let mut runner = ScriptedRunner::failing(
        vec![Step::Write("human/half.md", "half\n")],
        "dreamer failed: provider exploded",
    );
    let output = run_dream(&options(&home), &mut runner);

    insta::assert_snapshot!("run_dreamer_error_output", lines(&output, &home));
    insta::assert_snapshot!("run_dreamer_error_report", report_text(&home));
    assert_eq!(output.exit_code, 1);
    assert_eq!(
        git(&home, &["log", "--format=%s"]),
        format!("dream {STAMP} (failed)\nbaseline {STAMP}\n")
    );
    assert_eq!(git(&home, &["show", "HEAD:human/half.md"]), "half\n");
    assert!(!home.join(LOCK_FILE).exists());
    assert_eq!(
        fs::read_to_string(&stamp).expect("stamp"),
        "2026-09-01T00:00:00.000Z"
    );
    assert_eq!(last_run(&home), Some(previous));
}

#[test]
fn a_failed_final_audit_is_appended_to_the_report_and_fails_the_run() {
    let (_dir, home) = home_with_material();
    let mut runner = ScriptedRunner::new(
        vec![
            Step::Write("human/new.md", "new\n"),
            Step::Sabotage(|home| {
                let objects = home.join(".git/objects");
                fs::remove_dir_all(&objects).expect("remove objects");
                fs::write(&objects, "not a directory").expect("objects file");
            }),
        ],
        "All tidy.",
    );
    let output = run_dream(&options(&home), &mut runner);

    assert_eq!(output.exit_code, 1);
    let rendered = lines(&output, &home);
    let rendered: Vec<&str> = rendered.lines().collect();
    assert_eq!(
        rendered[..2],
        [
            "stdout: time gate: no prior dream",
            "stdout: material gate: 3 changed sessions"
        ]
    );
    assert!(
        rendered[2].starts_with("stderr: dream: final audit failed: git audit: "),
        "{rendered:?}"
    );
    assert_eq!(rendered[3..], ["exit 1"]);

    let report = report_text(&home);
    let (head, failure) = report
        .split_once("\n## Final audit failed\n\n")
        .expect("failure section");
    assert_eq!(
        head,
        format!("# Dream {STAMP}\n\nAll tidy.\n\n- write: human/new.md\n")
    );
    assert!(
        failure.starts_with("git audit: ") && failure.ends_with('\n'),
        "{failure:?}"
    );
    assert_eq!(
        output.lines[2].text,
        format!("dream: final audit failed: {}", failure.trim_end()),
        "stderr and report name the same failure"
    );
    assert!(!home.join(LOCK_FILE).exists());
    assert!(
        !home.join(LAST_RUN_FILE).exists(),
        "the stamp this run created is removed"
    );
}

#[test]
fn an_unwritable_report_fails_the_run_but_the_final_audit_still_runs() {
    let (_dir, home) = home_with_material();
    // The dreamer cannot touch the dream's bookkeeping; a human's stray
    // file can still stand where the reports directory belongs.
    put(
        &home,
        "dreams",
        "a file where the reports directory belongs\n",
    );
    let mut runner = ScriptedRunner::new(
        vec![Step::Write(
            "human/tidy.md",
            "---\norigin: self\n---\n\ntidy\n",
        )],
        "All tidy.",
    );
    let output = run_dream(&options(&home), &mut runner);

    assert_eq!(output.exit_code, 1);
    let rendered = lines(&output, &home);
    let rendered: Vec<&str> = rendered.lines().collect();
    assert_eq!(rendered.len(), 4, "{rendered:?}");
    assert!(
        rendered[2].starts_with(&format!(
            "stderr: dream: could not write report at <home>/dreams/{STAMP}.md: "
        )),
        "{rendered:?}"
    );
    assert_eq!(rendered[3], "exit 1");
    assert_eq!(
        git(&home, &["log", "--format=%s"]),
        format!("dream {STAMP}\nbaseline {STAMP}\n")
    );
    assert_eq!(
        git(&home, &["ls-tree", "--name-only", "HEAD", "dreams"]),
        "dreams\n"
    );
    assert!(!home.join(LOCK_FILE).exists());
    assert!(!home.join(LAST_RUN_FILE).exists());
}

/// A reports directory that is a link (planted, or swapped in) is not
/// written through: the report is refused, nothing outside changes.
#[cfg(unix)]
#[test]
fn a_reports_directory_that_is_a_link_is_not_written_through() {
    let (dir, home) = home_with_material();
    let outside = dir.path().join("outside");
    fs::create_dir_all(&outside).expect("outside");
    std::os::unix::fs::symlink(&outside, home.join("dreams")).expect("planted link");
    let mut runner = ScriptedRunner::new(vec![], "All tidy.");
    let output = run_dream(&options(&home), &mut runner);

    assert_eq!(output.exit_code, 1);
    let rendered = lines(&output, &home);
    assert!(
        rendered.contains(&format!(
            "stderr: dream: could not write report at <home>/dreams/{STAMP}.md: "
        )),
        "{rendered}"
    );
    assert_eq!(
        fs::read_dir(&outside).expect("outside").count(),
        0,
        "nothing was written outside the home"
    );
}

#[test]
fn a_failed_baseline_stops_before_the_dreamer() {
    let (_dir, home) = home_with_material();
    put(&home, ".git", "gitdir: /nonexistent\n");
    let mut runner = ScriptedRunner::new(vec![Step::Write("human/x.md", "x")], "never");
    let output = run_dream(&options(&home), &mut runner);

    assert_eq!(output.exit_code, 1);
    assert_eq!(runner.calls, 0);
    let rendered = lines(&output, &home);
    assert!(
        rendered.contains(
            "\nstderr: dream: baseline audit failed: git audit: cannot open repository: "
        ),
        "{rendered}"
    );
    assert!(rendered.ends_with("\nexit 1\n"));
    assert!(!home.join("dreams").exists());
    assert!(!home.join(LOCK_FILE).exists());
    assert!(!home.join(LAST_RUN_FILE).exists());
}

#[test]
fn a_note_crumpled_in_this_dream_is_not_deleted_in_it() {
    let (_dir, home) = home_with_material();
    let live = "---\norigin: self\n---\n\nlive\n";
    let mut runner = ScriptedRunner::new(
        vec![
            // Crumpled with a crumpledAt long past, then deleted at once.
            Step::Edit(
                "human/live.md",
                "origin: self\n",
                "origin: self\ncrumpledAt: 2026-01-01T00:00:00.000Z\n",
            ),
            Step::Delete("human/live.md"),
            // Crumpled before the dream and old enough: it goes.
            Step::Delete("human/old.md"),
        ],
        "tidied",
    );
    let output = run_dream(&options(&home), &mut runner);
    assert_eq!(output.exit_code, 0, "{}", lines(&output, &home));
    assert_eq!(
        runner.tool_results,
        [
            "edited human/live.md (1 edits)".to_owned(),
            "error: not_in_baseline: delete: human/live.md was not in the wastebasket when this dream began (it was crumpled or changed since the baseline commit); only a note crumpled before the dream may be deleted".to_owned(),
            "deleted human/old.md".to_owned(),
        ]
    );
    assert_eq!(
        fs::read_to_string(home.join("human/live.md")).expect("still there"),
        live.replace(
            "origin: self\n",
            "origin: self\ncrumpledAt: 2026-01-01T00:00:00.000Z\n"
        )
    );
    assert!(!home.join("human/old.md").exists());
}

#[test]
fn a_held_lock_stops_the_run_and_changes_nothing_even_with_force() {
    let (_dir, home) = home_with_material();
    let held = DreamLock::acquire(&home, now()).expect("another run holds the lock");
    let before = tree_hash(&home);
    for force in [false, true] {
        let mut runner = ScriptedRunner::new(vec![Step::Write("human/x.md", "x")], "never");
        let mut options = options(&home);
        options.force = force;
        options.min_hours = 0.0;
        let output = run_dream(&options, &mut runner);
        assert_eq!(
            lines(&output, &home),
            "stdout: time gate: stale\nstdout: material gate: 3 changed sessions\nstderr: lock gate: lock held by a running dream\nstderr: dream: not run: another dream is running (it holds <home>/.dream.lock); try again when it has ended\nexit 1\n"
        );
        assert_eq!(runner.calls, 0);
        assert_eq!(tree_hash(&home), before, "force {force}");
    }
    drop(held);
}

#[test]
fn a_stale_lock_is_taken_over_and_the_run_goes_on() {
    let (_dir, home) = home_with_material();
    put(
        &home,
        LOCK_FILE,
        "4242 0f8fad5b-d9cb-469f-a165-70867728950e",
    );
    let mut runner = ScriptedRunner::new(vec![], "nothing to do");
    let output = run_dream(&options(&home), &mut runner);
    let rendered = lines(&output, &home);
    assert!(
        rendered.contains(
            "\nstderr: dream: took over <home>/.dream.lock, a stale lock left by a dream that is gone (it held \"4242 0f8fad5b-d9cb-469f-a165-70867728950e\")\n"
        ),
        "{rendered}"
    );
    assert_eq!(output.exit_code, 0, "{rendered}");
    assert_eq!(runner.calls, 1);
    assert!(!home.join(LOCK_FILE).exists(), "released");
}

#[test]
fn gates_stop_the_run_unless_forced() {
    let (_dir, home) = home_with_material();
    let stamp = put(&home, LAST_RUN_FILE, "recent");
    set_mtime(&stamp, hours_before(SystemTime::from(now()), 2));
    let check = |options: &DreamOptions, expect: &str| {
        let before = tree_hash(&home);
        let mut runner = ScriptedRunner::new(Vec::new(), "never");
        let output = run_dream(options, &mut runner);
        assert_eq!(lines(&output, &home), expect);
        assert_eq!(runner.calls, 0);
        assert_eq!(tree_hash(&home), before);
    };
    check(
        &options(&home),
        "stdout: time gate: last dream is too recent\nstdout: dream: skipped; pass --force to dream anyway (it never bypasses the lock)\nexit 0\n",
    );

    let mut wide = options(&home);
    wide.min_hours = 1.0;
    wide.min_sessions = 4;
    check(
        &wide,
        "stdout: time gate: stale\nstdout: material gate: only 3 changed sessions\nstdout: dream: skipped; pass --force to dream anyway (it never bypasses the lock)\nexit 0\n",
    );

    let mut forced = options(&home);
    forced.force = true;
    forced.min_sessions = 4;
    let mut runner = ScriptedRunner::new(Vec::new(), "Nothing to do.");
    let output = run_dream(&forced, &mut runner);
    assert_eq!(
        lines(&output, &home),
        format!(
            "stdout: time gate: last dream is too recent\nstdout: material gate: only 3 changed sessions\nstdout: <home>/dreams/{STAMP}.md\nexit 0\n"
        )
    );
    assert_eq!(runner.calls, 1);
    assert_eq!(
        report_text(&home),
        format!("# Dream {STAMP}\n\nNothing to do.\n\n- no changes\n")
    );
}

#[test]
fn playbook_override_and_model_warnings() {
    let (dir, home) = home_with_material();
    let playbook = dir.path().join("custom-playbook.md");
    fs::write(&playbook, "Dream differently.\n").expect("playbook");
    let mut options = options(&home);
    options.playbook = Some(playbook);
    options.model_warnings = vec!["notesoup: dreamer setting ignored".to_owned()];
    let mut runner = ScriptedRunner::new(Vec::new(), "Done.");
    let output = run_dream(&options, &mut runner);
    assert_eq!(runner.prompt, "Dream differently.\n");
    assert_eq!(runner.model_pattern, None);
    assert_eq!(
        lines(&output, &home),
        format!(
            "stdout: time gate: no prior dream\nstdout: material gate: 3 changed sessions\nstderr: notesoup: dreamer setting ignored\nstdout: <home>/dreams/{STAMP}.md\nexit 0\n"
        )
    );

    // A playbook that cannot be read: the dream cannot start, says why,
    // and leaves no lock, Git repository, commit or report behind.
    let (_dir, home) = home_with_material();
    let mut options = self::options(&home);
    options.playbook = Some(home.join("missing.md"));
    let mut runner = ScriptedRunner::new(Vec::new(), "never");
    let output = run_dream(&options, &mut runner);
    assert_eq!(runner.calls, 0);
    assert_eq!(output.exit_code, 1);
    let said = lines(&output, &home);
    assert!(
        said.contains("stderr: dream: cannot start: cannot read playbook <home>/missing.md: ")
            && said.contains("; nothing was changed\nexit 1\n"),
        "{said}"
    );
    for left in [".git", "dreams", LOCK_FILE] {
        assert!(!home.join(left).exists(), "{left}");
    }
}

/// A dreamer that is not ready (its program missing) stops the run before
/// the lock, the audit and the report, and the home is not even created.
#[test]
fn a_dreamer_that_cannot_start_leaves_nothing_behind() {
    struct Missing;
    impl DreamRunner for Missing {
        fn ready(&self) -> Result<(), String> {
            Err("the dreamer agent is not on PATH (install it)".to_owned())
        }
        fn run(&mut self, _request: DreamRequest<'_>) -> DreamResult {
            unreachable!("never started")
        }
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("not-yet");
    let mut options = options(&home);
    options.force = true;
    let output = run_dream(&options, &mut Missing);
    assert_eq!(output.exit_code, 1);
    assert_eq!(
        output.lines.last().map(|line| line.text.as_str()),
        Some(
            "dream: cannot start: the dreamer agent is not on PATH (install it); nothing was changed"
        )
    );
    assert!(!home.exists());
}

#[test]
fn writes_are_recorded_from_tool_events_with_a_path() {
    let check = |name: &str, arguments: serde_json::Value, expect: Option<(DreamTool, &str)>| {
        let expect = expect.map(|(tool, path)| DreamWrite {
            tool,
            path: path.to_owned(),
        });
        assert_eq!(
            DreamWrite::from_tool_event(name, &arguments),
            expect,
            "{name} {arguments}"
        );
    };
    check(
        "write",
        serde_json::json!({"path": "a.md", "content": "x"}),
        Some((DreamTool::Write, "a.md")),
    );
    check(
        "edit",
        serde_json::json!({"path": "../x.md"}),
        Some((DreamTool::Edit, "../x.md")),
    );
    check(
        "delete",
        serde_json::json!({"path": "old.md"}),
        Some((DreamTool::Delete, "old.md")),
    );
    check("read", serde_json::json!({"path": "a.md"}), None);
    check("write", serde_json::json!({"file": "a.md"}), None);
    check("write", serde_json::json!({"path": 7}), None);
    check("write", serde_json::json!("a.md"), None);
    assert_eq!(
        serde_json::to_value(DreamWrite {
            tool: DreamTool::Delete,
            path: "a.md".into()
        })
        .expect("json"),
        serde_json::json!({"tool": "delete", "path": "a.md"})
    );
}

/// A runner that notes how many progress lines were out when it started.
struct WatchingRunner<'a> {
    seen: &'a std::cell::RefCell<Vec<String>>,
    lines_at_start: Option<usize>,
}

impl DreamRunner for WatchingRunner<'_> {
    fn run(&mut self, _request: DreamRequest<'_>) -> DreamResult {
        self.lines_at_start = Some(self.seen.borrow().len());
        DreamResult {
            report: "Tidy.".to_owned(),
            writes: Vec::new(),
            error: None,
        }
    }
}

/// The gates are told before the dreamer starts, the report after it ends,
/// and the output holds the same lines in the same order.
#[test]
fn progress_is_told_as_the_run_goes() {
    let (_dir, home) = home_with_material();
    let seen = std::cell::RefCell::new(Vec::new());
    let mut runner = WatchingRunner {
        seen: &seen,
        lines_at_start: None,
    };
    let output = notesoup_core::dream::run_dream_with(&options(&home), &mut runner, &mut |line| {
        seen.borrow_mut().push(line.text.clone());
    });
    assert_eq!(output.exit_code, 0);
    let lines_at_start = runner.lines_at_start;
    let seen = seen.into_inner();
    assert_eq!(
        lines_at_start,
        Some(2),
        "both gates were told before the dreamer started: {seen:?}"
    );
    assert!(seen[0].starts_with("time gate: "));
    assert!(seen[1].starts_with("material gate: "));
    let all: Vec<String> = output.lines.iter().map(|line| line.text.clone()).collect();
    assert_eq!(seen, all);
    assert!(
        seen.len() > 2,
        "the report came after the dreamer: {seen:?}"
    );
}

/// A dreamer that makes three dream-tool calls (two change one note, one
/// reads it) and ends with `error`.
struct Calling {
    error: Option<String>,
}

impl DreamRunner for Calling {
    fn run(&mut self, request: DreamRequest<'_>) -> DreamResult {
        let note = serde_json::json!({"path": "human/live.md", "content": "x"});
        (request.on_tool_call)("write", &note);
        (request.on_tool_call)("read", &note);
        (request.on_tool_call)("edit", &note);
        DreamResult {
            report: "Report: tidied.".to_owned(),
            writes: Vec::new(),
            error: self.error.clone(),
        }
    }
}

/// The dream command around a dreamer run as a child process: its start
/// and its end (finished, stopped at its deadline, failed) said on stderr
/// around the run, each tool call told to the progress sink, and a program
/// that is not there refused before anything starts.
#[test]
fn a_child_process_dreamer_is_announced_followed_and_refused_when_missing() {
    use notesoup_core::dream::{Ended, Stream};
    use notesoup_core::plumbing::{DreamProgress, Dreamer, DreamerProcess};
    let timeout = std::time::Duration::from_secs(5);
    let process = |program: &str| DreamerProcess::test_agent(Path::new(program), None, timeout);
    let ends = [
        (None, "dream: the dreamer finished after "),
        (
            Some(Ended::timeout_error(timeout)),
            "dream: stopped the dreamer after 5 s",
        ),
        (
            Some("dreamer failed: out of tokens".to_owned()),
            "dream: the dreamer failed after ",
        ),
    ];
    for (error, end) in ends {
        let (_dir, home) = home_with_material();
        let mut options = options(&home);
        options.force = true;
        let failed = error.is_some();
        let mut runner = Calling { error };
        let mut told = Vec::new();
        let mut progress = |progress: &DreamProgress| {
            told.push((
                progress.tool_calls,
                progress.notes_changed,
                progress.change.is_some(),
            ));
        };
        let mut said = Vec::new();
        let code = Dreamer {
            runner: &mut runner,
            process: Some(process("/bin/sh")),
            progress: Some(&mut progress),
        }
        .run(&options, &mut |line| {
            if line.stream == Stream::Stderr {
                said.push(line.text.clone());
            }
        });
        assert_eq!(code, i32::from(failed), "{said:?}");
        assert_eq!(told, [(1, 1, true), (2, 1, false), (3, 1, true)]);
        let start = said
            .iter()
            .position(|line| line == "dream: the dreamer is running (agent -p, at most 5 s)")
            .unwrap_or_else(|| panic!("{said:?}"));
        assert!(said[start + 1].starts_with(end), "{said:?}");
    }
    // Not there: refused before the dreamer or the home is touched.
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("not-yet");
    let mut options = options(&home);
    options.force = true;
    let mut said = Vec::new();
    let code = Dreamer {
        runner: &mut Calling { error: None },
        process: Some(process("/nowhere/agent")),
        progress: None,
    }
    .run(&options, &mut |line| said.push(line.text.clone()));
    assert_eq!(code, 1);
    assert_eq!(
        said.last().map(String::as_str),
        Some(
            "dream: cannot start: the dreamer /nowhere/agent does not exist (install the agent); nothing was changed"
        )
    );
    assert!(!home.exists());
}

/// A note holding a credential stays out of both audits' commits, and the
/// run says so on stderr for each.
#[test]
fn each_audit_names_the_note_it_left_out() {
    let (_dir, home) = home_with_material();
    put(&home, "human/keys.md", &format!("aws: {AWS_KEY}\n"));
    let mut runner = ScriptedRunner::new(vec![], "## human\n\n- inspected: keys\n");
    let output = run_dream(&options(&home), &mut runner);
    let text = lines(&output, &home);
    for audit in ["baseline", "final"] {
        assert!(
            text.contains(&format!(
                "stderr: dream: the {audit} audit left human/keys.md out of the Git history: it holds a credential (AWS access key)\n"
            )),
            "{text}"
        );
    }
    assert!(!committed_files(&home).contains("keys.md"));
}
