//! The bridge to real Pi: `notesoup-pi serve` runs a [`PiExtension`] behind a
//! [`BridgeHost`] and speaks the [`protocol`] with the Pi package's shim over
//! stdio.
//!
//! The loop is synchronous on purpose: Pi awaits every handler in order, so
//! exactly one event is in flight, and the nested actions of that event are
//! answered before its result. The adapter stays host-agnostic: nothing here
//! knows notesoup beyond the `PiExtension` it is given.
//!
//! The shim's lines are read by core's capped reader on a thread of their
//! own, so that the wait for a nested action's answer is bounded
//! ([`ACTION_REPLY_TIMEOUT`]). Nothing the shim sends is repeated back or to
//! stderr beyond a short piece: a line over the cap, too dense or unreadable
//! fails the event it shows (the sidecar serves on), a first line that is no
//! `hello` is refused, and a `piVersion` that is no version is refused
//! without being echoed.

mod host;
mod kept;
mod mirror;
pub mod package;
pub mod protocol;
#[cfg(test)]
mod tests;

use std::io::{BufRead, Write};
use std::time::Duration;

use notesoup_core::tools::CompactJson;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

pub use host::BridgeHost;
use host::{Channel, Received, kind, shown};
use protocol::{
    CommandSpec, ContextAppend, ContextEdit, EventRequest, EventResult, KeptRange,
    MessageSummaryRule, PROTOCOL_VERSION, PayloadOmission, Ready, Refused, ShimMessage,
    SidecarMessage, ToolSpec,
};

use crate::host::{
    ExecutionMode, MessageSummary, PLAIN_ROLES, PiApiLevel, PiExtension, PiHost, SUMMARY_FIELDS,
    ToolDescriptor, ToolInvocation, WHOLE_ROLES, WindowEdit,
};

/// The Pi events the shim forwards, in the order it subscribes to them: the
/// events `Notesoup` handles.
pub const FORWARDED_EVENTS: &[&str] = &[
    "session_start",
    "session_tree",
    "session_before_tree",
    "session_before_compact",
    "session_shutdown",
    "model_select",
    "turn_start",
    "context",
    "context_with_system",
    "turn_end",
    "agent_before_settle",
    "agent_settled",
];

/// Whether the state of `event` leaves Pi's context usage out: a forwarded
/// event none of whose handlers reads `ctx.getContextUsage()` (only the
/// budget does, at the [`USAGE_COMPUTED`] exchanges).
pub fn usage_omitted(event: &str) -> bool {
    FORWARDED_EVENTS.contains(&event) && !USAGE_COMPUTED.contains(&event)
}

/// The exchanges whose handlers read the context usage (the budget, at
/// `context` and `turn_end`; tool calls, for `get_context_remaining` and
/// `wipe_memory`; commands, for `/fresh-window`): the sidecar computes it
/// from its mirror as Pi 1.6.0's `getContextUsage()` does
/// (`estimate::coding_agent::context_usage_tokens`), so their states leave
/// it out too, except under a virtual model, whose limits only Pi knows.
/// Pi's own call walks the whole branch: 40–50 ms a tool call at 100,000
/// entries.
pub const USAGE_COMPUTED: &[&str] = &["context", "turn_end", "execute_tool", "command"];

/// The forwarded events the shim subscribes to only while the extension
/// needs them ([`PiExtension::needs`]): Pi builds the boundary context of
/// `turn_end` and `agent_before_settle` (walks of the whole branch, about
/// 80 ms a turn and 0.1 s a prompt at 100,000 entries, before and after the
/// handlers) whether or not the handler acts, and both act only while a
/// reset waits, a budget draft waits to be saved (`turn_end`) or a turn
/// ends in an overflow or at the reserve. The shim also holds `turn_end`
/// for a turn whose own messages say so (its reply did not complete, or
/// its context reached [`EventResult::turn_end_at`]). `turn_start` only
/// announces a reset or a warning once it is durable, and `agent_settled`
/// announces them too and clears what the run left pending, so both are
/// taken only while something waits: a turn or a run nothing waits for
/// costs no exchange.
pub const ON_DEMAND_EVENTS: &[&str] = &[
    "turn_start",
    "turn_end",
    "agent_before_settle",
    "agent_settled",
];

/// Payload parts left out by the shim, per event: the copies of the whole
/// context, which grow with the session and which `Notesoup` never reads
/// (it reads the session, and `pendingMessages`): the boundary preview's,
/// and `context`'s messages (the budget decides from the session and
/// answers what to append, [`ContextAppend`]).
pub const OMITTED_PAYLOAD: &[(&str, &[&str])] = &[
    ("context", &["messages"]),
    (
        "turn_end",
        &[
            "context.contextEntries",
            "context.contextMessages",
            "context.llmMessages",
        ],
    ),
    (
        "agent_before_settle",
        &[
            "context.contextEntries",
            "context.contextMessages",
            "context.llmMessages",
        ],
    ),
];

/// The payload lists of messages the shim sends summarised, per event:
/// `context_with_system`'s, of which the hook reads each message's
/// [`SUMMARY_FIELDS`] and the [`WHOLE_ROLES`] messages whole, and answers
/// an edit of Pi's messages ([`ContextEdit`]).
pub const SUMMARIZED_MESSAGES: &[(&str, &str)] = &[("context_with_system", "messages")];

/// How long the sidecar waits for the shim's answer to one nested action.
/// The shim performs every action synchronously and answers at once, so a
/// wait this long means it is stuck; the event then fails with a clear error
/// instead of Pi waiting for ever.
pub const ACTION_REPLY_TIMEOUT: Duration = Duration::from_secs(30);

/// The longest `piVersion` the handshake takes: Pi's versions are short
/// (`1.6.0`), and a refusal names the version it refused.
pub const MAX_PI_VERSION_BYTES: usize = 64;

/// Why the serve loop stopped.
#[derive(Debug, thiserror::Error)]
pub enum BridgeError {
    /// Reading or writing the pipe failed.
    #[error("the pipe to the shim failed: {0}")]
    Io(#[source] std::io::Error),
    /// A line from the shim was not a protocol message.
    #[error("the shim sent an unreadable message: {0}")]
    Decode(String),
    /// A message could not be encoded.
    #[error("a message could not be encoded: {0}")]
    Encode(#[source] serde_json::Error),
    /// The shim closed the pipe in the middle of an exchange.
    #[error("the shim closed the pipe")]
    Closed,
    /// The shim did not answer a nested action in time.
    #[error(
        "the Pi package did not answer action {id} ({action}) within {} ms; the event failed",
        waited.as_millis()
    )]
    ActionTimedOut {
        /// The action's id.
        id: u32,
        /// The action's name (`appendEntry`, …).
        action: &'static str,
        /// How long it was waited for.
        waited: Duration,
    },
    /// The mirror cannot follow the shim's report (the session file does not
    /// hold the entries the shim left to it, or the report starts past the
    /// mirror's end): every entry must be sent again.
    #[error("the mirror needs every entry again: {0}")]
    Resync(String),
    /// The handshake was refused (the `refused` line was sent).
    #[error("{message}")]
    Refused {
        /// The stable code.
        code: String,
        /// What was said.
        message: String,
    },
}

/// What the sidecar needs besides the pipe: the extension for a Pi version,
/// or a refusal `(code, message)`.
pub type ExtensionFactory<'a> =
    dyn FnOnce(PiApiLevel) -> Result<Box<dyn PiExtension>, (String, String)> + 'a;

/// Serves one shim until it closes the pipe: the handshake, then one event
/// at a time; each nested action's answer is waited for at most
/// `action_timeout` ([`ACTION_REPLY_TIMEOUT`] in `notesoup-pi serve`). With
/// a `cache_dir` (core's `BootCaches::dir`), the index of each session file
/// the sidecar reads is kept there for the next sidecar.
pub fn serve(
    reader: impl BufRead + Send + 'static,
    writer: &mut dyn Write,
    make: Box<ExtensionFactory<'_>>,
    action_timeout: Duration,
    cache_dir: Option<&std::path::Path>,
) -> Result<(), BridgeError> {
    // One line waits while the next is read: memory stays a few lines'
    // worth, each within core's cap. The thread is left to end with the
    // pipe (or the process).
    let (to_channel, incoming) = std::sync::mpsc::sync_channel(1);
    std::thread::Builder::new()
        .name("notesoup-pi-stdin".to_owned())
        .spawn(move || host::read_lines(reader, &to_channel))
        .map_err(BridgeError::Io)?;
    let mut channel = Channel::new(incoming, writer);
    let refuse = |channel: &mut Channel<'_>, code: &str, message: String| {
        channel.send(&SidecarMessage::Refused(Refused {
            protocol: PROTOCOL_VERSION,
            code: code.to_owned(),
            message: message.clone(),
        }))?;
        Err(BridgeError::Refused {
            code: code.to_owned(),
            message,
        })
    };
    let hello = match channel.receive(None)? {
        Received::Message(message) => match *message {
            ShimMessage::Hello(hello) => hello,
            other => {
                return refuse(
                    &mut channel,
                    "expected_hello",
                    format!("the first line must be hello; got {}", kind(&other)),
                );
            }
        },
        Received::Closed | Received::TimedOut => return Ok(()),
        Received::Unreadable { why, .. } => {
            return refuse(
                &mut channel,
                "expected_hello",
                format!("the first line must be hello; got {why}"),
            );
        }
    };
    if hello.pi_version.len() > MAX_PI_VERSION_BYTES {
        return refuse(
            &mut channel,
            "bad_hello",
            format!(
                "piVersion is {} bytes long; a Pi version is at most {MAX_PI_VERSION_BYTES}",
                hello.pi_version.len()
            ),
        );
    }
    if hello.protocol != PROTOCOL_VERSION {
        return refuse(
            &mut channel,
            "protocol_mismatch",
            format!(
                "the Pi package speaks protocol {} but notesoup-pi {} speaks {PROTOCOL_VERSION}; install matching versions",
                hello.protocol,
                crate::extension::VERSION
            ),
        );
    }
    let Some(level) = PiApiLevel::from_version(&hello.pi_version) else {
        return refuse(
            &mut channel,
            "host_too_old",
            crate::extension::requires_boundary_api(&hello.pi_version),
        );
    };
    let mut extension = match make(level) {
        Ok(extension) => extension,
        Err((code, message)) => return refuse(&mut channel, &code, message),
    };
    channel.send(&SidecarMessage::Ready(ready(extension.as_ref(), level)))?;

    let mut host = BridgeHost::new(channel, level, hello.pi_version, action_timeout)
        .keeping_indexes(cache_dir);
    loop {
        let request = match host.channel().receive(None)? {
            Received::Message(message) => match *message {
                ShimMessage::Event(request) => request,
                ShimMessage::ActionResult(late) if host.take_late_answer(&late) => continue,
                other => {
                    return Err(BridgeError::Decode(format!(
                        "expected an event, got {}",
                        kind(&other)
                    )));
                }
            },
            // The shim waits for this event's result: it gets the refusal,
            // and the sidecar serves on.
            Received::Unreadable {
                event: Some(id),
                why,
            } => {
                host.channel().send(&SidecarMessage::Result(EventResult {
                    id,
                    value: null(),
                    error: Some(format!("notesoup: {why}")),
                    on_demand: None,
                    turn_end_at: None,
                }))?;
                continue;
            }
            // Nobody can be told: ending is better than a shim waiting for
            // ever.
            Received::Unreadable { event: None, why } => {
                return Err(BridgeError::Decode(format!("expected an event, got {why}")));
            }
            Received::Closed | Received::TimedOut => {
                host.keep_index();
                return Ok(());
            }
        };
        let name = shown(&request.name);
        let mut result = handle(extension.as_mut(), &mut host, request);
        if let Some(why) = host.broken() {
            return Err(BridgeError::Decode(why.to_owned()));
        }
        if let Some(why) = host.take_timed_out() {
            result.value = null();
            result.error = Some(format!("notesoup: {name}: {why}"));
        }
        host.channel().send(&SidecarMessage::Result(result))?;
        host.warm();
    }
}

/// `tool` as the shim registers it.
fn tool_spec(tool: ToolDescriptor) -> ToolSpec {
    ToolSpec {
        name: tool.name,
        label: tool.label,
        description: tool.description,
        prompt_snippet: tool.prompt_snippet,
        prompt_guidelines: tool.prompt_guidelines,
        parameters: tool.parameters,
        output_schema: tool.output_schema,
        execution_mode: tool.execution_mode.map(|mode| {
            match mode {
                ExecutionMode::Sequential => "sequential",
                ExecutionMode::Parallel => "parallel",
            }
            .to_owned()
        }),
    }
}

/// The `ready` line for `extension` served at `level`.
pub fn ready(extension: &dyn PiExtension, level: PiApiLevel) -> Ready {
    let tools = extension.tools().into_iter().map(tool_spec).collect();
    let commands = extension
        .commands()
        .into_iter()
        .map(|command| CommandSpec {
            name: command.name,
            description: command.description,
            arguments: command.arguments,
        })
        .collect();
    Ready {
        protocol: PROTOCOL_VERSION,
        version: crate::extension::VERSION.to_owned(),
        api_level: match level {
            PiApiLevel::V0_58 => "0.58",
            PiApiLevel::V0_87 => "0.87",
        }
        .to_owned(),
        tools,
        commands,
        events: FORWARDED_EVENTS.iter().map(|&e| e.to_owned()).collect(),
        omit: OMITTED_PAYLOAD
            .iter()
            .map(|(event, paths)| PayloadOmission {
                event: (*event).to_owned(),
                paths: paths.iter().map(|&p| p.to_owned()).collect(),
            })
            .collect(),
        summarize: SUMMARIZED_MESSAGES
            .iter()
            .map(|(event, list)| MessageSummaryRule {
                event: (*event).to_owned(),
                list: (*list).to_owned(),
                fields: SUMMARY_FIELDS.iter().map(|&f| f.to_owned()).collect(),
                whole_roles: WHOLE_ROLES.iter().map(|&r| r.to_owned()).collect(),
                plain_roles: PLAIN_ROLES.iter().map(|&r| r.to_owned()).collect(),
            })
            .collect(),
        usage_omitted: FORWARDED_EVENTS
            .iter()
            .filter(|event| usage_omitted(event))
            .map(|&e| e.to_owned())
            .collect(),
        usage_computed: USAGE_COMPUTED.iter().map(|&e| e.to_owned()).collect(),
        on_demand: ON_DEMAND_EVENTS.iter().map(|&e| e.to_owned()).collect(),
    }
}

/// The events of [`ON_DEMAND_EVENTS`] `extension` needs now.
fn on_demand(extension: &dyn PiExtension) -> Vec<String> {
    ON_DEMAND_EVENTS
        .iter()
        .filter(|event| extension.needs(event))
        .map(|&event| event.to_owned())
        .collect()
}

fn handle(
    extension: &mut dyn PiExtension,
    host: &mut BridgeHost<'_>,
    request: EventRequest,
) -> EventResult {
    let id = request.id;
    let outcome = host
        .sync(request.state)
        .map_err(|error| error.to_string())
        .and_then(|()| match request.summaries {
            // Read from the line (`context_with_system` only).
            Some(summaries) => edit_result(extension.context_with_system(host, &summaries)),
            None => dispatch(extension, host, &request.name, request.payload),
        });
    let (value, error) = match outcome {
        Ok(value) => (value, None),
        Err(error) => (
            null(),
            Some(format!("notesoup: {}: {error}", shown(&request.name))),
        ),
    };
    EventResult {
        id,
        value,
        error,
        on_demand: Some(on_demand(extension)),
        // Past `u32`, no turn reaches it.
        turn_end_at: extension
            .turn_end_at()
            .map(|tokens| u32::try_from(tokens).unwrap_or(u32::MAX)),
    }
}

fn decode<T: DeserializeOwned>(payload: Value) -> Result<T, String> {
    serde_json::from_value(payload)
        .map_err(|error| format!("unreadable payload: {}", shown(&error.to_string())))
}

/// The handler's result serialized once, as it goes on the wire: a tool
/// result's `structuredContent` (core's compact JSON) is embedded as it is.
fn encode<T: Serialize>(value: &T) -> Result<CompactJson, String> {
    CompactJson::to_json(value).map_err(|error| error.to_string())
}

/// `null`: the handler returns nothing.
fn null() -> CompactJson {
    CompactJson::null()
}

/// A handler that returns nothing, called with the decoded payload: `null`.
fn notified<T: DeserializeOwned>(
    payload: Value,
    handler: impl FnOnce(&T),
) -> Result<CompactJson, String> {
    handler(&decode(payload)?);
    Ok(null())
}

/// `{head, keep}` for an edited context (`context_with_system`), `null` to
/// keep Pi's.
fn edit_result(edit: Option<WindowEdit>) -> Result<CompactJson, String> {
    let Some(edit) = edit else {
        return Ok(null());
    };
    let bound = |index: usize| {
        u32::try_from(index).map_err(|_| format!("message index {index} is out of range"))
    };
    let keep = edit
        .keep
        .iter()
        .map(|range| {
            Ok(KeptRange {
                from: bound(range.start)?,
                to: bound(range.end)?,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    encode(&ContextEdit {
        head: edit.head,
        keep,
    })
}

/// `{append}` for messages added after Pi's, `null` to keep Pi's.
fn append_result(append: Vec<crate::session::AgentMessage>) -> Result<CompactJson, String> {
    if append.is_empty() {
        return Ok(null());
    }
    encode(&ContextAppend { append })
}

#[derive(serde::Deserialize)]
struct SummariesPayload {
    messages: Vec<Value>,
}

/// The `messages` of a `context_with_system` payload decoded whole.
fn summaries(payload: Value) -> Result<Vec<Value>, String> {
    decode::<SummariesPayload>(payload).map(|payload| payload.messages)
}

#[derive(serde::Deserialize)]
struct CommandPayload {
    name: String,
    #[serde(default)]
    args: String,
}

/// Calls the handler `name` with the decoded payload; the encoded result.
fn dispatch(
    ext: &mut dyn PiExtension,
    host: &mut dyn PiHost,
    name: &str,
    payload: Value,
) -> Result<CompactJson, String> {
    match name {
        "session_start" => notified(payload, |event| ext.session_start(host, event)),
        "session_tree" => notified(payload, |event| ext.session_tree(host, event)),
        "session_before_tree" => encode(&ext.session_before_tree(host, &decode(payload)?)),
        "session_before_compact" => encode(&ext.session_before_compact(host, &decode(payload)?)),
        "session_compact" => notified(payload, |event| ext.session_compact(host, event)),
        "session_shutdown" => notified(payload, |event| ext.session_shutdown(host, event)),
        "model_select" => notified(payload, |event| ext.model_select(host, event)),
        "before_agent_start" => encode(&ext.before_agent_start(host, &decode(payload)?)),
        "turn_start" => notified(payload, |event| ext.turn_start(host, event)),
        "turn_end" => encode(&ext.turn_end(host, &decode(payload)?)),
        "agent_before_settle" => encode(&ext.agent_before_settle(host, &decode(payload)?)),
        "agent_settled" => notified(payload, |event| ext.agent_settled(host, event)),
        // The payload's messages are left out (`OMITTED_PAYLOAD`): the hook
        // answers what to append, which the shim adds after Pi's.
        "context" => append_result(ext.context(host)),
        // The payload's messages are summarised (`SUMMARIZED_MESSAGES`): the
        // hook answers an edit, which the shim applies to Pi's. A line the
        // channel read in one pass comes with its summaries (`handle`);
        // this is the line it left to the whole decoding.
        "context_with_system" => {
            let messages = summaries(payload)?
                .into_iter()
                .map(MessageSummary::from_json)
                .collect::<Result<Vec<_>, String>>()?;
            edit_result(ext.context_with_system(host, &messages))
        }
        "tool_result" => encode(&ext.tool_result(host, &decode(payload)?)),
        "input" => encode(&ext.input(host, &decode(payload)?)),
        "execute_tool" => {
            let call: ToolInvocation = decode(payload)?;
            encode(&ext.execute_tool(host, &call))
        }
        "command" => {
            let command: CommandPayload = decode(payload)?;
            ext.run_command(host, &command.name, &command.args)
                .map(|()| null())
                .map_err(|error| error.to_string())
        }
        other => Err(format!("no handler for {}", shown(other))),
    }
}
