//! Credentials with a published format: a prefix, a length and an
//! alphabet, and a checksum or an encoded part where the format has one.

use super::codec::{base62_checksum_valid, base64_decode, bech32_valid};
use super::shape::{generated, random_body};
use super::{MAX_TOKEN, Runs, SecretKind, alnum, base64_byte, hex, url_safe, url_safe_or_dot};

/// A credential whose first byte is at `line[at]`, chosen by that byte.
pub(super) fn prefixed(
    line: &[u8],
    at: usize,
    following: &[u8],
    runs: &Runs,
) -> Option<SecretKind> {
    let s = line.get(at..).unwrap_or_default();
    // The first two bytes name the candidates, so an ordinary word costs
    // one match.
    match (*s.first()?, s.get(1).copied().unwrap_or_default()) {
        (b'-', b'-') => private_key_block(s, following, runs),
        (b'A', b'K' | b'S' | b'B' | b'C' | b'3') => aws_access_key(s, runs),
        (b'A', b'I') => google_api_key(s, runs),
        (b'A', b'G') => age_secret_key(s, runs),
        (b'G', b'O') => google_oauth_secret(s, runs),
        (b'G', b'R') => gitlab_runner_token(s, runs),
        (b'L', b'S') => base64_private_key(s, runs),
        // The base64 of a leading digit: `MT`, `Mj`, `Mz`, `ND`, … `OT`.
        (b'M' | b'N' | b'O', b'T' | b'j' | b'z' | b'D') => discord_bot_token(s, runs),
        (b'P', b'u') => s
            .starts_with(b"PuTTY-User-Key-File-")
            .then_some(SecretKind::PrivateKey),
        (b'S', b'G') => sendgrid_key(s, runs),
        (b'd', b'o') => digitalocean_token(s, runs),
        (b'd', b'i') => discord_webhook(s, runs),
        (b'e', b'y') => jwt(s, runs),
        (b'g', b'h' | b'i') => github_token(s, runs),
        (b'g', b'l') => gitlab_token(s, runs),
        (b'h', b'f') => hugging_face_token(s, runs),
        (b'h', b'v') => vault_token(s, runs),
        (b'h', b'o') => slack_webhook(s, runs),
        (b'n', b'p') => npm_token(s, runs),
        (b'p', b'y') => pypi_token(s, runs),
        (b'r', b'k') | (b'w', b'h') => stripe_key(s, runs),
        (b's', b'k') => stripe_key(s, runs).or_else(|| sk_key(s, runs)),
        (b's', b'h') => shopify_token(s, runs),
        (b'x', b'o' | b'a') => slack_token(s, runs),
        (b'y', b'a') => google_oauth_token(s, runs),
        (b'0'..=b'9', _) => telegram_bot_token(s, runs),
        _ => None,
    }
}

/// Examples the vendors publish in their documentation: public on purpose,
/// and written into notes that explain a setup.
const DOCUMENTATION_EXAMPLES: [&[u8]; 3] = [
    b"sk_test_4eC39HqLyjWDarjtT1zdp7dc",
    b"sk_test_BQokikJOvBiI2HlWgH4olfQ2",
    // jwt.io's sample token's signature.
    b"SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
];

fn documentation_example(token: &[u8]) -> bool {
    DOCUMENTATION_EXAMPLES.contains(&token)
}

fn aws_access_key(s: &[u8], runs: &Runs) -> Option<SecretKind> {
    const PREFIXES: [&[u8]; 5] = [b"AKIA", b"ASIA", b"ABIA", b"ACCA", b"A3T"];
    if !PREFIXES.iter().any(|prefix| s.starts_with(prefix)) || runs.run(s, 0, alnum, 20) != 20 {
        return None;
    }
    let base32 = |byte: &u8| byte.is_ascii_uppercase() || (b'2'..=b'7').contains(byte);
    // `A3T` takes one more prefix character, an upper-case letter or digit.
    let prefix_ok = s[3].is_ascii_uppercase() || s[3].is_ascii_digit();
    if !prefix_ok || !s[4..20].iter().all(base32) {
        return None;
    }
    // AWS's documentation ids all end in EXAMPLE (AKIAIOSFODNN7EXAMPLE).
    (!s[..20].ends_with(b"EXAMPLE")).then_some(SecretKind::AwsAccessKey)
}

fn google_api_key(s: &[u8], runs: &Runs) -> Option<SecretKind> {
    let key = runs.body(s, b"AIza", url_safe, 35, 35)?;
    random_body(key).then_some(SecretKind::GoogleApiKey)
}

fn google_oauth_secret(s: &[u8], runs: &Runs) -> Option<SecretKind> {
    let secret = runs.body(s, b"GOCSPX-", url_safe, 24, 40)?;
    random_body(secret).then_some(SecretKind::GoogleOAuth)
}

fn google_oauth_token(s: &[u8], runs: &Runs) -> Option<SecretKind> {
    let token = runs.body(s, b"ya29.", url_safe_or_dot, 30, 2048)?;
    random_body(token).then_some(SecretKind::GoogleOAuth)
}

/// An age identity: bech32 with the human-readable part `AGE-SECRET-KEY-`,
/// 32 bytes of key and a 6-character checksum.
fn age_secret_key(s: &[u8], runs: &Runs) -> Option<SecretKind> {
    let data = runs.body(s, b"AGE-SECRET-KEY-1", alnum, 58, 58)?;
    bech32_valid(b"age-secret-key-", data).then_some(SecretKind::AgeSecretKey)
}

fn gitlab_token(s: &[u8], runs: &Runs) -> Option<SecretKind> {
    const PREFIXES: [&[u8]; 10] = [
        b"glpat-",
        b"gldt-",
        b"glrt-",
        b"glptt-",
        b"glsoat-",
        b"gloas-",
        b"glcbt-",
        b"glimt-",
        b"glft-",
        b"glagent-",
    ];
    let token = runs.body_of(s, &PREFIXES, url_safe_or_dot, 20, MAX_TOKEN)?;
    random_body(token).then_some(SecretKind::GitLabToken)
}

fn gitlab_runner_token(s: &[u8], runs: &Runs) -> Option<SecretKind> {
    let token = runs.body(s, b"GR1348941", url_safe, 20, MAX_TOKEN)?;
    random_body(token).then_some(SecretKind::GitLabToken)
}

/// `ghp_` and its kin: 30 random base62 characters and their CRC32 in 6
/// more; `github_pat_`: 22 characters, `_`, 59 characters.
fn github_token(s: &[u8], runs: &Runs) -> Option<SecretKind> {
    const PREFIXES: [&[u8]; 5] = [b"ghp_", b"gho_", b"ghu_", b"ghs_", b"ghr_"];
    if let Some(token) = runs.body_of(s, &PREFIXES, alnum, 36, 36) {
        return base62_checksum_valid(token).then_some(SecretKind::GitHubToken);
    }
    let token = runs.body(s, b"github_pat_", |b| alnum(b) || b == b'_', 82, 82)?;
    (token[22] == b'_' && random_body(token)).then_some(SecretKind::GitHubToken)
}

fn npm_token(s: &[u8], runs: &Runs) -> Option<SecretKind> {
    let token = runs.body(s, b"npm_", alnum, 36, 36)?;
    base62_checksum_valid(token).then_some(SecretKind::NpmToken)
}

fn pypi_token(s: &[u8], runs: &Runs) -> Option<SecretKind> {
    // The base64 of a macaroon's first field, naming pypi.org or
    // test.pypi.org.
    const PREFIXES: [&[u8]; 2] = [b"pypi-AgEIcHlwaS5vcmc", b"pypi-AgENdGVzdC5weXBpLm9yZw"];
    runs.body_of(s, &PREFIXES, url_safe, 50, 4096)
        .map(|_| SecretKind::PyPiToken)
}

fn hugging_face_token(s: &[u8], runs: &Runs) -> Option<SecretKind> {
    let token = runs.body(s, b"hf_", alnum, 34, 34)?;
    random_body(token).then_some(SecretKind::HuggingFaceToken)
}

fn vault_token(s: &[u8], runs: &Runs) -> Option<SecretKind> {
    let token = runs.body_of(s, &[b"hvs.", b"hvb."], url_safe, 24, MAX_TOKEN)?;
    random_body(token).then_some(SecretKind::VaultToken)
}

fn slack_token(s: &[u8], runs: &Runs) -> Option<SecretKind> {
    const PREFIXES: [&[u8]; 8] = [
        b"xoxe.xoxp-",
        b"xoxb-",
        b"xoxp-",
        b"xoxa-",
        b"xoxr-",
        b"xoxs-",
        b"xoxe-",
        b"xapp-",
    ];
    let token = runs.body_of(s, &PREFIXES, |b| alnum(b) || b == b'-', 20, MAX_TOKEN)?;
    // Numeric ids (team, user, app or version) then a random part.
    let mut parts = token.split(|&b| b == b'-');
    let has_id = parts
        .clone()
        .any(|part| !part.is_empty() && part.iter().all(u8::is_ascii_digit));
    let secret = parts.next_back().unwrap_or_default();
    (has_id && secret.len() >= 10 && random_body(secret)).then_some(SecretKind::SlackToken)
}

fn slack_webhook(s: &[u8], runs: &Runs) -> Option<SecretKind> {
    let path = runs.body_of(
        s,
        &[
            b"hooks.slack.com/services/",
            b"hooks.slack.com/workflows/",
            b"hooks.slack.com/triggers/",
        ],
        |b| url_safe(b) || b == b'/',
        20,
        MAX_TOKEN,
    )?;
    let mut parts = path.split(|&b| b == b'/');
    let secret = parts.next_back().unwrap_or_default();
    (parts.count() >= 2 && secret.len() >= 20 && random_body(secret))
        .then_some(SecretKind::SlackWebhook)
}

fn discord_webhook(s: &[u8], runs: &Runs) -> Option<SecretKind> {
    let path = runs.body_of(
        s,
        &[
            b"discord.com/api/webhooks/",
            b"discordapp.com/api/webhooks/",
        ],
        |b| url_safe(b) || b == b'/',
        60,
        MAX_TOKEN,
    )?;
    let (id, token) = path.split_at(path.iter().position(|&b| b == b'/')?);
    let token = &token[1..];
    (id.len() >= 15 && id.iter().all(u8::is_ascii_digit) && token.len() >= 60 && random_body(token))
        .then_some(SecretKind::DiscordWebhook)
}

/// `<base64 of the bot's numeric user id>.<6>.<27 or more>`.
fn discord_bot_token(s: &[u8], runs: &Runs) -> Option<SecretKind> {
    let end = runs.run(s, 0, url_safe, 32);
    let id = &s[..end];
    if !(23..=28).contains(&id.len()) || s.get(end) != Some(&b'.') {
        return None;
    }
    let stamp_end = runs.run(s, end + 1, url_safe, 7);
    if stamp_end - end - 1 != 6 || s.get(stamp_end) != Some(&b'.') {
        return None;
    }
    let hmac_end = runs.run(s, stamp_end + 1, url_safe, 40);
    let hmac = &s[stamp_end + 1..hmac_end];
    let mut decoded = [0u8; 24];
    let digits = base64_decode(id, &mut decoded)?;
    ((17..=20).contains(&digits)
        && decoded[..digits].iter().all(u8::is_ascii_digit)
        && (27..=40).contains(&hmac.len())
        && random_body(hmac))
    .then_some(SecretKind::DiscordBotToken)
}

fn telegram_bot_token(s: &[u8], runs: &Runs) -> Option<SecretKind> {
    let id_end = runs.run(s, 0, |b| b.is_ascii_digit(), 10);
    if !(8..=10).contains(&id_end) || s.get(id_end) != Some(&b':') {
        return None;
    }
    let end = runs.run(s, id_end + 1, url_safe, 35);
    let secret = &s[id_end + 1..end];
    (secret.len() == 35 && random_body(secret)).then_some(SecretKind::TelegramBotToken)
}

fn stripe_key(s: &[u8], runs: &Runs) -> Option<SecretKind> {
    const PREFIXES: [&[u8]; 4] = [b"sk_live_", b"sk_test_", b"rk_live_", b"rk_test_"];
    if let Some(key) = runs.body_of(s, &PREFIXES, alnum, 20, MAX_TOKEN) {
        let whole = &s[..8 + key.len()];
        return (random_body(key) && !documentation_example(whole))
            .then_some(SecretKind::StripeKey);
    }
    let secret = runs.body(s, b"whsec_", |b| base64_byte(b) || b == b'=', 32, MAX_TOKEN)?;
    random_body(secret).then_some(SecretKind::StripeKey)
}

/// `sk-ant-` is Anthropic's; OpenAI's keys carry a kind (`proj-`, …) or the
/// base64 of "OpenAI" (`T3BlbkFJ`); other providers' `sk-` keys are a long
/// random run.
fn sk_key(s: &[u8], runs: &Runs) -> Option<SecretKind> {
    if let Some(key) = runs.body(s, b"sk-ant-", url_safe, 32, MAX_TOKEN) {
        return generated(key).then_some(SecretKind::AnthropicKey);
    }
    let key = runs.body(s, b"sk-", url_safe, 32, MAX_TOKEN)?;
    let (kind, random) = match [&b"proj-"[..], b"svcacct-", b"admin-"]
        .into_iter()
        .find(|kind| key.starts_with(kind))
    {
        Some(kind) => (SecretKind::OpenAiKey, &key[kind.len()..]),
        None if memchr::memmem::find(key, b"T3BlbkFJ").is_some() => (SecretKind::OpenAiKey, key),
        None => (SecretKind::SkApiKey, key),
    };
    let real = match kind {
        SecretKind::OpenAiKey => random_body(random),
        _ => generated(random),
    };
    (random.len() >= 32 && real).then_some(kind)
}

fn shopify_token(s: &[u8], runs: &Runs) -> Option<SecretKind> {
    const PREFIXES: [&[u8]; 4] = [b"shpat_", b"shpca_", b"shppa_", b"shpss_"];
    let token = runs.body_of(s, &PREFIXES, alnum, 32, 32)?;
    (hex(token) && random_body(token)).then_some(SecretKind::ShopifyToken)
}

fn digitalocean_token(s: &[u8], runs: &Runs) -> Option<SecretKind> {
    const PREFIXES: [&[u8]; 3] = [b"dop_v1_", b"doo_v1_", b"dor_v1_"];
    let token = runs.body_of(s, &PREFIXES, alnum, 64, 64)?;
    (hex(token) && random_body(token)).then_some(SecretKind::DigitalOceanToken)
}

fn sendgrid_key(s: &[u8], runs: &Runs) -> Option<SecretKind> {
    let id = runs.body(s, b"SG.", url_safe, 22, 22)?;
    let secret = runs.body(&s[3 + id.len()..], b".", url_safe, 43, 43)?;
    (random_body(id) && random_body(secret)).then_some(SecretKind::SendGridKey)
}

/// Three base64url parts; the header decodes to a JSON object naming an
/// `alg`, the payload is a JSON object, the signature is present.
fn jwt(s: &[u8], runs: &Runs) -> Option<SecretKind> {
    if !s.starts_with(b"eyJ") {
        return None;
    }
    let header_end = runs.run(s, 0, url_safe, 1024);
    let header = &s[..header_end];
    if header.len() < 10 || s.get(header_end) != Some(&b'.') {
        return None;
    }
    let payload_end = runs.run(s, header_end + 1, url_safe, 16 * 1024);
    let payload = &s[header_end + 1..payload_end];
    if !payload.starts_with(b"eyJ") || payload.len() < 10 || s.get(payload_end) != Some(&b'.') {
        return None;
    }
    let signature_end = runs.run(s, payload_end + 1, url_safe, 1024);
    let signature = &s[payload_end + 1..signature_end];
    if signature.len() < 16 || s.get(signature_end) == Some(&b'.') {
        return None;
    }
    let mut decoded = [0u8; 192];
    let len = base64_decode(&header[..header.len().min(256)], &mut decoded)?;
    let header = &decoded[..len];
    (header.starts_with(b"{")
        && memchr::memmem::find(header, b"\"alg\"").is_some()
        && !documentation_example(signature))
    .then_some(SecretKind::Jwt)
}

/// `-----BEGIN <label> PRIVATE KEY-----` followed by its base64 body, on
/// the same line (a JSON string with `\n` escapes) or on the next lines
/// (after the PEM header fields such as `Proc-Type:`).
fn private_key_block(s: &[u8], following: &[u8], runs: &Runs) -> Option<SecretKind> {
    let label = runs.body(
        s,
        b"-----BEGIN ",
        |b| b.is_ascii_uppercase() || b == b' ' || b.is_ascii_digit(),
        3,
        48,
    )?;
    let after = s[11 + label.len()..].strip_prefix(b"-----")?;
    if !(label.ends_with(b"PRIVATE KEY") || label.ends_with(b"PRIVATE KEY BLOCK")) {
        return None;
    }
    let mut inline = after;
    loop {
        inline = inline.trim_ascii_start();
        match inline {
            [b'\\', b'n', rest @ ..] | [b'\\', b'r', rest @ ..] => inline = rest,
            _ => break,
        }
    }
    if key_body_line(inline, runs) {
        return Some(SecretKind::PrivateKey);
    }
    if !inline.is_empty() {
        return None;
    }
    for line in following.split(|&b| b == b'\n').take(8) {
        let line = line.trim_ascii();
        let field = memchr::memmem::find(line, b": ").is_some();
        if line.is_empty() || field {
            continue;
        }
        return key_body_line(line, runs).then_some(SecretKind::PrivateKey);
    }
    None
}

/// A line that starts with base64 as a key's body does: at least 16
/// characters of it, not a placeholder.
fn key_body_line(line: &[u8], runs: &Runs) -> bool {
    let line = line.strip_prefix(b"\"").unwrap_or(line);
    let end = runs.run(line, 0, |b| base64_byte(b) || b == b'=', 128);
    end >= 16 && random_body(&line[..end])
}

/// A PEM private key block as base64 (a Kubernetes secret's `tls.key`):
/// `LS0tLS1CRUdJTi` is `-----BEGIN`.
fn base64_private_key(s: &[u8], runs: &Runs) -> Option<SecretKind> {
    if !s.starts_with(b"LS0tLS1CRUdJTi") || runs.run(s, 0, base64_byte, 128) < 128 {
        return None;
    }
    let mut decoded = [0u8; 48];
    let len = base64_decode(&s[..64], &mut decoded)?;
    let header = &decoded[..len];
    let label_end = memchr::memmem::find(&header[11..], b"-----")? + 11;
    header[..label_end]
        .ends_with(b"PRIVATE KEY")
        .then_some(SecretKind::PrivateKey)
}
