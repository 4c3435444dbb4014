//! `boot [--stats] [--json]`: the boot notesoup gives Pi for a session's
//! live window, rendered now from the notes, with the identity the bridge
//! would use.
//!
//! The identity comes from the same places as inside Pi: the notes root and
//! agent from `PI_NOTES_HOME` / `PI_NOTES_AGENT` (or `--notes-home`), the
//! session id, branch and cwd from the session file, the model from the
//! branch (its last `model_change` or assistant message), and `bootMaxChars`
//! from Pi's settings (`settings.json` in Pi's agent directory, and the
//! project's `.pi/settings.json` when Pi trusts the project).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use notesoup_core::boot::{BootIdentity, BootSections, BootSnapshot, boot_sections};
use notesoup_core::notes::{NoteStore, NotesIdentity, model_slug, project_key};
use notesoup_core::plumbing::{Links, MAX_SETTINGS_BYTES, read_small_text};
use notesoup_core::wire::ToolBindings;
use serde_json::{Value, json};

use crate::extension::NotesoupConfig;
use crate::projection::project_path;
use crate::reset::window::{active_window, root_window_id};
use crate::session::SessionFile;

/// `notesoup-pi boot`'s flags.
#[derive(Debug, clap::Args)]
pub struct BootArgs {
    /// The project (default: the session's cwd, else the current directory).
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// A Pi session file, or a session id in the project's session folder
    /// (default: the project's most recent session, as `pi --continue`
    /// picks it).
    #[arg(long, value_name = "FILE|ID")]
    session: Option<String>,
    /// The notes root (default: PI_NOTES_HOME, else ~/.agents/notes).
    #[arg(long, value_name = "DIR")]
    notes_home: Option<PathBuf>,
    /// Print each section's size in characters and estimated tokens instead
    /// of the boot.
    #[arg(long)]
    stats: bool,
    /// Print {window, boot, sectionChars} as JSON.
    #[arg(long, conflicts_with = "stats")]
    json: bool,
}

/// What a preview's window ids carry in place of a session id.
const PREVIEW: &str = "preview";

/// Whose boot: the session (if any), window and model.
struct Target {
    /// None for a preview: no session notes are read.
    session_id: Option<String>,
    cwd: PathBuf,
    window_id: String,
    previous: Option<String>,
    model: Option<String>,
}

/// Runs `boot`: the text on stdout, warnings on stderr.
pub fn main(args: &BootArgs) -> Result<()> {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let config = NotesoupConfig::from_env(env)
        .context("no notes root: set PI_NOTES_HOME or HOME, or give --notes-home")?;
    let notes_home = match &args.notes_home {
        Some(dir) => {
            std::path::absolute(dir).with_context(|| format!("--notes-home {}", dir.display()))?
        }
        None => config.notes_home,
    };
    let agent_dir =
        agent_dir(env).context("no Pi agent directory: set PI_CODING_AGENT_DIR or HOME")?;
    let cwd = match &args.cwd {
        Some(dir) => {
            let dir =
                std::path::absolute(dir).with_context(|| format!("--cwd {}", dir.display()))?;
            if !dir.is_dir() {
                bail!("--cwd {}: not a directory", dir.display());
            }
            Some(dir)
        }
        None => None,
    };
    let target = target(&agent_dir, cwd, args.session.as_deref())?;
    let settings = read_settings(&agent_dir, &target.cwd);
    let resolved = notesoup_core::settings::resolve(
        Some(&settings.global),
        settings.project.as_ref(),
        notesoup_core::settings::ProjectTrust::Trusted,
    );
    for warning in &resolved.warnings {
        eprintln!("notesoup-pi boot: {warning}");
    }
    let model = target
        .model
        .clone()
        .or_else(|| settings.default_model.clone());
    let (project, model) = (project_key(&target.cwd), model_slug(model.as_deref()));
    let identity = match &target.session_id {
        Some(id) => NotesIdentity::new(&notes_home, id, &project, &config.agent, &model),
        None => NotesIdentity::without_session(&notes_home, &project, &config.agent, &model),
    }
    .map_err(|error| anyhow::anyhow!("invalid_identity: {error}"))?;
    let store = NoteStore::new(identity);
    let snapshot = BootSnapshot::load(&store)
        .map_err(|error| anyhow::anyhow!("{}: {error}", error.code().as_str()))?;
    let unavailable = snapshot.unavailable_labels();
    if !unavailable.is_empty() {
        eprintln!(
            "notesoup-pi boot: unreadable, left out of the boot: {}",
            unavailable.join(", ")
        );
    }
    let identity = store.identity();
    let sections = boot_sections(
        &snapshot,
        &BootIdentity {
            agent: identity.agent().to_owned(),
            model: identity.model().to_owned(),
            root_window_id: root_window_id(target.session_id.as_deref().unwrap_or(PREVIEW)),
            window_id: target.window_id.clone(),
            previous_window_id: target.previous.clone(),
        },
        &ToolBindings::plain(),
        resolved.settings.boot_max_chars,
    );
    let text = if args.json {
        let sizes: serde_json::Map<String, Value> = sections
            .sizes()
            .into_iter()
            .map(|(name, chars)| (name, json!(chars)))
            .collect();
        json!({"window": target.window_id, "boot": sections.join(), "sectionChars": sizes})
            .to_string()
    } else if args.stats {
        stats(&sections)
    } else {
        sections.join()
    };
    outln!("{}", text.trim_end_matches('\n'));
    Ok(())
}

/// One line per section, then the whole boot (sections and the blank lines
/// between them): characters and estimated tokens, a token per four
/// characters rounded up (Pi's own estimate, `estimateTokens`).
fn stats(sections: &BootSections) -> String {
    let tokens = |chars: usize| chars.div_ceil(4);
    let mut out = format!("{:<16} {:>8} {:>8}\n", "section", "chars", "~tokens");
    for (name, chars) in sections.sizes() {
        out.push_str(&format!("{name:<16} {chars:>8} {:>8}\n", tokens(chars)));
    }
    let total = sections.join().chars().count();
    out.push_str(&format!(
        "{:<16} {total:>8} {:>8}\n",
        "whole boot",
        tokens(total)
    ));
    out
}

/// Pi's agent directory: `PI_CODING_AGENT_DIR` (a leading `~` expanded),
/// else `~/.pi/agent`.
fn agent_dir(env: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let home = env("HOME").map(PathBuf::from);
    match env("PI_CODING_AGENT_DIR") {
        Some(dir) if dir == "~" => home,
        Some(dir) => match dir.strip_prefix("~/") {
            Some(rest) => home.map(|home| home.join(rest)),
            None => Some(PathBuf::from(dir)),
        },
        None => home.map(|home| home.join(".pi").join("agent")),
    }
}

/// The project's session folder, as Pi names it:
/// `<agent dir>/sessions/--<cwd with / as ->--`.
fn session_dir(agent_dir: &Path, cwd: &Path) -> PathBuf {
    let cwd = cwd.to_string_lossy();
    let safe: String = cwd
        .strip_prefix('/')
        .unwrap_or(&cwd)
        .chars()
        .map(|c| {
            if matches!(c, '/' | '\\' | ':') {
                '-'
            } else {
                c
            }
        })
        .collect();
    agent_dir.join("sessions").join(format!("--{safe}--"))
}

/// The session file to read: `--session` as a file, or an id in the
/// project's folder, or the folder's most recently written session; `None`
/// when the project has no session yet.
fn session_file(agent_dir: &Path, cwd: &Path, session: Option<&str>) -> Result<Option<PathBuf>> {
    let dir = session_dir(agent_dir, cwd);
    let files = || -> Vec<PathBuf> {
        std::fs::read_dir(&dir)
            .map(|entries| {
                entries
                    .flatten()
                    .map(|entry| entry.path())
                    .filter(|path| path.extension().is_some_and(|e| e == "jsonl"))
                    .collect()
            })
            .unwrap_or_default()
    };
    match session {
        Some(given) if Path::new(given).is_file() => Ok(Some(PathBuf::from(given))),
        Some(id) => {
            if id.is_empty() || id.contains(['/', '\\']) {
                bail!("--session {id:?}: no such session file");
            }
            let suffix = format!("_{id}.jsonl");
            files()
                .into_iter()
                .find(|path| path.to_string_lossy().ends_with(&suffix))
                .map(Some)
                .with_context(|| {
                    format!(
                        "--session {id}: no such file, and no session {id} in {}",
                        dir.display()
                    )
                })
        }
        None => Ok(files()
            .into_iter()
            .filter_map(|path| {
                let modified = path.metadata().and_then(|m| m.modified()).ok()?;
                Some((modified, path))
            })
            .max()
            .map(|(_, path)| path)),
    }
}

fn target(agent_dir: &Path, cwd: Option<PathBuf>, session: Option<&str>) -> Result<Target> {
    let here = match &cwd {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().context("the current directory")?,
    };
    let Some(file) = session_file(agent_dir, &here, session)? else {
        eprintln!(
            "notesoup-pi boot: no Pi session is recorded for {}; this is a preview of a new session's first boot",
            here.display()
        );
        return Ok(Target {
            window_id: root_window_id(PREVIEW),
            session_id: None,
            cwd: here,
            previous: None,
            model: None,
        });
    };
    let session = SessionFile::read(&file).with_context(|| file.display().to_string())?;
    for diagnostic in session.diagnostics() {
        eprintln!("{}: {diagnostic}", file.display());
    }
    let Some(header) = session.header() else {
        bail!("{}: not a Pi session file (no header)", file.display());
    };
    let session_id = header.id.clone();
    // `--cwd` wins; else the session's own cwd, as Pi records it.
    let cwd = cwd
        .or_else(|| header.cwd.as_ref().map(PathBuf::from))
        .unwrap_or(here);
    let index = session.index();
    let branch = index
        .last_id()
        .map(|leaf| index.branch(leaf))
        .unwrap_or_default();
    let window = active_window(&branch, &session_id);
    let model = project_path(&branch).model.map(|model| model.model_id);
    Ok(Target {
        window_id: window.id.clone(),
        previous: window.previous.clone(),
        session_id: Some(session_id),
        cwd,
        model,
    })
}

/// Pi's settings as the bridge receives them: the global file, the
/// project's when Pi trusts the project, and the default model.
struct PiSettings {
    global: Value,
    project: Option<Value>,
    default_model: Option<String>,
}

fn read_settings(agent_dir: &Path, cwd: &Path) -> PiSettings {
    let read = |path: &Path| -> Option<Value> {
        let text = match read_small_text(path, MAX_SETTINGS_BYTES, Links::Follow) {
            Ok(text) => text?,
            Err(error) => {
                eprintln!("notesoup-pi boot: {error}; using the defaults");
                return None;
            }
        };
        match serde_json::from_str(&text) {
            Ok(value) => Some(value),
            Err(error) => {
                eprintln!(
                    "notesoup-pi boot: {}: {error}; using the defaults",
                    path.display()
                );
                None
            }
        }
    };
    let global = read(&agent_dir.join("settings.json")).unwrap_or_else(|| json!({}));
    let trusted = project_trusted(agent_dir, cwd, &global);
    let project = trusted
        .then(|| read(&cwd.join(".pi").join("settings.json")))
        .flatten();
    let default_model = [project.as_ref(), Some(&global)]
        .into_iter()
        .flatten()
        .find_map(|settings| settings.get("defaultModel")?.as_str().map(str::to_owned));
    PiSettings {
        global,
        project,
        default_model,
    }
}

/// Whether Pi trusts the project at `cwd`: the nearest decision in the
/// agent directory's `trust.json` (the folder or a parent), else
/// `defaultProjectTrust: "always"`.
fn project_trusted(agent_dir: &Path, cwd: &Path, global: &Value) -> bool {
    // An unreadable trust file trusts nothing, as Pi's own reading does.
    let decisions: Value = match read_small_text(
        &agent_dir.join("trust.json"),
        MAX_SETTINGS_BYTES,
        Links::Follow,
    ) {
        Ok(text) => text.and_then(|text| serde_json::from_str(&text).ok()),
        Err(error) => {
            eprintln!("notesoup-pi boot: {error}; trusting no project");
            None
        }
    }
    .unwrap_or_else(|| json!({}));
    let cwd = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_owned());
    for dir in cwd.ancestors() {
        if let Some(decision) = decisions
            .get(dir.to_string_lossy().as_ref())
            .and_then(Value::as_bool)
        {
            return decision;
        }
    }
    global.get("defaultProjectTrust").and_then(Value::as_str) == Some("always")
}
