//! `context`: what the provider would see for any Pi session file, read the
//! way Pi reads it (and the session reader `history` shares).

use std::io::Write as _;
use std::path::Path;

use anyhow::{Result, bail};

use crate::json::to_js_pretty_writer;
use crate::projection::{WindowProjection, convert_to_llm, project_path, window_projection};
use crate::reset::is_boot_of;
use crate::session::{AgentMessage, LazySession, Leaf};

/// Reads and indexes the session, its irregular lines said on stderr; a
/// file without a session header is refused, as `notes` and `boot` refuse
/// it; `leaf`, when given, must be an entry of it.
pub(super) fn open(file: &Path, leaf: Option<&str>) -> Result<LazySession> {
    let session = LazySession::read(file)?;
    for diagnostic in session.diagnostics() {
        eprintln!("{}: {diagnostic}", file.display());
    }
    if session.header().is_none() {
        return Err(super::session::not_a_session(file));
    }
    if let Some(leaf) = leaf
        && !session.contains(leaf)
    {
        bail!("no entry {leaf} in the session");
    }
    Ok(session)
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
