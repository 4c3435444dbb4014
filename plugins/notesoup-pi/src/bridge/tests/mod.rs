//! Unit tests of the bridge that reach its internals.

mod mirror;
mod summaries;
