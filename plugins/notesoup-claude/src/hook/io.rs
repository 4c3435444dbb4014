//! The hook contract: the JSON Claude Code writes to a hook's stdin, and the
//! JSON a hook prints on exit 0 (`hookSpecificOutput.hookEventName` must
//! name the event, or Claude Code drops the context).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// The hook events notesoup handles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Event {
    /// Boot at startup, resume, clear and compact.
    SessionStart,
    /// Budget reminder and warning before a prompt.
    UserPromptSubmit,
    /// Budget reminder and warning between tool batches.
    PostToolBatch,
    /// The close-out block and the close-out-done notice.
    Stop,
    /// The hand-off marker at `/clear`.
    SessionEnd,
}

impl Event {
    /// The name Claude Code uses for the event.
    pub fn hook_event_name(self) -> &'static str {
        match self {
            Event::SessionStart => "SessionStart",
            Event::UserPromptSubmit => "UserPromptSubmit",
            Event::PostToolBatch => "PostToolBatch",
            Event::Stop => "Stop",
            Event::SessionEnd => "SessionEnd",
        }
    }
}

/// The hook's stdin: the common fields plus the event-specific ones
/// notesoup reads. Unknown fields are ignored.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct HookInput {
    /// The Claude session id.
    pub session_id: String,
    /// The session's transcript (it may lag behind the hook).
    pub transcript_path: Option<PathBuf>,
    /// The session's working directory.
    pub cwd: Option<PathBuf>,
    /// The event name as Claude Code sent it.
    pub hook_event_name: Option<String>,
    /// Set only when a subagent fired the event.
    pub agent_id: Option<String>,
    /// SessionStart: `startup`, `resume`, `clear`, `compact` or `fork`.
    pub source: Option<String>,
    /// SessionStart (on compact): the model id.
    pub model: Option<String>,
    /// Stop: true when re-entered after a block.
    pub stop_hook_active: bool,
    /// Stop: the reply that just ended, current even when the transcript
    /// lags behind the hook.
    pub last_assistant_message: Option<String>,
    /// SessionEnd: `clear`, `resume`, `logout`, `prompt_input_exit`, `other`.
    pub reason: Option<String>,
    /// UserPromptSubmit: the prompt as typed (a slash command unexpanded).
    pub prompt: Option<String>,
}

/// What a hook prints: nothing, or one JSON object.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HookOutput {
    /// Stop: `"block"` makes the model continue with `reason`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<&'static str>,
    /// Stop: the text the model receives with a block.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Shown to the user.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_message: Option<String>,
    /// Context for the model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hook_specific_output: Option<SpecificOutput>,
}

/// `hookSpecificOutput`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SpecificOutput {
    /// Must equal the event's name.
    pub hook_event_name: &'static str,
    /// Text the model sees as `<Event> hook additional context: <text>`.
    pub additional_context: String,
}

impl HookOutput {
    /// Additional context for the model on `event`.
    pub fn context(event: Event, text: String) -> Self {
        Self {
            hook_specific_output: Some(SpecificOutput {
                hook_event_name: event.hook_event_name(),
                additional_context: text,
            }),
            ..Self::default()
        }
    }

    /// A message for the user only.
    pub fn notice(text: impl Into<String>) -> Self {
        Self {
            system_message: Some(text.into()),
            ..Self::default()
        }
    }

    /// A Stop block: the model continues with `reason`.
    pub fn block(reason: String) -> Self {
        Self {
            decision: Some("block"),
            reason: Some(reason),
            ..Self::default()
        }
    }

    /// Adds a user notice to this output, after any existing one.
    pub fn with_notice(mut self, text: &str) -> Self {
        self.system_message = Some(match self.system_message.take() {
            Some(existing) => format!("{existing}\n{text}"),
            None => text.to_owned(),
        });
        self
    }

    /// Nothing to say.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// The stdout text: empty when there is nothing to say, else one JSON
    /// line.
    pub fn to_stdout(&self) -> String {
        if self.is_empty() {
            return String::new();
        }
        // Serializing plain strings and options cannot fail.
        serde_json::to_string(self).unwrap_or_default() + "\n"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_have_the_shapes_claude_code_reads() {
        assert_eq!(HookOutput::default().to_stdout(), "");
        assert_eq!(
            HookOutput::context(Event::SessionStart, "boot".into()).to_stdout(),
            "{\"hookSpecificOutput\":{\"hookEventName\":\"SessionStart\",\"additionalContext\":\"boot\"}}\n"
        );
        assert_eq!(
            HookOutput::block("close out".into()).to_stdout(),
            "{\"decision\":\"block\",\"reason\":\"close out\"}\n"
        );
        assert_eq!(
            HookOutput::notice("a").with_notice("b").to_stdout(),
            "{\"systemMessage\":\"a\\nb\"}\n"
        );
    }

    #[test]
    fn recorded_inputs_parse() {
        let stop: HookInput = serde_json::from_str(r#"{"session_id":"s","transcript_path":"/t/s.jsonl","cwd":"/w","prompt_id":"p","permission_mode":"default","effort":{"level":"medium"},"hook_event_name":"Stop","stop_hook_active":true,"last_assistant_message":"done.","background_tasks":[],"session_crons":[]}"#).unwrap();
        assert!(stop.stop_hook_active);
        assert_eq!(stop.agent_id, None);
        let start: HookInput = serde_json::from_str(r#"{"session_id":"s","transcript_path":"/t/s.jsonl","cwd":"/w","hook_event_name":"SessionStart","source":"compact","model":"claude-opus-5-5"}"#).unwrap();
        assert_eq!(start.source.as_deref(), Some("compact"));
        assert_eq!(start.model.as_deref(), Some("claude-opus-5-5"));
    }
}
