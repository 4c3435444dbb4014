//! The one integration-test binary of notesoup-pi-testkit: notesoup on the
//! reference Pi host (scripted loops, conformance with real Pi's goldens,
//! the dreamer's session) and the `notesoup-pi-reference` binary.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

mod adversarial;
mod conformance;
mod demo;
mod dream;
mod extension;
mod reset_loop;
mod snapshots;
mod support;
