//! The `notesoup` binary.

fn main() {}
