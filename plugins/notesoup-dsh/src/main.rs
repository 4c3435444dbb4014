//! The `notesoup-dsh` binary: the sidecar, the bundle writer and the
//! installer for dsh (DeepSeek Harness).

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use notesoup_core::notes::{agent_slug, default_root};
use notesoup_dsh::boot::NotesPlace;
use notesoup_dsh::{bundle, server};

#[derive(Debug, Parser)]
#[command(
    name = "notesoup-dsh",
    version,
    about = "notesoup for dsh (DeepSeek Harness)"
)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// Run the JSON-lines sidecar on stdin/stdout (spawned by the bundle).
    Serve,
    /// Write the Cordis bundle into a directory.
    Bundle {
        /// Where to write it.
        #[arg(long)]
        out: PathBuf,
    },
    /// Write the bundle and add it to a dsh profile (`dsh plugin add`), or
    /// print the `--patch` overlay rows with --print-patch.
    Install {
        /// The dsh profile.
        #[arg(long, default_value = "web")]
        profile: String,
        /// Where the bundle goes.
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Also mount notesoup's compaction engine row.
        #[arg(long)]
        engine: bool,
        /// Print a `--patch` overlay instead of running `dsh plugin add`.
        #[arg(long)]
        print_patch: bool,
    },
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

fn main() -> Result<()> {
    match Cli::parse().command {
        Cmd::Serve => {
            let root = default_root(env).context("no notes root: set PI_NOTES_HOME or HOME")?;
            let place = NotesPlace {
                root,
                agent: agent_slug(env),
            };
            let stdin = std::io::stdin().lock();
            let stdout = std::io::stdout().lock();
            server::serve(place, stdin, stdout).context("serving")
        }
        Cmd::Bundle { out } => {
            bundle::write(&out).with_context(|| format!("writing {}", out.display()))?;
            eprintln!("notesoup-dsh: bundle written to {}", out.display());
            Ok(())
        }
        Cmd::Install {
            profile,
            dir,
            engine,
            print_patch,
        } => install(&profile, dir, engine, print_patch),
    }
}

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

fn install(profile: &str, dir: Option<PathBuf>, engine: bool, print_patch: bool) -> Result<()> {
    let dir = match dir {
        Some(dir) => dir,
        None => {
            default_bundle_dir().context("neither XDG_DATA_HOME nor HOME is set: pass --dir")?
        }
    };
    bundle::write(&dir).with_context(|| format!("writing {}", dir.display()))?;
    let dir = dir.canonicalize().unwrap_or(dir);
    let binary = std::env::current_exe().context("locating notesoup-dsh")?;
    if print_patch {
        print!(
            "- insert:\n    - id: notesoup\n      name: {}/index.js\n      config:\n        binary: {}\n",
            dir.display(),
            binary.display()
        );
        if engine {
            print!(
                "    - id: notesoup-engine\n      name: {}/engine.js\n- id: compaction-basic\n  disabled: true\n",
                dir.display()
            );
        }
        return Ok(());
    }
    let status = Command::new("dsh")
        .args(["plugin", "--profile", profile, "add"])
        .arg(&dir)
        .status()
        .context("running dsh plugin add (is dsh on PATH?)")?;
    if !status.success() {
        bail!("dsh plugin add failed ({status})");
    }
    eprintln!(
        "notesoup-dsh: added to profile {profile}; the sidecar is found as notesoup-dsh on PATH{}",
        if engine {
            format!(
                "; for the engine row add --patch {}/engine.patch.yml",
                dir.display()
            )
        } else {
            String::new()
        }
    );
    Ok(())
}
