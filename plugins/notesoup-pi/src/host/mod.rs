//! The host boundary: `PiExtension` (what a Rust Pi host calls) and `PiHost`
//! (what the extension may call), with Pi's event and boundary types.

mod api_level;
mod boundary;
mod context_edit;
mod events;
mod extension;
mod pi_host;

pub use api_level::PiApiLevel;
pub use boundary::{
    BoundaryContextPreview, BoundaryOutcome, BoundaryResult, BoundaryState, ProjectedSessionEntry,
    SessionBoundaryDraft,
};
pub use context_edit::{MessageSummary, PLAIN_ROLES, SUMMARY_FIELDS, WHOLE_ROLES, WindowEdit};
pub use events::{
    AgentSettledEvent, AgentStartInput, BeforeAgentStartEvent, BeforeAgentStartResult,
    CompactionReason, CompactionSupplied, CustomMessageDraft, DeliverAs, InputEvent, InputResult,
    InputSource, ModelInfo, ModelSelectEvent, SessionBeforeCompactEvent,
    SessionBeforeCompactResult, SessionBeforeTreeEvent, SessionBeforeTreeResult,
    SessionCompactEvent, SessionShutdownEvent, SessionShutdownReason, SessionStartEvent,
    SessionStartReason, SessionTreeEvent, ToolResultEvent, ToolResultPatch, TreePreparation,
    TreeSummary, TurnEndEvent, TurnStartEvent,
};
pub use extension::{
    AgentToolResult, CommandDescriptor, ExecutionMode, PiExtension, ToolDescriptor, ToolInvocation,
};
pub use pi_host::{
    CompactionSettings, ContextUsage, HeldEntries, HostError, HostSettings, NotifyLevel, PiHost,
    SendOptions,
};
