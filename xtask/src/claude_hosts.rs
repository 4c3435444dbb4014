//! `cargo xtask claude-hosts [claude|mcp|inspector|all]`: installs the reference hosts
//! the Claude plugin's conformance tests use as oracles.
//!
//! - `claude`: `@anthropic-ai/claude-code` (pinned) through npm; the package
//!   carries a ~400 MB native binary that does not need Node at run time.
//! - `mcp`: the Python MCP SDK (PyPI `mcp`, pinned) in a virtualenv, an
//!   independent MCP client.
//! - `inspector`: the MCP Inspector (`@modelcontextprotocol/inspector`,
//!   pinned) through npm, whose `--cli` mode is a second independent client.
//!
//! Everything goes under `${NOTESOUP_REF_DIR:-$HOME/.cache/notesoup-ref}`;
//! an existing install is reused. The command prints `export` lines for the
//! environment variables the reference-host tests read, so a shell can
//! `eval "$(cargo xtask claude-hosts)"`.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::refdir::{npm_install, reference_dir};

use anyhow::{Context, Result, bail};

/// The Claude Code release the plugin is validated against.
pub const CLAUDE_CODE_VERSION: &str = "2.1.332";
/// The Python MCP SDK release used as the independent client.
pub const MCP_PY_VERSION: &str = "2.3.0";

/// The MCP Inspector release whose command line is a second client.
pub const INSPECTOR_VERSION: &str = "2.12.0";

/// Environment variable naming the installed `claude` launcher.
pub const CLAUDE_ENV: &str = "NOTESOUP_CLAUDE";
/// Environment variable naming the Python interpreter that has `mcp`.
pub const MCP_PYTHON_ENV: &str = "NOTESOUP_MCP_PYTHON";
/// Environment variable naming the installed `mcp-inspector` launcher.
pub const INSPECTOR_ENV: &str = "NOTESOUP_MCP_INSPECTOR";

const USAGE: &str = "usage: cargo xtask claude-hosts [claude|mcp|inspector|all]";

pub fn run(args: &[String]) -> Result<()> {
    let which = match args {
        [] => "all",
        [one] => one.as_str(),
        _ => bail!("{USAGE}"),
    };
    let root = reference_dir()?;
    let mut exports = Vec::new();
    match which {
        "claude" => exports.push(install_npm_host(&root, &CLAUDE_CODE)?),
        "mcp" => exports.push(install_mcp(&root)?),
        "inspector" => exports.push(install_npm_host(&root, &INSPECTOR)?),
        "all" => {
            exports.push(install_npm_host(&root, &CLAUDE_CODE)?);
            exports.push(install_mcp(&root)?);
            exports.push(install_npm_host(&root, &INSPECTOR)?);
        }
        _ => bail!("{USAGE}"),
    }
    for (name, path) in exports {
        println!("export {name}={}", shell_quote(&path));
    }
    Ok(())
}

/// A reference host published on npm, whose launcher answers `--version`.
struct NpmHost {
    /// The environment variable the launcher's path is exported as.
    env: &'static str,
    /// The install folder's name, before `-<version>`.
    folder: &'static str,
    package: &'static str,
    version: &'static str,
    /// The launcher in `node_modules/.bin`.
    bin: &'static str,
}

const CLAUDE_CODE: NpmHost = NpmHost {
    env: CLAUDE_ENV,
    folder: "claude-code",
    package: "@anthropic-ai/claude-code",
    version: CLAUDE_CODE_VERSION,
    bin: "claude",
};

const INSPECTOR: NpmHost = NpmHost {
    env: INSPECTOR_ENV,
    folder: "mcp-inspector",
    package: "@modelcontextprotocol/inspector",
    version: INSPECTOR_VERSION,
    bin: "mcp-inspector",
};

fn install_npm_host(root: &Path, host: &NpmHost) -> Result<(&'static str, PathBuf)> {
    let launcher = install_npm(root, host)?;
    check_runs(
        Command::new(&launcher).arg("--version"),
        &format!("{} --version", host.bin),
    )?;
    Ok((host.env, launcher))
}

/// Installs `package@version` from npm into `root/<folder>-<version>` unless
/// its launcher `bin` is there already, and returns the launcher's path.
fn install_npm(root: &Path, host: &NpmHost) -> Result<PathBuf> {
    let NpmHost {
        folder,
        package,
        version,
        bin,
        ..
    } = *host;
    let dir = root.join(format!("{folder}-{version}"));
    let launcher = dir.join("node_modules").join(".bin").join(bin);
    if launcher.exists() {
        return Ok(launcher);
    }
    eprintln!(
        "claude-hosts: installing {package}@{version} into {}",
        dir.display()
    );
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    if !dir.join("package.json").exists() {
        run_in(&dir, Command::new("npm").args(["init", "-y"]), "npm init")?;
    }
    run_in(
        &dir,
        &mut npm_install(&dir, &[&format!("{package}@{version}")]),
        &format!("npm install {package}"),
    )?;
    Ok(launcher)
}

fn install_mcp(root: &Path) -> Result<(&'static str, PathBuf)> {
    let dir = root.join(format!("mcp-py-{MCP_PY_VERSION}"));
    let python = dir.join("bin").join("python");
    let importable = |python: &Path| {
        Command::new(python)
            .args(["-c", "import mcp"])
            .output()
            .is_ok_and(|out| out.status.success())
    };
    if !importable(&python) {
        eprintln!(
            "claude-hosts: installing Python mcp=={MCP_PY_VERSION} into {}",
            dir.display()
        );
        run_in(
            root,
            Command::new("python3").arg("-m").arg("venv").arg(&dir),
            "python3 -m venv",
        )?;
        run_in(
            root,
            Command::new(dir.join("bin").join("pip")).args([
                "install",
                "--quiet",
                "--disable-pip-version-check",
                &format!("mcp=={MCP_PY_VERSION}"),
            ]),
            "pip install mcp",
        )?;
        if !importable(&python) {
            bail!("{} cannot import mcp after installing it", python.display());
        }
    }
    Ok((MCP_PYTHON_ENV, python))
}

/// Runs an installer step with its output on stderr, so stdout stays the
/// `export` lines.
fn run_in(dir: &Path, cmd: &mut Command, what: &str) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let output = cmd
        .current_dir(dir)
        .output()
        .with_context(|| format!("could not start {what}"))?;
    eprint!("{}", String::from_utf8_lossy(&output.stdout));
    eprint!("{}", String::from_utf8_lossy(&output.stderr));
    if !output.status.success() {
        bail!("{what} failed ({})", output.status);
    }
    Ok(())
}

fn check_runs(cmd: &mut Command, what: &str) -> Result<()> {
    let output = cmd
        .env("DISABLE_AUTOUPDATER", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .output()
        .with_context(|| format!("could not start {what}"))?;
    if !output.status.success() {
        bail!(
            "{what} failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    eprintln!(
        "claude-hosts: {what}: {}",
        String::from_utf8_lossy(&output.stdout).trim()
    );
    Ok(())
}

/// Single-quotes a path for a POSIX shell.
fn shell_quote(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_quoted_for_the_shell() {
        assert_eq!(shell_quote(Path::new("/a b/c")), "'/a b/c'");
        assert_eq!(shell_quote(Path::new("/it's")), r"'/it'\''s'");
    }
}
