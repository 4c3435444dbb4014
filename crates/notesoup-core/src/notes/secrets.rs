//! The credential guard: a note write whose content holds a credential is
//! refused, so a key pasted into a conversation never becomes a durable,
//! booted, Git-audited note. The agent is told to store a reference (where
//! the secret lives) instead.
//!
//! Detection is a single pass over the lines with no regular expressions:
//! private key blocks, tokens with a well-known prefix and shape, JWTs, and
//! `password=`/`secret:`-style assignments whose value looks random. The
//! rules lean towards precision: hashes, UUIDs, base64 images and
//! placeholders pass.

use std::fmt;

/// What kind of credential a line holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SecretKind {
    /// `-----BEGIN … PRIVATE KEY-----`.
    PrivateKey,
    /// An AWS access key id (`AKIA…`, `ASIA…`).
    AwsAccessKey,
    /// A GitHub token (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, `github_pat_`).
    GitHubToken,
    /// A GitLab personal access token (`glpat-`).
    GitLabToken,
    /// A Slack token (`xoxb-`, `xoxp-`, …).
    SlackToken,
    /// A Stripe live key (`sk_live_`, `rk_live_`).
    StripeKey,
    /// An Anthropic API key (`sk-ant-`).
    AnthropicKey,
    /// An OpenAI API key (`sk-…`, `sk-proj-…`).
    OpenAiKey,
    /// A Google API key (`AIza…`).
    GoogleApiKey,
    /// An npm token (`npm_`).
    NpmToken,
    /// A PyPI upload token (`pypi-AgEIcHlwaS5vcmc…`).
    PyPiToken,
    /// A Hugging Face token (`hf_`).
    HuggingFaceToken,
    /// A SendGrid key (`SG.….…`).
    SendGridKey,
    /// A JSON Web Token (`eyJ….eyJ….…`).
    Jwt,
    /// `password=`, `secret:`, `api_key=`, … with a random-looking value.
    Assignment,
}

impl SecretKind {
    /// The kind as the refusal names it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::PrivateKey => "private key",
            Self::AwsAccessKey => "AWS access key",
            Self::GitHubToken => "GitHub token",
            Self::GitLabToken => "GitLab token",
            Self::SlackToken => "Slack token",
            Self::StripeKey => "Stripe key",
            Self::AnthropicKey => "Anthropic API key",
            Self::OpenAiKey => "OpenAI API key",
            Self::GoogleApiKey => "Google API key",
            Self::NpmToken => "npm token",
            Self::PyPiToken => "PyPI token",
            Self::HuggingFaceToken => "Hugging Face token",
            Self::SendGridKey => "SendGrid key",
            Self::Jwt => "JSON Web Token",
            Self::Assignment => "password or secret assignment",
        }
    }
}

impl fmt::Display for SecretKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One credential found: its 1-based line and kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SecretFinding {
    /// 1-based line number in the scanned text.
    pub line: usize,
    /// What it looks like.
    pub kind: SecretKind,
}

/// The first credential in `text`, if any.
pub fn find_secret(text: &str) -> Option<SecretFinding> {
    text.lines().enumerate().find_map(|(index, line)| {
        line_secret(line).map(|kind| SecretFinding {
            line: index + 1,
            kind,
        })
    })
}

/// The credential a single line holds, if any.
pub fn line_secret(line: &str) -> Option<SecretKind> {
    if is_private_key_header(line) {
        return Some(SecretKind::PrivateKey);
    }
    tokens(line)
        .find_map(token_secret)
        .or_else(|| assignment_secret(line))
}

fn is_private_key_header(line: &str) -> bool {
    let Some(start) = line.find("-----BEGIN ") else {
        return false;
    };
    let rest = &line[start + "-----BEGIN ".len()..];
    rest.find("-----").is_some_and(|end| {
        rest[..end].ends_with("PRIVATE KEY") || rest[..end].ends_with("PRIVATE KEY BLOCK")
    })
}

/// Runs of token characters: letters, digits and `_ - . + /` (an `=`
/// separates `NAME=token`; base64 padding only ends a run).
fn tokens(line: &str) -> impl Iterator<Item = &str> {
    line.split(|c: char| !(c.is_ascii_alphanumeric() || "_-.+/".contains(c)))
        .filter(|token| token.len() >= 16)
}

fn all(text: &str, allowed: impl Fn(char) -> bool) -> bool {
    !text.is_empty() && text.chars().all(allowed)
}

fn alnum(c: char) -> bool {
    c.is_ascii_alphanumeric()
}

fn url_safe(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// A token with a well-known prefix and the shape that goes with it.
fn token_secret(token: &str) -> Option<SecretKind> {
    // Trailing sentence punctuation is not part of a token.
    let token = token.trim_end_matches(['.', '/', '+', '-']);
    let upper_or_digit = |c: char| c.is_ascii_uppercase() || c.is_ascii_digit();
    if let Some(rest) = token
        .strip_prefix("AKIA")
        .or_else(|| token.strip_prefix("ASIA"))
    {
        return (rest.len() == 16 && all(rest, upper_or_digit)).then_some(SecretKind::AwsAccessKey);
    }
    for prefix in ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"] {
        if let Some(rest) = token.strip_prefix(prefix) {
            return (rest.len() >= 36 && all(rest, alnum)).then_some(SecretKind::GitHubToken);
        }
    }
    if let Some(rest) = token.strip_prefix("github_pat_") {
        return (rest.len() >= 50 && all(rest, |c| alnum(c) || c == '_'))
            .then_some(SecretKind::GitHubToken);
    }
    if let Some(rest) = token.strip_prefix("glpat-") {
        return (rest.len() >= 20 && all(rest, url_safe)).then_some(SecretKind::GitLabToken);
    }
    for prefix in ["xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-", "xoxe-"] {
        if let Some(rest) = token.strip_prefix(prefix) {
            return (rest.len() >= 20 && all(rest, |c| alnum(c) || c == '-') && has_digit(rest))
                .then_some(SecretKind::SlackToken);
        }
    }
    for prefix in ["sk_live_", "rk_live_"] {
        if let Some(rest) = token.strip_prefix(prefix) {
            return (rest.len() >= 20 && all(rest, alnum)).then_some(SecretKind::StripeKey);
        }
    }
    if let Some(rest) = token.strip_prefix("sk-ant-") {
        return (rest.len() >= 32 && all(rest, url_safe)).then_some(SecretKind::AnthropicKey);
    }
    if let Some(rest) = token.strip_prefix("sk-") {
        let rest = rest.strip_prefix("proj-").unwrap_or(rest);
        return (rest.len() >= 32 && all(rest, url_safe) && looks_random(rest))
            .then_some(SecretKind::OpenAiKey);
    }
    if let Some(rest) = token.strip_prefix("AIza") {
        return (rest.len() == 35 && all(rest, url_safe)).then_some(SecretKind::GoogleApiKey);
    }
    if let Some(rest) = token.strip_prefix("npm_") {
        return (rest.len() == 36 && all(rest, alnum)).then_some(SecretKind::NpmToken);
    }
    if let Some(rest) = token.strip_prefix("pypi-AgEIcHlwaS5vcmc") {
        return (rest.len() >= 50 && all(rest, url_safe)).then_some(SecretKind::PyPiToken);
    }
    if let Some(rest) = token.strip_prefix("hf_") {
        return (rest.len() >= 34 && all(rest, alnum) && looks_random(rest))
            .then_some(SecretKind::HuggingFaceToken);
    }
    if let Some(rest) = token.strip_prefix("SG.") {
        let mut parts = rest.split('.');
        let (Some(a), Some(b), None) = (parts.next(), parts.next(), parts.next()) else {
            return None;
        };
        return (a.len() == 22 && b.len() == 43 && all(a, url_safe) && all(b, url_safe))
            .then_some(SecretKind::SendGridKey);
    }
    if token.starts_with("eyJ") {
        let parts: Vec<&str> = token.split('.').collect();
        return (parts.len() == 3
            && parts[1].starts_with("eyJ")
            && parts
                .iter()
                .all(|part| part.len() >= 10 && all(part, url_safe)))
        .then_some(SecretKind::Jwt);
    }
    None
}

fn has_digit(text: &str) -> bool {
    text.chars().any(|c| c.is_ascii_digit())
}

/// Names whose value is a secret when it is assigned in a note.
const SECRET_KEYS: [&str; 12] = [
    "password",
    "passwd",
    "pwd",
    "secret",
    "apikey",
    "api_key",
    "api-key",
    "token",
    "access_key",
    "accesskey",
    "private_key",
    "auth",
];

/// `key = value` / `key: value` where the key names a secret and the value
/// looks random (long, mixed character classes, high entropy) and is not a
/// placeholder.
fn assignment_secret(line: &str) -> Option<SecretKind> {
    let lower = line.to_ascii_lowercase();
    for (at, _) in lower.match_indices(['=', ':']) {
        let key = lower[..at].trim_end().trim_end_matches(['"', '\'']);
        let key_word = key
            .rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
            .next()
            .unwrap_or("");
        if !SECRET_KEYS.iter().any(|secret| key_word.ends_with(secret)) {
            continue;
        }
        let value = line[at + 1..]
            .trim_start()
            .trim_start_matches(['"', '\'', '`']);
        let value: &str = value
            .split(|c: char| c.is_whitespace() || "\"'`,;".contains(c))
            .next()
            .unwrap_or("");
        if is_secret_value(value) {
            return Some(SecretKind::Assignment);
        }
    }
    None
}

fn is_secret_value(value: &str) -> bool {
    if value.len() < 12 || value.len() > 200 {
        return false;
    }
    // Paths and URLs name where something lives; they are the references
    // the guard asks for.
    let reference =
        value.starts_with(['/', '~']) || value.starts_with("./") || value.contains("://");
    let placeholder = reference
        || value.starts_with(['<', '$', '{', '%', '*', '['])
        || value.contains("${")
        || value
            .chars()
            .all(|c| c == value.chars().next().unwrap_or(' '))
        || [
            "example",
            "changeme",
            "placeholder",
            "redacted",
            "xxxx",
            "your_",
            "your-",
        ]
        .iter()
        .any(|word| value.to_ascii_lowercase().contains(word));
    if placeholder || is_uuid(value) {
        return false;
    }
    looks_random(value)
}

/// Whether `text` mixes character classes and carries enough entropy per
/// character to be a generated secret rather than a word or a sentence.
fn looks_random(text: &str) -> bool {
    let classes = [
        text.chars().any(|c| c.is_ascii_lowercase()),
        text.chars().any(|c| c.is_ascii_uppercase()),
        text.chars().any(|c| c.is_ascii_digit()),
        text.chars().any(|c| !c.is_ascii_alphanumeric()),
    ]
    .iter()
    .filter(|&&present| present)
    .count();
    classes >= 2 && entropy(text) >= 3.0
}

/// Shannon entropy in bits per character.
fn entropy(text: &str) -> f64 {
    let mut counts = [0u32; 256];
    let mut total = 0u32;
    for byte in text.bytes() {
        counts[usize::from(byte)] += 1;
        total += 1;
    }
    let total = f64::from(total.max(1));
    counts
        .iter()
        .filter(|&&count| count > 0)
        .map(|&count| {
            let p = f64::from(count) / total;
            -p * p.log2()
        })
        .sum()
}

fn is_uuid(text: &str) -> bool {
    let groups: Vec<&str> = text.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(group, len)| group.len() == len && group.chars().all(|c| c.is_ascii_hexdigit()))
}
