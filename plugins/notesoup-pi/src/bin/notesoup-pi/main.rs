//! `notesoup-pi`: notesoup for Pi. The command is [`notesoup_pi::cli`], a
//! library function, so that the reference host's real-Pi test can build
//! the very same command in its own crate.

fn main() -> std::process::ExitCode {
    notesoup_pi::cli::main()
}
