//! `cargo xtask claude-bench [--runs N]`: hot-path timings of the Claude
//! plugin's release binary, process start to exit, side by side with a bare
//! `node -e ''` start measured in the same run.
//!
//! The world: a 1,000-note store spread over the five homes and a 50 MB
//! transcript whose last row is a main-thread reply, and a second store of
//! 10,000 notes. Measured:
//! - `notesoup hook session-start` (startup: boot from the whole store);
//! - `notesoup hook session-start` on `resume` and on `compact` of a session
//!   notesoup has no record of, each run a new session with a transcript
//!   of its own that no hook has scanned (a hard link of the 50 MB one: the
//!   window is recovered from it), booting from the 10,000-note store: the
//!   first run of each, before the hooks kept shelves, and the median of
//!   the others;
//! - the same `resume` with a new plugin data directory each run (the
//!   caches in the cache directory kept), and with nothing kept anywhere
//!   (a new data directory and new caches: the store listed whole, the
//!   transcript scanned whole);
//! - `resume` of one session right after a note was written into the
//!   project home of a third store, of 10,000 notes too (a new note each
//!   run), as after another program wrote a note: the home's kept shelf is
//!   patched from its changed folder (listed again from the heads the
//!   hooks keep by a build before the patches);
//! - the same `resume` after the note was written through the build's
//!   running `notesoup mcp` (one server per build on that store), 3 s
//!   before: the server has made the next boot ready, as after an agent's
//!   session that wrote notes and the user's `/clear`;
//! - `notesoup hook user-prompt-submit` (usage from the transcript's tail);
//! - MCP `tools/call` round trips on a running `notesoup mcp`, each call
//!   carrying Claude Code's `claudecode/toolUseId`: `notes_list` over the
//!   store, first and warm; the first `history_windows` (it decodes the
//!   whole 50 MB transcript), then warm `history_windows`, `history_list`,
//!   `history_search` and `history_read`, and `history_list` after one
//!   exchange was appended to the transcript (the kept decode is extended);
//!   a first call is the median over five new servers;
//! - the server's resident memory (`VmRSS` from `/proc`) after its first
//!   history call and after 1,000 more calls, one exchange appended every
//!   tenth call.
//!
//! `--also PATH` times the hooks of a second `notesoup` build in the same
//! runs, each hook of one run right before or after this build's (this
//! build first in even runs, second in odd ones), and prints its medians
//! under this build's with the ratio (the MCP figures are this build's
//! only). Each build keeps its caches apart (`XDG_CACHE_HOME` beside the
//! build's copy, for its hooks and its server), as two builds may save
//! them in different formats.

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use notesoup_core::tools::Tool;

use crate::claude_plugin;
use crate::measure::{Order, alternating, measure, median, medians, ms, print_table};
use crate::workspace::{load_average, workspace_root};

const USAGE: &str =
    "usage: cargo xtask claude-bench [--runs N] [--also PATH] | claude-bench report [--runs N]";
const SESSION: &str = "bench-session";
const NOTES: usize = 1_000;
const MANY_NOTES: usize = 10_000;
const TRANSCRIPT_BYTES: usize = 50 * 1024 * 1024;
/// The hooks timed for each build, in the order of `World::measure_hook`:
/// the report's row names, and whether the row's first run is shown apart.
const HOOKS: [(&str, bool); 8] = [
    ("hook session-start", false),
    ("hook user-prompt-submit", false),
    ("session-start resume*", true),
    ("session-start compact*", true),
    ("resume, new data dir*", false),
    ("resume, nothing kept*", false),
    ("resume, a note written*", false),
    ("resume, server wrote*", false),
];
/// The row of [`HOOKS`] whose note another program writes.
const A_NOTE_WRITTEN: usize = 6;
/// The row of [`HOOKS`] whose note each build's server writes.
const SERVER_WROTE: usize = 7;
/// How long before that row's hook its note is written: past the time a
/// server waits before it makes the next boot ready (2.25 s), and the time
/// that takes.
const SERVER_WROTE_BEFORE: Duration = Duration::from_secs(3);
/// Calls made on one server before its memory is read again.
const RSS_CALLS: usize = 1_000;
/// New servers whose first calls are timed (the median is shown): one
/// first call is too noisy a sample on a shared machine.
const FIRST_SERVERS: usize = 5;

pub fn run(args: &[String]) -> Result<()> {
    if args.first().is_some_and(|a| a == "report") {
        return report(&args[1..]);
    }
    let (mut runs, mut also) = (20, None);
    let mut args = args.iter();
    while let Some(flag) = args.next() {
        let value = args.next().context(USAGE)?;
        match flag.as_str() {
            "--runs" => runs = value.parse::<usize>().context(USAGE)?.max(2),
            // The hooks run in the bench's project directory.
            "--also" => {
                also =
                    Some(std::fs::canonicalize(value).with_context(|| format!("--also {value}"))?);
            }
            _ => bail!("{USAGE}"),
        }
    }
    let binary = claude_plugin::build(&workspace_root(), true)?;
    let dir = std::env::temp_dir().join(format!("notesoup-claude-bench-{}", std::process::id()));
    let world = World::create(&dir)?;
    let result = (|| {
        let binary = installed(&dir, &binary, "this")?;
        let also = also
            .map(|also| installed(&dir, &also, "also"))
            .transpose()?;
        world.measure(&binary, also.as_deref(), runs)
    })();
    let _ = std::fs::remove_dir_all(&dir);
    print!("{}", result?);
    Ok(())
}

/// A copy of `binary` in the bench's directory, which the hooks run as an
/// installed binary runs: a binary the linker has just written faults more
/// of its pages in at each start (324 against 307 for `--version` here,
/// about 0.2 ms), which would count against whichever build was built last.
fn installed(dir: &Path, binary: &Path, name: &str) -> Result<PathBuf> {
    let copy = dir.join("bin").join(name).join("notesoup");
    std::fs::create_dir_all(copy.parent().context("a parent")?)?;
    std::fs::copy(binary, &copy)
        .with_context(|| format!("copying {} to {}", binary.display(), copy.display()))?;
    Ok(copy)
}

struct World {
    home: PathBuf,
    notes: PathBuf,
    /// The 10,000-note store.
    many_notes: PathBuf,
    /// Another, written to before each of its runs.
    written_notes: PathBuf,
    data: PathBuf,
    project: PathBuf,
    transcript: PathBuf,
    /// Exchanges written to the transcript so far.
    exchanges: std::cell::Cell<u64>,
}

impl World {
    fn create(dir: &Path) -> Result<Self> {
        let (home, project, transcript) = project_in(dir, SESSION)?;
        let world = Self {
            notes: dir.join("notes"),
            many_notes: dir.join("many-notes"),
            written_notes: dir.join("written-notes"),
            data: home.join(".claude/plugins/data/notesoup-bench"),
            home,
            project,
            transcript,
            exchanges: std::cell::Cell::new(0),
        };
        world.write_notes(&world.notes, NOTES)?;
        world.write_notes(&world.many_notes, MANY_NOTES)?;
        world.write_notes(&world.written_notes, MANY_NOTES)?;
        let notes_written = Instant::now();
        world.write_transcript()?;
        // A store is measured as a user's is: settled. Boots keep no shelf
        // for a folder changed in the last 2 s.
        std::thread::sleep(Duration::from_millis(2_100).saturating_sub(notes_written.elapsed()));
        Ok(world)
    }

    /// `total` notes: the project home (whose key the binary derives from
    /// the same directory) gets half, the others a share each.
    fn write_notes(&self, notes: &Path, total: usize) -> Result<()> {
        let key = project_key_dir(notes, &self.project)?;
        let homes = [
            (key, total / 2),
            (notes.join("human"), total * 3 / 20),
            (notes.join("agents/claude"), total * 3 / 20),
            (notes.join("models/claude"), total / 10),
            (notes.join("pi/session").join(SESSION), total / 10),
        ];
        let mut written = 0;
        for (home, count) in homes {
            std::fs::create_dir_all(home.join("topics"))?;
            std::fs::write(
                home.join("MAP.md"),
                note_text("Map", &"- `@project/topics/n.md` — a topic\n".repeat(40)),
            )?;
            for i in 0..count {
                std::fs::write(
                    home.join(format!("topics/note-{i}.md")),
                    note_text(
                        &format!("Note {i}"),
                        &"Some durable fact worth keeping.\n".repeat(30),
                    ),
                )?;
                written += 1;
            }
        }
        assert_eq!(written, total);
        Ok(())
    }

    fn write_transcript(&self) -> Result<()> {
        std::fs::create_dir_all(self.transcript.parent().context("transcript dir")?)?;
        let mut out = std::io::BufWriter::new(std::fs::File::create(&self.transcript)?);
        let mut bytes = 0;
        while bytes < TRANSCRIPT_BYTES {
            bytes += self.write_exchange(&mut out)?;
        }
        out.flush()?;
        Ok(())
    }

    /// Appends one exchange (prompt, tool call, tool result) to the
    /// transcript, as Claude Code does while a session runs.
    fn append_exchange(&self) -> Result<()> {
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&self.transcript)?;
        let mut rows = Vec::new();
        self.write_exchange(&mut rows)?;
        file.write_all(&rows)?;
        Ok(())
    }

    /// The `tool_use` id of the newest exchange's call.
    fn last_tool_use(&self) -> String {
        format!("t{}", self.exchanges.get().saturating_sub(1))
    }

    fn write_exchange(&self, out: &mut impl Write) -> Result<usize> {
        let output = "x".repeat(2_000);
        let i = self.exchanges.get();
        self.exchanges.set(i + 1);
        let mut bytes = 0;
        {
            let rows = [
                format!(
                    r#"{{"type":"user","uuid":"u{i}","parentUuid":"r{}","isSidechain":false,"timestamp":"2026-01-01T00:00:00Z","message":{{"role":"user","content":"prompt {i}"}}}}"#,
                    i.saturating_sub(1)
                ),
                format!(
                    r#"{{"type":"assistant","uuid":"a{i}","parentUuid":"u{i}","isSidechain":false,"message":{{"id":"m{i}","model":"claude-opus-5-5","role":"assistant","content":[{{"type":"tool_use","id":"t{i}","name":"Bash","input":{{"command":"ls"}}}}],"usage":{{"input_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":100000,"output_tokens":10}}}}}}"#
                ),
                format!(
                    r#"{{"type":"user","uuid":"r{i}","parentUuid":"a{i}","isSidechain":false,"message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"t{i}","content":"{output}","is_error":false}}]}}}}"#
                ),
            ];
            for row in rows {
                bytes += row.len() + 1;
                writeln!(out, "{row}")?;
            }
        }
        Ok(bytes)
    }

    /// `binary` run with `args` in the bench's world. Each build keeps its
    /// caches beside its copy (`XDG_CACHE_HOME`): two builds may save them
    /// in different formats.
    fn command(&self, binary: &Path, args: &[&str]) -> Command {
        let mut command = claude_plugin::PluginEnv {
            home: &self.home,
            notes: &self.notes,
            data: &self.data,
            project: &self.project,
        }
        .command(binary, args);
        if let Some(copy) = binary.parent() {
            command.env("XDG_CACHE_HOME", copy.join("cache"));
        }
        command
    }

    fn hook(&self, binary: &Path, event: &str, session: &str, source: &str) -> Result<Duration> {
        self.hook_with(
            binary,
            &self.notes,
            &self.transcript,
            event,
            session,
            source,
            &[],
        )
    }

    /// The bench transcript under the name Claude Code gives `session`'s
    /// (a hard link: the same 50 MB, a path no hook has scanned yet).
    fn transcript_of(&self, session: &str) -> Result<PathBuf> {
        let path = self.transcript.with_file_name(format!("{session}.jsonl"));
        if !path.exists() {
            std::fs::hard_link(&self.transcript, &path)
                .with_context(|| format!("linking {}", path.display()))?;
        }
        Ok(path)
    }

    /// `session-start` with `source` on the 10,000-note store for a new
    /// session notesoup has no record of, whose transcript is its own.
    fn unrecorded_start(&self, binary: &Path, source: &str, run: &str) -> Result<Duration> {
        let session = format!("bench-{source}-{run}");
        self.hook_with(
            binary,
            &self.many_notes,
            &self.transcript_of(&session)?,
            "session-start",
            &session,
            source,
            &[],
        )
    }

    /// A hook on the notes root `notes` and `transcript`, with `env` set too.
    #[allow(clippy::too_many_arguments)]
    fn hook_with(
        &self,
        binary: &Path,
        notes: &Path,
        transcript: &Path,
        event: &str,
        session: &str,
        source: &str,
        env: &[(&str, PathBuf)],
    ) -> Result<Duration> {
        let payload = serde_json::json!({
            "session_id": session, "transcript_path": transcript, "cwd": self.project,
            "hook_event_name": event, "source": source, "prompt": "go"});
        let started = Instant::now();
        let succeeded = claude_plugin::run_hook(
            self.command(binary, &["hook", event])
                .env("PI_NOTES_HOME", notes)
                .envs(env.iter().map(|(name, value)| (name, value))),
            &payload,
        )?;
        let elapsed = started.elapsed();
        if !succeeded {
            bail!("hook {event} failed");
        }
        Ok(elapsed)
    }

    fn measure(&self, binary: &Path, also: Option<&Path>, runs: usize) -> Result<String> {
        let binaries: Vec<&Path> = std::iter::once(binary).chain(also).collect();
        let load_at_start = load_average();
        // The prompt hook needs the session recorded once.
        self.hook(binary, "session-start", SESSION, "startup")?;
        // Each build's server on the store its hooks boot from after a write.
        let mut servers = binaries
            .iter()
            .map(|binary| McpServer::start_on(self, binary, &self.written_notes))
            .collect::<Result<Vec<_>>>()?;
        let samples = alternating(runs, 1 + HOOKS.len(), Order::Same, |run, variant| {
            if variant == 0 {
                let started = Instant::now();
                let status = Command::new("node")
                    .args(["-e", ""])
                    .status()
                    .context("node")?;
                let elapsed = started.elapsed();
                if !status.success() {
                    bail!("node -e '' failed");
                }
                return Ok(vec![elapsed]);
            }
            // Each hook of a run for every build in turn, this build first
            // in even runs and last in odd ones: whichever runs first in a
            // pair pays for what the second then finds in the system's
            // caches and the shared plugin data.
            let mut order: Vec<usize> = (0..binaries.len()).collect();
            if run % 2 == 1 {
                order.reverse();
            }
            if variant - 1 == SERVER_WROTE {
                for &build in &order {
                    servers[build].call(
                        Tool::NOTES_WRITE.name,
                        serde_json::json!({
                            "address": format!("@project/topics/served-{run}-{build}.md"),
                            "content": "# Served\n\nA fact learnt this run.\n"}),
                        "toolu_bench_write",
                    )?;
                }
                std::thread::sleep(SERVER_WROTE_BEFORE);
            }
            let mut times = vec![Duration::ZERO; binaries.len()];
            for build in order {
                times[build] =
                    self.measure_hook(binaries[build], variant - 1, &format!("{run}-{build}"))?;
            }
            Ok(times)
        })?;
        let mut samples = samples.into_iter();
        let node = median(samples.next().context("node's samples")?.concat());
        // Per build, per hook, the runs' times.
        let mut hooks: Vec<Vec<Vec<Duration>>> = vec![Vec::new(); binaries.len()];
        for runs in samples {
            for (build, hook) in hooks.iter_mut().enumerate() {
                hook.push(runs.iter().map(|times| times[build]).collect());
            }
        }
        for server in servers {
            server.finish()?;
        }
        let mut hooks = hooks.into_iter();
        let ours = hooks.next().context("this build's samples")?;
        let theirs = hooks.next();
        let mcp = self.mcp_figures(binary, runs)?;
        let mut report = String::new();
        writeln!(
            report,
            "claude-bench: {NOTES} notes, {} MB transcript, {runs} runs, medians",
            TRANSCRIPT_BYTES / (1024 * 1024)
        )?;
        writeln!(
            report,
            "  load average: {load_at_start} at the start, {} at the end",
            load_average()
        )?;
        writeln!(
            report,
            "  node -e ''                      {:>8.2} ms",
            ms(node)
        )?;
        // The first of a kind marked `first` runs before the hooks kept
        // anything of this store and transcript: the shelves are listed, the
        // transcript is scanned whole; it is shown apart (the other build's
        // first finds them kept, so both builds' medians leave it out).
        for (index, ((name, first), mut samples)) in HOOKS.into_iter().zip(ours).enumerate() {
            let first = first.then(|| samples.remove(0));
            let m = median(samples);
            write!(
                report,
                "  notesoup {name:<23} {:>8.2} ms   {:.1}x faster than node",
                ms(m),
                ms(node) / ms(m)
            )?;
            if let Some(first) = first {
                write!(
                    report,
                    " (first: {:.2} ms, {:.1}x)",
                    ms(first),
                    ms(node) / ms(first)
                )?;
            }
            writeln!(report)?;
            if let Some(theirs) = &theirs {
                let mut samples = theirs[index].clone();
                if first.is_some() {
                    samples.remove(0);
                }
                let other = median(samples);
                writeln!(
                    report,
                    "    --also                       {:>8.2} ms   {:.1}x faster than node; this build {:.2}x its time",
                    ms(other),
                    ms(node) / ms(other),
                    ms(m) / ms(other)
                )?;
            }
        }
        writeln!(
            report,
            "  (* {MANY_NOTES} notes, 50 MB transcript, no record of the session; resume and compact: a transcript of the session's own, never scanned; medians of the runs after the first;"
        )?;
        writeln!(
            report,
            "     new data dir: a new CLAUDE_PLUGIN_DATA each run, the caches kept; nothing kept: new caches too;"
        )?;
        writeln!(
            report,
            "     a note written: one session resumed right after a note was written into the project home of another 10,000;"
        )?;
        writeln!(
            report,
            "     server wrote: the same, the note written 3 s before through the build's running notesoup mcp)"
        )?;
        writeln!(
            report,
            "  mcp tools/call (one running server; node -e '' start {:.2} ms for scale):",
            ms(node)
        )?;
        writeln!(report, "    {:<34} {:>9} {:>9}", "", "first*", "warm")?;
        for (name, first, warm) in &mcp.calls {
            let first = first.map_or_else(|| "-".to_owned(), |d| format!("{:.2} ms", ms(d)));
            writeln!(
                report,
                "    {name:<34} {first:>9} {:>9}",
                format!("{:.2} ms", ms(*warm))
            )?;
        }
        writeln!(
            report,
            "    (* the median over {FIRST_SERVERS} new servers)"
        )?;
        writeln!(
            report,
            "  mcp server memory: {:.1} MB after the first history call, {:.1} MB after {RSS_CALLS} more calls ({:.2}x)",
            mcp.rss_first as f64 / 1024.0,
            mcp.rss_after as f64 / 1024.0,
            mcp.rss_after as f64 / mcp.rss_first.max(1) as f64
        )?;
        Ok(report)
    }

    /// One run of hook `hook` (a row of [`HOOKS`]) with `binary`; `run`
    /// names this run's sessions and directories.
    fn measure_hook(&self, binary: &Path, hook: usize, run: &str) -> Result<Duration> {
        // A new plugin data directory each run (a reinstall): the caches in
        // the cache directory outlive it.
        let fresh = self.home.join(format!("fresh-{run}"));
        match hook {
            // A new session each time: a window is booted only once.
            0 => self.hook(binary, "session-start", &format!("bench-{run}"), "startup"),
            1 => self.hook(binary, "user-prompt-submit", SESSION, ""),
            // Sessions with no record, each with a transcript of its own no
            // hook has scanned: the window comes from the transcript.
            2 => self.unrecorded_start(binary, "resume", run),
            3 => self.unrecorded_start(binary, "compact", run),
            4 => self.hook_with(
                binary,
                &self.many_notes,
                &self.transcript,
                "session-start",
                &format!("bench-cold-{run}"),
                "resume",
                &[("CLAUDE_PLUGIN_DATA", fresh.join("data"))],
            ),
            // A note written since the last boot (by another program, or,
            // before the row's runs, through each build's server).
            A_NOTE_WRITTEN | SERVER_WROTE => {
                if hook == A_NOTE_WRITTEN {
                    let topics =
                        project_key_dir(&self.written_notes, &self.project)?.join("topics");
                    std::fs::write(
                        topics.join(format!("written-{run}.md")),
                        note_text(&format!("Written {run}"), "A fact learnt this run.\n"),
                    )?;
                }
                let session = "bench-written";
                self.hook_with(
                    binary,
                    &self.written_notes,
                    &self.transcript_of(session)?,
                    "session-start",
                    session,
                    "resume",
                    &[],
                )
            }
            // Nothing kept anywhere: a new data directory and new caches.
            _ => self.hook_with(
                binary,
                &self.many_notes,
                &self.transcript,
                "session-start",
                &format!("bench-nothing-{run}"),
                "resume",
                &[
                    ("CLAUDE_PLUGIN_DATA", fresh.join("data-nothing")),
                    ("XDG_CACHE_HOME", fresh.join("cache-nothing")),
                ],
            ),
        }
    }

    /// The MCP figures: per call, the first round trip on a new server
    /// (the median over [`FIRST_SERVERS`] servers) and the median warm one.
    fn mcp_figures(&self, binary: &Path, runs: usize) -> Result<McpFigures> {
        let runs = runs.max(2);
        let tool_use = self.last_tool_use();
        let empty = || serde_json::json!({});
        let (mut first_list, mut first_windows) = (Vec::new(), Vec::new());
        for _ in 0..FIRST_SERVERS {
            let mut server = McpServer::start(self, binary)?;
            first_list.push(server.call(Tool::NOTES_LIST.name, empty(), &tool_use)?);
            first_windows.push(server.call(Tool::HISTORY_WINDOWS.name, empty(), &tool_use)?);
            server.finish()?;
        }
        let mut calls = Vec::new();
        let mut server = McpServer::start(self, binary)?;
        server.call(Tool::NOTES_LIST.name, empty(), &tool_use)?;
        let warm = (1..runs)
            .map(|_| server.call(Tool::NOTES_LIST.name, empty(), &tool_use))
            .collect::<Result<Vec<_>>>()?;
        calls.push((
            "notes_list (1,000 notes)",
            Some(median(first_list)),
            median(warm),
        ));
        server.call(Tool::HISTORY_WINDOWS.name, empty(), &tool_use)?;
        let first = median(first_windows);
        let rss_first = server.rss_kib()?;
        // A prompt halfway through the transcript (4 seqs per exchange).
        let seq = u32::try_from(4 * (self.exchanges.get() / 2) + 1)?;
        let tools: [(&'static str, Arguments); 4] = [
            (Tool::HISTORY_WINDOWS.name, |_| serde_json::json!({})),
            (Tool::HISTORY_LIST.name, |_| serde_json::json!({})),
            (
                Tool::HISTORY_SEARCH.name,
                |_| serde_json::json!({"query": "prompt 7"}),
            ),
            (
                Tool::HISTORY_READ.name,
                |seq| serde_json::json!({"seq": seq}),
            ),
        ];
        for (index, (tool, arguments)) in tools.into_iter().enumerate() {
            let warm = (1..runs)
                .map(|_| server.call(tool, arguments(seq), &tool_use))
                .collect::<Result<Vec<_>>>()?;
            calls.push((tool, (index == 0).then_some(first), median(warm)));
        }
        let mut grown = Vec::new();
        for _ in 1..runs {
            self.append_exchange()?;
            grown.push(server.call(Tool::HISTORY_LIST.name, empty(), &self.last_tool_use())?);
        }
        calls.push(("history_list, one exchange appended", None, median(grown)));
        for call in 0..RSS_CALLS {
            if call % 10 == 0 {
                self.append_exchange()?;
            }
            let (tool, arguments) = tools[call % tools.len()];
            server.call(tool, arguments(seq), &self.last_tool_use())?;
        }
        let rss_after = server.rss_kib()?;
        server.finish()?;
        Ok(McpFigures {
            calls,
            rss_first,
            rss_after,
        })
    }
}

/// A history tool's arguments, given a seq to read.
type Arguments = fn(u32) -> serde_json::Value;

struct McpFigures {
    calls: Vec<(&'static str, Option<Duration>, Duration)>,
    /// Resident memory after the first history call, KiB.
    rss_first: u64,
    /// And after [`RSS_CALLS`] more calls.
    rss_after: u64,
}

/// One running `notesoup mcp`.
struct McpServer {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
    next_id: u64,
}

impl McpServer {
    fn start(world: &World, binary: &Path) -> Result<Self> {
        Self::start_on(world, binary, &world.notes)
    }

    /// A server on the notes root `notes`.
    fn start_on(world: &World, binary: &Path, notes: &Path) -> Result<Self> {
        let mut child = world
            .command(binary, &["mcp"])
            .env("PI_NOTES_HOME", notes)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let stdin = child.stdin.take().context("stdin")?;
        let stdout = BufReader::new(child.stdout.take().context("stdout")?);
        Ok(Self {
            child,
            stdin,
            stdout,
            next_id: 0,
        })
    }

    /// One `tools/call` round trip, as Claude Code sends it.
    fn call(
        &mut self,
        tool: &str,
        arguments: serde_json::Value,
        tool_use: &str,
    ) -> Result<Duration> {
        self.next_id += 1;
        let request = serde_json::json!({"jsonrpc":"2.0","id":self.next_id,"method":"tools/call",
            "params":{"name":tool,"arguments":arguments,
                "_meta":{"claudecode/toolUseId":tool_use}}});
        let started = Instant::now();
        writeln!(self.stdin, "{request}")?;
        self.stdin.flush()?;
        let mut line = String::new();
        self.stdout.read_line(&mut line)?;
        let elapsed = started.elapsed();
        if !line.contains("\"isError\":false") {
            bail!("{tool} failed: {line}");
        }
        Ok(elapsed)
    }

    /// The server's resident memory in KiB.
    fn rss_kib(&self) -> Result<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))?;
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
            .context("no VmRSS in /proc status")
    }

    fn finish(mut self) -> Result<()> {
        drop(self.stdin);
        self.child.wait()?;
        Ok(())
    }
}

/// The bench's home, its project (a Git root) made in `dir`, and where
/// Claude Code keeps the transcript of `session` in that project.
fn project_in(dir: &Path, session: &str) -> Result<(PathBuf, PathBuf, PathBuf)> {
    let home = dir.join("home");
    let project = dir.join("work").join("proj");
    std::fs::create_dir_all(project.join(".git"))?;
    let slug: String = project
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let transcript = home
        .join(".claude/projects")
        .join(slug)
        .join(format!("{session}.jsonl"));
    Ok((home, project, transcript))
}

/// `project/<basename>-<sha1 8>` for a git root, as core derives it.
fn project_key_dir(notes: &Path, project: &Path) -> Result<PathBuf> {
    let key = notesoup_core::notes::project_key(project);
    Ok(notes.join("project").join(key))
}

fn note_text(title: &str, body: &str) -> String {
    format!(
        "---\norigin: self\ncreatedAt: 2026-01-01T00:00:00.000+00:00\nupdatedAt: 2026-01-01T00:00:00.000+00:00\n---\n\n# {title}\n\n{body}"
    )
}

/// The session the report bench writes and Claude Code resumes.
const REPORT_SESSION: &str = "0b5e55e5-5e55-4e55-8e55-5e55e55e55e5";

/// `cargo xtask claude-bench report [--runs N]`: `notesoup report` (release)
/// over a 50 MB transcript, as the table and with `--html`, side by side in
/// one run with the real Claude Code resuming the same session headless
/// (`claude -p --resume`, one turn answered by a fake Messages API on
/// 127.0.0.1), each a whole process measured with GNU time, with the load
/// average at the start and the end.
pub fn report(args: &[String]) -> Result<()> {
    let runs = match args {
        [] => 3,
        [flag, n] if flag == "--runs" => n.parse::<usize>().context(USAGE)?.max(1),
        _ => bail!("{USAGE}"),
    };
    let claude = crate::refdir::reference_dir()?
        .join(format!(
            "claude-code-{}",
            crate::claude_hosts::CLAUDE_CODE_VERSION
        ))
        .join("node_modules/.bin/claude");
    if !claude.exists() {
        bail!(
            "Claude Code is not at {}: install it with `cargo xtask claude-hosts claude`",
            claude.display()
        );
    }
    let binary = claude_plugin::build(&workspace_root(), true)?;
    let dir = std::env::temp_dir().join(format!("notesoup-claude-report-{}", std::process::id()));
    let result = report_in(&dir, &binary, &claude, runs);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn report_in(dir: &Path, binary: &Path, claude: &Path, runs: usize) -> Result<()> {
    let (home, project, transcript) = project_in(dir, REPORT_SESSION)?;
    write_resumable_transcript(&transcript, &project)?;
    let size = std::fs::metadata(&transcript).map(|m| m.len()).unwrap_or(0);
    let page = dir.join("report.html");
    let api = FakeMessages::start()?;
    println!(
        "claude-bench report: a {:.1} MB transcript ({})",
        size as f64 / 1e6,
        transcript.display()
    );
    println!("load average at the start: {}", load_average());
    let ours = |html: bool| {
        let mut cmd = Command::new(binary);
        cmd.arg("report").arg("--session").arg(&transcript);
        if html {
            cmd.arg("--html").arg(&page);
        }
        cmd.env("HOME", &home)
            .env("PI_NOTES_HOME", dir.join("notes"))
            .env("CLAUDE_PLUGIN_DATA", dir.join("data"))
            .current_dir(&project);
        cmd
    };
    let theirs = || {
        let mut cmd = Command::new(claude);
        cmd.args([
            "-p",
            "go on",
            "--output-format",
            "json",
            "--resume",
            REPORT_SESSION,
        ])
        .env("HOME", &home)
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("ANTHROPIC_API_KEY", "sk-notesoup-bench")
        .env("ANTHROPIC_BASE_URL", &api.url)
        .current_dir(&project);
        cmd
    };
    // Claude Code appends its turn to the transcript: each run resumes a
    // copy.
    let pristine = dir.join("pristine.jsonl");
    std::fs::copy(&transcript, &pristine)?;
    let samples = alternating(runs, 3, Order::Same, |_, variant| {
        let sample = measure(match variant {
            0 => ours(false),
            1 => ours(true),
            _ => theirs(),
        })?;
        if variant == 2 {
            std::fs::copy(&pristine, &transcript)?;
        }
        Ok(sample)
    })?;
    let page_kb = std::fs::metadata(&page).map(|m| m.len()).unwrap_or(0) as f64 / 1e3;
    println!(
        "medians of {runs} alternating runs ({} API requests answered):",
        api.requests()
    );
    print_table(
        44,
        &[
            ("notesoup report", medians(&samples[0])),
            ("notesoup report --html", medians(&samples[1])),
            ("claude -p --resume (one fake turn)", medians(&samples[2])),
        ],
    );
    println!("the page: {page_kb:.0} kB");
    println!("load average at the end: {}", load_average());
    Ok(())
}

/// A transcript of about 50 MB as Claude Code writes one: a first prompt,
/// then exchanges of a prompt, a `Bash` call and its 2,000-character
/// result, each row carrying the session, the project and a time, the
/// replies' usage rising so the fill has a shape.
fn write_resumable_transcript(path: &Path, project: &Path) -> Result<()> {
    std::fs::create_dir_all(path.parent().context("transcript dir")?)?;
    let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
    let output = "x".repeat(2_000);
    let cwd = project.to_string_lossy();
    let mut bytes = 0;
    let mut i = 0u64;
    let mut parent = serde_json::Value::Null;
    while bytes < TRANSCRIPT_BYTES {
        let at = format!(
            "2026-01-01T{:02}:{:02}:{:02}.000Z",
            (i / 3600) % 24,
            (i / 60) % 60,
            i % 60
        );
        let common = |uuid: String, parent: serde_json::Value| {
            serde_json::json!({"uuid": uuid, "parentUuid": parent, "isSidechain": false,
                "sessionId": REPORT_SESSION, "cwd": cwd, "version": crate::claude_hosts::CLAUDE_CODE_VERSION,
                "userType": "external", "timestamp": at})
        };
        let mut user = common(format!("u{i}"), parent.clone());
        user["type"] = "user".into();
        user["message"] = serde_json::json!({"role": "user", "content": format!("prompt {i}")});
        let mut reply = common(format!("a{i}"), format!("u{i}").into());
        reply["type"] = "assistant".into();
        reply["message"] = serde_json::json!({"id": format!("m{i}"), "model": "claude-opus-5-5", "role": "assistant",
            "type": "message", "stop_reason": "tool_use",
            "content": [{"type": "tool_use", "id": format!("t{i}"), "name": "Bash", "input": {"command": "ls"}}],
            "usage": {"input_tokens": 10, "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 20_000 + (i % 1_000) * 150, "output_tokens": 10}});
        let mut result = common(format!("r{i}"), format!("a{i}").into());
        result["type"] = "user".into();
        result["message"] = serde_json::json!({"role": "user", "content": [{"type": "tool_result",
            "tool_use_id": format!("t{i}"), "content": output, "is_error": false}]});
        for row in [user, reply, result] {
            let line = row.to_string();
            bytes += line.len() + 1;
            writeln!(out, "{line}")?;
        }
        parent = format!("r{i}").into();
        i += 1;
    }
    out.flush()?;
    Ok(())
}

/// A fake Anthropic Messages API on 127.0.0.1: every `/v1/messages` request
/// is read whole and answered with one streamed `ok` turn, token counts
/// with a small figure.
struct FakeMessages {
    url: String,
    answered: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl FakeMessages {
    fn start() -> Result<Self> {
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        let url = format!("http://{}", listener.local_addr()?);
        let answered = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let count = answered.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let count = count.clone();
                std::thread::spawn(move || {
                    if answer(stream).is_ok() {
                        count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                });
            }
        });
        Ok(Self { url, answered })
    }

    fn requests(&self) -> usize {
        self.answered.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// Reads one request (headers, then a body of its `Content-Length`) and
/// answers it; the connection is then closed.
fn answer(stream: std::net::TcpStream) -> Result<()> {
    use std::io::Read as _;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line)?;
        if line.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    let path = request_line.split_whitespace().nth(1).unwrap_or("");
    let (content_type, body) = if path.starts_with("/v1/messages/count_tokens") {
        ("application/json", r#"{"input_tokens":100}"#.to_owned())
    } else if path.starts_with("/v1/messages") {
        let model = serde_json::from_slice::<serde_json::Value>(&body)
            .ok()
            .and_then(|request| request["model"].as_str().map(str::to_owned))
            .unwrap_or_else(|| "claude-opus-5-5".to_owned());
        let events = [
            (
                "message_start",
                serde_json::json!({"type": "message_start", "message": {"id": "msg_bench", "type": "message",
                "role": "assistant", "model": model, "content": [], "stop_reason": null, "stop_sequence": null,
                "usage": {"input_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 20_000, "output_tokens": 1}}}),
            ),
            (
                "content_block_start",
                serde_json::json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            ),
            (
                "content_block_delta",
                serde_json::json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "ok"}}),
            ),
            (
                "content_block_stop",
                serde_json::json!({"type": "content_block_stop", "index": 0}),
            ),
            (
                "message_delta",
                serde_json::json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null}, "usage": {"output_tokens": 2}}),
            ),
            ("message_stop", serde_json::json!({"type": "message_stop"})),
        ];
        let mut text = String::new();
        for (name, data) in events {
            let _ = write!(text, "event: {name}\ndata: {data}\n\n");
        }
        ("text/event-stream", text)
    } else {
        ("application/json", "{}".to_owned())
    };
    let mut stream = stream;
    write!(
        stream,
        "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )?;
    stream.flush()?;
    Ok(())
}
