//! `cargo xtask pi-bench [ROUNDS]`: what the Pi package's sidecar costs
//! inside real Pi 1.6.0, measured by `plugins/notesoup-pi/bench/roundtrip.mjs`
//! with a release `notesoup-pi`: the sidecar's start to `ready`, and the
//! median time Pi spends dispatching an event to notesoup next to the same
//! event dispatched to a no-op extension.

use std::process::{Command, Output};

use anyhow::{Context, Result, bail};

use crate::measure::{Order, alternating, alternating_medians, median_f64, print_table};
use crate::workspace::{build_notesoup_pi, load_average, workspace_root};

pub fn run(args: &[String]) -> Result<()> {
    match args.first().map(String::as_str) {
        Some("context") => return context(&args[1..]),
        Some("report") => return report(&args[1..]),
        Some("report-all") => return report_all(&args[1..]),
        Some("resume") => return resume(&args[1..]),
        Some("sidecar") => return sidecar(&args[1..]),
        _ => {}
    }
    let rounds = match args {
        [] => "500".to_owned(),
        [n] if n.parse::<u32>().is_ok() => n.clone(),
        _ => bail!(
            "usage: cargo xtask pi-bench [ROUNDS] | pi-bench context [ENTRIES] [RUNS] | pi-bench report [ENTRIES] [RUNS] | pi-bench report-all [SESSIONS] [RUNS] | pi-bench resume [--booted] [--again] [RUNS] [ENTRIES...] | pi-bench sidecar [ENTRIES] [RUNS] [EVENTS] [BASELINE_BINARY]"
        ),
    };
    let env = crate::hosts::pi_env()?;
    let root = workspace_root();
    build_notesoup_pi(true)?;
    let work = std::env::temp_dir().join(format!("notesoup-pi-bench-{}", std::process::id()));
    std::fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;
    let output = Command::new(&env.node)
        .arg(root.join("plugins/notesoup-pi/bench/roundtrip.mjs"))
        .arg(root.join("plugins/notesoup-pi/package"))
        .arg(&work)
        .arg(&rounds)
        .env("NOTESOUP_PI_NODE_MODULES", &env.node_modules)
        .env("NOTESOUP_PI_BIN", root.join("target/release/notesoup-pi"))
        .env("HOME", &work)
        .env("PI_NOTES_HOME", work.join("notes"))
        .output()
        .context("could not run the bench")?;
    let _ = std::fs::remove_dir_all(&work);
    let report = report_of(&output, "the bench")?;
    println!("rounds: {}", report["rounds"]);
    println!(
        "sidecar start to ready (median of 30): {:.2} ms",
        ms(&report["sidecarStartMedianMs"])
    );
    for (event, note) in [
        ("turn_start", "one event"),
        ("context", "context + context_with_system: two events"),
    ] {
        println!(
            "{event} ({note}): no-op {:.3} ms, notesoup {:.3} ms, overhead {:.3} ms",
            ms(&report["noopMedianMs"][event]),
            ms(&report["notesoupMedianMs"][event]),
            ms(&report["overheadMedianMs"][event]),
        );
    }
    Ok(())
}

/// `pi-bench context [ENTRIES] [RUNS]`: opening a long session written by
/// real Pi, side by side in one run: `notesoup-pi context FILE` (release)
/// against Pi opening the same file and building its context
/// (`SessionManager.open` + `buildSessionContext`, a whole Node process).
/// The session is written once by the real Pi SDK and cached.
fn context(args: &[String]) -> Result<()> {
    let (bench, runs) = LongSession::open(args)?;
    let medians = alternating_medians(runs, 2, |_, variant| {
        Ok(if variant == 0 {
            let mut cmd = bench.notesoup_pi();
            cmd.arg("context").arg(&bench.session);
            cmd
        } else {
            bench.pi_open()
        })
    })?;
    let (ours, theirs) = (medians[0], medians[1]);
    println!("medians of {runs} alternating runs:");
    print_table(
        32,
        &[
            ("notesoup-pi context", ours),
            ("Pi open + buildSessionContext", theirs),
        ],
    );
    println!(
        "ratio: notesoup-pi is {:.1}x faster (wall), {:.1}x (CPU), {:.1}x less memory",
        theirs.wall / ours.wall,
        theirs.cpu / ours.cpu,
        theirs.peak_mb / ours.peak_mb
    );
    Ok(())
}

/// `pi-bench report [ENTRIES] [RUNS]`: `notesoup-pi report FILE` (release)
/// over a long session written by real Pi, as the table and with `--html`,
/// side by side in one run with Pi opening the same file and building its
/// context (`SessionManager.open` + `buildSessionContext`, a whole Node
/// process), with the load average at the start and the end.
fn report(args: &[String]) -> Result<()> {
    let (bench, runs) = LongSession::open(args)?;
    let work = std::env::temp_dir().join(format!("notesoup-pi-report-{}", std::process::id()));
    std::fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;
    let page = work.join("report.html");
    println!("load average at the start: {}", load_average());
    let notesoup = |html: bool| {
        let mut cmd = bench.notesoup_pi();
        cmd.arg("report").arg(&bench.session);
        if html {
            cmd.arg("--html").arg(&page);
        }
        // The notes the page reads: an empty home of the bench's own.
        cmd.env("PI_NOTES_HOME", work.join("notes"))
            .env("PI_CODING_AGENT_DIR", work.join("agent"));
        cmd
    };
    let medians = alternating_medians(runs, 3, |_, variant| {
        Ok(match variant {
            0 => notesoup(false),
            1 => notesoup(true),
            _ => bench.pi_open(),
        })
    })?;
    let page_kb = std::fs::metadata(&page).map(|m| m.len()).unwrap_or(0) as f64 / 1e3;
    let _ = std::fs::remove_dir_all(&work);
    let (table, html, theirs) = (medians[0], medians[1], medians[2]);
    println!("medians of {runs} alternating runs:");
    print_table(
        36,
        &[
            ("notesoup-pi report", table),
            ("notesoup-pi report --html", html),
            ("Pi open + buildSessionContext", theirs),
        ],
    );
    println!("the page: {page_kb:.0} kB");
    println!(
        "ratio: Pi's open over the report: {:.2}x (wall), {:.2}x (CPU), {:.2}x (memory)",
        theirs.wall / table.wall,
        theirs.cpu / table.cpu,
        theirs.peak_mb / table.peak_mb
    );
    println!("load average at the end: {}", load_average());
    Ok(())
}

/// `pi-bench report-all [SESSIONS] [RUNS]`: `notesoup-pi report --all`
/// (release) over a project of `sessions` sessions, each a copy of a
/// session real Pi 1.6.0 wrote (the goldens, taken in turn), with every core
/// the process may use and pinned to one core (`taskset -c 0`: the thread
/// pool then has one thread), in alternating runs, with the load average at
/// the start and the end. Needs no Node.
fn report_all(args: &[String]) -> Result<()> {
    let (sessions, runs) = (
        number(args, 0, 400, "SESSIONS and RUNS")?,
        number(args, 1, 5, "SESSIONS and RUNS")?,
    );
    let root = workspace_root();
    build_notesoup_pi(true)?;
    let work = std::env::temp_dir().join(format!("notesoup-pi-report-all-{}", std::process::id()));
    let project = work.join("proj");
    std::fs::create_dir_all(&project).with_context(|| format!("creating {}", project.display()))?;
    let safe = project
        .to_string_lossy()
        .trim_start_matches('/')
        .replace('/', "-");
    let folder = work.join("agent/sessions").join(format!("--{safe}--"));
    std::fs::create_dir_all(&folder).with_context(|| format!("creating {}", folder.display()))?;
    let goldens = [
        "notesoup-boundary",
        "retain-none",
        "notesoup-settle",
        "compaction",
        "agent-loop",
        "branches",
    ];
    let mut bytes = 0;
    for index in 0..sessions {
        let golden = root
            .join("plugins/notesoup-pi/tests/golden")
            .join(format!("{}.jsonl", goldens[index % goldens.len()]));
        let path = folder.join(format!("2026-03-01T09-00-00-000Z_s{index:05}.jsonl"));
        bytes += std::fs::copy(&golden, &path)
            .with_context(|| format!("copying {}", golden.display()))?;
    }
    println!(
        "project: {sessions} sessions, {:.1} MB in all (copies of Pi 1.6.0's goldens), {} cores",
        bytes as f64 / 1e6,
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    );
    println!("load average at the start: {}", load_average());
    let binary = root.join("target/release/notesoup-pi");
    let notesoup = |pinned: bool| {
        let mut cmd = if pinned {
            let mut cmd = Command::new("taskset");
            cmd.args(["-c", "0"]).arg(&binary);
            cmd
        } else {
            Command::new(&binary)
        };
        cmd.args(["report", "--all", "--cwd"]).arg(&project);
        cmd.env("PI_NOTES_HOME", work.join("notes"))
            .env("PI_CODING_AGENT_DIR", work.join("agent"));
        cmd
    };
    let medians = alternating_medians(runs, 2, |_, variant| Ok(notesoup(variant == 1)));
    let _ = std::fs::remove_dir_all(&work);
    let medians = medians?;
    let (pool, one) = (medians[0], medians[1]);
    println!("medians of {runs} alternating runs:");
    print_table(
        40,
        &[
            ("notesoup-pi report --all", pool),
            ("the same, pinned to one core", one),
        ],
    );
    println!(
        "ratio: one core over the pool: {:.2}x (wall)",
        one.wall / pool.wall
    );
    println!("load average at the end: {}", load_average());
    Ok(())
}

/// The `at`th argument as a number, `default` where there is none; `what`
/// names the arguments that are numbers.
/// The JSON report a Node bench printed on stdout; a failed run or one that
/// printed no JSON is refused with its stderr.
fn report_of(output: &Output, bench: &str) -> Result<serde_json::Value> {
    if !output.status.success() {
        bail!(
            "{bench} failed ({}):\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    }
    serde_json::from_slice(&output.stdout).with_context(|| format!("{bench} printed no JSON"))
}

/// A figure of a bench report in milliseconds (or any float), `NaN` when
/// it is missing.
fn ms(value: &serde_json::Value) -> f64 {
    value.as_f64().unwrap_or(f64::NAN)
}

fn number(args: &[String], at: usize, default: usize, what: &str) -> Result<usize> {
    args.get(at).map_or(Ok(default), |n| {
        n.parse().with_context(|| format!("{what} are numbers"))
    })
}

/// A bench over a long session written by real Pi: the Pi install, the
/// release `notesoup-pi` built, the session written (or found cached).
struct LongSession {
    env: crate::hosts::PiInstall,
    root: std::path::PathBuf,
    session: std::path::PathBuf,
}

impl LongSession {
    /// Builds and writes what the bench needs for `[ENTRIES] [RUNS]` in
    /// `args`, and prints the session's size and place; and RUNS.
    fn open(args: &[String]) -> Result<(Self, usize)> {
        let (entries, runs) = (
            number(args, 0, 100_000, "ENTRIES and RUNS")?,
            number(args, 1, 5, "ENTRIES and RUNS")?,
        );
        let env = crate::hosts::pi_env()?;
        let root = workspace_root();
        build_notesoup_pi(true)?;
        let session = long_session(&env, entries)?;
        let size = std::fs::metadata(&session).map(|m| m.len()).unwrap_or(0);
        println!(
            "session: {entries} entries, {:.1} MB, written by Pi 1.6.0 ({})",
            size as f64 / 1e6,
            session.display()
        );
        Ok((Self { env, root, session }, runs))
    }

    /// The release `notesoup-pi`.
    fn notesoup_pi(&self) -> Command {
        Command::new(self.root.join("target/release/notesoup-pi"))
    }

    /// Pi opening the session and building its context
    /// (`SessionManager.open` + `buildSessionContext`), a whole Node process.
    fn pi_open(&self) -> Command {
        let mut cmd = Command::new(&self.env.node);
        cmd.arg(self.root.join("plugins/notesoup-pi/bench/long-session.mjs"))
            .arg("open")
            .arg(&self.session)
            .env("NOTESOUP_PI_NODE_MODULES", &self.env.node_modules);
        cmd
    }
}

/// A session of `entries` entries written by the real Pi SDK
/// (`bench/long-session.mjs write`), cached under the reference directory.
fn long_session(env: &crate::hosts::PiInstall, entries: usize) -> Result<std::path::PathBuf> {
    let script = workspace_root().join("plugins/notesoup-pi/bench/long-session.mjs");
    let cache = crate::refdir::reference_dir()?.join("bench");
    std::fs::create_dir_all(&cache).with_context(|| format!("creating {}", cache.display()))?;
    let session = cache.join(format!("pi-1.6.0-long-{entries}.jsonl"));
    if !session.exists() {
        eprintln!("writing a {entries}-entry session with the real Pi SDK");
        let status = Command::new(&env.node)
            .arg(&script)
            .args([
                "write".as_ref(),
                session.as_os_str(),
                entries.to_string().as_ref(),
            ])
            .env("NOTESOUP_PI_NODE_MODULES", &env.node_modules)
            .status()
            .context("could not run the session writer")?;
        if !status.success() {
            bail!("writing the session failed ({status})");
        }
    }
    Ok(session)
}

/// `pi-bench sidecar [ENTRIES] [RUNS] [EVENTS] [BASELINE_BINARY]`: the
/// sidecar alone (`bench/sidecar.mjs`, no Pi) resuming a long session
/// written by real Pi: `session_start` with every entry left to the session
/// file, then EVENTS `turn_start` events, EVENTS `context` events carrying
/// a 5,000-message context (the payload as each build's `ready.omit` has
/// the shim send it), one `context` at the warning line, EVENTS
/// `context_with_system` events over the same context (summarised as each
/// build's `ready.summarize` says) and one with a fork's copied root boot
/// to drop; medians of RUNS runs, and the sidecar's peak RSS. A
/// BASELINE_BINARY (another build of `notesoup-pi`) runs alternating with
/// the release build, on the same load. With `NOTESOUP_PI_BENCH_NOTES=N`,
/// the sidecars share a notes root of N notes, and `session_start` is
/// measured three ways: a first start ever (an empty cache directory), an
/// ordinary one (the boot caches the last start kept) and one after a note
/// was written (its folder listed again with the kept heads).
fn sidecar(args: &[String]) -> Result<()> {
    let what = "ENTRIES, RUNS and EVENTS";
    let (entries, runs, events) = (
        number(args, 0, 100_000, what)?,
        number(args, 1, 5, what)?,
        number(args, 2, 20, what)?,
    );
    let env = crate::hosts::pi_env()?;
    let root = workspace_root();
    build_notesoup_pi(true)?;
    let session = long_session(&env, entries)?;
    let mut binaries = vec![root.join("target/release/notesoup-pi").into_os_string()];
    binaries.extend(args.get(3).map(std::ffi::OsString::from));
    println!("load average at the start: {}", load_average());
    let output = Command::new(&env.node)
        .arg(root.join("plugins/notesoup-pi/bench/sidecar.mjs"))
        .arg(&session)
        .arg(runs.to_string())
        .arg(events.to_string())
        .args(&binaries)
        .output()
        .context("could not run the sidecar bench")?;
    let report = report_of(&output, "the sidecar bench")?;
    println!(
        "{} entries, {} notes, medians of {runs} runs ({events} turn_start, {events} context and {events} context_with_system events each; the context: {} messages, {:.1} MB of JSON)",
        report["entries"],
        report["notes"],
        report["contextMessages"],
        ms(&report["contextMessagesBytes"]) / 1e6,
    );
    if let Some(binaries) = report["binaries"].as_object() {
        for (binary, figures) in binaries {
            println!(
                "{binary} (protocol {}): handshake {:.1} ms, session_start {:.1} ms (runs: {}), turn_start {:.3} ms, context {:.2} ms (line {:.0} bytes), context at the warning {:.2} ms, context_with_system {:.2} ms (line {:.0} bytes), context_with_system editing {:.2} ms, peak RSS {:.0} MB",
                figures["protocol"],
                ms(&figures["handshakeMs"]),
                ms(&figures["sessionStartMs"]),
                figures["sessionStartAllMs"],
                ms(&figures["turnStartMs"]),
                ms(&figures["contextMs"]),
                ms(&figures["contextLineBytes"]),
                ms(&figures["contextWarningMs"]),
                ms(&figures["contextWithSystemMs"]),
                ms(&figures["contextWithSystemLineBytes"]),
                ms(&figures["contextWithSystemEditMs"]),
                ms(&figures["rssMb"]),
            );
            if !figures["sessionStartFirstMs"].is_null() {
                println!(
                    "{binary}: session_start at a first start ever (no kept caches) {:.1} ms (runs: {}), after a note was written {:.1} ms (runs: {}), at an ordinary start {:.1} ms",
                    ms(&figures["sessionStartFirstMs"]),
                    figures["sessionStartFirstAllMs"],
                    ms(&figures["sessionStartAfterWriteMs"]),
                    figures["sessionStartAfterWriteAllMs"],
                    ms(&figures["sessionStartMs"]),
                );
            }
        }
    }
    println!("load average at the end: {}", load_average());
    Ok(())
}

/// `pi-bench resume [--booted] [--again] [RUNS] [ENTRIES...]`: real Pi 1.6.0 (SDK,
/// faux model) resuming a session written by Pi and answering one prompt,
/// then five
/// more, with and without the notesoup package, runs alternating in one
/// process tree: medians of the whole Node process's wall time, of Pi's
/// part (from its modules loaded to the first answer), of a later prompt
/// (what each ordinary prompt's events cost), and of Pi's process's peak RSS (the
/// sidecar is a process of its own), side by side with the ratio. A third
/// variant loads a no-op extension: what any extension costs Pi. Sessions of 1,000,
/// 10,000 and 100,000 entries unless ENTRIES are given. With
/// `NOTESOUP_PI_BENCH_BASELINE` set to another build of `notesoup-pi`, a
/// fourth variant runs the package with that sidecar (a before and after
/// on the same load); `NOTESOUP_PI_BENCH_BASELINE_PACKAGE` names the Pi
/// package folder of that build when its bridge protocol is not this one's.
/// The session was written without notesoup, so each run with the package
/// is the first time notesoup sees it (it appends the window's boot);
/// `--booted` resumes instead, in every variant, the session as one run of
/// this build's package left it: how a session that has run with notesoup
/// resumes. Each run is in a home of its own unless `--again`: then each
/// variant keeps one home (its caches, its copy of the session file, written
/// over in place at each run) from run to run, after one unmeasured run,
/// as a user resumes the same session again.
fn resume(args: &[String]) -> Result<()> {
    let baseline = std::env::var_os("NOTESOUP_PI_BENCH_BASELINE").map(std::path::PathBuf::from);
    let baseline_package = std::env::var_os("NOTESOUP_PI_BENCH_BASELINE_PACKAGE");
    let flags = args.iter().take_while(|arg| arg.starts_with("--")).count();
    let (flags, args) = args.split_at(flags);
    let booted = flags.iter().any(|flag| flag == "--booted");
    let again = flags.iter().any(|flag| flag == "--again");
    let runs: usize = match args.first() {
        Some(n) => n.parse().context("RUNS is a number")?,
        None => 5,
    };
    let sizes: Vec<usize> = if args.len() > 1 {
        args[1..]
            .iter()
            .map(|n| n.parse().context("ENTRIES are numbers"))
            .collect::<Result<_>>()?
    } else {
        vec![1_000, 10_000, 100_000]
    };
    let env = crate::hosts::pi_env()?;
    let root = workspace_root();
    build_notesoup_pi(true)?;
    let script = root.join("plugins/notesoup-pi/bench/resume.mjs");
    let package = root.join("plugins/notesoup-pi/package");
    let binary = root.join("target/release/notesoup-pi");
    let work = std::env::temp_dir().join(format!("notesoup-pi-resume-{}", std::process::id()));
    println!("load average at the start: {}", load_average());
    println!(
        "{:>8} {:>6} | {:>9} {:>9} {:>9} {:>9} {:>7} | {:>7} {:>7} {:>7}",
        "entries",
        "MB",
        "without",
        "no-op ext",
        "notesoup",
        "added",
        "ratio",
        "RSS w/o",
        "no-op",
        "notesoup",
    );
    if booted {
        println!("sessions notesoup has booted: each resumed once with the package first");
    }
    if again {
        println!("the same session resumed again: one home per variant, kept from run to run");
    }
    for entries in sizes {
        let mut session = long_session(&env, entries)?;
        if booted {
            let kept = work.join(format!("booted-{entries}.jsonl"));
            let dir = work.join(format!("{entries}-boot"));
            std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
            let output =
                resume_command(&env, &script, package.as_os_str(), &dir, &session, &binary)
                    .arg("0")
                    .env("NOTESOUP_PI_BENCH_KEEP", &kept)
                    .output()
                    .context("could not run the resume bench")?;
            report_of(&output, "the resume that boots the session")?;
            let _ = std::fs::remove_dir_all(&dir);
            session = kept;
        }
        let size = std::fs::metadata(&session).map(|m| m.len()).unwrap_or(0);
        // Each variant: the package argument and the sidecar binary.
        let mut variants = vec![
            (std::ffi::OsString::from("none"), binary.clone()),
            (std::ffi::OsString::from("noop"), binary.clone()),
            (package.clone().into_os_string(), binary.clone()),
        ];
        if let Some(baseline) = &baseline {
            let with = baseline_package
                .clone()
                .unwrap_or_else(|| package.clone().into_os_string());
            variants.push((with, baseline.clone()));
        }
        let home = |run: usize, variant: usize| {
            if again {
                work.join(format!("{entries}-again-{variant}"))
            } else {
                work.join(format!("{entries}-{run}-{variant}"))
            }
        };
        // With `--again`, each variant's session copy after its unmeasured
        // run: every measured run must resume that same file.
        let mut first_copies = Vec::new();
        if again {
            for (variant, (package_arg, binary)) in variants.iter().enumerate() {
                let dir = home(0, variant);
                std::fs::create_dir_all(&dir)
                    .with_context(|| format!("creating {}", dir.display()))?;
                let output = resume_command(&env, &script, package_arg, &dir, &session, binary)
                    .arg("0")
                    .output()
                    .context("could not run the resume bench")?;
                first_copies.push(session_ino(&report_of(
                    &output,
                    "the unmeasured first resume",
                )?)?);
            }
        }
        let samples = alternating(runs, variants.len(), Order::Same, |run, variant| {
            let (package_arg, binary) = &variants[variant];
            let dir = home(run, variant);
            if !again {
                let _ = std::fs::remove_dir_all(&dir);
            }
            std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
            let start = std::time::Instant::now();
            let output = resume_command(&env, &script, package_arg, &dir, &session, binary)
                .output()
                .context("could not run the resume bench")?;
            let wall = start.elapsed().as_secs_f64() * 1000.0;
            if !again {
                let _ = std::fs::remove_dir_all(&dir);
            }
            let report = report_of(&output, "the resume bench")?;
            let handlers = &report["handlers"];
            let slowest = handlers["laterEvents"]
                .as_object()
                .map(|events| {
                    events
                        .values()
                        .map(|event| ms(&event["meanMs"]))
                        .fold(0.0, f64::max)
                })
                .unwrap_or(0.0);
            Ok(ResumeSample {
                wall,
                after_modules: ms(&report["totalMs"]) - ms(&report["phases"]["modules"]),
                to_ready: ms(&report["phases"]["sessionStart"]) - ms(&report["phases"]["modules"]),
                later: ms(&report["laterMs"]),
                rss: ms(&report["rssMb"]),
                session_ino: session_ino(&report)?,
                in_handlers: [
                    ms(&handlers["startMs"]),
                    ms(&handlers["firstPromptMs"]),
                    ms(&handlers["laterMs"]),
                    slowest,
                ],
            })
        })?;
        for (variant, first) in first_copies.iter().enumerate() {
            if samples[variant].iter().any(|s| s.session_ino != *first) {
                bail!(
                    "variant {variant} resumed another copy of the session than its first run: --again must resume the same file"
                );
            }
        }
        let median = |samples: &[ResumeSample], field: fn(&ResumeSample) -> f64| {
            median_f64(samples.iter().map(field))
        };
        let (none, noop, ours) = (&samples[0], &samples[1], &samples[2]);
        for (label, field) in [
            (
                "wall",
                (|s: &ResumeSample| s.wall) as fn(&ResumeSample) -> f64,
            ),
            ("to ready", |s: &ResumeSample| s.to_ready),
            ("Pi's part", |s: &ResumeSample| s.after_modules),
            ("a later prompt", |s: &ResumeSample| s.later),
        ] {
            let (w0, w1, w2) = (
                median(none, field),
                median(noop, field),
                median(ours, field),
            );
            println!(
                "{entries:>8} {:>6.1} | {w0:>7.0}ms {w1:>7.0}ms {w2:>7.0}ms {:>+7.0}ms {:>6.2}x | {:>5.0}MB {:>5.0}MB {:>6.0}MB  {label}",
                size as f64 / 1e6,
                w2 - w0,
                w2 / w0,
                median(none, |s| s.rss),
                median(noop, |s| s.rss),
                median(ours, |s| s.rss),
            );
            if let Some(base) = samples.get(3) {
                let wb = median(base, field);
                println!(
                    "{entries:>8} {:>6.1} | baseline sidecar: {wb:>7.0}ms {:>+7.0}ms {:>6.2}x | {:>6.0}MB  {label}",
                    size as f64 / 1e6,
                    wb - w0,
                    wb / w0,
                    median(base, |s| s.rss),
                );
            }
        }
        let in_handlers = |samples: &[ResumeSample], who: &str| {
            let part = |at: usize| median_f64(samples.iter().map(|s| s.in_handlers[at]));
            println!(
                "{entries:>8} in handlers ({who}): start {:.1} ms, first prompt {:.1} ms, a later prompt {:.1} ms (slowest event {:.2} ms)",
                part(0),
                part(1),
                part(2),
                part(3),
            );
        };
        in_handlers(ours, "notesoup");
        if let Some(base) = samples.get(3) {
            in_handlers(base, "baseline");
        }
    }
    let _ = std::fs::remove_dir_all(&work);
    println!(
        "in handlers: the time Pi waited in the package's event handlers (its own work and the sidecar's answers; Pi's work for an event that has handlers is the no-op extension's), medians: at the start (to the end of session_start), in the first prompt, in a later prompt, and the slowest event's mean in the later prompts"
    );
    println!(
        "medians of {runs} alternating runs; wall: the whole Node process; to ready: from Pi's modules loaded to the session ready for a prompt (the session_start handlers done); Pi's part: from Pi's modules loaded to the first prompt's answer; a later prompt: the median of five more prompts, each one an ordinary prompt's events (before_agent_start, turn_start, context, context_with_system, message_end, turn_end and the settle events); added and ratio: notesoup against no extension; RSS: Pi's process's peak up to the first answer"
    );
    println!("load average at the end: {}", load_average());
    Ok(())
}

/// `bench/resume.mjs` on `session` with `package` (a folder, `none` or
/// `noop`) and the sidecar `binary`, in `dir` (its home and notes).
fn resume_command(
    env: &crate::hosts::PiInstall,
    script: &std::path::Path,
    package: &std::ffi::OsStr,
    dir: &std::path::Path,
    session: &std::path::Path,
    binary: &std::path::Path,
) -> Command {
    let mut command = Command::new(&env.node);
    command
        .arg(script)
        .arg(package)
        .arg(dir)
        .arg(session)
        .env("NOTESOUP_PI_NODE_MODULES", &env.node_modules)
        .env("NOTESOUP_PI_BIN", binary)
        .env("HOME", dir)
        .env("PI_NOTES_HOME", dir.join("notes"));
    command
}

/// The inode of the session copy a run of `bench/resume.mjs` resumed.
fn session_ino(report: &serde_json::Value) -> Result<u64> {
    report["sessionIno"]
        .as_str()
        .and_then(|ino| ino.parse().ok())
        .context("the resume bench reported no sessionIno")
}

/// One run of `bench/resume.mjs`.
#[derive(Debug, Clone, Copy)]
struct ResumeSample {
    /// The whole Node process, milliseconds.
    wall: f64,
    /// From Pi's modules loaded to the first prompt's answer, milliseconds.
    after_modules: f64,
    /// From Pi's modules loaded to the session ready for a prompt (its
    /// `session_start` handlers done), milliseconds.
    to_ready: f64,
    /// The median of the later prompts, milliseconds.
    later: f64,
    /// Pi's process's peak RSS, MB.
    rss: f64,
    /// The inode of the session file Pi resumed (its copy in the run's
    /// home).
    session_ino: u64,
    /// Milliseconds in the package's handlers: the start, the first prompt,
    /// the median later prompt, and the slowest event's mean in those.
    in_handlers: [f64; 4],
}
