//! The reference host beside real Pi 1.6.0: the same script on both writes
//! the same session. Feature `real-pi`; `cargo xtask ci` installs Pi first.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

use std::path::PathBuf;

mod same_file;
/// The Pi adapter's real-Pi harness, shared rather than copied; this crate
/// uses part of it.
#[allow(dead_code)]
#[path = "../../../notesoup-pi/tests/real_pi/support.rs"]
mod support;

/// The `notesoup-pi` command of this checkout: this crate's
/// `notesoup-pi-under-test` binary, which runs the adapter's
/// `notesoup_pi::cli::main` exactly as the adapter's `notesoup-pi` binary
/// does (Cargo hands a test only its own crate's binaries, and a nested
/// `cargo build` of the adapter would compile it a second time).
fn sidecar() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_notesoup-pi-under-test"))
}
