//! Integration tests: dream.

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
