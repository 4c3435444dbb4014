//! The sidecar's copy of one dsh session log, fed by the bundle with every
//! event once, and the surface fold over it.
//!
//! The bundle forwards only the events the sidecar has not seen (`from` is
//! the first seq of the batch), so each event crosses the pipe once. A gap or
//! a fold that dsh would have refused is a [`MirrorError`]; the bundle then
//! re-sends the whole log (`from = 0`).

use crate::decode::{SessionEvent, SurfaceOp};

/// A refusal to extend the mirror.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MirrorError {
    /// The batch does not continue the mirrored log.
    #[error("events must continue at seq {expected}, got a batch from {from}")]
    Gap {
        /// The next seq the mirror expects.
        expected: u64,
        /// Where the batch started.
        from: u64,
    },
    /// An event's seq is not its position.
    #[error("event at position {position} has seq {seq}")]
    NotContiguous {
        /// Where it should be.
        position: u64,
        /// What it said.
        seq: u64,
    },
    /// A replace names a span that is not on the surface.
    #[error("surface replace at seq {seq}: {message}")]
    Surface {
        /// The replacing event.
        seq: u64,
        /// What was wrong.
        message: String,
    },
}

/// One session's mirrored log and its current surface.
#[derive(Debug, Clone, Default)]
pub struct SessionMirror {
    events: Vec<SessionEvent>,
    surface: Vec<u64>,
    /// Counts full re-sends (`from = 0`), so what was derived from an
    /// earlier copy of the log is known to be stale.
    generation: u64,
}

impl SessionMirror {
    /// A mirror of an already complete log (a recorded session, a test).
    pub fn from_events(events: Vec<SessionEvent>) -> Result<Self, MirrorError> {
        let mut mirror = Self::default();
        mirror.extend(0, events)?;
        Ok(mirror)
    }

    /// Adds a batch starting at seq `from`. `from = 0` replaces the mirror
    /// (a full re-send); otherwise `from` must be the next seq.
    pub fn extend(&mut self, from: u64, events: Vec<SessionEvent>) -> Result<(), MirrorError> {
        if from == 0 {
            self.generation += 1;
            self.events.clear();
            self.surface.clear();
        } else if from != self.next_seq() {
            return Err(MirrorError::Gap {
                expected: self.next_seq(),
                from,
            });
        }
        let mut surface = self.surface.clone();
        for (offset, event) in events.iter().enumerate() {
            let position = from + offset as u64;
            if event.seq != position {
                return Err(MirrorError::NotContiguous {
                    position,
                    seq: event.seq,
                });
            }
            fold(&mut surface, event)?;
        }
        self.surface = surface;
        self.events.extend(events);
        Ok(())
    }

    /// How many times the log was sent again from seq 0.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The seq the next event will have.
    pub fn next_seq(&self) -> u64 {
        self.events.len() as u64
    }

    /// Every mirrored event, in seq order.
    pub fn events(&self) -> &[SessionEvent] {
        &self.events
    }

    /// The event at `seq`.
    pub fn event(&self, seq: u64) -> Option<&SessionEvent> {
        self.events.get(usize::try_from(seq).ok()?)
    }

    /// The current model-visible surface: event seqs in order.
    pub fn surface(&self) -> &[u64] {
        &self.surface
    }

    /// For each surface position `i`, whether the cut right after node `i`
    /// leaves no tool call unanswered (dsh's tool-pairing balance).
    pub fn balanced_after(&self) -> Vec<bool> {
        let mut open = 0i64;
        self.surface
            .iter()
            .map(|seq| {
                open += self.event(*seq).map_or(0, SessionEvent::pairing_delta);
                open == 0
            })
            .collect()
    }
}

/// Applies one event's surface operation, as dsh's fold does.
fn fold(surface: &mut Vec<u64>, event: &SessionEvent) -> Result<(), MirrorError> {
    match event.surface_op {
        None => Ok(()),
        Some(SurfaceOp::Append) => {
            surface.push(event.seq);
            Ok(())
        }
        Some(SurfaceOp::Replace { start, end }) => {
            let refuse = |message: String| MirrorError::Surface {
                seq: event.seq,
                message,
            };
            let position = |seq: u64| surface.iter().position(|s| *s == seq);
            let start_idx = position(start)
                .ok_or_else(|| refuse(format!("start {start} is not on the surface")))?;
            let end_idx =
                position(end).ok_or_else(|| refuse(format!("end {end} is not on the surface")))?;
            if start_idx > end_idx {
                return Err(refuse(format!("start {start} comes after end {end}")));
            }
            surface.splice(start_idx..=end_idx, [event.seq]);
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn ev(seq: u64, kind: &str, data: Value, op: Option<SurfaceOp>) -> SessionEvent {
        SessionEvent::test_event(seq, kind, data, op)
    }

    fn user(seq: u64) -> SessionEvent {
        ev(
            seq,
            "user/message",
            json!({"content": []}),
            Some(SurfaceOp::Append),
        )
    }

    fn call(seq: u64) -> SessionEvent {
        ev(
            seq,
            "assistant/message",
            json!({"message": {"content": [{"type": "tool-call", "id": "c", "name": "t", "arguments": "{}"}]}}),
            Some(SurfaceOp::Append),
        )
    }

    fn result(seq: u64) -> SessionEvent {
        ev(
            seq,
            "tool/result",
            json!({"message": {"content": [{"type": "tool-result", "toolCallId": "c", "content": []}]}}),
            Some(SurfaceOp::Append),
        )
    }

    #[test]
    fn folds_appends_and_replaces_and_tracks_balance() {
        let mut mirror = SessionMirror::from_events(vec![
            ev(0, "turn/start", json!({}), None),
            user(1),
            call(2),
            result(3),
        ])
        .expect("mirror");
        assert_eq!(mirror.surface(), [1, 2, 3]);
        assert_eq!(mirror.balanced_after(), [true, false, true]);
        let replace = ev(
            4,
            "user/message",
            json!({"content": []}),
            Some(SurfaceOp::Replace { start: 1, end: 3 }),
        );
        mirror.extend(4, vec![replace, user(5)]).expect("extend");
        assert_eq!(mirror.surface(), [4, 5]);
        let one = ev(
            6,
            "user/message",
            json!({"content": []}),
            Some(SurfaceOp::Replace { start: 5, end: 5 }),
        );
        mirror.extend(6, vec![one]).expect("a span of one node");
        assert_eq!(mirror.surface(), [4, 6]);
    }

    #[test]
    fn each_full_re_send_is_a_new_generation() {
        let mut mirror = SessionMirror::default();
        assert_eq!(mirror.generation(), 0);
        mirror.extend(0, vec![user(0)]).expect("first send");
        assert_eq!(mirror.generation(), 1);
        mirror.extend(1, vec![user(1)]).expect("more");
        assert_eq!(mirror.generation(), 1, "a continuation is the same copy");
        mirror.extend(0, vec![user(0)]).expect("sent again");
        mirror.extend(0, vec![user(0), user(1)]).expect("and again");
        assert_eq!(mirror.generation(), 3);
        assert_eq!(mirror.surface(), [0, 1]);
    }

    #[test]
    fn refuses_gaps_and_bad_spans_without_changing() {
        let mut mirror = SessionMirror::from_events(vec![user(0), user(1)]).expect("mirror");
        assert_eq!(
            mirror.extend(5, vec![user(5)]),
            Err(MirrorError::Gap {
                expected: 2,
                from: 5
            })
        );
        let bad = ev(
            2,
            "user/message",
            json!({}),
            Some(SurfaceOp::Replace { start: 1, end: 0 }),
        );
        assert!(matches!(
            mirror.extend(2, vec![bad]),
            Err(MirrorError::Surface { seq: 2, .. })
        ));
        assert_eq!(mirror.next_seq(), 2);
        assert_eq!(mirror.surface(), [0, 1]);
        mirror.extend(0, vec![user(0)]).expect("full re-send");
        assert_eq!(mirror.surface(), [0]);
    }
}
