//! Where the shared commands write: results on stdout, notices and refusals
//! on stderr, one line at a time.
//!
//! A reader that went away (`| head -1`) is not an error: the rest of the
//! output is dropped quietly and the command runs to its end (a dream is
//! never cut short by it) with its own exit status. Any other failure to
//! write stdout is said once on stderr at the end and fails the command.

use std::io::{self, Write};

use notesoup_core::dream::{OutputLine, Stream};

/// The command's output.
#[derive(Debug, Default)]
pub struct Out {
    /// stdout's reader went away: nothing more is written there.
    stdout_closed: bool,
    /// The first failure to write stdout other than a closed reader.
    stdout_failed: Option<io::Error>,
}

impl Out {
    /// A fresh output.
    pub fn new() -> Self {
        Self::default()
    }

    /// `text` (its trailing line ends trimmed) and one newline on stdout.
    pub fn print(&mut self, text: &str) {
        if self.stdout_closed || self.stdout_failed.is_some() {
            return;
        }
        let mut stdout = io::stdout().lock();
        let written = writeln!(stdout, "{}", text.trim_end_matches(['\n', '\r']))
            .and_then(|()| stdout.flush());
        match written {
            Ok(()) => {}
            Err(error) if error.kind() == io::ErrorKind::BrokenPipe => self.stdout_closed = true,
            Err(error) => self.stdout_failed = Some(error),
        }
    }

    /// `text` (its trailing line ends trimmed) and one newline on stderr. A
    /// closed stderr leaves nowhere to say anything.
    pub fn warn(&mut self, text: &str) {
        let mut stderr = io::stderr().lock();
        let _ = writeln!(stderr, "{}", text.trim_end_matches(['\n', '\r']));
    }

    /// `text` on stderr with no line end, for a question answered on the
    /// same line.
    pub fn prompt(&mut self, text: &str) {
        let mut stderr = io::stderr().lock();
        let _ = write!(stderr, "{text}");
        let _ = stderr.flush();
    }

    /// One of core's output lines, to its stream.
    pub fn line(&mut self, line: &OutputLine) {
        match line.stream {
            Stream::Stdout => self.print(&line.text),
            Stream::Stderr => self.warn(&line.text),
        }
    }

    /// The exit code `code` becomes once the output is done: a failure to
    /// write stdout (not a closed reader) is said on stderr and fails it.
    pub fn finish(self, bin: &str, code: u8) -> u8 {
        match self.stdout_failed {
            Some(error) => {
                let _ = writeln!(io::stderr(), "{bin}: cannot write to stdout: {error}");
                1
            }
            None => code,
        }
    }
}
