//! The notes area's own tests: addresses and globs, the frontmatter codec,
//! the credential guard and the path hygiene, over internals no other crate
//! sees.

#![allow(clippy::unwrap_used)]
// The support files are shared with the integration tests, where they are
// public.
#![allow(unreachable_pub)]

mod address;
mod concurrency;
mod format;
mod hygiene;
mod props;
mod secrets;
#[path = "../../../tests/core/notes/support.rs"]
mod support;
#[cfg(target_os = "linux")]
mod swap;
