//! `cargo xtask dist`: the prebuilt binaries as npm packages, which is how
//! Pi and Claude Code users install notesoup (no Rust toolchain).
//!
//! ```text
//! OUT/npm/notesoup-<os>-<cpu>/     the platform package: bin/notesoup,
//!                                  bin/notesoup-pi, bin/notesoup-dsh; `os`/`cpu` set
//! OUT/npm/notesoup-pi/             the Pi package; its shim finds the sidecar in the
//!                                  platform package (an optionalDependencies entry)
//! OUT/npm/notesoup-claude/         the Claude Code plugin, binary included
//! OUT/npm/notesoup-claude-reset/   the optional reset mod, binary included
//! OUT/marketplace/.claude-plugin/marketplace.json
//!                                  a marketplace whose plugin sources are those npm packages
//! OUT/tarballs/*.tgz               `npm pack` of each package
//! OUT/SHA256SUMS                   the tarballs' and binaries' checksums
//! ```
//!
//! The Claude plugin carries its binary itself because Claude Code installs
//! an npm plugin with `npm pack` and unpacks the one tarball (no dependency
//! is installed); see docs/claude.md. dsh takes the bundle embedded in
//! `notesoup-dsh` (`notesoup-dsh install`), so its deliverable is the
//! platform package's `notesoup-dsh`.
//!
//! `--profile` picks the cargo profile (default `release`); `--no-build`
//! packages what that profile's directory already holds, as CI does with
//! its test build's binaries (`--profile dev --no-build`): the packaging is
//! the same code either way.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use crate::claude_plugin::{copy_tree, make_executable};
use crate::versions;
use crate::workspace::{cargo, workspace_root};

const USAGE: &str =
    "usage: cargo xtask dist [--profile PROFILE] [--out DIR] [--registry URL] [--no-build]";

/// The three binaries every platform package holds, and their crates.
pub const BINARIES: [(&str, &str); 3] = [
    ("notesoup-claude", "notesoup"),
    ("notesoup-pi", "notesoup-pi"),
    ("notesoup-dsh", "notesoup-dsh"),
];

/// The npm names of the Pi package and the Claude Code plugin package.
pub const PI_PACKAGE: &str = "notesoup-pi";
pub const CLAUDE_PACKAGE: &str = "notesoup-claude";
/// The npm package of the optional reset mod (`notesoup-reset` in the
/// marketplace).
pub const RESET_PACKAGE: &str = "notesoup-claude-reset";

/// A file that marks a folder as this command's output, so that only such a
/// folder is ever cleared.
const MARKER: &str = ".notesoup-dist";

struct Options {
    profile: String,
    out: PathBuf,
    registry: Option<String>,
    build: bool,
}

pub fn run(args: &[String]) -> Result<()> {
    let root = workspace_root();
    let mut options = Options {
        profile: "release".to_owned(),
        out: root.join("target").join("dist"),
        registry: None,
        build: true,
    };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--profile" => options.profile = args.next().context(USAGE)?.clone(),
            "--out" => options.out = PathBuf::from(args.next().context(USAGE)?),
            "--registry" => options.registry = Some(args.next().context(USAGE)?.clone()),
            "--no-build" => options.build = false,
            _ => bail!("{USAGE}"),
        }
    }
    let version = versions::check(&root)?;
    if options.build {
        build(&options.profile)?;
    }
    let bin_dir = target_dir(&root).join(profile_dir(&options.profile));
    let platform = Platform::this()?;
    layout(&root, &bin_dir, &platform, &version, &options)?;
    pack(&options.out)?;
    println!("{}", options.out.display());
    eprintln!(
        "dist: notesoup {version} for {} in {}",
        platform.name(),
        options.out.display()
    );
    Ok(())
}

/// `cargo build` of the three binaries in `profile`.
fn build(profile: &str) -> Result<()> {
    let mut cmd = cargo(&["build", "--locked", "--profile", profile, "--bins"]);
    for (krate, _) in BINARIES {
        cmd.args(["--package", krate]);
    }
    let status = cmd.status().context("could not run cargo build")?;
    if !status.success() {
        bail!("cargo build --profile {profile} failed ({status})");
    }
    Ok(())
}

fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .filter(|d| !d.is_empty())
        .map_or_else(|| root.join("target"), PathBuf::from)
}

/// The folder cargo writes a profile's binaries to.
fn profile_dir(profile: &str) -> &str {
    match profile {
        "dev" | "test" => "debug",
        "bench" => "release",
        other => other,
    }
}

/// An npm platform: `os` and `cpu` as npm names them.
pub struct Platform {
    pub os: &'static str,
    pub cpu: &'static str,
}

impl Platform {
    /// The platform xtask runs on (the one cargo builds for by default).
    pub fn this() -> Result<Self> {
        let os = match std::env::consts::OS {
            "linux" => "linux",
            "macos" => "darwin",
            other => bail!("no npm platform package for the OS {other}"),
        };
        let cpu = match std::env::consts::ARCH {
            "x86_64" => "x64",
            "aarch64" => "arm64",
            other => bail!("no npm platform package for the CPU {other}"),
        };
        Ok(Self { os, cpu })
    }

    /// `notesoup-linux-x64`.
    pub fn name(&self) -> String {
        format!("notesoup-{}-{}", self.os, self.cpu)
    }
}

fn write_json(path: &Path, value: &Value) -> Result<()> {
    let text = serde_json::to_string_pretty(value)? + "\n";
    fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}

fn read_json(path: &Path) -> Result<Value> {
    let text = fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))
}

/// Clears `out` (only when empty or made by this command) and lays out
/// every package in it.
fn layout(
    root: &Path,
    bin_dir: &Path,
    platform: &Platform,
    version: &str,
    options: &Options,
) -> Result<()> {
    let out = &options.out;
    if out.exists() {
        let empty = fs::read_dir(out)?.next().is_none();
        if !empty && !out.join(MARKER).is_file() {
            bail!(
                "{} is not empty and was not written by cargo xtask dist; choose another --out",
                out.display()
            );
        }
        fs::remove_dir_all(out).with_context(|| format!("clearing {}", out.display()))?;
    }
    fs::create_dir_all(out)?;
    fs::write(out.join(MARKER), b"")?;
    let npm = out.join("npm");
    let license = root.join("plugins/notesoup-claude/plugin/LICENSE");

    // The platform package: the three binaries, each checked to be this
    // version before it ships.
    let platform_dir = npm.join(platform.name());
    fs::create_dir_all(platform_dir.join("bin"))?;
    let mut bins = serde_json::Map::new();
    for (_, name) in BINARIES {
        let from = bin_dir.join(name);
        let says = Command::new(&from)
            .arg("--version")
            .output()
            .with_context(|| format!("could not run {} --version", from.display()))?;
        let line = String::from_utf8_lossy(&says.stdout);
        if versions::binary_version(&line) != Some(version) {
            bail!(
                "{} says {:?}, not version {version}; build it again",
                from.display(),
                line.trim()
            );
        }
        let to = platform_dir.join("bin").join(name);
        fs::copy(&from, &to).with_context(|| format!("copying {}", from.display()))?;
        make_executable(&to)?;
        bins.insert(name.to_owned(), json!(format!("bin/{name}")));
    }
    fs::copy(&license, platform_dir.join("LICENSE"))?;
    write_json(
        &platform_dir.join("package.json"),
        &json!({
            "name": platform.name(),
            "version": version,
            "description": format!("notesoup's prebuilt binaries for {}-{} (notesoup, notesoup-pi, notesoup-dsh); installed as an optional dependency of notesoup-pi.", platform.os, platform.cpu),
            "license": "MIT OR Apache-2.0",
            "os": [platform.os],
            "cpu": [platform.cpu],
            "bin": bins,
            "files": ["bin", "LICENSE"],
        }),
    )?;

    // The Pi package: the source package with the platform package as an
    // optional dependency (npm installs the one matching os/cpu).
    let pi_dir = npm.join(PI_PACKAGE);
    copy_tree(&root.join("plugins/notesoup-pi/package"), &pi_dir)?;
    let mut pi = read_json(&pi_dir.join("package.json"))?;
    pi["optionalDependencies"] = json!({ platform.name(): version });
    pi["files"] = json!(["extensions", "skills", "dreamer", "README.md", "LICENSE"]);
    write_json(&pi_dir.join("package.json"), &pi)?;
    fs::copy(
        root.join("plugins/notesoup-pi/README.md"),
        pi_dir.join("README.md"),
    )?;
    fs::copy(&license, pi_dir.join("LICENSE"))?;

    // The Claude Code plugin and its optional reset mod, each with the
    // binary (Claude Code installs no dependency of an npm plugin).
    let plugins = [
        (
            CLAUDE_PACKAGE,
            "plugins/notesoup-claude/plugin",
            "notesoup as a Claude Code plugin (npm plugin source)",
            &[
                ".claude-plugin",
                ".mcp.json",
                "hooks",
                "skills",
                "bin",
                "playbook.md",
                "README.md",
                "LICENSE",
            ][..],
        ),
        (
            RESET_PACKAGE,
            "plugins/notesoup-claude/mod",
            "notesoup's optional automatic reset as a Claude Code plugin (npm plugin source)",
            &[".claude-plugin", "hooks", "bin", "LICENSE"][..],
        ),
    ];
    let mut entries = Vec::new();
    for (package, source_dir, description, files) in plugins {
        let dir = npm.join(package);
        copy_tree(&root.join(source_dir), &dir)?;
        // The mod's own tests are not part of what it ships.
        let _ = fs::remove_dir_all(dir.join("tests"));
        fs::create_dir_all(dir.join("bin"))?;
        let binary = dir.join("bin/notesoup");
        fs::copy(platform_dir.join("bin/notesoup"), &binary)?;
        make_executable(&binary)?;
        if !dir.join("LICENSE").is_file() {
            fs::copy(&license, dir.join("LICENSE"))?;
        }
        let plugin = read_json(&dir.join(".claude-plugin/plugin.json"))?;
        write_json(
            &dir.join("package.json"),
            &json!({
                "name": package,
                "version": version,
                "description": format!("{description}, with the notesoup binary for {}-{}.", platform.os, platform.cpu),
                "license": "MIT OR Apache-2.0",
                "keywords": ["claude-code", "claude-code-plugin", "memory", "notes"],
                "os": [platform.os],
                "cpu": [platform.cpu],
                "files": files,
            }),
        )?;
        // The marketplace names the package.
        let mut source = json!({ "source": "npm", "package": package, "version": version });
        if let Some(registry) = &options.registry {
            source["registry"] = json!(registry);
        }
        entries.push(json!({
            "name": plugin["name"],
            "source": source,
            "description": plugin["description"],
            "version": version,
        }));
    }
    let market = read_json(&root.join("plugins/notesoup-claude/.claude-plugin/marketplace.json"))?;
    let market_dir = out.join("marketplace/.claude-plugin");
    fs::create_dir_all(&market_dir)?;
    write_json(
        &market_dir.join("marketplace.json"),
        &json!({
            "name": market["name"],
            "owner": market["owner"],
            "description": market["description"],
            "plugins": entries,
        }),
    )?;
    Ok(())
}

/// `npm pack` of every package into `OUT/tarballs`, and the checksums.
fn pack(out: &Path) -> Result<()> {
    let tarballs = out.join("tarballs");
    fs::create_dir_all(&tarballs)?;
    let mut packages: Vec<PathBuf> = fs::read_dir(out.join("npm"))?
        .map(|e| e.map(|e| e.path()))
        .collect::<std::io::Result<_>>()?;
    packages.sort();
    for package in &packages {
        let status = Command::new("npm")
            .args(["pack", "--silent", "--pack-destination"])
            .arg(&tarballs)
            .arg(package)
            .stdout(std::process::Stdio::null())
            .status()
            .context("could not run npm pack (is npm on PATH?)")?;
        if !status.success() {
            bail!("npm pack {} failed ({status})", package.display());
        }
    }
    let mut files: Vec<String> = fs::read_dir(&tarballs)?
        .map(|e| e.map(|e| format!("tarballs/{}", e.file_name().to_string_lossy())))
        .collect::<std::io::Result<_>>()?;
    files.sort();
    let output = Command::new("sha256sum")
        .args(&files)
        .current_dir(out)
        .output()
        .context("could not run sha256sum")?;
    if !output.status.success() {
        bail!("sha256sum failed ({})", output.status);
    }
    fs::write(out.join("SHA256SUMS"), output.stdout)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lays_out_the_packages_with_one_version() {
        let root = workspace_root();
        let temp = tempfile::tempdir().expect("temp dir");
        let version = versions::workspace_version(&root).expect("version");
        // Stand-in binaries that answer --version as the real ones do.
        let bin_dir = temp.path().join("bin");
        fs::create_dir_all(&bin_dir).expect("bin dir");
        for (_, name) in BINARIES {
            let path = bin_dir.join(name);
            fs::write(
                &path,
                format!("#!/bin/sh\necho '{name} {version} (stand-in)'\n"),
            )
            .expect("stand-in");
            make_executable(&path).expect("chmod");
        }
        let platform = Platform {
            os: "linux",
            cpu: "x64",
        };
        let options = Options {
            profile: "dev".into(),
            out: temp.path().join("out"),
            registry: Some("http://127.0.0.1:4873/".into()),
            build: false,
        };
        layout(&root, &bin_dir, &platform, &version, &options).expect("layout");
        let out = &options.out;
        let platform_json =
            read_json(&out.join("npm/notesoup-linux-x64/package.json")).expect("json");
        assert_eq!(platform_json["os"], json!(["linux"]));
        assert_eq!(platform_json["cpu"], json!(["x64"]));
        assert_eq!(platform_json["version"], json!(version));
        let pi = read_json(&out.join("npm/notesoup-pi/package.json")).expect("json");
        assert_eq!(pi["version"], json!(version));
        assert_eq!(
            pi["optionalDependencies"],
            json!({"notesoup-linux-x64": version})
        );
        assert!(out.join("npm/notesoup-pi/extensions/notesoup.ts").is_file());
        assert!(out.join("npm/notesoup-claude/bin/notesoup").is_file());
        assert!(
            out.join("npm/notesoup-claude/.claude-plugin/plugin.json")
                .is_file()
        );
        let market =
            read_json(&out.join("marketplace/.claude-plugin/marketplace.json")).expect("json");
        assert_eq!(
            market["plugins"][0]["source"],
            json!({"source": "npm", "package": "notesoup-claude", "version": version, "registry": "http://127.0.0.1:4873/"})
        );
        assert_eq!(market["plugins"][1]["name"], "notesoup-reset");
        assert_eq!(
            market["plugins"][1]["source"],
            json!({"source": "npm", "package": "notesoup-claude-reset", "version": version, "registry": "http://127.0.0.1:4873/"})
        );
        assert!(out.join("npm/notesoup-claude-reset/bin/notesoup").is_file());
        assert!(
            out.join("npm/notesoup-claude-reset/hooks/register.ts")
                .is_file()
        );
        assert!(!out.join("npm/notesoup-claude-reset/tests").exists());

        // A binary of another version is refused, naming it.
        let stale = bin_dir.join("notesoup-pi");
        fs::write(&stale, "#!/bin/sh\necho 'notesoup-pi 0.0.1'\n").expect("stale");
        let err = layout(&root, &bin_dir, &platform, &version, &options)
            .expect_err("a stale binary is refused");
        assert!(format!("{err:#}").contains("not version"), "{err:#}");

        // A folder this command did not write is never cleared.
        let foreign = temp.path().join("foreign");
        fs::create_dir_all(&foreign).expect("dir");
        fs::write(foreign.join("keep.txt"), b"mine").expect("file");
        let options = Options {
            out: foreign.clone(),
            ..options
        };
        assert!(layout(&root, &bin_dir, &platform, &version, &options).is_err());
        assert!(foreign.join("keep.txt").is_file());
    }
}
