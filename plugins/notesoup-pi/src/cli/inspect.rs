//! `history` and `context`: what the history tools and the provider would
//! see for any Pi session file, read the way Pi reads it.

use std::io::Write as _;
use std::path::Path;

use anyhow::{Context, Result, bail};
use notesoup_core::history::History;
use notesoup_core::notes::NoteStore;
use notesoup_core::tools::{
    Refusal, RefusalCode, ToolContext, ToolFamily, ToolOutput, call_tool, find_tool,
    tool_definitions,
};
use serde_json::Value;

use crate::history::decode_lazy;
use crate::json::to_js_pretty_writer;
use crate::projection::{WindowProjection, convert_to_llm, project_path, window_projection};
use crate::reset::Kind;
use crate::session::{AgentMessage, LazySession, Leaf};

fn is_boot_of(message: &AgentMessage, window_id: &str) -> bool {
    match message {
        AgentMessage::Custom(custom) => {
            Kind::Boot.matches(&custom.custom_type)
                && custom
                    .details
                    .as_ref()
                    .and_then(|d| d.get("windowId"))
                    .and_then(Value::as_str)
                    == Some(window_id)
        }
        _ => false,
    }
}

/// Reads and indexes the session, its irregular lines said on stderr; `leaf`,
/// when given, must be an entry of it.
fn open(file: &Path, leaf: Option<&str>) -> Result<LazySession> {
    let session = LazySession::read(file)?;
    for diagnostic in session.diagnostics() {
        eprintln!("{}: {diagnostic}", file.display());
    }
    if let Some(leaf) = leaf
        && !session.contains(leaf)
    {
        bail!("no entry {leaf} in the session");
    }
    Ok(session)
}

/// `history FILE TOOL [ARGS]`: the tool's text, exactly as the model gets it.
pub fn history(
    file: &Path,
    tool: &str,
    arguments: Value,
    leaf: Option<&str>,
    json: bool,
) -> Result<bool> {
    let name = format!("{}{tool}", history_prefix());
    if find_tool(&name).is_none_or(|tool| tool.family != ToolFamily::History) {
        bail!("unknown history tool {tool}: use {}", history_tool_words());
    }
    // The branch (to `leaf`, or to the file's last entry: Pi's leaf after
    // loading) is decoded; the rest of the session only counts seqs.
    let session = open(file, leaf)?;
    let transcript = decode_lazy(&session, leaf.map_or(Leaf::Last, Leaf::Id));
    session.check()?;
    let history = History::new(transcript).context("decoding the history")?;
    let output = call_tool(&mut SessionHistory(history), &name, arguments);
    let shown = if json {
        output.json.as_str()
    } else {
        output.text.as_str()
    };
    // A refusal is an error: it goes to stderr, and the exit status says so.
    if output.is_error {
        eprintln!("{shown}");
    } else {
        outln!("{shown}");
    }
    Ok(!output.is_error)
}

/// The history tools' short names as the command takes them: `windows,
/// list, search or read`.
fn history_tool_words() -> String {
    let words: Vec<&str> = tool_definitions()
        .filter(|tool| tool.family == ToolFamily::History)
        .filter_map(|tool| tool.name.strip_prefix(history_prefix()))
        .collect();
    match words.split_last() {
        Some((last, [])) => (*last).to_owned(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// What the history tools' names share (`history_`), from their family's
/// glob.
fn history_prefix() -> &'static str {
    ToolFamily::History
        .glob()
        .unwrap_or_default()
        .trim_end_matches('*')
}

/// A session file's decoded history as the history tools' host; it has no
/// notes store.
struct SessionHistory(History);

impl ToolContext for SessionHistory {
    fn notes(&mut self) -> Result<NoteStore, Refusal> {
        Err(Refusal::new(
            RefusalCode::InternalError,
            "no notes store when reading a session file",
        ))
    }

    fn history(&mut self) -> Result<History, Refusal> {
        Ok(self.0.clone())
    }

    fn with_history(&mut self, run: &mut dyn FnMut(&History) -> ToolOutput) -> ToolOutput {
        run(&self.0)
    }
}

/// `context FILE`: the messages the provider would receive at the leaf, in
/// Pi's shapes (after `convertToLlm`), with notesoup's window projection.
pub fn context(file: &Path, leaf: Option<&str>) -> Result<()> {
    // A long session is indexed, and only what the context needs decoded.
    let session = open(file, leaf)?;
    let branch = session.context_path(leaf.map_or(Leaf::Last, Leaf::Id));
    session.check()?;
    let projection = project_path(&branch);
    // Nothing is copied: the messages are borrowed from the decoded entries
    // (or the projection's own), and streamed out as they are.
    let window = window_projection(&projection, &branch);
    let messages: Vec<&AgentMessage> = match &window {
        WindowProjection::NoReset => projection.message_refs().collect(),
        WindowProjection::Checkpoint { marker } => {
            if !projection
                .message_refs()
                .any(|m| is_boot_of(m, marker.window_id))
            {
                bail!(
                    "the active window {} has no visible boot; notesoup would send only the system head",
                    marker.window_id
                );
            }
            projection.message_refs().collect()
        }
        WindowProjection::LegacySlice { messages, .. } => {
            messages.iter().map(AsRef::as_ref).collect()
        }
        WindowProjection::MissingBoot { marker } => bail!(
            "the active window {} has no visible boot; notesoup would send nothing",
            marker.window_id
        ),
    };
    let llm = convert_to_llm(messages);
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let written = to_js_pretty_writer(&mut out, &llm)
        .map_err(std::io::Error::from)
        .and_then(|()| writeln!(out))
        .and_then(|()| out.flush());
    if let Err(error) = written {
        super::stdout_failed(&error);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_history_tools_are_named_by_their_short_names() {
        assert_eq!(history_prefix(), "history_");
        assert_eq!(history_tool_words(), "windows, list, search or read");
    }
}
