//! Case-insensitive, Unicode-aware literal matching, OR across queries.
//!
//! Folding: both the text and the queries are lowercased character by
//! character with the Unicode default lowercase mapping (`char::to_lowercase`,
//! no locale), and final sigma `ς` is folded to `σ` so the context-dependent
//! sigma rule cannot make a word miss itself. Offsets are reported in code
//! points of the original text. A character whose lowercase form is longer
//! (e.g. `İ` → `i̇`) maps every match that starts inside its expansion back
//! to that character.

use memchr::memmem::Finder;

use super::error::{NoteError, NoteErrorCode};

/// A set of literal queries, folded once, with a fast substring finder each.
#[derive(Debug, Clone)]
pub struct LiteralQueries {
    finders: Vec<Finder<'static>>,
}

/// One matching line of a body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineMatch {
    /// 1-based line number.
    pub line: usize,
    /// The whole line, without its line ending.
    pub text: String,
    /// Code-point offset into the body of the earliest match on the line.
    pub offset_chars: usize,
}

impl LiteralQueries {
    /// Folds the queries. An empty list or an empty query is `invalid_query`.
    pub fn new<Q: AsRef<str>>(queries: &[Q]) -> Result<LiteralQueries, NoteError> {
        if queries.is_empty() {
            return Err(NoteError::new(
                NoteErrorCode::InvalidQuery,
                "at least one query is required",
            ));
        }
        let mut finders = Vec::with_capacity(queries.len());
        for query in queries {
            let query = query.as_ref();
            if query.is_empty() {
                return Err(NoteError::new(
                    NoteErrorCode::InvalidQuery,
                    "an empty query matches everything",
                ));
            }
            let mut folded = String::with_capacity(query.len());
            fold_into(query, &mut folded);
            finders.push(Finder::new(folded.as_bytes()).into_owned());
        }
        Ok(LiteralQueries { finders })
    }

    /// Whether any query occurs in `text`.
    pub fn is_match(&self, text: &str) -> bool {
        let mut folded = String::with_capacity(text.len());
        fold_into(text, &mut folded);
        self.finders
            .iter()
            .any(|finder| finder.find(folded.as_bytes()).is_some())
    }

    /// The code-point offset in `text` of the earliest match of any query.
    pub fn find_first(&self, text: &str) -> Option<usize> {
        let mut folded = String::with_capacity(text.len());
        fold_into(text, &mut folded);
        let start = self
            .finders
            .iter()
            .filter_map(|finder| finder.find(folded.as_bytes()))
            .min()?;
        Some(original_chars(text, &folded, start))
    }

    /// Every line of `body` holding a match, with the code-point offset of
    /// its earliest match. `scratch` is reused across calls to avoid an
    /// allocation per body.
    pub fn find_lines(&self, body: &str, scratch: &mut String) -> Vec<LineMatch> {
        scratch.clear();
        fold_into(body, scratch);
        let hay = scratch.as_bytes();
        // A query holding a line break can never match within one line.
        let finders: Vec<&Finder<'static>> = self
            .finders
            .iter()
            .filter(|finder| !finder.needle().contains(&b'\n'))
            .collect();
        let mut next: Vec<usize> = vec![0; finders.len()];
        let mut stale: Vec<bool> = vec![true; finders.len()];
        let mut lines = OriginalLines::new(body);
        let mut folded_line = 1;
        let mut folded_line_start = 0;
        let mut from = 0;
        let mut found = Vec::new();
        let ascii = body.is_ascii();
        while from <= hay.len() {
            for (index, finder) in finders.iter().enumerate() {
                if stale[index] || (next[index] != usize::MAX && next[index] < from) {
                    next[index] = finder.find(&hay[from..]).map_or(usize::MAX, |at| at + from);
                    stale[index] = false;
                }
            }
            let Some((index, &start)) = next.iter().enumerate().min_by_key(|(_, at)| **at) else {
                break;
            };
            if start == usize::MAX {
                break;
            }
            let line_start = memchr::memrchr(b'\n', &hay[..start]).map_or(0, |at| at + 1);
            let line_end = memchr::memchr(b'\n', &hay[start..]).map_or(hay.len(), |at| at + start);
            let content_end = if line_end > line_start && hay[line_end - 1] == b'\r' {
                line_end - 1
            } else {
                line_end
            };
            if start + finders[index].needle().len() > content_end {
                // Only a query ending in `\r` can reach past the content of a
                // CRLF line; look for its next occurrence instead.
                next[index] = finders[index]
                    .find(&hay[start + 1..])
                    .map_or(usize::MAX, |at| at + start + 1);
                continue;
            }
            folded_line += memchr::memchr_iter(b'\n', &hay[folded_line_start..line_start]).count();
            folded_line_start = line_start;
            let original = lines.seek(folded_line);
            let prefix = &scratch[line_start..start];
            let within = if ascii {
                prefix.len()
            } else {
                original_chars(
                    original.text,
                    &scratch[line_start..content_end],
                    prefix.len(),
                )
            };
            found.push(LineMatch {
                line: folded_line,
                text: original.text.to_owned(),
                offset_chars: original.start_chars + within,
            });
            from = line_end + 1;
        }
        found
    }
}

/// Appends the folded form of `text` to `out`.
pub(crate) fn fold_into(text: &str, out: &mut String) {
    if text.is_ascii() {
        let start = out.len();
        out.push_str(text);
        out[start..].make_ascii_lowercase();
        return;
    }
    for c in text.chars() {
        if c.is_ascii() {
            out.push(c.to_ascii_lowercase());
        } else {
            for lower in c.to_lowercase() {
                out.push(if lower == 'ς' { 'σ' } else { lower });
            }
        }
    }
}

/// Maps a byte offset in `folded` (the fold of `original`) to a code-point
/// offset in `original`.
fn original_chars(original: &str, folded: &str, folded_bytes: usize) -> usize {
    let prefix = &folded[..folded_bytes];
    if original.len() == folded.len() && original.is_ascii() {
        return folded_bytes;
    }
    if original.chars().count() == folded.chars().count() {
        return prefix.chars().count();
    }
    let mut consumed = 0;
    let mut buffer = String::new();
    for (index, c) in original.chars().enumerate() {
        buffer.clear();
        fold_into(c.encode_utf8(&mut [0; 4]), &mut buffer);
        consumed += buffer.len();
        if consumed > folded_bytes {
            return index;
        }
    }
    original.chars().count()
}

/// A forward-only cursor over the lines of the original body.
struct OriginalLines<'a> {
    rest: &'a str,
    line: usize,
    start_chars: usize,
}

struct OriginalLine<'a> {
    text: &'a str,
    start_chars: usize,
}

impl<'a> OriginalLines<'a> {
    fn new(body: &'a str) -> Self {
        OriginalLines {
            rest: body,
            line: 1,
            start_chars: 0,
        }
    }

    /// Moves to line `line` (1-based, never backwards) and returns it.
    fn seek(&mut self, line: usize) -> OriginalLine<'a> {
        while self.line < line {
            let end = memchr::memchr(b'\n', self.rest.as_bytes()).unwrap_or(self.rest.len());
            self.start_chars += count_chars(&self.rest[..end]) + 1;
            self.rest = self.rest.get(end + 1..).unwrap_or("");
            self.line += 1;
        }
        let end = memchr::memchr(b'\n', self.rest.as_bytes()).unwrap_or(self.rest.len());
        let text = &self.rest[..end];
        OriginalLine {
            text: text.strip_suffix('\r').unwrap_or(text),
            start_chars: self.start_chars,
        }
    }
}

fn count_chars(text: &str) -> usize {
    if text.is_ascii() {
        text.len()
    } else {
        text.chars().count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(queries: &[&str], body: &str, expect: &[(usize, &str, usize)]) {
        let matcher = LiteralQueries::new(queries).expect("valid queries");
        let found: Vec<(usize, String, usize)> = matcher
            .find_lines(body, &mut String::new())
            .into_iter()
            .map(|m| (m.line, m.text, m.offset_chars))
            .collect();
        let expect: Vec<(usize, String, usize)> = expect
            .iter()
            .map(|(line, text, offset)| (*line, (*text).to_owned(), *offset))
            .collect();
        assert_eq!(found, expect, "{queries:?} in {body:?}");
    }

    #[test]
    fn finds_lines_and_code_point_offsets() {
        check(&["foo"], "a\nxFOO foo\nbar", &[(2, "xFOO foo", 3)]);
        check(
            &["bar", "a"],
            "a\nxFOO foo\nbar",
            &[(1, "a", 0), (3, "bar", 11)],
        );
        check(&["ÄB"], "ää äb\näB", &[(1, "ää äb", 3), (2, "äB", 6)]);
        check(&["x"], "İx\nx", &[(1, "İx", 1), (2, "x", 3)]);
        check(&["i̇"], "aİ", &[(1, "aİ", 1)]);
        check(&["ΟΔΟΣ"], "οδος\nΟΔΟΣ", &[(1, "οδος", 0), (2, "ΟΔΟΣ", 5)]);
        check(&["b"], "a\r\nb\r\n", &[(2, "b", 3)]);
        check(&["b\r"], "a\r\nb\r\n", &[]);
        check(&["a\nb"], "a\nb", &[]);
        check(&["o", "oo"], "foo", &[(1, "foo", 1)]);
        check(&["z"], "", &[]);
    }

    #[test]
    fn refuses_empty_queries() {
        let none: [&str; 0] = [];
        assert_eq!(
            LiteralQueries::new(&none).map(|_| ()).map_err(|e| e.code()),
            Err(NoteErrorCode::InvalidQuery)
        );
        let error = LiteralQueries::new(&["a", ""])
            .map(|_| ())
            .expect_err("empty query");
        assert_eq!(error.message(), "an empty query matches everything");
    }

    #[test]
    fn first_match_in_a_document() {
        let matcher = LiteralQueries::new(&["WORLD", "zz"]).expect("valid");
        assert_eq!(matcher.find_first("héllo\nworld"), Some(6));
        assert_eq!(matcher.find_first("nothing"), None);
    }
}
