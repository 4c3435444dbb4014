//! Case-insensitive, Unicode-aware literal matching with code-point offsets.
//!
//! Each code point is folded to one code point (simple case folding), so a
//! match position in the folded text is the same code-point position in the
//! original: offsets can be handed straight to a read window.

/// Finds the earliest occurrence of any of several literals.
#[derive(Debug, Clone)]
pub struct LiteralMatcher {
    needles: Vec<String>,
    folded: String,
}

impl LiteralMatcher {
    /// A matcher for `literals` (OR). Empty literals are the caller's to refuse.
    pub fn new<S: AsRef<str>>(literals: &[S]) -> Self {
        let mut needles = Vec::with_capacity(literals.len());
        for literal in literals {
            let mut needle = String::new();
            fold_into(literal.as_ref(), &mut needle);
            needles.push(needle);
        }
        Self {
            needles,
            folded: String::new(),
        }
    }

    /// The code-point offset of the earliest match of any literal in
    /// `haystack`, if there is one.
    pub fn earliest(&mut self, haystack: &str) -> Option<usize> {
        self.folded.clear();
        fold_into(haystack, &mut self.folded);
        let folded = self.folded.as_str();
        let byte = self
            .needles
            .iter()
            .filter_map(|needle| folded.find(needle.as_str()))
            .min()?;
        Some(if folded.is_ascii() {
            byte
        } else {
            folded[..byte].chars().count()
        })
    }
}

/// Appends the case-folded `text` to `out`, one code point per code point.
fn fold_into(text: &str, out: &mut String) {
    if text.is_ascii() {
        out.reserve(text.len());
        out.extend(
            text.bytes()
                .map(|byte| char::from(byte.to_ascii_lowercase())),
        );
        return;
    }
    out.extend(text.chars().map(fold_char));
}

/// The lower case of the upper case of `c`, when each maps to exactly one code
/// point (so `ſ`, `ς` and `K` (Kelvin) meet `s`, `σ` and `k`); otherwise `c`.
fn fold_char(c: char) -> char {
    if c.is_ascii() {
        return c.to_ascii_lowercase();
    }
    // Only cased characters (lowercase, uppercase or titlecase) have case
    // mappings; the cheap property test skips CJK, symbols and emoji.
    if !(c.is_lowercase() || c.is_uppercase() || is_titlecase(c)) {
        return c;
    }
    let upper = single(c.to_uppercase()).unwrap_or(c);
    single(upper.to_lowercase()).unwrap_or(c)
}

/// The titlecase letters (general category Lt).
fn is_titlecase(c: char) -> bool {
    matches!(
        c,
        '\u{01C5}'
            | '\u{01C8}'
            | '\u{01CB}'
            | '\u{01F2}'
            | '\u{1F88}'..='\u{1F8F}'
            | '\u{1F98}'..='\u{1F9F}'
            | '\u{1FA8}'..='\u{1FAF}'
            | '\u{1FBC}'
            | '\u{1FCC}'
            | '\u{1FFC}'
    )
}

fn single(mut chars: impl Iterator<Item = char>) -> Option<char> {
    match (chars.next(), chars.next()) {
        (Some(only), None) => Some(only),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(literals: &[&str], haystack: &str, expect: Option<usize>) {
        assert_eq!(
            LiteralMatcher::new(literals).earliest(haystack),
            expect,
            "{literals:?} in {haystack:?}"
        );
    }

    #[test]
    fn matches_case_insensitively_with_code_point_offsets() {
        check(&["WORLD"], "hello world", Some(6));
        check(&["zzz", "LO"], "hello", Some(3));
        check(&["b", "a"], "xab", Some(1));
        check(&["ÉTÉ"], "😀 un été", Some(5));
        check(&["straße"], "STRAẞE", Some(0));
        check(&["ΣΟΦΟΣ"], "σοφος", Some(0));
        check(&["ς"], "Σ", Some(0));
        check(&["kelvin"], "\u{212A}ELVIN", Some(0));
        check(&["ǆ"], "xǅ", Some(1));
        check(&["日本"], "の日本語", Some(1));
        check(&["x"], "abc", None);
    }
}
