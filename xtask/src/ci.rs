//! `cargo xtask ci`: the one command CI runs.

use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::deps;

pub fn run() -> Result<()> {
    step("fmt", cargo(&["fmt", "--all", "--check"]))?;
    step(
        "clippy",
        cargo(&[
            "clippy",
            "--workspace",
            "--all-targets",
            "--all-features",
            "--locked",
            "--",
            "-D",
            "warnings",
        ]),
    )?;
    eprintln!("== xtask ci: check-deps");
    deps::run()?;
    step(
        "test",
        cargo(&["test", "--workspace", "--all-features", "--locked"]),
    )?;
    eprintln!("== xtask ci: all green");
    Ok(())
}

fn cargo(args: &[&str]) -> Command {
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.args(args).current_dir(deps::workspace_root());
    cmd
}

fn step(name: &str, mut cmd: Command) -> Result<()> {
    eprintln!("== xtask ci: {name}");
    let status = cmd
        .status()
        .with_context(|| format!("could not start {name}"))?;
    if !status.success() {
        bail!("{name} failed ({status})");
    }
    Ok(())
}
