//! Integration tests: tools — bounded outcomes, read windows, parameter
//! schemas, and the notes tools over a real store in a temp directory.

// Tests may unwrap: a panic is a failed test.
#![allow(clippy::unwrap_used)]

mod no_session;
