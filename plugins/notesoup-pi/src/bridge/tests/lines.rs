//! The reader thread's hand-over of the shim's lines.

use std::sync::mpsc::sync_channel;

use crate::bridge::host::{Incoming, SHOWN_CHARS, read_lines, shown};

/// Blank lines are passed over; the end of the pipe is handed over once,
/// last, and the reader returns (it never waits to send another).
#[test]
fn lines_are_handed_over_blank_ones_passed_over_and_the_end_once() {
    let (to, from) = sync_channel(8);
    read_lines(&b"one\n\n  \ntwo\n"[..], &to);
    drop(to);
    let got: Vec<String> = from
        .iter()
        .map(|incoming| match incoming {
            Incoming::Line(line) => String::from_utf8(line).expect("utf-8"),
            Incoming::Closed => "closed".to_owned(),
            Incoming::TooLong { .. } => "too long".to_owned(),
            Incoming::Failed(error) => format!("failed: {error}"),
        })
        .collect();
    assert_eq!(got, ["one", "two", "closed"]);
}

/// A refusal repeats at most [`SHOWN_CHARS`] characters of what was sent,
/// and says how long the whole was.
#[test]
fn shown_text_is_cut_to_its_limit_and_marked() {
    let short = "é".repeat(SHOWN_CHARS);
    assert_eq!(shown(&short), short);
    let long = "é".repeat(SHOWN_CHARS + 1);
    assert_eq!(shown(&long), format!("{short}… ({} bytes)", long.len()));
}
