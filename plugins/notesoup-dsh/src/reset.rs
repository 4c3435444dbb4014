//! The reset's replace span: from the first surface node through the last
//! node after which no tool call is left unanswered.
//!
//! dsh validates the same contract when the marker is appended (the span is
//! on the surface, in order, and `sourceEventSeqs` covers every shadowed
//! node); planning it here first lets the sidecar refuse instead of the
//! append failing halfway through a reset.

use crate::mirror::SessionMirror;
use crate::protocol::Span;

/// Why no reset can be planned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpanError {
    /// dsh's surface differs from the mirror's fold (events are missing).
    #[error("dsh's surface {dsh:?} is not the mirrored surface {mirrored:?}")]
    SurfaceMismatch {
        /// What the bundle sent.
        dsh: Vec<u64>,
        /// What the sidecar folded.
        mirrored: Vec<u64>,
    },
    /// Every cut after the first node splits a tool call from its result.
    #[error("no balanced cut: every span from the first surface node splits a tool call")]
    Unbalanced,
}

/// The replace span and the nodes it shadows; `None` for an empty surface.
pub fn plan_span(
    mirror: &SessionMirror,
    dsh_surface: &[u64],
) -> Result<Option<(Span, Vec<u64>)>, SpanError> {
    let surface = mirror.surface();
    if surface != dsh_surface {
        return Err(SpanError::SurfaceMismatch {
            dsh: dsh_surface.to_vec(),
            mirrored: surface.to_vec(),
        });
    }
    let Some(&start) = surface.first() else {
        return Ok(None);
    };
    let last = mirror
        .balanced_after()
        .iter()
        .rposition(|balanced| *balanced)
        .ok_or(SpanError::Unbalanced)?;
    let shadowed = surface[..=last].to_vec();
    Ok(Some((
        Span {
            start,
            end: surface[last],
        },
        shadowed,
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::{SessionEvent, SurfaceOp};
    use serde_json::{Value, json};

    fn ev(seq: u64, kind: &str, data: Value) -> SessionEvent {
        SessionEvent::test_event(seq, kind, data, Some(SurfaceOp::Append))
    }

    fn mirror(kinds: &[&str]) -> SessionMirror {
        let call = json!({"message": {"content": [{"type": "tool-call", "id": "c", "name": "t", "arguments": "{}"}]}});
        let events = kinds
            .iter()
            .enumerate()
            .map(|(i, kind)| match *kind {
                "call" => ev(i as u64, "assistant/message", call.clone()),
                "result" => ev(i as u64, "tool/result", json!({"message": {"content": []}})),
                _ => ev(i as u64, "user/message", json!({"content": []})),
            })
            .collect();
        SessionMirror::from_events(events).expect("mirror")
    }

    #[test]
    fn spans_cover_the_balanced_prefix() {
        let whole = mirror(&["user", "call", "result", "user"]);
        assert_eq!(
            plan_span(&whole, &[0, 1, 2, 3]),
            Ok(Some((Span { start: 0, end: 3 }, vec![0, 1, 2, 3])))
        );
        let open_call = mirror(&["user", "call", "result", "call"]);
        assert_eq!(
            plan_span(&open_call, &[0, 1, 2, 3]),
            Ok(Some((Span { start: 0, end: 2 }, vec![0, 1, 2])))
        );
        let empty = SessionMirror::default();
        assert_eq!(plan_span(&empty, &[]), Ok(None));
    }

    #[test]
    fn refuses_mismatch_and_unbalanced_surfaces() {
        let whole = mirror(&["user", "user"]);
        assert!(matches!(
            plan_span(&whole, &[0]),
            Err(SpanError::SurfaceMismatch { .. })
        ));
        let only_call = mirror(&["call"]);
        assert_eq!(plan_span(&only_call, &[0]), Err(SpanError::Unbalanced));
    }
}
