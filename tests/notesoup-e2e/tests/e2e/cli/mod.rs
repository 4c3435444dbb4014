//! The three binaries (`notesoup`, `notesoup-pi`, `notesoup-dsh`) run as a
//! person runs them: each in a fresh home of its own (a temporary `HOME`,
//! the environment cleared), the hosts' executables (`claude`, `pi`, `dsh`)
//! absent or replaced by stand-ins on `PATH`. Every test here runs the same
//! command on every binary it applies to.

mod alike;
mod docs;
mod dream;
mod foreign_read;
mod fresh;
mod large_store;
mod remove;
mod settings;
mod sync;

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// One of the three binaries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bin {
    Claude,
    Pi,
    Dsh,
}

impl Bin {
    pub const ALL: [Bin; 3] = [Bin::Claude, Bin::Pi, Bin::Dsh];

    /// The name a person types (and help and errors print).
    pub fn name(self) -> &'static str {
        match self {
            Bin::Claude => "notesoup",
            Bin::Pi => "notesoup-pi",
            Bin::Dsh => "notesoup-dsh",
        }
    }

    /// The built command (this crate's copy of the plugin's binary).
    pub fn exe(self) -> &'static str {
        match self {
            Bin::Claude => env!("CARGO_BIN_EXE_e2e-notesoup"),
            Bin::Pi => env!("CARGO_BIN_EXE_e2e-notesoup-pi"),
            Bin::Dsh => env!("CARGO_BIN_EXE_e2e-notesoup-dsh"),
        }
    }

    /// The binary named `name` as a person types it.
    pub fn named(name: &str) -> Option<Bin> {
        Bin::ALL.into_iter().find(|bin| bin.name() == name)
    }

    /// The host's own executable, which the binary runs to install itself
    /// or to dream.
    pub fn host_exe(self) -> &'static str {
        match self {
            Bin::Claude => "claude",
            Bin::Pi => "pi",
            Bin::Dsh => "dsh",
        }
    }
}

/// A fresh machine: an empty home, a project directory to run in, and a
/// folder of stand-ins that is the only `PATH` besides the system's tools
/// (none of the hosts is installed there).
pub struct Machine {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub home: PathBuf,
    pub project: PathBuf,
    pub stand_ins: PathBuf,
    /// Extra environment for every run.
    env: Vec<(String, String)>,
}

/// What a run printed and how it ended.
#[derive(Debug)]
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn of(output: Output) -> Self {
        Self {
            code: output.status.code(),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// stdout, after checking the run succeeded.
    #[track_caller]
    pub fn ok(&self) -> &str {
        assert_eq!(self.code, Some(0), "{self:#?}");
        &self.stdout
    }
}

impl Machine {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let home = root.join("home");
        let project = root.join("work").join("shop");
        let stand_ins = root.join("stand-ins");
        for dir in [&home, &project, &stand_ins] {
            std::fs::create_dir_all(dir).unwrap();
        }
        Self {
            _dir: dir,
            root,
            home,
            project,
            stand_ins,
            env: Vec::new(),
        }
    }

    /// The notes root every binary uses by default: `~/.agents/notes`.
    pub fn notes(&self) -> PathBuf {
        self.home.join(".agents/notes")
    }

    /// Sets `name` for every later run.
    pub fn set_env(&mut self, name: &str, value: impl AsRef<std::ffi::OsStr>) {
        let value = value.as_ref().to_string_lossy().into_owned();
        self.env.retain(|(set, _)| set != name);
        self.env.push((name.to_owned(), value));
    }

    /// Puts an executable `name` on `PATH` running the shell `script`.
    pub fn stand_in(&self, name: &str, script: &str) -> PathBuf {
        let path = self.stand_ins.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{script}\n")).unwrap();
        let mut permissions = std::fs::metadata(&path).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
        std::fs::set_permissions(&path, permissions).unwrap();
        path
    }

    /// `bin ARGS` in the project directory, with nothing of this process's
    /// environment but what a login gives (`HOME`, `PATH`).
    pub fn command(&self, bin: Bin, args: &[&str]) -> Command {
        let mut command = Command::new(bin.exe());
        command
            .args(args)
            .current_dir(&self.project)
            .env_clear()
            .env("HOME", &self.home)
            .env(
                "PATH",
                format!("{}:/usr/bin:/bin", self.stand_ins.display()),
            )
            .stdin(Stdio::null());
        for (name, value) in &self.env {
            command.env(name, value);
        }
        command
    }

    pub fn run(&self, bin: Bin, args: &[&str]) -> Run {
        Run::of(self.command(bin, args).output().unwrap())
    }
}

/// The subcommands a help text lists (its `Commands:` section), `help` left
/// out.
pub fn listed_commands(help: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut inside = false;
    for line in help.lines() {
        if line == "Commands:" {
            inside = true;
        } else if inside && !line.starts_with("  ") {
            inside = false;
        } else if inside && !line.starts_with("   ") {
            let name = line.split_whitespace().next().unwrap_or_default();
            if name != "help" {
                names.push(name.to_owned());
            }
        }
    }
    names
}

/// Every command path of `bin` (`[]`, `["notes"]`, `["notes", "list"]`, …)
/// as its help lists them, depth first.
pub fn command_paths(machine: &Machine, bin: Bin) -> Vec<Vec<String>> {
    fn walk(machine: &Machine, bin: Bin, path: Vec<String>, out: &mut Vec<Vec<String>>) {
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("--help");
        let help = machine.run(bin, &args).ok().to_owned();
        out.push(path.clone());
        for name in listed_commands(&help) {
            let mut deeper = path.clone();
            deeper.push(name);
            walk(machine, bin, deeper, out);
        }
    }
    let mut out = Vec::new();
    walk(machine, bin, Vec::new(), &mut out);
    out
}
