//! The shared commands' definitions, over a host binary with no flags of
//! its own: how each form parses, the help every binary shows, the man
//! page, and the report's page over a host that gives it only a ledger.
//! (Each plugin's tests run its own binary.)

#![allow(clippy::unwrap_used)]

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use notesoup_cli::{
    BootView, CliHost, DoctorCommand, DreamSubcommand, HistoryCommand, HostDreamer, NoHostArgs,
    Out, Purpose, SeqOrParams, SharedCommand, Target,
};
use notesoup_core::history::{EndReason, LedgerNote, SessionLedger, WindowLedger};
use notesoup_core::tools::{Refusal, RefusalCode, ToolContext, ToolOutput};

/// A binary with one command of its own and the shared ones.
#[derive(Debug, Parser)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// The host's own command.
    Serve,
    /// A command nobody types.
    #[command(hide = true)]
    Hidden,
    #[command(flatten)]
    Shared(Box<SharedCommand<NoHostArgs, NoHostArgs>>),
}

/// A host with nothing but what a test gives it: most tests here need
/// only the definitions.
#[derive(Default)]
struct Given {
    /// The session's ledger `ledger` answers (else it fails).
    ledger: Option<SessionLedger>,
    /// The context windows `budget` was asked about.
    budgets_asked: Vec<u64>,
    /// Whether `with_tools` answers without calling the command back
    /// (else it fails).
    tools_answer_uncalled: bool,
}

impl CliHost for Given {
    type SessionArgs = NoHostArgs;
    type DreamerArgs = NoHostArgs;
    const BIN: &'static str = "test-bin";
    const VERSION: &'static str = "9.9.9 (Test 1.0)";
    const HOST: &'static str = "Test";

    fn notes_root(&self) -> Option<PathBuf> {
        Some(std::env::temp_dir().join("no-notes-here"))
    }

    fn with_tools(
        &mut self,
        _target: &Target<'_, NoHostArgs>,
        _purpose: Purpose,
        _out: &mut Out,
        _call: &mut dyn FnMut(&mut dyn ToolContext) -> anyhow::Result<ToolOutput>,
    ) -> anyhow::Result<ToolOutput> {
        if !self.tools_answer_uncalled {
            anyhow::bail!("no tools")
        }
        Ok(ToolOutput::refusal(&Refusal::new(
            RefusalCode::InternalError,
            "called nothing",
        )))
    }

    fn boot(
        &mut self,
        _target: &Target<'_, NoHostArgs>,
        _out: &mut Out,
    ) -> anyhow::Result<BootView> {
        anyhow::bail!("no boot")
    }

    fn ledger(
        &mut self,
        _target: &Target<'_, NoHostArgs>,
        _out: &mut Out,
    ) -> anyhow::Result<SessionLedger> {
        self.ledger.clone().context("no ledger")
    }

    fn budget(
        &mut self,
        _target: &Target<'_, NoHostArgs>,
        context_window: u64,
        _out: &mut Out,
    ) -> anyhow::Result<Option<notesoup_core::budget::BudgetPolicy>> {
        self.budgets_asked.push(context_window);
        Ok(None)
    }

    fn sessions(
        &mut self,
        _target: &Target<'_, NoHostArgs>,
        _out: &mut Out,
    ) -> anyhow::Result<Vec<String>> {
        Ok(Vec::new())
    }

    fn dreamer(
        &mut self,
        _args: NoHostArgs,
        _timeout: Duration,
        _out: &mut Out,
    ) -> anyhow::Result<HostDreamer> {
        anyhow::bail!("no dreamer")
    }
}

fn parse(args: &[&str]) -> Result<SharedCommand<NoHostArgs, NoHostArgs>, clap::Error> {
    let matches = notesoup_cli::command::<Cli, Given>()
        .try_get_matches_from(std::iter::once("test-bin").chain(args.iter().copied()))?;
    match Cli::from_arg_matches(&matches)?.command {
        Command::Shared(shared) => Ok(*shared),
        other => panic!("not a shared command: {other:?}"),
    }
}

fn history(args: &[&str]) -> (Option<PathBuf>, Option<String>, HistoryCommand) {
    match parse(args).unwrap() {
        SharedCommand::History(history) => (history.file, history.session.session, history.command),
        other => panic!("{other:?}"),
    }
}

#[test]
fn history_takes_a_file_a_session_flag_and_json_parameters() {
    let (file, session, command) = history(&["history", "s.jsonl", "read", r#"{"seq":2}"#]);
    assert_eq!(file, Some(PathBuf::from("s.jsonl")));
    assert_eq!(session, None);
    let HistoryCommand::Read { target, .. } = command else {
        panic!("{command:?}")
    };
    assert!(matches!(target, Some(SeqOrParams::Params(p)) if p["seq"] == 2));

    let (file, session, command) = history(&["history", "--transcript", "t.jsonl", "read", "5"]);
    assert_eq!((file, session.as_deref()), (None, Some("t.jsonl")));
    assert!(matches!(
        command,
        HistoryCommand::Read {
            target: Some(SeqOrParams::Seq(5)),
            ..
        }
    ));

    // A subcommand's name is never taken for the file.
    let (file, _, command) = history(&["history", "windows", "--json"]);
    assert_eq!(file, None);
    assert!(matches!(command, HistoryCommand::Windows { params: None }));

    let (_, _, command) = history(&[
        "history",
        "list",
        "--window",
        "@previous",
        "--role",
        "user,tool",
    ]);
    let HistoryCommand::List { page, .. } = command else {
        panic!("{command:?}")
    };
    assert_eq!(page.window_id.as_deref(), Some("@previous"));
    assert_eq!(page.roles, ["user", "tool"]);

    for wrong in [
        &["history", "read", "soon"][..],
        &["history", "windows", "[1]"],
        &["history", "f.jsonl", "--session", "s", "windows"],
        &["history", "list", "--limit", "many"],
    ] {
        let error = parse(wrong).unwrap_err();
        assert_eq!(error.exit_code(), 2, "{wrong:?}");
    }
}

#[test]
fn boot_stats_and_json_are_one_or_the_other() {
    assert!(matches!(
        parse(&["boot", "--stats"]).unwrap(),
        SharedCommand::Boot(boot) if boot.stats
    ));
    let error = parse(&["boot", "--stats", "--json"]).unwrap_err();
    assert_eq!(error.kind(), clap::error::ErrorKind::ArgumentConflict);
}

#[test]
fn doctor_is_also_dream_doctor() {
    let SharedCommand::Doctor(doctor) =
        parse(&["doctor", "clean", "--apply", "--notes-home", "n"]).unwrap()
    else {
        panic!()
    };
    assert_eq!(doctor.notes_home, Some(PathBuf::from("n")));
    assert!(matches!(
        doctor.command,
        Some(DoctorCommand::Clean { apply: true })
    ));
    let SharedCommand::Dream(dream) =
        parse(&["dream", "doctor", "--json", "--notes-home", "n"]).unwrap()
    else {
        panic!()
    };
    let Some(DreamSubcommand::Doctor(doctor)) = dream.command else {
        panic!()
    };
    assert!(doctor.json);
    assert_eq!(doctor.notes_home, Some(PathBuf::from("n")));
    let SharedCommand::Dream(dream) = parse(&["dream", "--timeout", "5", "--force"]).unwrap()
    else {
        panic!()
    };
    assert_eq!((dream.timeout, dream.force), (5, true));
    assert_eq!(
        parse(&["dream", "--timeout", "soon"])
            .unwrap_err()
            .exit_code(),
        2
    );
}

/// Every shared command's `--help`, as every binary shows it.
fn shared_help() -> String {
    fn walk(command: &clap::Command, path: &[&str], out: &mut String) {
        if !path.is_empty() {
            out.push_str(&format!("$ test-bin {} --help\n", path.join(" ")));
            out.push_str(&command.clone().render_help().to_string());
            out.push('\n');
        }
        for sub in command.get_subcommands() {
            let own = path.is_empty() && matches!(sub.get_name(), "serve" | "hidden");
            if sub.get_name() == "help" || own {
                continue;
            }
            let mut deeper = path.to_vec();
            deeper.push(sub.get_name());
            walk(sub, &deeper, out);
        }
    }
    // The width a terminal gives is the binary's; here it is fixed.
    let mut command = notesoup_cli::command::<Cli, Given>().term_width(100);
    command.build();
    let mut out = String::new();
    walk(&command, &[], &mut out);
    out
}

#[test]
fn the_shared_commands_help() {
    insta::assert_snapshot!(shared_help());
}

#[test]
fn the_man_page_has_every_command_and_names_no_other_page() {
    let page = notesoup_cli::man_page(notesoup_cli::command::<Cli, Given>()).unwrap();
    assert!(page.contains(".TH test-bin 1"), "{page:.300}");
    for command in [
        "test-bin serve",
        "test-bin notes list",
        "test-bin history read",
        "test-bin report",
        "test-bin doctor clean",
        "test-bin dream doctor",
        "test-bin completions",
        "test-bin man",
    ] {
        assert!(page.contains(&format!(".SS \"{command}\"")), "{command}");
    }
    assert!(!page.contains("hidden"), "a hidden command stays hidden");
    // clap_mangen's own list names a page per command (`test-bin-notes(1)`),
    // which nothing installs.
    assert!(!page.contains("(1)"), "{page}");
    // A global flag is described where it is taken, not again under every
    // subcommand.
    assert_eq!(
        page.matches("\\-\\-cwd\\fR").count(),
        4,
        "notes, boot, history, report"
    );
}

#[test]
fn the_binary_is_named_and_versioned_as_its_host_says() {
    let command = notesoup_cli::command::<Cli, Given>();
    assert_eq!(command.get_name(), "test-bin");
    assert_eq!(
        command.clone().render_version().to_string(),
        "test-bin 9.9.9 (Test 1.0)\n"
    );
    assert!(
        Cli::command()
            .get_subcommands()
            .any(|sub| sub.get_name() == "completions")
    );
}

/// A session of one window, ended by the tool, that wrote one note: `text`
/// stands for each of the agent's and the host's words (ids, times, the
/// note's address and text).
fn one_window(text: &str, context_window: Option<u64>) -> SessionLedger {
    let window = WindowLedger {
        window_id: text.to_owned(),
        first_seq: Some(1),
        last_seq: Some(2),
        started_at: Some(text.to_owned()),
        ended_at: None,
        events: 2,
        tool_calls: 1,
        tokens_at_end: Some(10),
        context_window,
        end: EndReason::Tool,
        notices: Vec::new(),
        notes: vec![LedgerNote {
            seq: 1,
            op: "write".to_owned(),
            address: text.to_owned(),
            chars: 3,
            checkpoint: true,
            text: text.to_owned(),
            at: Some(text.to_owned()),
            edits: Vec::new(),
            replace_all: false,
            rename_to: None,
        }],
        checkpoint_written: true,
        checkpoint_chars: Some(3),
        reorientation: None,
        slipped_summaries: 0,
        fill: vec![(1, 10)],
    };
    SessionLedger {
        session_id: text.to_owned(),
        windows: vec![window],
        ends: [(EndReason::Tool, 1)].into_iter().collect(),
        slipped_summaries: 0,
        events: 2,
        tool_calls: 1,
        notes_written: 1,
        reorientation_calls: 0,
    }
}

/// A note's text, address and the window and session ids are the agent's
/// and the host's words: the page shows them, it never runs or loads them.
#[test]
fn the_report_page_escapes_what_the_session_wrote() {
    let hostile = "<script>alert(1)</script><img src=x onerror=alert(2)>\"'&";
    let ledger = one_window(hostile, None);
    let mut texts = notesoup_cli::NoteTexts::default();
    texts.by_seq.insert(
        1,
        notesoup_cli::NoteText {
            source: notesoup_cli::TextSource::Current {
                reason: hostile.to_owned(),
            },
            text: hostile.to_owned(),
        },
    );
    let report = notesoup_cli::SessionReport {
        ledger: ledger.clone(),
        budget: None,
        texts,
    };
    let page = notesoup_cli::render_html(&report);
    for live in ["<script", "<img", "onerror=alert(2)>"] {
        assert!(!page.contains(live), "{live} in the page");
    }
    assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(page.contains("&quot;&#39;&amp;"));
    let table = notesoup_cli::render_table(&ledger);
    assert!(table.contains("1 resets (tool 1)"), "{table}");
}

/// The report's page says why the notes' texts are missing when the
/// host's tools fail or answer without opening the store, and a session
/// whose window has no size asks the host for no budget lines.
#[test]
fn a_report_says_why_the_notes_texts_are_missing() {
    for (tools_answer_uncalled, reason) in [
        (false, "no tools"),
        (true, "the notes store was not opened"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let page = dir.path().join("report.html");
        let mut host = Given {
            ledger: Some(one_window("plain", Some(0))),
            tools_answer_uncalled,
            ..Given::default()
        };
        let shared = parse(&["report", "--html", page.to_str().unwrap()]).unwrap();
        let code = notesoup_cli::run::<Cli, Given>(&mut host, shared);
        assert_eq!(
            format!("{code:?}"),
            format!("{:?}", std::process::ExitCode::SUCCESS)
        );
        let page = std::fs::read_to_string(&page).unwrap();
        assert!(
            page.contains(&format!("The notes' texts could not be read ({reason})")),
            "{page}"
        );
        assert_eq!(host.budgets_asked, Vec::<u64>::new());
    }
}
