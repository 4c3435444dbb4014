//! Shared helpers: fixture paths.

use std::path::PathBuf;

/// A file under `tests/claude/fixtures/`.
pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/claude/fixtures")
        .join(name)
}
