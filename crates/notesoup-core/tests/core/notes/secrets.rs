//! The credential guard: realistic fake credentials are refused with their
//! line and kind, look-alikes pass, and nothing is written.

use notesoup_core::notes::{Edit, RefusalCode, SecretKind, UpdateRequest, find_secret};
use notesoup_core::settings::{ProjectTrust, SettingsWarning, resolve};
use serde_json::json;

use super::support::{Fixture, code};

/// Fake credentials in the shapes real ones have (none is live).
const CREDENTIALS: &[(&str, SecretKind)] = &[
    ("-----BEGIN RSA PRIVATE KEY-----", SecretKind::PrivateKey),
    (
        "-----BEGIN OPENSSH PRIVATE KEY-----",
        SecretKind::PrivateKey,
    ),
    (
        "key: -----BEGIN EC PRIVATE KEY-----",
        SecretKind::PrivateKey,
    ),
    (
        "-----BEGIN PGP PRIVATE KEY BLOCK-----",
        SecretKind::PrivateKey,
    ),
    (
        "aws_access_key_id = AKIAIOSFODNN7EXAMPLX",
        SecretKind::AwsAccessKey,
    ),
    ("the key is ASIAY34FZKBOKMUTVV7A.", SecretKind::AwsAccessKey),
    (
        "export GH=ghp_R2Dk8sTqZ1vB7nW4xY6aC0eF3gH5jK9mL2pQ",
        SecretKind::GitHubToken,
    ),
    (
        "github_pat_11ABCDEFG0aBcDeFgHiJkL_mNoPqRsTuVwXyZ0123456789aBcDeFgHiJkLmNoPqRsTuVwXyZ01234",
        SecretKind::GitHubToken,
    ),
    ("glpat-x8Kq2ZbN7vR4tW1yP9sM", SecretKind::GitLabToken),
    (
        "SLACK=xoxb-2748391027-5829103847-Qm7ZtR2xK9vB4nW8",
        SecretKind::SlackToken,
    ),
    (
        "stripe: sk_live_51Hx7Yq2eZvKYlo2C8Qm7ZtR2xK9vB4nW",
        SecretKind::StripeKey,
    ),
    (
        "ANTHROPIC_API_KEY=sk-ant-api03-Qm7ZtR2xK9vB4nW8yP1sL6dF3gH0jA5c",
        SecretKind::AnthropicKey,
    ),
    (
        "OPENAI_API_KEY=sk-proj-Qm7ZtR2xK9vB4nW8yP1sL6dF3gH0jA5cE2",
        SecretKind::OpenAiKey,
    ),
    (
        "maps key AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
        SecretKind::GoogleApiKey,
    ),
    (
        "//registry.npmjs.org/:_authToken=npm_Qm7ZtR2xK9vB4nW8yP1sL6dF3gH0jA5cE2rT",
        SecretKind::NpmToken,
    ),
    (
        "password = pypi-AgEIcHlwaS5vcmcCJGQ3ZTI5YjE0LTQ5ZmYtNGE3Ni05OWUxLWNlYjU2ZjQ2NzQyMQACKlsz",
        SecretKind::PyPiToken,
    ),
    (
        "HF_TOKEN=hf_QmZtRxKvBnWyPsLdFgHjAcErTuIoPaSdFgHj",
        SecretKind::HuggingFaceToken,
    ),
    (
        "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",
        SecretKind::SendGridKey,
    ),
    (
        "Authorization: Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        SecretKind::Jwt,
    ),
    ("DB_PASSWORD=Xk9#mQ2$vL7pR4wZ", SecretKind::Assignment),
    ("secret: 'f3Kq9ZbN7vR4tW1yP9sM2cX5'", SecretKind::Assignment),
    (
        "\"client_secret\": \"aB3dE5gH7jK9mN1pQ3sT5vX7\"",
        SecretKind::Assignment,
    ),
    (
        "api_key=5f4dcc3b5aa765d61d8327deb882cf99",
        SecretKind::Assignment,
    ),
];

/// Lines that look like credentials to a careless eye and must pass.
const LOOK_ALIKES: &[&str] = &[
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8 fixed the cart",
    "sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "session id 0197a1b2-3c4d-7e8f-9a0b-1c2d3e4f5a6b",
    "token: 550e8400-e29b-41d4-a716-446655440000",
    "![diagram](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==)",
    "    iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    "password: hunter2",
    "password = <your password here>",
    "API_KEY=${OPENAI_API_KEY}",
    "secret: changeme-in-production",
    "token = ********************",
    "The password policy needs 12 characters and a digit.",
    "Use `sk-` keys from the vault at secret/openai, never inline.",
    "-----BEGIN PUBLIC KEY-----",
    "-----BEGIN CERTIFICATE-----",
    "pwd: /home/alice/projects/shop",
    "token_url: https://auth.example.com/oauth/token",
    "ghp_ is GitHub's prefix for personal tokens",
    "AKIA keys rotate every 90 days",
    "author: Linus Torvalds 2005",
    "Stored the key in 1Password under 'shop/stripe-live'.",
];

#[test]
fn credentials_are_found_with_their_kind() {
    for (line, kind) in CREDENTIALS {
        let text = format!("# Setup\n\nsome context\n{line}\nmore\n");
        let found = find_secret(&text).unwrap_or_else(|| panic!("missed: {line}"));
        assert_eq!((found.line, found.kind), (4, *kind), "{line}");
    }
}

#[test]
fn look_alikes_pass() {
    for line in LOOK_ALIKES {
        assert_eq!(find_secret(line), None, "{line}");
    }
}

#[test]
fn writes_and_edits_holding_a_credential_are_refused_and_write_nothing() {
    let f = Fixture::new();
    let error = f
        .store
        .write(
            "@project/setup",
            "# Setup\n\nDB_PASSWORD=Xk9#mQ2$vL7pR4wZ\n",
            None,
        )
        .expect_err("a credential");
    assert_eq!(error.code(), RefusalCode::SecretDetected);
    assert_eq!(
        error.message(),
        "the content holds a credential (password or secret assignment) on line 3; nothing was written. Store a reference instead (where the secret lives: a vault path or an environment variable name), never the secret itself"
    );
    assert_eq!(error.line_numbers(), Some(&[3][..]));
    assert!(!f.root().join("project").exists(), "nothing was written");

    f.store
        .write(
            "@project/setup",
            "# Setup\n\nThe password is in the vault.\n",
            None,
        )
        .expect("a reference is fine");
    let before = f.raw("project/proj-12345678/setup.md");
    let request = UpdateRequest {
        edits: vec![
            Edit {
                old_text: "# Setup".into(),
                new_text: "# Set-up".into(),
            },
            Edit {
                old_text: "in the vault".into(),
                new_text: "in the vault\nsk-ant-api03-Qm7ZtR2xK9vB4nW8yP1sL6dF3gH0jA5c".into(),
            },
        ],
        ..UpdateRequest::default()
    };
    let error = f
        .store
        .update("@project/setup", &request)
        .expect_err("a credential in an edit");
    assert_eq!(error.code(), RefusalCode::SecretDetected);
    assert_eq!(error.edit_index(), Some(1));
    assert!(
        error.message().starts_with(
            "the content holds a credential (Anthropic API key) on line 2 of edit 1's newText;"
        ),
        "{}",
        error.message()
    );
    assert_eq!(f.raw("project/proj-12345678/setup.md"), before);
}

#[test]
fn the_guard_can_be_turned_off() {
    let f = Fixture::new();
    let store = f.as_other("alice", "gpt").with_secret_guard(false);
    store
        .write("@human/keys", "AKIAIOSFODNN7EXAMPLX\n", None)
        .expect("guard off");
    assert_eq!(
        code(f.store.write("@human/keys", "AKIAIOSFODNN7EXAMPLX\n", None)),
        RefusalCode::SecretDetected
    );
}

#[test]
fn the_setting_is_read_per_key_and_checked() {
    use ProjectTrust::Trusted;
    let global = json!({"notesoup": {"secretGuard": true}});
    let project = json!({"notesoup": {"secretGuard": false}});
    assert!(
        !resolve(Some(&global), Some(&project), Trusted)
            .settings
            .secret_guard
    );
    assert!(resolve(Some(&global), None, Trusted).settings.secret_guard);
    assert!(resolve(None, None, Trusted).settings.secret_guard);
    let wrong = json!({"notesoup": {"secretGuard": "no"}});
    let resolved = resolve(None, Some(&wrong), Trusted);
    assert!(resolved.settings.secret_guard);
    assert_eq!(resolved.warnings, [SettingsWarning::InvalidSecretGuard]);
}

/// A project file that comes with its repository may turn the guard on,
/// never off; only the user's own settings (or a project the host trusts)
/// turn it off.
#[test]
fn an_untrusted_project_may_tighten_the_guard_never_loosen_it() {
    use ProjectTrust::{Trusted, Untrusted};
    let off = json!({"notesoup": {"secretGuard": false}});
    let on = json!({"notesoup": {"secretGuard": true}});
    let other = json!({"notesoup": {"secretGuard": false, "bootMaxChars": 5000}});
    // Loosening: ignored, with one warning naming where to turn it off.
    for user in [
        None,
        Some(&on),
        Some(&json!({"notesoup": {"secretGuard": "x"}})),
    ] {
        let resolved = resolve(user, Some(&off), Untrusted);
        assert!(resolved.settings.secret_guard, "{user:?}");
        assert!(
            resolved
                .warnings
                .contains(&SettingsWarning::ProjectCannotLoosenSecretGuard),
            "{user:?}: {:?}",
            resolved.warnings
        );
    }
    assert_eq!(
        SettingsWarning::ProjectCannotLoosenSecretGuard.to_string(),
        "notesoup: a project's own settings cannot turn notesoup.secretGuard off; keeping the credential guard on (turn it off in your own settings)."
    );
    // The project's other keys still count.
    let resolved = resolve(None, Some(&other), Untrusted);
    assert_eq!(
        (
            resolved.settings.secret_guard,
            resolved.settings.boot_max_chars
        ),
        (true, 5000)
    );
    // The user's own false stands, and a project's false beside it changes
    // nothing, so nothing is said.
    let resolved = resolve(Some(&off), Some(&off), Untrusted);
    assert!(!resolved.settings.secret_guard);
    assert!(resolved.warnings.is_empty(), "{:?}", resolved.warnings);
    // Tightening is honoured.
    let resolved = resolve(Some(&off), Some(&on), Untrusted);
    assert!(resolved.settings.secret_guard);
    assert!(resolved.warnings.is_empty());
    // A trusted project is the user's own.
    let resolved = resolve(Some(&on), Some(&off), Trusted);
    assert!(!resolved.settings.secret_guard);
    assert!(resolved.warnings.is_empty());
}
