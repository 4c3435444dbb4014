//! The one integration-test binary of notesoup-claude.

#![allow(clippy::unwrap_used)]

mod adversarial;
mod bounded;
mod cli;
mod decode;
mod dream;
mod history_cache;
mod hooks;
mod incremental;
mod kept_scan;
mod layers;
mod ledger;
mod mcp;
mod mcp_wire;
mod plugin_files;
mod reset;
mod shared;
mod support;
