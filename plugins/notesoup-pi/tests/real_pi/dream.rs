//! `notesoup-pi dream` with real Pi 1.6.0 as the dreamer: the built binary
//! runs `pi` (found on PATH, as in a user's install) in JSON mode with the
//! dream extension, whose tools `notesoup-pi dream-tools` serves; the model
//! is a fake OpenAI-compatible endpoint on 127.0.0.1 (`fake_openai.mjs`)
//! configured through Pi's `models.json`. The notes home, its Git audit and
//! the lock are real. Pi's agent directory also installs notesoup's own
//! package, which the dreamer must not load.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

use notesoup_test_support::child::stdout_of;
use notesoup_test_support::dreamer::{self, CRUMPLED, LIVE, note};
use notesoup_test_support::files::put;

use super::support::{Endpoint, Pi, message_texts, package_dir};

const MAP: &str = "project/demo-1a2b3c4d/MAP.md";
const TOOLS: [&str; 7] = ["read", "grep", "find", "ls", "write", "edit", "delete"];

/// A temporary world: a notes home with a live and a crumpled note, Pi's
/// agent directory (models.json for the endpoint, notesoup's package
/// installed), and the fake endpoint serving `script`.
struct DreamWorld {
    pi: Pi,
    server: Endpoint,
    temp: tempfile::TempDir,
}

impl DreamWorld {
    fn new(script: Value) -> Self {
        let pi = Pi::from_env();
        let temp = tempfile::Builder::new()
            .prefix("notesoup-pi-dream-")
            .tempdir()
            .unwrap();
        let root = temp.path();
        let notes = root.join("notes");
        dreamer::live_and_crumpled(&notes);
        std::fs::create_dir_all(root.join("agent")).unwrap();
        std::fs::create_dir_all(root.join("cwd")).unwrap();
        let server = Endpoint::start(&pi, root, &script);
        let models = server.models_json(&[("fake-1", "Fake One"), ("fake-2", "Fake Two")]);
        let world = Self { pi, server, temp };
        std::fs::write(world.agent().join("models.json"), models.to_string()).unwrap();
        world.settings(json!({}));
        world
    }

    fn agent(&self) -> PathBuf {
        self.temp.path().join("agent")
    }

    fn notes(&self) -> PathBuf {
        self.temp.path().join("notes")
    }

    /// Pi's global settings: notesoup's package installed (as `pi install
    /// <dir>` records it), Pi's retry off, and `notesoup` as given.
    fn settings(&self, notesoup: Value) {
        let settings = json!({
            "packages": [package_dir()],
            "retry": {"enabled": false},
            "notesoup": notesoup,
        });
        std::fs::write(self.agent().join("settings.json"), settings.to_string()).unwrap();
    }

    /// `count` session homes changed since the last dream (the material gate).
    fn sessions(&self, count: usize) {
        for n in 0..count {
            let dir = self.notes().join(format!("pi/session/s{n}"));
            put(&dir.join("progress.md"), note(false, "Working."));
        }
    }

    /// Runs `notesoup-pi dream ARGS --notes-home NOTES` with `pi` on PATH.
    fn dream(&self, args: &[&str]) -> Output {
        let path = self.pi.path();
        Command::new(env!("CARGO_BIN_EXE_notesoup-pi"))
            .arg("dream")
            .args(args)
            .arg("--notes-home")
            .arg(self.notes())
            .current_dir(self.temp.path().join("cwd"))
            .env("PATH", path)
            .env("HOME", self.temp.path())
            .env("PI_CODING_AGENT_DIR", self.agent())
            .env_remove("NOTESOUP_PI")
            .env_remove("NOTESOUP_PI_BIN")
            .env_remove("PI_NOTES_HOME")
            .output()
            .unwrap()
    }

    /// Every request the endpoint received.
    fn requests(&self) -> Vec<Value> {
        self.server.requests()
    }

    fn git_log(&self) -> Vec<String> {
        git(&self.notes(), &["log", "--format=%s"])
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

fn git(dir: &Path, args: &[&str]) -> String {
    stdout_of(Command::new("git").args(args).current_dir(dir))
}

fn text(output: &[u8]) -> String {
    String::from_utf8_lossy(output).into_owned()
}

/// The tool names a request offered.
fn offered(request: &Value) -> Vec<&str> {
    request["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| t["function"]["name"].as_str().unwrap())
                .collect()
        })
        .unwrap_or_default()
}

fn call(name: &str, args: Value) -> Value {
    json!({"name": name, "args": args})
}

#[test]
fn real_pi_dreams_inside_the_jail_with_gates_lock_audit_and_report() {
    let world = DreamWorld::new(json!([
        {"tools": [
            call("ls", json!({"path": "project/demo-1a2b3c4d"})),
            call("read", json!({"path": LIVE})),
        ]},
        {"tools": [
            call("write", json!({"path": MAP, "content": "# demo\n- parser.md: the parser is slow\n"})),
            call("write", json!({"path": "../outside.md", "content": "escape"})),
            call("write", json!({"path": ".git/config", "content": "[core]\n\tfsmonitor = evil\n"})),
            call("delete", json!({"path": LIVE})),
            call("delete", json!({"path": CRUMPLED})),
            call("bash", json!({"command": "rm -rf ."})),
            call("write", json!({"path": "human/deploy.md", "content": format!("key AKIA{}\n", "Y34FZKBOKMUTVV7A")})),
        ]},
        {"text": "Report: wrote the MAP, emptied the wastebasket."},
    ]));
    let notes = world.notes();

    // The material gate: no changed session, no dream, no model call.
    let out = world.dream(&[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "time gate: no prior dream\nmaterial gate: only 0 changed sessions\n\
         dream: skipped; pass --force to dream anyway (it never bypasses the lock)\n"
    );
    world.sessions(3);

    // A held lock (another dream's flock on it) stops the run before Pi
    // starts, whatever --force says.
    std::fs::write(notes.join(".dream.lock"), "1 held-by-someone\n").unwrap();
    let held = std::fs::File::open(notes.join(".dream.lock")).unwrap();
    held.lock().unwrap();
    let out = world.dream(&["--force"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("lock gate: lock held by a running dream"),
        "{stderr}"
    );
    assert!(!stderr.contains("the dreamer is running"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(notes.join(".dream.lock")).unwrap(),
        "1 held-by-someone\n"
    );
    assert!(world.requests().is_empty(), "no model call");
    drop(held);
    std::fs::remove_file(notes.join(".dream.lock")).unwrap();

    // The gates pass (three changed sessions), Pi dreams.
    let out = world.dream(&[]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines[..2],
        [
            "time gate: no prior dream",
            "material gate: 3 changed sessions"
        ]
    );
    assert!(
        stderr.contains("dream: the dreamer is running (pi --mode json"),
        "{stderr}"
    );
    assert!(stderr.contains("dream: the dreamer finished"), "{stderr}");

    // Every request offered exactly the seven dream tools (no built-in, no
    // notesoup tool from the installed package), no boot, and the playbook
    // as the one prompt.
    let requests = world.requests();
    assert_eq!(requests.len(), 3);
    for request in &requests {
        assert_eq!(offered(request), TOOLS, "{request}");
        assert_eq!(request["model"], "fake-1");
        let all: String = message_texts(request).into_iter().map(|(_, t)| t).collect();
        assert!(!all.contains("<context_window>"), "no boot: {all}");
    }
    let first = message_texts(&requests[0]);
    let users: Vec<&(String, String)> = first.iter().filter(|(r, _)| r == "user").collect();
    assert_eq!(users.len(), 1, "{first:?}");
    assert_eq!(
        users[0].1,
        notesoup_core::dream::DreamAsset::Playbook.text().trim_end()
    );

    // What the tools answered, in the request after the calls.
    let results: Vec<String> = message_texts(&requests[1])
        .into_iter()
        .filter(|(role, _)| role == "tool")
        .map(|(_, text)| text)
        .collect();
    assert_eq!(results[0], "old-idea.md\nparser.md", "{results:?}");
    assert!(results[1].ends_with("The parser is slow.\n"), "{results:?}");
    let results: Vec<String> = message_texts(&requests[2])
        .into_iter()
        .filter(|(role, _)| role == "tool")
        .map(|(_, text)| text)
        .skip(2)
        .collect();
    assert_eq!(results.len(), 7, "{results:?}");
    assert!(
        results[0].starts_with("wrote project/demo-1a2b3c4d/MAP.md"),
        "{results:?}"
    );
    assert!(results[1].contains("is outside notes home"), "{results:?}");
    assert!(
        results[2].contains("the audit repository (.git) is not a note"),
        "{results:?}"
    );
    assert!(
        results[3].contains("is not a crumpled note; only the wastebasket rule permits deletion"),
        "{results:?}"
    );
    assert_eq!(results[4], format!("deleted {CRUMPLED}"));
    assert_eq!(results[5], "Tool bash not found");
    assert_eq!(
        results[6],
        "human/deploy.md: line 1 holds a credential (AWS access key); the dream never copies one. Leave it where it is and report it"
    );

    // On disk: the MAP written, the crumpled note gone, the live note, the
    // audit repository and everything outside the home untouched, and no
    // credential written.
    assert!(
        std::fs::read_to_string(notes.join(MAP))
            .unwrap()
            .starts_with("# demo")
    );
    assert!(!notes.join(CRUMPLED).exists());
    assert_eq!(
        std::fs::read_to_string(notes.join(LIVE)).unwrap(),
        note(false, "The parser is slow.")
    );
    assert!(!world.temp.path().join("outside.md").exists());
    assert!(
        !notes.join("human/deploy.md").exists(),
        "no credential written"
    );
    assert!(
        !std::fs::read_to_string(notes.join(".git/config"))
            .unwrap()
            .contains("evil")
    );

    // The lock is released, the stamp left; Git holds the baseline and the
    // dream, whose commit records the MAP and the deletion.
    assert!(!notes.join(".dream.lock").exists());
    assert!(notes.join(".dream.lock.last-run").exists());
    let report_path = PathBuf::from(lines[2]);
    assert_eq!(report_path.parent().unwrap(), notes.join("dreams"));
    let stamp = report_path
        .file_stem()
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        world.git_log(),
        [format!("dream {stamp}"), format!("baseline {stamp}")]
    );
    let changed = git(&notes, &["show", "--name-status", "--format=", "HEAD"]);
    assert!(changed.contains(&format!("A\t{MAP}")), "{changed}");
    assert!(changed.contains(&format!("D\t{CRUMPLED}")), "{changed}");
    assert!(!changed.contains(LIVE), "{changed}");
    assert_eq!(git(&notes, &["status", "--porcelain"]), "");

    // The report: the last answer, then every write asked for, refused or not.
    let report = std::fs::read_to_string(&report_path).unwrap();
    assert_eq!(
        report,
        format!(
            "# Dream {stamp}\n\nReport: wrote the MAP, emptied the wastebasket.\n\n\
             - write: {MAP}\n- write: ../outside.md\n- write: .git/config\n\
             - delete: {LIVE}\n- delete: {CRUMPLED}\n- write: human/deploy.md\n"
        )
    );

    // The stamp is fresh: the time gate stops the next run.
    let out = world.dream(&[]);
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).starts_with("time gate: last dream is too recent\n"));
    assert_eq!(world.requests().len(), 3);
}

#[test]
fn the_model_is_the_flag_then_the_setting_then_pi_s_default() {
    let world = DreamWorld::new(json!([
        {"text": "Nothing to do (setting)."},
        {"text": "Nothing to do (flag)."},
        {"text": "Nothing to do (default)."},
    ]));
    let model = |index: usize| world.requests()[index]["model"].clone();

    world.settings(json!({"dreamer": "fake/fake-2"}));
    let out = world.dream(&["--force"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(model(0), "fake-2");

    let out = world.dream(&["--force", "--dreamer", "fake/fake-1"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(model(1), "fake-1");

    // A bad setting warns and is ignored: Pi picks its default.
    world.settings(json!({"dreamer": "  "}));
    let out = world.dream(&["--force"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr)
            .contains("notesoup: notesoup.dreamer must be a non-empty string; ignoring it."),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(world.requests().len(), 3);

    // A pattern no model matches: the run fails, the report says why, the
    // lock is released, and Git records the failed dream.
    let out = world.dream(&["--force", "--dreamer", "nosuch-model"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    let report = dreamer::failed_run_report(&stderr);
    assert!(
        report.contains(
            "\n\ndreamer model pattern \"nosuch-model\" did not resolve to an available model\n\n- no changes\n"
        ),
        "{report}"
    );
    assert!(!world.notes().join(".dream.lock").exists());
    assert!(
        world.git_log()[0].ends_with(" (failed)"),
        "{:?}",
        world.git_log()
    );
    assert_eq!(world.requests().len(), 3, "no model call");
}

#[test]
fn a_dreamer_past_its_timeout_is_stopped_and_the_run_fails_cleanly() {
    // The provider never answers: whether Pi is still starting or waiting
    // for the model when the timeout comes, it is stopped there.
    let world = DreamWorld::new(json!([{"hang": true}]));
    let out = world.dream(&["--force", "--timeout", "3"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("dream: stopped the dreamer after 3 s"),
        "{stderr}"
    );
    let report = dreamer::failed_run_report(&stderr);
    assert!(
        report
            .contains("\n\ndreamer failed: timed out after 3 s and was stopped\n\n- no changes\n"),
        "{report}"
    );
    // The lock is released and Git records the failed dream.
    assert!(!world.notes().join(".dream.lock").exists());
    let log = world.git_log();
    assert!(
        log[0].starts_with("dream ") && log[0].ends_with(" (failed)"),
        "{log:?}"
    );
    assert!(world.requests().len() <= 1);
}
