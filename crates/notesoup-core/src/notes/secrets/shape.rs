//! Whether a value is generated (a secret) or written (a word, an
//! identifier, a placeholder): entropy, runs and words, with no
//! dictionary.

use super::hex;

/// A stand-in for a secret: a documentation example, a mask, a prompt to
/// fill in.
pub(super) fn placeholder(value: &[u8]) -> bool {
    const WORDS: [&[u8]; 10] = [
        b"example",
        b"changeme",
        b"change_me",
        b"placeholder",
        b"redacted",
        b"xxxx",
        b"****",
        b"your_",
        b"your-",
        b"password",
    ];
    let first = value.first().copied().unwrap_or(b' ');
    value.starts_with(b"<")
        || value.iter().all(|&b| b == first)
        || WORDS.iter().any(|word| {
            value
                .windows(word.len())
                .any(|window| window.eq_ignore_ascii_case(word))
        })
}

/// Whether a token body after a known prefix is a real one rather than a
/// stand-in: enough entropy for its length, no placeholder word, not a run
/// of consecutive characters (`abcdefghijklmnopqrstuvwxyz0123456789`). The
/// prefix and shape already say what it is.
pub(super) fn random_body(text: &[u8]) -> bool {
    if text.len() < 8 || placeholder(text) || !entropic(text) {
        return false;
    }
    let consecutive = text
        .windows(2)
        .filter(|pair| pair[1] == pair[0].wrapping_add(1))
        .count();
    consecutive * 2 < text.len()
}

/// Whether a value without a known prefix looks machine-generated: a
/// random body ([`random_body`]) that is not made of words. Hex with digits
/// and letters, and upper-case base32 with digits (a TOTP seed), are
/// generated as they stand; anything else is when under 60% of it is
/// words: letter runs of 3 or more holding a vowel, split at separators,
/// digits and camelCase capitals. Identifiers (`getSecretToken`,
/// `v2-session-store`, `sha256WithRSAEncryption`) are nearly all words;
/// random base62 or base64 has few.
pub(super) fn generated(text: &[u8]) -> bool {
    if !random_body(text) {
        return false;
    }
    let digits = text.iter().any(u8::is_ascii_digit);
    let hex_mixed = digits && hex(text) && text.iter().any(u8::is_ascii_alphabetic);
    let base32 = digits
        && text.len() >= 16
        && text
            .iter()
            .all(|&b| b.is_ascii_uppercase() || (b'2'..=b'7').contains(&b));
    let words = word_letters(text);
    // Long base64 with all three classes: random letters form the odd
    // word, but not four fifths of it.
    let base64 = digits
        && text.len() >= 24
        && text.iter().any(u8::is_ascii_uppercase)
        && text.iter().any(u8::is_ascii_lowercase)
        && text
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='))
        && words * 5 < text.len() * 4;
    hex_mixed || base32 || base64 || words * 5 < text.len() * 3
}

/// Words of code without a vowel, or too short to tell by their vowels.
const ABBREVIATIONS: [&[u8]; 40] = [
    b"api", b"cfg", b"cmd", b"crc", b"css", b"ctx", b"db", b"dir", b"dns", b"dst", b"env", b"fn",
    b"gpg", b"html", b"http", b"https", b"id", b"ip", b"js", b"json", b"jwt", b"lib", b"msg",
    b"num", b"pkg", b"rsa", b"sha", b"sql", b"src", b"ssh", b"ssl", b"std", b"str", b"tcp", b"tls",
    b"tmp", b"to", b"url", b"utf", b"xml",
];

/// How many of `text`'s bytes are in words: runs of 3 or more letters, a
/// quarter of them vowels (`y` counts), or a known abbreviation. A run ends
/// at anything but a letter, where a lower-case letter meets a capital
/// (`getSecret`), and where an acronym's last capital starts a word
/// (`XMLHttp`). Random letters are vowels a little less often, and rarely
/// in a long run.
pub(super) fn word_letters(text: &[u8]) -> usize {
    let vowel = |b: u8| {
        matches!(
            b.to_ascii_lowercase(),
            b'a' | b'e' | b'i' | b'o' | b'u' | b'y'
        )
    };
    let (mut total, mut start, mut vowels) = (0, 0, 0);
    for at in 0..=text.len() {
        let byte = text.get(at).copied();
        let splits = match byte {
            Some(b) if b.is_ascii_alphabetic() => {
                at > start
                    && ((b.is_ascii_uppercase() && text[at - 1].is_ascii_lowercase())
                        || (b.is_ascii_uppercase()
                            && text[at - 1].is_ascii_uppercase()
                            && text.get(at + 1).is_some_and(u8::is_ascii_lowercase)))
            }
            _ => true,
        };
        if splits {
            let len = at - start;
            let run = &text[start..at];
            if (len >= 3 && vowels * 4 >= len)
                || ABBREVIATIONS
                    .iter()
                    .any(|word| run.eq_ignore_ascii_case(word))
            {
                total += len;
            }
            start = if byte.is_some_and(|b| b.is_ascii_alphabetic()) {
                at
            } else {
                at + 1
            };
            vowels = 0;
        }
        if let Some(b) = byte.filter(u8::is_ascii_alphabetic) {
            vowels += usize::from(vowel(b));
        }
    }
    total
}

/// Enough entropy for `text`'s length: 3 bits a character from 16
/// characters on, a bit under the most a shorter text can carry (random
/// short text repeats a character or two).
fn entropic(text: &[u8]) -> bool {
    entropy(text) >= ((text.len() as f64).log2() - 1.0).min(3.0)
}

/// Shannon entropy in bits per byte.
fn entropy(text: &[u8]) -> f64 {
    let mut counts = [0u32; 256];
    for &byte in text {
        counts[usize::from(byte)] += 1;
    }
    let total = text.len().max(1) as f64;
    counts
        .iter()
        .filter(|&&count| count > 0)
        .map(|&count| {
            let p = f64::from(count) / total;
            -p * p.log2()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_brackets_one_repeated_character_or_a_stand_in_word() {
        for value in ["<k29Qp7Lm3xZ>", "zzzzzzzzzz", "k29EXAMPLEqp7L", "YOUR-key"] {
            assert!(placeholder(value.as_bytes()), "{value}");
        }
        for value in ["k29Qp7Lm3xZw", "zzzzzzzzzy", "k29Qp<7Lm3"] {
            assert!(!placeholder(value.as_bytes()), "{value}");
        }
    }

    /// A random body is at least 8 characters, no placeholder, entropic for
    /// its length, and under half consecutive pairs.
    #[test]
    fn a_random_body_is_long_entropic_and_not_a_run() {
        let body = |value: &str| random_body(value.as_bytes());
        assert!(body("k2Jx9Qz4"));
        assert!(!body("k2Jx9Qz"), "under 8 characters");
        assert!(!body("k29EXAMPLEqp7L"), "a placeholder");
        assert!(!body("a1a1a1a1b2b2b2b2"), "2 bits a character");
        // 4 of its 7 pairs are consecutive (ab, bc, cd, de): half of 8.
        assert!(!body("abcdeXq9"), "a run");
        assert!(body("abcdXq9k"), "3 consecutive pairs");
    }

    #[test]
    fn words_are_runs_split_at_separators_digits_and_capitals() {
        let words = |value: &str| word_letters(value.as_bytes());
        // XML (an abbreviation), Http, Request.
        assert_eq!(words("XMLHttpRequest"), 14);
        assert_eq!(words("getSecretToken"), 14);
        // session, store; not v.
        assert_eq!(words("v2-session-store"), 12);
        assert_eq!(words("2lemon"), 5);
        assert_eq!(words("xq4zk8w"), 0);
    }

    /// Each way a value counts as generated, and the text just short of it.
    #[test]
    fn generated_values_are_hex_base32_base64_or_few_words() {
        let cases = [
            // Hex with digits and letters, though 78% words.
            ("cab1fed2bad3face4deaf5bead6", true),
            // Upper-case base32 with digits, though 80% words...
            ("MOVE2TOWN3HOME4ROPE5LIME6", true),
            // ... and with digits outside base32's.
            ("MOVE8TOWN9HOME0ROPE1LIME8", false),
            // Base64 of all three classes, 77% words...
            ("Lemon7Grape2Melon9Peach4Xq", true),
            // ... 80% words,
            ("Lemon7Grape2Melon9Peach4X", false),
            // ... without capitals,
            ("lemon7grape2melon9peach4xq", false),
            // ... or with a byte outside base64's.
            ("Lemon7Grape2Melon9Peach4-q", false),
            // Under 60% words, and exactly 60%.
            ("lemon7grape2melon9xq4zk8wb", true),
            ("lemon7grape2melon9xq4zk8w", false),
            // An identifier of words and digits.
            ("session2store3handler4value", false),
        ];
        for (value, generated_now) in cases {
            assert_eq!(generated(value.as_bytes()), generated_now, "{value}");
        }
    }
}
