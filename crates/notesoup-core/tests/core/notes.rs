//! Integration tests: notes.

mod listing;
mod store;
mod support;
