//! Integration tests: dream.

mod assets;
mod audit;
mod doctor;
mod gates;
mod jail;
mod lock;
mod run;
mod support;
