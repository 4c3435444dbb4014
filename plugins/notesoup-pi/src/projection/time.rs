//! `new Date(iso).getTime()` for the timestamps Pi writes.

/// Milliseconds since the epoch of an ISO 8601 date-time as JavaScript's
/// `Date` parses it: `YYYY-MM-DD`, optionally `THH:MM[:SS[.fff…]]` and `Z` or
/// `±HH:MM` (local time is not supported: Pi always writes UTC). An
/// unparseable text gives 0 where JavaScript gives `NaN`.
pub fn iso_to_millis(text: &str) -> i64 {
    parse(text.as_bytes()).unwrap_or(0)
}

fn parse(text: &[u8]) -> Option<i64> {
    let mut cursor = Cursor { text, at: 0 };
    let year = cursor.number(4)?;
    cursor.expect(b'-')?;
    let month = cursor.number(2)?;
    cursor.expect(b'-')?;
    let day = cursor.number(2)?;
    let (mut hour, mut minute, mut second, mut millis) = (0, 0, 0, 0);
    let mut offset_minutes = 0;
    if cursor.peek() == Some(b'T') {
        cursor.at += 1;
        hour = cursor.number(2)?;
        cursor.expect(b':')?;
        minute = cursor.number(2)?;
        if cursor.peek() == Some(b':') {
            cursor.at += 1;
            second = cursor.number(2)?;
            if cursor.peek() == Some(b'.') {
                cursor.at += 1;
                let start = cursor.at;
                while cursor.peek().is_some_and(|b| b.is_ascii_digit()) {
                    cursor.at += 1;
                }
                let digits = &text[start..cursor.at];
                if digits.is_empty() {
                    return None;
                }
                // V8 reads milliseconds from the first three digits.
                for position in 0..3 {
                    millis = millis * 10 + digits.get(position).map_or(0, |d| i64::from(d - b'0'));
                }
            }
        }
        match cursor.peek() {
            Some(b'Z') => cursor.at += 1,
            Some(sign @ (b'+' | b'-')) => {
                cursor.at += 1;
                let hours = cursor.number(2)?;
                cursor.expect(b':')?;
                let minutes = cursor.number(2)?;
                offset_minutes = (hours * 60 + minutes) * if sign == b'+' { 1 } else { -1 };
            }
            _ => return None,
        }
    }
    if cursor.at != text.len()
        || !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 24
        || minute > 59
        || second > 59
    {
        return None;
    }
    let days = days_from_civil(year, month, day);
    Some((((days * 24 + hour) * 60 + minute - offset_minutes) * 60 + second) * 1000 + millis)
}

struct Cursor<'t> {
    text: &'t [u8],
    at: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        (self.peek() == Some(byte)).then(|| self.at += 1)
    }

    fn number(&mut self, width: usize) -> Option<i64> {
        let digits = self.text.get(self.at..self.at + width)?;
        if !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        self.at += width;
        Some(
            digits
                .iter()
                .fold(0, |acc, d| acc * 10 + i64::from(d - b'0')),
        )
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month_index = (month + 9) % 12;
    let day_of_year = (153 * month_index + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use super::iso_to_millis;

    #[test]
    fn parses_like_javascript_date() {
        let cases = [
            ("2024-12-03T14:00:00.000Z", 1_733_234_400_000),
            ("1970-01-01T00:00:00.000Z", 0),
            ("2000-02-29T23:59:59.999Z", 951_868_799_999),
            ("2024-12-03T14:00:00.5Z", 1_733_234_400_500),
            ("2024-12-03T16:00:00.000+02:00", 1_733_234_400_000),
            ("2024-12-03", 1_733_184_000_000),
            ("1969-12-31T23:59:59.000Z", -1000),
            ("not a date", 0),
            ("2024-13-01T00:00:00Z", 0),
        ];
        for (text, expect) in cases {
            assert_eq!(iso_to_millis(text), expect, "{text}");
        }
    }
}
