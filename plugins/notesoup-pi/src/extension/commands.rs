//! `/notesoup [on|off]` and `/fresh-window [prompt]`.

use super::{Notesoup, VERSION, texts};
use crate::host::{
    CommandDescriptor, CustomMessageDraft, DeliverAs, HostError, NotifyLevel, PiHost, SendOptions,
};
use crate::reset::window::active_window;
use crate::reset::{CloseOutSource, Kind, ResetEffect, ResetEvent};
use crate::session::Content;
use notesoup_core::budget::BudgetPolicy;

/// `/notesoup`.
pub const NOTESOUP: &str = "notesoup";
/// `/fresh-window`.
pub const FRESH_WINDOW: &str = "fresh-window";

/// Both commands.
pub fn descriptors() -> Vec<CommandDescriptor> {
    vec![
        CommandDescriptor {
            name: NOTESOUP.to_owned(),
            description: "Show notesoup's state, or turn it on or off: /notesoup [on|off]"
                .to_owned(),
            arguments: vec!["on".to_owned(), "off".to_owned()],
        },
        CommandDescriptor {
            name: FRESH_WINDOW.to_owned(),
            description: "Close out notes and start a fresh context window; with text, continue there with it: /fresh-window [prompt]".to_owned(),
            arguments: Vec::new(),
        },
    ]
}

impl Notesoup {
    pub(super) fn command(
        &mut self,
        host: &mut dyn PiHost,
        name: &str,
        args: &str,
    ) -> Result<(), HostError> {
        match name {
            NOTESOUP => {
                self.notesoup_command(host, args);
                Ok(())
            }
            FRESH_WINDOW => self.fresh_window(host, args),
            _ => Err(HostError::Rejected {
                message: format!("unknown command /{name}"),
            }),
        }
    }

    /// `/notesoup [on|off]`: `off` clears budget and reset state, `on`
    /// makes sure the current window has its boot; both report the state.
    fn notesoup_command(&mut self, host: &mut dyn PiHost, args: &str) {
        match args.trim() {
            "" => {}
            "on" => {
                self.enabled = true;
                self.ensure_window_boot(host);
            }
            "off" => {
                self.enabled = false;
                self.clear_transient();
            }
            _ => {
                host.notify(texts::NOTESOUP_USAGE, NotifyLevel::Warning);
                return;
            }
        }
        let report = self.report(host);
        host.notify(&report, NotifyLevel::Info);
    }

    /// `notesoup: on|off · v<version> · Pi <VERSION> · window <id>[ · N tokens before close-out]`.
    fn report(&mut self, host: &mut dyn PiHost) -> String {
        let policy = self.policy(host);
        let (window_id, remaining) = {
            let branch = host.window_branch(None);
            let window = active_window(&branch, host.session_id());
            let remaining = Self::remaining(host, &branch, &window);
            (window.id, remaining)
        };
        let mut report = format!(
            "notesoup: {} · v{VERSION} · Pi {} · window {window_id}",
            if self.enabled { "on" } else { "off" },
            host.pi_version(),
        );
        if self.enabled
            && let Some(countdown) = policy.budget.countdown(remaining)
        {
            report.push_str(&format!(" · {countdown} tokens before close-out"));
        }
        report
    }

    /// `/fresh-window [prompt]`: arms a manual close-out for the active window
    /// and sends the hidden close-out prompt (starting a turn when idle,
    /// steering the running one otherwise). The reset commits when the run
    /// settles: a bare command stops in the fresh window, one with text
    /// continues there with the text verbatim.
    fn fresh_window(&mut self, host: &mut dyn PiHost, args: &str) -> Result<(), HostError> {
        if !self.enabled {
            host.notify(texts::FRESH_WINDOW_REQUIRES_ON, NotifyLevel::Warning);
            return Ok(());
        }
        let prompt = (!args.trim().is_empty()).then(|| args.to_owned());
        let idle = host.is_idle();
        let window_id = active_window(&host.window_branch(None), host.session_id()).id;
        let before = self.control.clone();
        let effect = self.apply(ResetEvent::CloseOut {
            window_id,
            source: CloseOutSource::Manual,
            prompt: prompt.clone(),
        });
        if effect == ResetEffect::AlreadyPending {
            host.notify(texts::FRESH_WINDOW_PENDING, NotifyLevel::Info);
            return Ok(());
        }
        let sent = host.send_message(
            CustomMessageDraft {
                custom_type: Kind::ManualWipe.custom_type().to_owned(),
                content: Content::Text(BudgetPolicy::manual_close_out_text(
                    &self.bindings,
                    prompt.as_deref(),
                )),
                display: false,
                details: None,
            },
            SendOptions {
                trigger_turn: true,
                deliver_as: Some(DeliverAs::Steer),
            },
        );
        if let Err(error) = sent {
            self.control = before;
            return Err(error);
        }
        let notice = match (&prompt, idle) {
            (Some(_), _) => texts::FRESH_WINDOW_WITH_PROMPT,
            (None, true) => texts::FRESH_WINDOW_IDLE,
            (None, false) => texts::FRESH_WINDOW_BUSY,
        };
        host.notify(notice, NotifyLevel::Info);
        Ok(())
    }
}
