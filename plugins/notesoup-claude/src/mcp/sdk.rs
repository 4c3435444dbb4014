//! The MCP server proper, on the official Rust SDK (`rmcp`): its service
//! loop, lifecycles (the stateless 2026-07-28 revision with
//! `server/discover` and per-request `_meta`, and the `initialize`
//! handshake) and result types, over a [`ToolHost`]. Requests reach it
//! through the line gate in [`super::protocol`], which answers malformed
//! input itself and gives the SDK only well-formed requests with ids of its
//! own.

use std::borrow::Cow;
use std::future::Future;
use std::io;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientJsonRpcMessage, ContentBlock,
    CustomRequest, CustomResult, ErrorCode, Implementation, InitializeResult, JsonObject,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig,
    ServerJsonRpcMessage, Tool, ToolAnnotations,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::Transport;
use rmcp::{ErrorData, ServerHandler};
use serde_json::Value;

use super::protocol::{CallMeta, ServerInfo, ToolHost, shown};

/// Every revision served, newest first: the stateless one, then those with
/// an `initialize` handshake.
pub const SUPPORTED_VERSIONS: [ProtocolVersion; 5] = [
    ProtocolVersion::V_2026_07_28,
    ProtocolVersion::V_2025_11_25,
    ProtocolVersion::V_2025_06_18,
    ProtocolVersion::V_2025_03_26,
    ProtocolVersion::V_2024_11_05,
];

/// The client methods of MCP: one of these that reaches
/// [`ServerHandler::on_custom_request`] had parameters the SDK could not
/// read.
const KNOWN_METHODS: [&str; 14] = [
    "initialize",
    "ping",
    "server/discover",
    "tools/list",
    "tools/call",
    "completion/complete",
    "logging/setLevel",
    "prompts/get",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
];

/// A [`ToolHost`] as an SDK server handler. The host is synchronous; the
/// runtime is single-threaded, so the lock is never contended.
#[derive(Debug)]
pub struct Handler<H> {
    host: Mutex<H>,
    info: ServerInfo,
}

impl<H> Handler<H> {
    /// A handler serving `host` as `info`.
    pub fn new(host: H, info: ServerInfo) -> Self {
        Self {
            host: Mutex::new(host),
            info,
        }
    }
}

impl<H: ToolHost + Send + 'static> ServerHandler for Handler<H> {
    fn get_info(&self) -> ServerConfig {
        let mut info = InitializeResult::new(ServerCapabilities::builder().enable_tools().build());
        info.protocol_version = ProtocolVersion::V_2025_11_25;
        info.server_info = Implementation::new(self.info.name, self.info.version);
        info
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(&SUPPORTED_VERSIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let host = self.host.lock().map_err(poisoned)?;
        let tools = host
            .tools()
            .into_iter()
            .map(|tool| {
                let schema: JsonObject = match tool.input_schema {
                    Value::Object(schema) => schema,
                    _ => JsonObject::new(),
                };
                let mut listed = Tool::new(tool.name, tool.description, schema);
                if let Some(read_only) = tool.read_only {
                    listed.annotations = Some(ToolAnnotations::new().read_only(read_only));
                }
                if let Some(Value::Object(output)) = tool.output_schema {
                    listed.output_schema = Some(Arc::new(output));
                }
                listed
            })
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    /// A request the SDK could not read as any it knows: a known method
    /// with parameters of the wrong shape, or an unknown method (its name
    /// repeated at most in part).
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        Err(if KNOWN_METHODS.contains(&request.method.as_str()) {
            ErrorData::new(
                ErrorCode::INVALID_PARAMS,
                format!("invalid params for {}", request.method),
                None,
            )
        } else {
            ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                method_not_found(&request.method),
                None,
            )
        })
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let meta = CallMeta {
            tool_use_id: context
                .meta
                .get("claudecode/toolUseId")
                .and_then(Value::as_str)
                .map(str::to_owned),
        };
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let mut host = self.host.lock().map_err(poisoned)?;
        let answer = host
            .call(&request.name, arguments, &meta)
            .map_err(|error| ErrorData::new(ErrorCode(error.code), error.message, error.data))?;
        let content = vec![ContentBlock::text(answer.text)];
        let mut result = if answer.is_error {
            CallToolResult::error(content)
        } else {
            CallToolResult::success(content)
        };
        if let Some(structured) = answer.structured {
            // The text stays in `content` next to it, as MCP asks for
            // clients that read only the text.
            result.structured_content =
                Some(serde_json::from_str(&structured).map_err(|error| {
                    ErrorData::internal_error(format!("the tool's JSON is not JSON: {error}"), None)
                })?);
        }
        Ok(result.into())
    }
}

fn poisoned<T>(_: T) -> ErrorData {
    ErrorData::internal_error("the tool host failed on an earlier call", None)
}

/// The SDK's transport: requests come from the line gate over a channel,
/// replies go to `write` (the gate restores their ids).
pub struct GateTransport<W> {
    /// Requests from the gate.
    pub incoming: tokio::sync::mpsc::UnboundedReceiver<ClientJsonRpcMessage>,
    /// Where replies go.
    pub write: W,
}

impl<W> std::fmt::Debug for GateTransport<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("GateTransport")
    }
}

impl<W> Transport<RoleServer> for GateTransport<W>
where
    W: FnMut(ServerJsonRpcMessage) -> io::Result<()> + Send + 'static,
{
    type Error = io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        std::future::ready((self.write)(item))
    }

    fn receive(&mut self) -> impl Future<Output = Option<ClientJsonRpcMessage>> + Send {
        self.incoming.recv()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.incoming.close();
        std::future::ready(Ok(()))
    }
}

/// The message of an error naming `method`, shortened.
pub fn method_not_found(method: &str) -> String {
    format!("method not found: {}", shown(method))
}
