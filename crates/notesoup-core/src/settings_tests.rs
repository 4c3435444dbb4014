//! Settings: the key, the plain-object test, the per-key merge under trust
//! and validation, over internals no other crate sees.

#![allow(clippy::unwrap_used)]

use notesoup_core::settings::{
    ProjectTrust, ResolvedSettings, SETTINGS_KEY, Settings, SettingsWarning, WarnOnce,
    is_plain_object, merge, notesoup_record,
};
use serde_json::{Value, json};

const MARGIN_WARNING: &str = "notesoup: notesoup.reminderMarginTokens must be a positive integer; using the default reminder margin.";
const DREAMER_WARNING: &str = "notesoup: notesoup.dreamer must be a non-empty string; ignoring it.";

#[test]
fn warning_texts_are_exact() {
    assert_eq!(
        SettingsWarning::InvalidReminderMargin.to_string(),
        MARGIN_WARNING
    );
    assert_eq!(SettingsWarning::InvalidDreamer.to_string(), DREAMER_WARNING);
    // An overriding value that is not valid is named with its key's rule.
    for (key, rule) in [
        ("reminderMarginTokens", "must be a positive integer"),
        ("dreamer", "must be a non-empty string"),
        ("secretGuard", "must be true or false"),
        ("bootMaxChars", "must be an integer of at least 4000"),
    ] {
        assert_eq!(
            SettingsWarning::InvalidOverride(key).to_string(),
            format!(
                "notesoup: notesoup.{key} {rule}; the overriding value is ignored and the valid one under it is used."
            )
        );
    }
}

#[test]
fn plain_object_test() {
    assert!(is_plain_object(&json!({})));
    assert!(is_plain_object(&json!({"a": 1})));
    for value in [
        json!(null),
        json!([]),
        json!([{}]),
        json!("x"),
        json!(1),
        json!(true),
    ] {
        assert!(!is_plain_object(&value), "{value}");
    }
}

#[test]
fn the_notesoup_key() {
    assert_eq!(SETTINGS_KEY, "notesoup");
    let file = json!({"notesoup": {"dreamer": "x"}, "pi-context": {"dreamer": "old"}});
    assert_eq!(
        notesoup_record(&file).map(|r| r.get("dreamer")),
        Some(Some(&json!("x")))
    );
    // A record or a file that is not a plain object counts as `{}`.
    for file in [
        json!({"notesoup": null}),
        json!({"notesoup": [1]}),
        json!({"notesoup": "on"}),
        json!({"other": {}}),
        json!([{"notesoup": {}}]),
        json!(null),
    ] {
        assert_eq!(notesoup_record(&file), None, "{file}");
    }
}

fn settings(margin: u64, dreamer: Option<&str>) -> Settings {
    Settings {
        secret_guard: true,
        boot_max_chars: 10_000,
        reminder_margin_tokens: margin,
        dreamer: dreamer.map(str::to_owned),
    }
}

fn check_merge(global: Option<Value>, project: Option<Value>, expect: ResolvedSettings) {
    assert_eq!(
        ResolvedSettings::resolve(global.as_ref(), project.as_ref(), ProjectTrust::Trusted),
        expect,
        "global {global:?}, project {project:?}"
    );
}

#[test]
fn project_wins_per_key() {
    let resolved = |margin, dreamer| ResolvedSettings {
        settings: settings(margin, dreamer),
        warnings: vec![],
    };
    check_merge(None, None, resolved(24_576, None));
    check_merge(
        Some(json!({"notesoup": {"reminderMarginTokens": 1000, "dreamer": "global/model"}})),
        None,
        resolved(1000, Some("global/model")),
    );
    check_merge(
        Some(json!({"notesoup": {"reminderMarginTokens": 1000, "dreamer": "global/model"}})),
        Some(json!({"notesoup": {"dreamer": "project/model"}})),
        resolved(1000, Some("project/model")),
    );
    check_merge(
        Some(json!({"notesoup": {"dreamer": "global/model"}})),
        Some(json!({"notesoup": {"reminderMarginTokens": 2048}})),
        resolved(2048, Some("global/model")),
    );
    // A project record that is not a plain object counts as `{}`.
    check_merge(
        Some(json!({"notesoup": {"reminderMarginTokens": 1000}})),
        Some(json!({"notesoup": "nope"})),
        resolved(1000, None),
    );
    // An untrusted project is simply not passed.
    check_merge(
        None,
        Some(json!({"notesoup": {"reminderMarginTokens": 3000}})),
        resolved(3000, None),
    );
    // A valid project value hides an invalid global one: the merge comes first.
    check_merge(
        Some(json!({"notesoup": {"reminderMarginTokens": -1, "dreamer": ""}})),
        Some(json!({"notesoup": {"reminderMarginTokens": 5, "dreamer": "p"}})),
        resolved(5, Some("p")),
    );
}

#[test]
fn merge_keeps_unknown_keys_and_project_order_of_precedence() {
    let (merged, warning) = merge(
        Some(&json!({"notesoup": {"a": 1, "b": 1}})),
        Some(&json!({"notesoup": {"b": 2, "c": 2}})),
        ProjectTrust::Untrusted,
    );
    assert_eq!(warning, []);
    assert_eq!(Value::Object(merged), json!({"a": 1, "b": 2, "c": 2}));
}

/// An invalid project value never hides a valid user value: the user's is
/// used, with a warning, never the built-in default.
#[test]
fn an_invalid_project_value_falls_back_to_the_valid_user_value() {
    for trust in [ProjectTrust::Trusted, ProjectTrust::Untrusted] {
        let resolved = ResolvedSettings::resolve(
            Some(
                &json!({"notesoup": {"bootMaxChars": 5000, "reminderMarginTokens": 1000, "dreamer": "g"}}),
            ),
            Some(
                &json!({"notesoup": {"bootMaxChars": 3000, "reminderMarginTokens": -1, "dreamer": ""}}),
            ),
            trust,
        );
        assert_eq!(resolved.settings.boot_max_chars, 5000);
        assert_eq!(resolved.settings.reminder_margin_tokens, 1000);
        assert_eq!(resolved.settings.dreamer.as_deref(), Some("g"));
        assert_eq!(
            resolved.warnings,
            [
                SettingsWarning::InvalidOverride("bootMaxChars"),
                SettingsWarning::InvalidOverride("reminderMarginTokens"),
                SettingsWarning::InvalidOverride("dreamer"),
            ]
        );
    }
    assert_eq!(
        SettingsWarning::InvalidOverride("bootMaxChars").to_string(),
        "notesoup: notesoup.bootMaxChars must be an integer of at least 4000; the overriding value is ignored and the valid one under it is used."
    );
    // Nothing valid under it: the default, and the value's own warning.
    let alone = ResolvedSettings::resolve(
        Some(&json!({"notesoup": {"bootMaxChars": "big"}})),
        Some(&json!({"notesoup": {"bootMaxChars": 3000}})),
        ProjectTrust::Trusted,
    );
    assert_eq!(alone.settings.boot_max_chars, 10_000);
    assert_eq!(alone.warnings, [SettingsWarning::InvalidBootMaxChars]);
}

#[test]
fn reminder_margin_validation() {
    fn check(value: Value, expect: Option<u64>) {
        let record = json!({ "reminderMarginTokens": value.clone() });
        let resolved = ResolvedSettings::validate(record.as_object().expect("object"));
        match expect {
            Some(margin) => {
                assert_eq!(resolved.settings.reminder_margin_tokens, margin, "{value}");
                assert!(resolved.warnings.is_empty(), "{value}");
            }
            None => {
                assert_eq!(resolved.settings.reminder_margin_tokens, 24_576, "{value}");
                assert_eq!(
                    resolved.warnings,
                    vec![SettingsWarning::InvalidReminderMargin],
                    "{value}"
                );
            }
        }
    }
    check(json!(1), Some(1));
    check(json!(24_576), Some(24_576));
    check(json!(8192.0), Some(8192));
    check(
        json!(9_007_199_254_740_991_u64),
        Some(9_007_199_254_740_991),
    );
    check(json!(9_007_199_254_740_992_u64), None);
    check(json!(1e300), None);
    check(json!(0), None);
    check(json!(-1), None);
    check(json!(1.5), None);
    check(json!("24576"), None);
    check(json!(null), None);
    check(json!(true), None);
    check(json!([24576]), None);
    check(json!({"tokens": 1}), None);
}

#[test]
fn dreamer_validation() {
    fn check(value: Value, expect: Option<&str>) {
        let record = json!({ "dreamer": value.clone() });
        let resolved = ResolvedSettings::validate(record.as_object().expect("object"));
        assert_eq!(resolved.settings.dreamer.as_deref(), expect, "{value}");
        let warnings = if expect.is_some() {
            vec![]
        } else {
            vec![SettingsWarning::InvalidDreamer]
        };
        assert_eq!(resolved.warnings, warnings, "{value}");
    }
    check(
        json!("anthropic/claude-sonnet-4-5"),
        Some("anthropic/claude-sonnet-4-5"),
    );
    check(json!("  openai/gpt-5 \n"), Some("openai/gpt-5"));
    check(json!(""), None);
    check(json!("   "), None);
    check(json!(null), None);
    check(json!(42), None);
    check(json!(["a", "b"]), None);
}

#[test]
fn one_warning_per_distinct_problem_in_field_order() {
    let resolved = ResolvedSettings::resolve(
        Some(&json!({"notesoup": {"dreamer": 7, "reminderMarginTokens": "lots", "extra": 1}})),
        None,
        ProjectTrust::Trusted,
    );
    assert_eq!(resolved.settings, Settings::default());
    let texts: Vec<String> = resolved.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(texts, [MARGIN_WARNING, DREAMER_WARNING]);
}

#[test]
fn spec_example_resolves() {
    let file = json!({ "compaction": { "reserveTokens": 16384 },
      "notesoup": { "reminderMarginTokens": 24576, "dreamer": "anthropic/claude-sonnet-4-5" } });
    assert_eq!(
        ResolvedSettings::resolve(Some(&file), None, ProjectTrust::Trusted),
        ResolvedSettings {
            settings: settings(24_576, Some("anthropic/claude-sonnet-4-5")),
            warnings: vec![],
        }
    );
}

#[test]
fn each_distinct_warning_is_shown_once() {
    let mut once = WarnOnce::new();
    let bad = json!({"notesoup": {"reminderMarginTokens": 0}});
    let first = ResolvedSettings::resolve(Some(&bad), None, ProjectTrust::Trusted).warnings;
    assert_eq!(once.fresh(first), [MARGIN_WARNING]);
    // Resolved live again: nothing new to show.
    assert!(
        once.fresh(ResolvedSettings::resolve(Some(&bad), None, ProjectTrust::Trusted).warnings)
            .is_empty()
    );
    let worse = json!({"notesoup": {"reminderMarginTokens": 0, "dreamer": ""}});
    assert_eq!(
        once.fresh(ResolvedSettings::resolve(Some(&worse), None, ProjectTrust::Trusted).warnings),
        [DREAMER_WARNING]
    );
}

#[test]
fn boot_max_chars_validation() {
    let check = |value: Value, expect: Option<usize>| {
        let record = json!({"notesoup": {"bootMaxChars": value}});
        let resolved = ResolvedSettings::resolve(None, Some(&record), ProjectTrust::Trusted);
        match expect {
            Some(chars) => {
                assert_eq!(resolved.settings.boot_max_chars, chars, "{value}");
                assert!(resolved.warnings.is_empty());
            }
            None => {
                assert_eq!(resolved.settings.boot_max_chars, 10_000, "{value}");
                assert_eq!(resolved.warnings, [SettingsWarning::InvalidBootMaxChars]);
            }
        }
    };
    check(json!(4000), Some(4000));
    check(json!(50000), Some(50000));
    check(json!(3999), None);
    check(json!("20000"), None);
    check(json!(-1), None);
    check(json!(12000.5), None);
}

#[test]
fn the_legacy_key_is_read_with_a_warning() {
    let legacy = json!({"pi-context": {"reminderMarginTokens": 1000}});
    let resolved = ResolvedSettings::resolve(Some(&legacy), None, ProjectTrust::Trusted);
    assert_eq!(resolved.settings.reminder_margin_tokens, 1000);
    assert_eq!(resolved.warnings, [SettingsWarning::LegacyKey]);
    assert_eq!(
        resolved.warnings[0].to_string(),
        "notesoup: the settings key \"pi-context\" is now \"notesoup\"; rename it (the old key is still read for now)."
    );
    // The new key wins in a file that has both, without a warning.
    let both = json!({"notesoup": {"reminderMarginTokens": 2000}, "pi-context": {"reminderMarginTokens": 1000}});
    let resolved = ResolvedSettings::resolve(Some(&both), None, ProjectTrust::Trusted);
    assert_eq!(resolved.settings.reminder_margin_tokens, 2000);
    assert!(resolved.warnings.is_empty());
}
