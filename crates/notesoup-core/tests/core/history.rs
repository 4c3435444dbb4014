//! Integration tests: history.
