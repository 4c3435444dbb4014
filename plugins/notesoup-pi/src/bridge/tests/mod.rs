//! Unit tests of the bridge that reach its internals.

mod entries;
mod lines;
mod mirror;
mod summaries;
