//! The `notesoup-pi` command, built in this crate for the real-Pi test
//! (`tests/real_pi/`, feature `real-pi`): the same function the adapter's
//! `notesoup-pi` binary runs, so real Pi talks to exactly that command.

fn main() -> std::process::ExitCode {
    notesoup_pi::cli::main()
}
