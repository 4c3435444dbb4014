//! The wastebasket rule, as the dream's delete enforces it: a note may be
//! physically deleted only when it was crumpled before this dream began and
//! has lain in the wastebasket long enough.
//!
//! "Before this dream began" is read from the baseline audit, which
//! records the home as the dream found it (the home's `HEAD`; the dreamer
//! can never write `.git`): the note must be byte for byte what `HEAD`
//! holds. So a note crumpled (or backdated, or otherwise changed) during
//! the run is refused, and whatever is deleted is recoverable from the
//! baseline commit exactly. "Long enough" is the playbook's rule: both
//! `crumpledAt` and the last access (`lastAccessed`, else `crumpledAt`)
//! more than [`WASTEBASKET_DAYS`] days old, read from the raw frontmatter.

use std::fs;
use std::path::Path;

use jiff::Timestamp;

use super::DreamError;
use super::scan::{RawFrontmatter, scan};
use crate::notes::parse_note;

/// How many days a note lies in the wastebasket before it may go.
pub(crate) const WASTEBASKET_DAYS: i64 = 7;

const DAY_MS: i64 = 24 * 60 * 60 * 1000;

/// Checks that the note `bytes`, the content of `real` (below `home`),
/// given by the dreamer as `path`, may be deleted at `now`.
pub(crate) fn check(
    home: &Path,
    real: &Path,
    path: &str,
    bytes: &[u8],
    now: Timestamp,
) -> Result<(), DreamError> {
    let text = std::str::from_utf8(bytes).map_err(|_| DreamError::NotText {
        path: path.to_owned(),
    })?;
    let now_ms = now.as_millisecond();
    // An unreadable time reads as `now`: too recent, so kept.
    let note = parse_note(text, now_ms, &crate::notes::system_time_zone());
    let Some(crumpled_at) = note.meta.crumpled_at else {
        return Err(DreamError::NotCrumpled {
            path: path.to_owned(),
        });
    };
    in_baseline(home, real, path, bytes)?;
    let last_access = if has_field(text, "lastAccessed") {
        note.meta.last_accessed
    } else {
        crumpled_at
    };
    let cutoff = now_ms.saturating_sub(WASTEBASKET_DAYS * DAY_MS);
    if crumpled_at < cutoff && last_access < cutoff {
        return Ok(());
    }
    let iso = |ms: i64| {
        Timestamp::from_millisecond(ms).map_or_else(|_| ms.to_string(), |at| at.to_string())
    };
    Err(DreamError::TooRecent {
        path: path.to_owned(),
        crumpled_at: iso(crumpled_at),
        last_access: iso(last_access),
        days: WASTEBASKET_DAYS,
    })
}

/// Whether the raw frontmatter has `key` (the codec fills a missing time
/// with a default, which must not count as an access).
fn has_field(text: &str, key: &str) -> bool {
    match scan(text) {
        RawFrontmatter::Block { fields, .. } => fields.iter().any(|field| field.key == key),
        RawFrontmatter::Missing | RawFrontmatter::Unclosed => false,
    }
}

/// Refuses unless the home's `HEAD` holds `real` as a file with exactly
/// `bytes`.
fn in_baseline(home: &Path, real: &Path, path: &str, bytes: &[u8]) -> Result<(), DreamError> {
    let no_baseline = |reason: String| DreamError::NoBaseline {
        path: path.to_owned(),
        reason,
    };
    let not_in_baseline = || DreamError::NotInBaseline {
        path: path.to_owned(),
    };
    let real_home = fs::canonicalize(home).map_err(|err| no_baseline(err.to_string()))?;
    let relative = real
        .strip_prefix(&real_home)
        .map_err(|_| not_in_baseline())?;
    let repo = gix::open_opts(&real_home, gix::open::Options::isolated())
        .map_err(|err| no_baseline(format!("no audit repository: {err}")))?;
    let tree = repo
        .head_tree()
        .map_err(|err| no_baseline(format!("no baseline commit: {err}")))?;
    let entry = tree
        .lookup_entry_by_path(relative)
        .map_err(|err| no_baseline(err.to_string()))?
        .ok_or_else(not_in_baseline)?;
    if !entry.mode().is_blob() {
        return Err(not_in_baseline());
    }
    let blob = entry.object().map_err(|err| no_baseline(err.to_string()))?;
    if blob.data.as_slice() == bytes {
        Ok(())
    } else {
        Err(not_in_baseline())
    }
}
