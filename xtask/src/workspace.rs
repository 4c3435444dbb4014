//! The workspace xtask works on, and cargo run inside it: the bottom of
//! xtask's modules, which every command may use and which uses none.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

/// The workspace root, from xtask's own manifest directory.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// `cargo` with `args`, run in the workspace root: the cargo that runs
/// xtask (`CARGO`), else the one on `PATH`.
pub fn cargo(args: &[&str]) -> Command {
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.args(args).current_dir(workspace_root());
    cmd
}

/// Builds the `notesoup-pi` binary (the Pi package's sidecar), in release
/// mode or not, for the Pi goldens and benchmarks that run it inside Pi.
pub fn build_notesoup_pi(release: bool) -> Result<()> {
    let mut build = cargo(&["build", "-p", "notesoup-pi", "--bin", "notesoup-pi"]);
    if release {
        build.arg("--release");
    }
    let status = build.status().context("could not run cargo build")?;
    if !status.success() {
        bail!("building notesoup-pi failed ({status})");
    }
    Ok(())
}

/// The machine's load average (1, 5 and 15 minutes), as `/proc/loadavg`
/// gives it; `unknown` where there is none.
pub fn load_average() -> String {
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let figures: Vec<&str> = load.split_whitespace().take(3).collect();
    if figures.is_empty() {
        "unknown".to_owned()
    } else {
        figures.join(" ")
    }
}
