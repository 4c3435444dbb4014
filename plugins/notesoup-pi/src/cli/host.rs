//! The shared commands' Pi side ([`PiCli`]): a session is a Pi session file
//! (given, found by id in the project's session folder, or the folder's
//! most recent), its history is decoded from the branch at `--leaf`, its
//! notes identity is the bridge's (the notes root and agent from
//! `PI_NOTES_HOME` / `PI_NOTES_AGENT`, the session id, cwd and model from
//! the file), and the dreamer is real Pi (`crate::dreamer`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use notesoup_cli::{
    BootView, CliHost, CommandTools, HostDreamer, Out, Purpose, Target, UsageError,
    no_session_recorded,
};
use notesoup_core::boot::ToolBindings;
use notesoup_core::boot::{BootIdentity, BootSections, BootSnapshot};
use notesoup_core::budget::{BudgetPolicy, ClampedReserve};
use notesoup_core::history::{History, SessionLedger, WindowSignals, session_ledger};
use notesoup_core::notes::{NoteStore, NotesIdentity, project_key};
use notesoup_core::plumbing::{DreamerProcess, DreamerSetting, NotesOwner};
use notesoup_core::tools::{ToolContext, ToolOutput};

use super::session::{self, Located, PREVIEW};
use crate::dreamer::{PiDreamer, dreamer_setting, pi_executable};
use crate::history::decode_lazy_with_signals;
use crate::reset::window::root_window_id;
use crate::session::Leaf;

/// `--version`: the release, and the Pi and bridge protocol it speaks.
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (Pi 1.6.0, bridge protocol 7)");

/// Pi's own flag for choosing a session.
#[derive(Debug, Args)]
pub struct PiSessionArgs {
    /// The entry the session's branch ends at (default: the file's last
    /// entry, Pi's leaf after loading).
    #[arg(long, global = true, value_name = "ID")]
    pub leaf: Option<String>,
}

/// How `notesoup-pi dream` starts its dreamer.
#[derive(Debug, Args)]
pub struct PiDreamerArgs {
    /// The `pi` to run (default: $NOTESOUP_PI, else `pi` on PATH).
    #[arg(long, value_name = "PATH")]
    pub pi: Option<PathBuf>,
    /// Refused: the scripted dreamer is the reference host's
    /// (`notesoup-pi-reference dream --script FILE`).
    #[arg(long, value_name = "FILE")]
    pub script: Option<PathBuf>,
}

/// The shared commands' Pi side, over the process environment.
#[derive(Debug, Default)]
pub struct PiCli;

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|value| !value.is_empty())
}

impl PiCli {
    /// The session file `target` names (its `--session` file or id, else
    /// the project's most recent), `None` when the project has none.
    fn session_file(
        &self,
        target: &Target<'_, PiSessionArgs>,
        here: &Path,
    ) -> Result<Option<PathBuf>> {
        let file = target.session_file();
        let id = target.session.filter(|_| file.is_none());
        session::session_file(session::agent_dir(env).as_deref(), here, file, id)
    }

    /// The session `target` names and its notes store (with the settings'
    /// credential guard), or a preview with a store of no session.
    fn located(
        &self,
        target: &Target<'_, PiSessionArgs>,
        command: &str,
        out: &mut Out,
    ) -> Result<(Located, NoteStore, usize)> {
        let root = target.notes_root()?.to_owned();
        let here = target.cwd_or_current()?;
        let file = self.session_file(target, &here)?;
        // A settings warning is said as every binary says it (`notesoup:
        // …`); anything else names the command.
        let mut warn = |text: String| {
            if text.starts_with("notesoup: ") {
                out.warn(&text);
            } else {
                out.warn(&format!("{} {command}: {text}", Self::BIN));
            }
        };
        let located = session::locate(
            file.as_deref(),
            target.cwd.clone(),
            here,
            target.host.leaf.as_deref(),
            &mut warn,
        )?;
        let settings =
            session::read_settings(session::agent_dir(env).as_deref(), &located.cwd, &mut warn);
        let model = located.model.clone().or(settings.default_model);
        let (project, model, agent) = (
            project_key(&located.cwd),
            NotesIdentity::model_slug(model.as_deref()),
            NotesIdentity::agent_slug(env),
        );
        let store = NotesOwner {
            root: &root,
            session_id: located.session_id.as_deref(),
            project_key: &project,
            agent: &agent,
            model: &model,
        }
        .open()
        .map_err(|error| anyhow::anyhow!("invalid_identity: {error}"))?
        .with_secret_guard(settings.resolved.settings.secret_guard);
        Ok((located, store, settings.resolved.settings.boot_max_chars))
    }

    /// The decoded history of the session `target` names.
    fn history(&self, target: &Target<'_, PiSessionArgs>) -> Result<History> {
        let (mut history, signals) = self.history_with_signals(target)?;
        history.set_window_signals(signals);
        Ok(history)
    }

    /// The history and what the file records about each window beyond it.
    fn history_with_signals(
        &self,
        target: &Target<'_, PiSessionArgs>,
    ) -> Result<(History, Vec<WindowSignals>)> {
        let here = target.cwd_or_current()?;
        let file = self.session_file(target, &here)?.with_context(|| {
            format!(
                "{}; pass --session",
                no_session_recorded::<Self>(here.display())
            )
        })?;
        let leaf = target.host.leaf.as_deref();
        // The branch (to `leaf`, or to the file's last entry: Pi's leaf
        // after loading) is decoded; the rest of the session only counts
        // seqs.
        let session = super::inspect::open(&file, leaf)?;
        let (transcript, signals) =
            decode_lazy_with_signals(&session, leaf.map_or(Leaf::Last, Leaf::Id));
        session.check()?;
        Ok((
            History::new(transcript).context("decoding the history")?,
            signals,
        ))
    }
}

impl CliHost for PiCli {
    type SessionArgs = PiSessionArgs;
    type DreamerArgs = PiDreamerArgs;

    const BIN: &'static str = "notesoup-pi";
    const VERSION: &'static str = VERSION;
    const HOST: &'static str = "Pi";

    fn notes_root(&self) -> Option<PathBuf> {
        NotesIdentity::default_root(env)
    }

    fn with_tools(
        &mut self,
        target: &Target<'_, PiSessionArgs>,
        purpose: Purpose,
        out: &mut Out,
        call: &mut dyn FnMut(&mut dyn ToolContext) -> Result<ToolOutput>,
    ) -> Result<ToolOutput> {
        let mut tools = match purpose {
            Purpose::Notes => CommandTools {
                store: Some(self.located(target, "notes", out)?.1),
                history: None,
            },
            Purpose::History => CommandTools {
                store: None,
                history: Some(self.history(target)?),
            },
        };
        call(&mut tools)
    }

    fn ledger(
        &mut self,
        target: &Target<'_, PiSessionArgs>,
        _out: &mut Out,
    ) -> Result<SessionLedger> {
        let (history, signals) = self.history_with_signals(target)?;
        Ok(session_ledger(&history, &signals))
    }

    fn ledgers(
        &mut self,
        targets: &[Target<'_, PiSessionArgs>],
        _out: &mut Out,
    ) -> Vec<Result<SessionLedger>> {
        let this = &*self;
        notesoup_cli::in_parallel(targets, |target| {
            let (history, signals) = this.history_with_signals(target)?;
            Ok(session_ledger(&history, &signals))
        })
    }

    fn budget(
        &mut self,
        target: &Target<'_, PiSessionArgs>,
        context_window: u64,
        out: &mut Out,
    ) -> Result<Option<BudgetPolicy>> {
        let here = target.cwd_or_current()?;
        let mut warn = |text: String| out.warn(&format!("{} report: {text}", Self::BIN));
        let settings = session::read_settings(session::agent_dir(env).as_deref(), &here, &mut warn);
        // Pi's own default reserve when its settings name none.
        #[allow(clippy::cast_precision_loss)]
        let raw = settings
            .reserve_tokens
            .unwrap_or(BudgetPolicy::DEFAULT_RESERVE_TOKENS as f64);
        let reserve = ClampedReserve::of(raw, Some(context_window));
        Ok(Some(BudgetPolicy::new(
            reserve.tokens,
            settings.resolved.settings.reminder_margin_tokens,
        )))
    }

    fn sessions(
        &mut self,
        target: &Target<'_, PiSessionArgs>,
        _out: &mut Out,
    ) -> Result<Vec<String>> {
        let here = target.cwd_or_current()?;
        Ok(
            session::session_files(session::agent_dir(env).as_deref(), &here)?
                .into_iter()
                .map(|path| path.to_string_lossy().into_owned())
                .collect(),
        )
    }

    fn boot(&mut self, target: &Target<'_, PiSessionArgs>, out: &mut Out) -> Result<BootView> {
        let (located, store, max_chars) = self.located(target, "boot", out)?;
        let snapshot = BootSnapshot::load(&store)
            .map_err(|error| anyhow::anyhow!("{}: {error}", error.code().as_str()))?;
        let unavailable = snapshot.unavailable_labels();
        if !unavailable.is_empty() {
            out.warn(&format!(
                "{} boot: unreadable, left out of the boot: {}",
                Self::BIN,
                unavailable.join(", ")
            ));
        }
        let identity = store.identity();
        let sections = BootSections::new(
            &snapshot,
            &BootIdentity {
                agent: identity.agent().to_owned(),
                model: identity.model().to_owned(),
                root_window_id: root_window_id(located.session_id.as_deref().unwrap_or(PREVIEW)),
                window_id: located.window_id.clone(),
                previous_window_id: located.previous.clone(),
            },
            &ToolBindings::plain(),
            max_chars,
        );
        let preview = located
            .session_id
            .is_none()
            .then(|| located.cwd.display().to_string());
        Ok(BootView {
            window_id: located.window_id,
            sections,
            max_chars,
            preview,
        })
    }

    fn dreamer(
        &mut self,
        args: PiDreamerArgs,
        timeout: Duration,
        _out: &mut Out,
    ) -> Result<HostDreamer> {
        if args.script.is_some() {
            return Err(UsageError(
                "--script replays the reference host's scripted dreamer: run notesoup-pi-reference dream --script FILE (crate notesoup-pi-testkit)".to_owned(),
            )
            .into());
        }
        let notesoup_pi = std::env::current_exe().context("cannot find the notesoup-pi binary")?;
        let pi = pi_executable(args.pi, env);
        // The flag wins, then the `dreamer` setting, then Pi's own default
        // model.
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        let (pattern, warnings) = dreamer_setting(env, &cwd);
        Ok(HostDreamer {
            process: DreamerProcess {
                command: format!("{} --mode json", pi.display()),
                program: pi.clone(),
                install_hint: format!(
                    "install Pi, or name it with --pi PATH or {}",
                    crate::dreamer::PI_VAR
                ),
                search_path: std::env::var_os("PATH"),
                timeout,
            },
            runner: Box::new(PiDreamer {
                pi,
                notesoup_pi,
                timeout,
                work_dir: std::env::temp_dir()
                    .join(format!("notesoup-pi-dream-{}", uuid::Uuid::new_v4())),
            }),
            setting: DreamerSetting { pattern, warnings },
        })
    }
}
