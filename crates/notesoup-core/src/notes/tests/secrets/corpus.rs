//! The guard's corpus: synthetic credentials of every kind it detects and
//! ordinary texts that look random to a careless eye. The credentials are
//! generated here, from a fixed seed, in each format's real shape and with
//! its real checksum (GitHub's and npm's CRC32, age's bech32); none was
//! ever issued. The test prints recall and precision:
//! `cargo test -p notesoup-core --test core corpus -- --nocapture`.

use notesoup_core::notes::{SecretKind, find_secret};

/// A fixed-seed generator (xorshift64*), so every run sees the same corpus.
struct Rng(u64);

const BASE62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const URL_SAFE: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const BASE64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const BASE32: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
const HEX: &[u8] = b"0123456789abcdef";
const DIGITS: &[u8] = b"0123456789";
const LETTERS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const PASSWORD: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789!#&*+-.@^_";

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn pick(&mut self, alphabet: &[u8], len: usize) -> String {
        (0..len)
            .map(|_| char::from(alphabet[(self.next() % alphabet.len() as u64) as usize]))
            .collect()
    }

    fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.next() as u8).collect()
    }
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in bytes {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// GitHub's and npm's token: prefix, 30 base62 characters, their CRC32 in
/// 6 base62 characters (zero-padded).
fn checksummed(rng: &mut Rng, prefix: &str) -> String {
    let random = rng.pick(BASE62, 30);
    let mut value = u64::from(crc32(random.as_bytes()));
    let mut checksum = [b'0'; 6];
    for slot in checksum.iter_mut().rev() {
        *slot = BASE62[(value % 62) as usize];
        value /= 62;
    }
    format!(
        "{prefix}{random}{}",
        std::str::from_utf8(&checksum).expect("ascii")
    )
}

fn base64(bytes: &[u8], alphabet: &[u8], pad: bool) -> String {
    let mut text = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | (u32::from(b) << (16 - 8 * i)));
        for i in 0..=chunk.len() {
            text.push(char::from(alphabet[((n >> (18 - 6 * i)) & 63) as usize]));
        }
        if pad {
            text.push_str(&"=".repeat(3 - chunk.len()));
        }
    }
    text
}

fn b64url(text: &str) -> String {
    base64(text.as_bytes(), URL_SAFE, false)
}

/// An age identity: 32 random bytes as bech32 with a valid checksum.
fn age_key(rng: &mut Rng) -> String {
    const CHARSET: &[u8] = b"qpzry9x8gf2tvdw0s3jn54khce6mua7l";
    const GENERATORS: [u32; 5] = [
        0x3b6a_57b2,
        0x2650_8e6d,
        0x1ea1_19fa,
        0x3d42_33dd,
        0x2a14_62b3,
    ];
    let polymod = |values: &[u8]| {
        let mut checksum = 1u32;
        for &value in values {
            let top = checksum >> 25;
            checksum = ((checksum & 0x01ff_ffff) << 5) ^ u32::from(value);
            for (bit, generator) in GENERATORS.iter().enumerate() {
                if (top >> bit) & 1 == 1 {
                    checksum ^= generator;
                }
            }
        }
        checksum
    };
    let key = rng.bytes(32);
    let mut data = Vec::new();
    let (mut acc, mut bits) = (0u32, 0);
    for byte in key {
        acc = (acc << 8) | u32::from(byte);
        bits += 8;
        while bits >= 5 {
            bits -= 5;
            data.push(((acc >> bits) & 31) as u8);
        }
    }
    if bits > 0 {
        data.push(((acc << (5 - bits)) & 31) as u8);
    }
    let hrp = b"age-secret-key-";
    let mut values: Vec<u8> = hrp.iter().map(|b| b >> 5).collect();
    values.push(0);
    values.extend(hrp.iter().map(|b| b & 31));
    values.extend(&data);
    values.extend([0; 6]);
    let checksum = polymod(&values) ^ 1;
    data.extend((0..6).map(|i| ((checksum >> (5 * (5 - i))) & 31) as u8));
    let encoded: String = data
        .iter()
        .map(|&v| char::from(CHARSET[usize::from(v)]))
        .collect();
    format!("AGE-SECRET-KEY-1{}", encoded.to_uppercase())
}

fn jwt(rng: &mut Rng, alg: &str, claims: &str) -> String {
    let signature = base64(&rng.bytes(32), URL_SAFE, false);
    jwt_of(
        &format!(r#"{{"alg":"{alg}","typ":"JWT"}}"#),
        claims,
        &signature,
    )
}

/// A JWT of the given header and payload (JSON, encoded here) and
/// signature (as it stands).
fn jwt_of(header: &str, payload: &str, signature: &str) -> String {
    format!("{}.{}.{signature}", b64url(header), b64url(payload))
}

/// A PEM block with `lines` lines of 64 base64 characters.
fn pem(rng: &mut Rng, label: &str, lines: usize, separator: &str) -> String {
    let mut text = format!("-----BEGIN {label}-----");
    for _ in 0..lines {
        text.push_str(separator);
        text.push_str(&base64(&rng.bytes(48), BASE64, false));
    }
    text.push_str(separator);
    text.push_str(&format!("-----END {label}-----"));
    text
}

/// Every credential of the corpus with the kind it must be refused as.
pub fn credentials() -> Vec<(String, SecretKind)> {
    credentials_with(&mut Rng(0x5eed_cafe_f00d_1234))
}

/// The corpus's credentials drawn from `r`.
fn credentials_with(r: &mut Rng) -> Vec<(String, SecretKind)> {
    use SecretKind::*;
    let mut samples: Vec<(String, SecretKind)> = Vec::new();
    let mut add = |text: String, kind: SecretKind| samples.push((text, kind));

    add(pem(r, "RSA PRIVATE KEY", 3, "\n"), PrivateKey);
    add(pem(r, "OPENSSH PRIVATE KEY", 2, "\n"), PrivateKey);
    add(pem(r, "EC PRIVATE KEY", 2, "\r\n"), PrivateKey);
    add(
        format!(
            r#"  "private_key": "{}\n","#,
            pem(r, "PRIVATE KEY", 4, "\\n")
        ),
        PrivateKey,
    );
    let body = base64(&r.bytes(48), BASE64, false);
    let salt = r.pick(HEX, 16).to_uppercase();
    add(
        format!(
            "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,{salt}\n\n{body}\n-----END RSA PRIVATE KEY-----"
        ),
        PrivateKey,
    );
    let body = base64(&r.bytes(48), BASE64, false);
    add(
        format!(
            "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{body}\n-----END PGP PRIVATE KEY BLOCK-----"
        ),
        PrivateKey,
    );
    let wrapped = base64(pem(r, "RSA PRIVATE KEY", 2, "\n").as_bytes(), BASE64, true);
    add(format!("  tls.key: {wrapped}"), PrivateKey);

    for (template, kind) in [
        (
            "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none",
            PrivateKey,
        ),
        ("AKIA{base32:16}", AwsAccessKey),
        ("aws_access_key_id = ASIA{base32:16}", AwsAccessKey),
        ("the CI user's key is ABIA{base32:16}.", AwsAccessKey),
        ("aws_secret_access_key = {base64:40}", AwsSecretKey),
        ("export AWS_SECRET_ACCESS_KEY={base64:40}", AwsSecretKey),
        (
            r#"{"AccessKeyId": "AKIA", "SecretAccessKey": "{base64:40}"}"#,
            AwsSecretKey,
        ),
        ("{checksummed:ghp_}", GitHubToken),
        ("export GH_TOKEN={checksummed:gho_}", GitHubToken),
        (
            "git clone https://x-access-token:{checksummed:ghs_}@github.com/acme/shop.git",
            GitHubToken,
        ),
        ("github_pat_{base62:22}_{base62:59}", GitHubToken),
        ("glpat-{url:20}", GitLabToken),
        ("runner token: glrt-{url:20}", GitLabToken),
        ("registration GR1348941{url:20}", GitLabToken),
        (
            "SLACK_BOT=xoxb-{digits:11}-{digits:13}-{base62:24}",
            SlackToken,
        ),
        (
            "xoxp-{digits:11}-{digits:11}-{digits:13}-{hex:32}",
            SlackToken,
        ),
        (
            "app token xapp-1-A{base32:10}-{digits:13}-{hex:64}",
            SlackToken,
        ),
        (
            "webhook: https://hooks.slack.com/services/T{base32:8}/B{base32:10}/{base62:24}",
            SlackWebhook,
        ),
        (
            "curl -X POST https://hooks.slack.com/services/T{base32:10}/B{base32:11}/{base62:24} -d @msg.json",
            SlackWebhook,
        ),
        ("DISCORD_TOKEN={discord:38}", DiscordBotToken),
        ("bot.run('{discord:27}')", DiscordBotToken),
        (
            "https://discord.com/api/webhooks/{digits:18}/{url:68}",
            DiscordWebhook,
        ),
        (
            "notify via https://discordapp.com/api/webhooks/{digits:19}/{url:68}",
            DiscordWebhook,
        ),
        ("bot {digits:10}:AA{url:33}", TelegramBotToken),
        ("TELEGRAM={digits:9}:AA{url:33}", TelegramBotToken),
        ("sk_live_{base62:24}", StripeKey),
        ("stripe: sk_test_51{base62:97}", StripeKey),
        ("rk_live_{base62:24}", StripeKey),
        ("STRIPE_WEBHOOK_SECRET=whsec_{base62:32}", StripeKey),
        ("ANTHROPIC_API_KEY=sk-ant-api03-{url:93}AA", AnthropicKey),
        ("claude oauth sk-ant-oat01-{url:93}AA", AnthropicKey),
        ("OPENAI_API_KEY=sk-proj-{url:74}T3BlbkFJ{url:74}", OpenAiKey),
        (
            "openai.api_key = \"sk-{base62:20}T3BlbkFJ{base62:20}\"",
            OpenAiKey,
        ),
        ("sk-svcacct-{url:64}", OpenAiKey),
        ("DEEPSEEK_API_KEY=sk-{hex:32}", SkApiKey),
        ("key sk-{base62:48}", SkApiKey),
        ("maps key AIza{url:35}", GoogleApiKey),
        (
            r#"<script src="https://maps.googleapis.com/maps/api/js?key=AIza{url:35}"></script>"#,
            GoogleApiKey,
        ),
        (r#""client_secret": "GOCSPX-{url:28}""#, GoogleOAuth),
        ("access token ya29.a0{url:120}", GoogleOAuth),
        ("{checksummed:npm_}", NpmToken),
        (
            "//registry.npmjs.org/:_authToken={checksummed:npm_}",
            NpmToken,
        ),
        ("password = pypi-AgEIcHlwaS5vcmc{url:120}", PyPiToken),
        (
            "TWINE_PASSWORD=pypi-AgENdGVzdC5weXBpLm9yZw{url:80}",
            PyPiToken,
        ),
        ("HF_TOKEN=hf_{letters:34}", HuggingFaceToken),
        (
            "huggingface-cli login --token hf_{letters:34}",
            HuggingFaceToken,
        ),
        ("SG.{url:22}.{url:43}", SendGridKey),
        ("SHOPIFY_ACCESS_TOKEN=shpat_{hex:32}", ShopifyToken),
        ("shpss_{hex:32}", ShopifyToken),
        ("doctl auth init -t dop_v1_{hex:64}", DigitalOceanToken),
        ("VAULT_TOKEN=hvs.{url:91}", VaultToken),
        ("{age:key}", AgeSecretKey),
        ("{age:key}  # the backup identity", AgeSecretKey),
    ] {
        add(drawn(r, template), kind);
    }

    let claims = r#"{"sub":"1234567890","name":"Shop Admin","iat":1716239022,"exp":1716242622}"#;
    add(
        format!("Authorization: Bearer {}", jwt(r, "HS256", claims)),
        Jwt,
    );
    add(
        format!(
            "the session cookie was {} yesterday",
            jwt(r, "RS256", claims)
        ),
        Jwt,
    );
    add(
        format!(
            "id_token: {}",
            jwt(
                r,
                "ES256",
                r#"{"iss":"https://accounts.example.org","aud":"shop"}"#
            )
        ),
        Jwt,
    );

    for (template, kind) in [
        (
            "DATABASE_URL=postgres://app:{password:16}@db.internal:5432/shop",
            ConnectionString,
        ),
        (
            "mongodb+srv://admin:{base62:16}@cluster0.x1y2z.mongodb.net/shop?retryWrites=true",
            ConnectionString,
        ),
        (
            "REDIS_URL=redis://:{base62:24}@cache:6379/0",
            ConnectionString,
        ),
        (
            "broker: amqp://shop:Spring2024!@mq.internal/shop",
            ConnectionString,
        ),
        (
            "git remote add origin https://deploy:{base62:20}@git.example.org/shop.git",
            ConnectionString,
        ),
    ] {
        add(drawn(r, template), kind);
    }
    add(
        format!(
            "curl -H 'Authorization: Basic {}' https://api.example.org",
            base64(
                format!("deploy:{}", r.pick(PASSWORD, 14)).as_bytes(),
                BASE64,
                true
            )
        ),
        BasicAuth,
    );

    for template in [
        "DB_PASSWORD={password:16}",
        "secret: '{base62:24}'",
        r#""client_secret": "{base62:32}""#,
        "api_key={hex:32}",
        "mysql --user=shop --password {password:12} shop",
        "The deploy token is {hex:40} until Friday.",
        "MAILGUN_API_KEY=key-{hex:32}",
        "DefaultEndpointsProtocol=https;AccountName=shopdata;AccountKey={base64:86}==;EndpointSuffix=core.windows.net",
        "totp_secret: {base32:32}",
        "Authorization: Bearer {base62:40}",
        "  password: \"{password:10}\"",
        "HEROKU_API_KEY=6f1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
        "GH_TOKEN=ghp_{base62:36}",
        "const apiKey = \"{url:40}\";",
    ] {
        add(drawn(r, template), Assignment);
    }
    samples
}

/// A Discord bot token: the bot's id in base64, a timestamp, and an HMAC of
/// `hmac_length` characters.
fn discord_token(r: &mut Rng, hmac_length: usize) -> String {
    let bot_id = format!("{}{}", 1 + r.next() % 9, r.pick(DIGITS, 17));
    format!(
        "{}.{}.{}",
        base64(bot_id.as_bytes(), URL_SAFE, false),
        r.pick(URL_SAFE, 6),
        r.pick(URL_SAFE, hmac_length)
    )
}

/// `template` with each `{alphabet:length}` replaced by that many
/// characters drawn from `r`, `{checksummed:prefix}` by a checksummed token,
/// `{discord:length}` by a Discord bot token and `{age:key}` by an age
/// identity, in the order they stand (the order a
/// `format!` of the same draws takes them). Other braces are text.
fn drawn(r: &mut Rng, template: &str) -> String {
    let mut text = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        text.push_str(&rest[..open]);
        let placeholder = rest[open + 1..].split_once('}').and_then(|(inside, _)| {
            let (what, arg) = inside.split_once(':')?;
            let alphabet = match what {
                "base62" => BASE62,
                "url" => URL_SAFE,
                "base64" => BASE64,
                "base32" => BASE32,
                "hex" => HEX,
                "digits" => DIGITS,
                "letters" => LETTERS,
                "password" => PASSWORD,
                "checksummed" => return Some((inside.len(), checksummed(r, arg))),
                "age" => return Some((inside.len(), age_key(r))),
                "discord" => {
                    return Some((inside.len(), discord_token(r, arg.parse().ok()?)));
                }
                _ => return None,
            };
            let length = arg.parse().ok()?;
            Some((inside.len(), r.pick(alphabet, length)))
        });
        match placeholder {
            Some((used, drawn)) => {
                text.push_str(&drawn);
                rest = &rest[open + used + 2..];
            }
            None => {
                text.push('{');
                rest = &rest[open + 1..];
            }
        }
    }
    text.push_str(rest);
    text
}

/// Ordinary texts that must pass: hashes, ids, colours, lock files, long
/// identifiers, base64 test data, URLs, paths, minified code, references
/// and placeholders, and the vendors' documentation examples.
pub const ORDINARY: &[&str] = &[
    // Git object ids.
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8 fixed the cart",
    "git checkout 3f786850e387550fdab836ed7e6dc881de23001b -- src/cart.rs",
    r#"serde = { git = "https://github.com/serde-rs/serde", rev = "a94a8fe5ccb19ba61c4c0873d391e987982fbbd3" }"#,
    "HEAD is now at 7b3e9d1 Fix rounding in the cart total",
    "Merge: 1a2b3c4 5d6e7f8",
    "docker pull shop@sha256:9b2a8a5c1e3f4d6b7a8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b6c7d8e9f0a",
    // UUIDs.
    "session id 0197a1b2-3c4d-7e8f-9a0b-1c2d3e4f5a6b",
    "token: 550e8400-e29b-41d4-a716-446655440000",
    "request_id=7c9e6679-7425-40de-944b-e07fc1f90ae7",
    r#"{"id": "f47ac10b-58cc-4372-a567-0e02b2c3d479", "page_token": "3fa85f64-5717-4562-b3fc-2c963f66afa6"}"#,
    // Hex colours.
    "colours: #1f2937 #f59e0b #10b981",
    "--accent: #3a7bd5; --bg: #fafafa; --fg: #0b0c0e;",
    r##"<rect fill="#FF5733" stroke="#C70039" width="40"/>"##,
    // Lock files and subresource integrity.
    r#"checksum = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855""#,
    r#""resolved": "https://registry.npmjs.org/lodash/-/lodash-4.17.21.tgz", "integrity": "sha512-v2kDEe57lecTulaDIuNTPy3Ry4gLGJ6Z1O3vE1krgXZNrsQ+LFTGHVxVjcXPs17LhbZVGedAJv8XZ1tvj5FvSg==""#,
    r#"  resolved "https://registry.yarnpkg.com/ms/-/ms-2.1.2.tgz#a1b2c3d4e5f60718293a4b5c6d7e8f9012345678""#,
    "golang.org/x/text v0.3.7 h1:olpwvP2KacW1ZWvsR7uQhoyTYvKAupfQrRGBFM352Gk=",
    "  resolution: {integrity: sha512-9/Yy0GQeTHv8d9iNwfT3SJ2eeXgRVVSwHnLQHsMmm+TsdBm8wLbmkgO8u5dRmEXAMp/7Ktv9oxhxG5zqexm9zQ==}",
    r#"hash = "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=";"#,
    r#"<script src="https://cdn.jsdelivr.net/npm/bootstrap@5.3.0/dist/js/bootstrap.min.js" integrity="sha384-fbbOQedDUMZZ5KreZpsbe1LCZPVmfTnH7ois6mU1QK+m14rQ1l2bGBq41eYeM/fS" crossorigin="anonymous"></script>"#,
    "sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    // Long identifiers.
    "AbstractSingletonProxyFactoryBeanConfigurationProvider",
    "fn test_rename_moves_a_note_with_all_its_metadata_across_homes()",
    "XMLHttpRequestEventTarget.prototype.addEventListener",
    "type: kubernetes.io/service-account-token",
    "NOTESOUP_SECRET_GUARD_DISABLED_FOR_INTEGRATION_TESTS=1",
    "let token = getSecretTokenFromEnvironmentOrDefault(&settings);",
    r#"let api_key = std::env::var("OPENAI_API_KEY")?;"#,
    "const token = createAccessTokenForServiceAccount(user);",
    "secret: kubernetesSecretNameForTheDatabase",
    "next_page_token: nextPageTokenFromPreviousResponse",
    "password_min_length: 12",
    "secret_name: shop-stripe-live",
    "ASIA_PACIFIC_SOUTHEAST_REGION_ENDPOINT",
    "pip install sk-learn-compatible-estimators-for-time-series",
    "hf_hub_download(repo_id=\"bert-base-uncased\", filename=\"config.json\")",
    "npm_config_registry=https://registry.npmjs.org/",
    // Base64 test data and public keys.
    "![dot](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==)",
    "    iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    "payload: eyJuYW1lIjoiYWxpY2UiLCJyb2xlIjoiYWRtaW4ifQ==",
    r#"const fixture = "SGVsbG8sIFdvcmxkISBUaGlzIGlzIHRlc3QgZGF0YS4=";"#,
    r#"assert_eq!(decode("dGhlIHF1aWNrIGJyb3duIGZveA=="), b"the quick brown fox");"#,
    "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxKLxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW/VDL5AaWTg0nLVkjRo9z+40RQzuVaE8AkAFmxZzow3x+VJYKdjykkJ0iT9wCS0DRTXu269V264Vf/3jvredZiKRkgwlL9xNAwxXFg0x/XFw005UWVRIkdgcKWTjpBP2dPwVZ4WWC+9aGVd+Gyn1o0CLelf4rEjGoXbAAEgAqeGUxrcIlbjXfbcmwIDAQAB",
    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCozMxH2Mo\n-----END PUBLIC KEY-----",
    "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJ\n-----END CERTIFICATE-----",
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl alice@laptop",
    "every service-account token starts with eyJhbGciOiJSUzI1NiJ9",
    "    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSURkekNDQWwrZ0F3SUJBZ0lFQWdBQXVUQU5CZ2txaGtpRzl3MEJBUVVGQURCYU1Rc3dDUVlEVlFRR0V3SkoKUlRFU01CQUdBMVVFQ2hNSlFtRnNkR2x0YjNKbE1STXdFUVlEVlFRTEV3cERlV0psY2xSeWRYTjBNU0l3SUFZRAotLS0tLUVORCBDRVJUSUZJQ0FURS0tLS0tCg==",
    // URLs.
    "token_url: https://auth.example.com/oauth/token",
    "https://github.com/notesoup/notesoup/pull/1234#discussion_r1563412345",
    "https://medium.com/@alice/how-we-ship-3f9a1b2c4d5e",
    "git clone git@github.com:notesoup/notesoup.git",
    "git clone https://alice@git.example.org/shop.git",
    "DATABASE_URL=postgres://postgres:postgres@localhost:5432/postgres",
    "DATABASE_URL=postgres://${DB_USER}:${DB_PASSWORD}@db:5432/shop",
    "postgres://user:password@localhost/shop is the local default",
    "https://www.google.com/maps/place/@52.5200066,13.404954,15z",
    "http://[::1]:8080/health",
    "https://docs.rs/serde_json/1.0.108/serde_json/value/enum.Value.html",
    // Paths.
    "pwd: /home/alice/projects/shop",
    "~/.config/notesoup/settings.json",
    r"C:\Users\alice\AppData\Roaming\npm\node_modules\notesoup",
    "crates/notesoup-core/src/notes/store/ops.rs:142:17",
    "secret: vault:secret/data/shop/stripe#live_key",
    "password_file = /run/secrets/db_password",
    "key_path: ~/.ssh/id_ed25519",
    // Minified code.
    r#"!function(e,t){"object"==typeof exports&&"undefined"!=typeof module?module.exports=t():"function"==typeof define&&define.amd?define(t):(e=e||self).Vue=t()}(this,function(){"use strict";var e=Object.freeze({});"#,
    r#"var a={token:e.token,secret:n.secret,password:r.password||""};return fetch(u,{headers:{Authorization:"Bearer "+a.token}})"#,
    r#"const r=t.split(".").map(Number),o=r[0]<<24|r[1]<<16|r[2]<<8|r[3];if(o>>>0!==o)throw new Error("bad ip")"#,
    ".btn-primary{color:#fff;background-color:#0d6efd;border-color:#0d6efd}.btn-primary:hover{color:#fff;background-color:#0b5ed7}",
    r#"function(n){return n.replace(/[A-Za-z0-9+/=]{20,}/g,"***")}"#,
    r#"a.auth=function(t){return this.token=t.access_token,this.secret=t.refresh_token,this}"#,
    // References, placeholders and prose.
    "password: hunter2",
    "password = <your password here>",
    "API_KEY=${OPENAI_API_KEY}",
    "secret: changeme-in-production",
    "token = ********************",
    "The password policy needs 12 characters and a digit.",
    "Use `sk-` keys from the vault at secret/openai, never inline.",
    "ghp_ is GitHub's prefix for personal tokens",
    "The GitHub token ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx goes in GH_TOKEN",
    "AKIA keys rotate every 90 days",
    "Stored the key in 1Password under 'shop/stripe-live'.",
    "api_key: op://Shop/OpenAI/credential",
    "Authorization: Bearer <token>",
    "max_tokens: 4096",
    "author: Linus Torvalds 2005",
    "xoxb- tokens are bot tokens; xoxp- are user tokens",
    "the file starts with -----BEGIN OPENSSH PRIVATE KEY----- and must stay in ~/.ssh",
    "version 1.2.3-beta.4+build.567, ISBN 978-3-16-148410-0, DOI 10.1000/182",
    "at 2024-05-01T12:34:56.789Z from fe80::1ff:fe23:4567:890a (MAC 00:1A:2B:3C:4D:5E)",
    // The vendors' documentation examples.
    "AWS's example key AKIAIOSFODNN7EXAMPLE with secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "Stripe's docs use sk_test_4eC39HqLyjWDarjtT1zdp7dc in every example.",
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
];

/// Words for identifiers and prose.
const WORDS: &[&str] = &[
    "note", "store", "token", "secret", "session", "cart", "total", "user", "account", "service",
    "request", "response", "page", "next", "previous", "access", "refresh", "client", "server",
    "config", "default", "value", "name", "id", "key", "path", "file", "read", "write", "update",
    "from", "for", "with", "to", "as", "http", "json", "base", "utf8", "v2",
];

/// Ordinary texts drawn from `r`, in the shapes of [`ORDINARY`]: object ids,
/// UUIDs, colours, integrity hashes, base64 test data, and identifiers,
/// some of them after a secret-named key (where the value is code, not a
/// secret).
fn ordinary_with(r: &mut Rng) -> Vec<String> {
    let word = |r: &mut Rng| WORDS[(r.next() % WORDS.len() as u64) as usize];
    let camel = |r: &mut Rng| {
        let mut text = word(r).to_owned();
        for _ in 0..3 + r.next() % 3 {
            let next = word(r);
            text.push_str(&next[..1].to_uppercase());
            text.push_str(&next[1..]);
        }
        text
    };
    let snake = |r: &mut Rng| {
        let parts: Vec<&str> = (0..3 + r.next() % 3).map(|_| word(r)).collect();
        parts.join("_")
    };
    let uuid = |r: &mut Rng| {
        let hex = r.pick(HEX, 32);
        format!(
            "{}-{}-4{}-a{}-{}",
            &hex[..8],
            &hex[8..12],
            &hex[13..16],
            &hex[17..20],
            &hex[20..]
        )
    };
    vec![
        format!("commit {} fixed the {}", r.pick(HEX, 40), word(r)),
        format!("sha256: {}", r.pick(HEX, 64)),
        format!("request id {}", uuid(r)),
        format!("token: {}", uuid(r)),
        format!(
            "color: #{}; background: #{};",
            r.pick(HEX, 6),
            r.pick(HEX, 6)
        ),
        format!("integrity: sha512-{}", base64(&r.bytes(64), BASE64, true)),
        format!(
            r#"const fixture = "{}";"#,
            base64(&r.bytes(24), BASE64, true)
        ),
        format!("fn {}() {{}}", snake(r)),
        format!("let token = {}(&settings);", camel(r)),
        format!("const secret = this.{}.{};", word(r), camel(r)),
        format!("api_key: {}", snake(r).to_uppercase()),
        format!("password = config.{}", camel(r)),
        format!(
            "https://example.org/{}/{}?page={}",
            word(r),
            snake(r),
            r.pick(DIGITS, 3)
        ),
    ]
}

/// Credentials and ordinary texts from many seeds: the rules hold for the
/// formats, not for one draw of them. Every credential of a known format
/// is refused; a secret-named value is judged by its shape, and a random
/// password can look like an identifier now and then (one in a thousand
/// is allowed through).
#[test]
fn the_rules_hold_across_draws() {
    let (mut credentials, mut ordinary) = (0, 0);
    let (mut missed, mut guessed, mut refused) = (Vec::new(), Vec::new(), Vec::new());
    for seed in 1..=200u64 {
        let r = &mut Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        for (sample, kind) in credentials_with(r) {
            credentials += 1;
            if find_secret(&sample).map(|found| found.kind) != Some(kind) {
                let misses = if kind == SecretKind::Assignment {
                    &mut guessed
                } else {
                    &mut missed
                };
                misses.push(format!("{kind:?}: {sample}"));
            }
        }
        for text in ordinary_with(r) {
            ordinary += 1;
            if let Some(found) = find_secret(&text) {
                refused.push(format!("{:?}: {text}", found.kind));
            }
        }
    }
    println!(
        "over 200 draws: {}/{credentials} credentials refused as their kind \
         ({} of a known format missed, {} secret-named values missed), \
         {}/{ordinary} ordinary texts refused",
        credentials - missed.len() - guessed.len(),
        missed.len(),
        guessed.len(),
        refused.len()
    );
    assert!(missed.is_empty(), "missed:\n{}", missed.join("\n"));
    assert!(
        guessed.len() * 1000 <= credentials,
        "missed:\n{}",
        guessed.join("\n")
    );
    assert!(
        refused.len() * 50 <= ordinary,
        "refused:\n{}",
        refused.join("\n")
    );
}

/// Wraps a sample in a note, so its line number is known (4).
fn in_note(sample: &str) -> String {
    format!("# Setup\n\nsome context\n{sample}\nmore\n")
}

#[test]
fn every_credential_is_refused_and_ordinary_text_passes() {
    let credentials = credentials();
    let mut missed = Vec::new();
    for (sample, kind) in &credentials {
        let found = find_secret(&in_note(sample));
        if found.map(|found| (found.line, found.kind)) != Some((4, *kind)) {
            missed.push(format!("{kind:?} expected, {found:?} found: {sample}"));
        }
    }
    let refused: Vec<String> = ORDINARY
        .iter()
        .filter_map(|text| find_secret(&in_note(text)).map(|found| format!("{found:?}: {text}")))
        .collect();

    let found = credentials.len() - missed.len();
    let recall = found as f64 / credentials.len() as f64;
    let precision = found as f64 / (found + refused.len()) as f64;
    let report = format!(
        "credential guard corpus: {} credentials of {} kinds, {} ordinary texts\n  \
         recall {:.1}% ({found}/{} refused as their kind)\n  \
         precision {:.1}% ({} ordinary texts refused, {:.1}%)",
        credentials.len(),
        SecretKind::ALL.len(),
        ORDINARY.len(),
        recall * 100.0,
        credentials.len(),
        precision * 100.0,
        refused.len(),
        refused.len() as f64 * 100.0 / ORDINARY.len() as f64,
    );
    println!("{report}");
    for text in &refused {
        println!("  refused: {text}");
    }

    let uncovered: Vec<SecretKind> = SecretKind::ALL
        .into_iter()
        .filter(|kind| !credentials.iter().any(|(_, sample)| sample == kind))
        .collect();
    assert!(
        uncovered.is_empty(),
        "kinds without a sample: {uncovered:?}"
    );
    assert!(credentials.len() >= 60 && ORDINARY.len() >= 60, "{report}");
    assert!(
        missed.is_empty(),
        "{report}\nmissed:\n{}",
        missed.join("\n")
    );
    // The bar: at most one ordinary text in fifty refused.
    assert!(
        refused.len() * 50 <= ORDINARY.len(),
        "{report}\nrefused:\n{}",
        refused.join("\n")
    );
}

/// A credential is found at any position of its line and of its note, and
/// in every line of a long note.
#[test]
fn a_credential_is_found_wherever_it_sits() {
    let (token, kind) = credentials()
        .into_iter()
        .find(|(_, kind)| *kind == SecretKind::GitHubToken)
        .expect("a GitHub token");
    let filler = "ordinary words and 9fceb02d0ae598e95dc970b74767f19372d61af8 ".repeat(40);
    let mut note = String::new();
    for _ in 0..500 {
        note.push_str(&filler);
        note.push('\n');
    }
    note.push_str(&format!("{filler}({token}) {filler}\n"));
    assert_eq!(
        find_secret(&note).map(|found| (found.line, found.kind)),
        Some((501, kind))
    );
    assert_eq!(
        find_secret(&format!("`{token}`")).map(|f| f.kind),
        Some(kind)
    );
    assert_eq!(
        find_secret(&format!(r#"{{"token":"\n{token}"}}"#)).map(|f| f.kind),
        Some(kind)
    );
}

/// A token whose checksum does not hold is not the format it imitates
/// (a typo, a made-up example): only a secret-named key still refuses it.
#[test]
fn a_token_with_a_broken_checksum_is_not_that_token() {
    let mut rng = Rng(7);
    let token = checksummed(&mut rng, "ghp_");
    let mut broken = token.clone().into_bytes();
    let last = broken.len() - 1;
    broken[last] = if broken[last] == b'A' { b'B' } else { b'A' };
    let broken = String::from_utf8(broken).expect("ascii");
    assert_eq!(
        find_secret(&token).map(|f| f.kind),
        Some(SecretKind::GitHubToken)
    );
    assert_eq!(find_secret(&format!("see {broken} in the docs")), None);
    assert_eq!(
        find_secret(&format!("GITHUB_TOKEN={broken}")).map(|f| f.kind),
        Some(SecretKind::Assignment)
    );
    let age = age_key(&mut rng);
    let last = if age.ends_with('Q') { 'P' } else { 'Q' };
    let flipped = format!("{}{last}", &age[..age.len() - 1]);
    assert_eq!(
        find_secret(&age).map(|f| f.kind),
        Some(SecretKind::AgeSecretKey)
    );
    assert_ne!(age, flipped);
    assert_eq!(find_secret(&flipped), None);
}

/// What a format's checks exist to turn away: its prefix with a body of
/// the wrong alphabet, shape or randomness is not that credential (and,
/// bare, no other).
#[test]
fn a_near_miss_of_a_format_is_not_that_format() {
    const HEADER: &str = r#"{"alg":"HS256"}"#;
    const CLAIMS: &str = r#"{"sub":"1234567890"}"#;
    let mut rng = Rng(11);
    let signature = rng.pick(URL_SAFE, 16);
    let base64_pem = base64(
        pem(&mut rng, "RSA PRIVATE KEY", 2, "\n").as_bytes(),
        BASE64,
        true,
    );
    let near_misses = [
        // AWS: a body digit outside base32 (`1`), and `A3T` with a
        // lower-case fourth character.
        "AKIA1BCDEFGHIJKLMNOP".to_owned(),
        "A3TaBCDEFGHIJKLMNOPQ".to_owned(),
        // A fine-grained GitHub token without its `_` after 22 characters.
        format!("github_pat_{}", rng.pick(BASE62, 82)),
        // Slack: no numeric id, and a secret of one repeated letter.
        format!("xoxb-abcdefgh-{}", rng.pick(BASE62, 24)),
        "xoxb-12345678901-aaaaaaaaaaaaaaaa".to_owned(),
        // A Slack webhook without its team and channel ids, and one whose
        // secret is one repeated letter.
        format!("https://hooks.slack.com/services/{}", rng.pick(BASE62, 24)),
        format!(
            "https://hooks.slack.com/services/T12345678/B1234567890/{}",
            "a".repeat(24)
        ),
        // A Discord webhook whose id is not a number, and one whose token is
        // one repeated letter.
        format!(
            "https://discord.com/api/webhooks/abcdefghijklmnopqr/{}",
            rng.pick(URL_SAFE, 68)
        ),
        format!(
            "https://discord.com/api/webhooks/123456789012345678/{}",
            "a".repeat(68)
        ),
        // A Discord bot token with a colon for either dot.
        discord_token(&mut rng, 30).replacen('.', ":", 1),
        {
            let token = discord_token(&mut rng, 30);
            let second = token.rfind('.').expect("two dots");
            format!("{}:{}", &token[..second], &token[second + 1..])
        },
        // A Discord bot token whose id is not a number, and one whose HMAC
        // is one character short.
        format!(
            "{}.{}.{}",
            base64(b"abcdefghijklmnopqr", URL_SAFE, false),
            rng.pick(URL_SAFE, 6),
            rng.pick(URL_SAFE, 30)
        ),
        discord_token(&mut rng, 26),
        // A Telegram bot token with another separator, and one whose secret
        // is one repeated letter.
        format!("123456789;AA{}", rng.pick(URL_SAFE, 33)),
        format!("123456789:{}", "a".repeat(35)),
        // A Stripe key of one repeated letter, Stripe's documentation
        // example, and a webhook secret cut short by a space.
        format!("sk_live_{}", "a".repeat(24)),
        "sk_test_4eC39HqLyjWDarjtT1zdp7dc".to_owned(),
        format!("whsec_{} {}", rng.pick(BASE64, 20), rng.pick(BASE64, 20)),
        // An OpenAI key whose random part, after its kind, is short.
        format!("sk-proj-{}", rng.pick(BASE62, 30)),
        // A Shopify token and a DigitalOcean token that are not hex.
        format!("shpat_{}", rng.pick(LETTERS, 32)),
        format!("dop_v1_{}", rng.pick(LETTERS, 64)),
        // A SendGrid key whose id is one repeated letter.
        format!("SG.{}.{}", "a".repeat(22), rng.pick(URL_SAFE, 43)),
        // JWTs: a header naming no `alg`, one of 8 characters, a payload
        // that is not a JSON object, one of 7 characters, a signature of
        // 15 characters, and a fourth part.
        jwt_of(r#"{"typ":"JWT"}"#, CLAIMS, &signature),
        jwt_of(r#"{"alg""#, CLAIMS, &signature),
        format!("{}.{}.{signature}", b64url(HEADER), rng.pick(URL_SAFE, 40)),
        jwt_of(HEADER, r#"{"a"}"#, &signature),
        jwt_of(HEADER, CLAIMS, &signature[..15]),
        format!("{}.{signature}", jwt_of(HEADER, CLAIMS, &signature)),
        // A private key block whose next line is short base64 words, or
        // base64 of one repeated letter.
        "-----BEGIN RSA PRIVATE KEY-----\nQx7 Zr2 Kp9 Wm4 Tn8 Hv3 Jd6 Fb5".to_owned(),
        format!("-----BEGIN RSA PRIVATE KEY-----\n{}", "A".repeat(64)),
        // A base64 private key block of 100 characters.
        base64_pem[..100].to_owned(),
    ];
    assert_each_found(&near_misses, None);
    // Their edges that still are: a Discord bot token's longest HMAC, a
    // JWT's shortest header (10 characters), payload (10) and signature
    // (16) and a payload of 2,000 characters, and an OpenAI key of any text
    // after its kind (the prefix says what it is).
    let long_claims = format!(r#"{{"sub":"{}"}}"#, "a".repeat(1490));
    let edges = [
        (discord_token(&mut rng, 40), SecretKind::DiscordBotToken),
        (jwt_of(r#"{"alg"}"#, CLAIMS, &signature), SecretKind::Jwt),
        (jwt_of(HEADER, r#"{"a":1}"#, &signature), SecretKind::Jwt),
        (jwt_of(HEADER, CLAIMS, &signature), SecretKind::Jwt),
        (jwt_of(HEADER, &long_claims, &signature), SecretKind::Jwt),
        (base64_pem[..128].to_owned(), SecretKind::PrivateKey),
        (
            "sk-proj-shoppingCartCheckoutServiceIntegrationPipeline".to_owned(),
            SecretKind::OpenAiKey,
        ),
    ];
    for (text, kind) in edges {
        assert_each_found(&[text], Some(kind));
    }
}

/// What a secret-named key's checks exist to turn away, beside the edges
/// that still are secrets.
#[test]
fn a_near_miss_of_a_secret_named_value_passes() {
    let mut rng = Rng(13);
    let basic = |credentials: &str| {
        format!(
            "Authorization: Basic {}",
            base64(credentials.as_bytes(), BASE64, true)
        )
    };
    let near_misses = [
        // A URL's query holding `user:password@`, past the authority's `/`.
        "https://example.com/search?q=alice:Tr0ub4dor3@home".to_owned(),
        // A key of 65 characters.
        format!("{}_password = Tr0ub4dor&3x", "x".repeat(56)),
        // A value of 257 characters (its padding counted).
        format!("api_key = {}=", rng.pick(BASE62, 256)),
        // A reference to where the secret lives.
        "api_key: env:Xk8q2PzR7mWvTn4LbY".to_owned(),
        // A path whose parts are short or words.
        "api_key = /opt/X9k/q7z/Zp4/w2x/Hm3".to_owned(),
        "api_key = /X9k/q7z/Zp4/w2x/Hm3/shopping".to_owned(),
        // A member of an object named in words, and of one named by a
        // short word.
        "api_key = config.Xk8q2PzR7mWvTn4L".to_owned(),
        // Three quotes between a key and its separator; `is` with no space
        // before it; a path's `::`; a space alone after a key that is not a
        // flag or `Bearer`.
        r#"api_key"""= Xk8q2PzR7mWvTn4LbY"#.to_owned(),
        r#"api_key"is Xk8q2PzR7mWvTn4LbY"#.to_owned(),
        "api_key::Xk8q2PzR7mWvTn4LbY".to_owned(),
        "api_key Xk8q2PzR7mWvTn4LbY".to_owned(),
        // A `key` whose qualifier does not name a secret.
        "cache_key = Xk8q2PzR7mWvTn4LbY".to_owned(),
        // No value at the line's end, after a separator or a scheme; a word
        // that is no scheme before the value.
        "api_key =   ".to_owned(),
        "Authorization: Bearer ".to_owned(),
        "api_key = see Xk8q2PzR7mWvTn4LbY".to_owned(),
        // An environment variable's name, and a URL.
        "api_key = XK8Q2PZR7MWV_TN4LBY".to_owned(),
        "api_key = https://Xk8q2PzR7mWvTn4LbY".to_owned(),
        // Basic credentials with no password, a placeholder for one, the
        // user's name again, or a control character.
        basic("hello world"),
        basic("alice:password"),
        basic("alice:alice"),
        basic("alice\u{1}:Tr0ub4dor&3"),
        // Under a password key: a value of one repeated pair of letters, and
        // a lower-case word.
        "password = AbAbAbAbAbAb".to_owned(),
        "password = qwzjxkvbnmtr".to_owned(),
    ];
    assert_each_found(&near_misses, None);
    let edges = [
        // A key of 64 characters, a value of 256, a password of 8.
        format!("{}_password = Tr0ub4dor&3x", "x".repeat(55)),
        format!("api_key = {}", rng.pick(BASE62, 256)),
        "password = Tr0ub4d!".to_owned(),
        // Short parts that are not a member access: after a separator at the
        // end, around `..`, after a digit.
        "api_key = X9k.q7z.Zp4.w2x.Hm3.".to_owned(),
        "api_key = X9k..q7z.Zp4.w2x.Hm3".to_owned(),
        "api_key = 9Xk.q7z.Zp4.w2x.Hm3".to_owned(),
        // Parts that are not words: a path's part under 60% words, an
        // object named by a word of three letters, by random letters, or
        // by a part under 60% words.
        "api_key = /X9k/q7z/Zp4/w2x/shopXk8q2PzR7".to_owned(),
        "api_key = app.Xk8q2PzR7mWvTn4L".to_owned(),
        "api_key = Xk8q2PzR7mWv.Tn4LbY9".to_owned(),
        "api_key = shopXk8q2.PzR7mWvTn4LbY".to_owned(),
        // `:=` before a value of 12 characters.
        "api_key := Xk8q2PzR7mWv".to_owned(),
        // A secret of an AWS secret key's shape under a key that names no
        // access.
        format!("client_secret = {}", rng.pick(BASE64, 40)),
        // Mixed case is no environment variable's name; a token of a
        // UUID's length is no UUID.
        "api_key = Xk8q2PzR7mWv_Tn4LbY".to_owned(),
        format!("auth_token = {}", rng.pick(BASE62, 36)),
    ];
    // Each word that names a secret, alone, and as the last word of a key
    // after an acronym, or after lower case and a digit.
    let keys = [
        "password",
        "passwd",
        "passphrase",
        "pwd",
        "pass",
        "secret",
        "apikey",
        "accesskey",
        "secretkey",
        "privatekey",
        "accountkey",
        "credential",
        "credentials",
        "api_key",
        "APPKey",
        "DBPass",
        "my2xPWD",
    ];
    let edges: Vec<String> = edges
        .into_iter()
        .chain(keys.iter().map(|key| format!("{key} = Tr0ub4dor&3xKq8z")))
        .collect();
    assert_each_found(&edges, Some(SecretKind::Assignment));
    // A user name may hold a space.
    assert_each_found(
        &[basic("alice smith:Tr0ub4dor&3")],
        Some(SecretKind::BasicAuth),
    );
}

/// Asserts that each of `texts` is found as `kind` (`None`: passes).
fn assert_each_found(texts: &[String], kind: Option<SecretKind>) {
    for text in texts {
        assert_eq!(find_secret(text).map(|found| found.kind), kind, "{text}");
    }
}
