//! `notes`: each subcommand is one notes tool, called through core's
//! `call_tool` over the host's tools for the session; `list` and `search`
//! print every matching note, without the response budget the agent's
//! tools keep to.

use std::io::IsTerminal;

use notesoup_core::notes::{DeleteOutcome, Edit, NoteStore, UpdateRequest, is_blank_body};
use notesoup_core::plumbing::read_capped;
use notesoup_core::tools::{Refusal, Tool, ToolOutput, call_tool};
use serde_json::{Map, Value, json};

use crate::args::{NotesArgs, NotesCommand};
use crate::host::{CliHost, Purpose, UsageError};
use crate::out::Out;
use crate::target::{target, tool_result};

/// Runs `notes`; its exit code.
pub(crate) fn run<H: CliHost>(
    host: &mut H,
    args: NotesArgs<H::SessionArgs>,
    out: &mut Out,
) -> anyhow::Result<u8> {
    let NotesArgs { session, command } = args;
    let target = target(host, &session, None)?;
    target.notes_root()?;
    let mut params = Map::new();
    // An update to check before it is made: would it leave a blank body?
    let mut blank_check = None;
    let call = match command {
        NotesCommand::List {
            glob,
            pattern,
            limit,
            wastebasket,
        } => {
            put(&mut params, "pattern", json!(pattern.or(glob)));
            put(&mut params, "limit", json!(limit));
            put(&mut params, "wastebasket", json!(wastebasket));
            Call::Unbounded(Tool::NOTES_LIST.name)
        }
        NotesCommand::Read {
            address,
            offset,
            limit,
        } => {
            put(&mut params, "address", json!(address));
            put(&mut params, "offset_chars", json!(offset));
            put(&mut params, "limit_chars", json!(limit));
            Call::Tool(Tool::NOTES_READ.name)
        }
        NotesCommand::Search {
            query,
            pattern,
            limit,
            max_matches_per_file,
            wastebasket,
        } => {
            put(&mut params, "query", json!(query));
            put(&mut params, "pattern", json!(pattern));
            put(&mut params, "limit", json!(limit));
            put(
                &mut params,
                "max_matches_per_file",
                json!(max_matches_per_file),
            );
            put(&mut params, "wastebasket", json!(wastebasket));
            Call::Unbounded(Tool::NOTES_SEARCH.name)
        }
        NotesCommand::Write {
            address,
            content,
            origin,
            allow_empty,
        } => {
            let content = match content {
                Some(content) => content,
                None => read_stdin::<H>(&address, out)?,
            };
            if is_blank_body(&content) && !allow_empty {
                anyhow::bail!(blank_refusal(&address, "the content"));
            }
            put(&mut params, "address", json!(address));
            put(&mut params, "content", json!(content));
            put(&mut params, "origin", json!(origin));
            Call::Tool(Tool::NOTES_WRITE.name)
        }
        NotesCommand::Update {
            address,
            old,
            new,
            all,
            allow_empty,
        } => {
            if old.len() != new.len() {
                anyhow::bail!(
                    "every --old needs its --new ({} --old, {} --new)",
                    old.len(),
                    new.len()
                );
            }
            let edits: Vec<Value> = old
                .iter()
                .zip(&new)
                .map(|(old, new)| json!({"oldText": old, "newText": new}))
                .collect();
            if !allow_empty {
                let request = UpdateRequest {
                    edits: old
                        .into_iter()
                        .zip(new)
                        .map(|(old_text, new_text)| Edit { old_text, new_text })
                        .collect(),
                    origin: None,
                    crumpled: None,
                    replace_all: all,
                };
                blank_check = Some((address.clone(), request));
            }
            put(&mut params, "address", json!(address));
            put(&mut params, "edits", json!(edits));
            put(&mut params, "replace_all", json!(all));
            Call::Tool(Tool::NOTES_UPDATE.name)
        }
        NotesCommand::Crumple { address } => {
            put(&mut params, "address", json!(address));
            params.insert("crumpled".into(), json!(true));
            Call::Tool(Tool::NOTES_UPDATE.name)
        }
        NotesCommand::Uncrumple { address } => {
            put(&mut params, "address", json!(address));
            params.insert("crumpled".into(), json!(false));
            Call::Tool(Tool::NOTES_UPDATE.name)
        }
        NotesCommand::Delete {
            address,
            yes,
            force,
        } => {
            if !yes && !confirm::<H>(&address, out)? {
                anyhow::bail!("{address} was not deleted");
            }
            return delete(host, &target, &address, force, session.json, out);
        }
        NotesCommand::Rename { address, to } => {
            put(&mut params, "address", json!(address));
            put(&mut params, "rename_to", json!(to));
            Call::Tool(Tool::NOTES_UPDATE.name)
        }
    };
    let mut arguments = Some(Value::Object(params));
    let output = host.with_tools(&target, Purpose::Notes, out, &mut |tools| {
        if let Some((address, request)) = &blank_check {
            // A refusal to open the store, a missing note or an edit that
            // does not apply is left to the update itself to report.
            let edited = tools
                .notes()
                .ok()
                .and_then(|store| store.edited_body(address, request).ok().flatten());
            if edited.is_some_and(|body| is_blank_body(&body)) {
                anyhow::bail!(blank_refusal(address, "these edits"));
            }
        }
        let arguments = arguments.take().unwrap_or_default();
        Ok(match call {
            Call::Tool(name) => call_tool(tools, name, arguments),
            Call::Unbounded(name) => Tool::call_unbounded(tools, name, arguments)
                .unwrap_or_else(|| call_tool(tools, name, Value::Null)),
        })
    })?;
    Ok(tool_result(out, output, session.json))
}

/// What a `notes` subcommand calls.
#[derive(Debug, Clone, Copy)]
enum Call {
    /// A notes tool, as the agent calls it.
    Tool(&'static str),
    /// `notes_list` or `notes_search` without the response budget: a
    /// person at a terminal gets every row.
    Unbounded(&'static str),
}

/// Asks on the terminal whether to delete `address`; a mistake in how the
/// command was called when there is no terminal to ask on.
fn confirm<H: CliHost>(address: &str, out: &mut Out) -> anyhow::Result<bool> {
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        return Err(UsageError(format!(
            "notes delete asks before it deletes {address}, and there is no terminal to ask on: pass --yes"
        ))
        .into());
    }
    out.prompt(&format!("{}: delete {address} for good? [y/N] ", H::BIN));
    let mut answer = String::new();
    let read = stdin
        .read_line(&mut answer)
        .map_err(|error| anyhow::anyhow!("could not read the answer: {error}"))?;
    if read == 0 {
        // Ctrl-D echoes no newline: what is said next starts a line of its
        // own.
        out.prompt("\n");
    }
    Ok(matches!(answer.trim(), "y" | "Y" | "yes" | "YES" | "Yes"))
}

/// `notes delete`: the note gone for good, or why not.
fn delete<H: CliHost>(
    host: &mut H,
    target: &crate::host::Target<'_, H::SessionArgs>,
    address: &str,
    force: bool,
    as_json: bool,
    out: &mut Out,
) -> anyhow::Result<u8> {
    let mut outcome = None;
    host.with_tools(target, Purpose::Notes, out, &mut |tools| {
        let deleted = tools
            .notes()
            .map_err(|refusal| anyhow::anyhow!("{}", refusal.render()))?
            .delete(address, force);
        outcome = Some(deleted);
        Ok(ToolOutput::plain_json(&Value::Null, false))
    })?;
    let outcome = outcome.ok_or_else(|| anyhow::anyhow!("no notes store was opened"))?;
    match outcome {
        Ok(DeleteOutcome::Deleted {
            address,
            was_crumpled,
        }) => {
            if as_json {
                out.print(&json!({"deleted": address, "wasCrumpled": was_crumpled}).to_string());
            } else {
                out.print(&format!("deleted {address}"));
            }
            Ok(0)
        }
        Ok(DeleteOutcome::Live { address }) => anyhow::bail!(
            "{address} is a live note: crumple it first (notes crumple {address}), or pass --force to delete it anyway"
        ),
        Err(error) => {
            let refusal = Refusal::of_note_error(&error);
            Ok(crate::target::tool_result(
                out,
                ToolOutput::refusal(&refusal),
                as_json,
            ))
        }
    }
}

/// A note's content from stdin, read to the most a note holds and no
/// further.
fn read_stdin<H: CliHost>(address: &str, out: &mut Out) -> anyhow::Result<String> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        out.warn(&format!(
            "{}: reading the content of {address} from stdin (end with Ctrl-D)",
            H::BIN
        ));
    }
    let bytes = read_capped(stdin.lock(), NoteStore::MAX_NOTE_BYTES)
        .map_err(|error| anyhow::anyhow!("could not read the content from stdin: {error}"))?
        .ok_or_else(|| {
            anyhow::anyhow!(
                "the content on stdin is over {max_note_bytes} bytes, the most a note holds; nothing was written", max_note_bytes = NoteStore::MAX_NOTE_BYTES
            )
        })?;
    String::from_utf8(bytes)
        .map_err(|error| anyhow::anyhow!("the content on stdin is not UTF-8: {error}"))
}

/// Why `what` is not written to the note at `address`: it would leave the
/// body blank.
fn blank_refusal(address: &str, what: &str) -> String {
    format!(
        "{what} would leave {address} blank (nothing but whitespace once a byte order mark and any frontmatter are stripped); nothing was written (pass --allow-empty to write an empty note)"
    )
}

/// Puts `value` under `key` unless it is null or `false`.
pub(crate) fn put(params: &mut Map<String, Value>, key: &str, value: Value) {
    if !value.is_null() && value != Value::Bool(false) {
        params.insert(key.to_owned(), value);
    }
}
