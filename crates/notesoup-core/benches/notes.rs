//! Benchmarks of the notes store (filled in below).
fn main() {}
