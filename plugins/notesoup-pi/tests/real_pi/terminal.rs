//! The real `pi` command in a tmux pane: the package installed with
//! `notesoup-pi install` (which runs `pi install <dir>`) into a temporary
//! agent directory, the model served by a fake OpenAI-compatible endpoint on
//! 127.0.0.1 configured through Pi's `models.json`, typed prompts.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::support::{Pi, wait_for_port};

/// How long to wait for Pi to reach a state before failing with the pane.
/// A bound on waiting, not an assertion on speed.
const PATIENCE: Duration = Duration::from_secs(180);

struct Terminal {
    socket: String,
    server: Child,
}

impl Drop for Terminal {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .status();
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}

impl Terminal {
    fn pane(&self) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket, "capture-pane", "-p", "-t", "0"])
            .output()
            .expect("tmux capture-pane");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn type_line(&self, text: &str) {
        for keys in [&["-l", text][..], &["Enter"][..]] {
            let status = Command::new("tmux")
                .args(["-L", &self.socket, "send-keys", "-t", "0"])
                .args(keys)
                .status()
                .expect("tmux send-keys");
            assert!(status.success());
        }
    }

    /// Waits until `done` holds, re-checking as Pi works.
    fn wait_for(&self, what: &str, done: impl Fn(&str) -> bool) {
        let start = Instant::now();
        loop {
            let pane = self.pane();
            if done(&pane) {
                return;
            }
            assert!(!pane.contains("[pi exited "), "pi exited:\n{pane}");
            assert!(
                start.elapsed() < PATIENCE,
                "Pi never reached: {what}\n--- pane ---\n{pane}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

fn requests(file: &Path) -> Vec<Value> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).expect("a logged request"))
        .collect()
}

fn message_texts(request: &Value) -> Vec<(String, String)> {
    request["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| {
            let text = match &m["content"] {
                Value::String(text) => text.clone(),
                Value::Array(parts) => parts
                    .iter()
                    .filter_map(|p| p["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n"),
                _ => String::new(),
            };
            (m["role"].as_str().unwrap_or("?").to_owned(), text)
        })
        .collect()
}

#[test]
fn the_pi_command_installs_notesoup_writes_a_note_resets_and_answers_from_its_boot() {
    let pi = Pi::from_env();
    assert!(
        Command::new("tmux").arg("-V").output().is_ok(),
        "the terminal test needs tmux on PATH"
    );
    let temp = tempfile::Builder::new()
        .prefix("notesoup-pi-term-")
        .tempdir()
        .unwrap();
    let root = temp.path();
    let agent = root.join("agent");
    let project = root.join("project");
    let notes = root.join("notes");
    std::fs::create_dir_all(&agent).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    let path = pi.path();
    let env: Vec<(&str, std::ffi::OsString)> = vec![
        ("PATH", path),
        ("HOME", root.into()),
        ("PI_CODING_AGENT_DIR", agent.clone().into()),
        ("PI_NOTES_HOME", notes.clone().into()),
        ("PI_NOTES_AGENT", "tester".into()),
        ("PI_OFFLINE", "1".into()),
    ];

    // Step one of the README: notesoup-pi install (pi is on PATH, so it runs
    // `pi install <dir>` itself).
    let package = root.join("pi-package");
    let out = Command::new(env!("CARGO_BIN_EXE_notesoup-pi"))
        .args(["install", "--dir"])
        .arg(&package)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let settings: Value =
        serde_json::from_str(&std::fs::read_to_string(agent.join("settings.json")).unwrap())
            .unwrap();
    let recorded = settings["packages"][0].as_str().expect("a package entry");
    assert_eq!(
        agent.join(recorded).canonicalize().unwrap(),
        package.canonicalize().unwrap()
    );
    let sidecar: Value =
        serde_json::from_str(&std::fs::read_to_string(package.join("sidecar.json")).unwrap())
            .unwrap();
    assert_eq!(
        PathBuf::from(sidecar["command"].as_str().unwrap()),
        PathBuf::from(env!("CARGO_BIN_EXE_notesoup-pi"))
    );

    // The fake endpoint and models.json.
    let script = json!([
        {"tools": [{"name": "notes_write", "args": {"address": "@project/answer.md", "content": "The answer is 42.\n"}}]},
        {"text": "Saved the answer in my notes."},
        {"tools": [{"name": "wipe_memory", "args": {}}]},
        {"text": "Fresh window: the answer is in @project/answer.md."},
    ]);
    std::fs::write(root.join("script.json"), script.to_string()).unwrap();
    let port_file = root.join("port");
    let log = root.join("requests.jsonl");
    let server = Command::new(&pi.node)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/real_pi/fake_openai.mjs"))
        .arg(root.join("script.json"))
        .arg(&port_file)
        .arg(&log)
        .spawn()
        .unwrap();
    let socket = format!("notesoup-pi-{}", std::process::id());
    let mut term = Terminal { socket, server };
    let port = wait_for_port(&port_file, &mut term.server, PATIENCE);
    let models = json!({"providers": {"fake": {
        "baseUrl": format!("http://127.0.0.1:{port}/v1"),
        "api": "openai-completions",
        "apiKey": "test-key",
        "models": [{"id": "fake-1", "name": "Fake One", "contextWindow": 200000, "maxTokens": 8192}],
    }}});
    std::fs::write(agent.join("models.json"), models.to_string()).unwrap();

    // The real pi command in a pane.
    // The new tmux server inherits this environment; the command sets it
    // again because a login shell may rewrite PATH.
    let mut tmux = Command::new("tmux");
    tmux.envs(env.iter().map(|(k, v)| (k, v)));
    tmux.args(["-L", &term.socket, "-f", "/dev/null", "new-session", "-d"])
        .args(["-x", "160", "-y", "50", "-c"])
        .arg(&project);
    let assignments: Vec<String> = env
        .iter()
        .map(|(key, value)| format!("{key}='{}'", value.to_string_lossy().replace('\'', "'\\''")))
        .collect();
    // The shell keeps the pane after pi exits, so a failure shows its output.
    let command = format!(
        "env {} pi --model fake/fake-1; echo \"[pi exited $?]\"; sleep 86400",
        assignments.join(" ")
    );
    let status = tmux.arg(command).status().unwrap();
    assert!(status.success(), "tmux new-session failed");
    term.wait_for("the notesoup extension loaded", |pane| {
        pane.contains("notesoup.ts") && pane.contains("fake-1")
    });

    term.type_line("Remember: the answer is 42.");
    term.wait_for("the note written and the answer", |pane| {
        pane.contains("Saved the answer in my notes.")
    });
    let written = std::fs::read_to_string(
        walk(&notes.join("project"))
            .into_iter()
            .find(|p| p.ends_with("answer.md"))
            .expect("the note on disk"),
    )
    .unwrap();
    assert!(written.ends_with("The answer is 42.\n"), "{written}");
    let first = message_texts(&requests(&log)[0]);
    assert!(
        first
            .iter()
            .any(|(role, text)| role == "user" && text.starts_with("<context_window>")),
        "the root boot went out first: {first:?}"
    );

    term.type_line("Now wipe your memory.");
    term.wait_for("the fresh window's answer", |pane| {
        pane.contains("Fresh window: the answer is in @project/answer.md.")
    });
    let pane = term.pane();
    assert!(pane.contains("notesoup: memory cleared · pcw:"), "{pane}");

    // The fresh window's request: the boot (showing the note) and the
    // continuation, no turn from before the reset.
    let all = requests(&log);
    assert_eq!(all.len(), 4);
    let fresh = message_texts(&all[3]);
    let text: String = fresh.iter().map(|(_, t)| t.as_str()).collect();
    assert!(text.contains("@project/answer.md"), "{fresh:?}");
    assert!(text.contains("You wake up blank"), "{fresh:?}");
    assert!(!text.contains("Remember: the answer is 42."), "{fresh:?}");
    assert!(!text.contains("Now wipe your memory."), "{fresh:?}");
    drop(term);
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                found.extend(walk(&path));
            } else {
                found.push(path);
            }
        }
    }
    found
}
