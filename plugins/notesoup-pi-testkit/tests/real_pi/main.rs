//! The reference host beside real Pi 1.6.0: the same script on both writes
//! the same session. Feature `real-pi`; `cargo xtask ci` installs Pi first.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

mod same_file;
/// The Pi adapter's real-Pi harness, shared rather than copied; this crate
/// uses part of it.
#[allow(dead_code)]
#[path = "../../../notesoup-pi/tests/real_pi/support.rs"]
mod support;

/// The `notesoup-pi` binary of this checkout, built by cargo (nothing to do
/// when it is fresh) into the target directory these tests run from: Cargo
/// hands a test only its own crate's binaries.
fn sidecar() -> PathBuf {
    static SIDECAR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    SIDECAR
        .get_or_init(|| {
            let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
            let output = Command::new(cargo)
                .args(["build", "--bin", "notesoup-pi", "--message-format=json"])
                .arg("--manifest-path")
                .arg(support::adapter_dir().join("Cargo.toml"))
                .output()
                .expect("cargo runs");
            assert!(
                output.status.success(),
                "building notesoup-pi failed:\n{}",
                String::from_utf8_lossy(&output.stderr)
            );
            String::from_utf8_lossy(&output.stdout)
                .lines()
                .filter_map(|line| serde_json::from_str::<Value>(line).ok())
                .filter(|message| message["target"]["name"] == "notesoup-pi")
                .find_map(|message| message["executable"].as_str().map(PathBuf::from))
                .expect("cargo names the notesoup-pi executable")
        })
        .clone()
}
