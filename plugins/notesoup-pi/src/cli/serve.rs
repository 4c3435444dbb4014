//! `notesoup-pi serve`: the sidecar the Pi package starts at `session_start`.
//!
//! It loads nothing before the handshake (the session arrives with the first
//! event), so Pi waits only for process start. Boots keep their caches in
//! core's `BootCaches::dir` (`$XDG_CACHE_HOME/notesoup`, else
//! `~/.cache/notesoup`), so the first boot of a start reads what the last
//! start saved instead of listing every note. stdout carries only protocol
//! lines; diagnostics go to stderr, which the shim shows when it gives up.
//!
//! `NOTESOUP_PI_WINDOW_IDS=sequential` mints window ids `00000001`, … instead
//! of random ones, so that the Pi goldens (`cargo xtask golden-pi`) come out
//! byte-identical on every regeneration. `NOTESOUP_PI_ACTION_TIMEOUT_MS`
//! shortens the wait for a nested action's answer (default
//! [`ACTION_REPLY_TIMEOUT`]), so a test of a shim that never answers ends
//! quickly.

use std::process::ExitCode;
use std::time::Duration;

use crate::bridge::{ACTION_REPLY_TIMEOUT, BridgeError, serve};
use crate::extension::{Notesoup, NotesoupConfig};
use crate::host::PiExtension;
use notesoup_core::plumbing::BootCaches;

pub fn main(args: &[String]) -> ExitCode {
    if !args.is_empty() {
        eprintln!("notesoup-pi serve takes no arguments (it speaks JSON lines on stdio)");
        return ExitCode::from(2);
    }
    let action_timeout = std::env::var("NOTESOUP_PI_ACTION_TIMEOUT_MS")
        .ok()
        .and_then(|ms| ms.parse().ok())
        .map_or(ACTION_REPLY_TIMEOUT, Duration::from_millis);
    let cache_dir = BootCaches::dir(|name| std::env::var(name).ok());
    let stdin = std::io::BufReader::new(std::io::stdin());
    let mut stdout = std::io::stdout().lock();
    let outcome = serve(
        stdin,
        &mut stdout,
        Box::new(|level| {
            let config =
                NotesoupConfig::from_env(|name| std::env::var(name).ok()).ok_or_else(|| {
                    (
                        "no_notes_home".to_owned(),
                        "no notes root: set PI_NOTES_HOME or HOME".to_owned(),
                    )
                })?;
            let mut extension = Notesoup::new(config, level)
                .map_err(|error| (error.code().to_owned(), error.to_string()))?
                .with_boot_caches(cache_dir.clone());
            if std::env::var("NOTESOUP_PI_WINDOW_IDS").as_deref() == Ok("sequential") {
                let mut counter = 0u32;
                extension = extension.with_window_ids(move || {
                    counter += 1;
                    format!("{counter:08x}")
                });
            }
            Ok(Box::new(extension) as Box<dyn PiExtension>)
        }),
        action_timeout,
        cache_dir.as_deref(),
    );
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(BridgeError::Refused { code, message }) => {
            eprintln!("notesoup-pi serve: refused ({code}): {message}");
            ExitCode::from(3)
        }
        Err(error) => {
            eprintln!("notesoup-pi serve: {error}");
            ExitCode::FAILURE
        }
    }
}
