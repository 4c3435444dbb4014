//! The shared commands' command line, defined once with clap derive. A host
//! binary flattens [`SharedCommand`] into its own subcommands; the host's
//! few flags of its own (`S`: how its sessions are chosen, `D`: how its
//! dreamer is started) are flattened in under their own heading, so every
//! other flag, help text and value is the same on every binary.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use notesoup_core::dream::DreamOptions;
use notesoup_core::plumbing::DreamFlags;
use notesoup_core::sync::NotesSync;
use serde_json::{Map, Value};

/// The commands every host's binary has.
#[derive(Debug, Subcommand)]
pub enum SharedCommand<S: Args, D: Args> {
    /// List, read, search and write notes as the model sees them.
    Notes(NotesArgs<S>),
    /// Print the boot of a session's live window (without a session, a
    /// preview of a new session's first).
    Boot(BootArgs<S>),
    /// Page, search and read a session's history.
    History(HistoryArgs<S>),
    /// How a session's windows went: fill, why each ended, the notes written
    /// and what each fresh window spent getting back to work.
    Report(ReportArgs<S>),
    /// Check the notes home without changing anything; exit 1 on findings.
    Doctor(DoctorArgs),
    /// Sync the notes with a Git remote: commit this machine's notes, fetch,
    /// merge note by note, push (set up first with --remote URL).
    Sync(SyncArgs),
    /// Tidy the notes home with this host's agent as a headless dreamer
    /// holding only the jailed dream tools (gated, locked, audited with Git).
    Dream(DreamArgs<D>),
    /// Print a shell completion script for this binary.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print this binary's man page (roff), every command on one page.
    Man,
}

/// A host with no flags of its own for a command.
#[derive(Debug, Clone, Copy, Default, Args)]
pub struct NoHostArgs {}

/// The flags of a host's hidden `dream-tools` command, which serves the
/// dreamer's jailed tools to the dreamer its `dream` starts.
#[derive(Debug, Clone, Args)]
pub struct DreamToolsArgs {
    /// The notes home the tools are jailed to.
    #[arg(long, value_name = "DIR")]
    pub notes_home: PathBuf,
}

/// Where the session flags sort in a subcommand's help: after its own.
const SESSION_ORDER: usize = 900;

/// Which session a command looks at. Accepted before or after the
/// subcommand (`notes --cwd P list` or `notes list --cwd P`).
#[derive(Debug, Args)]
pub struct SessionArgs<S: Args> {
    /// The project directory (default: the session's own, else the current
    /// directory).
    #[arg(long, global = true, value_name = "DIR", display_order = SESSION_ORDER)]
    pub cwd: Option<PathBuf>,
    /// A session id, or a session file (default: the project's most recent
    /// session).
    #[arg(
        long,
        global = true,
        value_name = "ID|FILE",
        alias = "transcript",
        display_order = SESSION_ORDER + 1
    )]
    pub session: Option<String>,
    /// The notes root (default: $PI_NOTES_HOME, else ~/.agents/notes).
    #[arg(long, global = true, value_name = "DIR", display_order = SESSION_ORDER + 2)]
    pub notes_home: Option<PathBuf>,
    /// Print the compact JSON instead of the text.
    #[arg(long, global = true, display_order = SESSION_ORDER + 3)]
    pub json: bool,
    /// This host's own flags.
    #[command(flatten, next_help_heading = "Host options")]
    pub host: S,
}

/// `notes`.
#[derive(Debug, Args)]
pub struct NotesArgs<S: Args> {
    #[command(flatten)]
    pub session: SessionArgs<S>,
    #[command(subcommand)]
    pub command: NotesCommand,
}

/// `notes` subcommands: one notes tool each.
#[derive(Debug, Subcommand)]
pub enum NotesCommand {
    /// Every matching note, most recently updated first.
    List {
        /// A glob over addresses, e.g. "@project/**" (the same as
        /// --pattern).
        #[arg(value_name = "PATTERN", conflicts_with = "pattern")]
        glob: Option<String>,
        /// A glob over addresses: `*` within a segment, `**` across
        /// segments, `?` one character.
        #[arg(long)]
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
    /// Every note whose lines contain any of the queries, with its
    /// matching lines.
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
    /// Edit a note's body: each --old text (exactly once, unless --all)
    /// becomes the --new text at the same position.
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
    /// Delete a note for good (the agent can only crumple). Asks first on a
    /// terminal; a live note must be crumpled first unless --force.
    Delete {
        /// The note's address.
        address: String,
        /// Delete without asking (needed when stdin is not a terminal).
        #[arg(long, short = 'y')]
        yes: bool,
        /// Delete a live note too (otherwise only a crumpled one).
        #[arg(long)]
        force: bool,
    },
    /// Move a note to another address with all its metadata.
    Rename {
        /// The note's address.
        address: String,
        /// Its new address.
        to: String,
    },
}

/// `boot`.
#[derive(Debug, Args)]
pub struct BootArgs<S: Args> {
    /// Print each section's size in characters and estimated tokens instead
    /// of the boot (--json carries the sizes too).
    #[arg(long, conflicts_with = "json")]
    pub stats: bool,
    #[command(flatten)]
    pub session: SessionArgs<S>,
}

/// `report`.
#[derive(Debug, Args)]
pub struct ReportArgs<S: Args> {
    /// A session file (the same as --session FILE).
    #[arg(value_name = "FILE", conflicts_with = "session")]
    pub file: Option<PathBuf>,
    /// Also write the report as one self-contained HTML page to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Report every session of the project (--cwd, else the current
    /// directory), one row each, and the trends across them.
    #[arg(long)]
    pub all: bool,
    #[command(flatten)]
    pub session: SessionArgs<S>,
}

/// `history`.
#[derive(Debug, Args)]
pub struct HistoryArgs<S: Args> {
    /// A session file (the same as --session FILE).
    #[arg(value_name = "FILE", conflicts_with = "session")]
    pub file: Option<PathBuf>,
    #[command(flatten)]
    pub session: SessionArgs<S>,
    #[command(subcommand)]
    pub command: HistoryCommand,
}

/// `history` subcommands: one history tool each. Every one also takes the
/// tool's parameters as one JSON object; its flags win over it.
#[derive(Debug, Subcommand)]
pub enum HistoryCommand {
    /// The session's context windows.
    Windows {
        /// The tool's parameters as a JSON object.
        #[arg(value_name = "PARAMS", value_parser = json_object)]
        params: Option<Map<String, Value>>,
    },
    /// One page of events (the conversation view unless --role is given).
    List {
        /// The tool's parameters as a JSON object, e.g. '{"limit":5}'.
        #[arg(value_name = "PARAMS", value_parser = json_object)]
        params: Option<Map<String, Value>>,
        #[command(flatten)]
        page: PageArgs,
    },
    /// Events containing any of the queries.
    Search {
        /// Literal text to find (case-insensitive), or the tool's parameters
        /// as one JSON object, e.g. '{"query":"tokenizer"}'.
        #[arg(value_name = "QUERY")]
        words: Vec<String>,
        /// Another literal to find.
        #[arg(long = "query", value_name = "QUERY")]
        query: Vec<String>,
        #[command(flatten)]
        page: PageArgs,
    },
    /// One event by seq.
    Read {
        /// The event's seq, or the tool's parameters as a JSON object, e.g.
        /// '{"seq":2}'.
        #[arg(value_name = "SEQ", value_parser = seq_or_params)]
        target: Option<SeqOrParams>,
        /// The event's seq.
        #[arg(long = "seq", value_name = "SEQ")]
        seq: Option<u32>,
        /// Start here (code points; negative counts from the end).
        #[arg(long, allow_negative_numbers = true)]
        offset: Option<i64>,
        /// Read at most this many code points.
        #[arg(long)]
        limit: Option<u32>,
    },
}

/// `history read`'s argument: a seq or the tool's parameters.
#[derive(Debug, Clone, PartialEq)]
pub enum SeqOrParams {
    /// A seq.
    Seq(u32),
    /// A JSON object.
    Params(Map<String, Value>),
}

/// A positional argument that is the tool's parameters as a JSON object.
pub(crate) fn json_object(text: &str) -> Result<Map<String, Value>, String> {
    match serde_json::from_str(text) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(_) => Err("the parameters must be a JSON object".to_owned()),
        Err(error) => Err(format!("the parameters are not JSON: {error}")),
    }
}

fn seq_or_params(text: &str) -> Result<SeqOrParams, String> {
    if let Ok(seq) = text.parse() {
        return Ok(SeqOrParams::Seq(seq));
    }
    if text.trim_start().starts_with('{') {
        return json_object(text).map(SeqOrParams::Params);
    }
    Err("a seq is a whole number (or give the parameters as a JSON object)".to_owned())
}

/// Paging flags of `history list` and `history search`.
#[derive(Debug, Args)]
pub struct PageArgs {
    /// Events per page.
    #[arg(long)]
    pub limit: Option<u32>,
    /// Only these roles (user, assistant, tool, context): repeated, or
    /// comma-separated.
    #[arg(long = "role", value_delimiter = ',')]
    pub roles: Vec<String>,
    /// Only seqs below this.
    #[arg(long)]
    pub before: Option<u32>,
    /// Only seqs above this.
    #[arg(long)]
    pub after: Option<u32>,
    /// Only this window (or "@previous").
    #[arg(long, alias = "window", value_name = "ID")]
    pub window_id: Option<String>,
    /// Preview length per event.
    #[arg(long)]
    pub max_chars: Option<u32>,
}

/// `doctor` (and `dream doctor`).
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// The notes home (default: $PI_NOTES_HOME, else ~/.agents/notes).
    #[arg(long, global = true, value_name = "DIR")]
    pub notes_home: Option<PathBuf>,
    /// Print the findings as JSON: {"home", "ok", "notes" (false when no
    /// note is written yet), "findings": [{"path", "message"}]}.
    #[arg(long)]
    pub json: bool,
    #[command(subcommand)]
    pub command: Option<DoctorCommand>,
}

/// `sync`.
#[derive(Debug, Args)]
pub struct SyncArgs {
    /// Set up (or change) the remote this notes root syncs with: a path, an
    /// `ssh://` or `git@host:path` URL, `https://` or `git://`. Nothing is
    /// synced until the next `sync`.
    #[arg(long, value_name = "URL", conflicts_with = "status")]
    pub remote: Option<String>,
    /// The remote branch (with --remote; default main).
    #[arg(long, value_name = "B", requires = "remote")]
    pub branch: Option<String>,
    /// The homes that travel, comma-separated, from project, human,
    /// agents, models, session (with --remote; default all but session).
    #[arg(long, value_name = "LIST", value_delimiter = ',', requires = "remote")]
    pub homes: Vec<String>,
    /// A path below the notes root that stays on this machine (a note, or a
    /// folder and all below it); repeatable (with --remote).
    #[arg(long, value_name = "PATH", requires = "remote")]
    pub exclude: Vec<String>,
    /// Sync on their own: each boot pulls first (waiting at most
    /// --auto-wait-ms), close-outs, resets and dreams push in the
    /// background; off: only this command syncs.
    #[arg(long, value_name = "on|off", value_parser = ["on", "off"], conflicts_with = "status")]
    pub auto: Option<String>,
    /// How long a boot waits for its pull, in milliseconds (with --auto;
    /// default 1500).
    #[arg(long, value_name = "MS", requires = "auto")]
    pub auto_wait_ms: Option<u64>,
    /// Show where this machine stands: commits ahead and behind the remote,
    /// notes changed since the last sync, unresolved conflicts.
    #[arg(long)]
    pub status: bool,
    /// Stop each git run (fetch, push) after this many seconds.
    #[arg(long, value_name = "SECS", default_value_t = NotesSync::DEFAULT_TIMEOUT.as_secs())]
    pub timeout: u64,
    /// The notes root (default: $PI_NOTES_HOME, else ~/.agents/notes).
    #[arg(long, value_name = "DIR")]
    pub notes_home: Option<PathBuf>,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `doctor` subcommands.
#[derive(Debug, Subcommand)]
pub enum DoctorCommand {
    /// List the temporary files interrupted writes left (older than a
    /// minute, their writer gone) and a stale dream lock; remove them only
    /// with --apply.
    Clean {
        /// Remove them (default: a dry run that only lists them).
        #[arg(long)]
        apply: bool,
    },
    /// Remove every file holding a credential from the dream's Git history
    /// (the commits are written again without them); the notes themselves
    /// stay as they are.
    Purge {
        /// Rewrite the history (default: a dry run that only lists what
        /// would go).
        #[arg(long)]
        apply: bool,
    },
}

/// `dream`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct DreamArgs<D: Args> {
    #[command(subcommand)]
    pub command: Option<DreamSubcommand>,
    /// The notes home (default: $PI_NOTES_HOME, else ~/.agents/notes).
    #[arg(long, value_name = "DIR")]
    pub notes_home: Option<PathBuf>,
    /// Hours since the last dream before another may run.
    #[arg(long, value_name = "N", default_value_t = DreamOptions::DEFAULT_MIN_HOURS)]
    pub min_hours: f64,
    /// Session homes changed since the last dream before another may run.
    #[arg(long, value_name = "N", default_value_t = DreamOptions::DEFAULT_MIN_SESSIONS)]
    pub min_sessions: usize,
    /// Run even when the time and material gates say no (never past the
    /// lock).
    #[arg(long)]
    pub force: bool,
    /// The model the dreamer runs on (default: the `dreamer` setting, else
    /// the host's default model).
    #[arg(long, value_name = "PATTERN")]
    pub dreamer: Option<String>,
    /// A playbook file instead of the packaged one.
    #[arg(long, value_name = "PATH")]
    pub playbook: Option<PathBuf>,
    /// Stop the dreamer after this many seconds; the run then fails and the
    /// lock is released.
    #[arg(long, value_name = "SECS", default_value_t = DreamFlags::DEFAULT_TIMEOUT.as_secs())]
    pub timeout: u64,
    /// How this host starts its dreamer.
    #[command(flatten, next_help_heading = "Dreamer options")]
    pub host: D,
}

/// `dream` subcommands.
#[derive(Debug, Subcommand)]
pub enum DreamSubcommand {
    /// Check the notes home without changing anything; exit 1 on findings
    /// (the same as `doctor`).
    Doctor(DoctorArgs),
}
