//! The credential guard on the store: the note is judged as it would be
//! written (the body after every edit, and the address), refusals name the
//! kind and the line but never the secret, and nothing is written. The
//! detector's corpus is in `corpus`.

use notesoup_core::notes::{NoteError, RefusalCode, SecretKind};
use notesoup_core::settings::{ProjectTrust, ResolvedSettings, SettingsWarning};
use serde_json::json;

use super::support::{Fixture, code, crumpling, edits};

mod corpus;

/// A synthetic credential of `kind` from the corpus, bare.
fn sample(kind: SecretKind) -> String {
    corpus::credentials()
        .into_iter()
        .find(|(_, found)| *found == kind)
        .map(|(text, _)| text)
        .expect("the corpus has every kind")
}

/// The refusal of `result`, checked to be `secret_detected` and to hold
/// none of `secret`.
fn refusal<T: std::fmt::Debug>(result: Result<T, NoteError>, secret: &str) -> NoteError {
    let error = result.expect_err("a credential");
    assert_eq!(error.code(), RefusalCode::SecretDetected, "{error}");
    assert!(!error.message().contains(secret), "{error}");
    error
}

const REFERENCE: &str = "Store a reference instead (where the secret lives: a vault path or an environment variable name), never the secret itself";

#[test]
fn writes_and_edits_holding_a_credential_are_refused_and_write_nothing() {
    let f = Fixture::new();
    let error = refusal(
        f.store.write(
            "@project/setup",
            "# Setup\n\nDB_PASSWORD=Xk9#mQ2$vL7pR4wZ\n",
            None,
        ),
        "Xk9#mQ2$vL7pR4wZ",
    );
    assert_eq!(
        error.message(),
        format!(
            "the content holds a credential (password or secret assignment) on line 3; nothing was written. {REFERENCE}"
        )
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
    let key = sample(SecretKind::AnthropicKey);
    let request = edits(&[
        ("# Setup", "# Set-up"),
        ("in the vault.", &format!("in the vault.\n{key}")),
    ]);
    let error = refusal(f.store.update("@project/setup", &request), &key);
    assert_eq!(
        error.message(),
        format!(
            "the note as edited would hold a credential (Anthropic API key) on line 4 (from edit 1's newText); nothing was written. {REFERENCE}"
        )
    );
    assert_eq!(error.edit_index(), Some(1));
    assert_eq!(error.line_numbers(), Some(&[4][..]));
    assert_eq!(f.raw("project/proj-12345678/setup.md"), before);
}

/// Edits that are harmless one by one but complete a key in the note are
/// refused: the guard reads the note that would result, not the edits.
#[test]
fn edits_that_assemble_a_key_in_the_note_are_refused() {
    let f = Fixture::new();
    let key = sample(SecretKind::AwsAccessKey);
    let (head, tail) = key.split_at(10);
    f.store
        .write("@project/aws", "# AWS\n\nkey: first and second\n", None)
        .expect("no key yet");
    let before = f.raw("project/proj-12345678/aws.md");
    let request = edits(&[("first", head), (" and second", tail)]);
    let error = refusal(f.store.update("@project/aws", &request), &key);
    assert_eq!(
        error.message(),
        format!(
            "the note as edited would hold a credential (AWS access key) on line 3; nothing was written. {REFERENCE}"
        )
    );
    assert_eq!(error.edit_index(), None);
    assert_eq!(f.raw("project/proj-12345678/aws.md"), before);

    // One edit completing what the note already began.
    f.store
        .write("@project/aws", &format!("# AWS\n\nkey: {head}\n"), None)
        .expect("half a key is no key");
    let request = edits(&[(&format!("{head}\n"), &format!("{head}{tail}\n"))]);
    refusal(f.store.update("@project/aws", &request), &key);
}

/// A credential in the address (a folder or the file name) is refused on
/// write and as a rename target, and the refusal does not repeat it.
#[test]
fn an_address_holding_a_credential_is_refused() {
    let f = Fixture::new();
    let token = sample(SecretKind::GitHubToken);
    let address = format!("@project/tokens/{token}");
    let error = refusal(f.store.write(&address, "# Token\n", None), &token);
    assert_eq!(
        error.message(),
        "the address holds a credential (GitHub token); nothing was written. Name the note for what it is about, and store a reference to the secret (where it lives: a vault path or an environment variable name), never the secret itself"
    );
    assert_eq!(error.line_numbers(), None);
    assert!(!f.root().join("project").exists(), "nothing was written");

    f.store
        .write("@project/deploy", "# Deploy\n", None)
        .expect("a plain note");
    refusal(f.store.rename("@project/deploy", &address), &token);
    refusal(
        f.store
            .rename("@project/deploy", &format!("@project/{token}/deploy")),
        &token,
    );
    assert!(f.root().join("project/proj-12345678/deploy.md").exists());
    assert!(!f.root().join("project/proj-12345678/tokens").exists());
}

/// A note that already holds a credential (written with the guard off):
/// crumpling it or removing the credential is allowed; an edit elsewhere or
/// a rename, which would write it again, is refused and names its line.
#[test]
fn a_note_already_holding_a_credential_can_be_cleaned_not_rewritten() {
    let f = Fixture::new();
    let relaxed = f.as_other("alice", "gpt").with_secret_guard(false);
    let password = "DB_PASSWORD=Xk9#mQ2$vL7pR4wZ";
    relaxed
        .write(
            "@project/db",
            &format!("# DB\n\n{password}\nport 5432\n"),
            None,
        )
        .expect("guard off");

    let edit = |old: &str, new: &str| edits(&[(old, new)]);
    let error = refusal(
        f.store.update("@project/db", &edit("5432", "6432")),
        password,
    );
    assert_eq!(error.line_numbers(), Some(&[3][..]));
    assert_eq!(error.edit_index(), None);
    let error = refusal(f.store.rename("@project/db", "@project/database"), password);
    assert_eq!(
        error.message(),
        "the note holds a credential (password or secret assignment) on line 3; it was not moved. Replace the secret with a reference first (where it lives: a vault path or an environment variable name)"
    );
    assert!(f.root().join("project/proj-12345678/db.md").exists());

    let crumple = crumpling();
    f.store
        .update("@project/db", &crumple)
        .expect("metadata adds no text");
    f.store
        .update(
            "@project/db",
            &edit(password, "DB_PASSWORD is in the vault at shop/db"),
        )
        .expect("removing the credential");
    f.store
        .rename("@project/db", "@project/database")
        .expect("nothing to refuse now");
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
        !ResolvedSettings::resolve(Some(&global), Some(&project), Trusted)
            .settings
            .secret_guard
    );
    assert!(
        ResolvedSettings::resolve(Some(&global), None, Trusted)
            .settings
            .secret_guard
    );
    assert!(
        ResolvedSettings::resolve(None, None, Trusted)
            .settings
            .secret_guard
    );
    let wrong = json!({"notesoup": {"secretGuard": "no"}});
    let resolved = ResolvedSettings::resolve(None, Some(&wrong), Trusted);
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
        let resolved = ResolvedSettings::resolve(user, Some(&off), Untrusted);
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
    let resolved = ResolvedSettings::resolve(None, Some(&other), Untrusted);
    assert_eq!(
        (
            resolved.settings.secret_guard,
            resolved.settings.boot_max_chars
        ),
        (true, 5000)
    );
    // The user's own false stands, and a project's false beside it changes
    // nothing, so nothing is said.
    let resolved = ResolvedSettings::resolve(Some(&off), Some(&off), Untrusted);
    assert!(!resolved.settings.secret_guard);
    assert!(resolved.warnings.is_empty(), "{:?}", resolved.warnings);
    // Tightening is honoured.
    let resolved = ResolvedSettings::resolve(Some(&off), Some(&on), Untrusted);
    assert!(resolved.settings.secret_guard);
    assert!(resolved.warnings.is_empty());
    // A trusted project is the user's own.
    let resolved = ResolvedSettings::resolve(Some(&on), Some(&off), Trusted);
    assert!(!resolved.settings.secret_guard);
    assert!(resolved.warnings.is_empty());
}
