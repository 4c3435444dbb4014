//! Integration tests: budget.
