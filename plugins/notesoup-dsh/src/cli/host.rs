//! The shared commands' dsh side ([`DshCli`]): a session is a dsh session
//! id, and its history the session log dsh keeps (`session.jsonl`, written
//! with `compression: none`): a log given as `--session FILE`, the log of
//! `--session ID` in the project's folder under the dsh home, or, with
//! neither, the project's most recent log. The notes identity is the
//! sidecar's (the notes root and agent from `PI_NOTES_HOME` /
//! `PI_NOTES_AGENT`, the project from the session's cwd, the model from
//! `--model`), and the dreamer is a headless dsh (`crate::dream`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Args;
use notesoup_cli::{
    BootView, CliHost, CommandTools, HostDreamer, Out, Purpose, Target, files_oldest_first,
    no_session_recorded,
};
use notesoup_core::budget::BudgetPolicy;
use notesoup_core::notes::NotesIdentity;
use notesoup_core::plumbing::{DreamerProcess, DreamerSetting, Links, open_regular};
use notesoup_core::tools::{ToolContext, ToolOutput};

use crate::boot::{self, NotesPlace};
use crate::decode::{SessionLog, read_session_jsonl};
use crate::dream::DshDreamer;
use crate::{settings, window};

/// What `--version` prints after the name: the release, the pinned dsh
/// (`decode::PINNED_DSH_VERSION`) and the sidecar protocol
/// (`protocol::PROTOCOL_VERSION`).
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (dsh 0.1.0-rc.8, sidecar protocol 1)"
);

/// dsh's own flag for a session's notes.
#[derive(Debug, Args)]
pub struct DshSessionArgs {
    /// The agent's model id (default: none, and @model/ is the `default`
    /// model home).
    #[arg(long, global = true, value_name = "ID")]
    pub model: Option<String>,
}

/// How `notesoup-dsh dream` starts its dreamer.
#[derive(Debug, Args)]
pub struct DshDreamerArgs {
    /// The dsh profile the dreamer boots; it must answer one task and exit.
    #[arg(long, default_value = "headless")]
    pub profile: String,
    /// The dsh executable (default: $NOTESOUP_DSH, else dsh on PATH).
    #[arg(long, value_name = "PATH")]
    pub dsh: Option<PathBuf>,
}

/// The shared commands' dsh side, over the process environment.
#[derive(Debug, Default)]
pub struct DshCli;

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// A dsh session as a command sees it.
#[derive(Debug)]
struct DshSession {
    /// `None` when no session is named and none is logged for the project.
    id: Option<String>,
    /// `--cwd`, else the log's own, else the current directory.
    cwd: PathBuf,
    /// Its log, when one was found.
    log: Option<SessionLog>,
}

/// The project's folder of session logs, as dsh names it:
/// `<dsh home>/sessions/--<cwd with every / as ->--`.
fn sessions_dir(cwd: &Path) -> Option<PathBuf> {
    let cwd = cwd.to_string_lossy();
    let safe = cwd.strip_prefix('/').unwrap_or(&cwd).replace('/', "-");
    settings::dsh_home(env).map(|home| home.join("sessions").join(format!("--{safe}--")))
}

/// Reads a session log (`compression: none`): a regular file only, so a
/// FIFO or a device is refused rather than waited on.
fn read_log(path: &Path) -> Result<SessionLog> {
    let file = open_regular(path, Links::Follow)?
        .with_context(|| format!("{}: no such file", path.display()))?;
    read_session_jsonl(std::io::BufReader::new(file)).with_context(|| path.display().to_string())
}

impl DshCli {
    /// The window ledger of the session `target` names (`report`).
    fn read_ledger(
        &self,
        target: &Target<'_, DshSessionArgs>,
    ) -> Result<notesoup_core::history::SessionLedger> {
        let session = self.session(target)?;
        let Some(log) = session.log else {
            match session.id {
                Some(id) => {
                    bail!("no log of dsh session {id}; pass --session FILE (its session.jsonl)")
                }
                None => bail!(
                    "{}; pass --session",
                    no_session_recorded::<Self>(session.cwd.display())
                ),
            }
        };
        Ok(crate::history::ledger(&log.header.id, &log.events)?)
    }

    /// The session `target` names.
    fn session(&self, target: &Target<'_, DshSessionArgs>) -> Result<DshSession> {
        let here = target.cwd_or_current()?;
        if let Some(file) = target.session_file() {
            let log = read_log(file)?;
            let cwd = target
                .cwd
                .clone()
                .or_else(|| log.header.cwd.as_ref().map(PathBuf::from))
                .unwrap_or(here);
            return Ok(DshSession {
                id: Some(log.header.id.clone()),
                cwd,
                log: Some(log),
            });
        }
        if let Some(id) = target.session
            && matches!(id, "" | "." | "..")
        {
            bail!("--session {id:?}: not a dsh session id");
        }
        let folder = sessions_dir(&here);
        let log = match (target.session, &folder) {
            (Some(id), Some(folder)) => {
                let path = folder.join(id).join("session.jsonl");
                path.is_file().then(|| read_log(&path)).transpose()?
            }
            (None, Some(folder)) => newest_log(folder).map(|path| read_log(&path)).transpose()?,
            (_, None) => None,
        };
        let id = target
            .session
            .map(str::to_owned)
            .or_else(|| log.as_ref().map(|log| log.header.id.clone()));
        Ok(DshSession { id, cwd: here, log })
    }

    /// Where notes live: the target's notes root and the agent slug.
    fn place(&self, target: &Target<'_, DshSessionArgs>) -> Result<NotesPlace> {
        Ok(NotesPlace {
            root: target.notes_root()?.to_owned(),
            agent: NotesIdentity::agent_slug(env),
            cache: notesoup_core::plumbing::BootCaches::dir(env),
        })
    }

    /// The settings file's values, its warnings said.
    fn settings(&self, out: &mut Out) -> settings::ResolvedDshSettings {
        let (record, mut warnings) = match settings::settings_file(env) {
            Some(path) => settings::read_file(&path),
            None => Default::default(),
        };
        let mut resolved = settings::validate(&record);
        warnings.append(&mut resolved.warnings);
        for warning in &warnings {
            out.warn(warning);
        }
        resolved
    }
}

/// The most recently written `*/session.jsonl` in `folder`.
fn newest_log(folder: &Path) -> Option<PathBuf> {
    session_logs(folder).ok()?.pop()
}

/// Every `*/session.jsonl` in `folder`, oldest first.
fn session_logs(folder: &Path) -> Result<Vec<PathBuf>> {
    files_oldest_first(folder, |session| Some(session.join("session.jsonl")))
}

impl CliHost for DshCli {
    type SessionArgs = DshSessionArgs;
    type DreamerArgs = DshDreamerArgs;

    const BIN: &'static str = "notesoup-dsh";
    const VERSION: &'static str = VERSION;
    const HOST: &'static str = "dsh";

    fn notes_root(&self) -> Option<PathBuf> {
        NotesIdentity::default_root(env)
    }

    fn with_tools(
        &mut self,
        target: &Target<'_, DshSessionArgs>,
        purpose: Purpose,
        out: &mut Out,
        call: &mut dyn FnMut(&mut dyn ToolContext) -> Result<ToolOutput>,
    ) -> Result<ToolOutput> {
        let session = self.session(target)?;
        let mut tools = CommandTools::default();
        match purpose {
            Purpose::Notes => {
                let user = self.settings(out).settings.core.secret_guard;
                let (guard, warnings) = settings::session_secret_guard(&session.cwd, user);
                for warning in &warnings {
                    out.warn(warning);
                }
                tools.store = Some(boot::store(
                    &self.place(target)?,
                    session.id.as_deref(),
                    &session.cwd.display().to_string(),
                    target.host.model.as_deref(),
                    guard,
                )?);
            }
            Purpose::History => {
                let Some(log) = session.log else {
                    match session.id {
                        Some(id) => bail!(
                            "no log of dsh session {id} in {}; pass --session FILE (its session.jsonl)",
                            sessions_dir(&session.cwd).map_or_else(
                                || "the dsh home".to_owned(),
                                |dir| dir.display().to_string()
                            )
                        ),
                        None => bail!(
                            "{}; pass --session",
                            no_session_recorded::<Self>(session.cwd.display())
                        ),
                    }
                };
                tools.history = Some(crate::history::history(&log.header.id, &log.events)?);
            }
        }
        call(&mut tools)
    }

    fn budget(
        &mut self,
        _target: &Target<'_, DshSessionArgs>,
        _context_window: u64,
        out: &mut Out,
    ) -> Result<Option<BudgetPolicy>> {
        let settings = self.settings(out).settings;
        Ok(Some(BudgetPolicy::new(
            settings.reserve_tokens,
            settings.core.reminder_margin_tokens,
        )))
    }

    fn sessions(
        &mut self,
        target: &Target<'_, DshSessionArgs>,
        _out: &mut Out,
    ) -> Result<Vec<String>> {
        let here = target.cwd_or_current()?;
        let Some(folder) = sessions_dir(&here) else {
            return Ok(Vec::new());
        };
        Ok(session_logs(&folder)?
            .into_iter()
            .map(|path| path.to_string_lossy().into_owned())
            .collect())
    }

    fn ledger(
        &mut self,
        target: &Target<'_, DshSessionArgs>,
        _out: &mut Out,
    ) -> Result<notesoup_core::history::SessionLedger> {
        self.read_ledger(target)
    }

    fn ledgers(
        &mut self,
        targets: &[Target<'_, DshSessionArgs>],
        _out: &mut Out,
    ) -> Vec<Result<notesoup_core::history::SessionLedger>> {
        let this = &*self;
        notesoup_cli::in_parallel(targets, |target| this.read_ledger(target))
    }

    fn boot(&mut self, target: &Target<'_, DshSessionArgs>, out: &mut Out) -> Result<BootView> {
        let session = self.session(target)?;
        let chosen = self.settings(out).settings.core;
        let place = self.place(target)?;
        let store = boot::store(
            &place,
            session.id.as_deref(),
            &session.cwd.display().to_string(),
            target.host.model.as_deref(),
            chosen.secret_guard,
        )?;
        // A logged session boots its live window; a named one its first.
        let ordinal = match (&session.id, &session.log) {
            (Some(id), Some(log)) => window::recover(id, &log.events).window.ordinal,
            _ => 1,
        };
        let sections = boot::sections(
            &place,
            &store,
            ordinal,
            jiff::Timestamp::now(),
            chosen.boot_max_chars,
        )?;
        let session_name = session.id.as_deref().unwrap_or(boot::PREVIEW_SESSION);
        Ok(BootView {
            window_id: window::window_id(session_name, ordinal),
            sections,
            max_chars: chosen.boot_max_chars,
            preview: session
                .id
                .is_none()
                .then(|| session.cwd.display().to_string()),
        })
    }

    fn dreamer(
        &mut self,
        args: DshDreamerArgs,
        timeout: Duration,
        _out: &mut Out,
    ) -> Result<HostDreamer> {
        let notesoup_dsh =
            std::env::current_exe().context("cannot find the notesoup-dsh binary")?;
        // The command line wins, then the `dreamer` setting, then the
        // profile's default model. A bad setting warns (inside the run,
        // after the lock).
        let (record, mut warnings) = match settings::settings_file(env) {
            Some(path) => settings::read_file(&path),
            None => Default::default(),
        };
        let resolved = settings::validate(&record);
        warnings.extend(
            resolved
                .warnings
                .into_iter()
                .filter(|warning| warning.starts_with("notesoup: dreamer ")),
        );
        let dsh = DreamerSetting::executable(args.dsh, env(crate::dream::DSH_VAR), "dsh");
        Ok(HostDreamer {
            process: DreamerProcess {
                command: format!("{} --profile {}", dsh.display(), args.profile),
                program: dsh.clone(),
                install_hint: format!(
                    "install dsh, or name it with --dsh PATH or {}",
                    crate::dream::DSH_VAR
                ),
                search_path: std::env::var_os("PATH"),
                timeout,
            },
            runner: Box::new(DshDreamer {
                dsh,
                profile: args.profile,
                notesoup_dsh,
                work_dir: std::env::temp_dir()
                    .join(format!("notesoup-dsh-dream-{}", uuid::Uuid::new_v4())),
                timeout,
            }),
            setting: DreamerSetting {
                pattern: resolved.settings.core.dreamer,
                warnings,
            },
        })
    }
}
