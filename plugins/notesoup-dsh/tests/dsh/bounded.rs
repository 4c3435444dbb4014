//! Bounds on what the bundle, the dreamer's extension and a project's
//! files can make `notesoup-dsh` hold or wait for: the built binary over
//! real pipes, with a bound on every wait so that a hang fails the test
//! instead of stalling it (the bound is no timing assertion).

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::hello;

/// How long a child may take before the test calls it hung.
const HANG: Duration = Duration::from_secs(120);

/// The over-long line sent to a server: far past core's 16 MiB cap.
const HUGE_LINE_BYTES: usize = 128 << 20;

/// The most a server may hold at its peak after such a line: half of it.
const PEAK_RSS_BOUND: u64 = 64 << 20;

/// A child with its stdout read line by line, and its stderr collected, on
/// threads of their own.
struct Proc {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: std::thread::JoinHandle<(u64, String)>,
}

impl Proc {
    fn spawn(command: &mut Command) -> Self {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (to_test, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines() {
                if to_test.send(line.unwrap()).is_err() {
                    return;
                }
            }
        });
        let mut stderr = child.stderr.take().unwrap();
        let stderr = std::thread::spawn(move || {
            // The length of all of it, and its first 64 KiB.
            let mut kept = Vec::new();
            let mut total = 0u64;
            let mut buffer = [0u8; 8192];
            loop {
                match stderr.read(&mut buffer) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        total += n as u64;
                        let room = (64usize << 10).saturating_sub(kept.len());
                        kept.extend_from_slice(&buffer[..n.min(room)]);
                    }
                }
            }
            (total, String::from_utf8_lossy(&kept).into_owned())
        });
        let stdin = child.stdin.take();
        Self {
            child,
            stdin,
            lines,
            stderr,
        }
    }

    fn stdin(&mut self) -> &mut ChildStdin {
        self.stdin.as_mut().unwrap()
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.stdin(), "{message}").unwrap();
        self.stdin().flush().unwrap();
    }

    /// Writes one line of `bytes` bytes: `head`, then `x` up to `tail`.
    fn send_huge(&mut self, head: &str, bytes: usize, tail: &str) {
        let stdin = self.stdin();
        stdin.write_all(head.as_bytes()).unwrap();
        let piece = vec![b'x'; 1 << 20];
        let mut left = bytes - head.len() - tail.len();
        while left > 0 {
            let n = left.min(piece.len());
            stdin.write_all(&piece[..n]).unwrap();
            left -= n;
        }
        stdin.write_all(tail.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// The next stdout line as JSON; a child that says nothing for [`HANG`]
    /// fails the test.
    fn next(&self) -> Value {
        match self.lines.recv_timeout(HANG) {
            Ok(line) => serde_json::from_str(&line).unwrap(),
            Err(RecvTimeoutError::Timeout) => panic!("no answer within {HANG:?}: it hangs"),
            Err(RecvTimeoutError::Disconnected) => panic!("the child closed its stdout"),
        }
    }

    /// The child's peak resident memory (`VmHWM`) in bytes.
    fn peak_rss(&self) -> u64 {
        peak_rss(self.child.id())
    }

    /// Closes stdin and waits (at most [`HANG`]) for the exit status and
    /// stderr: its length and its start.
    fn finish(mut self) -> (ExitStatus, u64, String) {
        drop(self.stdin.take());
        let status = wait_within(&mut self.child);
        let (bytes, text) = self.stderr.join().unwrap();
        (status, bytes, text)
    }
}

/// Waits for `child`, killing it and failing the test after [`HANG`].
fn wait_within(child: &mut Child) -> ExitStatus {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if started.elapsed() > HANG {
            let _ = child.kill();
            panic!("the child did not end within {HANG:?}: it hangs");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `VmHWM` of process `pid`, in bytes.
fn peak_rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kib: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    kib * 1024
}

/// What can stand at a settings file's name instead of a settings file.
#[derive(Debug, Clone, Copy)]
enum NotAFile {
    DevZero,
    Fifo,
    Directory,
    Oversized,
}

const NOT_FILES: [NotAFile; 4] = [
    NotAFile::DevZero,
    NotAFile::Fifo,
    NotAFile::Directory,
    NotAFile::Oversized,
];

fn place_file(kind: NotAFile, path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    match kind {
        NotAFile::DevZero => std::os::unix::fs::symlink("/dev/zero", path).unwrap(),
        NotAFile::Fifo => {
            let made = Command::new("mkfifo").arg(path).status().unwrap();
            assert!(made.success());
        }
        NotAFile::Directory => std::fs::create_dir(path).unwrap(),
        NotAFile::Oversized => {
            let mut text = br#"{"notesoup": {"bootMaxChars": 5000}, "pad": ""#.to_vec();
            text.resize(5 << 20, b' ');
            text.extend_from_slice(b"\"}");
            std::fs::write(path, text).unwrap();
        }
    }
}

/// A sandbox: the notes root, the dsh home and a project.
struct Place {
    _temp: tempfile::TempDir,
    notes: std::path::PathBuf,
    dsh_home: std::path::PathBuf,
    project: std::path::PathBuf,
}

impl Place {
    fn new() -> Self {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path().to_path_buf();
        let place = Self {
            notes: root.join("notes"),
            dsh_home: root.join("dsh-home"),
            project: root.join("project"),
            _temp: temp,
        };
        for dir in [&place.notes, &place.dsh_home, &place.project] {
            std::fs::create_dir_all(dir).unwrap();
        }
        place
    }

    fn run(&self, args: &[&str]) -> Proc {
        let mut command = Command::new(env!("CARGO_BIN_EXE_notesoup-dsh"));
        command
            .args(args)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self._temp.path())
            .env("PI_NOTES_HOME", &self.notes)
            .env("DSH_HOME", &self.dsh_home);
        Proc::spawn(&mut command)
    }
}

fn request(id: u64, op: &str, params: Value) -> Value {
    json!({"id": id, "op": op, "params": params})
}

fn write_call(id: u64, cwd: &Path, address: &str, content: &str) -> Value {
    request(
        id,
        "tool",
        json!({"session": {"id": "session-bounded", "cwd": cwd, "model": "scripted/scripted-model",
                           "from": 0, "events": []},
               "name": "notes_write", "arguments": {"address": address, "content": content}}),
    )
}

#[test]
fn a_request_line_past_the_cap_is_refused_in_bounded_memory_and_serving_goes_on() {
    let place = Place::new();
    let mut sidecar = place.run(&["serve"]);
    sidecar.send_huge(
        r#"{"id":5,"op":"hello","params":{"settings":{"pad":""#,
        HUGE_LINE_BYTES,
        r#""}}}"#,
    );
    let refused = sidecar.next();
    assert_eq!(refused["id"], 5, "{refused}");
    assert_eq!(refused["error"]["code"], "bad_request");
    assert_eq!(
        refused["error"]["message"],
        format!(
            "the request line is {HUGE_LINE_BYTES} bytes, over the limit of {}; it was discarded",
            16 << 20
        )
    );
    let peak = sidecar.peak_rss();
    assert!(peak < PEAK_RSS_BOUND, "peak RSS {peak} bytes");
    sidecar.send(&request(6, "hello", hello()));
    let greeted = sidecar.next();
    assert_eq!(greeted["id"], 6);
    assert_eq!(greeted["result"]["protocol"], 1, "{greeted}");
    assert!(sidecar.finish().0.success());
}

#[test]
fn a_dream_tools_line_past_the_cap_is_refused_in_bounded_memory_and_serving_goes_on() {
    let place = Place::new();
    let notes = place.notes.display().to_string();
    let mut tools = place.run(&["dream-tools", "--notes-home", &notes]);
    tools.send_huge(
        r#"{"id":3,"op":"dream.tool","params":{"name":"read","arguments":{"path":""#,
        HUGE_LINE_BYTES,
        r#""}}}"#,
    );
    let refused = tools.next();
    assert_eq!(refused["id"], 3, "{refused}");
    assert_eq!(refused["error"]["code"], "bad_request");
    assert_eq!(
        refused["error"]["message"],
        format!(
            "the request line is {HUGE_LINE_BYTES} bytes, over the limit of {}; it was discarded",
            16 << 20
        )
    );
    let peak = tools.peak_rss();
    assert!(peak < PEAK_RSS_BOUND, "peak RSS {peak} bytes");
    tools.send(&json!({"id": 4, "op": "dream.tool", "params": {"name": "ls"}}));
    let listed = tools.next();
    assert_eq!(listed["id"], 4);
    assert_eq!(listed["result"]["is_error"], false, "{listed}");
    // Arguments by position are no arguments.
    tools.send(&json!({"id": 5, "op": "dream.tool", "params": {"name": "read", "arguments": ["human/a.md"]}}));
    let refused = tools.next();
    assert_eq!(refused["result"]["is_error"], true, "{refused}");
    assert_eq!(
        refused["result"]["text"],
        "invalid arguments: expected an object, got an array"
    );
    assert!(tools.finish().0.success());
}

#[test]
fn a_settings_file_that_is_not_a_file_gives_the_defaults_and_one_warning() {
    for kind in NOT_FILES {
        let place = Place::new();
        let file = place.dsh_home.join("notesoup.json");
        place_file(kind, &file);
        let mut sidecar = place.run(&["serve"]);
        sidecar.send(&request(1, "hello", hello()));
        let greeted = sidecar.next();
        let warnings = greeted["result"]["warnings"].as_array().unwrap();
        assert_eq!(warnings.len(), 1, "{kind:?}: {greeted}");
        let warning = warnings[0].as_str().unwrap();
        assert!(
            warning.starts_with(&format!("notesoup: could not read {}: ", file.display()))
                && warning.ends_with("; using the defaults."),
            "{warning}"
        );
        // The defaults: the guard is on.
        sidecar.send(&write_call(2, &place.project, "@human/keys", KEY));
        let refused = sidecar.next();
        assert_eq!(
            refused["result"]["result"]["code"], "secret_detected",
            "{refused}"
        );
        let (status, _, stderr) = sidecar.finish();
        assert!(status.success());
        assert_eq!(stderr, "", "{kind:?}");
    }
}

const KEY: &str = "# Keys\naws_access_key_id = AKIAIOSFODNN7EXAMPLX\n";

#[test]
fn a_project_file_that_is_not_a_file_gives_the_defaults_and_one_warning() {
    for kind in NOT_FILES {
        let place = Place::new();
        let file = place.project.join(".dsh/notesoup.json");
        place_file(kind, &file);
        let mut sidecar = place.run(&["serve"]);
        sidecar.send(&request(1, "hello", hello()));
        assert!(
            sidecar.next()["result"]["warnings"]
                .as_array()
                .unwrap()
                .is_empty()
        );
        for id in [2, 3] {
            sidecar.send(&write_call(id, &place.project, "@project/plain", "plain\n"));
            let stored = sidecar.next();
            assert_eq!(stored["result"]["is_error"], false, "{kind:?}: {stored}");
        }
        let (status, _, stderr) = sidecar.finish();
        assert!(status.success());
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{kind:?}: {stderr}");
        assert!(
            lines[0].starts_with(&format!("notesoup: could not read {}: ", file.display())),
            "{}",
            lines[0]
        );
    }
}

/// A cloned repository's `.dsh/notesoup.json` cannot turn the guard off:
/// the write is refused and the sidecar says why, once; the user's own
/// setting (the row, or the dsh home's file) still turns it off.
#[test]
fn a_project_cannot_turn_the_secret_guard_off() {
    let place = Place::new();
    std::fs::create_dir_all(place.project.join(".dsh")).unwrap();
    std::fs::write(
        place.project.join(".dsh/notesoup.json"),
        r#"{"notesoup": {"secretGuard": false}}"#,
    )
    .unwrap();
    let mut sidecar = place.run(&["serve"]);
    sidecar.send(&request(1, "hello", hello()));
    sidecar.next();
    for id in [2, 3] {
        sidecar.send(&write_call(id, &place.project, "@project/keys", KEY));
        let refused = sidecar.next();
        assert_eq!(
            refused["result"]["result"]["code"], "secret_detected",
            "{refused}"
        );
    }
    let (_, _, stderr) = sidecar.finish();
    assert_eq!(
        stderr,
        "notesoup: a project's own settings cannot turn notesoup.secretGuard off; keeping the credential guard on (turn it off in your own settings).\n"
    );
    assert!(!place.notes.join("project").exists());

    std::fs::write(
        place.dsh_home.join("notesoup.json"),
        r#"{"notesoup": {"secretGuard": false}}"#,
    )
    .unwrap();
    let mut sidecar = place.run(&["serve"]);
    sidecar.send(&request(1, "hello", hello()));
    sidecar.next();
    sidecar.send(&write_call(2, &place.project, "@project/keys", KEY));
    let stored = sidecar.next();
    assert_eq!(stored["result"]["is_error"], false, "{stored}");
    let (_, _, stderr) = sidecar.finish();
    assert_eq!(stderr, "");
}
