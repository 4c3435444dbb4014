//! The one integration-test binary of notesoup-claude.

#![allow(clippy::unwrap_used)]

mod decode;
mod hooks;
mod mcp;
mod plugin_files;
mod support;
