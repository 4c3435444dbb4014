//! The notes area's own tests: addresses and globs, the frontmatter codec,
//! the credential guard and the path hygiene, and the store's operations,
//! listings and searches on real temp directories, over internals no other
//! crate sees.

#![allow(clippy::unwrap_used)]
// The shared fixture's items are named by every test module.
#![allow(unreachable_pub)]

mod address;
mod concurrency;
mod escape;
mod format;
mod hygiene;
mod kept_heads;
mod listing;
mod props;
mod secrets;
mod store;
mod support;
#[cfg(target_os = "linux")]
mod swap;
