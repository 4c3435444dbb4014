//! Every transition of the reset reducer (seed 001's tables and
//! behavior.md §8.4/§8.7), one row each.

use notesoup_pi::projection::MarkerOrigin::{Forced, Normal};
use notesoup_pi::reset::{
    CloseOutSource, CommitPlan, OverflowPhase, RequestPhase, ResetControl, ResetEffect, ResetEvent,
    SettleFacts, ToolSource, TurnEndFacts, TurnOutcome, reduce, settle_matters,
};

use OverflowPhase::{Idle, Pending, PendingSpent, Spent};

// ---- states ---------------------------------------------------------------

fn state(request: RequestPhase, overflow: OverflowPhase) -> ResetControl {
    ResetControl { request, overflow }
}
fn none() -> RequestPhase {
    RequestPhase::None
}
fn manual(window: &str) -> RequestPhase {
    RequestPhase::CloseOut {
        window_id: window.into(),
        source: CloseOutSource::Manual,
        prompt: None,
    }
}
fn manual_with(window: &str, prompt: &str) -> RequestPhase {
    RequestPhase::CloseOut {
        window_id: window.into(),
        source: CloseOutSource::Manual,
        prompt: Some(prompt.into()),
    }
}
fn automatic(window: &str) -> RequestPhase {
    RequestPhase::CloseOut {
        window_id: window.into(),
        source: CloseOutSource::Automatic,
        prompt: None,
    }
}
fn tool(window: &str) -> RequestPhase {
    RequestPhase::ToolRequested {
        window_id: window.into(),
        source: ToolSource::Tool,
    }
}
fn tool_in_close_out(window: &str) -> RequestPhase {
    RequestPhase::ToolRequested {
        window_id: window.into(),
        source: ToolSource::Automatic,
    }
}
fn stop(window: &str) -> RequestPhase {
    RequestPhase::StopPending {
        window_id: window.into(),
    }
}

// ---- events ---------------------------------------------------------------

fn close_out(window: &str, source: CloseOutSource, prompt: Option<&str>) -> ResetEvent {
    ResetEvent::CloseOut {
        window_id: window.into(),
        source,
        prompt: prompt.map(str::to_owned),
    }
}
fn wipe(window: &str) -> ResetEvent {
    ResetEvent::ToolRequest {
        window_id: window.into(),
    }
}

/// A turn end in window w1 with every gate open; rows tweak one fact.
fn turn(outcome: TurnOutcome) -> TurnEndFacts {
    TurnEndFacts {
        window_id: "w1".into(),
        outcome,
        queued: false,
        enabled: true,
        automatic: true,
        hard_reserve: false,
    }
}
fn turn_end(facts: TurnEndFacts) -> ResetEvent {
    ResetEvent::TurnEnd(facts)
}
const DONE: TurnOutcome = TurnOutcome::Completed;
const OVERFLOW: TurnOutcome = TurnOutcome::Error { overflow: true };
const ERROR: TurnOutcome = TurnOutcome::Error { overflow: false };
const ABORTED: TurnOutcome = TurnOutcome::Aborted;

/// A settlement in window w1 with every gate open.
fn settle(outcome: TurnOutcome) -> SettleFacts {
    SettleFacts {
        window_id: "w1".into(),
        outcome,
        aborted: false,
        queued: false,
        enabled: true,
    }
}
fn before_settle(facts: SettleFacts) -> ResetEvent {
    ResetEvent::BeforeSettle(facts)
}

// ---- effects --------------------------------------------------------------

fn commit(origin: notesoup_pi::projection::MarkerOrigin) -> ResetEffect {
    ResetEffect::CommitBoundary(CommitPlan {
        origin,
        prompt: None,
    })
}
fn commit_with(origin: notesoup_pi::projection::MarkerOrigin, prompt: &str) -> ResetEffect {
    ResetEffect::CommitBoundary(CommitPlan {
        origin,
        prompt: Some(prompt.into()),
    })
}
fn commit_stop(origin: notesoup_pi::projection::MarkerOrigin) -> ResetEffect {
    ResetEffect::CommitBoundaryStop(CommitPlan {
        origin,
        prompt: None,
    })
}
fn recover() -> ResetEffect {
    ResetEffect::RecoverOverflow(CommitPlan {
        origin: Forced,
        prompt: None,
    })
}
use ResetEffect::{AlreadyPending, CloseOutArmed, Stop};
const NOTHING: ResetEffect = ResetEffect::None;

struct Row {
    name: &'static str,
    from: ResetControl,
    event: ResetEvent,
    to: ResetControl,
    effect: ResetEffect,
}

fn row(
    name: &'static str,
    from: ResetControl,
    event: ResetEvent,
    to: ResetControl,
    effect: ResetEffect,
) -> Row {
    Row {
        name,
        from,
        event,
        to,
        effect,
    }
}

fn check(rows: Vec<Row>) {
    for Row {
        name,
        from,
        event,
        to,
        effect,
    } in rows
    {
        let (next, got) = reduce(&from, &event);
        assert_eq!((next, got), (to, effect), "{name}");
    }
}

#[test]
fn close_out_requests() {
    use CloseOutSource::{Automatic, Manual};
    check(vec![
        row(
            "manual arms",
            state(none(), Idle),
            close_out("w1", Manual, None),
            state(manual("w1"), Idle),
            CloseOutArmed,
        ),
        row(
            "manual with text arms and keeps the text",
            state(none(), Idle),
            close_out("w1", Manual, Some("go on")),
            state(manual_with("w1", "go on"), Idle),
            CloseOutArmed,
        ),
        row(
            "automatic arms",
            state(none(), Idle),
            close_out("w1", Automatic, None),
            state(automatic("w1"), Idle),
            CloseOutArmed,
        ),
        row(
            "repeated manual keeps the original prompt",
            state(manual("w1"), Idle),
            close_out("w1", Manual, Some("other")),
            state(manual("w1"), Idle),
            AlreadyPending,
        ),
        row(
            "automatic never downgrades manual",
            state(manual_with("w1", "x"), Idle),
            close_out("w1", Automatic, None),
            state(manual_with("w1", "x"), Idle),
            AlreadyPending,
        ),
        row(
            "automatic re-arm deduplicates",
            state(automatic("w1"), Idle),
            close_out("w1", Automatic, None),
            state(automatic("w1"), Idle),
            AlreadyPending,
        ),
        row(
            "manual upgrades automatic",
            state(automatic("w1"), Idle),
            close_out("w1", Manual, Some("t")),
            state(manual_with("w1", "t"), Idle),
            CloseOutArmed,
        ),
        row(
            "manual converts a tool request into a settle-committed close-out",
            state(tool("w1"), Idle),
            close_out("w1", Manual, None),
            state(manual("w1"), Idle),
            CloseOutArmed,
        ),
        row(
            "automatic leaves a tool request alone",
            state(tool("w1"), Idle),
            close_out("w1", Automatic, None),
            state(tool("w1"), Idle),
            AlreadyPending,
        ),
        row(
            "stop-pending only acknowledges",
            state(stop("w0"), Idle),
            close_out("w1", Manual, None),
            state(stop("w0"), Idle),
            AlreadyPending,
        ),
        row(
            "a request of another window is replaced",
            state(automatic("w0"), Idle),
            close_out("w1", Manual, None),
            state(manual("w1"), Idle),
            CloseOutArmed,
        ),
        row(
            "a stale tool request is replaced",
            state(tool("w0"), Idle),
            close_out("w1", Automatic, None),
            state(automatic("w1"), Idle),
            CloseOutArmed,
        ),
        row(
            "the overflow phase is untouched",
            state(none(), Spent),
            close_out("w1", Manual, None),
            state(manual("w1"), Spent),
            CloseOutArmed,
        ),
    ]);
}

#[test]
fn tool_requests() {
    check(vec![
        row(
            "a direct wipe needs no warning",
            state(none(), Idle),
            wipe("w1"),
            state(tool("w1"), Idle),
            CloseOutArmed,
        ),
        row(
            "same-window wipes deduplicate",
            state(tool("w1"), Idle),
            wipe("w1"),
            state(tool("w1"), Idle),
            AlreadyPending,
        ),
        row(
            "a wipe inside a budget close-out upgrades to a turn-end commit",
            state(automatic("w1"), Idle),
            wipe("w1"),
            state(tool_in_close_out("w1"), Idle),
            CloseOutArmed,
        ),
        row(
            "a wipe inside a manual close-out only acknowledges",
            state(manual("w1"), Idle),
            wipe("w1"),
            state(manual("w1"), Idle),
            AlreadyPending,
        ),
        row(
            "a wipe while stop-pending only acknowledges",
            state(stop("w0"), Idle),
            wipe("w1"),
            state(stop("w0"), Idle),
            AlreadyPending,
        ),
        row(
            "a stale tool request is replaced",
            state(tool("w0"), Idle),
            wipe("w1"),
            state(tool("w1"), Idle),
            CloseOutArmed,
        ),
        row(
            "a stale manual close-out is replaced",
            state(manual("w0"), Pending),
            wipe("w1"),
            state(tool("w1"), Pending),
            CloseOutArmed,
        ),
    ]);
}

#[test]
fn turn_end_failures() {
    check(vec![
        row(
            "an aborted turn clears everything",
            state(manual("w1"), Pending),
            turn_end(turn(ABORTED)),
            state(none(), Idle),
            NOTHING,
        ),
        row(
            "an aborted turn drops a tool request",
            state(tool("w1"), Idle),
            turn_end(turn(ABORTED)),
            state(none(), Idle),
            NOTHING,
        ),
        row(
            "overflow preserves a manual close-out across queued work",
            state(manual("w1"), Idle),
            turn_end(TurnEndFacts {
                queued: true,
                automatic: false,
                ..turn(OVERFLOW)
            }),
            state(manual("w1"), Pending),
            NOTHING,
        ),
        row(
            "a second overflow after a spent recovery is pending-spent",
            state(manual("w1"), Spent),
            turn_end(turn(OVERFLOW)),
            state(manual("w1"), PendingSpent),
            NOTHING,
        ),
        row(
            "overflow arms automatic recovery and drops the tool request",
            state(tool("w1"), Idle),
            turn_end(turn(OVERFLOW)),
            state(none(), Pending),
            NOTHING,
        ),
        row(
            "overflow with an automatic close-out arms recovery",
            state(automatic("w1"), Idle),
            turn_end(turn(OVERFLOW)),
            state(none(), Pending),
            NOTHING,
        ),
        row(
            "overflow with queued work arms nothing",
            state(none(), Idle),
            turn_end(TurnEndFacts {
                queued: true,
                ..turn(OVERFLOW)
            }),
            state(none(), Idle),
            NOTHING,
        ),
        row(
            "overflow without automatic resets arms nothing",
            state(none(), Idle),
            turn_end(TurnEndFacts {
                automatic: false,
                ..turn(OVERFLOW)
            }),
            state(none(), Idle),
            NOTHING,
        ),
        row(
            "overflow while off arms nothing",
            state(tool("w1"), Idle),
            turn_end(TurnEndFacts {
                enabled: false,
                ..turn(OVERFLOW)
            }),
            state(none(), Idle),
            NOTHING,
        ),
        row(
            "overflow after a spent recovery stays bounded",
            state(none(), Spent),
            turn_end(turn(OVERFLOW)),
            state(none(), PendingSpent),
            NOTHING,
        ),
        row(
            "an ordinary error drops a manual close-out but keeps the chain",
            state(manual("w1"), Pending),
            turn_end(turn(ERROR)),
            state(none(), Pending),
            NOTHING,
        ),
        row(
            "an ordinary error drops a tool request",
            state(tool("w1"), Idle),
            turn_end(turn(ERROR)),
            state(none(), Idle),
            NOTHING,
        ),
    ]);
}

#[test]
fn turn_end_commits() {
    let hard = |outcome| TurnEndFacts {
        hard_reserve: true,
        ..turn(outcome)
    };
    check(vec![
        row(
            "a tool request commits and continues",
            state(tool("w1"), Idle),
            turn_end(turn(DONE)),
            state(none(), Idle),
            commit(Normal),
        ),
        row(
            "a tool request inside a budget close-out commits",
            state(tool_in_close_out("w1"), Idle),
            turn_end(turn(DONE)),
            state(none(), Idle),
            commit(Normal),
        ),
        row(
            "a tool request at the hard reserve is forced",
            state(tool("w1"), Idle),
            turn_end(hard(DONE)),
            state(none(), Idle),
            commit(Forced),
        ),
        row(
            "a tool request of another window is stale",
            state(tool("w0"), Idle),
            turn_end(turn(DONE)),
            state(none(), Idle),
            NOTHING,
        ),
        row(
            "a budget close-out alone stays armed",
            state(automatic("w1"), Idle),
            turn_end(turn(DONE)),
            state(automatic("w1"), Idle),
            NOTHING,
        ),
        row(
            "a manual close-out stays armed across turns",
            state(manual("w1"), Idle),
            turn_end(turn(DONE)),
            state(manual("w1"), Idle),
            NOTHING,
        ),
        row(
            "hard reserve in a bare manual close-out commits and latches the stop",
            state(manual("w1"), Idle),
            turn_end(hard(DONE)),
            state(stop("w1"), Idle),
            commit_stop(Forced),
        ),
        row(
            "hard reserve in a manual close-out with text continues once",
            state(manual_with("w1", "go"), Idle),
            turn_end(hard(DONE)),
            state(none(), Idle),
            commit_with(Forced, "go"),
        ),
        row(
            "hard reserve alone forces a reset",
            state(none(), Idle),
            turn_end(hard(DONE)),
            state(none(), Idle),
            commit(Forced),
        ),
        row(
            "hard reserve in a budget close-out forces a reset",
            state(automatic("w1"), Idle),
            turn_end(hard(DONE)),
            state(none(), Idle),
            commit(Forced),
        ),
        row(
            "hard reserve needs automatic resets",
            state(none(), Idle),
            turn_end(TurnEndFacts {
                automatic: false,
                ..hard(DONE)
            }),
            state(none(), Idle),
            NOTHING,
        ),
        row(
            "a stopped run is never reset again",
            state(stop("w0"), Idle),
            turn_end(hard(DONE)),
            state(stop("w0"), Idle),
            NOTHING,
        ),
        row(
            "nothing commits while off",
            state(tool("w1"), Idle),
            turn_end(TurnEndFacts {
                enabled: false,
                ..hard(DONE)
            }),
            state(tool("w1"), Idle),
            NOTHING,
        ),
        row(
            "a queued success clears an overflow failure",
            state(none(), Pending),
            turn_end(turn(DONE)),
            state(none(), Idle),
            NOTHING,
        ),
        row(
            "a success after a spent chain keeps it spent",
            state(none(), PendingSpent),
            turn_end(turn(DONE)),
            state(none(), Spent),
            NOTHING,
        ),
        row(
            "a spent chain stays spent",
            state(none(), Spent),
            turn_end(turn(DONE)),
            state(none(), Spent),
            NOTHING,
        ),
    ]);
}

#[test]
fn before_settle_decisions() {
    check(vec![
        row(
            "an actual abort clears everything",
            state(manual("w1"), Pending),
            before_settle(SettleFacts {
                aborted: true,
                ..settle(DONE)
            }),
            state(none(), Idle),
            NOTHING,
        ),
        row(
            "a committed stop only stops",
            state(stop("w0"), Idle),
            before_settle(settle(DONE)),
            state(none(), Idle),
            Stop,
        ),
        row(
            "a stop whose window is still active retries the commit",
            state(stop("w1"), Idle),
            before_settle(settle(DONE)),
            state(none(), Idle),
            commit_stop(Forced),
        ),
        row(
            "a stop while off does nothing",
            state(stop("w1"), Idle),
            before_settle(SettleFacts {
                enabled: false,
                ..settle(DONE)
            }),
            state(none(), Idle),
            NOTHING,
        ),
        row(
            "manual overflow commits and stops without retry",
            state(manual("w1"), Pending),
            before_settle(settle(OVERFLOW)),
            state(none(), Spent),
            commit_stop(Forced),
        ),
        row(
            "manual overflow with text continues with it",
            state(manual_with("w1", "go"), Pending),
            before_settle(settle(OVERFLOW)),
            state(none(), Spent),
            commit_with(Forced, "go"),
        ),
        row(
            "manual overflow waits for queued work",
            state(manual("w1"), Pending),
            before_settle(SettleFacts {
                queued: true,
                ..settle(OVERFLOW)
            }),
            state(manual("w1"), Pending),
            NOTHING,
        ),
        row(
            "manual overflow after a spent chain still stops",
            state(manual("w1"), PendingSpent),
            before_settle(settle(OVERFLOW)),
            state(none(), Spent),
            commit_stop(Forced),
        ),
        row(
            "pending overflow recovers once",
            state(none(), Pending),
            before_settle(settle(OVERFLOW)),
            state(none(), Spent),
            recover(),
        ),
        row(
            "pending overflow waits for queued work",
            state(none(), Pending),
            before_settle(SettleFacts {
                queued: true,
                ..settle(OVERFLOW)
            }),
            state(none(), Pending),
            NOTHING,
        ),
        row(
            "pending overflow while off does nothing",
            state(none(), Pending),
            before_settle(SettleFacts {
                enabled: false,
                ..settle(OVERFLOW)
            }),
            state(none(), Pending),
            NOTHING,
        ),
        row(
            "a spent chain never recovers again",
            state(none(), PendingSpent),
            before_settle(settle(OVERFLOW)),
            state(none(), PendingSpent),
            NOTHING,
        ),
        row(
            "a bare manual close-out commits and stops",
            state(manual("w1"), Idle),
            before_settle(settle(DONE)),
            state(none(), Idle),
            commit_stop(Normal),
        ),
        row(
            "a manual close-out with text commits and continues",
            state(manual_with("w1", "next task"), Idle),
            before_settle(settle(DONE)),
            state(none(), Idle),
            commit_with(Normal, "next task"),
        ),
        row(
            "queued work runs before a manual commit",
            state(manual("w1"), Idle),
            before_settle(SettleFacts {
                queued: true,
                ..settle(DONE)
            }),
            state(manual("w1"), Idle),
            NOTHING,
        ),
        row(
            "a manual close-out needs a successful outcome",
            state(manual("w1"), Idle),
            before_settle(settle(ERROR)),
            state(manual("w1"), Idle),
            NOTHING,
        ),
        row(
            "a manual close-out needs notesoup on",
            state(manual("w1"), Idle),
            before_settle(SettleFacts {
                enabled: false,
                ..settle(DONE)
            }),
            state(manual("w1"), Idle),
            NOTHING,
        ),
        row(
            "a manual close-out of another window is dropped",
            state(manual("w0"), Idle),
            before_settle(settle(DONE)),
            state(none(), Idle),
            NOTHING,
        ),
        row(
            "a budget close-out alone is discarded",
            state(automatic("w1"), Idle),
            before_settle(settle(DONE)),
            state(none(), Idle),
            NOTHING,
        ),
        row(
            "a leftover tool request is dropped",
            state(tool("w1"), Idle),
            before_settle(settle(DONE)),
            state(none(), Idle),
            NOTHING,
        ),
        row(
            "nothing pending",
            state(none(), Spent),
            before_settle(settle(DONE)),
            state(none(), Spent),
            NOTHING,
        ),
    ]);
}

#[test]
fn clear_drops_transient_state() {
    for from in [
        state(manual_with("w1", "x"), Pending),
        state(stop("w0"), Spent),
        state(tool("w1"), PendingSpent),
        state(none(), Idle),
    ] {
        assert_eq!(
            reduce(&from, &ResetEvent::Clear),
            (ResetControl::default(), NOTHING)
        );
    }
}

mod properties {
    use notesoup_pi::reset::{
        CloseOutSource, OverflowPhase, ResetControl, ResetEffect, ResetEvent, SettleFacts,
        TurnEndFacts, TurnOutcome, reduce,
    };
    use proptest::prelude::*;

    fn window() -> impl Strategy<Value = String> {
        prop_oneof![Just("w1".to_owned()), Just("w2".to_owned())]
    }

    fn outcome() -> impl Strategy<Value = TurnOutcome> {
        prop_oneof![
            Just(TurnOutcome::Completed),
            Just(TurnOutcome::Aborted),
            any::<bool>().prop_map(|overflow| TurnOutcome::Error { overflow }),
        ]
    }

    fn event() -> impl Strategy<Value = ResetEvent> {
        prop_oneof![
            (window(), any::<bool>(), prop::option::of("[a-z]{1,4}")).prop_map(
                |(window_id, manual, prompt)| ResetEvent::CloseOut {
                    window_id,
                    source: if manual {
                        CloseOutSource::Manual
                    } else {
                        CloseOutSource::Automatic
                    },
                    prompt: if manual { prompt } else { None },
                }
            ),
            window().prop_map(|window_id| ResetEvent::ToolRequest { window_id }),
            (window(), outcome(), any::<[bool; 4]>()).prop_map(|(window_id, outcome, f)| {
                ResetEvent::TurnEnd(TurnEndFacts {
                    window_id,
                    outcome,
                    queued: f[0],
                    enabled: f[1],
                    automatic: f[2],
                    hard_reserve: f[3],
                })
            }),
            (window(), outcome(), any::<[bool; 3]>()).prop_map(|(window_id, outcome, f)| {
                ResetEvent::BeforeSettle(SettleFacts {
                    window_id,
                    outcome,
                    aborted: f[0],
                    queued: f[1],
                    enabled: f[2],
                })
            }),
            Just(ResetEvent::Clear),
        ]
    }

    fn commits(effect: &ResetEffect) -> bool {
        matches!(
            effect,
            ResetEffect::CommitBoundary(_)
                | ResetEffect::CommitBoundaryStop(_)
                | ResetEffect::RecoverOverflow(_)
        )
    }

    proptest! {
        #[test]
        fn lifecycle_invariants_hold_for_any_event_sequence(events in prop::collection::vec(event(), 1..60)) {
            let mut state = ResetControl::default();
            let mut recovered_since_clear = false;
            for event in events {
                let (next, effect) = reduce(&state, &event);
                if effect == ResetEffect::AlreadyPending {
                    prop_assert_eq!(&next, &state, "a duplicate changes nothing");
                }
                match &event {
                    ResetEvent::CloseOut { .. } | ResetEvent::ToolRequest { .. } => {
                        prop_assert!(!commits(&effect), "requests never commit by themselves");
                    }
                    ResetEvent::TurnEnd(facts) => {
                        prop_assert!(!commits(&effect) || facts.enabled, "nothing commits while off");
                        prop_assert!(
                            !commits(&effect) || facts.outcome == TurnOutcome::Completed,
                            "failed turns never commit"
                        );
                        prop_assert!(!matches!(effect, ResetEffect::RecoverOverflow(_)));
                    }
                    ResetEvent::BeforeSettle(facts) => {
                        prop_assert!(!commits(&effect) || (facts.enabled && !facts.aborted));
                    }
                    ResetEvent::Clear => {
                        prop_assert_eq!(&next, &ResetControl::default());
                    }
                }
                if matches!(effect, ResetEffect::RecoverOverflow(_)) {
                    prop_assert!(!recovered_since_clear, "one recovery per failure chain");
                    recovered_since_clear = true;
                }
                // A chain ends only when the overflow phase is idle again
                // (a clear or an abort), never by a later success.
                if next.overflow == OverflowPhase::Idle {
                    recovered_since_clear = false;
                }
                state = next;
            }
        }
    }
}

// ---- whether a settlement can matter ----------------------------------------

/// Every request phase (for two windows, with and without a prompt) under
/// every overflow phase.
fn every_control() -> Vec<ResetControl> {
    let requests = [
        none(),
        manual("w1"),
        manual_with("w2", "go on"),
        automatic("w1"),
        tool("w2"),
        tool_in_close_out("w1"),
        stop("w2"),
    ];
    let mut controls = Vec::new();
    for request in requests {
        for overflow in [Idle, Pending, PendingSpent, Spent] {
            controls.push(state(request.clone(), overflow));
        }
    }
    controls
}

const OUTCOMES: [TurnOutcome; 4] = [
    TurnOutcome::Completed,
    TurnOutcome::Aborted,
    TurnOutcome::Error { overflow: false },
    TurnOutcome::Error { overflow: true },
];

/// `settle_matters` is false exactly when no settlement Pi could report
/// changes the state or has an effect: over every control state, notesoup
/// on and off, and every settlement (three windows, every outcome, abort
/// and queued work). The bridge leaves `agent_before_settle` unsubscribed
/// while it is false.
#[test]
fn settle_matters_exactly_when_some_settlement_acts() {
    let mut quiet = 0;
    for control in every_control() {
        for enabled in [true, false] {
            let mut acts = false;
            for window in ["w1", "w2", "w3"] {
                for outcome in OUTCOMES {
                    for (aborted, queued) in
                        [(false, false), (false, true), (true, false), (true, true)]
                    {
                        let facts = SettleFacts {
                            window_id: window.into(),
                            outcome,
                            aborted,
                            queued,
                            enabled,
                        };
                        let event = ResetEvent::BeforeSettle(facts);
                        acts |= reduce(&control, &event) != (control.clone(), ResetEffect::None);
                    }
                }
            }
            assert_eq!(
                settle_matters(&control),
                acts,
                "{control:?}, enabled {enabled}"
            );
            quiet += usize::from(!acts);
        }
    }
    // Only the idle state (nothing pending, no overflow phase) is quiet,
    // on and off: a settlement clears or acts on anything else. It is the
    // state of every ordinary run.
    assert!(!settle_matters(&ResetControl::default()));
    assert!(settle_matters(&state(manual("w1"), Idle)));
    assert!(settle_matters(&state(none(), Spent)));
    assert_eq!(quiet, 2);
}

// ---- whether a turn's end can matter ----------------------------------------

/// Whether the `turn_end` of `facts` changes `control` or has an effect.
fn turn_end_acts(control: &ResetControl, facts: TurnEndFacts) -> bool {
    reduce(control, &ResetEvent::TurnEnd(facts)) != (control.clone(), ResetEffect::None)
}

/// Every `turn_end` Pi could report in window `w1` of `outcome` at the
/// reserve or not: three windows, queued work, notesoup on and off,
/// automatic resets on and off.
fn every_turn_end(outcome: TurnOutcome, hard_reserve: bool) -> Vec<TurnEndFacts> {
    let mut all = Vec::new();
    for window in ["w1", "w2", "w3"] {
        for (queued, enabled, automatic) in [
            (false, false, false),
            (false, false, true),
            (false, true, false),
            (false, true, true),
            (true, false, false),
            (true, false, true),
            (true, true, false),
            (true, true, true),
        ] {
            all.push(TurnEndFacts {
                window_id: window.into(),
                outcome,
                queued,
                enabled,
                automatic,
                hard_reserve,
            });
        }
    }
    all
}

/// What lets the bridge leave `turn_end` unsubscribed: in the idle state,
/// no completed turn short of the reserve changes anything, whatever else
/// Pi reports; the shim holds `turn_end` itself for every other outcome and
/// for a turn that reaches its line (which lies before the reserve). In
/// every other state some turn end acts, so the bridge holds the event
/// (the reducer's `settle_matters`, which `needs("turn_end")` reads).
#[test]
fn only_an_idle_state_lets_an_ordinary_turn_end_pass_unseen() {
    let idle = ResetControl::default();
    for facts in every_turn_end(TurnOutcome::Completed, false) {
        assert!(!turn_end_acts(&idle, facts.clone()), "{facts:?}");
    }
    // What the shim holds the event for does act in the idle state: an
    // overflow (with notesoup on, resets automatic, nothing queued) and a
    // completed turn at the reserve.
    for (outcome, hard_reserve) in [
        (TurnOutcome::Error { overflow: true }, false),
        (TurnOutcome::Completed, true),
    ] {
        assert!(
            every_turn_end(outcome, hard_reserve)
                .into_iter()
                .any(|facts| turn_end_acts(&idle, facts)),
            "{outcome:?}, at the reserve {hard_reserve}"
        );
    }
    for control in every_control() {
        if control == idle {
            continue;
        }
        let acts = OUTCOMES.iter().any(|&outcome| {
            [false, true].into_iter().any(|hard| {
                every_turn_end(outcome, hard)
                    .into_iter()
                    .any(|facts| turn_end_acts(&control, facts))
            })
        });
        assert!(acts, "{control:?}");
        assert!(settle_matters(&control), "{control:?}");
    }
}
