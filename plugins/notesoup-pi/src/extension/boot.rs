//! Boots on Pi: rendering one per window, the silent root boot at session
//! start, and the narrow repair of an incomplete reset tail.

use notesoup_core::boot::{BootIdentity, BootSections, ToolBindings};

use super::{Notesoup, texts};
use crate::host::{CustomMessageDraft, NotifyLevel, PiHost, SendOptions};
use crate::reset::window::{Tail, active_window, inspect_tail, root_window_id, window_has_boot};
use crate::reset::{Kind, boot_details};
use crate::session::Content;

impl Notesoup {
    /// The boot text of `window_id`, from a snapshot of the five homes
    /// through the boot caches (as fresh as a listing's). A home that cannot
    /// be read is named once per window.
    pub(super) fn render_boot(
        &mut self,
        host: &mut dyn PiHost,
        window_id: &str,
        previous: Option<&str>,
    ) -> Result<String, String> {
        let store = self.store(host)?;
        let snapshot = self
            .caches
            .snapshot(&store)
            .map_err(|error| error.to_string())?;
        let identity = store.identity();
        let max_chars = super::resolved_settings(host).boot_max_chars;
        let text = BootSections::new(
            &snapshot,
            &BootIdentity {
                agent: identity.agent().to_owned(),
                model: identity.model().to_owned(),
                root_window_id: root_window_id(host.session_id()),
                window_id: window_id.to_owned(),
                previous_window_id: previous.map(str::to_owned),
            },
            &self.bindings,
            max_chars,
        )
        .join();
        let unavailable = snapshot.unavailable_labels();
        if !unavailable.is_empty() && !self.boot_notices.iter().any(|w| w == window_id) {
            self.boot_notices.push(window_id.to_owned());
            host.notify(
                &texts::notes_index_incomplete(&unavailable),
                NotifyLevel::Warning,
            );
        }
        Ok(text)
    }

    /// Makes sure the active window has its boot: the root boot when the
    /// branch has no marker and no boot of this session (a fork's copied
    /// root boot belongs to another session), or the missing boot and/or
    /// continuation of a safely repairable reset tail. Sent silently
    /// (`triggerTurn: false`).
    pub(super) fn ensure_window_boot(&mut self, host: &mut dyn PiHost) {
        let session_id = host.session_id().to_owned();
        let (tail, missing_root_boot, previous) = {
            let branch = host.window_branch(None);
            let window = active_window(&branch, &session_id);
            (
                inspect_tail(&branch),
                window.marker.is_none() && !window_has_boot(&branch, &window, &session_id),
                window.previous.clone(),
            )
        };
        let sent = match tail {
            Tail::NoMarker if missing_root_boot => {
                self.send_boot(host, &root_window_id(&session_id), None)
            }
            Tail::Repair {
                window_id,
                boot,
                continuation,
            } => {
                let mut result = Ok(());
                if boot {
                    result = self.send_boot(host, &window_id, previous.as_deref());
                }
                if continuation && result.is_ok() {
                    result = send_hidden(
                        host,
                        Kind::Continuation,
                        ToolBindings::continuation_text(&self.bindings),
                        None,
                    );
                }
                result
            }
            Tail::NoMarker | Tail::Complete | Tail::Refused { .. } => Ok(()),
        };
        if let Err(error) = sent {
            host.notify(&texts::boot_failed(&error), NotifyLevel::Warning);
        }
    }

    fn send_boot(
        &mut self,
        host: &mut dyn PiHost,
        window_id: &str,
        previous: Option<&str>,
    ) -> Result<(), String> {
        let text = self.render_boot(host, window_id, previous)?;
        let details = boot_details(window_id, host.session_id());
        send_hidden(host, Kind::Boot, text, Some(details))
    }
}

/// Appends a hidden custom message without starting a turn.
fn send_hidden(
    host: &mut dyn PiHost,
    kind: Kind,
    text: String,
    details: Option<serde_json::Value>,
) -> Result<(), String> {
    host.send_message(
        CustomMessageDraft {
            custom_type: kind.custom_type().to_owned(),
            content: Content::Text(text),
            display: false,
            details,
        },
        SendOptions {
            trigger_turn: false,
            deliver_as: None,
        },
    )
    .map_err(|error| error.to_string())
}
