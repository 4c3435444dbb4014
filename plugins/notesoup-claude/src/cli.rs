//! The `notesoup` command line: `mcp`, `hook <event>`, and the human
//! commands `notes`, `boot`, `history`, `doctor` and `dream`.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use clap::{Args, Parser, Subcommand};
use notesoup_core::dream::{DreamOutput, OutputLine, Stream};
use notesoup_core::history::History;
use notesoup_core::notes::project_key;
use notesoup_core::tools::history::{history_list, history_read, history_search, history_windows};
use notesoup_core::tools::{ToolOutput, parse_arguments};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use crate::env::HostEnv;
use crate::hook::{self, io::Event};
use crate::mcp::protocol::{ServerInfo, serve};
use crate::mcp::tools::NotesoupTools;
use crate::state::{SessionState, StateDir};
use crate::transcript::decode::{ChainFile, decode_chain};

/// The MCP server's name and version.
pub const SERVER_INFO: ServerInfo = ServerInfo {
    name: "notesoup",
    version: env!("CARGO_PKG_VERSION"),
};

/// notesoup for Claude Code: the MCP server, the hook handler, and a command
/// line over the same notes and history.
#[derive(Debug, Parser)]
#[command(name = "notesoup", version)]
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
    /// Print the boot of this project's latest session window (or of a new one).
    Boot(SessionArgs),
    /// Page, search and read a session's history (its whole /clear chain).
    History(HistoryArgs),
    /// Check the notes home without changing anything; exit 1 on findings.
    Doctor(DoctorArgs),
}

/// Which session a command looks at.
#[derive(Debug, Args)]
struct SessionArgs {
    /// The project directory (default: the current directory).
    #[arg(long)]
    cwd: Option<PathBuf>,
    /// A Claude session id (default: the project's latest session).
    #[arg(long)]
    session: Option<String>,
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
    /// Only these roles (user, assistant, tool, context).
    #[arg(long = "role")]
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
        let mut put = |key: &str, value: Value| {
            if !value.is_null() {
                params.insert(key.to_owned(), value);
            }
        };
        put("limit", json!(self.limit));
        if !self.roles.is_empty() {
            put("roles", json!(self.roles));
        }
        put("before", json!(self.before));
        put("after", json!(self.after));
        put("window_id", json!(self.window_id));
        put("max_chars_per_item", json!(self.max_chars));
        Value::Object(params)
    }
}

#[derive(Debug, Args)]
struct DoctorArgs {
    /// The notes home (default: the notes root).
    #[arg(long)]
    notes_home: Option<PathBuf>,
}

/// Runs the command line; returns the process exit code.
pub fn run(cli: Cli, env: HostEnv) -> i32 {
    match cli.command {
        Command::Mcp => run_mcp(env),
        Command::Hook { event } => run_hook(event, &env),
        Command::Boot(args) => report(boot(&env, &args)),
        Command::History(args) => report(history(&env, args)),
        Command::Doctor(args) => doctor(&env, args),
    }
}

fn run_mcp(env: HostEnv) -> i32 {
    let project_dir = env
        .project_dir
        .clone()
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("."));
    let mut tools = NotesoupTools::new(env, project_dir);
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    match serve(stdin.lock(), stdout.lock(), &SERVER_INFO, &mut tools) {
        Ok(()) => 0,
        Err(err) => {
            eprintln!("notesoup mcp: {err}");
            1
        }
    }
}

fn run_hook(event: Event, env: &HostEnv) -> i32 {
    let mut stdin = Vec::new();
    let output = match std::io::stdin().read_to_end(&mut stdin) {
        Ok(_) => hook::run(event, &stdin, env),
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

/// Prints a command's text: success on stdout (exit 0), failure on stderr
/// (exit 1).
fn report(result: Result<String, String>) -> i32 {
    match result {
        Ok(text) => {
            println!("{}", text.trim_end());
            0
        }
        Err(text) => {
            eprintln!("{}", text.trim_end());
            1
        }
    }
}

/// A tool result as a command's result: refusals fail.
fn tool_result(output: ToolOutput) -> Result<String, String> {
    if output.is_error {
        Err(output.text)
    } else {
        Ok(output.text)
    }
}

fn cwd_of(args: &SessionArgs) -> Result<PathBuf, String> {
    match &args.cwd {
        Some(cwd) => Ok(cwd.clone()),
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

fn boot(env: &HostEnv, args: &SessionArgs) -> Result<String, String> {
    let cwd = cwd_of(args)?;
    let state = match session_state(env, args, &cwd)? {
        Some(state) => state,
        None => SessionState::new_chain("preview", PathBuf::new(), cwd.clone(), project_key(&cwd)),
    };
    crate::boot::render(env, &state).map_err(|err| format!("notesoup: Notes boot failed: {err}"))
}

fn history(env: &HostEnv, args: HistoryArgs) -> Result<String, String> {
    let (notes_session, files) = match &args.transcript {
        Some(path) => {
            let session = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            (
                session.clone(),
                vec![ChainFile {
                    session_id: session,
                    path: path.clone(),
                }],
            )
        }
        None => {
            let cwd = cwd_of(&args.session)?;
            let state = session_state(env, &args.session, &cwd)?.ok_or(
                "notesoup: no Claude Code session is recorded for this project; pass --session or --transcript",
            )?;
            let files = state
                .transcripts()
                .into_iter()
                .map(|link| ChainFile {
                    session_id: link.session_id,
                    path: link.transcript_path,
                })
                .collect();
            (state.notes_session_id, files)
        }
    };
    let transcript =
        decode_chain(&notes_session, &files).map_err(|err| format!("notesoup: {err}"))?;
    let history = History::new(transcript).map_err(|err| format!("notesoup: {err}"))?;
    let output = match args.command {
        HistoryCommand::Windows => {
            run_tool(Value::Object(Map::new()), |p| history_windows(&history, p))
        }
        HistoryCommand::List(page) => {
            run_tool(page.into_params(Map::new()), |p| history_list(&history, p))
        }
        HistoryCommand::Search { query, page } => {
            let mut extra = Map::new();
            extra.insert("query".into(), json!(query));
            run_tool(page.into_params(extra), |p| history_search(&history, p))
        }
        HistoryCommand::Read { seq, offset, limit } => {
            let mut params = json!({ "seq": seq });
            if let Some(offset) = offset {
                params["offset_chars"] = json!(offset);
            }
            if let Some(limit) = limit {
                params["limit_chars"] = json!(limit);
            }
            run_tool(params, |p| history_read(&history, p))
        }
    };
    tool_result(output)
}

/// Checks the arguments the way the tools do, then runs the operation.
fn run_tool<P: DeserializeOwned>(
    arguments: Value,
    op: impl FnOnce(&P) -> ToolOutput,
) -> ToolOutput {
    match parse_arguments::<P>(arguments) {
        Ok(params) => op(&params),
        Err(refusal) => ToolOutput::refusal(&refusal),
    }
}

fn doctor(env: &HostEnv, args: DoctorArgs) -> i32 {
    let Some(home) = args.notes_home.or_else(|| env.notes_root.clone()) else {
        eprintln!(
            "dream doctor: the notes root is unknown: pass --notes-home or set PI_NOTES_HOME"
        );
        return 1;
    };
    print_output(&notesoup_core::dream::doctor(&home).output())
}

/// Prints a dream command's lines to their streams; returns its exit code.
fn print_output(output: &DreamOutput) -> i32 {
    for OutputLine { stream, text } in &output.lines {
        match stream {
            Stream::Stdout => println!("{text}"),
            Stream::Stderr => eprintln!("{text}"),
        }
    }
    output.exit_code
}
