//! Shared test set-ups of the core, cli and Pi crates.

use std::process::Command;

use crate::shared_commands::Binary;

/// The binary called `name` at `path`, run as it is: no environment or
/// sandbox of the caller's (for `--help`, `--version` and refusals).
pub fn plain_binary(name: &'static str, path: &'static str) -> Binary<'static> {
    Binary::new(name, move |args| {
        Command::new(path).args(args).output().unwrap()
    })
}
