//! `cargo xtask claude-plugin [--out DIR] [--debug]`: assembles the ready
//! Claude Code plugin with the `notesoup` binary.
//!
//! The result is a local marketplace directory:
//! ```text
//! DIR/.claude-plugin/marketplace.json   from plugins/notesoup-claude/
//! DIR/plugin/…                          plugins/notesoup-claude/plugin/
//! DIR/plugin/bin/notesoup               the freshly built binary
//! DIR/mod/…                             plugins/notesoup-claude/mod/ (the optional reset mod)
//! DIR/mod/bin/notesoup                  the same binary
//! ```
//! so `claude plugin marketplace add DIR`, `claude plugin install
//! notesoup@notesoup` and, optionally, `notesoup-reset@notesoup` work from it. xtask never links
//! the plugin crate; it only builds it with cargo and copies files.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::workspace::{cargo, workspace_root};

const USAGE: &str = "usage: cargo xtask claude-plugin [--out DIR] [--debug]";

pub fn run(args: &[String]) -> Result<()> {
    let mut out = None;
    let mut release = true;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--out" => out = Some(PathBuf::from(args.next().context(USAGE)?)),
            "--debug" => release = false,
            _ => bail!("{USAGE}"),
        }
    }
    let root = workspace_root();
    let out = out.unwrap_or_else(|| root.join("target").join("claude-plugin"));
    let binary = build(&root, release)?;
    assemble(&root.join("plugins").join("notesoup-claude"), &binary, &out)?;
    println!("{}", out.display());
    eprintln!(
        "claude-plugin: assembled; install with\n  claude plugin marketplace add {}\n  claude plugin install notesoup@notesoup\n  (optional automatic reset) claude plugin install notesoup-reset@notesoup",
        out.display()
    );
    Ok(())
}

/// Where the benches run the plugin's `notesoup`: the home, the notes root,
/// the plugin's data directory and the project (a Git root).
pub(crate) struct PluginEnv<'a> {
    pub(crate) home: &'a Path,
    pub(crate) notes: &'a Path,
    pub(crate) data: &'a Path,
    pub(crate) project: &'a Path,
}

impl PluginEnv<'_> {
    /// `binary args` in Claude Code's environment for plugin processes
    /// (nothing else inherited but `PATH`), in the project.
    pub(crate) fn command(&self, binary: &Path, args: &[&str]) -> std::process::Command {
        let mut cmd = std::process::Command::new(binary);
        cmd.args(args)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.home)
            .env("PI_NOTES_HOME", self.notes)
            .env("CLAUDE_PLUGIN_DATA", self.data)
            .env("CLAUDE_PROJECT_DIR", self.project)
            .current_dir(self.project);
        cmd
    }
}

/// Runs `hook` (a `notesoup hook EVENT` command) to its end with `payload`
/// on its stdin, as Claude Code sends a hook its event, its stdout read and
/// dropped; whether it succeeded.
pub(crate) fn run_hook(
    hook: &mut std::process::Command,
    payload: &serde_json::Value,
) -> Result<bool> {
    use std::io::Write as _;
    use std::process::Stdio;
    let mut child = hook.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn()?;
    child
        .stdin
        .take()
        .context("stdin")?
        .write_all(payload.to_string().as_bytes())?;
    Ok(child.wait_with_output()?.status.success())
}

/// Builds the `notesoup` binary and returns its path, as cargo reports it.
pub(crate) fn build(root: &Path, release: bool) -> Result<PathBuf> {
    let mut cmd = cargo(&[
        "build",
        "--package",
        "notesoup-claude",
        "--bin",
        "notesoup",
        "--message-format=json-render-diagnostics",
    ]);
    cmd.current_dir(root);
    if release {
        cmd.arg("--release");
    }
    let output = cmd.output().context("could not run cargo build")?;
    if !output.status.success() {
        bail!(
            "cargo build of notesoup failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|message| message["reason"] == "compiler-artifact")
        .filter(|message| message["target"]["name"] == "notesoup")
        .find_map(|message| message["executable"].as_str().map(PathBuf::from))
        .context("cargo build did not report the notesoup executable")
}

/// Lays out the marketplace under `out`, replacing what was there.
pub fn assemble(crate_dir: &Path, binary: &Path, out: &Path) -> Result<()> {
    if out.exists() {
        fs::remove_dir_all(out).with_context(|| format!("clearing {}", out.display()))?;
    }
    let manifest = crate_dir.join(".claude-plugin").join("marketplace.json");
    let manifest_out = out.join(".claude-plugin").join("marketplace.json");
    fs::create_dir_all(out.join(".claude-plugin"))?;
    fs::copy(&manifest, &manifest_out)
        .with_context(|| format!("copying {}", manifest.display()))?;
    for part in ["plugin", "mod"] {
        let part_out = out.join(part);
        copy_tree(&crate_dir.join(part), &part_out)?;
        let bin = part_out.join("bin");
        fs::create_dir_all(&bin)?;
        let target = bin.join("notesoup");
        fs::copy(binary, &target).with_context(|| format!("copying {}", binary.display()))?;
        make_executable(&target)?;
    }
    Ok(())
}

/// Copies a directory tree, skipping `bin/` (the binary goes in fresh).
pub(crate) fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    fs::create_dir_all(to)?;
    for entry in fs::read_dir(from).with_context(|| format!("reading {}", from.display()))? {
        let entry = entry?;
        let name = entry.file_name();
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            if from.join("bin") == path {
                continue;
            }
            copy_tree(&path, &to.join(&name))?;
        } else {
            fs::copy(&path, to.join(&name))
                .with_context(|| format!("copying {}", path.display()))?;
        }
    }
    Ok(())
}

#[cfg(unix)]
pub(crate) fn make_executable(path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(0o755))
        .with_context(|| format!("chmod {}", path.display()))
}

#[cfg(not(unix))]
pub(crate) fn make_executable(_path: &Path) -> Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assembles_a_marketplace_with_the_binary() {
        let dir = std::env::temp_dir().join(format!("xtask-claude-plugin-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let crate_dir = workspace_root().join("plugins").join("notesoup-claude");
        let binary = dir.join("fake-notesoup");
        fs::create_dir_all(&dir).expect("temp dir");
        fs::write(&binary, b"#!/bin/sh\n").expect("fake binary");
        let out = dir.join("out");
        assemble(&crate_dir, &binary, &out).expect("assemble");
        for file in [
            ".claude-plugin/marketplace.json",
            "plugin/.claude-plugin/plugin.json",
            "plugin/hooks/hooks.json",
            "plugin/.mcp.json",
            "plugin/playbook.md",
            "plugin/skills/dream/SKILL.md",
            "plugin/bin/notesoup",
            "mod/.claude-plugin/plugin.json",
            "mod/hooks/hooks.json",
            "mod/hooks/register.ts",
            "mod/bin/notesoup",
        ] {
            assert!(out.join(file).is_file(), "{file} missing");
        }
        fs::remove_dir_all(&dir).expect("cleanup");
    }
}
