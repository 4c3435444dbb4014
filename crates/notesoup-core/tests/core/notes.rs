//! Integration tests: notes.

mod address;
mod concurrency;
mod escape;
mod format;
mod hygiene;
mod identity;
mod kept_heads;
mod listing;
mod props;
mod secrets;
mod store;
mod support;
#[cfg(target_os = "linux")]
mod swap;
