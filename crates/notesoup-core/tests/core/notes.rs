//! Integration tests: notes.
