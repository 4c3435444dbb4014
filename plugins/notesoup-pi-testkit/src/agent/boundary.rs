//! The boundaries: `turn_end` and `agent_before_settle` with their drafts
//! and context previews, and the compaction hooks (manual `/compact`,
//! overflow recovery, the threshold check after a run).

use std::collections::HashSet;

use serde_json::Value;

use crate::host::{HostEvent, HostState, entry_kind};
use notesoup_pi::host::{
    BoundaryContextPreview, BoundaryOutcome, BoundaryState, CompactionReason, PiApiLevel,
    PiExtension, PiHost, ProjectedSessionEntry, SessionBeforeCompactEvent, SessionBoundaryDraft,
    TurnEndEvent,
};
use notesoup_pi::overflow::{is_context_overflow, is_recoverable_length};
use notesoup_pi::projection::convert_to_llm;
use notesoup_pi::session::{AgentMessage, Entry, StopReason, ToolResultMessage};

use super::Harness;

impl<E: PiExtension> Harness<E> {
    /// A manual `/compact`: the extension may cancel it; the reference host
    /// cannot summarize, so an uncancelled compaction is reported, not run.
    pub fn compact(&mut self) {
        self.before_compact(CompactionReason::Manual, false);
    }

    pub(super) fn before_compact(&mut self, reason: CompactionReason, will_retry: bool) -> bool {
        let branch_entries: Vec<Entry> = self.host.session.branch().into_iter().cloned().collect();
        let event = SessionBeforeCompactEvent {
            preparation: Value::Object(serde_json::Map::new()),
            branch_entries,
            custom_instructions: None,
            reason: Some(reason),
            will_retry: Some(will_retry),
        };
        let result = self.without_usage("session_before_compact", |extension, host| {
            extension.session_before_compact(host, &event)
        });
        let cancelled = result.cancel == Some(true);
        let reason = serde_json::to_value(reason)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        self.host
            .log
            .push(HostEvent::Compaction { reason, cancelled });
        cancelled
    }

    /// `finishTurn`: the `turn_end` boundary. Drafts are saved whatever the
    /// outcome; `continue` counts only for a completed turn with a runnable
    /// context.
    pub(super) fn finish_turn(
        &mut self,
        message: AgentMessage,
        tool_results: Vec<ToolResultMessage>,
        outcome: BoundaryOutcome,
    ) -> bool {
        self.last_outcome = outcome;
        let branch_ids = |host: &HostState, wanted: &AgentMessage| {
            host.session
                .branch()
                .iter()
                .rev()
                .find(|entry| entry.message() == Some(wanted))
                .map(|entry| entry.id().to_owned())
        };
        let message_entry_id = branch_ids(&self.host, &message);
        let tool_result_entry_ids = tool_results
            .iter()
            .filter_map(|result| branch_ids(&self.host, &AgentMessage::ToolResult(result.clone())))
            .collect();
        let boundary = self
            .host
            .api_level
            .has_boundary_events()
            .then(|| BoundaryState {
                entries: Vec::new(),
                continue_run: false,
                context: self.preview(&[], true),
                outcome,
            });
        let event = TurnEndEvent {
            turn_index: self.turn_index,
            message,
            tool_results,
            message_entry_id,
            tool_result_entry_ids: Some(tool_result_entry_ids),
            boundary,
        };
        let result = self.extension.turn_end(&mut self.host, &event);
        if self.host.api_level < PiApiLevel::V0_87 {
            self.host.log.push(HostEvent::TurnEnd {
                outcome: outcome_name(outcome),
                drafts: 0,
                continued: false,
            });
            return false;
        }
        let drafts = result.entries.unwrap_or_default();
        let saved = self.commit_drafts(&drafts, "turn_end");
        let wants = result.continue_run == Some(true);
        let runnable = self.preview(&[], true).can_continue;
        if wants && !runnable {
            self.host.log.push(HostEvent::ExtensionError {
                event: "turn_end".to_owned(),
                error: "turn_end requested continuation without runnable model context".to_owned(),
            });
        }
        let continued = wants && runnable && outcome == BoundaryOutcome::Completed;
        self.host.log.push(HostEvent::TurnEnd {
            outcome: outcome_name(outcome),
            drafts: saved,
            continued,
        });
        continued
    }

    /// `_handlePostAgentRun`: overflow recovery (omit the failed response,
    /// offer the compaction; cancelled means no retry) and the threshold
    /// check. True when queued work needs another loop.
    pub(super) fn post_run(&mut self) -> bool {
        let last = self
            .host
            .session
            .branch()
            .last()
            .and_then(|entry| match entry.message() {
                Some(AgentMessage::Assistant(assistant)) => {
                    Some((entry.id().to_owned(), assistant.clone()))
                }
                _ => None,
            });
        if let (Some((id, assistant)), Some(model)) = (last, self.host.model.clone()) {
            let overflow = (assistant.stop_reason == StopReason::Error
                && is_context_overflow(&assistant, model.context_window))
                || is_recoverable_length(&assistant, model.max_tokens);
            if overflow {
                let edit = self.host.session.append_context_edit(&id, None);
                self.host.record(edit);
                // Cancelled or not: the reference host has no summarizer, so
                // nothing is retried.
                self.before_compact(CompactionReason::Overflow, true);
                return false;
            }
            let silent = assistant.stop_reason == StopReason::Stop
                && is_context_overflow(&assistant, model.context_window);
            if silent || self.over_threshold(model.context_window) {
                let reason = if silent {
                    CompactionReason::Overflow
                } else {
                    CompactionReason::Threshold
                };
                self.before_compact(reason, false);
            }
        }
        self.host.has_queued()
    }

    pub(super) fn over_threshold(&self, context_window: u64) -> bool {
        let Ok(settings) = &self.host.settings else {
            return false;
        };
        if !settings.compaction.enabled {
            return false;
        }
        self.host
            .context_usage()
            .and_then(|usage| usage.tokens)
            .is_some_and(|tokens| {
                tokens > context_window.saturating_sub(settings.compaction.reserve_tokens)
            })
    }

    /// `agent_before_settle`: drafts saved, then the run continues when asked
    /// (or when work is queued) and the context can continue.
    pub(super) fn before_settle(&mut self) -> bool {
        if !self.host.api_level.has_boundary_events() {
            return self.host.has_queued();
        }
        let state = BoundaryState {
            entries: Vec::new(),
            continue_run: false,
            context: self.preview(&[], false),
            outcome: self.last_outcome,
        };
        let result = self.without_usage("agent_before_settle", |extension, host| {
            extension.agent_before_settle(host, &state)
        });
        let drafts = result.entries.unwrap_or_default();
        let saved = self.commit_drafts(&drafts, "agent_before_settle");
        self.flush_held();
        let runnable = self.preview(&[], false).can_continue;
        let asked = result.continue_run == Some(true);
        let should = asked || self.host.has_queued();
        let continued = !self.host.abort_requested && should && runnable;
        if should && !runnable && asked {
            self.host.log.push(HostEvent::ExtensionError {
                event: "agent_before_settle".to_owned(),
                error: "agent_before_settle requested continuation without runnable model context"
                    .to_owned(),
            });
        }
        self.host.log.push(HostEvent::BeforeSettle {
            drafts: saved,
            continued,
        });
        continued
    }

    /// The context as it would be after `drafts` (Pi's preview manager).
    pub(super) fn preview(
        &mut self,
        drafts: &[SessionBoundaryDraft],
        turn_end: bool,
    ) -> BoundaryContextPreview {
        let mut manager = self.host.session.preview();
        // A preview cannot fail to apply its drafts to memory.
        let _ = manager.apply_drafts(drafts);
        let projection = manager.projection();
        let llm: Vec<AgentMessage> = convert_to_llm(projection.message_refs())
            .into_iter()
            .map(std::borrow::Cow::into_owned)
            .collect();
        let final_assistant = matches!(llm.last(), Some(AgentMessage::Assistant(_)));
        let has_context = llm.iter().any(|m| !matches!(m, AgentMessage::System(_)));
        let queued = self.host.has_queued();
        let can_continue = (has_context && !final_assistant)
            || !self.host.held.is_empty()
            || if turn_end {
                queued
            } else {
                final_assistant && queued
            };
        BoundaryContextPreview {
            context_entries: projection
                .entries
                .iter()
                .map(|entry| ProjectedSessionEntry {
                    source_entry: entry.source.clone(),
                    messages: projection
                        .messages_of(entry)
                        .iter()
                        .map(|m| m.as_ref().clone())
                        .collect(),
                })
                .collect(),
            context_messages: projection.message_refs().cloned().collect(),
            llm_messages: llm,
            pending_messages: self
                .host
                .steering
                .iter()
                .chain(&self.host.follow_up)
                .cloned()
                .chain(self.host.held.iter().cloned().map(AgentMessage::Custom))
                .collect(),
            can_continue,
        }
    }

    /// Saves drafts in order; a draft that cannot apply (a context edit of an
    /// unknown entry) saves nothing, as in Pi.
    pub(super) fn commit_drafts(&mut self, drafts: &[SessionBoundaryDraft], event: &str) -> usize {
        if drafts.is_empty() {
            return 0;
        }
        let known: HashSet<String> = self
            .host
            .session
            .branch()
            .iter()
            .map(|e| e.id().to_owned())
            .collect();
        let applicable = drafts.iter().all(|draft| match draft {
            SessionBoundaryDraft::ContextEdit { target_id, .. } => known.contains(target_id),
            _ => true,
        });
        if !applicable {
            self.host.log.push(HostEvent::ExtensionError {
                event: event.to_owned(),
                error: "boundary drafts cannot be applied to the context".to_owned(),
            });
            return 0;
        }
        let before = self.host.session.entries().len();
        let result = self.host.session.apply_drafts(drafts);
        let appended: Vec<(String, String)> = self.host.session.entries()[before..]
            .iter()
            .map(|entry| (entry.id().to_owned(), entry_kind(entry)))
            .collect();
        for (id, kind) in appended {
            self.host.log.push(HostEvent::Entry { id, kind });
        }
        if let Err(error) = result {
            self.host.log.push(HostEvent::ExtensionError {
                event: event.to_owned(),
                error: error.to_string(),
            });
        }
        self.host.session.entries().len() - before
    }
}

fn outcome_name(outcome: BoundaryOutcome) -> String {
    match outcome {
        BoundaryOutcome::Completed => "completed",
        BoundaryOutcome::Aborted => "aborted",
        BoundaryOutcome::Error => "error",
    }
    .to_owned()
}
