//! A structural scan of one session line: is it certainly a JSON object that
//! the eager reader's parser (`serde_json` into a `Value`) accepts, and what
//! are its top-level `type`, `id` and `parentId`?
//!
//! The scan is conservative. It answers only when it is sure; anything it
//! does not settle (escapes in the fields it extracts or in any top-level
//! key, a repeated extracted field, deep nesting, a number that might not
//! fit a double, a `\u` surrogate escape, bytes that are not plain JSON)
//! gives `None`, and the caller reads that line by the eager reader's own
//! rules. So a line the eager reader rejects is never taken for an entry.

use std::ops::Range;

/// What the scan found in a line it is sure about. Ranges are within the
/// line and hold text without escapes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Skeleton {
    /// The `type` string (required).
    pub kind: Range<usize>,
    /// The `id` string; `None` when absent or `null`.
    pub id: Option<Range<usize>>,
    /// The `parentId` string; `None` when absent or `null`.
    pub parent: Option<Range<usize>>,
}

/// Nesting the scan accepts; `serde_json` refuses 128 levels, and the scan
/// leaves anything near that to it.
const MAX_DEPTH: usize = 100;

/// Scans `line` (no newline). See the module documentation.
pub(crate) fn scan(line: &[u8]) -> Option<Skeleton> {
    // Invalid UTF-8 is read with replacement characters, and diagnosed, by
    // the eager reader.
    std::str::from_utf8(line).ok()?;
    let mut scanner = Scanner { line, at: 0 };
    scanner.whitespace();
    if scanner.next()? != b'{' {
        return None;
    }
    let mut kind = None;
    let mut id: Option<Option<Range<usize>>> = None;
    let mut parent: Option<Option<Range<usize>>> = None;
    scanner.members(b'}', |scanner| {
        let (key, escaped) = scanner.key()?;
        if escaped {
            // An escaped key might spell a field the index needs.
            return None;
        }
        match &line[key] {
            b"type" => {
                if kind.is_some() || scanner.next()? != b'"' {
                    return None;
                }
                kind = Some(scanner.plain_string()?);
            }
            b"id" => {
                if id.is_some() {
                    return None;
                }
                id = Some(scanner.string_or_null()?);
            }
            b"parentId" => {
                if parent.is_some() {
                    return None;
                }
                parent = Some(scanner.string_or_null()?);
            }
            _ => scanner.value(1)?,
        }
        Some(())
    })?;
    scanner.whitespace();
    if scanner.at != line.len() {
        return None;
    }
    Some(Skeleton {
        kind: kind?,
        id: id.flatten(),
        parent: parent.flatten(),
    })
}

/// Where the plain run at the start of `bytes` ends: the offset of its
/// first quote, backslash or control character (below 0x20, which
/// `serde_json` refuses in a string), if any. Eight bytes at a time: in a
/// word, a byte equal to `n` is a zero byte of `word ^ n`, and a zero byte
/// (or one below `n`) is flagged by the borrow trick `(x - n) & !x & 0x80`,
/// whose lowest flag is always a true one (a borrow only carries upward),
/// so the lowest flag of the three tests is the first byte that ends the
/// run. Most strings in a session are short (keys, ids, times, roles),
/// where this beats a vectorized search's start-up; a long one is left to
/// `memchr`.
fn plain_run(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const SHORT: usize = 32;
    let below = |word: u64, n: u8| word.wrapping_sub(ONES * u64::from(n)) & !word & HIGH;
    let mut words = bytes[..bytes.len().min(SHORT)].chunks_exact(8);
    let mut at = 0;
    for chunk in &mut words {
        let mut word = [0; 8];
        word.copy_from_slice(chunk);
        let word = u64::from_le_bytes(word);
        let flags = below(word ^ (ONES * u64::from(b'"')), 1)
            | below(word ^ (ONES * u64::from(b'\\')), 1)
            | below(word, 0x20);
        if flags != 0 {
            return Some(at + flags.trailing_zeros() as usize / 8);
        }
        at += 8;
    }
    if at == SHORT {
        let rest = &bytes[at..];
        let end = memchr::memchr2(b'"', b'\\', rest);
        let plain = &rest[..end.unwrap_or(rest.len())];
        return if has_control(plain) {
            plain
                .iter()
                .position(|&byte| byte < 0x20)
                .map(|control| at + control)
        } else {
            end.map(|end| at + end)
        };
    }
    words
        .remainder()
        .iter()
        .position(|&byte| byte == b'"' || byte == b'\\' || byte < 0x20)
        .map(|found| at + found)
}

/// Whether `bytes` holds a byte below 0x20 (checked a block at a time, a
/// loop the compiler vectorizes, where a search for the first one is not).
fn has_control(bytes: &[u8]) -> bool {
    bytes.chunks(64).any(|block| {
        block
            .iter()
            .fold(false, |found, &byte| found | (byte < 0x20))
    })
}

struct Scanner<'a> {
    line: &'a [u8],
    at: usize,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.line.get(self.at).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let byte = self.peek()?;
        self.at += 1;
        Some(byte)
    }

    fn whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.at += 1;
        }
    }

    /// After an opening quote: the string's content range and whether it
    /// holds an escape.
    fn string(&mut self) -> Option<(Range<usize>, bool)> {
        let start = self.at;
        let mut escaped = false;
        loop {
            let found = plain_run(&self.line[self.at..])?;
            self.at += found;
            match self.next()? {
                b'"' => return Some((start..self.at - 1, escaped)),
                b'\\' => {}
                // serde_json refuses a raw control character in a string.
                _ => return None,
            }
            escaped = true;
            match self.next()? {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {}
                b'u' => {
                    let hex = self.line.get(self.at..self.at + 4)?;
                    let text = std::str::from_utf8(hex).ok()?;
                    let code = u16::from_str_radix(text, 16).ok()?;
                    if !hex.iter().all(u8::is_ascii_hexdigit) || (0xD800..=0xDFFF).contains(&code) {
                        // Surrogates have rules of their own; leave them to serde_json.
                        return None;
                    }
                    self.at += 4;
                }
                _ => return None,
            }
        }
    }

    /// After an opening quote: a string without escapes.
    fn plain_string(&mut self) -> Option<Range<usize>> {
        match self.string()? {
            (range, false) => Some(range),
            (_, true) => None,
        }
    }

    /// A string without escapes, or `null`.
    fn string_or_null(&mut self) -> Option<Option<Range<usize>>> {
        match self.next()? {
            b'"' => self.plain_string().map(Some),
            b'n' => self.literal(b"ull").map(|()| None),
            _ => None,
        }
    }

    fn literal(&mut self, rest: &[u8]) -> Option<()> {
        if self.line.get(self.at..self.at + rest.len())? != rest {
            return None;
        }
        self.at += rest.len();
        Some(())
    }

    /// After the opening `{` or `[`: the members up to `close`, each read
    /// by `member` (whitespace around it skipped), separated by commas.
    fn members(
        &mut self,
        close: u8,
        mut member: impl FnMut(&mut Self) -> Option<()>,
    ) -> Option<()> {
        self.whitespace();
        if self.peek()? == close {
            self.at += 1;
            return Some(());
        }
        loop {
            self.whitespace();
            member(self)?;
            self.whitespace();
            match self.next()? {
                b',' => {}
                byte if byte == close => return Some(()),
                _ => return None,
            }
        }
    }

    /// An object member's key and colon, whitespace after it skipped: the
    /// key's range and whether it has escapes.
    fn key(&mut self) -> Option<(Range<usize>, bool)> {
        if self.next()? != b'"' {
            return None;
        }
        let key = self.string()?;
        self.whitespace();
        if self.next()? != b':' {
            return None;
        }
        self.whitespace();
        Some(key)
    }

    /// Any JSON value, at nesting `depth` (the top-level object is 1).
    fn value(&mut self, depth: usize) -> Option<()> {
        match self.next()? {
            b'"' => self.string().map(|_| ()),
            b'{' => {
                let depth = Self::deeper(depth)?;
                self.members(b'}', |scanner| {
                    scanner.key()?;
                    scanner.value(depth)
                })
            }
            b'[' => {
                let depth = Self::deeper(depth)?;
                self.members(b']', |scanner| scanner.value(depth))
            }
            b't' => self.literal(b"rue"),
            b'f' => self.literal(b"alse"),
            b'n' => self.literal(b"ull"),
            b'-' => match self.next()? {
                first @ b'0'..=b'9' => self.number(first),
                _ => None,
            },
            first @ b'0'..=b'9' => self.number(first),
            _ => None,
        }
    }

    fn deeper(depth: usize) -> Option<usize> {
        (depth < MAX_DEPTH).then_some(depth + 1)
    }

    /// The rest of a number whose first digit was `first`. Only numbers
    /// that certainly fit a double are accepted: at most 20 integer digits
    /// and an exponent of at most 280 either way.
    fn number(&mut self, first: u8) -> Option<()> {
        let mut integer_digits = 1;
        if first != b'0' {
            integer_digits += self.digits();
        } else if self.peek().is_some_and(|byte| byte.is_ascii_digit()) {
            return None;
        }
        if integer_digits > 20 {
            return None;
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            if self.digits() == 0 {
                return None;
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.at += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.at += 1;
            }
            let start = self.at;
            let count = self.digits();
            if count == 0 || count > 3 {
                return None;
            }
            let exponent: u32 = std::str::from_utf8(&self.line[start..self.at])
                .ok()?
                .parse()
                .ok()?;
            if exponent > 280 {
                return None;
            }
        }
        Some(())
    }

    fn digits(&mut self) -> usize {
        let start = self.at;
        while self.peek().is_some_and(|byte| byte.is_ascii_digit()) {
            self.at += 1;
        }
        self.at - start
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The scan never accepts what the eager reader's parser refuses, and
    /// finds the fields serde would.
    fn agrees(line: &str) {
        let parsed = serde_json::from_str::<serde_json::Value>(line);
        if let Some(skeleton) = scan(line.as_bytes()) {
            let value = parsed.unwrap_or_else(|e| panic!("{line}: accepted, serde says {e}"));
            let object = value.as_object().expect("an object");
            let text = |range: &Range<usize>| &line[range.clone()];
            assert_eq!(
                object.get("type").and_then(|v| v.as_str()),
                Some(text(&skeleton.kind))
            );
            assert_eq!(
                object.get("id").and_then(|v| v.as_str()),
                skeleton.id.as_ref().map(text)
            );
            assert_eq!(
                object.get("parentId").and_then(|v| v.as_str()),
                skeleton.parent.as_ref().map(text)
            );
        }
    }

    #[test]
    fn plain_entries_are_read() {
        let line = r#"{"type":"message","id":"a1","parentId":null,"message":{"role":"user","content":[{"type":"text","text":"hi \"there\" \u00e9"}],"n":-1.5e3,"ok":true,"x":[]}}"#;
        let skeleton = scan(line.as_bytes()).expect("plain");
        assert_eq!(&line[skeleton.kind], "message");
        assert_eq!(&line[skeleton.id.expect("an id")], "a1");
        assert_eq!(skeleton.parent, None);
        agrees(line);
    }

    #[test]
    fn unsure_or_bad_lines_are_left_to_serde() {
        let deep = format!(
            r#"{{"type":"custom","x":{}1{}}}"#,
            "[".repeat(130),
            "]".repeat(130)
        );
        for line in [
            "",
            "   ",
            "[1]",
            "not json",
            r#"{"type":"custom"} x"#,
            r#"{"type":"custom",}"#,
            r#"{"type":"custom","x":1e400}"#,
            r#"{"type":"custom","x":123456789012345678901234567890}"#,
            r#"{"type":"custom","x":123456789012345678901}"#,
            r#"{"type":"custom","x":1e0001}"#,
            r#"{"type":"custom","x":1e}"#,
            r#"{"type":"custom","x":[1}]"#,
            r#"{"type":"custom","x":{"a":1]}"#,
            r#"{"type":"custom","x":01}"#,
            r#"{"type":"custom","x":1.}"#,
            r#"{"type":"custom","x":"\ud800"}"#,
            r#"{"type":"custom","x":"\q"}"#,
            "{\"type\":\"custom\",\"x\":\"a\tb\"}",
            r#"{"type":"custom","type":"label"}"#,
            r#"{"typ\u0065":"custom"}"#,
            r#"{"type":"cus\u0074om"}"#,
            r#"{"type":"custom","id":7}"#,
            r#"{"id":"a"}"#,
            "{\"type\":\"custom\"}\u{a0}",
            &deep,
        ] {
            assert_eq!(scan(line.as_bytes()), None, "{line}");
            agrees(line);
        }
        assert_eq!(scan(b"{\"type\":\"custom\",\"x\":\"\xff\"}"), None);
    }

    /// JSON's whitespace between tokens, and every literal, is read.
    #[test]
    fn whitespace_and_literals_are_read() {
        let line = " {\t\"type\" : \"custom\" ,\r\n \"id\":null, \"x\" : [ true , false , null , { \"k\" : [ ] } , { } ] } ";
        let skeleton = scan(line.as_bytes()).expect("read");
        assert_eq!(&line[skeleton.kind], "custom");
        assert_eq!(skeleton.id, None);
        agrees(line);
    }

    /// Nesting is read to 100 levels (the line's object the first) and
    /// left to serde_json past them.
    #[test]
    fn nesting_is_read_to_its_limit() {
        let nested = |arrays: usize| {
            format!(
                r#"{{"type":"custom","x":{}1{}}}"#,
                "[".repeat(arrays),
                "]".repeat(arrays)
            )
        };
        assert!(scan(nested(99).as_bytes()).is_some());
        assert_eq!(scan(nested(100).as_bytes()), None);
        agrees(&nested(99));
        agrees(&nested(100));
    }

    /// The first quote, backslash or control character, byte by byte.
    fn naive_plain_run(bytes: &[u8]) -> Option<usize> {
        bytes
            .iter()
            .position(|&byte| byte == b'"' || byte == b'\\' || byte < 0x20)
    }

    /// Bytes mostly plain, with quotes, backslashes, control characters,
    /// their neighbours (`!`, `#`, `[`, `]`, space, DEL) and UTF-8 bytes
    /// here and there, up to a few hundred long: both sides of the word
    /// loop's end and of the switch to `memchr`.
    fn string_bytes() -> impl Strategy<Value = Vec<u8>> {
        let byte = prop_oneof![
            8 => Just(b'a'),
            1 => prop::sample::select(vec![
                b'"', b'\\', 0x00, 0x01, b'\t', b'\n', 0x1f, b' ', b'!', b'#', b'[', b']', 0x7f,
                0x80, 0xc3, 0xa9, 0xff,
            ]),
            1 => any::<u8>(),
        ];
        prop::collection::vec(byte, 0..300)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// The word-at-a-time search finds what a byte-by-byte one finds,
        /// at every offset into the bytes (so at every alignment).
        #[test]
        fn the_plain_run_ends_where_a_byte_search_says(bytes in string_bytes(), skip in 0usize..9) {
            let bytes = &bytes[skip.min(bytes.len())..];
            prop_assert_eq!(plain_run(bytes), naive_plain_run(bytes));
        }

        /// A line with such a string as a value, and as a key, is taken
        /// only when serde_json takes it, with the same fields.
        #[test]
        fn a_line_with_any_string_agrees_with_serde(bytes in string_bytes()) {
            let text = String::from_utf8_lossy(&bytes);
            agrees(&format!(r#"{{"type":"custom","id":"a","x":"{text}"}}"#));
            agrees(&format!(r#"{{"type":"custom","{text}":1}}"#));
            agrees(&format!(r#"{{"type":"{text}","id":"{text}","parentId":"{text}"}}"#));
        }
    }

    /// A string of plain ASCII with every escape is read, and one with a
    /// control character at any position (early or past the word loop) is
    /// left to serde_json.
    #[test]
    fn escapes_and_control_characters_at_any_length() {
        for length in 0..100 {
            let plain = "a".repeat(length);
            let line = format!(r#"{{"type":"custom","x":"{plain}\"\\\/\b\f\n\r\t\u00e9{plain}"}}"#);
            assert!(scan(line.as_bytes()).is_some(), "{line}");
            agrees(&line);
            let control = format!("{{\"type\":\"custom\",\"x\":\"{plain}\u{1}{plain}\"}}");
            assert_eq!(scan(control.as_bytes()), None, "{control}");
            agrees(&control);
            let unterminated = format!(r#"{{"type":"custom","x":"{plain}"#);
            assert_eq!(scan(unterminated.as_bytes()), None, "{unterminated}");
        }
    }

    #[test]
    fn numbers_that_fit_are_accepted() {
        for line in [
            r#"{"type":"custom","x":0}"#,
            r#"{"type":"custom","x":-0.0}"#,
            r#"{"type":"custom","x":12345678901234567890}"#,
            r#"{"type":"custom","x":1e280}"#,
            r#"{"type":"custom","x":1E-280}"#,
            r#"{"type":"custom","x":0.0012000000000000001}"#,
        ] {
            assert!(scan(line.as_bytes()).is_some(), "{line}");
            agrees(line);
        }
    }
}
