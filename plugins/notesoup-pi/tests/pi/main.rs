//! The one integration-test binary of notesoup-pi.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

mod bad_input;
mod golden;
mod host;
mod projection;
