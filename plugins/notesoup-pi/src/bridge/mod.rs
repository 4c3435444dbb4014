//! The bridge to real Pi: `notesoup-pi serve` runs a [`PiExtension`] behind a
//! [`BridgeHost`] and speaks the [`protocol`] with the Pi package's shim over
//! stdio.
//!
//! The loop is synchronous on purpose: Pi awaits every handler in order, so
//! exactly one event is in flight, and the nested actions of that event are
//! answered before its result. The adapter stays host-agnostic: nothing here
//! knows notesoup beyond the `PiExtension` it is given.

mod host;
pub mod package;
pub mod protocol;

use std::io::{BufRead, Write};

use notesoup_core::tools::CompactJson;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

pub use host::BridgeHost;
use host::Channel;
use protocol::{
    CommandSpec, EventRequest, EventResult, PROTOCOL_VERSION, PayloadOmission, Ready, Refused,
    ShimMessage, SidecarMessage, ToolSpec,
};

use crate::host::{ExecutionMode, PiApiLevel, PiExtension, PiHost, ToolInvocation};

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

/// Payload parts left out by the shim, per event: the boundary preview's
/// copies of the whole context, which grow with the session and which
/// `Notesoup` never reads (it reads the session, and `pendingMessages`).
pub const OMITTED_PAYLOAD: &[(&str, &[&str])] = &[
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
/// at a time.
pub fn serve(
    reader: &mut dyn BufRead,
    writer: &mut dyn Write,
    make: Box<ExtensionFactory<'_>>,
) -> Result<(), BridgeError> {
    let mut channel = Channel::new(reader, writer);
    let hello = match channel.receive()? {
        Some(ShimMessage::Hello(hello)) => hello,
        Some(other) => {
            return Err(BridgeError::Decode(format!(
                "expected hello, got {other:?}"
            )));
        }
        None => return Ok(()),
    };
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

    let mut host = BridgeHost::new(channel, level, hello.pi_version);
    loop {
        let request = match host.channel().receive()? {
            Some(ShimMessage::Event(request)) => request,
            Some(other) => {
                return Err(BridgeError::Decode(format!(
                    "expected an event, got {other:?}"
                )));
            }
            None => return Ok(()),
        };
        let result = handle(extension.as_mut(), &mut host, request);
        if let Some(why) = host.broken() {
            return Err(BridgeError::Decode(why.to_owned()));
        }
        host.channel().send(&SidecarMessage::Result(result))?;
    }
}

/// The `ready` line for `extension` served at `level`.
pub fn ready(extension: &dyn PiExtension, level: PiApiLevel) -> Ready {
    let tools = extension
        .tools()
        .into_iter()
        .map(|tool| ToolSpec {
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
        })
        .collect();
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
    }
}

fn handle(
    extension: &mut dyn PiExtension,
    host: &mut BridgeHost<'_>,
    request: EventRequest,
) -> EventResult {
    let id = request.id;
    let outcome = host
        .apply_state(request.state)
        .map_err(|error| error.to_string())
        .and_then(|()| dispatch(extension, host, &request.name, request.payload));
    match outcome {
        Ok(value) => EventResult {
            id,
            value,
            error: None,
        },
        Err(error) => EventResult {
            id,
            value: null(),
            error: Some(format!("notesoup: {}: {error}", request.name)),
        },
    }
}

fn decode<T: DeserializeOwned>(payload: Value) -> Result<T, String> {
    serde_json::from_value(payload).map_err(|error| format!("unreadable payload: {error}"))
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

/// `{messages}` for a replaced context, `null` to keep Pi's.
fn messages_result(
    messages: Option<Vec<crate::session::AgentMessage>>,
) -> Result<CompactJson, String> {
    #[derive(Serialize)]
    struct Replaced {
        messages: Vec<crate::session::AgentMessage>,
    }
    match messages {
        Some(messages) => encode(&Replaced { messages }),
        None => Ok(null()),
    }
}

#[derive(serde::Deserialize)]
struct MessagesPayload {
    messages: Vec<crate::session::AgentMessage>,
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
        "session_start" => {
            ext.session_start(host, &decode(payload)?);
            Ok(null())
        }
        "session_tree" => {
            ext.session_tree(host, &decode(payload)?);
            Ok(null())
        }
        "session_before_tree" => encode(&ext.session_before_tree(host, &decode(payload)?)),
        "session_before_compact" => encode(&ext.session_before_compact(host, &decode(payload)?)),
        "session_compact" => {
            ext.session_compact(host, &decode(payload)?);
            Ok(null())
        }
        "session_shutdown" => {
            ext.session_shutdown(host, &decode(payload)?);
            Ok(null())
        }
        "model_select" => {
            ext.model_select(host, &decode(payload)?);
            Ok(null())
        }
        "before_agent_start" => encode(&ext.before_agent_start(host, &decode(payload)?)),
        "turn_start" => {
            ext.turn_start(host, &decode(payload)?);
            Ok(null())
        }
        "turn_end" => encode(&ext.turn_end(host, &decode(payload)?)),
        "agent_before_settle" => encode(&ext.agent_before_settle(host, &decode(payload)?)),
        "agent_settled" => {
            ext.agent_settled(host, &decode(payload)?);
            Ok(null())
        }
        "context" => {
            let payload: MessagesPayload = decode(payload)?;
            messages_result(ext.context(host, &payload.messages))
        }
        "context_with_system" => {
            let payload: MessagesPayload = decode(payload)?;
            messages_result(ext.context_with_system(host, &payload.messages))
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
        other => Err(format!("no handler for {other}")),
    }
}
