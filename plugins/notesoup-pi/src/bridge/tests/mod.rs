//! Unit tests of the bridge that reach its internals.

mod entries;
mod mirror;
mod summaries;
