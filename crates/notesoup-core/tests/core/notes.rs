//! Integration tests: notes — the identity a host builds from its
//! environment.

mod identity;
