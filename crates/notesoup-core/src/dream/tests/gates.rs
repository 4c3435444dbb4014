//! The time and material gates.

use std::fs;
use std::time::{Duration, SystemTime};

use jiff::Timestamp;
use notesoup_core::dream::{Gate, material_gate, time_gate};

use super::support::{hours_before, put, set_mtime};

fn now() -> Timestamp {
    "2026-09-15T09:31:45.392Z".parse().expect("timestamp")
}

fn gate(ok: bool, reason: &str) -> Gate {
    Gate {
        ok,
        reason: reason.to_owned(),
    }
}

#[test]
fn time_gate_reasons() {
    let at = SystemTime::from(now());
    let stale = (true, "time gate: stale");
    let too_recent = (false, "time gate: last dream is too recent");
    let cases = [
        (None, 24.0, (true, "time gate: no prior dream")),
        (Some(hours_before(at, 25)), 24.0, stale),
        (Some(hours_before(at, 24)), 24.0, stale),
        (
            Some(hours_before(at, 24) + Duration::from_millis(1)),
            24.0,
            too_recent,
        ),
        (Some(hours_before(at, 2)), 24.0, too_recent),
        (Some(hours_before(at, 2)), 1.5, stale),
        (Some(at + Duration::from_secs(60)), 0.0, too_recent),
    ];
    for (last_run, min_hours, (ok, reason)) in cases {
        assert_eq!(
            time_gate(last_run, now(), min_hours),
            gate(ok, reason),
            "{last_run:?} {min_hours}"
        );
    }
}

#[test]
fn material_gate_counts_sessions_with_a_direct_child_file_newer_than_the_stamp() {
    let home = tempfile::tempdir().expect("tempdir");
    let since = SystemTime::from(now());
    let newer = since + Duration::from_secs(60);
    let older = hours_before(since, 1);

    for (session, mtime) in [("a", newer), ("b", newer), ("c", older)] {
        set_mtime(
            &put(
                home.path(),
                &format!("pi/session/{session}/checkpoint.md"),
                "x",
            ),
            mtime,
        );
    }
    // A nested file does not count: only direct children do.
    set_mtime(&put(home.path(), "pi/session/d/deep/note.md", "x"), newer);
    // Not a session directory.
    set_mtime(&put(home.path(), "pi/session/loose.md", "x"), newer);
    // A symlinked session directory is not followed.
    #[cfg(unix)]
    std::os::unix::fs::symlink(
        home.path().join("pi/session/a"),
        home.path().join("pi/session/e"),
    )
    .expect("symlink");

    let check = |since: Option<SystemTime>, min_sessions: usize, expect: Gate| {
        assert_eq!(material_gate(home.path(), since, min_sessions), expect);
    };
    check(
        Some(since),
        3,
        gate(false, "material gate: only 2 changed sessions"),
    );
    check(
        Some(since),
        2,
        gate(true, "material gate: 2 changed sessions"),
    );
    check(None, 3, gate(true, "material gate: 3 changed sessions"));
    check(
        None,
        4,
        gate(false, "material gate: only 3 changed sessions"),
    );

    let empty = tempfile::tempdir().expect("tempdir");
    assert_eq!(
        material_gate(empty.path(), None, 0),
        gate(true, "material gate: 0 changed sessions")
    );
    assert_eq!(
        material_gate(empty.path(), None, 3),
        gate(false, "material gate: only 0 changed sessions")
    );
    assert!(
        fs::read_dir(empty.path()).expect("list").next().is_none(),
        "the gate creates nothing"
    );
}
