//! The time and material gates that decide whether a dream is due.

use std::fs;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use jiff::Timestamp;

/// Default minimum age of the last run, in hours (`--min-hours`).
pub(crate) const DEFAULT_MIN_HOURS: f64 = 24.0;
/// Default minimum number of changed session homes (`--min-sessions`).
pub(crate) const DEFAULT_MIN_SESSIONS: usize = 3;

/// A gate's verdict and the reason line the CLI prints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Gate {
    /// Whether the gate lets the dream through.
    pub ok: bool,
    /// The exact reason text, e.g. `time gate: stale`.
    pub reason: String,
}

/// Time gate: ok when there is no stamp or the stamp (`last_run`, its mtime)
/// is at least `min_hours` old at `now`.
pub(crate) fn time_gate(last_run: Option<SystemTime>, now: Timestamp, min_hours: f64) -> Gate {
    let Some(last_run) = last_run else {
        return Gate {
            ok: true,
            reason: "time gate: no prior dream".to_owned(),
        };
    };
    let age_ms = now.as_millisecond() as f64 - millis(last_run);
    if age_ms >= min_hours * 3_600_000.0 {
        Gate {
            ok: true,
            reason: "time gate: stale".to_owned(),
        }
    } else {
        Gate {
            ok: false,
            reason: "time gate: last dream is too recent".to_owned(),
        }
    }
}

/// Material gate: counts the session directories under `<home>/pi/session/`
/// with at least one direct-child file modified after `since` (the stamp's
/// mtime, or the epoch without a stamp). Symlinks are not followed.
pub(crate) fn material_gate(home: &Path, since: Option<SystemTime>, min_sessions: usize) -> Gate {
    let since = since.unwrap_or(UNIX_EPOCH);
    let count = changed_sessions(home, since);
    if count >= min_sessions {
        Gate {
            ok: true,
            reason: format!("material gate: {count} changed {}", sessions(count)),
        }
    } else {
        Gate {
            ok: false,
            reason: format!("material gate: only {count} changed {}", sessions(count)),
        }
    }
}

fn changed_sessions(home: &Path, since: SystemTime) -> usize {
    let Ok(sessions) = fs::read_dir(home.join("pi").join("session")) else {
        return 0;
    };
    sessions
        .flatten()
        .filter(|session| session.file_type().is_ok_and(|kind| kind.is_dir()))
        .filter(|session| has_file_newer_than(&session.path(), since))
        .count()
}

fn has_file_newer_than(dir: &Path, since: SystemTime) -> bool {
    let Ok(entries) = fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|entry| {
        entry.file_type().is_ok_and(|kind| kind.is_file())
            && entry
                .metadata()
                .and_then(|meta| meta.modified())
                .is_ok_and(|modified| modified > since)
    })
}

fn millis(at: SystemTime) -> f64 {
    match at.duration_since(UNIX_EPOCH) {
        Ok(after) => after.as_secs_f64() * 1000.0,
        Err(before) => -before.duration().as_secs_f64() * 1000.0,
    }
}

fn sessions(count: usize) -> &'static str {
    if count == 1 { "session" } else { "sessions" }
}
