//! `cargo xtask pi-bench [ROUNDS]`: what the Pi package's sidecar costs
//! inside real Pi 1.6.0, measured by `plugins/notesoup-pi/bench/roundtrip.mjs`
//! with a release `notesoup-pi`: the sidecar's start to `ready`, and the
//! median time Pi spends dispatching an event to notesoup next to the same
//! event dispatched to a no-op extension.

use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::workspace::{build_notesoup_pi, workspace_root};

pub fn run(args: &[String]) -> Result<()> {
    if args.first().map(String::as_str) == Some("context") {
        return context(&args[1..]);
    }
    let rounds = match args {
        [] => "500".to_owned(),
        [n] if n.parse::<u32>().is_ok() => n.clone(),
        _ => bail!("usage: cargo xtask pi-bench [ROUNDS] | pi-bench context [ENTRIES] [RUNS]"),
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
    if !output.status.success() {
        bail!(
            "the bench failed ({}):\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let report: serde_json::Value =
        serde_json::from_slice(&output.stdout).context("the bench printed no JSON")?;
    let ms = |v: &serde_json::Value| v.as_f64().unwrap_or(f64::NAN);
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
    let number = |at: usize, default: usize| -> Result<usize> {
        args.get(at).map_or(Ok(default), |n| {
            n.parse().context("ENTRIES and RUNS are numbers")
        })
    };
    let (entries, runs) = (number(0, 100_000)?, number(1, 5)?);
    let env = crate::hosts::pi_env()?;
    let root = workspace_root();
    build_notesoup_pi(true)?;
    let script = root.join("plugins/notesoup-pi/bench/long-session.mjs");
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
    let size = std::fs::metadata(&session).map(|m| m.len()).unwrap_or(0);
    println!(
        "session: {entries} entries, {:.1} MB, written by Pi 1.6.0 ({})",
        size as f64 / 1e6,
        session.display()
    );
    let notesoup = || {
        let mut cmd = Command::new(root.join("target/release/notesoup-pi"));
        cmd.arg("context").arg(&session);
        cmd
    };
    let pi = || {
        let mut cmd = Command::new(&env.node);
        cmd.arg(&script)
            .arg("open")
            .arg(&session)
            .env("NOTESOUP_PI_NODE_MODULES", &env.node_modules);
        cmd
    };
    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    // Alternating runs share whatever else the machine is doing.
    for _ in 0..runs {
        ours.push(measure(notesoup())?);
        theirs.push(measure(pi())?);
    }
    let ours = medians(&ours);
    let theirs = medians(&theirs);
    println!("medians of {runs} alternating runs:");
    println!(
        "{:<32} {:>10} {:>10} {:>10}",
        "", "wall (s)", "CPU (s)", "RSS (MB)"
    );
    for (name, sample) in [
        ("notesoup-pi context", ours),
        ("Pi open + buildSessionContext", theirs),
    ] {
        println!(
            "{name:<32} {:>10.3} {:>10.3} {:>10.0}",
            sample.wall, sample.cpu, sample.peak_mb
        );
    }
    println!(
        "ratio: notesoup-pi is {:.1}x faster (wall), {:.1}x (CPU), {:.1}x less memory",
        theirs.wall / ours.wall,
        theirs.cpu / ours.cpu,
        theirs.peak_mb / ours.peak_mb
    );
    Ok(())
}

/// One run of a measured process.
#[derive(Debug, Clone, Copy)]
struct Sample {
    /// Wall time, seconds.
    wall: f64,
    /// CPU time (user + sys, every thread), seconds.
    cpu: f64,
    /// Peak resident set, MB.
    peak_mb: f64,
}

/// Wall time, CPU time and peak RSS of one whole process, its output
/// discarded. CPU time and the peak come from GNU time when it is installed
/// (NaN otherwise).
fn measure(cmd: Command) -> Result<Sample> {
    let gnu_time = std::path::Path::new("/usr/bin/time");
    let program = cmd.get_program().to_owned();
    let args: Vec<_> = cmd.get_args().map(ToOwned::to_owned).collect();
    let envs: Vec<_> = cmd
        .get_envs()
        .filter_map(|(k, v)| v.map(|v| (k.to_owned(), v.to_owned())))
        .collect();
    let mut run = if gnu_time.exists() {
        let mut timed = Command::new(gnu_time);
        timed.args(["-f", "%M %U %S"]).arg(&program).args(&args);
        timed
    } else {
        let mut plain = Command::new(&program);
        plain.args(&args);
        plain
    };
    run.envs(envs).stdout(std::process::Stdio::null());
    let start = std::time::Instant::now();
    let output = run
        .output()
        .context("could not start the measured process")?;
    let wall = start.elapsed().as_secs_f64();
    if !output.status.success() {
        bail!(
            "{} failed: {}",
            program.to_string_lossy(),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let figures: Vec<f64> = stderr
        .lines()
        .last()
        .unwrap_or("")
        .split_whitespace()
        .map(|figure| figure.parse().unwrap_or(f64::NAN))
        .collect();
    let figure = |at: usize| figures.get(at).copied().unwrap_or(f64::NAN);
    Ok(Sample {
        wall,
        cpu: figure(1) + figure(2),
        peak_mb: figure(0) / 1024.0,
    })
}

fn medians(samples: &[Sample]) -> Sample {
    let median = |values: &mut Vec<f64>| {
        values.sort_by(f64::total_cmp);
        values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
    };
    let pick = |field: fn(&Sample) -> f64| median(&mut samples.iter().map(field).collect());
    Sample {
        wall: pick(|s| s.wall),
        cpu: pick(|s| s.cpu),
        peak_mb: pick(|s| s.peak_mb),
    }
}
