//! `notesoup-pi install`: writes the Pi package (embedded in this binary, so
//! an installed binary needs no checkout) to a folder and registers it with
//! `pi install <dir>`, which loads it in place. The files go through core's
//! installer (`notesoup_core::install`): never through a link, never over
//! files it did not write; `--print` writes nothing.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context, Result, bail};
use notesoup_core::install::InstallFile;

use crate::bridge::package;

pub fn main(dir: Option<PathBuf>, print_only: bool, force: bool) -> ExitCode {
    match run(dir, print_only, force) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("notesoup-pi install: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(dir: Option<PathBuf>, print_only: bool, force: bool) -> Result<()> {
    let dir = match dir {
        Some(dir) => dir,
        None => default_dir()?,
    };
    let binary = std::env::current_exe().context("locating this binary")?;
    let sidecar = sidecar_json(&binary)?;
    let files = package_files(&sidecar);
    let command = format!("pi install {}", shell_quote(&dir));
    if print_only {
        // Nothing is written: what an install would write, and the command.
        for path in InstallFile::plan(&dir, &files, force)? {
            eprintln!("would write {}", path.display());
        }
        outln!("{command}");
        return Ok(());
    }
    InstallFile::install(&dir, &files, force)?;
    eprintln!("notesoup Pi package written to {}", dir.display());
    if !on_path("pi") {
        outln!("{command}");
        eprintln!("`pi` is not on PATH: run the command above once Pi is installed");
        return Ok(());
    }
    // Pi runs on the `node` on PATH; one too old fails `pi install` with no
    // word about why.
    if let Err(why) = node_is_new_enough() {
        outln!("{command}");
        bail!(
            "Pi needs Node {}.{} or later, and {why}: install Node {0}.{1} or later (https://nodejs.org), then run the command above",
            MIN_NODE.0,
            MIN_NODE.1
        );
    }
    let status = Command::new("pi")
        .arg("install")
        .arg(&dir)
        .status()
        .context("could not start pi")?;
    if !status.success() {
        outln!("{command}");
        bail!(
            "`{command}` failed ({status}); the package is written: run the command above again once Pi can install it"
        );
    }
    eprintln!("installed; uninstall with: pi remove {}", shell_quote(&dir));
    Ok(())
}

/// The oldest Node Pi 1.6.0 runs on (its `engines`).
const MIN_NODE: (u64, u64) = (22, 19);

/// Whether the `node` on PATH is at least [`MIN_NODE`]; else what it is.
fn node_is_new_enough() -> Result<(), String> {
    let output = Command::new("node")
        .arg("--version")
        .output()
        .map_err(|_| "no `node` is on PATH".to_owned())?;
    let version = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    let numbers: Vec<u64> = version
        .trim_start_matches('v')
        .split('.')
        .map_while(|part| part.parse().ok())
        .collect();
    match numbers.as_slice() {
        [major, minor, ..] if (*major, *minor) >= MIN_NODE => Ok(()),
        [_, _, ..] => Err(format!("the `node` on PATH is {version}")),
        _ => Err(format!(
            "`node --version` said {:?}, not a version",
            version.chars().take(40).collect::<String>()
        )),
    }
}

/// `$XDG_DATA_HOME/notesoup/pi-package`, else `~/.local/share/notesoup/pi-package`.
fn default_dir() -> Result<PathBuf> {
    if let Some(data) = std::env::var_os("XDG_DATA_HOME").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(data).join("notesoup/pi-package"));
    }
    let home = std::env::var_os("HOME").context("HOME is not set; pass --dir")?;
    Ok(PathBuf::from(home).join(".local/share/notesoup/pi-package"))
}

/// `sidecar.json`, which points the shim at this binary so Pi finds it
/// even when it is not on PATH.
fn sidecar_json(binary: &Path) -> Result<String> {
    let sidecar = serde_json::json!({ "command": binary });
    let mut text = serde_json::to_string_pretty(&sidecar)?;
    text.push('\n');
    Ok(text)
}

/// Every file of the package, `sidecar.json` (its text `sidecar`) last.
fn package_files(sidecar: &str) -> Vec<InstallFile<'_>> {
    package::files()
        .into_iter()
        .map(|(path, text)| (path, text.as_bytes()))
        .chain([("sidecar.json", sidecar.as_bytes())])
        .map(|(path, bytes)| InstallFile {
            path,
            bytes,
            executable: false,
        })
        .collect()
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
