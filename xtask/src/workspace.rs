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

/// The standard output of `cargo` with `args`; fails with its standard
/// error when it could not run or did not succeed.
pub fn cargo_stdout(args: &[&str]) -> Result<Vec<u8>> {
    let what = args.first().copied().unwrap_or("cargo");
    let output = cargo(args)
        .output()
        .with_context(|| format!("could not run cargo {what}"))?;
    if !output.status.success() {
        bail!(
            "cargo {what} failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(output.stdout)
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

#[cfg(test)]
mod tests {
    use super::cargo_stdout;

    #[test]
    fn cargo_s_output_or_its_complaint() {
        let version = cargo_stdout(&["--version"]).expect("cargo runs");
        assert!(String::from_utf8_lossy(&version).starts_with("cargo "));
        let refused = cargo_stdout(&["no-such-command"]).expect_err("no such command");
        let refused = format!("{refused:#}");
        assert!(
            refused.starts_with("cargo no-such-command failed: ")
                && refused.contains("no such command"),
            "{refused}"
        );
    }
}
