//! Where the reference hosts live: `${NOTESOUP_REF_DIR:-$HOME/.cache/notesoup-ref}`,
//! and how their npm packages are installed there.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result};

/// The folder every reference-host installer (Pi SDK, Claude Code, the
/// Python MCP SDK, dsh) installs under; an empty variable counts as unset.
pub fn reference_dir() -> Result<PathBuf> {
    let nonempty = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(dir) = nonempty("NOTESOUP_REF_DIR") {
        return Ok(PathBuf::from(dir));
    }
    let home = nonempty("HOME").context(
        "neither NOTESOUP_REF_DIR nor HOME is set; set NOTESOUP_REF_DIR to choose where reference hosts go",
    )?;
    Ok(PathBuf::from(home).join(".cache").join("notesoup-ref"))
}

/// `npm install` of pinned `packages` (`name@version` each) into `dir`, as
/// every installer runs it: no audit, no funding notes, errors only.
pub fn npm_install(dir: &Path, packages: &[&str]) -> Command {
    let mut npm = Command::new("npm");
    npm.current_dir(dir)
        .args(["install", "--no-audit", "--no-fund", "--loglevel=error"])
        .args(packages);
    npm
}
