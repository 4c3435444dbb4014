//! Integration tests: settings.
