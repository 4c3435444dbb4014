//! `notesoup-pi install`: writes the Pi package (embedded in this binary, so
//! an installed binary needs no checkout) to a folder and registers it with
//! `pi install <dir>`, which loads it in place.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context, Result, bail};

use crate::bridge::package;

pub fn main(dir: Option<PathBuf>, print_only: bool) -> ExitCode {
    match run(dir, print_only) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("notesoup-pi install: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(dir: Option<PathBuf>, print_only: bool) -> Result<()> {
    let dir = match dir {
        Some(dir) => dir,
        None => default_dir()?,
    };
    let binary = std::env::current_exe().context("locating this binary")?;
    write_package(&dir, &binary)?;
    eprintln!("notesoup Pi package written to {}", dir.display());
    let command = format!("pi install {}", shell_quote(&dir));
    if print_only || !on_path("pi") {
        outln!("{command}");
        if !print_only {
            eprintln!("`pi` is not on PATH: run the command above once Pi is installed");
        }
        return Ok(());
    }
    let status = Command::new("pi")
        .arg("install")
        .arg(&dir)
        .status()
        .context("could not start pi")?;
    if !status.success() {
        bail!("`{command}` failed ({status})");
    }
    eprintln!("installed; uninstall with: pi remove {}", shell_quote(&dir));
    Ok(())
}

/// `$XDG_DATA_HOME/notesoup/pi-package`, else `~/.local/share/notesoup/pi-package`.
fn default_dir() -> Result<PathBuf> {
    if let Some(data) = std::env::var_os("XDG_DATA_HOME").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(data).join("notesoup/pi-package"));
    }
    let home = std::env::var_os("HOME").context("HOME is not set; pass --dir")?;
    Ok(PathBuf::from(home).join(".local/share/notesoup/pi-package"))
}

/// Writes every package file and `sidecar.json`, which points the shim at
/// this binary so Pi finds it even when it is not on PATH.
fn write_package(dir: &Path, binary: &Path) -> Result<()> {
    for (relative, text) in package::files() {
        let path = dir.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    let sidecar = serde_json::json!({ "command": binary });
    let mut text = serde_json::to_string_pretty(&sidecar)?;
    text.push('\n');
    std::fs::write(dir.join("sidecar.json"), text).context("writing sidecar.json")?;
    Ok(())
}

fn on_path(name: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(name).is_file()))
}

fn shell_quote(path: &Path) -> String {
    let text = path.display().to_string();
    if text
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-~".contains(c))
    {
        text
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}
