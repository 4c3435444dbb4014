//! `/notesoup` completes `on` and `off` in the real `pi` command: the
//! package installed with `notesoup-pi install`, Pi's own editor in a tmux
//! pane, keys typed as a user types them. No model is needed.

use std::process::Command;
use std::time::{Duration, Instant};

use super::support::Pi;

/// How long to wait for Pi to reach a state before failing with the pane.
/// A bound on waiting, not an assertion on speed.
const PATIENCE: Duration = Duration::from_secs(180);

struct Pane {
    socket: String,
}

impl Drop for Pane {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .status();
    }
}

impl Pane {
    fn text(&self) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket, "capture-pane", "-p", "-t", "0"])
            .output()
            .expect("tmux capture-pane");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Sends tmux keys: `["-l", text]` types text, `["Tab"]` a key.
    fn keys(&self, keys: &[&str]) {
        let status = Command::new("tmux")
            .args(["-L", &self.socket, "send-keys", "-t", "0"])
            .args(keys)
            .status()
            .expect("tmux send-keys");
        assert!(status.success());
    }

    /// Waits until `done` holds for the pane's trimmed lines.
    fn wait_for(&self, what: &str, done: impl Fn(&[&str]) -> bool) {
        let start = Instant::now();
        loop {
            let text = self.text();
            let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
            if done(&lines) {
                return;
            }
            assert!(!text.contains("[pi exited "), "pi exited:\n{text}");
            assert!(
                start.elapsed() < PATIENCE,
                "Pi never reached: {what}\n--- pane ---\n{text}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// Whether the pane has exactly this line (trailing blanks trimmed).
fn has_line(lines: &[&str], line: &str) -> bool {
    lines.contains(&line)
}

#[test]
fn the_notesoup_command_completes_on_and_off_in_pi_s_editor() {
    let pi = Pi::from_env();
    assert!(
        Command::new("tmux").arg("-V").output().is_ok(),
        "the terminal test needs tmux on PATH"
    );
    let temp = tempfile::Builder::new()
        .prefix("notesoup-pi-complete-")
        .tempdir()
        .unwrap();
    let root = temp.path();
    let agent = root.join("agent");
    let project = root.join("project");
    std::fs::create_dir_all(&agent).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    let path = pi.path();
    let env: Vec<(&str, std::ffi::OsString)> = vec![
        ("PATH", path),
        ("HOME", root.into()),
        ("PI_CODING_AGENT_DIR", agent.into()),
        ("PI_NOTES_HOME", root.join("notes").into()),
        ("PI_NOTES_AGENT", "tester".into()),
        ("PI_OFFLINE", "1".into()),
    ];
    let out = Command::new(env!("CARGO_BIN_EXE_notesoup-pi"))
        .args(["install", "--dir"])
        .arg(root.join("pi-package"))
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let pane = Pane {
        socket: format!("notesoup-pi-complete-{}", std::process::id()),
    };
    let assignments: Vec<String> = env
        .iter()
        .map(|(key, value)| format!("{key}='{}'", value.to_string_lossy().replace('\'', "'\\''")))
        .collect();
    let command = format!(
        "env {} pi; echo \"[pi exited $?]\"; sleep 86400",
        assignments.join(" ")
    );
    let status = Command::new("tmux")
        .envs(env.iter().map(|(k, v)| (k, v)))
        .args(["-L", &pane.socket, "-f", "/dev/null", "new-session", "-d"])
        .args(["-x", "160", "-y", "50", "-c"])
        .arg(&project)
        .arg(command)
        .status()
        .unwrap();
    assert!(status.success(), "tmux new-session failed");
    pane.wait_for("the notesoup extension loaded", |lines| {
        has_line(lines, "  notesoup.ts")
    });

    // After `/notesoup ` Pi lists both arguments, the first selected.
    pane.keys(&["-l", "/notesoup "]);
    pane.wait_for("on and off offered", |lines| {
        has_line(lines, "→ on") && has_line(lines, "  off")
    });
    // A prefix narrows the list; Tab takes the completion, Enter runs it.
    pane.keys(&["-l", "of"]);
    pane.wait_for("only off offered", |lines| {
        has_line(lines, "→ off") && !lines.iter().any(|l| l.ends_with(" on"))
    });
    pane.keys(&["Tab"]);
    pane.wait_for("the editor completed to off", |lines| {
        lines.iter().any(|l| l.trim_end() == "/notesoup off") && !has_line(lines, "→ off")
    });
    pane.keys(&["Enter"]);
    pane.wait_for("notesoup turned off", |lines| {
        lines
            .iter()
            .any(|l| l.trim_start().starts_with("notesoup: off · v"))
    });

    pane.keys(&["-l", "/notesoup o"]);
    pane.wait_for("on and off offered for o", |lines| {
        has_line(lines, "→ on") && has_line(lines, "  off")
    });
    pane.keys(&["Tab"]);
    pane.wait_for("the editor completed to on", |lines| {
        lines.iter().any(|l| l.trim_end() == "/notesoup on")
    });
    pane.keys(&["Enter"]);
    pane.wait_for("notesoup turned on", |lines| {
        lines
            .iter()
            .any(|l| l.trim_start().starts_with("notesoup: on · v"))
    });

    // A command without arguments offers none.
    pane.keys(&["-l", "/fresh-window "]);
    pane.wait_for("the editor holds /fresh-window", |lines| {
        lines.iter().any(|l| l.trim_end() == "/fresh-window")
    });
    let text = pane.text();
    assert!(!text.contains("→ on") && !text.contains("→ off"), "{text}");
    drop(pane);
}
