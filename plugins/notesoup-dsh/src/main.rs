//! The `notesoup-dsh` binary: the command is the library's
//! [`notesoup_dsh::cli::main`].

fn main() -> std::process::ExitCode {
    notesoup_dsh::cli::main()
}
