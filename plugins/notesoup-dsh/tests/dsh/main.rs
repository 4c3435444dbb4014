//! Integration tests of notesoup-dsh: decisions on recorded dsh session logs,
//! the sidecar over its protocol, and (opt-in) real dsh end to end.

mod e2e;
mod recorded;
mod sidecar;

use std::path::{Path, PathBuf};

use notesoup_dsh::decode::{SessionLog, read_session_jsonl};

/// A recorded session log from `fixtures/`.
pub fn fixture_log(name: &str) -> SessionLog {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/dsh/fixtures")
        .join(name);
    let file = std::fs::File::open(&path).expect("fixture exists");
    read_session_jsonl(std::io::BufReader::new(file)).expect("fixture decodes")
}

/// The fixtures folder.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/dsh/fixtures")
}
