//! `notesoup-pi serve`: the sidecar the Pi package starts at `session_start`.
//!
//! It loads nothing before the handshake (the session arrives with the first
//! event), so Pi waits only for process start. stdout carries only protocol
//! lines; diagnostics go to stderr, which the shim shows when it gives up.
//!
//! `NOTESOUP_PI_WINDOW_IDS=sequential` mints window ids `00000001`, … instead
//! of random ones, so that the Pi goldens (`cargo xtask golden-pi`) come out
//! byte-identical on every regeneration.

use std::process::ExitCode;

use crate::bridge::{BridgeError, serve};
use crate::extension::{Notesoup, NotesoupConfig};
use crate::host::PiExtension;

pub fn main(args: &[String]) -> ExitCode {
    if !args.is_empty() {
        eprintln!("notesoup-pi serve takes no arguments (it speaks JSON lines on stdio)");
        return ExitCode::from(2);
    }
    let mut stdin = std::io::stdin().lock();
    let mut stdout = std::io::stdout().lock();
    let outcome = serve(
        &mut stdin,
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
                .map_err(|error| (error.code().to_owned(), error.to_string()))?;
            if std::env::var("NOTESOUP_PI_WINDOW_IDS").as_deref() == Ok("sequential") {
                let mut counter = 0u32;
                extension = extension.with_window_ids(move || {
                    counter += 1;
                    format!("{counter:08x}")
                });
            }
            Ok(Box::new(extension) as Box<dyn PiExtension>)
        }),
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
