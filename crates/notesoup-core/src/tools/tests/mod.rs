//! The tools' shared bounding pieces, tested over internals no other crate
//! sees: read windows, filling while a result fits, the longest fitting
//! prefix; and the notes tools over a real store.

#![allow(clippy::unwrap_used)]
// The support files are shared with the integration tests, where they are
// public.
#![allow(unreachable_pub)]

use crate::history::tests::fixture;
mod infra;
mod no_session;
mod notes;
mod schemas;
mod surface;
