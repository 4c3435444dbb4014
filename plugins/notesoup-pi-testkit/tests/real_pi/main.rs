//! The reference host beside real Pi 1.6.0: the same script on both writes
//! the same session. Feature `real-pi`; `cargo xtask ci` installs Pi first.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

mod same_file;
mod support;
