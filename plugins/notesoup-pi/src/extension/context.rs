//! `context_with_system`: the final provider context of the active window.
//!
//! A checkpoint-backed window is already cut by Pi's canonical projection;
//! it only has to show its boot. A legacy marker-only window is sliced at its
//! boot, keeping the folded system prompt and tools of the dropped prefix. A
//! window without a visible boot never sends raw history: the request is
//! aborted with a notice and only the system head goes out (except for the
//! close-out of a `/fresh-window` armed in a checkpoint-backed window, which
//! is the way out and cannot leak what the checkpoint cut). After a manual
//! hard-reserve reset, the tool-batch follow-up Pi would still make is
//! cancelled the same way once the boundary is verified.

use serde_json::Value;

use super::{Notesoup, texts};
use crate::host::{MessageSummary, NotifyLevel, PiHost, WindowEdit};
use crate::projection::{current_system_message, is_checkpoint_backed};
use crate::reset::window::{active_window, boundary_committed, is_own_root_boot};
use crate::reset::{CloseOutSource, Kind, RequestPhase};
use crate::session::AgentMessage;

/// Only the replayed system message of `messages`.
fn system_head(messages: &[MessageSummary]) -> WindowEdit {
    WindowEdit::head_only(
        current_system_message(messages.iter().filter_map(MessageSummary::whole))
            .map(AgentMessage::System),
    )
}

fn custom_kind(message: &MessageSummary) -> Option<(Kind, Option<&Value>)> {
    Kind::of(message.custom_type()?).map(|kind| (kind, message.details()))
}

/// A boot whose `details.windowId` is `window_id` (`reset::is_boot_of` over
/// a summary).
fn is_boot_of(message: &MessageSummary, window_id: &str) -> bool {
    matches!(custom_kind(message), Some((Kind::Boot, details))
        if details.and_then(|d| d.get("windowId")).and_then(Value::as_str) == Some(window_id))
}

impl Notesoup {
    pub(super) fn project_window(
        &mut self,
        host: &mut dyn PiHost,
        messages: &[MessageSummary],
    ) -> Option<WindowEdit> {
        enum Plan {
            Root,
            Checkpoint {
                window_id: String,
                stop: bool,
                closing: bool,
            },
            Legacy {
                window_id: String,
            },
        }
        let session_id = host.session_id().to_owned();
        let plan = {
            let branch = host.window_branch(None);
            let window = active_window(&branch, &session_id);
            match &window.marker {
                None => Plan::Root,
                Some(marker) if is_checkpoint_backed(&branch, marker) => {
                    let stop = matches!(&self.control.request,
                        RequestPhase::StopPending { window_id } if *window_id != window.id)
                        && boundary_committed(&branch, &window.id);
                    let closing = matches!(&self.control.request,
                        RequestPhase::CloseOut { window_id, source: CloseOutSource::Manual, .. }
                            if *window_id == window.id);
                    Plan::Checkpoint {
                        window_id: window.id.clone(),
                        stop,
                        closing,
                    }
                }
                Some(_) => Plan::Legacy {
                    window_id: window.id.clone(),
                },
            }
        };
        match plan {
            Plan::Root => refresh_root_boot(messages, &session_id),
            Plan::Checkpoint {
                window_id,
                stop,
                closing,
            } => {
                // `/fresh-window` is the way out of a window that lost its
                // boot: the checkpoint already cuts everything before the
                // marker, so its close-out may run and commit a new window.
                if !closing && !messages.iter().any(|m| is_boot_of(m, &window_id)) {
                    return Some(self.cancel_missing_boot(host, messages, &window_id));
                }
                if stop && !host.has_pending_messages() && !user_after_continuation(messages) {
                    // The committed stop: Pi's tool-batch follow-up is the
                    // only thing left to run, and it must not.
                    host.abort();
                    return Some(system_head(messages));
                }
                None
            }
            Plan::Legacy { window_id } => match legacy_slice(messages, &window_id) {
                Some(sliced) => Some(sliced),
                None => Some(self.cancel_missing_boot(host, messages, &window_id)),
            },
        }
    }
}

impl Notesoup {
    /// Aborts a request of a window without a visible boot, sending only
    /// the system head. Every such request is cancelled, but the notice is
    /// shown once per window: a retrying agent loop would repeat it.
    fn cancel_missing_boot(
        &mut self,
        host: &mut dyn PiHost,
        messages: &[MessageSummary],
        window_id: &str,
    ) -> WindowEdit {
        if !self.missing_boot_notices.iter().any(|w| w == window_id) {
            self.missing_boot_notices.push(window_id.to_owned());
            host.notify(&texts::missing_boot(window_id), NotifyLevel::Error);
        }
        host.abort();
        system_head(messages)
    }
}

/// Real human input after the reset: a user message after the continuation.
fn user_after_continuation(messages: &[MessageSummary]) -> bool {
    let Some(continuation) = messages
        .iter()
        .rposition(|m| matches!(custom_kind(m), Some((Kind::Continuation, _))))
    else {
        return false;
    };
    messages[continuation + 1..]
        .iter()
        .any(|m| m.role() == "user")
}

/// A legacy window sliced at its newest boot, keeping the system head of
/// the dropped prefix; none without a boot.
fn legacy_slice(messages: &[MessageSummary], window_id: &str) -> Option<WindowEdit> {
    let boot = messages.iter().rposition(|m| is_boot_of(m, window_id))?;
    let mut sliced = system_head(&messages[..boot]);
    sliced.keep.push(boot..messages.len());
    Some(sliced)
}

/// In the root window, a fork's copied root boot (of another session) gives
/// way to this session's own root boot: every message but those is kept.
fn refresh_root_boot(messages: &[MessageSummary], session_id: &str) -> Option<WindowEdit> {
    let is_foreign = |message: &MessageSummary| matches!(custom_kind(message), Some((Kind::Boot, details)) if !is_own_root_boot(details, session_id));
    let has_own = messages.iter().any(|message| {
        matches!(custom_kind(message), Some((Kind::Boot, details)) if is_own_root_boot(details, session_id))
    });
    if !has_own || !messages.iter().any(is_foreign) {
        return None;
    }
    let mut keep: Vec<std::ops::Range<usize>> = Vec::new();
    for (index, message) in messages.iter().enumerate() {
        if is_foreign(message) {
            continue;
        }
        match keep.last_mut() {
            Some(range) if range.end == index => range.end = index + 1,
            _ => keep.push(index..index + 1),
        }
    }
    Some(WindowEdit { head: None, keep })
}

#[cfg(test)]
mod tests;
