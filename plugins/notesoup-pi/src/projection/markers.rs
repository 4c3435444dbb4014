//! notesoup's reset markers on a Pi branch, and the legacy marker-only slice.
//!
//! A reset writes a retain-none compaction with an empty summary, then a
//! `notesoup/reset-marker` custom entry `{windowId, origin}`, then a hidden
//! `notesoup/boot` custom message whose `details.windowId` matches. Pi's own
//! projection already cuts such a checkpoint-backed window. Older sessions
//! (`pi-context/` entries) may have a marker without a checkpoint: there the
//! context is sliced at the matching boot, and only the system prompt and
//! tool state of the dropped prefix are kept, folded into one system message.

use std::borrow::Cow;

use serde_json::Value;

use super::{Projection, current_system_message};
use crate::session::{AgentMessage, CustomEntry, Entry};

/// Custom types of a reset marker: current first, then legacy.
pub const RESET_MARKER_TYPES: [&str; 2] = ["notesoup/reset-marker", "pi-context/reset-marker"];
/// Custom types of a boot message: current first, then legacy.
pub const BOOT_TYPES: [&str; 2] = ["notesoup/boot", "pi-context/boot"];

/// Why a window was reset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkerOrigin {
    /// An ordinary reset (`"normal"`, and every legacy marker without origin).
    Normal,
    /// A hard-reserve or overflow-recovery reset (`"forced"`).
    Forced,
}

/// A reset marker found on a branch.
#[derive(Debug, Clone, Copy)]
pub struct ResetMarker<'a> {
    /// The marker entry.
    pub entry: &'a CustomEntry,
    /// Its position in the branch.
    pub position: usize,
    /// `data.windowId`.
    pub window_id: &'a str,
    /// `data.origin`.
    pub origin: MarkerOrigin,
}

/// The reset markers on a branch (root first), current and legacy. A marker
/// without a string `windowId` is not a marker.
pub fn reset_markers<'a>(branch: &[&'a Entry]) -> Vec<ResetMarker<'a>> {
    let mut markers = Vec::new();
    // A branch may hold one entry many times (a window branch's stand-in
    // for every message): an entry found to be no custom entry is skipped
    // by its address while it repeats.
    let mut not_custom: Option<&Entry> = None;
    for (position, &entry) in branch.iter().enumerate() {
        if not_custom.is_some_and(|known| std::ptr::eq(known, entry)) {
            continue;
        }
        let Entry::Custom(custom) = entry else {
            not_custom = Some(entry);
            continue;
        };
        markers.extend(marker_of(custom, position));
    }
    markers
}

/// The marker `custom` is, at `position` on its branch.
fn marker_of(custom: &CustomEntry, position: usize) -> Option<ResetMarker<'_>> {
    if !RESET_MARKER_TYPES.contains(&custom.custom_type.as_str()) {
        return None;
    }
    let data = custom.data.as_ref()?;
    let window_id = data.get("windowId")?.as_str()?;
    let origin = match data.get("origin").and_then(Value::as_str) {
        Some("forced") => MarkerOrigin::Forced,
        _ => MarkerOrigin::Normal,
    };
    Some(ResetMarker {
        entry: custom,
        position,
        window_id,
        origin,
    })
}

/// A marker is checkpoint-backed when its parent, the entry right before it
/// on the branch, is a compaction with an empty summary whose
/// `firstKeptEntryId` is its own id. A generic compaction is not enough.
pub fn is_checkpoint_backed(branch: &[&Entry], marker: &ResetMarker<'_>) -> bool {
    let Some(previous) = marker.position.checked_sub(1).and_then(|at| branch.get(at)) else {
        return false;
    };
    match previous {
        Entry::Compaction(compaction) => {
            compaction.summary.is_empty()
                && compaction.is_retain_none()
                && marker.entry.parent_id.as_deref() == Some(compaction.id.as_str())
        }
        _ => false,
    }
}

/// The provider context of the active (last) reset window.
#[derive(Debug, Clone)]
pub enum WindowProjection<'p, 'a> {
    /// No reset marker on the branch: Pi's projection applies as is.
    NoReset,
    /// The last marker is checkpoint-backed: Pi's canonical projection is
    /// already the window's context.
    Checkpoint {
        /// The marker.
        marker: ResetMarker<'a>,
    },
    /// A legacy marker without checkpoint: the context sliced at its boot.
    LegacySlice {
        /// The marker.
        marker: ResetMarker<'a>,
        /// The replayed system message of the dropped prefix (if any), then
        /// every projected message from the boot on.
        messages: Vec<Cow<'p, AgentMessage>>,
    },
    /// A legacy marker whose boot is not in the context: no safe context
    /// exists (notesoup cancels the request rather than send raw history).
    MissingBoot {
        /// The marker.
        marker: ResetMarker<'a>,
    },
}

/// Decides the active window's context from Pi's projection and the branch.
pub fn window_projection<'p, 'a>(
    projection: &'p Projection<'a>,
    branch: &[&'a Entry],
) -> WindowProjection<'p, 'a> {
    let Some(marker) = reset_markers(branch).pop() else {
        return WindowProjection::NoReset;
    };
    if is_checkpoint_backed(branch, &marker) {
        return WindowProjection::Checkpoint { marker };
    }
    let after_marker: std::collections::HashSet<*const Entry> = branch[marker.position + 1..]
        .iter()
        .map(|entry| std::ptr::from_ref::<Entry>(entry))
        .collect();
    let boot = projection.entries.iter().find(|projected| {
        let Entry::CustomMessage(custom) = projected.source else {
            return false;
        };
        BOOT_TYPES.contains(&custom.custom_type.as_str())
            && custom
                .details
                .as_ref()
                .and_then(|details| details.get("windowId"))
                .and_then(Value::as_str)
                == Some(marker.window_id)
            && !projected.range().is_empty()
            && after_marker.contains(&std::ptr::from_ref(projected.source))
    });
    let Some(boot) = boot else {
        return WindowProjection::MissingBoot { marker };
    };
    let start = boot.messages.0;
    let head = current_system_message(projection.messages[..start].iter().map(AsRef::as_ref));
    let mut messages = Vec::with_capacity(projection.messages.len() - start + 1);
    messages.extend(head.map(|system| Cow::Owned(AgentMessage::System(system))));
    messages.extend(
        projection.messages[start..]
            .iter()
            .map(|message| Cow::Borrowed(message.as_ref())),
    );
    WindowProjection::LegacySlice { marker, messages }
}
