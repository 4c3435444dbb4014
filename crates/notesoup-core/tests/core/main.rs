//! Integration tests of notesoup-core on real temp directories: one binary,
//! one module per area.

mod modules;
mod notes;
mod plumbing;
mod sync;
