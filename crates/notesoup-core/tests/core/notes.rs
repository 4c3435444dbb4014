//! Integration tests: notes.

mod escape;
mod identity;
mod kept_heads;
mod listing;
mod store;
mod support;
