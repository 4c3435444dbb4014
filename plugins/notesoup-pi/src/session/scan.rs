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

/// Whether `bytes` holds a byte below 0x20 (checked a block at a time, a
/// loop the compiler vectorizes).
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
            let rest = &self.line[self.at..];
            let found = memchr::memchr2(b'"', b'\\', rest)?;
            // serde_json refuses a raw control character in a string.
            if has_control(&rest[..found]) {
                return None;
            }
            self.at += found + 1;
            if rest[found] == b'"' {
                return Some((start..self.at - 1, escaped));
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
