//! Every decision on a session log recorded from the pinned dsh: a headless
//! run whose scripted model called `get_context_remaining`, then
//! `wipe_memory`, then answered in the fresh window.

use notesoup_dsh::decode::{SessionEvent, SurfaceOp};
use notesoup_dsh::mirror::SessionMirror;
use notesoup_dsh::protocol::Span;
use notesoup_dsh::reset::plan_span;
use notesoup_dsh::window::{BootCarrier, recover, windows};

use crate::{boots_on_the_surface, fixture_log};

const LOG: &str = "wipe-reset.session.jsonl";
/// The reset marker's seq in the recording.
const MARKER: u64 = 34;

fn prefix(events: &[SessionEvent], through: u64) -> Vec<SessionEvent> {
    events
        .iter()
        .filter(|e| e.seq <= through)
        .cloned()
        .collect()
}

#[test]
fn the_log_folds_to_one_boot_per_window() {
    let log = fixture_log(LOG);
    let mirror = SessionMirror::from_events(log.events.clone()).expect("dsh accepted this log");
    // After the reset: the marker, the continuation, dsh's re-logged runtime
    // context, the answer.
    assert_eq!(mirror.surface(), [MARKER, 39, 40, 46]);
    let boots = boots_on_the_surface(&mirror);
    assert_eq!(
        boots,
        [MARKER],
        "exactly one boot is model-visible in window 2"
    );
}

#[test]
fn windows_and_recovery() {
    let log = fixture_log(LOG);
    let id = &log.header.id;
    let spans = windows(id, &log.events);
    let ids: Vec<String> = spans.iter().map(|w| w.id.clone()).collect();
    assert_eq!(ids, [format!("dsh:{id}:1"), format!("dsh:{id}:2")]);
    assert_eq!(spans[1].marker_seq, Some(MARKER));

    let now = recover(id, &log.events);
    assert_eq!(now.window.ordinal, 2);
    assert_eq!(now.boot, BootCarrier::Marker);

    let before = recover(id, &prefix(&log.events, MARKER - 1));
    assert_eq!(before.window.ordinal, 1);
    let BootCarrier::Context(Some(boot)) = before.boot else {
        panic!("window 1 keeps the boot dsh logged: {:?}", before.boot)
    };
    assert!(boot.starts_with("<context_window>\n"), "{boot}");
    assert!(boot.contains(&format!("Current context window id: dsh:{id}:1\n")));
}

#[test]
fn the_planned_span_is_the_one_dsh_accepted() {
    let log = fixture_log(LOG);
    let before = SessionMirror::from_events(prefix(&log.events, MARKER - 1)).expect("prefix");
    let planned = plan_span(&before, before.surface()).expect("plan");
    let marker = &log.events[MARKER as usize];
    let Some(SurfaceOp::Replace { start, end }) = marker.surface_op else {
        panic!("the marker replaces")
    };
    assert_eq!(
        planned,
        Some((
            Span { start, end },
            marker.source_event_seqs.clone().expect("cited")
        ))
    );
}
