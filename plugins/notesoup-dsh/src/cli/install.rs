//! `notesoup-dsh install`: writes the bundle (embedded in this binary) to a
//! folder and adds it to a dsh profile with `dsh plugin add`, or prints the
//! `--patch` overlay rows. Without `dsh` on PATH the bundle is still
//! written and the exact command to run is printed: an install never fails
//! only because the host is not there yet.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context, Result};

use super::{print, say};
use crate::bundle::{self, Engine};

/// `$XDG_DATA_HOME/notesoup/dsh-bundle`, else `~/.local/share/notesoup/dsh-bundle`.
/// Never inside the notes root: doctor would flag it and the dream's audit
/// would commit it.
fn default_bundle_dir() -> Option<PathBuf> {
    let nonempty = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    let data = nonempty("XDG_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| nonempty("HOME").map(|home| PathBuf::from(home).join(".local/share")))?;
    Some(data.join("notesoup").join("dsh-bundle"))
}

/// What leaving the engine out costs, said at install.
const NO_ENGINE_COST: &str = "notesoup-dsh: without the engine dsh's own compaction stays on: it summarizes the conversation at 80 % context pressure (before notesoup's hard reserve on most models), on /compact and on context overflow, instead of opening a fresh window from the notes. Install again without --no-engine to turn summaries off.";

/// What `notesoup-dsh install` was asked to do.
#[derive(Debug)]
pub(super) struct InstallRequest {
    pub profile: String,
    pub dir: Option<PathBuf>,
    pub engine: Engine,
    pub print_patch: bool,
    pub force: bool,
}

pub(super) fn install(request: InstallRequest) -> Result<ExitCode> {
    let InstallRequest {
        profile,
        dir,
        engine,
        print_patch,
        force,
    } = request;
    let dir = match dir {
        Some(dir) => dir,
        None => {
            default_bundle_dir().context("neither XDG_DATA_HOME nor HOME is set: pass --dir")?
        }
    };
    bundle::write_with(&dir, engine, force)?;
    let dir = dir.canonicalize().unwrap_or(dir);
    let binary = std::env::current_exe().context("locating notesoup-dsh")?;
    if print_patch {
        print(&patch(&dir, &binary, engine))?;
        if engine == Engine::Left {
            say(NO_ENGINE_COST)?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let command = format!(
        "dsh plugin --profile {} add {}",
        shell_quote(&profile),
        shell_quote(&dir.display().to_string())
    );
    if !on_path("dsh") {
        say(&format!(
            "notesoup-dsh: bundle written to {}",
            dir.display()
        ))?;
        print(&format!("{command}\n"))?;
        say("notesoup-dsh: `dsh` is not on PATH: run the command above once dsh is installed")?;
        return Ok(ExitCode::SUCCESS);
    }
    let status = Command::new("dsh")
        .args(["plugin", "--profile", &profile, "add"])
        .arg(&dir)
        .status()
        .context("could not start dsh")?;
    if !status.success() {
        print(&format!("{command}\n"))?;
        anyhow::bail!(
            "`dsh plugin add` failed ({status}); the bundle is in {}: run the command above again once dsh can add it",
            dir.display()
        );
    }
    say(&format!(
        "notesoup-dsh: added to profile {profile}{}; the sidecar is found as notesoup-dsh on PATH",
        match engine {
            Engine::Mounted =>
                " with notesoup's compaction engine (/compact and a context overflow reset instead of summarizing; notesoup's budget resets at its hard reserve)",
            Engine::Left => " without notesoup's compaction engine",
        }
    ))?;
    if engine == Engine::Left {
        say(NO_ENGINE_COST)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The `--patch` overlay rows that mount the bundle at `dir`.
fn patch(dir: &Path, binary: &Path, engine: Engine) -> String {
    let quote = |path: &Path| serde_json::Value::from(path.display().to_string());
    let mut patch = String::new();
    if engine == Engine::Mounted {
        patch.push_str("- id: compaction-basic\n  disabled: true\n");
    }
    patch.push_str(&format!(
        "- insert:\n    - id: notesoup\n      name: {}\n      config:\n        binary: {}\n",
        quote(&dir.join("index.js")),
        quote(binary)
    ));
    if engine == Engine::Mounted {
        patch.push_str(&format!(
            "    - id: notesoup-engine\n      name: {}\n",
            quote(&dir.join("engine.js"))
        ));
    }
    patch
}

fn on_path(name: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(name).is_file()))
}

/// `text` as one shell word.
fn shell_quote(text: &str) -> String {
    if !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-~+=:@".contains(c))
    {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shell_word_is_quoted_only_when_it_must_be() {
        assert_eq!(shell_quote("web"), "web");
        assert_eq!(shell_quote("/a/b-c_1.2~+=:@"), "/a/b-c_1.2~+=:@");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("my profile"), "'my profile'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote("$HOME"), "'$HOME'");
    }
}
