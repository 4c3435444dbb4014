//! Request lines as raw bytes, with a bound on their length.
//!
//! The sidecar must outlive any one bad line: a line that is not UTF-8, not
//! JSON or far too long is answered and skipped, never the end of the serve
//! loop. Lines are read with `fill_buf`/`consume` so an over-long line is
//! discarded as it streams past instead of being buffered whole.

use std::io::{self, BufRead};

use serde::Deserialize;

/// The longest request line the sidecar reads, newline excluded. Notes are
/// capped at 1 MB and the bundle sends each session event once, so a real
/// request stays far below this.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// The id answered when a line's own id cannot be read. The bundle numbers
/// its requests from 1 and drops answers no request waits for, so such an
/// answer never settles the wrong request.
pub const UNKNOWN_ID: u64 = 0;

/// The most commas, colons and opening brackets (outside strings) one request
/// line may hold. Parsed JSON can take many times its text: 16 MiB of
/// `[0,0,…]` is 8 million values and most of a gigabyte. dsh's own logs have
/// one such token per 25 bytes or so, about 700,000 in a full line.
pub const MAX_LINE_TOKENS: usize = 1 << 21;

/// How much of an over-long line is kept to recover its id.
const KEPT_PREFIX_BYTES: usize = 256;

/// A line buffer grown by one huge line is shrunk back to this afterwards, so
/// a long-lived sidecar does not hold the peak forever.
const RETAINED_CAPACITY: usize = 1024 * 1024;

/// What one read brought.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Read {
    /// A whole line (the last one may lack its newline) is in the buffer,
    /// without its `\n` or `\r\n`.
    Line,
    /// The line was longer than [`MAX_LINE_BYTES`]; it was consumed up to and
    /// including its newline, and only its first bytes are in the buffer.
    TooLong {
        /// The line's length, newline excluded.
        bytes: u64,
    },
    /// The input ended.
    Eof,
}

/// Reads the next line into `line` (cleared first).
pub fn read_line(input: &mut impl BufRead, line: &mut Vec<u8>) -> io::Result<Read> {
    read_line_capped(input, line, MAX_LINE_BYTES)
}

/// [`read_line`] with the cap as a parameter, so tests need not send 16 MiB.
pub fn read_line_capped(
    input: &mut impl BufRead,
    line: &mut Vec<u8>,
    cap: usize,
) -> io::Result<Read> {
    if line.capacity() > RETAINED_CAPACITY {
        line.clear();
        line.shrink_to(RETAINED_CAPACITY);
    }
    line.clear();
    let mut total: u64 = 0;
    let mut too_long = false;
    let mut seen_any = false;
    loop {
        let available = match input.fill_buf() {
            Ok(available) => available,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        if available.is_empty() {
            if !seen_any {
                return Ok(Read::Eof);
            }
            break;
        }
        seen_any = true;
        let newline = available.iter().position(|byte| *byte == b'\n');
        let chunk = &available[..newline.unwrap_or(available.len())];
        total = total.saturating_add(chunk.len() as u64);
        if !too_long {
            let room = cap.saturating_sub(line.len());
            if chunk.len() > room {
                line.extend_from_slice(&chunk[..room]);
                line.truncate(KEPT_PREFIX_BYTES);
                too_long = true;
            } else {
                line.extend_from_slice(chunk);
            }
        }
        let used = newline.map_or(available.len(), |at| at + 1);
        input.consume(used);
        if newline.is_some() {
            break;
        }
    }
    if too_long {
        return Ok(Read::TooLong { bytes: total });
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    Ok(Read::Line)
}

/// Whether `line` holds more than `max` commas, colons and opening brackets
/// outside strings: a bound on the values it parses into, counted in one pass
/// without parsing.
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

/// A line with nothing but JSON whitespace is not a request and gets no answer.
pub fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|byte| matches!(byte, b' ' | b'\t' | b'\r'))
}

/// The id of a line that is not a valid request, so the waiting request is
/// settled with the refusal: the line's `id` if it parses as JSON with an
/// unsigned integer id, else an id written first in the line the way the
/// bundle writes it (`{"id":N,…`, which survives truncation, bad bytes and
/// nesting past the parser's limit), else [`UNKNOWN_ID`].
pub fn recover_id(line: &[u8]) -> u64 {
    #[derive(Deserialize)]
    struct Probe {
        id: u64,
    }
    serde_json::from_slice::<Probe>(line)
        .map(|probe| probe.id)
        .ok()
        .or_else(|| leading_id(line))
        .unwrap_or(UNKNOWN_ID)
}

/// `{"id": N` at the start of the line, N an unsigned 64-bit integer followed
/// by `,` or `}` (whitespace allowed where JSON allows it).
fn leading_id(line: &[u8]) -> Option<u64> {
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

fn skip_space(bytes: &[u8]) -> &[u8] {
    let start = bytes
        .iter()
        .position(|byte| !matches!(byte, b' ' | b'\t' | b'\r' | b'\n'))
        .unwrap_or(bytes.len());
    &bytes[start..]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8], cap: usize) -> Vec<(Read, Vec<u8>)> {
        // A tiny buffer makes every line cross several fill_buf calls.
        let mut reader = io::BufReader::with_capacity(3, input);
        let mut line = Vec::new();
        let mut out = Vec::new();
        loop {
            let read = read_line_capped(&mut reader, &mut line, cap).expect("read");
            if read == Read::Eof {
                return out;
            }
            out.push((read, line.clone()));
        }
    }

    #[test]
    fn lines_split_at_newlines_and_the_last_may_lack_one() {
        assert_eq!(
            lines(b"ab\r\n\ncd\n\xffe", 100),
            [
                (Read::Line, b"ab".to_vec()),
                (Read::Line, Vec::new()),
                (Read::Line, b"cd".to_vec()),
                (Read::Line, b"\xffe".to_vec()),
            ]
        );
        assert_eq!(lines(b"", 100), []);
    }

    #[test]
    fn an_over_long_line_is_skipped_to_its_newline() {
        let mut input = b"{\"id\":7,\"x\":\"".to_vec();
        input.extend(std::iter::repeat_n(b'a', 50));
        input.extend(b"\"}\nok\n");
        let read = lines(&input, 20);
        assert_eq!(read.len(), 2);
        assert_eq!(read[0].0, Read::TooLong { bytes: 65 });
        assert_eq!(recover_id(&read[0].1), 7);
        assert_eq!(read[1], (Read::Line, b"ok".to_vec()));
        // Exactly at the cap is still a line; one byte more is not.
        assert_eq!(lines(b"12345\n", 5), [(Read::Line, b"12345".to_vec())]);
        assert_eq!(lines(b"123456\n", 5)[0].0, Read::TooLong { bytes: 6 });
        // Cut off by the end of the input.
        assert_eq!(lines(b"1234567", 5)[0].0, Read::TooLong { bytes: 7 });
    }

    #[test]
    fn ids_are_recovered_where_the_line_shows_them() {
        assert_eq!(recover_id(br#"{"op": "x", "id": 12}"#), 12);
        assert_eq!(recover_id(b"{\"id\": 5, \"op\": \"\xff\"}"), 5);
        assert_eq!(recover_id(br#" { "id" : 6 , "params": {"#), 6);
        assert_eq!(recover_id(br#"{"id":18446744073709551615}"#), u64::MAX);
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
            assert_eq!(recover_id(unknown), UNKNOWN_ID, "{unknown:?}");
        }
    }

    #[test]
    fn tokens_inside_strings_do_not_count() {
        assert!(!too_many_tokens(br#"{"a":[1,2]}"#, 4));
        assert!(too_many_tokens(br#"{"a":[1,2,3]}"#, 4));
        assert!(!too_many_tokens(br#"{"a":"[,,,:{\"[,,"}"#, 2));
        assert!(too_many_tokens(br#"{"a":"\\",",":1}"#, 2));
    }

    #[test]
    fn blank_lines_are_json_whitespace_only() {
        assert!(is_blank(b""));
        assert!(is_blank(b" \t\r"));
        assert!(!is_blank(b"\x0b"));
        assert!(!is_blank("\u{a0}".as_bytes()));
    }
}
