//! The `notesoup` command line: `mcp`, `hook <event>`, and the human
//! commands `notes`, `boot`, `history`, `doctor` and `dream`.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use clap::{Args, CommandFactory, Parser, Subcommand};
use notesoup_core::dream::{
    DEFAULT_MIN_HOURS, DEFAULT_MIN_SESSIONS, DreamOptions, DreamOutput, DreamTools, OutputLine,
    Stream, run_dream_with,
};
use notesoup_core::notes::{Edit, MAX_NOTE_BYTES, UpdateRequest, is_blank_body, project_key};
use notesoup_core::plumbing::{MAX_LINE_BYTES, read_capped};
use notesoup_core::tools::{ToolHost as _, ToolOutput, call_tool};
use serde_json::{Map, Value, json};

use crate::dream::{ClaudeDreamer, claude_executable};
use crate::env::HostEnv;
use crate::hook::{self, io::Event};
use crate::mcp::{McpTools, ServerInfo, serve};
use crate::state::{SessionState, StateDir};
use crate::tools::ClaudeTools;
use crate::transcript::scan::session_id_of;

/// The MCP server's name and version.
pub const SERVER_INFO: ServerInfo = ServerInfo {
    name: "notesoup",
    version: env!("CARGO_PKG_VERSION"),
};

/// What `--version` prints after the name: the plugin's version and the
/// Claude Code release it is verified against (the reference tests' pin).
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (verified with Claude Code 2.1.332)"
);

/// notesoup for Claude Code: the MCP server, the hook handler, and a command
/// line over the same notes and history.
#[derive(Debug, Parser)]
#[command(name = "notesoup", version = VERSION)]
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
    /// List, read, search and write notes as the model sees them.
    Notes(NotesArgs),
    /// Print the boot of this project's latest session window (or of a new one).
    Boot(BootArgs),
    /// Page, search and read a session's history (its whole /clear chain).
    History(HistoryArgs),
    /// The Claude sessions notesoup recorded for this project, newest first.
    Sessions(SessionArgs),
    /// Check the notes home without changing anything; exit 1 on findings.
    Doctor(DoctorArgs),
    /// Tidy the notes home with a headless Claude Code dreamer (gated, locked, audited with Git).
    Dream(DreamArgs),
    /// Print a shell completion script for notesoup.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print notesoup's man page (roff).
    Man,
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
    DreamTools {
        /// The notes home the tools are jailed to.
        #[arg(long)]
        notes_home: PathBuf,
    },
}

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
struct DreamArgs {
    #[command(subcommand)]
    command: Option<DreamCommand>,
    /// The notes home (default: the notes root).
    #[arg(long)]
    notes_home: Option<PathBuf>,
    /// Hours since the last dream before another may run.
    #[arg(long, default_value_t = DEFAULT_MIN_HOURS)]
    min_hours: f64,
    /// Session homes changed since the last dream before another may run.
    #[arg(long, default_value_t = DEFAULT_MIN_SESSIONS)]
    min_sessions: usize,
    /// Run even when the time and material gates say no (never past the lock).
    #[arg(long)]
    force: bool,
    /// The model the dreamer runs on (claude --model).
    #[arg(long)]
    dreamer: Option<String>,
    /// A playbook file instead of the packaged one.
    #[arg(long)]
    playbook: Option<PathBuf>,
    /// Stop the dreamer after this many seconds; the run then fails, the
    /// lock released.
    #[arg(long, default_value_t = crate::dream::DEFAULT_TIMEOUT.as_secs())]
    timeout: u64,
}

#[derive(Debug, Subcommand)]
enum DreamCommand {
    /// Check the notes home without changing anything; exit 1 on findings.
    Doctor(DoctorArgs),
}

/// Which session a command looks at. Accepted before or after the
/// subcommand (`notesoup notes --cwd P list` or `notesoup notes list --cwd P`).
#[derive(Debug, Args)]
struct SessionArgs {
    /// The project directory (default: the current directory).
    #[arg(long, global = true)]
    cwd: Option<PathBuf>,
    /// A Claude session id (default: the project's latest session).
    #[arg(long, global = true)]
    session: Option<String>,
    /// Print the tool's compact JSON instead of its text.
    #[arg(long, global = true)]
    json: bool,
}

#[derive(Debug, Args)]
struct BootArgs {
    #[command(flatten)]
    session: SessionArgs,
    /// Print each section's size in characters and estimated tokens instead
    /// of the boot.
    #[arg(long)]
    stats: bool,
}

#[derive(Debug, Args)]
struct NotesArgs {
    #[command(flatten)]
    session: SessionArgs,
    #[command(subcommand)]
    command: NotesCommand,
}

#[derive(Debug, Subcommand)]
enum NotesCommand {
    /// Notes, most recently updated first.
    List {
        /// A glob over addresses, e.g. "@project/**".
        pattern: Option<String>,
        /// List at most this many.
        #[arg(long)]
        limit: Option<u32>,
        /// List crumpled notes instead of live ones.
        #[arg(long)]
        wastebasket: bool,
    },
    /// One note's metadata and body.
    Read {
        /// The note's address, e.g. "@project/MAP.md" or "checkpoint.md".
        address: String,
        /// Start here (code points; negative counts from the end).
        #[arg(long, allow_negative_numbers = true)]
        offset: Option<i64>,
        /// Read at most this many code points.
        #[arg(long)]
        limit: Option<u32>,
    },
    /// Notes whose lines contain any of the queries.
    Search {
        /// Literal text to find (case-insensitive).
        #[arg(required = true)]
        query: Vec<String>,
        /// A glob over addresses.
        #[arg(long)]
        pattern: Option<String>,
        /// At most this many notes.
        #[arg(long)]
        limit: Option<u32>,
        /// At most this many matching lines per note.
        #[arg(long)]
        max_matches_per_file: Option<u32>,
        /// Search crumpled notes instead of live ones.
        #[arg(long)]
        wastebasket: bool,
    },
    /// Create a note or replace its body (the content, else stdin).
    Write {
        /// The note's address.
        address: String,
        /// The new body; read from stdin when omitted.
        content: Option<String>,
        /// Who the content comes from: user (the default here), self or external.
        #[arg(long, default_value = "user")]
        origin: String,
        /// Write a blank body (refused otherwise, so an empty stdin never
        /// wipes a note by accident): blank is nothing but whitespace once a
        /// byte order mark and any frontmatter block are stripped.
        #[arg(long)]
        allow_empty: bool,
    },
    /// Edit a note's body: each --old text (exactly once, unless --all) becomes
    /// the --new text at the same position.
    Update {
        /// The note's address.
        address: String,
        /// Text to replace (repeat with --new for several edits, in order).
        #[arg(long = "old", required = true)]
        old: Vec<String>,
        /// Its replacement.
        #[arg(long = "new", required = true)]
        new: Vec<String>,
        /// Replace every occurrence of each --old text.
        #[arg(long)]
        all: bool,
        /// Allow edits that leave the body blank (refused otherwise).
        #[arg(long)]
        allow_empty: bool,
    },
    /// Crumple a note: it leaves the boot, list and search, and stays
    /// readable by address.
    Crumple {
        /// The note's address.
        address: String,
    },
    /// Smooth a crumpled note back.
    Uncrumple {
        /// The note's address.
        address: String,
    },
    /// Move a note to another address with all its metadata.
    Rename {
        /// The note's address.
        address: String,
        /// Its new address.
        to: String,
    },
}

#[derive(Debug, Args)]
struct HistoryArgs {
    #[command(flatten)]
    session: SessionArgs,
    /// Read one transcript file instead of a recorded session.
    #[arg(long, conflicts_with = "session")]
    transcript: Option<PathBuf>,
    #[command(subcommand)]
    command: HistoryCommand,
}

#[derive(Debug, Subcommand)]
enum HistoryCommand {
    /// The session's context windows.
    Windows,
    /// One page of events (the conversation view unless --role is given).
    List(PageArgs),
    /// Events containing any of the queries.
    Search {
        /// Literal text to find (case-insensitive).
        #[arg(required = true)]
        query: Vec<String>,
        #[command(flatten)]
        page: PageArgs,
    },
    /// One event by seq.
    Read {
        /// The event's seq.
        seq: u32,
        /// Start here (code points; negative counts from the end).
        #[arg(long, allow_negative_numbers = true)]
        offset: Option<i64>,
        /// Read at most this many code points.
        #[arg(long)]
        limit: Option<u32>,
    },
}

#[derive(Debug, Args)]
struct PageArgs {
    /// Events per page.
    #[arg(long)]
    limit: Option<u32>,
    /// Only these roles (user, assistant, tool, context): repeated, or
    /// comma-separated.
    #[arg(long = "role", value_delimiter = ',')]
    roles: Vec<String>,
    /// Only seqs below this.
    #[arg(long)]
    before: Option<u32>,
    /// Only seqs above this.
    #[arg(long)]
    after: Option<u32>,
    /// Only this window (or "@previous").
    #[arg(long)]
    window_id: Option<String>,
    /// Preview length per event.
    #[arg(long)]
    max_chars: Option<u32>,
}

impl PageArgs {
    fn into_params(self, extra: Map<String, Value>) -> Value {
        let mut params = extra;
        put(&mut params, "limit", json!(self.limit));
        if !self.roles.is_empty() {
            put(&mut params, "roles", json!(self.roles));
        }
        put(&mut params, "before", json!(self.before));
        put(&mut params, "after", json!(self.after));
        put(&mut params, "window_id", json!(self.window_id));
        put(&mut params, "max_chars_per_item", json!(self.max_chars));
        Value::Object(params)
    }
}

#[derive(Debug, Args)]
struct DoctorArgs {
    /// The notes home (default: the notes root).
    #[arg(long, global = true)]
    notes_home: Option<PathBuf>,
    /// Print the findings as JSON: {"home", "ok", "findings": [{"path", "message"}]}.
    #[arg(long)]
    json: bool,
    #[command(subcommand)]
    command: Option<DoctorCommand>,
}

#[derive(Debug, Subcommand)]
enum DoctorCommand {
    /// List the temporary files interrupted writes left (older than a minute,
    /// their writer gone); remove them only with --apply.
    Clean {
        /// Remove them (default: a dry run that only lists them).
        #[arg(long)]
        apply: bool,
    },
}

/// Runs the command line; returns the process exit code.
pub fn run(cli: Cli, env: HostEnv) -> i32 {
    match cli.command {
        Command::Mcp => run_mcp(env),
        Command::Hook { event } => run_hook(event, &env),
        Command::Mod { op } => run_mod(op, &env),
        Command::Notes(args) => report(notes(&env, args)),
        Command::Boot(args) => report(boot(&env, &args)),
        Command::History(args) => report(history(&env, args)),
        Command::Sessions(args) => report(sessions(&env, &args)),
        Command::Doctor(args) => doctor(&env, args),
        Command::Dream(args) => dream(&env, args),
        Command::InstallPlugin { dir, force } => report(install_plugin(&env, dir, force)),
        Command::Completions { shell } => {
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "notesoup", &mut out);
            report(Ok(String::from_utf8_lossy(&out).into_owned()))
        }
        Command::Man => {
            let mut out = Vec::new();
            match clap_mangen::Man::new(Cli::command()).render(&mut out) {
                Ok(()) => report(Ok(String::from_utf8_lossy(&out).into_owned())),
                Err(err) => report(Err(format!("notesoup: {err}"))),
            }
        }
        Command::DreamTools { notes_home } => serve_tools(DreamTools::new(notes_home)),
    }
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
    let output = match read_capped(std::io::stdin().lock(), MAX_LINE_BYTES) {
        Ok(Some(stdin)) => hook::run(event, &stdin, env),
        Ok(None) => hook::io::HookOutput::notice(format!(
            "notesoup: the hook input is over {MAX_LINE_BYTES} bytes; it was not read"
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
    let line = match read_capped(std::io::stdin().lock(), MAX_LINE_BYTES) {
        Ok(Some(stdin)) => hook::reset::run(op, &stdin, env),
        Ok(None) => refused(format!(
            "the request is over {MAX_LINE_BYTES} bytes; it was not read"
        )),
        Err(err) => refused(format!("could not read the request: {err}")),
    };
    let mut stdout = std::io::stdout().lock();
    // A closed stdout leaves nothing to report to.
    let _ = stdout.write_all(line.as_bytes());
    let _ = stdout.flush();
    0
}

/// Prints a command's text: success on stdout (exit 0), failure on stderr
/// (exit 1). A reader that went away (`| head`) ends the output quietly.
fn report(result: Result<String, String>) -> i32 {
    match result {
        Ok(text) => {
            print_stdout(&text);
            0
        }
        Err(text) => {
            eprintln!("{}", text.trim_end());
            1
        }
    }
}

/// `text` and a newline on stdout; a closed pipe is not an error.
fn print_stdout(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{}", text.trim_end()).and_then(|()| stdout.flush());
}

/// A tool result as a command's result, as text (its continuation hints
/// in this command line's words) or as the tool's compact JSON: refusals
/// fail.
fn tool_result(output: ToolOutput, as_json: bool) -> Result<String, String> {
    let shown = if as_json {
        output.json.into_string()
    } else {
        cli_hints(&output.text)
    };
    if output.is_error {
        Err(shown)
    } else {
        Ok(shown)
    }
}

fn cwd_of(args: &SessionArgs) -> Result<PathBuf, String> {
    match &args.cwd {
        Some(cwd) if cwd.is_dir() => Ok(cwd.clone()),
        Some(cwd) => Err(format!(
            "notesoup: --cwd {}: no such directory",
            cwd.display()
        )),
        None => std::env::current_dir().map_err(|err| format!("no current directory: {err}")),
    }
}

/// The session a command means: `--session`, else the project's latest.
fn session_state(
    env: &HostEnv,
    args: &SessionArgs,
    cwd: &Path,
) -> Result<Option<SessionState>, String> {
    let Some(data) = env.data_dir() else {
        return Ok(None);
    };
    let states = StateDir::new(data);
    match &args.session {
        Some(id) => states
            .load(id)
            .map_err(|e| e.to_string())?
            .map(Some)
            .ok_or_else(|| format!("notesoup: no session {id} is recorded")),
        None => states.latest(&project_key(cwd)).map_err(|e| e.to_string()),
    }
}

/// Puts `value` under `key` unless it is null or `false`.
fn put(params: &mut Map<String, Value>, key: &str, value: Value) {
    if !value.is_null() && value != Value::Bool(false) {
        params.insert(key.to_owned(), value);
    }
}

fn notes(env: &HostEnv, args: NotesArgs) -> Result<String, String> {
    let cwd = cwd_of(&args.session)?;
    let state = session_state(env, &args.session, &cwd)?;
    let key = state
        .as_ref()
        .map_or_else(|| project_key(&cwd), |s| s.project_key.clone());
    let mut params = Map::new();
    // An update to check before it is made: would it leave a blank body?
    let mut blank_check = None;
    let name = match args.command {
        NotesCommand::List {
            pattern,
            limit,
            wastebasket,
        } => {
            put(&mut params, "pattern", json!(pattern));
            put(&mut params, "limit", json!(limit));
            put(&mut params, "wastebasket", json!(wastebasket));
            "notes_list"
        }
        NotesCommand::Read {
            address,
            offset,
            limit,
        } => {
            put(&mut params, "address", json!(address));
            put(&mut params, "offset_chars", json!(offset));
            put(&mut params, "limit_chars", json!(limit));
            "notes_read"
        }
        NotesCommand::Search {
            query,
            pattern,
            limit,
            max_matches_per_file,
            wastebasket,
        } => {
            put(&mut params, "query", json!(query));
            put(&mut params, "pattern", json!(pattern));
            put(&mut params, "limit", json!(limit));
            put(
                &mut params,
                "max_matches_per_file",
                json!(max_matches_per_file),
            );
            put(&mut params, "wastebasket", json!(wastebasket));
            "notes_search"
        }
        NotesCommand::Write {
            address,
            content,
            origin,
            allow_empty,
        } => {
            let content = match content {
                Some(content) => content,
                None => {
                    let stdin = std::io::stdin();
                    if stdin.is_terminal() {
                        eprintln!(
                            "notesoup: reading the content of {address} from stdin (end with Ctrl-D)"
                        );
                    }
                    // A note holds at most MAX_NOTE_BYTES: nothing past
                    // that is read.
                    let bytes = read_capped(stdin.lock(), MAX_NOTE_BYTES)
                        .map_err(|err| {
                            format!("notesoup: could not read the content from stdin: {err}")
                        })?
                        .ok_or_else(|| {
                            format!(
                                "notesoup: the content on stdin is over {MAX_NOTE_BYTES} bytes, the most a note holds; nothing was written"
                            )
                        })?;
                    String::from_utf8(bytes).map_err(|err| {
                        format!("notesoup: the content on stdin is not UTF-8: {err}")
                    })?
                }
            };
            if is_blank_body(&content) && !allow_empty {
                return Err(blank_refusal(&address, "the content"));
            }
            put(&mut params, "address", json!(address));
            put(&mut params, "content", json!(content));
            put(&mut params, "origin", json!(origin));
            "notes_write"
        }
        NotesCommand::Update {
            address,
            old,
            new,
            all,
            allow_empty,
        } => {
            if old.len() != new.len() {
                return Err(format!(
                    "notesoup: every --old needs its --new ({} --old, {} --new)",
                    old.len(),
                    new.len()
                ));
            }
            let edits: Vec<Value> = old
                .iter()
                .zip(&new)
                .map(|(old, new)| json!({"oldText": old, "newText": new}))
                .collect();
            if !allow_empty {
                let request = UpdateRequest {
                    edits: old
                        .into_iter()
                        .zip(new)
                        .map(|(old_text, new_text)| Edit { old_text, new_text })
                        .collect(),
                    origin: None,
                    crumpled: None,
                    replace_all: all,
                };
                blank_check = Some((address.clone(), request));
            }
            put(&mut params, "address", json!(address));
            put(&mut params, "edits", json!(edits));
            put(&mut params, "replace_all", json!(all));
            "notes_update"
        }
        NotesCommand::Crumple { address } => {
            put(&mut params, "address", json!(address));
            params.insert("crumpled".into(), json!(true));
            "notes_update"
        }
        NotesCommand::Uncrumple { address } => {
            put(&mut params, "address", json!(address));
            params.insert("crumpled".into(), json!(false));
            "notes_update"
        }
        NotesCommand::Rename { address, to } => {
            put(&mut params, "address", json!(address));
            put(&mut params, "rename_to", json!(to));
            "notes_update"
        }
    };
    let arguments = Value::Object(params);
    let mut host = ClaudeTools::known(env, &cwd, &key, state);
    if let Some((address, request)) = blank_check {
        // A refusal to open the store, a missing note or an edit that does
        // not apply is left to the update itself to report.
        let edited = host
            .notes()
            .ok()
            .and_then(|store| store.edited_body(&address, &request).ok().flatten());
        if edited.is_some_and(|body| is_blank_body(&body)) {
            return Err(blank_refusal(&address, "these edits"));
        }
    }
    let output = call_tool(&mut host, name, arguments);
    for warning in host.take_warnings() {
        eprintln!("{warning}");
    }
    tool_result(output, args.session.json)
}

/// Why `what` is not written to the note at `address`: it would leave the
/// body blank.
fn blank_refusal(address: &str, what: &str) -> String {
    format!(
        "notesoup: {what} would leave {address} blank (nothing but whitespace once a byte order mark and any frontmatter are stripped); nothing was written (pass --allow-empty to write an empty note)"
    )
}

fn boot(env: &HostEnv, args: &BootArgs) -> Result<String, String> {
    let cwd = cwd_of(&args.session)?;
    let (state, recorded) = match session_state(env, &args.session, &cwd)? {
        Some(state) => (state, true),
        None => {
            eprintln!(
                "notesoup: no Claude Code session is recorded for this project; this is a preview of a new chain's first boot (window claude:preview:1), with no session notes"
            );
            let preview =
                SessionState::new_chain("preview", PathBuf::new(), cwd.clone(), project_key(&cwd));
            (preview, false)
        }
    };
    let (sections, warnings) = if recorded {
        crate::boot::sections(env, &state)
    } else {
        crate::boot::preview_sections(env, &state)
    }
    .map_err(|err| format!("notesoup: Notes boot failed: {err}"))?;
    for warning in warnings {
        eprintln!("{warning}");
    }
    if args.session.json {
        let sizes: Map<String, Value> = sections
            .sizes()
            .into_iter()
            .map(|(name, chars)| (name, json!(chars)))
            .collect();
        return Ok(
            json!({"window": state.window_id().to_string(), "boot": sections.join(), "sectionChars": sizes})
                .to_string(),
        );
    }
    if !args.stats {
        return Ok(sections.join());
    }
    let total = sections.join().chars().count();
    Ok(boot_stats(&sections.sizes(), total))
}

/// One line per section, then the whole boot (sections and the blank lines
/// between them): characters and estimated tokens, a token per four
/// characters rounded up (Pi's estimate; Claude Code counts its own).
fn boot_stats(sizes: &[(String, usize)], total: usize) -> String {
    let tokens = |chars: usize| chars.div_ceil(4);
    let mut out = format!("{:<16} {:>8} {:>8}\n", "section", "chars", "~tokens");
    for (name, chars) in sizes {
        out.push_str(&format!("{name:<16} {chars:>8} {:>8}\n", tokens(*chars)));
    }
    out.push_str(&format!(
        "{:<16} {total:>8} {:>8}\n",
        "whole boot",
        tokens(total)
    ));
    out
}

fn install_plugin(env: &HostEnv, dir: Option<PathBuf>, force: bool) -> Result<String, String> {
    let dir = dir
        .or_else(|| {
            crate::install::default_dir(env, std::env::var_os("XDG_DATA_HOME").map(PathBuf::from))
        })
        .ok_or("notesoup: no home directory is known; pass --dir")?;
    let binary = std::env::current_exe()
        .map_err(|err| format!("notesoup: cannot find this binary: {err}"))?;
    crate::install::install(&dir, &binary, force)
        .map_err(|err| format!("notesoup: install-plugin: {err}"))?;
    Ok(format!(
        "installed the notesoup marketplace in {dir}\nadd it to Claude Code with:\n  claude plugin marketplace add {dir}\n  claude plugin install notesoup@notesoup\n  (optional automatic reset) claude plugin install notesoup-reset@notesoup",
        dir = dir.display()
    ))
}

/// The tools' continuation hints as the flags to type: `offset_chars=N`
/// becomes `--offset N`, `→ older: {"before":N}` becomes `→ older: --before
/// N`, an expand hint its `history list` flags, "narrow with pattern"
/// becomes "narrow with --pattern". The MCP tools keep their own wording.
pub fn cli_hints(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (index, line) in text.split('\n').enumerate() {
        if index > 0 {
            out.push('\n');
        }
        out.push_str(&cli_hint_line(line));
    }
    out
}

fn cli_hint_line(line: &str) -> String {
    let mut line = line.replace("narrow with pattern", "narrow with --pattern");
    if let Some(at) = line.find("Use offset_chars=") {
        let rest = &line[at + "Use offset_chars=".len()..];
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        if !digits.is_empty() {
            let after = &rest[digits.len()..];
            line = format!("{}Use --offset {digits}{after}", &line[..at]);
        }
    }
    for (arrow, key, flag) in [
        ("→ older: ", "before", "--before"),
        ("→ newer: ", "after", "--after"),
    ] {
        if let Some(at) = line.find(arrow) {
            let json = &line[at + arrow.len()..];
            if let Ok(Value::Object(hint)) = serde_json::from_str::<Value>(json)
                && let Some(seq) = hint.get(key).and_then(Value::as_u64)
            {
                line = format!("{}{arrow}{flag} {seq}", &line[..at]);
            }
        }
    }
    let arrow = "→ expand: ";
    if let Some(at) = line.find(arrow)
        && let Ok(Value::Object(hint)) = serde_json::from_str::<Value>(&line[at + arrow.len()..])
    {
        let mut flags = Vec::new();
        for key in ["after", "before"] {
            if let Some(seq) = hint.get(key).and_then(Value::as_u64) {
                flags.push(format!("--{key} {seq}"));
            }
        }
        if let Some(Value::Array(roles)) = hint.get("roles") {
            let roles: Vec<&str> = roles.iter().filter_map(Value::as_str).collect();
            flags.push(format!("--role {}", roles.join(",")));
        }
        line = format!("{}{arrow}history list {}", &line[..at], flags.join(" "));
    }
    line
}

/// One line per recorded session of the project: id, last touched,
/// live window, notes session (the chain's first session).
fn sessions(env: &HostEnv, args: &SessionArgs) -> Result<String, String> {
    let cwd = cwd_of(args)?;
    let key = project_key(&cwd);
    let Some(data) = env.data_dir() else {
        return Err("notesoup: no notesoup plugin data directory was found".to_owned());
    };
    let states = StateDir::new(&data);
    let mut found: Vec<(std::time::SystemTime, SessionState)> = Vec::new();
    let entries = match std::fs::read_dir(data.join("sessions")) {
        Ok(entries) => entries.filter_map(Result::ok).collect(),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(err) => return Err(format!("notesoup: {}: {err}", data.display())),
    };
    for entry in entries {
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

fn history(env: &HostEnv, args: HistoryArgs) -> Result<String, String> {
    let cwd = cwd_of(&args.session)?;
    let state = match &args.transcript {
        Some(path) => {
            let named = session_id_of(path)
                .map_err(|err| format!("notesoup: {}: {err}", path.display()))?;
            let session = named
                .or_else(|| path.file_stem().map(|s| s.to_string_lossy().into_owned()))
                .unwrap_or_default();
            SessionState::new_chain(&session, path.clone(), cwd.clone(), project_key(&cwd))
        }
        None => session_state(env, &args.session, &cwd)?.ok_or(
            "notesoup: no Claude Code session is recorded for this project; pass --session or --transcript",
        )?,
    };
    let (name, params) = match args.command {
        HistoryCommand::Windows => ("history_windows", Value::Object(Map::new())),
        HistoryCommand::List(page) => ("history_list", page.into_params(Map::new())),
        HistoryCommand::Search { query, page } => {
            let mut extra = Map::new();
            extra.insert("query".into(), json!(query));
            ("history_search", page.into_params(extra))
        }
        HistoryCommand::Read { seq, offset, limit } => {
            let mut params = Map::new();
            put(&mut params, "seq", json!(seq));
            put(&mut params, "offset_chars", json!(offset));
            put(&mut params, "limit_chars", json!(limit));
            ("history_read", Value::Object(params))
        }
    };
    let key = state.project_key.clone();
    let mut host = ClaudeTools::known(env, &cwd, &key, Some(state));
    tool_result(call_tool(&mut host, name, params), args.session.json)
}

fn dream(env: &HostEnv, args: DreamArgs) -> i32 {
    if let Some(DreamCommand::Doctor(doctor_args)) = args.command {
        return doctor(env, doctor_args);
    }
    let Some(home) = args.notes_home.or_else(|| env.notes_root.clone()) else {
        eprintln!("dream: the notes root is unknown: pass --notes-home or set PI_NOTES_HOME");
        return 1;
    };
    let notesoup = match std::env::current_exe() {
        Ok(path) => path,
        Err(err) => {
            eprintln!("dream: cannot find the notesoup binary: {err}");
            return 1;
        }
    };
    let mut options = DreamOptions::new(home, jiff::Timestamp::now());
    options.min_hours = args.min_hours;
    options.min_sessions = args.min_sessions;
    options.force = args.force;
    // The flag wins, then the `dreamer` setting, then Claude Code's own
    // default model.
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let settings = crate::settings::load(env, &cwd);
    for warning in &settings.warnings {
        eprintln!("{warning}");
    }
    options.model_pattern = args.dreamer.or(settings.settings.dreamer);
    options.playbook = args.playbook;
    let mut dreamer = ClaudeDreamer {
        claude: claude_executable(|name| std::env::var(name).ok()),
        notesoup,
        timeout: std::time::Duration::from_secs(args.timeout.max(1)),
    };
    // Each line is shown as the run reaches it: the gates before the
    // dreamer starts, the report and audit after it ends.
    run_dream_with(&options, &mut dreamer, &mut print_line).exit_code
}

/// Prints one dream line to its stream.
fn print_line(line: &OutputLine) {
    match line.stream {
        Stream::Stdout => print_stdout(&line.text),
        Stream::Stderr => eprintln!("{}", line.text),
    }
}

fn doctor(env: &HostEnv, args: DoctorArgs) -> i32 {
    let Some(home) = args.notes_home.or_else(|| env.notes_root.clone()) else {
        eprintln!(
            "dream doctor: the notes root is unknown: pass --notes-home or set PI_NOTES_HOME"
        );
        return 1;
    };
    match args.command {
        Some(DoctorCommand::Clean { apply }) => print_output(
            &notesoup_core::dream::clean_temp_files(&home, apply, std::time::SystemTime::now())
                .output(),
        ),
        None if args.json => {
            let report = notesoup_core::dream::doctor(&home);
            let findings: Vec<Value> = report
                .findings
                .iter()
                .map(|finding| json!({"path": finding.path, "message": finding.message}))
                .collect();
            print_stdout(
                &json!({"home": report.home, "ok": findings.is_empty(), "findings": findings})
                    .to_string(),
            );
            report.exit_code()
        }
        None => print_output(&notesoup_core::dream::doctor(&home).output()),
    }
}

/// Prints a dream command's lines to their streams; returns its exit code.
fn print_output(output: &DreamOutput) -> i32 {
    output.lines.iter().for_each(print_line);
    output.exit_code
}

#[cfg(test)]
mod tests {
    use super::cli_hints;

    #[test]
    fn continuation_hints_read_as_flags() {
        assert_eq!(
            cli_hints("body\n\n[1200 more characters. Use offset_chars=12000 to continue.]"),
            "body\n\n[1200 more characters. Use --offset 12000 to continue.]"
        );
        assert_eq!(
            cli_hints("→ older: {\"before\":16}"),
            "→ older: --before 16"
        );
        assert_eq!(cli_hints("→ newer: {\"after\":40}"), "→ newer: --after 40");
        assert_eq!(
            cli_hints("\t→ expand: {\"after\":3,\"before\":9,\"roles\":[\"tool\",\"context\"]}"),
            "\t→ expand: history list --after 3 --before 9 --role tool,context"
        );
        assert_eq!(
            cli_hints("2 more matching notes omitted; narrow with pattern"),
            "2 more matching notes omitted; narrow with --pattern"
        );
        assert_eq!(cli_hints("→ older: not json"), "→ older: not json");
    }
}
