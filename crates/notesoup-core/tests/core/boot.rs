//! Integration tests: boot.
