//! Pi's `convertToLlm`: agent messages to the messages a provider receives.

use std::borrow::Cow;

use crate::session::{AgentMessage, BashExecutionMessage, Content, Extra, UserMessage};

/// The text before a compaction summary.
pub const COMPACTION_SUMMARY_PREFIX: &str = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
/// The text after a compaction summary.
pub const COMPACTION_SUMMARY_SUFFIX: &str = "\n</summary>";
/// The text before a branch summary.
pub const BRANCH_SUMMARY_PREFIX: &str =
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
/// The text after a branch summary.
pub const BRANCH_SUMMARY_SUFFIX: &str = "</summary>";

/// `convertToLlm`: custom messages, summaries and bash executions become
/// user messages with Pi's exact texts; system, user, assistant and tool
/// results pass through; excluded bash executions and unknown roles are
/// dropped. The result holds only system, user, assistant and toolResult.
pub fn convert_to_llm<'m>(
    messages: impl IntoIterator<Item = &'m AgentMessage>,
) -> Vec<Cow<'m, AgentMessage>> {
    messages.into_iter().filter_map(convert_one).collect()
}

fn convert_one(message: &AgentMessage) -> Option<Cow<'_, AgentMessage>> {
    let user = |content: Content, timestamp: i64| {
        Some(Cow::Owned(AgentMessage::User(UserMessage {
            content,
            timestamp,
            extra: Extra::new(),
        })))
    };
    let text = |text: String| Content::Blocks(vec![crate::session::ContentBlock::text(text)]);
    match message {
        AgentMessage::BashExecution(bash) => {
            if bash.exclude_from_context == Some(true) {
                return None;
            }
            user(text(bash_execution_to_text(bash)), bash.timestamp)
        }
        AgentMessage::Custom(custom) => user(
            Content::Blocks(custom.content.clone().into_blocks()),
            custom.timestamp,
        ),
        AgentMessage::BranchSummary(summary) => user(
            text(format!(
                "{BRANCH_SUMMARY_PREFIX}{}{BRANCH_SUMMARY_SUFFIX}",
                summary.summary
            )),
            summary.timestamp,
        ),
        AgentMessage::CompactionSummary(summary) => user(
            text(format!(
                "{COMPACTION_SUMMARY_PREFIX}{}{COMPACTION_SUMMARY_SUFFIX}",
                summary.summary
            )),
            summary.timestamp,
        ),
        AgentMessage::System(_)
        | AgentMessage::User(_)
        | AgentMessage::Assistant(_)
        | AgentMessage::ToolResult(_) => Some(Cow::Borrowed(message)),
        AgentMessage::Unknown(_) => None,
    }
}

/// `bashExecutionToText`: what the model reads for a `!command`.
pub fn bash_execution_to_text(bash: &BashExecutionMessage) -> String {
    let mut text = format!("Ran `{}`\n", bash.command);
    if bash.output.is_empty() {
        text.push_str("(no output)");
    } else {
        text.push_str("```\n");
        text.push_str(&bash.output);
        text.push_str("\n```");
    }
    if bash.cancelled {
        text.push_str("\n\n(command cancelled)");
    } else if let Some(Some(code)) = bash.exit_code
        && code != 0
    {
        text.push_str(&format!("\n\nCommand exited with code {code}"));
    }
    if bash.truncated
        && let Some(path) = bash
            .full_output_path
            .as_deref()
            .filter(|path| !path.is_empty())
    {
        text.push_str(&format!("\n\n[Output truncated. Full output: {path}]"));
    }
    text
}
