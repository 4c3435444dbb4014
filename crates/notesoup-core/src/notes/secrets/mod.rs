//! The credential guard: a note whose text or address holds a credential is
//! refused, so a key pasted into a conversation never becomes a durable,
//! booted, Git-audited note. The agent is told to store a reference (where
//! the secret lives) instead.
//!
//! Detection is one pass over each line, with no regular expressions and no
//! backtracking: every look-ahead is bounded, so the cost is linear in the
//! text. It rests on structure, not on randomness alone:
//!
//! - credentials with a published format are recognised by their prefix,
//!   length and alphabet, and by their checksum where the format has one
//!   (GitHub's and npm's CRC32, age's bech32) or by decoding where the
//!   format is encoded (a JWT's header, a Discord bot token's user id, a
//!   base64-wrapped PEM block);
//! - a private key is a `BEGIN … PRIVATE KEY` header followed by its body;
//! - a URL's password is read from its user information;
//! - anything else is refused only when a key names it a secret
//!   (`password=`, `secret:`, `api_key =`, `--token`, `Authorization:
//!   Bearer`) and its value looks generated: long enough, high entropy, and
//!   not word-shaped (references such as paths, URLs, environment variable
//!   names and `${…}` placeholders pass).
//!
//! The examples the vendors print in their documentation (AWS's
//! `AKIAIOSFODNN7EXAMPLE`, Stripe's sample test keys, jwt.io's sample token)
//! pass: they are public on purpose.

mod codec;
mod formats;
mod keyed;
mod shape;

use std::cell::Cell;
use std::fmt;

use formats::prefixed;
use keyed::{assignment, is_key_byte, url_password};

/// What kind of credential a line holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SecretKind {
    /// A PEM `-----BEGIN … PRIVATE KEY-----` block (also base64-wrapped, as
    /// in a Kubernetes secret), or a PuTTY private key file.
    PrivateKey,
    /// An AWS access key id (`AKIA`, `ASIA`, `ABIA`, `ACCA`, `A3T…` and 16
    /// base32 characters).
    AwsAccessKey,
    /// An AWS secret access key (40 base64 characters named as one).
    AwsSecretKey,
    /// A GitHub token: `ghp_`/`gho_`/`ghu_`/`ghs_`/`ghr_` with a valid
    /// CRC32, or a fine-grained `github_pat_`.
    GitHubToken,
    /// A GitLab token (`glpat-`, `gldt-`, `glrt-`, … and runner
    /// registration tokens).
    GitLabToken,
    /// A Slack token (`xoxb-`, `xoxp-`, `xapp-`, …).
    SlackToken,
    /// A Slack incoming-webhook URL.
    SlackWebhook,
    /// A Discord bot token (its first part encodes the bot's user id).
    DiscordBotToken,
    /// A Discord webhook URL.
    DiscordWebhook,
    /// A Telegram bot token (`<bot id>:<35 characters>`).
    TelegramBotToken,
    /// A Stripe secret or restricted key, or a webhook signing secret.
    StripeKey,
    /// An Anthropic API or OAuth key (`sk-ant-`).
    AnthropicKey,
    /// An OpenAI API key (`sk-proj-`, `sk-svcacct-`, `sk-admin-`, or one
    /// holding OpenAI's `T3BlbkFJ` marker).
    OpenAiKey,
    /// Another provider's `sk-` API key (DeepSeek and most OpenAI-compatible
    /// services).
    SkApiKey,
    /// A Google API key (`AIza…`).
    GoogleApiKey,
    /// A Google OAuth client secret (`GOCSPX-`) or access token (`ya29.`).
    GoogleOAuth,
    /// An npm token (`npm_` with a valid CRC32).
    NpmToken,
    /// A PyPI upload token.
    PyPiToken,
    /// A Hugging Face token (`hf_`).
    HuggingFaceToken,
    /// A SendGrid key (`SG.….…`).
    SendGridKey,
    /// A Shopify access token or shared secret (`shpat_`, `shpss_`, …).
    ShopifyToken,
    /// A DigitalOcean token (`dop_v1_`, `doo_v1_`, `dor_v1_`).
    DigitalOceanToken,
    /// A HashiCorp Vault token (`hvs.`, `hvb.`).
    VaultToken,
    /// An age secret key (`AGE-SECRET-KEY-1…` with a valid bech32 checksum).
    AgeSecretKey,
    /// A signed JSON Web Token (`eyJ….eyJ….…`, its header naming an `alg`).
    Jwt,
    /// A URL whose user information holds a password
    /// (`postgres://app:…@db/shop`).
    ConnectionString,
    /// `Authorization: Basic …` whose decoded value holds a password.
    BasicAuth,
    /// `password=`, `secret:`, `api_key=`, `token` … with a generated value.
    Assignment,
}

impl SecretKind {
    #[cfg(test)]
    /// Every kind, in the order of the documentation.
    pub(crate) const ALL: [SecretKind; 28] = [
        Self::PrivateKey,
        Self::AwsAccessKey,
        Self::AwsSecretKey,
        Self::GitHubToken,
        Self::GitLabToken,
        Self::SlackToken,
        Self::SlackWebhook,
        Self::DiscordBotToken,
        Self::DiscordWebhook,
        Self::TelegramBotToken,
        Self::StripeKey,
        Self::AnthropicKey,
        Self::OpenAiKey,
        Self::SkApiKey,
        Self::GoogleApiKey,
        Self::GoogleOAuth,
        Self::NpmToken,
        Self::PyPiToken,
        Self::HuggingFaceToken,
        Self::SendGridKey,
        Self::ShopifyToken,
        Self::DigitalOceanToken,
        Self::VaultToken,
        Self::AgeSecretKey,
        Self::Jwt,
        Self::ConnectionString,
        Self::BasicAuth,
        Self::Assignment,
    ];

    /// The kind as the refusal names it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::PrivateKey => "private key",
            Self::AwsAccessKey => "AWS access key",
            Self::AwsSecretKey => "AWS secret access key",
            Self::GitHubToken => "GitHub token",
            Self::GitLabToken => "GitLab token",
            Self::SlackToken => "Slack token",
            Self::SlackWebhook => "Slack webhook URL",
            Self::DiscordBotToken => "Discord bot token",
            Self::DiscordWebhook => "Discord webhook URL",
            Self::TelegramBotToken => "Telegram bot token",
            Self::StripeKey => "Stripe key",
            Self::AnthropicKey => "Anthropic API key",
            Self::OpenAiKey => "OpenAI API key",
            Self::SkApiKey => "API key (sk-…)",
            Self::GoogleApiKey => "Google API key",
            Self::GoogleOAuth => "Google OAuth secret or token",
            Self::NpmToken => "npm token",
            Self::PyPiToken => "PyPI token",
            Self::HuggingFaceToken => "Hugging Face token",
            Self::SendGridKey => "SendGrid key",
            Self::ShopifyToken => "Shopify token",
            Self::DigitalOceanToken => "DigitalOcean token",
            Self::VaultToken => "Vault token",
            Self::AgeSecretKey => "age secret key",
            Self::Jwt => "JSON Web Token",
            Self::ConnectionString => "connection string with a password",
            Self::BasicAuth => "HTTP basic credentials",
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
    let runs = Runs::default();
    let bytes = text.as_bytes();
    let mut start = 0;
    let mut line = 1;
    loop {
        let end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |at| start + at);
        let following = bytes.get(end + 1..).unwrap_or_default();
        if let Some(kind) = scan_line(trim_cr(&bytes[start..end]), following, &runs) {
            return Some(SecretFinding { line, kind });
        }
        if end >= bytes.len() {
            return None;
        }
        start = end + 1;
        line += 1;
    }
}

fn trim_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// The longest token body read past a prefix: longer runs are not the
/// tokens looked for, and the cap keeps every look-ahead bounded.
const MAX_TOKEN: usize = 256;

/// One pass over `line`: at each token start a prefixed credential, at
/// each `://` a URL's password, at each word end a secret-named key.
fn scan_line(line: &[u8], following: &[u8], runs: &Runs) -> Option<SecretKind> {
    let mut word_start: Option<usize> = None;
    // A token starts at the line's start, after a byte that is not a
    // letter or digit, or after a `\n`-style escape (a key inside a JSON
    // string).
    let mut token_start = true;
    let mut after_backslash = false;
    for (at, &byte) in line.iter().enumerate() {
        if token_start && let Some(kind) = prefixed(line, at, following, runs) {
            return Some(kind);
        }
        if byte.is_ascii_alphanumeric() {
            word_start.get_or_insert(at);
            token_start = after_backslash && matches!(byte, b'n' | b'r' | b't');
            after_backslash = false;
            continue;
        }
        token_start = true;
        after_backslash = byte == b'\\';
        if byte == b':'
            && line[at + 1..].starts_with(b"//")
            && let Some(kind) = url_password(line, at, runs)
        {
            return Some(kind);
        }
        if is_key_byte(byte) {
            word_start.get_or_insert(at);
        } else if let Some(start) = word_start.take()
            && let Some(kind) = assignment(line, start, at, following, runs)
        {
            return Some(kind);
        }
    }
    None
}

fn alnum(byte: u8) -> bool {
    byte.is_ascii_alphanumeric()
}

fn url_safe(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-'
}

fn url_safe_or_dot(byte: u8) -> bool {
    url_safe(byte) || byte == b'.'
}

fn base64_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'+' | b'/' | b'-' | b'_')
}

fn hex(bytes: &[u8]) -> bool {
    bytes.iter().all(u8::is_ascii_hexdigit)
}

/// The longest look-ahead read without [`Runs`]' memory.
const SHORT_RUN: usize = 64;

/// The runs of each byte class read so far in the text being scanned. A
/// candidate token starting inside a run already read (`sk-sk-sk-…`, where
/// every `s` may start a key) finds where the run ends at once, so each
/// run is read once per class and the scan stays linear. Only slices of
/// the one text being scanned are ever passed in.
#[derive(Default)]
struct Runs {
    memos: [Cell<RunMemo>; 8],
    next: Cell<usize>,
}

/// One run read: its byte class (the class function's address), its start
/// and end addresses, and whether it stopped at the end of the slice it
/// was read in (then it may go on in a longer slice).
#[derive(Clone, Copy, Default)]
struct RunMemo {
    class: usize,
    start: usize,
    end: usize,
    cut: bool,
}

impl Runs {
    /// The end of the run of `allowed` bytes in `s` from `from`, reading at
    /// most `cap` of them (a longer run is reported as `from + cap + 1`,
    /// too long for any caller).
    fn run(&self, s: &[u8], from: usize, allowed: fn(u8) -> bool, cap: usize) -> usize {
        let limit = s.len().min(from.saturating_add(cap).saturating_add(1));
        if from >= s.len() {
            return from.min(s.len());
        }
        // A short look-ahead costs less than a lookup.
        if cap <= SHORT_RUN {
            let mut end = from;
            while end < limit && allowed(s[end]) {
                end += 1;
            }
            return end;
        }
        let base = s.as_ptr() as usize;
        let class = allowed as usize;
        let (at, slice_end) = (base + from, base + s.len());
        for memo in &self.memos {
            let memo = memo.get();
            if memo.class == class
                && memo.start <= at
                && at < memo.end
                && (!memo.cut || memo.end == slice_end)
            {
                return (memo.end - base).min(limit);
            }
        }
        let mut end = from;
        while end < s.len() && allowed(s[end]) {
            end += 1;
        }
        if end > from {
            let slot = self.next.get();
            self.memos[slot].set(RunMemo {
                class,
                start: at,
                end: base + end,
                cut: end == s.len(),
            });
            self.next.set((slot + 1) % self.memos.len());
        }
        end.min(limit)
    }

    /// The body after `prefix` when `s` starts with it: the run of
    /// `allowed` bytes, its length within `min..=max`.
    fn body<'a>(
        &self,
        s: &'a [u8],
        prefix: &[u8],
        allowed: fn(u8) -> bool,
        min: usize,
        max: usize,
    ) -> Option<&'a [u8]> {
        if !s.starts_with(prefix) {
            return None;
        }
        let end = self.run(s, prefix.len(), allowed, max);
        let found = &s[prefix.len()..end];
        (min..=max).contains(&found.len()).then_some(found)
    }

    /// [`Runs::body`] after the first of `prefixes` that `s` starts with.
    fn body_of<'a>(
        &self,
        s: &'a [u8],
        prefixes: &[&[u8]],
        allowed: fn(u8) -> bool,
        min: usize,
        max: usize,
    ) -> Option<&'a [u8]> {
        prefixes
            .iter()
            .find_map(|prefix| self.body(s, prefix, allowed, min, max))
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::{Runs, alnum, base64_byte, find_secret, url_safe, url_safe_or_dot};

    /// The end of the run of `allowed` bytes in `s` from `from`, at most
    /// `cap + 1` of them, read byte by byte.
    fn plain_run(s: &[u8], from: usize, allowed: fn(u8) -> bool, cap: usize) -> usize {
        let limit = s.len().min(from.saturating_add(cap).saturating_add(1));
        let mut end = from.min(s.len());
        while end < limit && allowed(s[end]) {
            end += 1;
        }
        end
    }

    const CLASSES: [fn(u8) -> bool; 4] = [alnum, url_safe, url_safe_or_dot, base64_byte];

    #[test]
    fn the_byte_classes_take_what_their_names_say() {
        let taken = |class: fn(u8) -> bool| -> String {
            (b' '..=b'~')
                .filter(|byte| !byte.is_ascii_alphanumeric() && class(*byte))
                .map(char::from)
                .collect()
        };
        assert_eq!(taken(alnum), "");
        assert_eq!(taken(url_safe), "-_");
        assert_eq!(taken(url_safe_or_dot), "-._");
        assert_eq!(taken(base64_byte), "+-/_");
    }

    /// A private key's body is looked for in the eight lines after its
    /// header (PEM header fields and blank lines passed over), not further.
    #[test]
    fn a_private_key_s_body_is_looked_for_in_the_eight_lines_after_its_header() {
        let body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7Vq3Zx";
        for (fields, found) in [(0, true), (7, true), (8, false)] {
            let text = format!(
                "-----BEGIN PRIVATE KEY-----\n{}{body}\n-----END PRIVATE KEY-----\n",
                "Proc-Type: 4,ENCRYPTED\n".repeat(fields)
            );
            assert_eq!(find_secret(&text).is_some(), found, "{fields} fields");
        }
    }

    /// A run read to the end of a shorter slice of the text is not taken
    /// for the run in a longer one, where it goes on.
    #[test]
    fn a_run_cut_by_its_slice_s_end_is_read_on_in_a_longer_slice() {
        let text = [b'a'; 200];
        let runs = Runs::default();
        assert_eq!(runs.run(&text[..100], 10, alnum, 1000), 100);
        assert_eq!(runs.run(&text, 20, alnum, 1000), 200);
        // Within the same slice the memo stands.
        assert_eq!(runs.run(&text, 30, alnum, 1000), 200);
    }

    proptest! {
        /// The memo of runs read never changes an answer: any sequence of
        /// reads, of any class, cap and start, in slices of one text
        /// (ending early or not), gives the ends a plain read gives.
        #[test]
        fn runs_read_through_the_memo_end_where_a_plain_read_ends(
            text in proptest::collection::vec(prop::sample::select(b"aZ9-_.+/ ".to_vec()), 0..400),
            reads in proptest::collection::vec((0usize..420, 0usize..420, 0usize..4, prop::sample::select(vec![0usize, 8, 64, 65, 200, 1000])), 1..40),
        ) {
            let runs = Runs::default();
            for (start, end, class, cap) in reads {
                let end = end.clamp(start.min(text.len()), text.len());
                let start = start.min(end);
                let s = &text[start..end];
                let from = (end - start) / 3;
                let class = CLASSES[class];
                prop_assert_eq!(runs.run(s, from, class, cap), plain_run(s, from, class, cap));
            }
        }
    }
}
