//! Secrets known by what names them rather than by their format: a URL's
//! password, and a value under a secret-named key (`password=`, `secret:`,
//! `api_key =`, `--token`, `Authorization: Bearer`).

use super::codec::base64_decode;
use super::formats::prefixed;
use super::shape::{generated, placeholder, random_body, word_letters};
use super::{MAX_TOKEN, Runs, SecretKind, alnum};

/// `scheme://user:password@host`, the password neither a placeholder nor
/// the user name again (`postgres:postgres` is a local default).
pub(super) fn url_password(line: &[u8], colon: usize, runs: &Runs) -> Option<SecretKind> {
    let scheme_start = (0..colon)
        .rev()
        .take(32)
        .take_while(|&at| {
            line[at].is_ascii_alphanumeric() || matches!(line[at], b'+' | b'.' | b'-')
        })
        .last()?;
    if !line[scheme_start].is_ascii_alphabetic() {
        return None;
    }
    let start = colon + 3;
    // Up to the first `/` (a password may hold `#`, `?` or `@` unescaped,
    // as people write them); the user information ends at the last `@`.
    let end = runs.run(
        line,
        start,
        |b| !(b.is_ascii_whitespace() || matches!(b, b'/' | b'"' | b'\'' | b'`' | b'<' | b'>')),
        512,
    );
    let authority = &line[start..end];
    let at = authority.iter().rposition(|&b| b == b'@')?;
    let userinfo = &authority[..at];
    let split = userinfo.iter().position(|&b| b == b':')?;
    let (user, password) = (&userinfo[..split], &userinfo[split + 1..]);
    if !real_password(user, password) {
        return None;
    }
    // A token used as the password is named for what it is.
    Some(prefixed(password, 0, &[], runs).unwrap_or(SecretKind::ConnectionString))
}

/// A password written out, as opposed to a placeholder for one.
fn real_password(user: &[u8], password: &[u8]) -> bool {
    const PLACEHOLDERS: [&[u8]; 8] = [
        b"password",
        b"passwd",
        b"pass",
        b"pwd",
        b"secret",
        b"token",
        b"pw",
        b"xxx",
    ];
    password.len() >= 4
        && password != user
        && !PLACEHOLDERS
            .iter()
            .any(|word| password.eq_ignore_ascii_case(word))
        && !placeholder(password)
        && !reference(password)
}

/// How a key names a secret, which decides how long and how random its
/// value must be to be one.
#[derive(Clone, Copy, PartialEq, Eq)]
enum KeyKind {
    /// `password`, `passwd`, `pwd`, `pass`, `passphrase`: chosen by people,
    /// so shorter.
    Password,
    /// `secret`, `api_key`, `access_key`, `private_key`, `credentials`.
    Secret,
    /// `token`, `auth`, `authorization`, `bearer`: a UUID here is often an
    /// id (a request or page token), so UUIDs pass.
    Token,
}

/// The longest key name an assignment is read back from.
const MAX_KEY: usize = 64;

pub(super) fn is_key_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'-' | b'.')
}

/// `key = value`, `key: value`, `"key": "value"`, `key is value`,
/// `--key value`, `Bearer value`, where the key names a secret and the
/// value looks generated. `start..end` is the word before `line[end]`.
pub(super) fn assignment(
    line: &[u8],
    start: usize,
    end: usize,
    following: &[u8],
    runs: &Runs,
) -> Option<SecretKind> {
    let word = &line[start..end];
    if word.len() > MAX_KEY {
        return None;
    }
    let value_start = separator(line, end, word)?;
    let (key_kind, aws) = key_kind(word)?;
    let (scheme, value_start) = value_at(line, value_start, runs);
    // A credential of a known format is named for what it is.
    if let Some(kind) = prefixed(line, value_start, following, runs) {
        return Some(kind);
    }
    let end = value_end(line, value_start, runs);
    let value = &line[value_start..end];
    // `token = make_token(...)`: code computing the value.
    if line.get(end) == Some(&b'(') {
        return None;
    }
    if scheme.is_some_and(|scheme| scheme.eq_ignore_ascii_case(b"basic")) {
        return basic_credentials(value).then_some(SecretKind::BasicAuth);
    }
    if value.len() > MAX_TOKEN || reference(value) || placeholder(value) {
        return None;
    }
    let min = if key_kind == KeyKind::Password { 8 } else { 12 };
    if value.len() < min || (key_kind == KeyKind::Token && uuid(value)) {
        return None;
    }
    if aws && value.len() == 40 && value.iter().all(|&b| alnum(b) || b == b'+' || b == b'/') {
        return random_body(value).then_some(SecretKind::AwsSecretKey);
    }
    if member_access(value) {
        return None;
    }
    let secret = match key_kind {
        // People choose passwords: under a password key, a value mixing
        // cases, or holding a digit or a symbol, is one; a lower-case word
        // is not.
        KeyKind::Password => {
            random_body(value)
                && ((value.iter().any(u8::is_ascii_uppercase)
                    && value.iter().any(u8::is_ascii_lowercase))
                    || value.iter().any(|b| !b.is_ascii_alphabetic()))
        }
        KeyKind::Secret | KeyKind::Token => generated(value),
    };
    secret.then_some(SecretKind::Assignment)
}

/// Code reading a value from somewhere, or a path: a path of identifiers
/// (`config.db.password`, `os.environ`, `std::env::var`) or of directories
/// (`/home/alice/shop`), each part short or made of words.
fn member_access(value: &[u8]) -> bool {
    let path = value.first() == Some(&b'/');
    let code = value
        .first()
        .is_some_and(|&b| b.is_ascii_alphabetic() || matches!(b, b'_' | b'$'));
    let separator = |b: &u8| {
        if path {
            *b == b'/'
        } else {
            matches!(b, b'.' | b':')
        }
    };
    let well_formed = if path {
        true
    } else {
        code && !value.windows(2).any(|pair| pair == b"..") && !value.last().is_some_and(separator)
    };
    if !well_formed || !value.iter().any(separator) {
        return false;
    }
    let identifier = |part: &[u8]| {
        part.iter()
            .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$' | b'-' | b'.'))
    };
    let wordy = |part: &[u8]| part.len() <= 3 || word_letters(part) * 5 >= part.len() * 3;
    let mut parts = value.split(separator).filter(|part| !part.is_empty());
    // After an object named in words (`config.`, `settings.`) any member
    // name is code; otherwise every part must read as words.
    let named_object = parts
        .clone()
        .next()
        .is_some_and(|first| first.len() >= 4 && word_letters(first) * 5 >= first.len() * 3);
    parts.all(|part| identifier(part) && ((named_object && !path) || wordy(part)))
}

/// Where the value starts when `line[end..]` continues `word` as an
/// assignment: `=`, `:`, `:=`, `=>` (not `==` or `::`), the word `is`, or
/// for a `--flag` or `Bearer` a space alone.
fn separator(line: &[u8], end: usize, word: &[u8]) -> Option<usize> {
    let mut at = end;
    while at < line.len() && matches!(line[at], b'"' | b'\'' | b'`') && at - end < 2 {
        at += 1;
    }
    let spaces_from = at;
    while at < line.len() && matches!(line[at], b' ' | b'\t') {
        at += 1;
    }
    let spaced = at > spaces_from;
    let rest = &line[at..];
    match rest {
        [b'=', b'=', ..] | [b':', b':', ..] => None,
        [b'=', b'>', ..] | [b':', b'=', ..] => Some(at + 2),
        [b'=', ..] | [b':', ..] => Some(at + 1),
        [b'i', b's', b' ', ..] if spaced => Some(at + 3),
        [first, ..]
            if spaced
                && !matches!(first, b'=' | b':')
                && (word.starts_with(b"--") || word.eq_ignore_ascii_case(b"bearer")) =>
        {
            Some(at)
        }
        _ => None,
    }
}

/// The words that make a `key` a secret one (`api_key`, `signingKey`); a
/// bare `key` or a `cache_key` is not.
const SECRET_KEY_QUALIFIERS: [&[u8]; 11] = [
    b"api",
    b"access",
    b"secret",
    b"private",
    b"account",
    b"auth",
    b"encryption",
    b"signing",
    b"master",
    b"app",
    b"client",
];

/// Whether `word` names a secret, and whether it names an AWS secret key.
fn key_kind(word: &[u8]) -> Option<(KeyKind, bool)> {
    let last_start = subword_start(word, word.len());
    let last = &word[last_start..];
    let previous_end = word[..last_start]
        .iter()
        .rposition(|&b| b.is_ascii_alphanumeric())
        .map_or(0, |at| at + 1);
    let previous = &word[subword_start(word, previous_end)..previous_end];
    let is = |name: &[u8]| last.eq_ignore_ascii_case(name);
    let ends = |name: &[u8]| {
        last.len() >= name.len() && last[last.len() - name.len()..].eq_ignore_ascii_case(name)
    };
    let kind =
        if ends(b"password") || ends(b"passwd") || ends(b"passphrase") || is(b"pwd") || is(b"pass")
        {
            KeyKind::Password
        } else if ends(b"secret")
            || ends(b"apikey")
            || ends(b"accesskey")
            || ends(b"secretkey")
            || ends(b"privatekey")
            || ends(b"accountkey")
            || ends(b"credential")
            || ends(b"credentials")
            || (is(b"key")
                && SECRET_KEY_QUALIFIERS
                    .iter()
                    .any(|name| previous.eq_ignore_ascii_case(name)))
        {
            KeyKind::Secret
        } else if ends(b"token") || is(b"auth") || is(b"authorization") || is(b"bearer") {
            KeyKind::Token
        } else {
            return None;
        };
    let holds = |name: &[u8]| {
        word.windows(name.len())
            .any(|window| window.eq_ignore_ascii_case(name))
    };
    let aws = kind == KeyKind::Secret && (holds(b"aws") || (holds(b"secret") && holds(b"access")));
    Some((kind, aws))
}

/// The start of the last subword of `word[..end]`: words are separated by
/// `_`, `-`, `.` and camelCase capitals (`apiKey`, `APIKey`, `DB_PASSWORD`).
fn subword_start(word: &[u8], end: usize) -> usize {
    let mut at = end;
    while at > 0 {
        let byte = word[at - 1];
        if !byte.is_ascii_alphanumeric() {
            break;
        }
        let capital_starts_word = byte.is_ascii_uppercase()
            && ((at < end && word[at].is_ascii_lowercase())
                || (at > 1 && word[at - 2].is_ascii_lowercase()));
        at -= 1;
        if capital_starts_word {
            break;
        }
    }
    at
}

/// Where the value after a separator at `start` begins: quotes skipped,
/// and an HTTP scheme word (`Bearer`, `Basic`, `Token`) set apart.
fn value_at<'a>(line: &'a [u8], start: usize, runs: &Runs) -> (Option<&'a [u8]>, usize) {
    let mut at = start;
    while at < line.len() && matches!(line[at], b' ' | b'\t' | b'"' | b'\'' | b'`') {
        at += 1;
    }
    let mut scheme = None;
    let word_end = runs.run(line, at, |b| b.is_ascii_alphabetic(), 6);
    let word = &line[at..word_end];
    if line.get(word_end) == Some(&b' ')
        && [&b"bearer"[..], b"basic", b"token"]
            .iter()
            .any(|name| word.eq_ignore_ascii_case(name))
    {
        scheme = Some(word);
        at = word_end;
        while at < line.len() && line[at] == b' ' {
            at += 1;
        }
    }
    (scheme, at)
}

/// The end of the value at `start`: the run up to a space, quote or
/// delimiter, with its base64 padding.
fn value_end(line: &[u8], start: usize, runs: &Runs) -> usize {
    let mut end = runs.run(line, start, value_byte, MAX_TOKEN);
    while end < line.len() && line[end] == b'=' && end - start <= MAX_TOKEN {
        end += 1;
    }
    end
}

fn value_byte(byte: u8) -> bool {
    byte.is_ascii_graphic()
        && !matches!(
            byte,
            b'"' | b'\''
                | b'`'
                | b','
                | b';'
                | b'('
                | b')'
                | b'['
                | b']'
                | b'{'
                | b'}'
                | b'<'
                | b'>'
                | b'|'
                | b'\\'
                | b'='
        )
}

/// `Basic <base64 of user:password>`.
fn basic_credentials(value: &[u8]) -> bool {
    let mut decoded = [0u8; 192];
    let Some(len) = base64_decode(&value[..value.len().min(256)], &mut decoded) else {
        return false;
    };
    let decoded = &decoded[..len];
    decoded.iter().all(|b| b.is_ascii_graphic() || *b == b' ')
        && decoded
            .iter()
            .position(|&b| b == b':')
            .is_some_and(|split| real_password(&decoded[..split], &decoded[split + 1..]))
}

/// A value that says where a secret lives rather than what it is: a
/// relative or home path, a URL, a secret manager's reference, a variable
/// (`$X`, `${X}`, `%X%`, an environment variable's name `OPENAI_API_KEY`).
fn reference(value: &[u8]) -> bool {
    // A value starting with `/` may be base64; a path is told apart by
    // being made of words.
    const PREFIXES: [&[u8]; 9] = [
        b"./", b"../", b"~", b"$", b"%", b"arn:", b"vault:", b"op:", b"env:",
    ];
    let env_name = value.first().is_some_and(u8::is_ascii_uppercase)
        && value.contains(&b'_')
        && value
            .iter()
            .all(|&b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
    env_name
        || PREFIXES.iter().any(|prefix| value.starts_with(prefix))
        || memchr::memmem::find(value, b"://").is_some()
        || memchr::memmem::find(value, b"${").is_some()
}

fn uuid(value: &[u8]) -> bool {
    value.len() == 36
        && value.iter().enumerate().all(|(at, &b)| match at {
            8 | 13 | 18 | 23 => b == b'-',
            _ => b.is_ascii_hexdigit(),
        })
}
