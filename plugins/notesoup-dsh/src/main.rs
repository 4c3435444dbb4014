//! The `notesoup-dsh` binary.

fn main() {}
