//! Which Pi session a command means, and what it is made of, found the way
//! Pi finds it: a session file, or a session id in the project's session
//! folder, or the folder's most recent session (`pi --continue`'s pick);
//! the session id, cwd and model from the file and its branch; the
//! settings from Pi's agent directory (`settings.json`, and the project's
//! `.pi/settings.json` when Pi trusts the project).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use notesoup_cli::files_oldest_first;
use notesoup_core::plumbing::{Links, read_small_text};
use notesoup_core::settings::{ProjectTrust, ResolvedSettings, SettingsRecord};
use serde_json::{Value, json};

use crate::projection::project_path;
use crate::reset::window::{active_window, root_window_id};
use crate::session::SessionFile;

/// What a preview's window ids carry in place of a session id.
pub const PREVIEW: &str = "preview";

/// Pi's agent directory: `PI_CODING_AGENT_DIR` (a leading `~` expanded),
/// else `~/.pi/agent`.
pub fn agent_dir(env: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
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

/// The session file to read: `file` as it is (a path), or the session `id`
/// in the project's folder, or the folder's most recently written session;
/// `None` when the project has no session yet.
pub fn session_file(
    agent_dir: Option<&Path>,
    cwd: &Path,
    file: Option<&Path>,
    id: Option<&str>,
) -> Result<Option<PathBuf>> {
    if let Some(file) = file {
        return Ok(Some(file.to_owned()));
    }
    let agent_dir = agent_dir.context("no Pi agent directory: set PI_CODING_AGENT_DIR or HOME")?;
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
    match id {
        Some(id) => {
            if id.is_empty() {
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
        None => Ok(jsonl_files(&dir).unwrap_or_default().pop()),
    }
}

/// Every session file of the project at `cwd`, oldest first (by the time
/// each was last written, then by name).
pub fn session_files(agent_dir: Option<&Path>, cwd: &Path) -> Result<Vec<PathBuf>> {
    let agent_dir = agent_dir.context("no Pi agent directory: set PI_CODING_AGENT_DIR or HOME")?;
    jsonl_files(&session_dir(agent_dir, cwd))
}

/// Every `*.jsonl` in `dir`, oldest first.
fn jsonl_files(dir: &Path) -> Result<Vec<PathBuf>> {
    files_oldest_first(dir, |path| {
        path.extension()
            .is_some_and(|e| e == "jsonl")
            .then_some(path)
    })
}

/// A session as a command sees it: whose it is and which window is live.
#[derive(Debug)]
pub struct Located {
    /// None for a preview: no session notes are read.
    pub session_id: Option<String>,
    /// The project: `--cwd`, else the session's own, else the current
    /// directory.
    pub cwd: PathBuf,
    /// The live window at the leaf.
    pub window_id: String,
    /// The window before it.
    pub previous: Option<String>,
    /// The model on the branch (its last `model_change` or assistant
    /// message).
    pub model: Option<String>,
}

/// The refusal of a file without a Pi session header, by every command
/// that reads a session.
pub(super) fn not_a_session(file: &Path) -> anyhow::Error {
    anyhow::anyhow!("{}: not a Pi session file (no header)", file.display())
}

/// Reads `file` (or, with none, makes the preview of a new session in
/// `here`): the session, its cwd unless `cwd` is given, and the live window
/// and model at `leaf` (default: the file's last entry).
pub fn locate(
    file: Option<&Path>,
    cwd: Option<PathBuf>,
    here: PathBuf,
    leaf: Option<&str>,
    warn: &mut dyn FnMut(String),
) -> Result<Located> {
    let Some(file) = file else {
        return Ok(Located {
            window_id: root_window_id(PREVIEW),
            session_id: None,
            cwd: cwd.unwrap_or(here),
            previous: None,
            model: None,
        });
    };
    let session = SessionFile::read(file).with_context(|| file.display().to_string())?;
    for diagnostic in session.diagnostics() {
        warn(format!("{}: {diagnostic}", file.display()));
    }
    let Some(header) = session.header() else {
        return Err(not_a_session(file));
    };
    let session_id = header.id.clone();
    // `--cwd` wins; else the session's own cwd, as Pi records it.
    let cwd = cwd
        .or_else(|| header.cwd.as_ref().map(PathBuf::from))
        .unwrap_or(here);
    let index = session.index();
    if let Some(leaf) = leaf
        && index.get(leaf).is_none()
    {
        bail!("no entry {leaf} in the session");
    }
    let branch = leaf
        .or(index.last_id())
        .map(|leaf| index.branch(leaf))
        .unwrap_or_default();
    let window = active_window(&branch, &session_id);
    let model = project_path(&branch).model.map(|model| model.model_id);
    Ok(Located {
        window_id: window.id.clone(),
        previous: window.previous.clone(),
        session_id: Some(session_id),
        cwd,
        model,
    })
}

/// Pi's settings as the bridge receives them: the global file, the
/// project's when Pi trusts the project, and the default model.
#[derive(Debug)]
pub struct PiSettings {
    /// notesoup's settings, resolved (project over global).
    pub resolved: ResolvedSettings,
    /// `defaultModel`, project over global.
    pub default_model: Option<String>,
    /// `compaction.reserveTokens`, project over global, as written (the
    /// budget clamps it).
    pub reserve_tokens: Option<f64>,
}

/// Reads Pi's settings for the project at `cwd`; what was wrong with them
/// goes to `warn`, and the defaults stand in.
pub fn read_settings(
    agent_dir: Option<&Path>,
    cwd: &Path,
    warn: &mut dyn FnMut(String),
) -> PiSettings {
    let global = agent_dir
        .and_then(|dir| read_json(&dir.join("settings.json"), warn))
        .unwrap_or_else(|| json!({}));
    let trusted = agent_dir.is_some_and(|dir| project_trusted(dir, cwd, &global, warn));
    let project = trusted
        .then(|| read_json(&cwd.join(".pi").join("settings.json"), warn))
        .flatten();
    let default_model = [project.as_ref(), Some(&global)]
        .into_iter()
        .flatten()
        .find_map(|settings| settings.get("defaultModel")?.as_str().map(str::to_owned));
    let reserve_tokens = [project.as_ref(), Some(&global)]
        .into_iter()
        .flatten()
        .find_map(|settings| settings.get("compaction")?.get("reserveTokens")?.as_f64());
    let resolved =
        ResolvedSettings::resolve(Some(&global), project.as_ref(), ProjectTrust::Trusted);
    for warning in &resolved.warnings {
        warn(warning.to_string());
    }
    PiSettings {
        resolved,
        default_model,
        reserve_tokens,
    }
}

/// A settings file's JSON; a file that cannot be read or is not JSON
/// warns, and counts as absent.
fn read_json(path: &Path, warn: &mut dyn FnMut(String)) -> Option<Value> {
    let text = match read_small_text(path, SettingsRecord::MAX_BYTES, Links::Follow) {
        Ok(text) => text?,
        Err(error) => {
            warn(format!("{error}; using the defaults"));
            return None;
        }
    };
    match serde_json::from_str(&text) {
        Ok(value) => Some(value),
        Err(error) => {
            warn(format!("{}: {error}; using the defaults", path.display()));
            None
        }
    }
}

/// Whether Pi trusts the project at `cwd`: the nearest decision in the
/// agent directory's `trust.json` (the folder or a parent), else
/// `defaultProjectTrust: "always"`.
fn project_trusted(
    agent_dir: &Path,
    cwd: &Path,
    global: &Value,
    warn: &mut dyn FnMut(String),
) -> bool {
    // An unreadable trust file trusts nothing, as Pi's own reading does.
    let decisions: Value = match read_small_text(
        &agent_dir.join("trust.json"),
        SettingsRecord::MAX_BYTES,
        Links::Follow,
    ) {
        Ok(text) => text.and_then(|text| serde_json::from_str(&text).ok()),
        Err(error) => {
            warn(format!("{error}; trusting no project"));
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
