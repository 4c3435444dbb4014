//! Pi embedded through its SDK, as a program that creates a session and
//! disposes of it: the package's shim never keeps the host's Node process
//! alive, and its sidecar ends with the session by any path (an SDK host's
//! `session.dispose()` emits no `session_shutdown`). Without a sidecar, the
//! agent is told once that its memory tools are unavailable.

use serde_json::json;

use crate::support::{World, ended, text};

fn one_turn() -> serde_json::Value {
    json!([
        {"respond": [text("Hello back.")]},
        {"prompt": "Hello."},
    ])
}

/// Waits until `pid` has ended, failing only past a bound that stops a
/// hang.
fn wait_ended(pid: u32) {
    let started = std::time::Instant::now();
    while !ended(pid) {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "the sidecar ({pid}) outlived the session"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn a_session_disposed_through_the_sdk_stops_its_sidecar_and_node_ends() {
    let world = World::new(200_000);
    // The driver disposes of the session without a session_shutdown, waits
    // for the sidecar to go, and ends without calling exit: it ends only
    // because nothing holds Node.
    let report = world.run_ending(None, one_turn(), "dispose");
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    let pid = report.sidecar_pid.expect("a sidecar ran");
    assert!(ended(pid));
}

#[test]
fn a_session_left_as_it_is_lets_node_end_and_takes_its_sidecar_along() {
    let world = World::new(200_000);
    let report = world.run_ending(None, one_turn(), "none");
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    wait_ended(report.sidecar_pid.expect("a sidecar ran"));
}

#[test]
fn without_its_sidecar_the_agent_is_told_once_that_its_memory_tools_are_unavailable() {
    let world = World::without_sidecar(200_000);
    let report = world.start(json!([
        {"respond": [text("One.")]},
        {"prompt": "First."},
        {"respond": [text("Two.")]},
        {"prompt": "Second."},
    ]));
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    let told = |request: usize| {
        report.requests[request]
            .iter()
            .filter(|(_, text)| {
                text.contains("notesoup is unavailable in this session (")
                    && text.contains("your memory tools (notes_*, history_*) are not offered")
            })
            .count()
    };
    assert_eq!(told(0), 1, "{:#?}", report.requests[0]);
    // Told once: the second run sees the first telling, and no other.
    assert_eq!(told(1), 1, "{:#?}", report.requests[1]);
    assert_eq!(
        report
            .notice_texts()
            .iter()
            .filter(|notice| notice.starts_with("notesoup unavailable: "))
            .count(),
        1,
        "{:?}",
        report.notices
    );
}
