//! Pi's context building, equal to `buildContextEntries`,
//! `buildSessionProjection` and `buildSessionContext` of Pi 1.6.0.
//!
//! The projection selects the active branch (leaf to root through
//! `parentId`), cuts it at the latest compaction (keeping entries from
//! `firstKeptEntryId`, none for a retain-none compaction, and never the
//! system messages of the kept range), turns entries into agent messages and
//! applies the latest `context_edit` per target.

mod convert;
mod markers;
mod system;
mod time;

use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Range;

use serde::Serialize;

pub use convert::{
    BRANCH_SUMMARY_PREFIX, BRANCH_SUMMARY_SUFFIX, COMPACTION_SUMMARY_PREFIX,
    COMPACTION_SUMMARY_SUFFIX, bash_execution_to_text, convert_to_llm,
};
pub use markers::{
    BOOT_TYPES, MarkerOrigin, RESET_MARKER_TYPES, ResetMarker, WindowProjection,
    is_checkpoint_backed, reset_markers, window_projection,
};
pub use system::{current_system_message, system_message_text};
pub use time::iso_to_millis;

use crate::session::{
    AgentMessage, BranchSummaryMessage, CompactionSummaryMessage, ContextEditEntry, CustomMessage,
    Entry, EntryIndex, Extra, Leaf,
};

/// The model Pi would use, from `model_change` entries and assistant messages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelRef {
    /// Provider id.
    pub provider: String,
    /// Model id.
    pub model_id: String,
}

/// One context entry and the range of [`Projection::messages`] it produced
/// (Pi's `ProjectedSessionEntry`).
#[derive(Debug, Clone, Copy)]
pub struct ProjectedEntry<'a> {
    /// The session entry.
    pub source: &'a Entry,
    /// Its messages within [`Projection::messages`].
    pub messages: (usize, usize),
}

impl ProjectedEntry<'_> {
    /// The range of its messages.
    pub fn range(&self) -> Range<usize> {
        self.messages.0..self.messages.1
    }
}

/// Pi's `SessionProjection`: the model-visible messages with their sources.
#[derive(Debug, Clone)]
pub struct Projection<'a> {
    /// The context entries in order.
    pub entries: Vec<ProjectedEntry<'a>>,
    /// Every projected message, in order; unedited messages are borrowed.
    pub messages: Vec<Cow<'a, AgentMessage>>,
    /// The thinking level along the whole path (default `"off"`).
    pub thinking_level: String,
    /// The model along the whole path.
    pub model: Option<ModelRef>,
}

impl<'a> Projection<'a> {
    /// The messages one projected entry produced.
    pub fn messages_of(&self, entry: &ProjectedEntry<'a>) -> &[Cow<'a, AgentMessage>] {
        &self.messages[entry.range()]
    }

    /// The messages as plain references.
    pub fn message_refs(&self) -> impl Iterator<Item = &AgentMessage> {
        self.messages.iter().map(|message| message.as_ref())
    }
}

/// `buildContextEntries`: the latest compaction on the path first, then the
/// kept entries from `firstKeptEntryId` up to it (system messages dropped),
/// then everything after it. Without a compaction, the whole path.
pub fn context_entries<'a>(path: &[&'a Entry]) -> Vec<&'a Entry> {
    let Some(compaction_at) = path
        .iter()
        .rposition(|entry| matches!(entry, Entry::Compaction(_)))
    else {
        return path.to_vec();
    };
    let Entry::Compaction(compaction) = path[compaction_at] else {
        return path.to_vec();
    };
    let mut selected = Vec::with_capacity(path.len() - compaction_at);
    selected.push(path[compaction_at]);
    // A retain-none compaction names itself, which the scan below never reaches.
    if let Some(first_kept) = path[..compaction_at]
        .iter()
        .position(|entry| entry.id() == compaction.first_kept_entry_id)
    {
        selected.extend(
            path[first_kept..compaction_at]
                .iter()
                .filter(|entry| !entry.is_system_message()),
        );
    }
    selected.extend_from_slice(&path[compaction_at + 1..]);
    selected
}

/// `buildSessionProjection(entries, leafId)`.
pub fn project<'a>(index: &EntryIndex<'a>, leaf: Leaf<'_>) -> Projection<'a> {
    let path = index.path(leaf);
    project_path(&path)
}

/// The projection of an already selected path (root first).
pub fn project_path<'a>(path: &[&'a Entry]) -> Projection<'a> {
    let (thinking_level, model) = context_settings(path);
    let selected = context_entries(path);
    let mut edits: HashMap<&str, &ContextEditEntry> = HashMap::new();
    for entry in &selected {
        if let Entry::ContextEdit(edit) = entry {
            edits.insert(edit.target_id.as_str(), edit);
        }
    }
    let mut messages = Vec::with_capacity(selected.len() + 1);
    let mut entries = Vec::with_capacity(selected.len());
    for (position, source) in selected.into_iter().enumerate() {
        let start = messages.len();
        // Only the newest compaction, at index 0, contributes its checkpoint
        // and summary; an older one inside the kept range contributes nothing.
        if !(matches!(source, Entry::Compaction(_)) && position > 0) {
            push_entry_messages(source, edits.get(source.id()).copied(), &mut messages);
        }
        entries.push(ProjectedEntry {
            source,
            messages: (start, messages.len()),
        });
    }
    Projection {
        entries,
        messages,
        thinking_level,
        model,
    }
}

/// `getSessionContextSettings`: thinking level and model along the path.
/// Only the last of each is copied out: a long path holds thousands of
/// assistant messages.
fn context_settings(path: &[&Entry]) -> (String, Option<ModelRef>) {
    let mut thinking_level = "off";
    let mut model: Option<(&str, &str)> = None;
    for entry in path {
        match entry {
            Entry::ThinkingLevelChange(change) => thinking_level = &change.thinking_level,
            Entry::ModelChange(change) => model = Some((&change.provider, &change.model_id)),
            Entry::Message(message) => {
                if let AgentMessage::Assistant(assistant) = &message.message {
                    model = Some((&assistant.provider, &assistant.model));
                }
            }
            _ => {}
        }
    }
    let model = model.map(|(provider, model_id)| ModelRef {
        provider: provider.to_owned(),
        model_id: model_id.to_owned(),
    });
    (thinking_level.to_owned(), model)
}

/// `projectContextEntry`: the entry's messages with its latest edit applied.
fn push_entry_messages<'a>(
    entry: &'a Entry,
    edit: Option<&ContextEditEntry>,
    out: &mut Vec<Cow<'a, AgentMessage>>,
) {
    let start = out.len();
    entry_messages(entry, out);
    let Some(edit) = edit else { return };
    let Some(replacement) = &edit.replacement else {
        out.truncate(start);
        return;
    };
    for message in &mut out[start..] {
        let editable = matches!(
            message.as_ref(),
            AgentMessage::User(_)
                | AgentMessage::Assistant(_)
                | AgentMessage::ToolResult(_)
                | AgentMessage::Custom(_)
        );
        if !editable {
            continue;
        }
        match message.to_mut() {
            AgentMessage::User(user) => user.content = replacement.content.clone(),
            AgentMessage::Custom(custom) => custom.content = replacement.content.clone(),
            AgentMessage::Assistant(assistant) => {
                assistant.content = replacement.content.clone().into_blocks()
            }
            AgentMessage::ToolResult(result) => {
                result.content = replacement.content.clone().into_blocks()
            }
            _ => {}
        }
    }
}

/// `sessionEntryToContextMessages`.
pub(crate) fn entry_messages<'a>(entry: &'a Entry, out: &mut Vec<Cow<'a, AgentMessage>>) {
    match entry {
        Entry::Message(message) => out.push(Cow::Borrowed(&message.message)),
        Entry::CustomMessage(custom) => out.push(Cow::Owned(AgentMessage::Custom(CustomMessage {
            custom_type: custom.custom_type.clone(),
            content: custom.content.clone().unwrap_or_default(),
            display: custom.display,
            details: custom.details.clone(),
            timestamp: iso_to_millis(&custom.timestamp),
            extra: Extra::new(),
        }))),
        Entry::BranchSummary(summary) if !summary.summary.is_empty() => {
            out.push(Cow::Owned(AgentMessage::BranchSummary(
                BranchSummaryMessage {
                    summary: summary.summary.clone(),
                    from_id: summary.from_id.clone(),
                    timestamp: iso_to_millis(&summary.timestamp),
                    extra: Extra::new(),
                },
            )));
        }
        Entry::Compaction(compaction) => {
            if let Some(system) = &compaction.system_message {
                out.push(Cow::Owned(AgentMessage::System(system.clone())));
            }
            out.push(Cow::Owned(AgentMessage::CompactionSummary(
                CompactionSummaryMessage {
                    summary: compaction.summary.clone(),
                    tokens_before: compaction.tokens_before,
                    timestamp: iso_to_millis(&compaction.timestamp),
                    extra: Extra::new(),
                },
            )));
        }
        _ => {}
    }
}
