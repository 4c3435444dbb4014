//! The harness the tests of every notesoup binary share, written once.
//!
//! The same test runs against each host's binary: the caller passes its own
//! binary (its `env!("CARGO_BIN_EXE_…")` path, inside a `Command` it built
//! with its own environment), its own flags and its own host words, and this
//! crate holds what is the same: a child over real pipes with a bound on
//! every wait, a server killed when the test ends, the adversarial corpora,
//! the capped-input attack bodies, files that are not files, a folder's files and their bytes,
//! stand-ins for the dreamer, the shared commands' checks, fake model APIs on 127.0.0.1, and a local npm registry
//! with a fresh machine to install the dist's packages on.
//!
//! A failed check panics: this is test code, and a panic is a failed test.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

pub mod adversarial;
pub mod child;
pub mod dreamer;
pub mod fake_anthropic;
pub mod fake_deepseek;
pub mod fake_model;
pub mod files;
pub mod modules;
pub mod not_a_file;
pub mod npm_registry;
pub mod pi_session;
pub mod planted;
pub mod shared_a;
pub mod shared_commands;
pub mod tool_names;
