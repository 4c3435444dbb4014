//! The capped line reader: JSON lines from a pipe, with a bound on each
//! line's length.
//!
//! A server must outlive any one bad line: a line that is not UTF-8, not
//! JSON or far too long is answered and skipped, never the end of the serve
//! loop, and never a reason to hold more than [`LineRead::MAX_BYTES`]. Lines are
//! read with `fill_buf`/`consume`, so an over-long line is discarded as it
//! streams past instead of being buffered whole; only its first
//! [`KEPT_PREFIX_BYTES`] are kept, so the answer can name the request's id.

use std::borrow::Cow;
use std::io::{self, BufRead, Read};

use serde::Deserialize;
use serde_json::value::RawValue;

/// How much of an over-long line is kept, to recover its id.
pub(crate) const KEPT_PREFIX_BYTES: usize = 256;

/// The id answered when a line's own id cannot be read. Senders number their
/// requests from 1 and drop answers no request waits for, so such an answer
/// never settles the wrong request.
pub(crate) const UNKNOWN_ID: u64 = 0;

/// A line buffer grown by one large line is shrunk back to this afterwards,
/// so a long-lived server does not hold the peak forever.
const RETAINED_CAPACITY: usize = 1024 * 1024;

/// What one read brought.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineRead<'a> {
    /// A whole line (the last one may lack its newline), without its `\n`
    /// or `\r\n`.
    Line(&'a [u8]),
    /// The line was longer than the cap; it was consumed up to and including
    /// its newline, and only its first `KEPT_PREFIX_BYTES` were kept.
    TooLong {
        /// The line's first bytes.
        prefix: &'a [u8],
        /// The line's length, newline excluded.
        bytes: u64,
    },
    /// The input ended.
    Eof,
}

/// Lines of `input`, each at most `cap` bytes kept (see the module docs).
#[derive(Debug)]
pub struct CappedLines<R> {
    input: R,
    line: Vec<u8>,
    cap: usize,
}

impl<R: BufRead> CappedLines<R> {
    /// Lines of `input` capped at [`LineRead::MAX_BYTES`].
    pub fn new(input: R) -> Self {
        Self::with_cap(input, LineRead::MAX_BYTES)
    }

    /// Lines of `input` capped at `cap` bytes, so tests need not send 16 MiB.
    pub fn with_cap(input: R, cap: usize) -> Self {
        Self {
            input,
            line: Vec::new(),
            cap,
        }
    }

    /// Reads the next line.
    ///
    /// # Errors
    /// Only when reading the input fails (an interrupted read is retried).
    pub fn next_line(&mut self) -> io::Result<LineRead<'_>> {
        if self.line.capacity() > RETAINED_CAPACITY {
            self.line = Vec::new();
        }
        self.line.clear();
        let mut total: u64 = 0;
        let mut too_long = false;
        let mut seen_any = false;
        loop {
            let available = match self.input.fill_buf() {
                Ok(available) => available,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(error) => return Err(error),
            };
            if available.is_empty() {
                if !seen_any {
                    return Ok(LineRead::Eof);
                }
                break;
            }
            seen_any = true;
            let newline = memchr::memchr(b'\n', available);
            let chunk = &available[..newline.unwrap_or(available.len())];
            total = total.saturating_add(chunk.len() as u64);
            if !too_long {
                let room = self.cap.saturating_sub(self.line.len());
                if chunk.len() > room {
                    // The kept start is the line's first bytes up to the
                    // cap, and never more than KEPT_PREFIX_BYTES.
                    let keep = KEPT_PREFIX_BYTES.saturating_sub(self.line.len()).min(room);
                    self.line.truncate(KEPT_PREFIX_BYTES);
                    self.line.extend_from_slice(&chunk[..keep]);
                    too_long = true;
                } else {
                    grow_within(&mut self.line, chunk.len(), self.cap);
                    self.line.extend_from_slice(chunk);
                }
            }
            let used = newline.map_or(available.len(), |at| at + 1);
            self.input.consume(used);
            if newline.is_some() {
                break;
            }
        }
        if too_long {
            return Ok(LineRead::TooLong {
                prefix: &self.line,
                bytes: total,
            });
        }
        if self.line.last() == Some(&b'\r') {
            self.line.pop();
        }
        Ok(LineRead::Line(&self.line))
    }
}

/// All of `input` (a hook's one JSON object, a note's content on stdin) if
/// it is at most `cap` bytes; `None` past that, with no more than `cap + 1`
/// bytes ever read or held (the rest is left unread).
///
/// # Errors
/// When reading fails (an interrupted read is retried).
pub fn read_capped(input: impl io::Read, cap: usize) -> io::Result<Option<Vec<u8>>> {
    let mut bytes = Vec::new();
    io::Read::take(input, cap as u64 + 1).read_to_end(&mut bytes)?;
    Ok((bytes.len() <= cap).then_some(bytes))
}

/// Makes room for `more` bytes in `line` without reserving past `cap`: the
/// usual doubling could otherwise take nearly twice the cap for one line.
fn grow_within(line: &mut Vec<u8>, more: usize, cap: usize) {
    let needed = line.len() + more;
    if needed <= line.capacity() {
        return;
    }
    let target = needed.max(line.capacity().saturating_mul(2)).min(cap);
    line.reserve_exact(target.max(needed) - line.len());
}

fn skip_space(bytes: &[u8]) -> &[u8] {
    let start = bytes
        .iter()
        .position(|byte| !matches!(byte, b' ' | b'\t' | b'\r' | b'\n'))
        .unwrap_or(bytes.len());
    &bytes[start..]
}

impl LineRead<'_> {
    /// A line with nothing but JSON whitespace is not a request and gets no
    /// answer.
    pub fn is_blank(line: &[u8]) -> bool {
        line.iter()
            .all(|byte| matches!(byte, b' ' | b'\t' | b'\r' | b'\n'))
    }

    /// Whether `line` holds more than `max` commas, colons and opening brackets
    /// outside strings: a bound on the values it parses into, counted in one
    /// pass without parsing.
    pub fn too_many_tokens(line: &[u8], max: usize) -> bool {
        let mut count = 0usize;
        let mut in_string = false;
        let mut escaped = false;
        for byte in line {
            if in_string {
                match (escaped, byte) {
                    (true, _) => escaped = false,
                    (false, b'\\') => escaped = true,
                    (false, b'"') => in_string = false,
                    _ => {}
                }
            } else {
                match byte {
                    b'"' => in_string = true,
                    b',' | b':' | b'[' | b'{' => {
                        count += 1;
                        if count > max {
                            return true;
                        }
                    }
                    _ => {}
                }
            }
        }
        false
    }

    /// `{"id": N` at the start of `line`, N an unsigned 64-bit integer followed
    /// by `,` or `}` (whitespace allowed where JSON allows it).
    pub fn leading_id(line: &[u8]) -> Option<u64> {
        let rest = skip_space(line).strip_prefix(b"{")?;
        let rest = skip_space(rest).strip_prefix(b"\"id\"")?;
        let rest = skip_space(rest).strip_prefix(b":")?;
        let rest = skip_space(rest);
        let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        let (number, after) = rest.split_at(digits);
        if number.is_empty() || (number.len() > 1 && number[0] == b'0') {
            return None;
        }
        if !matches!(skip_space(after).first(), Some(b',' | b'}')) {
            return None;
        }
        std::str::from_utf8(number).ok()?.parse().ok()
    }

    /// The id of a line that is not a valid request, so the waiting request is
    /// settled with the refusal: the line's `id` if it parses as JSON with an
    /// unsigned integer id, else an id written first in the line the way
    /// senders write it (`{"id":N,…`, which survives truncation, bad bytes and
    /// nesting past the parser's limit), else `UNKNOWN_ID`.
    pub fn recover_id(line: &[u8]) -> u64 {
        #[derive(Deserialize)]
        struct Probe {
            id: u64,
        }
        serde_json::from_slice::<Probe>(line)
            .map(|probe| probe.id)
            .ok()
            .or_else(|| LineRead::leading_id(line))
            .unwrap_or(UNKNOWN_ID)
    }

    /// The `{"id": N, "op": "...", "params": {...}}` envelope of a request
    /// line, no other key allowed, the params left unparsed: the caller
    /// parses them straight into the op's type (deserializing a tagged enum
    /// flattened into the request would buffer the whole line in an
    /// intermediate tree first, doubling the memory a large line costs).
    ///
    /// # Errors
    /// The parser's, when the line is no such envelope.
    pub fn envelope(line: &[u8]) -> serde_json::Result<(u64, Cow<'_, str>, &RawValue)> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Raw<'a> {
            id: u64,
            #[serde(borrow)]
            op: Cow<'a, str>,
            #[serde(borrow)]
            params: &'a RawValue,
        }
        let raw: Raw<'_> = serde_json::from_slice(line)?;
        Ok((raw.id, raw.op, raw.params))
    }

    /// The longest line any notesoup reader keeps, newline excluded: a request
    /// line of a sidecar or server, and a line of a transcript or session file
    /// that history decoding reads. Notes are capped at 1 MB and the hosts send
    /// each event or entry once, so a real request stays far below it; a
    /// transcript row this long is a Read of a large image or PDF, which history
    /// skips as a bad line.
    pub const MAX_BYTES: usize = 16 * 1024 * 1024;

    /// The most commas, colons and opening brackets (outside strings) one
    /// request line may hold. Parsed JSON can take many times its text: 16 MiB
    /// of `[0,0,…]` is 8 million values and most of a gigabyte. Real request
    /// lines have one such token per 25 bytes or so, about 700,000 in a full
    /// line.
    pub const MAX_TOKENS: usize = 1 << 21;
}

#[cfg(test)]
pub(crate) mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[derive(Debug, PartialEq, Eq)]
    enum Got {
        Line(Vec<u8>),
        TooLong(Vec<u8>, u64),
    }

    fn lines(input: &[u8], cap: usize) -> Vec<Got> {
        // A tiny buffer makes every line cross several fill_buf calls.
        let mut lines = CappedLines::with_cap(io::BufReader::with_capacity(3, input), cap);
        let mut out = Vec::new();
        loop {
            match lines.next_line().unwrap() {
                LineRead::Eof => return out,
                LineRead::Line(line) => out.push(Got::Line(line.to_vec())),
                LineRead::TooLong { prefix, bytes } => {
                    out.push(Got::TooLong(prefix.to_vec(), bytes));
                }
            }
        }
    }

    #[test]
    fn lines_split_at_newlines_and_the_last_may_lack_one() {
        assert_eq!(
            lines(b"ab\r\n\ncd\n\xffe", 100),
            [
                Got::Line(b"ab".to_vec()),
                Got::Line(Vec::new()),
                Got::Line(b"cd".to_vec()),
                Got::Line(b"\xffe".to_vec()),
            ]
        );
        assert_eq!(lines(b"", 100), []);
    }

    #[test]
    fn an_over_long_line_is_skipped_to_its_newline_keeping_its_start() {
        let mut input = b"{\"id\":7,\"x\":\"".to_vec();
        input.extend(std::iter::repeat_n(b'a', 50));
        input.extend(b"\"}\nok\n");
        let read = lines(&input, 20);
        assert_eq!(read.len(), 2);
        let Got::TooLong(prefix, bytes) = &read[0] else {
            panic!("{read:?}")
        };
        assert_eq!(*bytes, 65);
        assert_eq!(prefix.as_slice(), &input[..20]);
        assert_eq!(LineRead::recover_id(prefix), 7);
        assert_eq!(read[1], Got::Line(b"ok".to_vec()));
        // Exactly at the cap is still a line; one byte more is not.
        assert_eq!(lines(b"12345\n", 5), [Got::Line(b"12345".to_vec())]);
        assert_eq!(lines(b"123456\n", 5), [Got::TooLong(b"12345".to_vec(), 6)]);
        // Cut off by the end of the input.
        assert_eq!(lines(b"1234567", 5), [Got::TooLong(b"12345".to_vec(), 7)]);
        // The kept prefix never passes its own bound.
        let long = vec![b'x'; KEPT_PREFIX_BYTES * 4];
        let read = lines(&long, KEPT_PREFIX_BYTES * 2);
        assert_eq!(
            read,
            [Got::TooLong(
                vec![b'x'; KEPT_PREFIX_BYTES],
                (KEPT_PREFIX_BYTES * 4) as u64
            )]
        );
    }

    #[test]
    fn the_buffer_never_reserves_past_the_cap_and_shrinks_after_a_large_line() {
        let cap = 3 * RETAINED_CAPACITY;
        let mut input = vec![b'a'; cap];
        input.push(b'\n');
        input.extend(b"b\n");
        // Read a page at a time, as a pipe hands it out, so the line grows
        // many times on its way to the cap.
        let mut lines = CappedLines::with_cap(io::BufReader::with_capacity(4096, &input[..]), cap);
        assert!(matches!(lines.next_line().unwrap(), LineRead::Line(l) if l.len() == cap));
        assert!(lines.line.capacity() <= cap, "{}", lines.line.capacity());
        assert_eq!(lines.next_line().unwrap(), LineRead::Line(b"b"));
        assert!(lines.line.capacity() <= RETAINED_CAPACITY);
        // Where doubling would overshoot: 1,000 then 2,000 bytes held, and
        // a third chunk to the cap of 3,000.
        let mut input = vec![b'a'; 3000];
        input.push(b'\n');
        let mut lines = CappedLines::with_cap(io::BufReader::with_capacity(1000, &input[..]), 3000);
        assert!(matches!(lines.next_line().unwrap(), LineRead::Line(l) if l.len() == 3000));
        assert_eq!(lines.line.capacity(), 3000);
    }

    #[test]
    fn the_readers_cap_is_sixteen_mebibytes() {
        let cap = 16 * 1024 * 1024;
        let mut input = vec![b'a'; cap];
        input.push(b'\n');
        input.extend(vec![b'b'; cap + 1]);
        input.push(b'\n');
        let mut lines = CappedLines::new(&input[..]);
        assert!(matches!(lines.next_line().unwrap(), LineRead::Line(l) if l.len() == cap));
        assert!(matches!(
            lines.next_line().unwrap(),
            LineRead::TooLong { bytes, .. } if bytes == cap as u64 + 1
        ));
        assert_eq!(lines.next_line().unwrap(), LineRead::Eof);
    }

    #[test]
    fn a_request_line_may_hold_two_million_tokens() {
        let most = 1 << 21;
        // One opening bracket and a comma after each value but the last.
        let line = |tokens: usize| format!("[{}0]", "0,".repeat(tokens - 1));
        assert!(!LineRead::too_many_tokens(
            line(most).as_bytes(),
            LineRead::MAX_TOKENS
        ));
        assert!(LineRead::too_many_tokens(
            line(most + 1).as_bytes(),
            LineRead::MAX_TOKENS
        ));
    }

    #[test]
    fn a_buffer_of_up_to_a_mebibyte_is_kept_from_line_to_line() {
        let mebibyte = 1024 * 1024;
        let mut input = vec![b'a'; mebibyte];
        input.extend(b"\nb\n");
        // The cap bounds the buffer at exactly a mebibyte.
        let mut lines = CappedLines::with_cap(&input[..], mebibyte);
        assert!(matches!(lines.next_line().unwrap(), LineRead::Line(l) if l.len() == mebibyte));
        assert_eq!(lines.line.capacity(), mebibyte);
        assert_eq!(lines.next_line().unwrap(), LineRead::Line(b"b"));
        assert_eq!(lines.line.capacity(), mebibyte, "kept, not allocated again");
    }

    /// A reader that is interrupted once before each chunk it gives (the
    /// dream-tools server's tests read through it too).
    pub(crate) struct Interrupting<'a> {
        pub(crate) data: &'a [u8],
        pub(crate) interrupt: bool,
    }

    impl io::Read for Interrupting<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.interrupt = !self.interrupt;
            if self.interrupt {
                return Err(io::ErrorKind::Interrupted.into());
            }
            let n = buf.len().min(self.data.len()).min(7);
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    #[test]
    fn an_interrupted_read_is_retried() {
        let reader = io::BufReader::with_capacity(
            16,
            Interrupting {
                data: b"one line\nand two",
                interrupt: false,
            },
        );
        let mut lines = CappedLines::new(reader);
        assert_eq!(lines.next_line().unwrap(), LineRead::Line(b"one line"));
        assert_eq!(lines.next_line().unwrap(), LineRead::Line(b"and two"));
        assert_eq!(lines.next_line().unwrap(), LineRead::Eof);
    }

    /// A read that fails for another reason than an interruption is the
    /// reader's error, not retried.
    #[test]
    fn a_failed_read_is_the_reader_s_error() {
        struct Failing;
        impl io::Read for Failing {
            fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
                Err(io::ErrorKind::PermissionDenied.into())
            }
        }
        let mut lines = CappedLines::new(io::BufReader::new(Failing));
        let error = lines.next_line().unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::PermissionDenied);
    }

    #[test]
    fn ids_are_recovered_where_the_line_shows_them() {
        assert_eq!(LineRead::recover_id(br#"{"op": "x", "id": 12}"#), 12);
        assert_eq!(LineRead::recover_id(b"{\"id\": 5, \"op\": \"\xff\"}"), 5);
        assert_eq!(LineRead::recover_id(br#" { "id" : 6 , "params": {"#), 6);
        // Read from the line's start: any digits but a leading zero.
        assert_eq!(LineRead::leading_id(br#"{"id": 12, "op": "#), Some(12));
        assert_eq!(LineRead::leading_id(br#"{"id":0}"#), Some(0));
        assert_eq!(LineRead::leading_id(br#"{"id":012}"#), None);
        assert_eq!(
            LineRead::recover_id(br#"{"id":18446744073709551615}"#),
            u64::MAX
        );
        for unknown in [
            &br#"{"id":18446744073709551616}"#[..],
            br#"{"id":-1,"op":"hello"}"#,
            br#"{"id":1.5,"op":"hello"}"#,
            br#"{"id":"7","op":"hello"}"#,
            br#"{"id":07,"op":"hello"}"#,
            br#"{"op":"hello","id"#,
            b"\xff",
            b"",
        ] {
            assert_eq!(LineRead::recover_id(unknown), UNKNOWN_ID, "{unknown:?}");
        }
    }

    #[test]
    fn an_envelope_is_an_id_an_op_and_unparsed_params_and_nothing_else() {
        let (id, op, params) =
            LineRead::envelope(br#"{"params": {"a": [1, "\u0041"]}, "op": "do\nit", "id": 7}"#)
                .unwrap();
        assert_eq!((id, op.as_ref()), (7, "do\nit"));
        assert_eq!(params.get(), r#"{"a": [1, "\u0041"]}"#);
        for refused in [
            &br#"{"id": 7, "op": "x", "params": {}, "more": 1}"#[..],
            br#"{"id": 7, "op": "x"}"#,
            br#"{"op": "x", "params": {}}"#,
            br#"{"id": -7, "op": "x", "params": {}}"#,
            br#"{"id": 7, "op": 1, "params": {}}"#,
            br#"{"id": 7, "op": "x", "params": {}"#,
        ] {
            assert!(LineRead::envelope(refused).is_err(), "{refused:?}");
        }
    }

    #[test]
    fn tokens_inside_strings_do_not_count() {
        assert!(!LineRead::too_many_tokens(br#"{"a":[1,2]}"#, 4));
        assert!(LineRead::too_many_tokens(br#"{"a":[1,2,3]}"#, 4));
        assert!(!LineRead::too_many_tokens(br#"{"a":"[,,,:{\"[,,"}"#, 2));
        assert!(LineRead::too_many_tokens(br#"{"a":"\\",",":1}"#, 2));
    }

    #[test]
    fn a_whole_input_is_read_only_within_its_cap() {
        assert_eq!(read_capped(&b"12345"[..], 5).unwrap().unwrap(), b"12345");
        assert_eq!(read_capped(&b"123456"[..], 5).unwrap(), None);
        assert_eq!(read_capped(&b""[..], 0).unwrap().unwrap(), b"");
        // Nothing past the cap is read.
        let mut input = &b"123456789"[..];
        assert_eq!(read_capped(&mut input, 3).unwrap(), None);
        assert_eq!(input, b"56789");
    }

    #[test]
    fn blank_lines_are_json_whitespace_only() {
        assert!(LineRead::is_blank(b""));
        assert!(LineRead::is_blank(b" \t\r"));
        assert!(!LineRead::is_blank(b"\x0b"));
        assert!(!LineRead::is_blank("\u{a0}".as_bytes()));
    }
}
