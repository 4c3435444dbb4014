//! `cargo xtask search-bench [--runs N] [--mb MB]`: `notesoup notes search`
//! against ripgrep (`rg -i -F -c`) over the same directories, in the same
//! run, alternating (ripgrep first on even runs, notesoup first on odd
//! ones), medians and their ratio, with the load average before and after.
//!
//! The world: a notes store of about 15 MB (`--mb`) of markdown notes over
//! the five homes the command searches (the session's, the project's, the
//! human's, the agent's and the model's), a few lines in a tenth of them
//! holding the query in mixed case. Both tools get the five home
//! directories; the bench checks that they agree on how many files hold a
//! match before it times them. `--binary` times a `notesoup` built
//! elsewhere instead of building this one; `--also` times a second one
//! (an older build) in the same runs; `--keep` leaves the world on disk
//! (to profile a search over it) and prints where. Without `rg` on `PATH` the bench fails and
//! says so: there is nothing to compare with.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::claude_plugin;
use crate::measure::{Order, alternating, median, ms};
use crate::workspace::{load_average, workspace_root};

const USAGE: &str =
    "usage: cargo xtask search-bench [--runs N] [--mb MB] [--binary PATH] [--also PATH] [--keep]";
const SESSION: &str = "bench-session";
/// The query: a literal, matched case-insensitively by both tools.
const QUERY: &str = "needle phrase";
/// Words the note bodies are made of (none holds the query).
const WORDS: &[&str] = &[
    "durable",
    "fact",
    "worth",
    "keeping",
    "the",
    "project",
    "builds",
    "with",
    "cargo",
    "and",
    "tests",
    "run",
    "on",
    "two",
    "cores",
    "notes",
    "are",
    "markdown",
    "files",
    "under",
    "one",
    "root",
    "a",
    "boot",
    "maps",
    "homes",
    "budget",
    "window",
    "reset",
    "history",
    "transcript",
    "session",
    "model",
    "agent",
    "human",
    "settings",
    "dream",
    "jail",
    "audit",
    "git",
    "commit",
];

pub fn run(args: &[String]) -> Result<()> {
    let mut runs = 15;
    let mut megabytes = 15;
    let mut binary = None;
    let mut also = None;
    let mut keep = false;
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        if flag == "--keep" {
            keep = true;
            continue;
        }
        let value = rest.next().context(USAGE)?;
        match flag.as_str() {
            "--runs" => runs = value.parse::<usize>().context(USAGE)?.max(3),
            "--mb" => megabytes = value.parse::<usize>().context(USAGE)?.max(1),
            "--binary" => binary = Some(PathBuf::from(value)),
            "--also" => also = Some(PathBuf::from(value)),
            _ => bail!("{USAGE}"),
        }
    }
    let rg = which("rg").context(
        "rg (ripgrep) is not on PATH: nothing to compare with; install it \
         (`cargo install ripgrep --locked`, or `apt-get install ripgrep`) and run again",
    )?;
    let binary = match binary {
        Some(binary) => binary,
        None => claude_plugin::build(&workspace_root(), true)?,
    };
    let dir = std::env::temp_dir().join(format!("notesoup-search-bench-{}", std::process::id()));
    let mut binaries = vec![("notesoup notes search".to_owned(), binary)];
    if let Some(also) = also {
        binaries.push((format!("{} notes search", also.display()), also));
    }
    let result = World::create(&dir, megabytes * 1024 * 1024, &binaries[0].1)
        .and_then(|world| world.measure(&binaries, &rg, runs));
    if keep {
        println!("the world is kept in {}", dir.display());
    } else {
        let _ = std::fs::remove_dir_all(&dir);
    }
    print!("{}", result?);
    Ok(())
}

/// The first `name` on `PATH`.
fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

struct World {
    home: PathBuf,
    notes: PathBuf,
    project: PathBuf,
    /// The five searched homes.
    homes: Vec<PathBuf>,
    files: usize,
    bytes: usize,
}

impl World {
    fn create(dir: &Path, target_bytes: usize, binary: &Path) -> Result<Self> {
        let home = dir.join("home");
        let project = dir.join("work").join("proj");
        std::fs::create_dir_all(project.join(".git"))?;
        let notes = dir.join("notes");
        let key = notesoup_core::notes::project_key(&project);
        let homes = vec![
            notes.join("project").join(key),
            notes.join("human"),
            notes.join("agents/claude"),
            notes.join("models/claude"),
            notes.join("pi/session").join(SESSION),
        ];
        // Shares of the notes: the project half, the others the rest.
        let shares = [50, 15, 15, 10, 10];
        let mut random = Lcg(0x5eed);
        let mut files = 0;
        let mut bytes = 0;
        for (home_dir, share) in homes.iter().zip(shares) {
            let home_bytes = target_bytes * share / 100;
            let mut written = 0;
            let mut index = 0;
            while written < home_bytes {
                let folder = home_dir.join(format!("topic-{}", index % 16));
                std::fs::create_dir_all(&folder)?;
                let text = note_text(index, &mut random);
                std::fs::write(folder.join(format!("note-{index}.md")), &text)?;
                written += text.len();
                index += 1;
                files += 1;
            }
            bytes += written;
        }
        let world = Self {
            home,
            notes,
            project,
            homes,
            files,
            bytes,
        };
        world.record_session(binary)?;
        Ok(world)
    }

    fn command(&self, binary: &Path, args: &[&str]) -> Command {
        claude_plugin::PluginEnv {
            home: &self.home,
            notes: &self.notes,
            data: &self.home.join(".claude/plugins/data/notesoup-bench"),
            project: &self.project,
        }
        .command(binary, args)
    }

    /// Records the session with a `session-start` hook, so `notes search`
    /// searches its home too.
    fn record_session(&self, binary: &Path) -> Result<()> {
        let payload = serde_json::json!({
            "session_id": SESSION, "transcript_path": self.home.join("none.jsonl"),
            "cwd": self.project, "hook_event_name": "SessionStart", "source": "startup"});
        if !claude_plugin::run_hook(
            &mut self.command(binary, &["hook", "session-start"]),
            &payload,
        )? {
            bail!("hook session-start failed");
        }
        Ok(())
    }

    fn notesoup(&self, binary: &Path) -> Result<(Duration, Vec<u8>)> {
        let mut cmd = self.command(binary, &["notes", "search", QUERY]);
        timed(&mut cmd, "notesoup notes search")
    }

    fn rg(&self, rg: &Path) -> Result<(Duration, Vec<u8>)> {
        let mut cmd = Command::new(rg);
        cmd.args(["-i", "-F", "-c", QUERY]).args(&self.homes);
        timed(&mut cmd, "rg")
    }

    fn measure(&self, binaries: &[(String, PathBuf)], rg: &Path, runs: usize) -> Result<String> {
        let binary = &binaries[0].1;
        let load_before = load_average();
        // Warm the page cache and check that both find the same files.
        let (_, found) = self.notesoup(binary)?;
        let (_, counted) = self.rg(rg)?;
        let notesoup_files = String::from_utf8_lossy(&found)
            .lines()
            .next()
            .and_then(|line| line.split_whitespace().next())
            .and_then(|count| count.parse::<usize>().ok())
            .context("notesoup notes search printed no file count")?;
        let rg_files = String::from_utf8_lossy(&counted).lines().count();
        if notesoup_files != rg_files {
            bail!("notesoup found {notesoup_files} files, rg {rg_files}: not the same search");
        }
        // Each run times every command once, the order rotating from run
        // to run.
        let samples = alternating(runs, 1 + binaries.len(), Order::Rotating, |_, which| {
            Ok(match which {
                0 => self.rg(rg)?.0,
                _ => self.notesoup(&binaries[which - 1].1)?.0,
            })
        })?;
        let load_after = load_average();
        let medians: Vec<Duration> = samples.into_iter().map(median).collect();
        let theirs = medians[0];
        let mut report = String::new();
        writeln!(
            report,
            "search-bench: {} notes, {:.1} MB in 5 homes, {} files match {QUERY:?}, {runs} runs alternating, medians",
            self.files,
            self.bytes as f64 / (1024.0 * 1024.0),
            rg_files
        )?;
        writeln!(
            report,
            "  rg -i -F -c                 {:>8.2} ms",
            ms(theirs)
        )?;
        for ((label, _), ours) in binaries.iter().zip(&medians[1..]) {
            writeln!(
                report,
                "  {label:<27} {:>8.2} ms   {:.2}x rg's time",
                ms(*ours),
                ms(*ours) / ms(theirs)
            )?;
        }
        writeln!(report, "  cores: {}", cores())?;
        writeln!(report, "  load average before: {load_before}")?;
        writeln!(report, "  load average after:  {load_after}")?;
        Ok(report)
    }
}

/// Runs `cmd` to its end, its stdout read whole; the wall time.
fn timed(cmd: &mut Command, what: &str) -> Result<(Duration, Vec<u8>)> {
    let started = Instant::now();
    let output = cmd
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .with_context(|| format!("could not run {what}"))?;
    let elapsed = started.elapsed();
    if !output.status.success() {
        bail!(
            "{what} failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok((elapsed, output.stdout))
}

/// A note of a few kilobytes: prose lines, and in every tenth note a few
/// lines holding the query in mixed case.
fn note_text(index: usize, random: &mut Lcg) -> String {
    let mut text = format!(
        "---\norigin: self\ncreatedAt: 2026-01-01T00:00:00.000+00:00\nupdatedAt: 2026-01-{:02}T00:00:00.000+00:00\n---\n\n# Note {index}\n\n",
        1 + index % 28
    );
    let lines = 30 + random.below(40);
    let holds = index % 10 == 3;
    for line in 0..lines {
        let words = 6 + random.below(12);
        for word in 0..words {
            if word > 0 {
                text.push(' ');
            }
            text.push_str(WORDS[random.below(WORDS.len())]);
        }
        if holds && line % 11 == 5 {
            text.push_str(" then the Needle Phrase again");
        }
        text.push('\n');
    }
    text
}

/// A small deterministic generator: the same world every run.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) as usize) % n
    }
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}
