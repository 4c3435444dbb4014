//! The one integration-test binary of notesoup-pi. The scripted-loop tests
//! on the reference Pi host are `notesoup-pi-testkit`'s.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

mod bad_input;
mod bounded;
mod bridge;
mod cli;
mod dreamer;
mod golden;
mod history;
mod host;
mod lazy;
mod ledger;
mod projection;
mod reducer;
mod shared;
