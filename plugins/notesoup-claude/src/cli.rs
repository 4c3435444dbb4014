//! The `notesoup` command line: Claude Code's own commands (`mcp`, `hook
//! <event>`, `mod`, `sessions`, `install-plugin`, and `dream-tools`, which
//! `dream` starts) next to the commands every notesoup binary shares
//! (`notes`, `boot`, `history`, `doctor`, `dream`, `completions`, `man`:
//! `notesoup-cli`), which run over [`ClaudeCli`].

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Args, Parser, Subcommand};
use notesoup_cli::{
    BootView, CliHost, DreamToolsArgs, HostDreamer, NoHostArgs, Out, Purpose, SharedCommand,
    Target, no_session_recorded,
};
use notesoup_core::dream::DreamTools;
use notesoup_core::notes::project_key;
use notesoup_core::plumbing::{DreamerProcess, DreamerSetting, LineRead, read_capped};
use notesoup_core::tools::ToolOutput;
use serde_json::{Value, json};

use crate::dream::ClaudeDreamer;
use crate::env::HostEnv;
use crate::hook::{self, io::Event};
use crate::mcp::{McpTools, ServerInfo, serve};
use crate::state::{ClaudeSessionState, StateDir};
use crate::tools::ClaudeTools;
use crate::transcript::scan::session_id_of;

/// The MCP server's name and version.
pub const SERVER_INFO: ServerInfo = ServerInfo {
    name: "notesoup",
    version: env!("CARGO_PKG_VERSION"),
};

/// What `--version` prints after the name: the plugin's version and the
/// Claude Code release it is verified with (the reference tests' pin).
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (Claude Code 2.1.332)");

/// notesoup for Claude Code: the MCP server, the hook handler, and a command
/// line over the same notes and history.
#[derive(Debug, Parser)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the notes and history tools over stdio (MCP); Claude Code starts this.
    Mcp,
    /// Handle one Claude Code hook event, reading its JSON on stdin.
    Hook {
        /// The event.
        #[arg(value_enum)]
        event: Event,
    },
    /// Answer the optional reset mod: one JSON request on stdin, one JSON line out.
    Mod {
        /// The request.
        #[arg(value_enum)]
        op: hook::reset::Op,
    },
    /// The Claude sessions notesoup recorded for this project, newest first.
    Sessions(SessionsArgs),
    /// Install the Claude Code marketplace (this plugin, the optional reset
    /// mod and this binary) in a stable place, then print how to add it.
    InstallPlugin {
        /// Where (default: ${XDG_DATA_HOME:-~/.local/share}/notesoup/claude-marketplace).
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Install into a directory that holds files notesoup did not
        /// write (files at the marketplace's paths are replaced; links are
        /// still never followed).
        #[arg(long)]
        force: bool,
    },
    /// Serve the dreamer's jailed tools over stdio (MCP); `dream` starts this.
    #[command(hide = true)]
    DreamTools(DreamToolsArgs),
    #[command(flatten)]
    Shared(Box<SharedCommand<NoHostArgs, ClaudeDreamerArgs>>),
}

/// `sessions`' flags.
#[derive(Debug, Args)]
struct SessionsArgs {
    /// The project directory (default: the current directory).
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// Print the sessions as JSON.
    #[arg(long)]
    json: bool,
}

/// How `notesoup dream` starts its dreamer.
#[derive(Debug, Args)]
pub struct ClaudeDreamerArgs {
    /// The `claude` to run (default: $NOTESOUP_CLAUDE, else `claude` on PATH).
    #[arg(long, value_name = "PATH")]
    claude: Option<PathBuf>,
}

/// The `notesoup` command: parses `std::env::args_os()` (help and usage
/// name it `notesoup` whatever the executable's file is called) and runs
/// the subcommand over the process's environment. The `notesoup` binary is
/// this function and its allocator.
pub fn main() -> ExitCode {
    let cli = match hook_event(std::env::args_os().skip(1)) {
        Some(event) => Cli {
            command: Command::Hook { event },
        },
        None => notesoup_cli::parse::<Cli, ClaudeCli>(),
    };
    run(cli, HostEnv::from_process())
}

/// The event of `hook EVENT` and nothing else, read without building the
/// command tree: Claude Code starts one process per hook, and building
/// clap's tree of every command took about 0.3 ms of the 1.4 ms of CPU a
/// short hook (`user-prompt-submit`) takes. The event is read as clap
/// reads it (a test checks every one); anything else (`--help`, a stray
/// argument, another command) goes to clap.
fn hook_event(mut args: impl Iterator<Item = std::ffi::OsString>) -> Option<Event> {
    let (Some(hook), Some(event), None) = (args.next(), args.next(), args.next()) else {
        return None;
    };
    if hook != "hook" {
        return None;
    }
    <Event as clap::ValueEnum>::from_str(event.to_str()?, false).ok()
}

/// Runs the command line; returns the process exit code.
pub fn run(cli: Cli, env: HostEnv) -> ExitCode {
    let code = match cli.command {
        Command::Mcp => run_mcp(env),
        Command::Hook { event } => run_hook(event, &env),
        Command::Mod { op } => run_mod(op, &env),
        Command::Sessions(args) => report(sessions(&env, &args), "sessions"),
        Command::InstallPlugin { dir, force } => {
            report(install_plugin(&env, dir, force), "install-plugin")
        }
        Command::DreamTools(DreamToolsArgs { notes_home }) => {
            serve_tools(DreamTools::new(notes_home))
        }
        Command::Shared(shared) => {
            return notesoup_cli::run::<Cli, ClaudeCli>(&mut ClaudeCli { env }, *shared);
        }
    };
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

fn run_mcp(env: HostEnv) -> i32 {
    let project_dir = env
        .project_dir
        .clone()
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("."));
    serve_tools(ClaudeTools::serving(env, project_dir))
}

fn serve_tools(tools: impl McpTools) -> i32 {
    match serve(
        std::io::stdin().lock(),
        std::io::stdout().lock(),
        &SERVER_INFO,
        tools,
    ) {
        Ok(()) => 0,
        Err(err) => {
            eprintln!("notesoup mcp: {err}");
            1
        }
    }
}

fn run_hook(event: Event, env: &HostEnv) -> i32 {
    // A hook's input is one small JSON object: past the line cap it is not
    // read on, let alone held.
    let output = match read_capped(std::io::stdin().lock(), LineRead::MAX_BYTES) {
        Ok(Some(stdin)) => hook::run(event, &stdin, env),
        Ok(None) => hook::io::HookOutput::notice(format!(
            "notesoup: the hook input is over {max_bytes} bytes; it was not read",
            max_bytes = LineRead::MAX_BYTES
        )),
        Err(err) => {
            hook::io::HookOutput::notice(format!("notesoup: could not read hook input: {err}"))
        }
    };
    let mut stdout = std::io::stdout().lock();
    // A closed stdout leaves nothing to report to.
    let _ = stdout.write_all(output.to_stdout().as_bytes());
    let _ = stdout.flush();
    0
}

fn run_mod(op: hook::reset::Op, env: &HostEnv) -> i32 {
    let refused =
        |error: String| serde_json::json!({ "ok": false, "error": error }).to_string() + "\n";
    let line = match read_capped(std::io::stdin().lock(), LineRead::MAX_BYTES) {
        Ok(Some(stdin)) => hook::reset::run(op, &stdin, env),
        Ok(None) => refused(format!(
            "the request is over {max_bytes} bytes; it was not read",
            max_bytes = LineRead::MAX_BYTES
        )),
        Err(err) => refused(format!("could not read the request: {err}")),
    };
    let mut stdout = std::io::stdout().lock();
    // A closed stdout leaves nothing to report to.
    let _ = stdout.write_all(line.as_bytes());
    let _ = stdout.flush();
    0
}

/// Prints a host command's text: success on stdout (exit 0), failure on
/// stderr as `notesoup <command>: <reason>` (exit 1).
fn report(result: Result<String, String>, command: &str) -> i32 {
    let mut out = Out::new();
    let code = match result {
        Ok(text) => {
            out.print(&text);
            0
        }
        Err(reason) => {
            out.warn(&format!("{} {command}: {reason}", ClaudeCli::BIN));
            1
        }
    };
    i32::from(out.finish(ClaudeCli::BIN, code))
}

fn install_plugin(env: &HostEnv, dir: Option<PathBuf>, force: bool) -> Result<String, String> {
    let dir = dir
        .or_else(|| {
            crate::install::default_dir(env, std::env::var_os("XDG_DATA_HOME").map(PathBuf::from))
        })
        .ok_or("no home directory is known; pass --dir")?;
    let binary =
        std::env::current_exe().map_err(|err| format!("cannot find this binary: {err}"))?;
    crate::install::install(&dir, &binary, force).map_err(|err| err.to_string())?;
    Ok(format!(
        "installed the notesoup marketplace in {dir}\nadd it to Claude Code with:\n  claude plugin marketplace add {dir}\n  claude plugin install notesoup@notesoup\n  (optional automatic reset) claude plugin install notesoup-reset@notesoup",
        dir = dir.display()
    ))
}

/// How a session comes to be recorded, said when none is.
const NO_SESSION_YET: &str = " yet: notesoup records a session when Claude Code starts one in this project with the notesoup plugin enabled (notesoup install-plugin, then `claude plugin install notesoup@notesoup`)";

/// The session records of the project `key` under the plugin data
/// directory `data`, each with when it was last touched; none when nothing
/// was recorded yet. A record that cannot be read is left out.
fn project_records(
    data: &Path,
    key: &str,
) -> std::io::Result<Vec<(std::time::SystemTime, ClaudeSessionState)>> {
    let entries = match std::fs::read_dir(data.join("sessions")) {
        Ok(entries) => entries,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(err) => return Err(err),
    };
    let states = StateDir::new(data.to_path_buf());
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(id) = name.strip_suffix(".json") else {
            continue;
        };
        let Ok(Some(state)) = states.load(id) else {
            continue;
        };
        if state.project_key != key {
            continue;
        }
        let touched = entry
            .metadata()
            .and_then(|m| m.modified())
            .unwrap_or(std::time::UNIX_EPOCH);
        found.push((touched, state));
    }
    Ok(found)
}

/// One line per recorded session of the project: id, last touched,
/// live window, notes session (the chain's first session).
fn sessions(env: &HostEnv, args: &SessionsArgs) -> Result<String, String> {
    let cwd = match &args.cwd {
        Some(cwd) if cwd.is_dir() => cwd.clone(),
        Some(cwd) => return Err(format!("--cwd {}: not a directory", cwd.display())),
        None => std::env::current_dir().map_err(|err| format!("no current directory: {err}"))?,
    };
    let key = project_key(&cwd);
    // No plugin data yet is a fresh install: nothing is recorded.
    let mut found = match env.data_dir() {
        Some(data) => {
            project_records(&data, &key).map_err(|err| format!("{}: {err}", data.display()))?
        }
        None => Vec::new(),
    };
    found.sort_by_key(|(touched, _)| std::cmp::Reverse(*touched));
    if args.json {
        let rows: Vec<Value> = found
            .iter()
            .map(|(touched, state)| {
                json!({"sessionId": state.session_id, "touchedAt": iso(*touched),
                    "window": state.window_id().to_string(), "notesSessionId": state.notes_session_id})
            })
            .collect();
        return Ok(Value::Array(rows).to_string());
    }
    let mut out = match found.len() {
        0 => format!(
            "0 sessions\n{}{NO_SESSION_YET}",
            no_session_recorded::<ClaudeCli>(cwd.display())
        ),
        1 => "1 session".to_owned(),
        n => format!("{n} sessions"),
    };
    for (touched, state) in &found {
        out.push_str(&format!(
            "\n- {} | {} | window {} | notes session {}",
            state.session_id,
            iso(*touched),
            state.window_id(),
            state.notes_session_id
        ));
    }
    Ok(out)
}

/// A file time as UTC ISO, to the second.
fn iso(time: std::time::SystemTime) -> String {
    jiff::Timestamp::try_from(time)
        .map(|t| t.round(jiff::Unit::Second).unwrap_or(t).to_string())
        .unwrap_or_default()
}

/// The shared commands' Claude Code side.
#[derive(Debug)]
pub struct ClaudeCli {
    /// The process environment.
    pub env: HostEnv,
}

/// Where no session is recorded, when none is.
const THIS_PROJECT: &str = "this project";

impl ClaudeCli {
    /// The environment with the notes root the command names.
    fn env_for(&self, target: &Target<'_, NoHostArgs>) -> HostEnv {
        HostEnv {
            notes_root: target.notes_root.clone(),
            ..self.env.clone()
        }
    }

    /// The window ledger of the session `target` names (`report`).
    fn read_ledger(
        &self,
        target: &Target<'_, NoHostArgs>,
    ) -> anyhow::Result<notesoup_core::history::SessionLedger> {
        let cwd = target.cwd_or_current()?;
        let Some(state) = self.session_state(target, &cwd)? else {
            anyhow::bail!(
                "{}; pass --session",
                no_session_recorded::<Self>(THIS_PROJECT)
            );
        };
        crate::tools::history::chain_ledger(&state, self.env.budget.context_window)
            .map_err(|refusal| anyhow::anyhow!("{}", refusal.message()))
    }

    /// The session a command means: `--session FILE` (a transcript: a chain
    /// of its own, named by the session it records), `--session ID` (a
    /// recorded session), else the project's latest recorded session.
    fn session_state(
        &self,
        target: &Target<'_, NoHostArgs>,
        cwd: &std::path::Path,
    ) -> anyhow::Result<Option<ClaudeSessionState>> {
        if let Some(path) = target.session_file() {
            let named = session_id_of(path).with_context(|| path.display().to_string())?;
            let session = named
                .or_else(|| path.file_stem().map(|s| s.to_string_lossy().into_owned()))
                .unwrap_or_default();
            return Ok(Some(ClaudeSessionState::new_chain(
                &session,
                path.to_owned(),
                cwd.to_owned(),
                project_key(cwd),
            )));
        }
        let Some(data) = self.env.data_dir() else {
            return match target.session {
                Some(id) => anyhow::bail!("no session {id} is recorded"),
                None => Ok(None),
            };
        };
        let states = StateDir::new(data);
        match target.session {
            Some(id) => states
                .load(id)?
                .map(Some)
                .with_context(|| format!("no session {id} is recorded")),
            None => Ok(states.latest(&project_key(cwd))?),
        }
    }
}

impl CliHost for ClaudeCli {
    type SessionArgs = NoHostArgs;
    type DreamerArgs = ClaudeDreamerArgs;

    const BIN: &'static str = "notesoup";
    const VERSION: &'static str = VERSION;
    const HOST: &'static str = "Claude Code";

    fn notes_root(&self) -> Option<PathBuf> {
        self.env.notes_root.clone()
    }

    fn agent(&self) -> String {
        crate::names::AGENT.to_owned()
    }

    fn with_tools(
        &mut self,
        target: &Target<'_, NoHostArgs>,
        purpose: Purpose,
        out: &mut Out,
        call: &mut dyn FnMut(
            &mut dyn notesoup_core::tools::ToolContext,
        ) -> anyhow::Result<ToolOutput>,
    ) -> anyhow::Result<ToolOutput> {
        let cwd = target.cwd_or_current()?;
        let state = self.session_state(target, &cwd)?;
        if purpose == Purpose::History && state.is_none() {
            anyhow::bail!(
                "{}; pass --session",
                no_session_recorded::<Self>(THIS_PROJECT)
            );
        }
        let key = state
            .as_ref()
            .map_or_else(|| project_key(&cwd), |state| state.project_key.clone());
        let env = self.env_for(target);
        let mut host = ClaudeTools::known(&env, &cwd, &key, state);
        let output = call(&mut host);
        for warning in host.take_warnings() {
            out.warn(&warning);
        }
        output
    }

    fn boot(&mut self, target: &Target<'_, NoHostArgs>, out: &mut Out) -> anyhow::Result<BootView> {
        let cwd = target.cwd_or_current()?;
        let env = self.env_for(target);
        let (state, preview) = match self.session_state(target, &cwd)? {
            Some(state) => (state, None),
            None => {
                let key = project_key(&cwd);
                let state = ClaudeSessionState::new_chain("preview", PathBuf::new(), cwd, key);
                (state, Some(THIS_PROJECT.to_owned()))
            }
        };
        let (sections, warnings) = if preview.is_none() {
            crate::boot::sections(&env, &state)
        } else {
            crate::boot::preview_sections(&env, &state)
        }
        .map_err(|err| anyhow::anyhow!("the boot failed: {err}"))?;
        for warning in warnings {
            out.warn(&warning);
        }
        Ok(BootView {
            window_id: state.window_id().to_string(),
            sections,
            max_chars: crate::settings::load(&env, &state.cwd)
                .settings
                .boot_max_chars,
            preview,
        })
    }

    fn ledger(
        &mut self,
        target: &Target<'_, NoHostArgs>,
        _out: &mut Out,
    ) -> anyhow::Result<notesoup_core::history::SessionLedger> {
        self.read_ledger(target)
    }

    fn ledgers(
        &mut self,
        targets: &[Target<'_, NoHostArgs>],
        _out: &mut Out,
    ) -> Vec<anyhow::Result<notesoup_core::history::SessionLedger>> {
        let this = &*self;
        notesoup_cli::in_parallel(targets, |target| this.read_ledger(target))
    }

    fn budget(
        &mut self,
        _target: &Target<'_, NoHostArgs>,
        context_window: u64,
        _out: &mut Out,
    ) -> anyhow::Result<Option<notesoup_core::budget::BudgetPolicy>> {
        Ok(Some(crate::budget::policy(
            context_window,
            &self.env.budget,
        )))
    }

    fn sessions(
        &mut self,
        target: &Target<'_, NoHostArgs>,
        _out: &mut Out,
    ) -> anyhow::Result<Vec<String>> {
        let cwd = target.cwd_or_current()?;
        let key = project_key(&cwd);
        let Some(data) = self.env.data_dir() else {
            return Ok(Vec::new());
        };
        let records = project_records(&data, &key).with_context(|| data.display().to_string())?;
        // A `/clear` chain is one session: its last record, listed when the
        // chain began.
        let mut chains: std::collections::BTreeMap<
            String,
            (std::time::SystemTime, std::time::SystemTime, String),
        > = std::collections::BTreeMap::new();
        for (touched, state) in records {
            let chain = chains.entry(state.notes_session_id.clone()).or_insert((
                touched,
                touched,
                state.session_id.clone(),
            ));
            chain.0 = chain.0.min(touched);
            if touched >= chain.1 {
                chain.1 = touched;
                chain.2 = state.session_id.clone();
            }
        }
        let mut found: Vec<_> = chains.into_values().collect();
        found.sort();
        Ok(found.into_iter().map(|(_, _, id)| id).collect())
    }

    fn dreamer(
        &mut self,
        args: ClaudeDreamerArgs,
        timeout: Duration,
        _out: &mut Out,
    ) -> anyhow::Result<HostDreamer> {
        let notesoup = std::env::current_exe().context("cannot find the notesoup binary")?;
        let claude = DreamerSetting::executable(
            args.claude,
            std::env::var(crate::dream::CLAUDE_VAR).ok(),
            "claude",
        );
        // The `dreamer` setting of the project the command runs in.
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        let settings = crate::settings::load(&self.env, &cwd);
        Ok(HostDreamer {
            process: DreamerProcess {
                command: format!("{} -p", claude.display()),
                program: claude.clone(),
                install_hint: format!(
                    "install Claude Code, or name it with --claude PATH or {}",
                    crate::dream::CLAUDE_VAR
                ),
                search_path: std::env::var_os("PATH"),
                timeout,
            },
            runner: Box::new(ClaudeDreamer {
                claude,
                notesoup,
                timeout,
            }),
            setting: DreamerSetting {
                pattern: settings.settings.dreamer,
                warnings: settings.warnings,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use clap::{Parser, ValueEnum};

    use super::*;

    fn hook_event_of(args: &[&str]) -> Option<Event> {
        hook_event(args.iter().map(std::ffi::OsString::from))
    }

    #[test]
    fn a_hook_is_read_as_clap_reads_it() {
        for event in Event::value_variants() {
            let value = event.to_possible_value().expect("every event has a name");
            for name in value.get_name_and_aliases() {
                let read = hook_event_of(&["hook", name]);
                assert_eq!(read, Some(*event), "{name}");
                let parsed = Cli::try_parse_from(["notesoup", "hook", name]).expect(name);
                assert!(
                    matches!(parsed.command, Command::Hook { event: e } if Some(e) == read),
                    "{name}"
                );
            }
        }
    }

    #[test]
    fn anything_but_hook_and_an_event_goes_to_clap() {
        for args in [
            &[][..],
            &["hook"],
            &["hook", "--help"],
            &["hook", "SessionStart"],
            &["hook", "session-start", "--help"],
            &["hook", "session-start", "extra"],
            &["mcp"],
            &["hooks", "session-start"],
            &["notes", "list"],
        ] {
            assert_eq!(hook_event_of(args), None, "{args:?}");
        }
    }
}
