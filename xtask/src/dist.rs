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
//!
//! `--target TRIPLE` (repeatable) builds for those targets instead of this
//! machine's, each into its own platform package (a cross linker is taken
//! from `<gnu prefix>-gcc` when cargo has none set). Every binary answers
//! `--version` before it ships, a foreign one under `qemu-<cpu>` (Debian's
//! `qemu-user`). With several platforms the Claude Code packages carry each
//! platform's binary under `bin/<os>-<cpu>/` and a `bin/notesoup` launcher
//! that runs this machine's; npm installs the Pi package's matching
//! platform package by its `os` and `cpu`.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use crate::claude_plugin::{copy_tree, make_executable};
use crate::versions;
use crate::workspace::{cargo, workspace_root};

const USAGE: &str = "usage: cargo xtask dist [--profile PROFILE] [--target TRIPLE]... [--out DIR] [--registry URL] [--no-build]";

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
    let mut targets = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--profile" => options.profile = args.next().context(USAGE)?.clone(),
            "--target" => targets.push(args.next().context(USAGE)?.clone()),
            "--out" => options.out = PathBuf::from(args.next().context(USAGE)?),
            "--registry" => options.registry = Some(args.next().context(USAGE)?.clone()),
            "--no-build" => options.build = false,
            _ => bail!("{USAGE}"),
        }
    }
    let version = versions::check(&root)?;
    let profile_dir = profile_dir(&options.profile);
    let builds = if targets.is_empty() {
        if options.build {
            build(&options.profile, None)?;
        }
        vec![Build {
            platform: Platform::this()?,
            bin_dir: target_dir(&root).join(profile_dir),
            runner: Vec::new(),
        }]
    } else {
        let mut builds = Vec::new();
        for triple in &targets {
            let platform = Platform::of_triple(triple)?;
            if options.build {
                build(&options.profile, Some(triple))?;
            }
            builds.push(Build {
                runner: platform.runner()?,
                platform,
                bin_dir: target_dir(&root).join(triple).join(profile_dir),
            });
        }
        builds
    };
    layout(&root, &builds, &version, &options)?;
    pack(&options.out)?;
    println!("{}", options.out.display());
    let names: Vec<String> = builds.iter().map(|b| b.platform.name()).collect();
    eprintln!(
        "dist: notesoup {version} for {} in {}",
        names.join(", "),
        options.out.display()
    );
    Ok(())
}

/// One platform's binaries: where cargo wrote them, and how this machine
/// runs them (empty: directly; else an emulator's command line before the
/// binary).
struct Build {
    platform: Platform,
    bin_dir: PathBuf,
    runner: Vec<String>,
}

/// `cargo build` of the three binaries in `profile`, for `target` (none:
/// this machine's).
fn build(profile: &str, target: Option<&str>) -> Result<()> {
    let mut cmd = cargo(&["build", "--locked", "--profile", profile, "--bins"]);
    for (krate, _) in BINARIES {
        cmd.args(["--package", krate]);
    }
    if let Some(triple) = target {
        cmd.args(["--target", triple]);
        // A cross linker, unless cargo has one.
        if let Some((variable, linker)) = cross_linker(triple)
            && std::env::var_os(&variable).is_none()
        {
            cmd.env(&variable, linker);
        }
    }
    let status = cmd.status().context("could not run cargo build")?;
    if !status.success() {
        bail!(
            "cargo build --profile {profile} {} failed ({status})",
            target.map_or(String::new(), |t| format!("--target {t}"))
        );
    }
    Ok(())
}

/// The cargo variable naming `triple`'s linker and the GNU cross linker
/// for it, when `triple` is a GNU/Linux target other than this machine's.
fn cross_linker(triple: &str) -> Option<(String, String)> {
    let prefix = gnu_prefix(triple).filter(|_| triple != host_triple())?;
    let variable = format!(
        "CARGO_TARGET_{}_LINKER",
        triple.to_uppercase().replace('-', "_")
    );
    Some((variable, format!("{prefix}-gcc")))
}

/// The GNU toolchain prefix of a GNU/Linux triple
/// (`aarch64-unknown-linux-gnu` → `aarch64-linux-gnu`).
fn gnu_prefix(triple: &str) -> Option<String> {
    let cpu = triple.strip_suffix("-unknown-linux-gnu")?;
    Some(format!("{cpu}-linux-gnu"))
}

/// The triple this machine builds for by default.
fn host_triple() -> &'static str {
    match (std::env::consts::ARCH, std::env::consts::OS) {
        ("x86_64", "linux") => "x86_64-unknown-linux-gnu",
        ("aarch64", "linux") => "aarch64-unknown-linux-gnu",
        ("aarch64", "macos") => "aarch64-apple-darwin",
        ("x86_64", "macos") => "x86_64-apple-darwin",
        _ => "",
    }
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
    /// The npm platform of a Rust target triple.
    pub fn of_triple(triple: &str) -> Result<Self> {
        let (os, cpu) = match triple {
            "x86_64-unknown-linux-gnu" => ("linux", "x64"),
            "aarch64-unknown-linux-gnu" => ("linux", "arm64"),
            "x86_64-apple-darwin" => ("darwin", "x64"),
            "aarch64-apple-darwin" => ("darwin", "arm64"),
            other => bail!(
                "no npm platform package for the target {other} (x86_64 or aarch64, linux-gnu or apple-darwin)"
            ),
        };
        Ok(Self { os, cpu })
    }

    /// How this machine runs the platform's binaries: directly when it is
    /// this machine's, a Linux one under `qemu-<cpu>` with the target's
    /// libraries, else refused (its binaries could not answer `--version`).
    fn runner(&self) -> Result<Vec<String>> {
        let this = Self::this()?;
        if (this.os, this.cpu) == (self.os, self.cpu) {
            return Ok(Vec::new());
        }
        let (qemu, libs) = match (self.os, self.cpu) {
            ("linux", "arm64") => ("qemu-aarch64", "/usr/aarch64-linux-gnu"),
            ("linux", "x64") => ("qemu-x86_64", "/usr/x86_64-linux-gnu"),
            _ => bail!(
                "the {} binaries cannot be run here to check their version; build them on {}-{}",
                self.name(),
                self.os,
                self.cpu
            ),
        };
        let found = Command::new(qemu)
            .arg("--version")
            .output()
            .is_ok_and(|out| out.status.success());
        if !found {
            bail!(
                "{qemu} is needed to check the {} binaries' version (Debian: apt-get install qemu-user)",
                self.name()
            );
        }
        Ok(vec![qemu.to_owned(), "-L".to_owned(), libs.to_owned()])
    }

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

/// A platform package: the three binaries, each checked to be this
/// version before it ships.
fn platform_package(npm: &Path, build: &Build, version: &str, license: &Path) -> Result<()> {
    let platform = &build.platform;
    let platform_dir = npm.join(platform.name());
    fs::create_dir_all(platform_dir.join("bin"))?;
    let mut bins = serde_json::Map::new();
    for (_, name) in BINARIES {
        let from = build.bin_dir.join(name);
        let mut run = match build.runner.split_first() {
            Some((emulator, args)) => {
                let mut run = Command::new(emulator);
                run.args(args).arg(&from);
                run
            }
            None => Command::new(&from),
        };
        let says = run
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
    fs::copy(license, platform_dir.join("LICENSE"))?;
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
    )
}

/// The `bin/notesoup` of a Claude Code package that carries several
/// platforms' binaries: it runs this machine's (one `uname` a call).
const LAUNCHER: &str = r#"#!/bin/sh
# notesoup for Claude Code: runs this machine's binary of those this
# package carries (bin/<os>-<cpu>/notesoup).
case "$(uname -sm)" in
  "Linux x86_64") platform=linux-x64 ;;
  "Linux aarch64" | "Linux arm64") platform=linux-arm64 ;;
  "Darwin x86_64") platform=darwin-x64 ;;
  "Darwin arm64") platform=darwin-arm64 ;;
  *) platform=unknown ;;
esac
binary="$(dirname "$0")/$platform/notesoup"
if [ ! -x "$binary" ]; then
  echo "notesoup: this package has no binary for $(uname -sm); install notesoup from source: cargo install --locked notesoup-claude" >&2
  exit 1
fi
exec "$binary" "$@"
"#;

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
fn layout(root: &Path, builds: &[Build], version: &str, options: &Options) -> Result<()> {
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
    for build in builds {
        platform_package(&npm, build, version, &license)?;
    }

    // The Pi package: the source package with the platform packages as
    // optional dependencies (npm installs the one matching os/cpu).
    let pi_dir = npm.join(PI_PACKAGE);
    copy_tree(&root.join("plugins/notesoup-pi/package"), &pi_dir)?;
    let mut pi = read_json(&pi_dir.join("package.json"))?;
    let platforms: serde_json::Map<String, Value> = builds
        .iter()
        .map(|build| (build.platform.name(), json!(version)))
        .collect();
    pi["optionalDependencies"] = Value::Object(platforms);
    pi["files"] = json!([
        "extensions",
        "skills",
        "playbook.md",
        "dreamer",
        "README.md",
        "LICENSE"
    ]);
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
    let platforms: Vec<String> = builds
        .iter()
        .map(|b| format!("{}-{}", b.platform.os, b.platform.cpu))
        .collect();
    let mut oses: Vec<&str> = builds.iter().map(|b| b.platform.os).collect();
    oses.sort_unstable();
    oses.dedup();
    let mut cpus: Vec<&str> = builds.iter().map(|b| b.platform.cpu).collect();
    cpus.sort_unstable();
    cpus.dedup();
    let mut entries = Vec::new();
    for (package, source_dir, description, files) in plugins {
        let dir = npm.join(package);
        copy_tree(&root.join(source_dir), &dir)?;
        // The mod's own tests are not part of what it ships.
        let _ = fs::remove_dir_all(dir.join("tests"));
        fs::create_dir_all(dir.join("bin"))?;
        let binary = dir.join("bin/notesoup");
        if let [build] = builds {
            fs::copy(
                npm.join(build.platform.name()).join("bin/notesoup"),
                &binary,
            )?;
        } else {
            fs::write(&binary, LAUNCHER)?;
            for build in builds {
                let name = build.platform.name();
                let to = dir.join("bin").join(&name["notesoup-".len()..]);
                fs::create_dir_all(&to)?;
                fs::copy(npm.join(&name).join("bin/notesoup"), to.join("notesoup"))?;
                make_executable(&to.join("notesoup"))?;
            }
        }
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
                "description": format!("{description}, with the notesoup binary for {}.", platforms.join(", ")),
                "license": "MIT OR Apache-2.0",
                "keywords": ["claude-code", "claude-code-plugin", "memory", "notes"],
                "os": oses,
                "cpu": cpus,
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

    /// Stand-in binaries in `dir` that answer --version as the real ones
    /// do (`version` theirs).
    fn stand_ins(dir: &Path, version: &str, tag: &str) {
        fs::create_dir_all(dir).expect("bin dir");
        for (_, name) in BINARIES {
            let path = dir.join(name);
            fs::write(
                &path,
                format!("#!/bin/sh\necho '{name} {version} ({tag})'\n"),
            )
            .expect("stand-in");
            make_executable(&path).expect("chmod");
        }
    }

    fn options(out: PathBuf) -> Options {
        Options {
            profile: "dev".into(),
            out,
            registry: Some("http://127.0.0.1:4873/".into()),
            build: false,
        }
    }

    /// The workspace's root and version, and a temp dir to lay out in.
    fn root_version_and_temp() -> (PathBuf, String, tempfile::TempDir) {
        let root = workspace_root();
        let temp = tempfile::tempdir().expect("temp dir");
        let version = versions::workspace_version(&root).expect("version");
        (root, version, temp)
    }

    /// `builds` laid out in `temp`'s `out`, and the options that did it.
    fn laid_out(root: &Path, builds: &[Build], version: &str, temp: &tempfile::TempDir) -> Options {
        let options = options(temp.path().join("out"));
        layout(root, builds, version, &options).expect("layout");
        options
    }

    #[test]
    fn lays_out_the_packages_with_one_version() {
        let (root, version, temp) = root_version_and_temp();
        let bin_dir = temp.path().join("bin");
        stand_ins(&bin_dir, &version, "stand-in");
        let builds = [Build {
            platform: Platform {
                os: "linux",
                cpu: "x64",
            },
            bin_dir: bin_dir.clone(),
            runner: Vec::new(),
        }];
        let options = laid_out(&root, &builds, &version, &temp);
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
        // The dream skill reads `../../playbook.md`.
        assert!(out.join("npm/notesoup-pi/playbook.md").is_file());
        assert!(
            pi["files"]
                .as_array()
                .expect("a files list")
                .contains(&json!("playbook.md"))
        );
        // One platform: the binary itself, no launcher.
        assert_eq!(
            fs::read(out.join("npm/notesoup-claude/bin/notesoup")).expect("binary"),
            fs::read(bin_dir.join("notesoup")).expect("stand-in")
        );
        let claude = read_json(&out.join("npm/notesoup-claude/package.json")).expect("json");
        assert_eq!(
            (&claude["os"], &claude["cpu"]),
            (&json!(["linux"]), &json!(["x64"]))
        );
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
        let err =
            layout(&root, &builds, &version, &options).expect_err("a stale binary is refused");
        assert!(format!("{err:#}").contains("not version"), "{err:#}");

        // A folder this command did not write is never cleared.
        let foreign = temp.path().join("foreign");
        fs::create_dir_all(&foreign).expect("dir");
        fs::write(foreign.join("keep.txt"), b"mine").expect("file");
        let options = Options {
            out: foreign.clone(),
            ..options
        };
        assert!(layout(&root, &builds, &version, &options).is_err());
        assert!(foreign.join("keep.txt").is_file());
    }

    /// Two platforms: a platform package each, both optional dependencies
    /// of the Pi package, and Claude Code packages whose launcher runs the
    /// machine's binary. The foreign binaries answer --version through
    /// their runner (here `sh`, standing in for qemu).
    #[test]
    fn lays_out_several_platforms_with_a_launcher() {
        let (root, version, temp) = root_version_and_temp();
        let x64 = temp.path().join("x64");
        let arm64 = temp.path().join("arm64");
        stand_ins(&x64, &version, "x64");
        stand_ins(&arm64, &version, "arm64");
        for (_, name) in BINARIES {
            // Not executable: run only through the runner.
            fs::set_permissions(
                arm64.join(name),
                std::os::unix::fs::PermissionsExt::from_mode(0o644),
            )
            .expect("chmod");
        }
        let builds = [
            Build {
                platform: Platform::of_triple("x86_64-unknown-linux-gnu").expect("x64"),
                bin_dir: x64,
                runner: Vec::new(),
            },
            Build {
                platform: Platform::of_triple("aarch64-unknown-linux-gnu").expect("arm64"),
                bin_dir: arm64,
                runner: vec!["sh".into()],
            },
        ];
        let options = laid_out(&root, &builds, &version, &temp);
        let out = &options.out;
        let arm = read_json(&out.join("npm/notesoup-linux-arm64/package.json")).expect("json");
        assert_eq!(
            (&arm["os"], &arm["cpu"]),
            (&json!(["linux"]), &json!(["arm64"]))
        );
        let pi = read_json(&out.join("npm/notesoup-pi/package.json")).expect("json");
        assert_eq!(
            pi["optionalDependencies"],
            json!({"notesoup-linux-x64": version, "notesoup-linux-arm64": version})
        );
        for package in ["notesoup-claude", "notesoup-claude-reset"] {
            let dir = out.join("npm").join(package);
            let json = read_json(&dir.join("package.json")).expect("json");
            assert_eq!(json["cpu"], json!(["arm64", "x64"]), "{package}");
            assert!(
                json["description"]
                    .as_str()
                    .is_some_and(|d| d.contains("linux-x64, linux-arm64")),
                "{json}"
            );
            let launcher = dir.join("bin/notesoup");
            // The launcher on this machine, and as an arm64 machine (a
            // `uname` that says so first on PATH), and on a platform it
            // does not carry.
            let fake = temp.path().join(format!("uname-{package}"));
            fs::create_dir_all(&fake).expect("dir");
            let run = |says: Option<&str>| {
                let mut cmd = Command::new(&launcher);
                if let Some(says) = says {
                    let uname = fake.join("uname");
                    fs::write(&uname, format!("#!/bin/sh\necho '{says}'\n")).expect("uname");
                    make_executable(&uname).expect("chmod");
                    let path = std::env::var_os("PATH").unwrap_or_default();
                    let mut paths = vec![fake.clone()];
                    paths.extend(std::env::split_paths(&path));
                    cmd.env("PATH", std::env::join_paths(paths).expect("PATH"));
                }
                cmd.arg("--version").output().expect("launcher")
            };
            let here = run(None);
            assert_eq!(
                String::from_utf8_lossy(&here.stdout).trim(),
                format!("notesoup {version} (x64)")
            );
            let arm = run(Some("Linux aarch64"));
            assert_eq!(
                String::from_utf8_lossy(&arm.stdout).trim(),
                format!("notesoup {version} (arm64)")
            );
            let other = run(Some("FreeBSD amd64"));
            assert!(!other.status.success());
            assert!(
                String::from_utf8_lossy(&other.stderr).contains("no binary for FreeBSD amd64"),
                "{other:?}"
            );
        }
    }

    #[test]
    fn this_machine_builds_for_its_own_platform_and_crosses_to_another() {
        let host = host_triple();
        assert_eq!(
            Platform::of_triple(host)
                .expect("this machine's platform")
                .name(),
            Platform::this().expect("this machine").name()
        );
        assert_eq!(cross_linker(host), None, "no cross linker for {host}");
        let other = if host == "aarch64-unknown-linux-gnu" {
            "x86_64-unknown-linux-gnu"
        } else {
            "aarch64-unknown-linux-gnu"
        };
        let (variable, linker) = cross_linker(other).expect("a cross linker");
        assert_eq!(
            variable,
            format!(
                "CARGO_TARGET_{}_LINKER",
                other.to_uppercase().replace('-', "_")
            )
        );
        assert_eq!(linker, format!("{}-gcc", gnu_prefix(other).expect("gnu")));
        assert_eq!(cross_linker("aarch64-apple-darwin"), None);
    }

    #[test]
    fn runs_this_machines_binaries_directly_and_a_foreign_linux_ones_under_qemu() {
        let this = Platform::this().expect("this machine");
        assert_eq!(this.runner().expect("runs here"), Vec::<String>::new());
        let (foreign, qemu, libs) = if this.cpu == "arm64" {
            (
                "x86_64-unknown-linux-gnu",
                "qemu-x86_64",
                "/usr/x86_64-linux-gnu",
            )
        } else {
            (
                "aarch64-unknown-linux-gnu",
                "qemu-aarch64",
                "/usr/aarch64-linux-gnu",
            )
        };
        let foreign = Platform::of_triple(foreign).expect("foreign");
        let has_qemu = Command::new(qemu)
            .arg("--version")
            .output()
            .is_ok_and(|out| out.status.success());
        match foreign.runner() {
            Ok(runner) => {
                assert!(has_qemu);
                assert_eq!(runner, [qemu, "-L", libs]);
            }
            Err(err) => {
                assert!(!has_qemu);
                assert!(
                    format!("{err}").contains("apt-get install qemu-user"),
                    "{err}"
                );
            }
        }
        let mac = Platform::of_triple("aarch64-apple-darwin").expect("mac");
        let err = mac.runner().expect_err("no darwin runner here");
        assert!(format!("{err}").contains("cannot be run here"), "{err}");
    }

    #[test]
    fn names_the_platform_of_a_triple() {
        let name = |t| Platform::of_triple(t).map(|p| p.name());
        assert_eq!(
            name("x86_64-unknown-linux-gnu").expect("x64"),
            "notesoup-linux-x64"
        );
        assert_eq!(
            name("aarch64-unknown-linux-gnu").expect("arm64"),
            "notesoup-linux-arm64"
        );
        assert_eq!(
            name("aarch64-apple-darwin").expect("mac"),
            "notesoup-darwin-arm64"
        );
        assert!(name("riscv64gc-unknown-linux-gnu").is_err());
        assert_eq!(
            gnu_prefix("aarch64-unknown-linux-gnu").as_deref(),
            Some("aarch64-linux-gnu")
        );
        assert_eq!(gnu_prefix("aarch64-apple-darwin"), None);
    }
}
