//! Pi's two token estimators, exact to their arithmetic.
//!
//! Lengths are JavaScript string lengths (UTF-16 code units) and every
//! per-message estimate is rounded up on its own.

use std::borrow::Borrow;

use serde::Serialize;

use crate::json::{js_json_len, js_len};
use crate::projection::{ProjectedEntry, Projection, current_system_message, system_message_text};
use crate::session::{AgentMessage, Content, ContentBlock, Entry, StopReason, Usage};

/// What an image counts as, in characters.
pub const ESTIMATED_IMAGE_CHARS: usize = 4800;

/// `calculateContextTokens`: the provider's total, or the sum of its parts.
pub fn calculate_context_tokens(usage: &Usage) -> u64 {
    if usage.total_tokens != 0 {
        usage.total_tokens
    } else {
        usage.input + usage.output + usage.cache_read + usage.cache_write
    }
}

/// What the coding agent's usage estimates read of one branch entry: its
/// id and whether it is a `compaction` or a `context_edit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BranchStep<'a> {
    /// The entry's id.
    pub id: &'a str,
    /// A `compaction` entry.
    pub compaction: bool,
    /// A `context_edit` entry.
    pub context_edit: bool,
}

impl<'a> BranchStep<'a> {
    /// The step of a decoded entry.
    pub fn of(entry: &'a Entry) -> Self {
        Self {
            id: entry.id(),
            compaction: matches!(entry, Entry::Compaction(_)),
            context_edit: matches!(entry, Entry::ContextEdit(_)),
        }
    }
}

/// The result of `estimateContextTokens`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextEstimate {
    /// `usage_tokens + trailing_tokens`.
    pub tokens: u64,
    /// The trusted assistant usage (0 without one).
    pub usage_tokens: u64,
    /// Estimates of the messages after it (all messages without one).
    pub trailing_tokens: u64,
    /// Index of the assistant message whose usage was trusted.
    pub last_usage_index: Option<usize>,
}

fn usable_usage(message: &AgentMessage) -> Option<&Usage> {
    match message {
        AgentMessage::Assistant(assistant)
            if !matches!(
                assistant.stop_reason,
                StopReason::Aborted | StopReason::Error
            ) && calculate_context_tokens(&assistant.usage) > 0 =>
        {
            Some(&assistant.usage)
        }
        _ => None,
    }
}

fn ceil_div(chars: usize, divisor: usize) -> u64 {
    chars.div_ceil(divisor) as u64
}

/// A content's characters: a string's length, or what the estimator's
/// `block_chars` counts of its blocks (the two differ on images).
fn content_chars(content: &Content, block_chars: fn(&[ContentBlock]) -> usize) -> usize {
    match content {
        Content::Text(text) => js_len(text),
        Content::Blocks(blocks) => block_chars(blocks),
    }
}

/// What both estimators count of an assistant's blocks: text, thinking, and
/// a tool call's name and JSON arguments.
fn assistant_chars(blocks: &[ContentBlock]) -> usize {
    blocks
        .iter()
        .map(|block| match block {
            ContentBlock::Text(text) => js_len(&text.text),
            ContentBlock::Thinking(thinking) => js_len(&thinking.thinking),
            ContentBlock::ToolCall(call) => js_len(&call.name) + js_json_len(&call.arguments),
            _ => 0,
        })
        .sum()
}

impl ContextEstimate {
    /// `estimateContextTokens`' last step, in both estimators: the trusted
    /// usage (the assistant message at its index) plus `estimate` of every
    /// message after it; without one, every message estimated.
    fn after_usage<M: Borrow<AgentMessage>>(
        messages: &[M],
        last_usage: Option<(usize, &Usage)>,
        estimate: impl Fn(&AgentMessage) -> u64,
    ) -> Self {
        let (usage_tokens, trailing) = match last_usage {
            Some((index, usage)) => (calculate_context_tokens(usage), index + 1),
            None => (0, 0),
        };
        let trailing_tokens = messages[trailing..]
            .iter()
            .map(|message| estimate(message.borrow()))
            .sum();
        Self {
            tokens: usage_tokens + trailing_tokens,
            usage_tokens,
            trailing_tokens,
            last_usage_index: last_usage.map(|(index, _)| index),
        }
    }
}

/// The coding agent's estimator (`compaction.ts`): `ceil(chars / 4)` over
/// agent messages. It backs `getContextUsage()`, the compaction threshold and
/// a boundary compaction's `tokensBefore`.
pub mod coding_agent {
    use super::*;

    /// Text lengths; images count 4800; other blocks nothing.
    fn block_chars(blocks: &[ContentBlock]) -> usize {
        blocks
            .iter()
            .map(|block| match block {
                ContentBlock::Text(text) => js_len(&text.text),
                ContentBlock::Image(_) => ESTIMATED_IMAGE_CHARS,
                _ => 0,
            })
            .sum()
    }

    /// `estimateTokens(message)`.
    pub fn estimate_tokens(message: &AgentMessage) -> u64 {
        let chars = match message {
            AgentMessage::System(system) => {
                let sections: usize = system
                    .sections
                    .iter()
                    .flat_map(|sections| sections.values())
                    .filter_map(|value| value.as_str())
                    .map(js_len)
                    .sum();
                // An empty list is truthy in JavaScript and counts as "[]".
                let tools = system.tools_added.as_ref().map_or(0, js_json_len);
                content_chars(&system.content, block_chars) + sections + tools
            }
            AgentMessage::User(user) => content_chars(&user.content, block_chars),
            AgentMessage::Assistant(assistant) => assistant_chars(&assistant.content),
            AgentMessage::Custom(custom) => content_chars(&custom.content, block_chars),
            AgentMessage::ToolResult(result) => block_chars(&result.content),
            AgentMessage::BashExecution(bash) => js_len(&bash.command) + js_len(&bash.output),
            AgentMessage::BranchSummary(summary) => js_len(&summary.summary),
            AgentMessage::CompactionSummary(summary) => js_len(&summary.summary),
            AgentMessage::Unknown(_) => 0,
        };
        ceil_div(chars, 4)
    }

    /// `estimateContextTokens(messages)`: the last usable assistant usage
    /// plus estimates of every later message; without one, every message
    /// estimated.
    pub fn estimate_context_tokens<M: Borrow<AgentMessage>>(messages: &[M]) -> ContextEstimate {
        let last_usage = messages
            .iter()
            .enumerate()
            .rev()
            .find_map(|(index, message)| {
                usable_usage(message.borrow()).map(|usage| (index, usage))
            });
        ContextEstimate::after_usage(messages, last_usage, estimate_tokens)
    }

    /// `estimateProjectedContextTokens(projection, branchEntries)` (1.6.0):
    /// the usage is trusted only when its assistant entry comes after the
    /// latest `context_edit` or `compaction` on the branch; otherwise the
    /// replayed system message plus every non-system message is estimated.
    pub fn estimate_projected_context_tokens(
        projection: &Projection<'_>,
        branch: &[&Entry],
    ) -> ContextEstimate {
        let steps: Vec<BranchStep<'_>> = branch.iter().map(|entry| BranchStep::of(entry)).collect();
        estimate_projected_over_steps(projection, &steps)
    }

    /// [`estimate_projected_context_tokens`] over what it reads of the
    /// branch: each entry's id and type.
    pub fn estimate_projected_over_steps(
        projection: &Projection<'_>,
        branch: &[BranchStep<'_>],
    ) -> ContextEstimate {
        let estimate = estimate_context_tokens(&projection.messages);
        if let Some(usage_index) = estimate.last_usage_index {
            let usage_entry = projection
                .entries
                .iter()
                .find(|entry| usage_index < entry.messages.1);
            let invalidating = branch
                .iter()
                .rposition(|entry| entry.context_edit || entry.compaction);
            // Pi trusts the usage when the first branch entry with the usage
            // entry's id comes after the last invalidating one. Searched
            // without walking the whole branch: the steps up to the
            // invalidating one (usually the compaction the branch starts
            // at), then the rest from its end, where the usage entry is.
            let trusted = usage_entry.is_some_and(|entry| {
                let id = entry.source.id();
                let (before, after) = match invalidating {
                    Some(at) => branch.split_at(at + 1),
                    None => (&[][..], branch),
                };
                !before.iter().any(|step| step.id == id)
                    && after.iter().rev().any(|step| step.id == id)
            });
            if trusted {
                return estimate;
            }
        }
        let system = current_system_message(projection.message_refs());
        let mut tokens = system.map_or(0, |system| estimate_tokens(&AgentMessage::System(system)));
        tokens += projection
            .message_refs()
            .filter(|message| !matches!(message, AgentMessage::System(_)))
            .map(estimate_tokens)
            .sum::<u64>();
        ContextEstimate {
            tokens,
            usage_tokens: 0,
            trailing_tokens: tokens,
            last_usage_index: None,
        }
    }

    /// The tokens of `AgentSession.getContextUsage()` (1.6.0,
    /// `dist/core/agent-session.js`) over the session projection and the
    /// branch: `None` when the branch has a compaction and no projected
    /// assistant entry with usable usage after it (unknown until the next
    /// answer), else [`estimate_projected_context_tokens`].
    pub fn context_usage_tokens(
        projection: &Projection<'_>,
        branch: &[BranchStep<'_>],
    ) -> Option<u64> {
        // `getLatestCompactionEntry(branch)`, then `branch.findIndex` by its id.
        if let Some(latest) = branch.iter().rev().find(|entry| entry.compaction) {
            // `findIndex` is -1 when absent: then `slice(0)`.
            let after = branch
                .iter()
                .position(|entry| entry.id == latest.id)
                .map_or(0, |index| index + 1);
            if !usage_after(projection, &branch[after..]) {
                return None;
            }
        }
        Some(estimate_projected_over_steps(projection, branch).tokens)
    }

    /// [`context_usage_tokens`] read from the end of a branch as Pi builds
    /// one (walked through its id map: no id stands twice on it) that
    /// holds no `context_edit`: `newest_first` gives the entries after its
    /// newest compaction (every entry, without one), newest first, each
    /// with its id, and `compaction_id` names that compaction. Pi's answer
    /// is then the newest usable usage plus estimates of the messages after
    /// it, when those entries hold one; when they hold none, after a
    /// compaction, Pi does not know (`Some(None)`). Only the entries back to
    /// that usage are read. `None` when the answer does not lie there (no
    /// compaction and no usage: Pi estimates every message), which the
    /// whole projection then gives.
    pub fn usage_from_the_end<'a>(
        newest_first: impl Iterator<Item = (&'a str, &'a Entry)>,
        compaction_id: Option<&str>,
    ) -> Option<Option<u64>> {
        let mut trailing = 0;
        let mut messages = Vec::new();
        for (id, entry) in newest_first {
            messages.clear();
            crate::projection::entry_messages(entry, &mut messages);
            for message in messages.iter().rev() {
                if let Some(usage) = usable_usage(message) {
                    // Pi finds no step with this id before the compaction.
                    return (compaction_id != Some(id))
                        .then(|| Some(calculate_context_tokens(usage) + trailing));
                }
                trailing += estimate_tokens(message);
            }
        }
        compaction_id.map(|_| None)
    }

    /// Whether some of `steps` (the branch after its latest compaction)
    /// has the id of a projected entry with usable usage. The projection
    /// ends with those steps, so the newest projected entry with usage is
    /// first matched against the step in its place from the end: the
    /// usual answer, without hashing every id.
    fn usage_after(projection: &Projection<'_>, steps: &[BranchStep<'_>]) -> bool {
        let has_usage = |entry: &ProjectedEntry<'_>| {
            projection
                .messages_of(entry)
                .iter()
                .any(|message| usable_usage(message).is_some())
        };
        let newest = projection
            .entries
            .iter()
            .rev()
            .zip(steps.iter().rev())
            .find(|(entry, _)| has_usage(entry));
        if let Some((entry, step)) = newest
            && entry.source.id() == step.id
        {
            return true;
        }
        usage_after_by_id(projection, steps, has_usage)
    }

    /// [`usage_after`] by the ids alone, as Pi compares them.
    fn usage_after_by_id(
        projection: &Projection<'_>,
        steps: &[BranchStep<'_>],
        has_usage: impl Fn(&ProjectedEntry<'_>) -> bool,
    ) -> bool {
        let projected: std::collections::HashSet<&str> = projection
            .entries
            .iter()
            .filter(|entry| has_usage(entry))
            .map(|entry| entry.source.id())
            .collect();
        steps.iter().any(|entry| projected.contains(entry.id))
    }
}

/// pi-ai's estimator (`utils/estimate.ts`, 1.6.0): `ceil(chars / 3.5)` over
/// LLM messages, i.e. after `convertToLlm`. It backs notesoup's budget.
pub mod pi_ai {
    use super::*;

    /// `ceil(chars / 3.5)`, exact in integers: `ceil(2 * chars / 7)`.
    fn tokens_of_chars(chars: usize) -> u64 {
        ceil_div(chars * 2, 7)
    }

    /// Text lengths; any other block counts as an image.
    fn block_chars(blocks: &[ContentBlock]) -> usize {
        blocks
            .iter()
            .map(|block| match block {
                ContentBlock::Text(text) => js_len(&text.text),
                _ => ESTIMATED_IMAGE_CHARS,
            })
            .sum()
    }

    fn tools_tokens<T: Serialize>(tools: Option<&Vec<T>>) -> u64 {
        match tools {
            Some(tools) if !tools.is_empty() => tokens_of_chars(js_json_len(tools)),
            _ => 0,
        }
    }

    /// `estimateMessageTokens(message)` for an LLM message (system, user,
    /// assistant, toolResult); other roles count 0, as they never reach it.
    pub fn estimate_message_tokens(message: &AgentMessage) -> u64 {
        match message {
            AgentMessage::System(system) => {
                tokens_of_chars(js_len(&system_message_text(system)))
                    + tools_tokens(system.tools_added.as_ref())
                    + tools_tokens(system.tools_removed.as_ref())
            }
            AgentMessage::User(user) => tokens_of_chars(content_chars(&user.content, block_chars)),
            AgentMessage::ToolResult(result) => tokens_of_chars(block_chars(&result.content)),
            AgentMessage::Assistant(assistant) => {
                tokens_of_chars(assistant_chars(&assistant.content))
            }
            _ => 0,
        }
    }

    /// `estimateContextTokens(messages)`: like the coding agent's, but an
    /// assistant's usage counts only if its timestamp is not older than any
    /// message before it (a later-inserted summary invalidates it).
    pub fn estimate_context_tokens<M: Borrow<AgentMessage>>(messages: &[M]) -> ContextEstimate {
        // JavaScript numbers: a message without a timestamp poisons the
        // running maximum with NaN, after which no usage applies.
        let mut latest_prefix = f64::NEG_INFINITY;
        let mut last_usage = None;
        for (index, message) in messages.iter().enumerate() {
            let message = message.borrow();
            let timestamp = message.timestamp().map_or(f64::NAN, |t| t as f64);
            if let AgentMessage::Assistant(_) = message
                && timestamp >= latest_prefix
                && let Some(usage) = usable_usage(message)
            {
                last_usage = Some((index, usage));
            }
            latest_prefix = if timestamp.is_nan() || latest_prefix.is_nan() {
                f64::NAN
            } else {
                latest_prefix.max(timestamp)
            };
        }
        ContextEstimate::after_usage(messages, last_usage, estimate_message_tokens)
    }
}
