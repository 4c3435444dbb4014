//! The dream area's own tests: the packaged assets, the gates, the lock, the
//! jail, the audit, the deadline, doctor and the run, over internals no other
//! crate sees.

#![allow(clippy::unwrap_used)]
// The support files are shared with the integration tests, where they are
// public.
#![allow(unreachable_pub)]

mod assets;
mod audit;
#[cfg(target_os = "linux")]
mod deadline;
#[cfg(unix)]
mod doctor;
mod gates;
#[cfg(unix)]
mod jail;
mod lock;
mod run;
#[cfg(unix)]
mod secrets;
mod support;
