//! The one integration-test binary of notesoup-pi.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

#[cfg(feature = "testkit")]
mod adversarial;
mod bad_input;
mod bridge;
#[cfg(feature = "testkit")]
mod conformance;
#[cfg(feature = "testkit")]
mod demo;
#[cfg(feature = "testkit")]
mod dream;
mod dreamer;
#[cfg(feature = "testkit")]
mod extension;
mod golden;
mod history;
mod host;
mod lazy;
mod projection;
mod reducer;
#[cfg(feature = "testkit")]
mod reset_loop;
#[cfg(feature = "testkit")]
mod snapshots;
#[cfg(feature = "testkit")]
mod support;
