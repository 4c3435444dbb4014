//! Integration tests: tools.
