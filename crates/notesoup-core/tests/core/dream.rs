//! Integration tests: dream.
