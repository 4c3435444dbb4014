//! `cargo xtask pi-bench [ROUNDS]`: what the Pi package's sidecar costs
//! inside real Pi 1.6.0, measured by `plugins/notesoup-pi/bench/roundtrip.mjs`
//! with a release `notesoup-pi`: the sidecar's start to `ready`, and the
//! median time Pi spends dispatching an event to notesoup next to the same
//! event dispatched to a no-op extension.

use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::deps::workspace_root;

pub fn run(args: &[String]) -> Result<()> {
    let rounds = match args {
        [] => "500".to_owned(),
        [n] if n.parse::<u32>().is_ok() => n.clone(),
        _ => bail!("usage: cargo xtask pi-bench [ROUNDS]"),
    };
    let env = crate::hosts::pi_env()?;
    let root = workspace_root();
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args([
            "build",
            "--release",
            "-p",
            "notesoup-pi",
            "--bin",
            "notesoup-pi",
        ])
        .current_dir(&root)
        .status()
        .context("could not run cargo build")?;
    if !status.success() {
        bail!("building notesoup-pi failed ({status})");
    }
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
