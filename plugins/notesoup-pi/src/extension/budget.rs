//! The budget on Pi: settings through the host, active-window usage, and
//! staging the reminder and warning before every provider request.

use notesoup_core::budget::{BudgetPolicy, BudgetStage, ClampedReserve};
use notesoup_core::settings;

use super::{Notesoup, Staged, texts};
use crate::estimate::pi_ai;
use crate::host::{NotifyLevel, PiHost};
use crate::projection::{WindowProjection, convert_to_llm, window_projection};
use crate::reset::window::{ActiveWindow, active_window, window_has};
use crate::reset::{CloseOutSource, Kind, ResetEvent, is_boot_of};
use crate::session::{AgentMessage, Content, CustomMessage, Entry, Extra};

/// The budget lines and whether automatic resets are on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Policy {
    pub budget: BudgetPolicy,
    /// Pi's `compaction.enabled`.
    pub automatic: bool,
}

impl Notesoup {
    /// The live policy: the reserve from Pi's compaction settings (clamped,
    /// see `clamp_reserve`), the margin from the merged `notesoup` record,
    /// automatic resets from `compaction.enabled`. Each distinct settings
    /// warning is shown once.
    pub(super) fn policy(&mut self, host: &mut dyn PiHost) -> Policy {
        let settings = match host.settings() {
            Ok(settings) => settings,
            Err(error) => {
                let warning = texts::settings_unreadable(&error.to_string());
                self.show_warnings(host, [warning]);
                return Policy {
                    budget: BudgetPolicy::default(),
                    automatic: true,
                };
            }
        };
        let project = host.is_project_trusted().then_some(&settings.project);
        let resolved = settings::ResolvedSettings::resolve(
            Some(&settings.global),
            project,
            settings::ProjectTrust::Trusted,
        );
        let window = host.model().map(|model| model.context_window);
        // Pi's reserve is a non-negative safe integer, exact as a double.
        #[allow(clippy::cast_precision_loss)]
        let reserve = ClampedReserve::of(settings.compaction.reserve_tokens as f64, window);
        let mut warnings: Vec<String> = resolved.warnings.iter().map(ToString::to_string).collect();
        warnings.extend(reserve.warning.map(|w| w.to_string()));
        self.show_warnings(host, warnings);
        Policy {
            budget: BudgetPolicy::new(reserve.tokens, resolved.settings.reminder_margin_tokens),
            automatic: settings.compaction.enabled,
        }
    }

    fn show_warnings(&mut self, host: &mut dyn PiHost, warnings: impl IntoIterator<Item = String>) {
        for warning in self.settings_warnings.fresh(warnings) {
            host.notify(&warning, NotifyLevel::Warning);
        }
    }

    /// Tokens left in the active window, `None` when unknown: Pi's
    /// `getContextUsage()` without a reset; after a checkpoint-backed reset
    /// the estimate over Pi's canonical projection; after a legacy marker
    /// the estimate over the slice at its boot. A reset window whose boot is
    /// not there yet is unknown.
    pub(super) fn remaining(
        host: &dyn PiHost,
        branch: &[&Entry],
        window: &ActiveWindow<'_>,
    ) -> Option<u64> {
        let context_window = host.model()?.context_window;
        if context_window == 0 {
            return None;
        }
        if window.marker.is_none() {
            let tokens = host.context_usage()?.tokens?;
            return Some(context_window.saturating_sub(tokens));
        }
        let projection = host.build_projection();
        let tokens = match window_projection(&projection, branch) {
            WindowProjection::NoReset => host.context_usage()?.tokens?,
            WindowProjection::Checkpoint { marker } => {
                if !has_boot(projection.message_refs(), marker.window_id) {
                    return None;
                }
                pi_ai::estimate_context_tokens(&convert_to_llm(projection.message_refs())).tokens
            }
            WindowProjection::LegacySlice { messages, .. } => {
                pi_ai::estimate_context_tokens(&convert_to_llm(messages.iter().map(AsRef::as_ref)))
                    .tokens
            }
            WindowProjection::MissingBoot { .. } => return None,
        };
        Some(context_window.saturating_sub(tokens))
    }

    /// The `context` hook: stage the reminder or warning for this request;
    /// the messages to add after the request's (the warning, or none).
    /// At the warning line (automatic resets on) the close-out is re-armed on
    /// every request; the warning itself is added to the outgoing request
    /// once per window and staged for persistence at `turn_end`, replacing a
    /// pending reminder. Above it, the reminder is staged once per window,
    /// its countdown frozen into the text. Everything is decided from the
    /// session, never from the request's messages.
    pub(super) fn stage_budget(&mut self, host: &mut dyn PiHost) -> Vec<AgentMessage> {
        if !self.enabled {
            // Off, a completed turn's end changes nothing.
            self.turn_end_at = Some(u64::MAX);
            return Vec::new();
        }
        let policy = self.policy(host);
        // Without a context window (0), every turn's end is delivered.
        self.turn_end_at = host.model().map(|model| {
            model
                .context_window
                .saturating_sub(policy.budget.warning_line())
        });
        let branch = host.window_branch(None);
        let window = active_window(&branch, host.session_id());
        let remaining = Self::remaining(host, &branch, &window);
        match policy.budget.stage(remaining, policy.automatic) {
            BudgetStage::Clear => Vec::new(),
            BudgetStage::Reminder => {
                let noted = window_has(&branch, &window, Kind::Warning)
                    || window_has(&branch, &window, Kind::Guidance)
                    || self.staged.iter().any(|s| s.window_id == window.id);
                if !noted {
                    let countdown = policy.budget.countdown(remaining).unwrap_or(0);
                    self.staged.push(Staged {
                        window_id: window.id.clone(),
                        kind: Kind::Guidance,
                        text: BudgetPolicy::reminder_text(countdown, &self.bindings),
                    });
                }
                Vec::new()
            }
            BudgetStage::Warning | BudgetStage::HardReserve => {
                let window_id = window.id.clone();
                let durable = window_has(&branch, &window, Kind::Warning);
                self.apply(ResetEvent::CloseOut {
                    window_id: window_id.clone(),
                    source: CloseOutSource::Automatic,
                    prompt: None,
                });
                let staged = self
                    .staged
                    .iter()
                    .any(|s| s.window_id == window_id && s.kind == Kind::Warning);
                if durable || staged {
                    return Vec::new();
                }
                let text = BudgetPolicy::warning_text(&self.bindings);
                self.staged
                    .retain(|s| !(s.window_id == window_id && s.kind == Kind::Guidance));
                self.staged.push(Staged {
                    window_id: window_id.clone(),
                    kind: Kind::Warning,
                    text: text.clone(),
                });
                self.pending_warning = Some(window_id);
                vec![hidden_message(Kind::Warning, text)]
            }
        }
    }
}

/// A hidden custom message as the model receives it.
pub(super) fn hidden_message(kind: Kind, text: String) -> AgentMessage {
    AgentMessage::Custom(CustomMessage {
        custom_type: kind.custom_type().to_owned(),
        content: Content::Text(text),
        display: false,
        details: None,
        timestamp: jiff::Timestamp::now().as_millisecond(),
        extra: Extra::new(),
    })
}

/// Whether the messages hold the boot of `window_id`.
pub(super) fn has_boot<'m>(
    mut messages: impl Iterator<Item = &'m AgentMessage>,
    window_id: &str,
) -> bool {
    messages.any(|message| is_boot_of(message, window_id))
}
