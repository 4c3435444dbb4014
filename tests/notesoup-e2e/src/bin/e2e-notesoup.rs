//! The `notesoup` command itself (`notesoup_claude::cli::main`), built in this crate so
//! the tests that run every binary alike (`tests/e2e/cli/`) reach all three:
//! Cargo hands a test only its own crate's binaries, and this one links the
//! adapter library the test build has already compiled.

fn main() -> std::process::ExitCode {
    notesoup_claude::cli::main()
}
