//! Cross-crate end-to-end tests of notesoup (see `tests/`).
//!
//! This is the only crate allowed to depend on several plugins, and nothing
//! may depend on it. `cargo xtask check-deps` and `deny.toml` enforce this.
