//! History: the host-neutral decoded event model, windows, paging, search and read.
//!
//! A host decodes its own transcript into a [`Transcript`] (seqs allocated over
//! every entry in append order, off-branch spans, the active branch's windows
//! and items) and builds a [`History`] from it; the history tools in
//! `tools::history` read only that. Building pairs each tool call with
//! its result into one tool event at the call's seq and computes each event's
//! document once.

mod document;
mod event;
mod extend;
mod folded;
mod ledger;
mod model;
mod signals;
#[cfg(test)]
pub(crate) mod tests;
mod transcript;

pub(crate) use event::NestedCallSummary;
pub use event::{HistoryEvent, Role};

pub use ledger::{
    LedgerEdit, LedgerNote, LedgerNotice, Reorientation, SessionLedger, WindowLedger,
    session_ledger,
};
pub use model::{History, TranscriptError, Window};
pub use signals::{EndReason, NoticeKind, WindowSignals};
pub use transcript::{
    ItemKind, MessageRole, NestedArguments, NestedCall, NestedCalls, SeqSpan, ToolStatus,
    Transcript, TranscriptItem, TranscriptToolCall, TranscriptToolResult, TranscriptWindow,
};
