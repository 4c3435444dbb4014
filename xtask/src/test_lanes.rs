//! `cargo xtask ci`'s test step: the test build's binaries, two at a time.
//!
//! `cargo test` runs its binaries one after another, and most of the time
//! of the longest ones goes to waiting on the hosts they drive (Node
//! starting, Claude Code and Pi answering, `tsc`), and a long binary's
//! last test often runs alone. On a 2-core machine, back to back, the
//! suite took 292 s two at a time and 407 s one at a time; three at a
//! time was slower than two (the hosts then wait on the CPU).
//! Each binary runs as `cargo test` runs it, in its package's folder with
//! `CARGO_MANIFEST_DIR` set; its output goes to a file of its own
//! (`target/test-lanes/<binary>.log`, kept until the next run) and is
//! printed whole when it ends, so two binaries' lines never mix. The
//! slowest start first, so the lanes end together. The doc tests run as
//! one more job.

use std::collections::VecDeque;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use serde::Deserialize;

use crate::workspace::{cargo, workspace_root};

/// How many test binaries run at once.
const LANES: usize = 2;

/// The test binaries that take longest (from 20 s to two and a half
/// minutes each in CI, with the reference hosts), by target name, longest
/// first: they start first. Any other binary follows in the build's order;
/// a stale name here costs only the order.
const SLOWEST: [&str; 7] = [
    "reference",
    "real_pi",
    "e2e",
    "dsh",
    "pi",
    "notesoup_core",
    "claude",
];

/// Test binaries whose tests mostly wait rather than compute, by target
/// name: they run [`WAITING_THREADS`] tests at a time instead of one per
/// core. Measured alone on 2 cores: the Claude Code plugin's tests (which
/// sleep past the 2 s after which notes and settings are kept) took 55.7 s
/// with 2 threads and 20.0 s with 8, for the same 29 s of CPU; the Pi
/// adapter's, the test kit's and core's integration tests were no faster
/// or slower with 8 (their waits are on the disk).
const WAITING: [&str; 1] = ["claude"];

/// How many tests a [`WAITING`] binary runs at once.
const WAITING_THREADS: usize = 8;

/// One job of the step: a test binary, or the doc tests.
struct Job {
    /// What the job's header names (as `cargo test` would).
    title: String,
    /// The name of its output's file.
    log: String,
    command: Command,
    /// Where [`SLOWEST`] puts it; the rest after.
    rank: usize,
}

/// Runs every test of the test build cargo's `test_args` name (`test
/// --workspace --all-features --locked`) with `env`, [`LANES`] binaries at a
/// time; fails naming every binary that failed.
pub fn run(test_args: &[&str], env: &[(String, String)]) -> Result<()> {
    let mut jobs = binaries(test_args)?;
    jobs.push(Job {
        title: "doc tests".to_owned(),
        log: "doc-tests.log".to_owned(),
        command: {
            let mut doc = cargo(test_args);
            doc.arg("--doc");
            doc
        },
        rank: SLOWEST.len(),
    });
    for job in &mut jobs {
        job.command.envs(env.iter().map(|(k, v)| (k, v)));
    }
    run_jobs(jobs, &workspace_root().join("target").join("test-lanes"))
}

/// Runs `jobs` [`LANES`] at a time, by rank, each one's output in its file
/// in `logs`; fails naming every job that failed.
fn run_jobs(mut jobs: Vec<Job>, logs: &Path) -> Result<()> {
    std::fs::create_dir_all(logs).with_context(|| format!("creating {}", logs.display()))?;
    jobs.sort_by_key(|job| job.rank);
    let queue = Mutex::new(VecDeque::from(jobs));
    let failed = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..LANES {
            scope.spawn(|| {
                while let Some(job) = next(&queue) {
                    if let Err(err) = run_job(job, logs) {
                        lock(&failed).push(format!("{err:#}"));
                    }
                }
            });
        }
    });
    let failed = failed
        .into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if !failed.is_empty() {
        bail!("tests failed in: {}", failed.join(", "));
    }
    Ok(())
}

fn next(queue: &Mutex<VecDeque<Job>>) -> Option<Job> {
    lock(queue).pop_front()
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Runs one job with its stdout and stderr in one file (their lines in the
/// order written), then prints them under its header; fails naming the job
/// when it could not start or did not pass.
fn run_job(mut job: Job, logs: &Path) -> Result<()> {
    let started = Instant::now();
    let log = logs.join(&job.log);
    let output = File::create(&log).with_context(|| format!("creating {}", log.display()))?;
    let status = job
        .command
        .stdin(Stdio::null())
        .stdout(output.try_clone()?)
        .stderr(output)
        .status()
        .with_context(|| format!("could not start {}", job.title))?;
    let text = std::fs::read(&log).with_context(|| format!("reading {}", log.display()))?;
    println!(
        "     Running {} ({:.1} s)\n{}",
        job.title,
        started.elapsed().as_secs_f64(),
        String::from_utf8_lossy(&text)
    );
    if !status.success() {
        bail!("{} ({status})", job.title);
    }
    Ok(())
}

/// One line of `cargo test --no-run --message-format=json`.
#[derive(Deserialize)]
struct Message {
    reason: String,
    #[serde(default)]
    executable: Option<PathBuf>,
    #[serde(default)]
    manifest_path: Option<PathBuf>,
    #[serde(default)]
    target: Option<Target>,
    #[serde(default)]
    profile: Option<Profile>,
}

#[derive(Deserialize)]
struct Profile {
    /// Whether the artifact is a test harness (the tests' own builds of
    /// the binaries they run are not).
    test: bool,
}

#[derive(Deserialize)]
struct Target {
    name: String,
    src_path: PathBuf,
}

/// The test build's binaries, from the build itself (nothing is compiled
/// when the tests were built before).
fn binaries(test_args: &[&str]) -> Result<Vec<Job>> {
    let output = cargo(test_args)
        .args(["--no-run", "--message-format=json"])
        .stderr(Stdio::inherit())
        .output()
        .context("could not list the test binaries")?;
    if !output.status.success() {
        bail!("the test build failed ({})", output.status);
    }
    jobs_of(&String::from_utf8_lossy(&output.stdout))
}

/// The jobs for each test binary in cargo's JSON messages.
fn jobs_of(messages: &str) -> Result<Vec<Job>> {
    let mut jobs = Vec::new();
    for line in messages.lines().filter(|line| line.starts_with('{')) {
        let message: Message =
            serde_json::from_str(line).with_context(|| format!("reading cargo's {line}"))?;
        let (Some(executable), Some(manifest), Some(target)) =
            (message.executable, message.manifest_path, message.target)
        else {
            continue;
        };
        let is_test = message.profile.is_some_and(|profile| profile.test);
        if message.reason != "compiler-artifact" || !is_test {
            continue;
        }
        let package = manifest.parent().unwrap_or(Path::new(".")).to_path_buf();
        let source = target
            .src_path
            .strip_prefix(&package)
            .unwrap_or(&target.src_path)
            .display()
            .to_string();
        let mut command = Command::new(&executable);
        command
            .current_dir(&package)
            .env("CARGO_MANIFEST_DIR", &package);
        if WAITING.contains(&target.name.as_str()) {
            command.arg(format!("--test-threads={WAITING_THREADS}"));
        }
        let log = executable.file_name().map_or_else(
            || target.name.clone(),
            |name| name.to_string_lossy().into_owned(),
        );
        jobs.push(Job {
            title: format!("{source} ({})", executable.display()),
            log: format!("{log}.log"),
            command,
            rank: SLOWEST
                .iter()
                .position(|name| *name == target.name)
                .unwrap_or(SLOWEST.len()),
        });
    }
    if jobs.is_empty() {
        bail!("the test build named no test binary");
    }
    Ok(jobs)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three test binaries in cargo's messages as `--no-run
    /// --message-format=json` prints them (fields cut to those read), a
    /// library without an executable, and a binary the tests run, built
    /// without the test harness.
    const MESSAGES: &str = r#"{"reason":"compiler-artifact","manifest_path":"/w/plugins/notesoup-dsh/Cargo.toml","target":{"name":"notesoup_dsh","kind":["lib"],"src_path":"/w/plugins/notesoup-dsh/src/lib.rs"},"profile":{"test":true},"executable":"/w/target/debug/deps/notesoup_dsh-1"}
{"reason":"compiler-artifact","manifest_path":"/w/plugins/notesoup-dsh/Cargo.toml","target":{"name":"notesoup_dsh","kind":["lib"],"src_path":"/w/plugins/notesoup-dsh/src/lib.rs"},"profile":{"test":false},"executable":null}
{"reason":"compiler-artifact","manifest_path":"/w/plugins/notesoup-dsh/Cargo.toml","target":{"name":"notesoup-dsh","kind":["bin"],"src_path":"/w/plugins/notesoup-dsh/src/main.rs"},"profile":{"test":false},"executable":"/w/target/debug/notesoup-dsh"}
{"reason":"compiler-artifact","manifest_path":"/w/plugins/notesoup-dsh/Cargo.toml","target":{"name":"dsh","kind":["test"],"src_path":"/w/plugins/notesoup-dsh/tests/dsh/main.rs"},"profile":{"test":true},"executable":"/w/target/debug/deps/dsh-2"}
{"reason":"compiler-artifact","manifest_path":"/w/plugins/notesoup-claude/Cargo.toml","target":{"name":"claude","kind":["test"],"src_path":"/w/plugins/notesoup-claude/tests/claude/main.rs"},"profile":{"test":true},"executable":"/w/target/debug/deps/claude-3"}
{"reason":"build-finished","success":true}
"#;

    #[test]
    fn each_test_binary_runs_in_its_package_slowest_first() {
        let mut jobs = jobs_of(MESSAGES).expect("three jobs");
        jobs.sort_by_key(|job| job.rank);
        let titles: Vec<&str> = jobs.iter().map(|job| job.title.as_str()).collect();
        assert_eq!(
            titles,
            [
                "tests/dsh/main.rs (/w/target/debug/deps/dsh-2)",
                "tests/claude/main.rs (/w/target/debug/deps/claude-3)",
                "src/lib.rs (/w/target/debug/deps/notesoup_dsh-1)",
            ]
        );
        let logs: Vec<&str> = jobs.iter().map(|job| job.log.as_str()).collect();
        assert_eq!(logs, ["dsh-2.log", "claude-3.log", "notesoup_dsh-1.log"]);
        for job in &jobs {
            let package = if job.log.starts_with("claude") {
                "/w/plugins/notesoup-claude"
            } else {
                "/w/plugins/notesoup-dsh"
            };
            assert_eq!(job.command.get_current_dir(), Some(Path::new(package)));
            let manifest_dir = job
                .command
                .get_envs()
                .find(|(name, _)| *name == "CARGO_MANIFEST_DIR")
                .and_then(|(_, value)| value);
            assert_eq!(manifest_dir, Some(package.as_ref()));
        }
        let args: Vec<Vec<String>> = jobs
            .iter()
            .map(|job| {
                job.command
                    .get_args()
                    .map(|arg| arg.to_string_lossy().into_owned())
                    .collect()
            })
            .collect();
        assert_eq!(
            args,
            [vec![], vec!["--test-threads=8".to_owned()], vec![]],
            "only a binary whose tests mostly wait runs more of them at once"
        );
    }

    /// A job of `sh -c script`, its output in `<name>.log`.
    fn job(name: &str, script: &str) -> Job {
        let mut command = Command::new("sh");
        command.args(["-c", script]);
        Job {
            title: name.to_owned(),
            log: format!("{name}.log"),
            command,
            rank: 0,
        }
    }

    #[test]
    fn every_job_runs_its_output_is_kept_and_each_failure_is_named() {
        let logs = tempfile::tempdir().expect("tempdir");
        let ran = run_jobs(
            vec![
                job("one", "echo one out; echo one err >&2"),
                job("two", "echo two out; exit 3"),
                job("three", "echo three out"),
            ],
            logs.path(),
        );
        let error = format!("{:#}", ran.expect_err("a job failed"));
        assert_eq!(error, "tests failed in: two (exit status: 3)");
        let log = |name: &str| {
            std::fs::read_to_string(logs.path().join(format!("{name}.log"))).expect("its log")
        };
        assert_eq!(log("one"), "one out\none err\n");
        assert_eq!(log("two"), "two out\n");
        assert_eq!(log("three"), "three out\n");
        run_jobs(vec![job("four", "true")], logs.path()).expect("a job that passes");
    }

    #[test]
    fn a_build_without_test_binaries_is_refused() {
        assert!(jobs_of("{\"reason\":\"build-finished\",\"success\":true}\n").is_err());
    }
}
