//! Doctor's raw frontmatter line scanner. Unlike the notes codec it keeps
//! what the codec forgives: an unclosed block, duplicate keys, raw values.

/// The frontmatter block of a note as written on disk.
#[derive(Debug)]
pub(crate) enum RawFrontmatter<'a> {
    /// The first line is not `---`.
    Missing,
    /// No later `---` line closes the block.
    Unclosed,
    /// A closed block.
    Block {
        /// Key lines in file order, duplicates included.
        fields: Vec<RawField<'a>>,
        /// The text after the closing line (one blank line dropped).
        body: &'a str,
    },
}

/// One `key: value` line.
#[derive(Debug)]
pub(crate) struct RawField<'a> {
    pub key: &'a str,
    /// The value with surrounding whitespace trimmed, undecoded.
    pub raw: &'a str,
}

impl RawField<'_> {
    /// The scalar as the codec reads it: JSON first (strings unwrapped),
    /// then surrounding quotes stripped, else the trimmed text.
    pub(super) fn value(&self) -> String {
        match serde_json::from_str::<serde_json::Value>(self.raw) {
            Ok(serde_json::Value::String(text)) => text,
            Ok(_) => self.raw.to_owned(),
            Err(_) => strip_quotes(self.raw).to_owned(),
        }
    }
}

fn strip_quotes(raw: &str) -> &str {
    for quote in ['"', '\''] {
        if let Some(inner) = raw
            .strip_prefix(quote)
            .and_then(|rest| rest.strip_suffix(quote))
        {
            return inner;
        }
    }
    raw
}

/// Scans the frontmatter of `text` (a leading BOM is skipped, CRLF accepted).
pub(crate) fn scan(text: &str) -> RawFrontmatter<'_> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = LineIter { rest: text };
    if lines.next() != Some("---") {
        return RawFrontmatter::Missing;
    }
    let mut fields = Vec::new();
    loop {
        let Some(line) = lines.next() else {
            return RawFrontmatter::Unclosed;
        };
        if line == "---" {
            break;
        }
        if let Some(field) = key_line(line) {
            fields.push(field);
        }
    }
    let body = lines.rest;
    let body = body
        .strip_prefix("\r\n")
        .or_else(|| body.strip_prefix('\n'))
        .unwrap_or(body);
    RawFrontmatter::Block { fields, body }
}

/// `^([A-Za-z_][A-Za-z0-9_-]*):(.*)$`
fn key_line(line: &str) -> Option<RawField<'_>> {
    let (key, raw) = line.split_once(':')?;
    let mut chars = key.chars();
    let first = chars.next()?;
    let valid = (first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    valid.then(|| RawField {
        key,
        raw: raw.trim(),
    })
}

/// Lines without their `\n` / `\r\n` ending; `rest` is what follows.
struct LineIter<'a> {
    rest: &'a str,
}

impl<'a> Iterator for LineIter<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        if self.rest.is_empty() {
            return None;
        }
        let (line, rest) = match self.rest.split_once('\n') {
            Some((line, rest)) => (line, rest),
            None => (self.rest, ""),
        };
        self.rest = rest;
        Some(line.strip_suffix('\r').unwrap_or(line))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(text: &str) -> Option<Vec<(String, String)>> {
        match scan(text) {
            RawFrontmatter::Block { fields, .. } => Some(
                fields
                    .iter()
                    .map(|field| (field.key.to_owned(), field.value()))
                    .collect(),
            ),
            _ => None,
        }
    }

    #[test]
    fn scans_keys_values_and_body() {
        let text = "\u{feff}---\r\norigin: self\r\ntitle: \"a: b\"\r\nnote: 'x'\r\nlist:\r\n- a\r\ncount: 3\r\n---\r\n\r\nbody\r\n";
        assert_eq!(
            keys(text),
            Some(vec![
                ("origin".into(), "self".into()),
                ("title".into(), "a: b".into()),
                ("note".into(), "x".into()),
                ("list".into(), "".into()),
                ("count".into(), "3".into()),
            ])
        );
        let RawFrontmatter::Block { body, .. } = scan(text) else {
            panic!("closed block expected");
        };
        assert_eq!(body, "body\r\n");
    }

    #[test]
    fn tells_missing_from_unclosed() {
        assert!(matches!(scan("no frontmatter"), RawFrontmatter::Missing));
        assert!(matches!(scan(""), RawFrontmatter::Missing));
        assert!(matches!(scan("---\nkey: v\n"), RawFrontmatter::Unclosed));
        assert!(matches!(scan("---\n---"), RawFrontmatter::Block { .. }));
        assert!(matches!(
            scan("---\n1bad: x\n---\n"),
            RawFrontmatter::Block { fields, .. } if fields.is_empty()
        ));
    }
}
