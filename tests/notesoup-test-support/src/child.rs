//! A built binary as a child over real pipes, with a bound on every wait so
//! that a hang fails the test instead of stalling it (the bound is no timing
//! assertion), and the capped-input attacks every binary must survive.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::Value;

/// How long a child may take before the test calls it hung.
pub const HANG: Duration = Duration::from_secs(120);

/// The over-long line sent to a server: far past core's 16 MiB cap.
pub const HUGE_LINE_BYTES: usize = 128 << 20;

/// Core's cap on one input line, as every binary names it.
pub const LINE_CAP_BYTES: usize = 16 << 20;

/// The most a server may hold at its peak after such a line: half of it.
pub const PEAK_RSS_BOUND: u64 = 64 << 20;

/// A child with its stdout read line by line, and its stderr collected, on
/// threads of their own.
#[derive(Debug)]
pub struct Proc {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: std::thread::JoinHandle<(u64, String)>,
}

impl Proc {
    /// Starts `command` (its binary, arguments and environment the
    /// caller's) with all three streams piped.
    pub fn spawn(command: &mut Command) -> Self {
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

    pub fn stdin(&mut self) -> &mut ChildStdin {
        self.stdin.as_mut().unwrap()
    }

    /// Takes stdin away, for a writer of its own (the child may close it).
    pub fn take_stdin(&mut self) -> ChildStdin {
        self.stdin.take().unwrap()
    }

    pub fn send(&mut self, message: &Value) {
        writeln!(self.stdin(), "{message}").unwrap();
        self.stdin().flush().unwrap();
    }

    /// Writes one line of `bytes` bytes: `head`, then `x` up to `tail`.
    pub fn send_huge(&mut self, head: &str, bytes: usize, tail: &str) {
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
    pub fn next(&self) -> Value {
        match self.lines.recv_timeout(HANG) {
            Ok(line) => serde_json::from_str(&line).unwrap(),
            Err(RecvTimeoutError::Timeout) => panic!("no answer within {HANG:?}: it hangs"),
            Err(RecvTimeoutError::Disconnected) => panic!("the child closed its stdout"),
        }
    }

    /// The child's peak resident memory (`VmHWM`) in bytes.
    pub fn peak_rss(&self) -> u64 {
        peak_rss(self.child.id())
    }

    /// The capped-line attack: one line of [`HUGE_LINE_BYTES`] made of
    /// `head`, filler and `tail`. Returns the child's answer to it (the
    /// caller checks the host's refusal) once its peak memory is checked to
    /// stay below [`PEAK_RSS_BOUND`].
    pub fn answer_to_a_huge_line(&mut self, head: &str, tail: &str) -> Value {
        self.send_huge(head, HUGE_LINE_BYTES, tail);
        let answer = self.next();
        self.assert_peak_rss_bounded();
        answer
    }

    /// Fails the test if the child's peak memory reached
    /// [`PEAK_RSS_BOUND`]: what it read past the cap was held.
    pub fn assert_peak_rss_bounded(&self) {
        let peak = self.peak_rss();
        assert!(
            peak < PEAK_RSS_BOUND,
            "peak RSS {peak} bytes after a {HUGE_LINE_BYTES}-byte line"
        );
    }

    /// The attack on a reader that stops at the cap: [`HUGE_LINE_BYTES`] of
    /// spaces on stdin from a thread of their own (past the cap they meet a
    /// closed pipe), then the child's first answer and how it ended.
    pub fn answer_to_a_huge_input(mut self) -> (Value, ExitStatus) {
        let mut stdin = self.take_stdin();
        let writer = std::thread::spawn(move || {
            let piece = vec![b' '; 1 << 20];
            for _ in 0..(HUGE_LINE_BYTES >> 20) {
                if stdin.write_all(&piece).is_err() {
                    return;
                }
            }
        });
        let answer = self.next();
        let (status, _, _) = self.finish();
        writer.join().unwrap();
        (answer, status)
    }

    /// Writes `stdin`, closes it and waits (at most [`HANG`] for each
    /// line) for all of stdout, the exit status and stderr's start.
    pub fn output(mut self, stdin: &[u8]) -> (ExitStatus, String, String) {
        self.stdin().write_all(stdin).unwrap();
        drop(self.stdin.take());
        let mut stdout = String::new();
        while let Ok(line) = self.lines.recv_timeout(HANG) {
            stdout.push_str(&line);
            stdout.push('\n');
        }
        let (status, _, stderr) = self.finish();
        (status, stdout, stderr)
    }

    /// Closes stdin and waits (at most [`HANG`]) for the exit status and
    /// stderr: its length and its start.
    pub fn finish(mut self) -> (ExitStatus, u64, String) {
        drop(self.stdin.take());
        let status = wait_within(&mut self.child);
        let (bytes, text) = self.stderr.join().unwrap();
        (status, bytes, text)
    }
}

/// Runs `command` with `stdin`, failing the test if it hangs: its exit
/// status, stdout and stderr.
pub fn run_within(command: &mut Command, stdin: &[u8]) -> (ExitStatus, String, String) {
    Proc::spawn(command).output(stdin)
}

/// Waits for `child`, killing it and failing the test after [`HANG`].
pub fn wait_within(child: &mut Child) -> ExitStatus {
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
pub fn peak_rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kib: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    kib * 1024
}

/// Runs `command` to its end and fails the test, naming the command and
/// showing its stdout and stderr, unless it succeeded: its stdout as text.
pub fn stdout_of(command: &mut Command) -> String {
    let output = command
        .output()
        .unwrap_or_else(|error| panic!("{command:?} did not run: {error}"));
    assert_succeeded(&output, format_args!("{command:?}"));
    String::from_utf8(output.stdout).unwrap()
}

/// Fails the test, naming `what` and showing the exit status, stdout and
/// stderr, unless `output` is a success.
pub fn assert_succeeded(output: &Output, what: impl std::fmt::Display) {
    assert!(
        output.status.success(),
        "{what} failed ({}):\n{}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// `git -C dir`, the machine's own Git configuration (`/etc/gitconfig`) left
/// out; the caller adds the arguments and the rest of the environment.
pub fn git_in(dir: &std::path::Path) -> Command {
    let mut git = Command::new("git");
    git.arg("-C").arg(dir).env("GIT_CONFIG_NOSYSTEM", "1");
    git
}

/// Runs `command` to its end: its exit code, stdout and stderr as text.
pub fn outcome(command: &mut Command) -> (i32, String, String) {
    let output = command.output().unwrap();
    (
        output.status.code().unwrap(),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

/// Runs `command` with its stdout's read end closed before it writes (a
/// reader that has gone away: its first write meets a broken pipe): it must
/// end quietly, with success and no panic on stderr. `what` names the case
/// in a failure.
pub fn assert_quiet_without_a_reader(command: &mut Command, what: &str) {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{what}: {} {stderr}",
        output.status
    );
    assert!(!stderr.contains("panicked"), "{what}: {stderr}");
}

/// A port of 127.0.0.1 that is free now, for a server the test starts.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("free port")
        .port()
}

/// A server the test started, killed and waited for when dropped, however
/// the test ends.
#[derive(Debug)]
pub struct Reaped(pub Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Reaped {
    /// Starts `command` as a server with its output dropped and waits, at
    /// most `within` (a bound on a hang), until it listens on 127.0.0.1:
    /// `port`; the test fails naming `what` when it does not start or
    /// listen.
    pub fn quiet_server(command: &mut Command, port: u16, within: Duration, what: &str) -> Self {
        let mut child = Reaped(
            command
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap_or_else(|error| panic!("{what} does not start: {error}")),
        );
        child
            .listening(port, within)
            .unwrap_or_else(|why| panic!("{what} {why}"));
        child
    }

    /// Waits, at most `within` (a bound on a hang, not on speed), until
    /// something listens on 127.0.0.1:`port`; why not, when the server
    /// exited first or never listened.
    pub fn listening(&mut self, port: u16, within: Duration) -> Result<(), String> {
        let deadline = Instant::now() + within;
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Some(status) = self.0.try_wait().map_err(|error| error.to_string())? {
                return Err(format!("exited before listening on {port} ({status})"));
            }
            if Instant::now() >= deadline {
                return Err(format!("did not listen on {port} within {within:?}"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }
}

/// A bare Git repository made at `path` (`git init --bare`), the remote of
/// a sync test: its path, as `sync --remote` takes it.
pub fn bare_remote(path: &std::path::Path) -> String {
    stdout_of(
        Command::new("git")
            .args(["init", "--quiet", "--bare"])
            .arg(path),
    );
    path.display().to_string()
}
