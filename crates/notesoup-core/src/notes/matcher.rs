//! Case-insensitive, Unicode-aware literal matching, OR across queries.
//!
//! Folding: both the text and the queries are lowercased character by
//! character with the Unicode default lowercase mapping (`char::to_lowercase`,
//! no locale), and final sigma `ς` is folded to `σ` so the context-dependent
//! sigma rule cannot make a word miss itself. Offsets are reported in code
//! points of the original text. A character whose lowercase form is longer
//! (e.g. `İ` → `i̇`) maps every match that starts inside its expansion back
//! to that character.

use std::sync::OnceLock;

use memchr::memmem::Finder;

use super::error::NoteError;
use crate::wire::RefusalCode;

/// A set of literal queries, folded once, with a fast substring finder each.
#[derive(Debug, Clone)]
pub(crate) struct LiteralQueries {
    finders: Vec<Finder<'static>>,
    /// Whether every folded query is ASCII.
    ascii: bool,
    /// The longest ASCII run of each folded query, when every query has
    /// one: a match of the query needs its run in the ASCII bytes.
    ascii_runs: Option<Vec<Finder<'static>>>,
}

/// One matching line of a body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LineMatch {
    /// 1-based line number.
    pub line: usize,
    /// The whole line, without its line ending.
    pub text: String,
    /// Code-point offset into the body of the earliest match on the line.
    pub offset_chars: usize,
}

impl LiteralQueries {
    /// Folds the queries. An empty list or an empty query is `invalid_query`.
    pub(crate) fn new<Q: AsRef<str>>(queries: &[Q]) -> Result<LiteralQueries, NoteError> {
        if queries.is_empty() {
            return Err(NoteError::new(
                RefusalCode::InvalidQuery,
                "at least one query is required",
            ));
        }
        let mut finders = Vec::with_capacity(queries.len());
        for query in queries {
            let query = query.as_ref();
            if query.is_empty() {
                return Err(NoteError::new(
                    RefusalCode::InvalidQuery,
                    "an empty query matches everything",
                ));
            }
            let mut folded = String::with_capacity(query.len());
            fold_into(query, &mut folded);
            finders.push(Finder::new(folded.as_bytes()).into_owned());
        }
        let ascii = finders.iter().all(|finder| finder.needle().is_ascii());
        let ascii_runs = finders
            .iter()
            .map(|finder| {
                longest_ascii_run(finder.needle()).map(|run| Finder::new(run).into_owned())
            })
            .collect();
        Ok(LiteralQueries {
            finders,
            ascii,
            ascii_runs,
        })
    }

    #[cfg(test)]
    /// The code-point offset in `text` of the earliest match of any query.
    pub(crate) fn find_first(&self, text: &str) -> Option<usize> {
        let mut folded = String::with_capacity(text.len());
        fold_into(text, &mut folded);
        self.find_first_folded(text, &folded)
    }

    /// [`Self::find_first`] given `text` already folded (`folded` must be
    /// the fold of `text`, as a history's folded documents are).
    pub(crate) fn find_first_folded(&self, text: &str, folded: &str) -> Option<usize> {
        let start = self
            .finders
            .iter()
            .filter_map(|finder| finder.find(folded.as_bytes()))
            .min()?;
        Some(original_chars(text, folded, start))
    }

    /// A fast, sound pre-check on raw file bytes: `false` means no query
    /// occurs anywhere in them (so none occurs in the body). Each query's
    /// longest ASCII run must occur in the bytes with ASCII letters
    /// lowercased, which is exact unless the bytes hold KELVIN SIGN or `İ`
    /// (non-ASCII characters folding to ASCII); then, or when a query has no
    /// ASCII at all, it answers `true`. Invalid UTF-8 is fine: replacing it
    /// keeps every ASCII byte. `scratch` is reused across calls.
    pub(crate) fn could_match(&self, bytes: &[u8], scratch: &mut Vec<u8>) -> bool {
        let Some(runs) = &self.ascii_runs else {
            return true;
        };
        if has_ascii_folding_char(bytes) {
            return true;
        }
        scratch.clear();
        scratch.extend_from_slice(bytes);
        scratch.make_ascii_lowercase();
        runs.iter().any(|run| run.find(scratch).is_some())
    }

    /// Every line of `body` holding a match, with the code-point offset of
    /// its earliest match. `scratch` is reused across calls to avoid an
    /// allocation per body.
    pub(crate) fn find_lines(&self, body: &str, scratch: &mut String) -> Vec<LineMatch> {
        scratch.clear();
        // When every query is ASCII, only ASCII characters of the body can
        // take part in a match, except the two non-ASCII characters whose
        // lowercase form holds ASCII (KELVIN SIGN → `k`, `İ` → `i̇`). Without
        // those, lowercasing the ASCII bytes in place gives a haystack with
        // the body's exact byte layout, and offsets need no mapping.
        let same_layout =
            body.is_ascii() || (self.ascii && !has_ascii_folding_char(body.as_bytes()));
        if same_layout {
            scratch.push_str(body);
            scratch.make_ascii_lowercase();
        } else {
            fold_into(body, scratch);
        }
        let hay = scratch.as_bytes();
        let mut candidates = Candidates::new(&self.finders);
        let mut lines = OriginalLines::new(body);
        let mut line = 1;
        let mut counted = 0;
        let mut from = 0;
        let mut found = Vec::new();
        while let Some((index, start)) = candidates.earliest(hay, from) {
            let line_start = memchr::memrchr(b'\n', &hay[..start]).map_or(0, |at| at + 1);
            let line_end = memchr::memchr(b'\n', &hay[start..]).map_or(hay.len(), |at| at + start);
            let content_end = if line_end > line_start && hay[line_end - 1] == b'\r' {
                line_end - 1
            } else {
                line_end
            };
            if start + candidates.needle_len(index) > content_end {
                // Only a query ending in `\r` can reach past the content of a
                // CRLF line; look for its next occurrence instead.
                candidates.skip(index, hay, start + 1);
                continue;
            }
            line += memchr::memchr_iter(b'\n', &hay[counted..line_start]).count();
            counted = line_start;
            let (text, offset_chars) = if same_layout {
                let start_chars = lines.chars_before(line_start);
                (
                    &body[line_start..content_end],
                    start_chars + count_chars(&body[line_start..start]),
                )
            } else {
                let original = lines.seek(line);
                let folded_line = &scratch[line_start..content_end];
                let within = original_chars(original.text, folded_line, start - line_start);
                (original.text, original.start_chars + within)
            };
            found.push(LineMatch {
                line,
                text: text.to_owned(),
                offset_chars,
            });
            from = line_end + 1;
        }
        found
    }
}

/// The next occurrence of each query at or after a position, searched
/// lazily and kept until the search moves past it.
struct Candidates<'q> {
    finders: Vec<&'q Finder<'static>>,
    next: Vec<Option<usize>>,
    searched_from: Vec<usize>,
}

impl<'q> Candidates<'q> {
    fn new(finders: &'q [Finder<'static>]) -> Self {
        // A query holding a line break can never match within one line.
        let finders: Vec<&Finder<'static>> = finders
            .iter()
            .filter(|finder| !finder.needle().contains(&b'\n'))
            .collect();
        let count = finders.len();
        Candidates {
            finders,
            next: vec![None; count],
            searched_from: vec![usize::MAX; count],
        }
    }

    fn needle_len(&self, index: usize) -> usize {
        self.finders[index].needle().len()
    }

    /// Searches query `index` again from `from`.
    fn skip(&mut self, index: usize, hay: &[u8], from: usize) {
        self.next[index] = self.finders[index].find(&hay[from..]).map(|at| at + from);
        self.searched_from[index] = from;
    }

    /// The query and position of the earliest occurrence at or after `from`.
    fn earliest(&mut self, hay: &[u8], from: usize) -> Option<(usize, usize)> {
        if from > hay.len() {
            return None;
        }
        let mut best: Option<(usize, usize)> = None;
        for index in 0..self.finders.len() {
            let stale = self.searched_from[index] == usize::MAX
                || self.next[index].is_some_and(|at| at < from);
            if stale {
                self.skip(index, hay, from);
            }
            if let Some(at) = self.next[index]
                && best.is_none_or(|(_, best_at)| at < best_at)
            {
                best = Some((index, at));
            }
        }
        best
    }
}

/// The longest run of ASCII bytes in a folded query, if any.
fn longest_ascii_run(needle: &[u8]) -> Option<&[u8]> {
    needle
        .split(|b| !b.is_ascii())
        .max_by_key(|run| run.len())
        .filter(|run| !run.is_empty())
}

/// Whether `text` holds KELVIN SIGN or `İ`, the only non-ASCII characters
/// whose lowercase form contains ASCII.
fn has_ascii_folding_char(text: &[u8]) -> bool {
    static KELVIN: OnceLock<Finder<'static>> = OnceLock::new();
    static DOTTED_I: OnceLock<Finder<'static>> = OnceLock::new();
    let kelvin = KELVIN.get_or_init(|| Finder::new("\u{212a}".as_bytes()).into_owned());
    let dotted = DOTTED_I.get_or_init(|| Finder::new("\u{130}".as_bytes()).into_owned());
    kelvin.find(text).is_some() || dotted.find(text).is_some()
}

/// Appends the folded form of `text` to `out`.
pub(crate) fn fold_into(text: &str, out: &mut String) {
    let mut rest = text;
    while !rest.is_empty() {
        // Copy the ASCII run in bulk, then fold one non-ASCII character.
        let run = rest
            .bytes()
            .position(|b| !b.is_ascii())
            .unwrap_or(rest.len());
        let start = out.len();
        out.push_str(&rest[..run]);
        out[start..].make_ascii_lowercase();
        rest = &rest[run..];
        let mut chars = rest.chars();
        if let Some(c) = chars.next() {
            for lower in c.to_lowercase() {
                out.push(if lower == 'ς' { 'σ' } else { lower });
            }
            rest = chars.as_str();
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
    body: &'a str,
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
            body,
            rest: body,
            line: 1,
            start_chars: 0,
        }
    }

    /// The code points before byte `offset` (never backwards; same-layout
    /// haystacks only, where byte offsets are the body's own).
    fn chars_before(&mut self, offset: usize) -> usize {
        let consumed = self.body.len() - self.rest.len();
        self.start_chars += count_chars(&self.rest[..offset - consumed]);
        self.rest = &self.body[offset..];
        self.start_chars
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
    fn only_two_non_ascii_characters_lowercase_to_ascii() {
        let folding: Vec<char> = ('\u{80}'..=char::MAX)
            .filter(|c| c.to_lowercase().any(|lower| lower.is_ascii()))
            .collect();
        assert_eq!(folding, ['\u{130}', '\u{212a}']);
    }

    #[test]
    fn same_layout_and_folded_paths_agree() {
        // The first body takes the same-layout path; the İ forces folding.
        check(&["ab"], "Ünï AB\nab", &[(1, "Ünï AB", 4), (2, "ab", 7)]);
        check(&["ab"], "İ AB\nab", &[(1, "İ AB", 2), (2, "ab", 5)]);
        check(&["k"], "\u{212a}", &[(1, "\u{212a}", 0)]);
    }

    /// The pre-check on raw bytes passes every note a query matches
    /// (whatever its case, and through the two non-ASCII characters that
    /// fold to ASCII), and turns away one no query can match.
    #[test]
    fn the_raw_pre_check_passes_every_match_and_only_those() {
        let mut scratch = Vec::new();
        for (query, text, passes) in [
            ("café", "CAFÉ au lait", true),
            ("é", "É", true),
            ("ÄB", "xäb", true),
            ("k", "\u{212a}", true),
            ("i̇x", "İX", true),
            ("café", "a cup of tea", false),
            ("ab", "a\nb", false),
            ("xÄB", "a cup of tea", false),
        ] {
            let matcher = LiteralQueries::new(&[query]).expect("valid");
            let found = matcher.find_lines(text, &mut String::new());
            assert_eq!(!found.is_empty(), passes, "{query} in {text:?}");
            assert_eq!(
                matcher.could_match(text.as_bytes(), &mut scratch),
                passes,
                "{query} in {text:?}"
            );
        }
    }

    #[test]
    fn refuses_empty_queries() {
        let none: [&str; 0] = [];
        assert_eq!(
            LiteralQueries::new(&none).map(|_| ()).map_err(|e| e.code()),
            Err(RefusalCode::InvalidQuery)
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
