//! Unit tests: history — the decoded model, pairing, documents and the
//! four history tools.

// Tests may unwrap: a panic is a failed test.
#![allow(clippy::unwrap_used)]

mod extend;
pub(crate) mod fixture;
mod ledger;
mod list;
mod model;
pub(crate) mod properties;
mod read;
mod search;
