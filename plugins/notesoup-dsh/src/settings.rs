//! notesoup's settings on dsh: core's `notesoup` record plus the two keys
//! only dsh reads (`reserveTokens`, `automaticResets`), from two layers.
//!
//! 1. The settings file `notesoup.json` in the dsh home (`$DSH_HOME`, else
//!    `~/.dsh`): a JSON object whose `notesoup` key is the record. Both the
//!    sidecar and the command line (`dream`, `boot --stats`) read it, so a
//!    setting such as `dreamer` needs no dsh process to be found.
//! 2. The `settings` config of the `notesoup` row in the dsh profile, which
//!    the bundle passes in `hello`; it wins per key.
//! 3. For `secretGuard` only, the project's own file
//!    `<session cwd>/.dsh/notesoup.json` (same shape), read when a session's
//!    notes store is opened. It comes with the repository, so it can turn
//!    the credential check on for itself but never off (core's
//!    [`ProjectTrust::Untrusted`]): its `false` is ignored with a warning. A
//!    value there that is not a boolean is ignored.
//!
//! Both files are read with core's bounded reader: a FIFO, a device, a
//! directory or a file over [`SettingsRecord::MAX_BYTES`] under either name is one
//! warning and the defaults, never a wait or a read without end.
//!
//! Every problem is one warning, each starting `notesoup: ` and naming the
//! key as it is written (`reserveTokens`, not a dotted path), so warnings
//! from core and from this crate read alike.
//!
//! [`SettingsRecord::MAX_BYTES`]: notesoup_core::settings::SettingsRecord::MAX_BYTES

use std::path::{Path, PathBuf};

use notesoup_core::budget::{BudgetPolicy, ClampedReserve};
use notesoup_core::settings::{self, ProjectTrust, Settings};
use serde_json::{Map, Value};

/// The settings file's name inside the dsh home.
pub const SETTINGS_FILE: &str = "notesoup.json";

/// Every key notesoup reads on dsh.
pub const KNOWN_KEYS: &[&str] = &[
    "reserveTokens",
    "reminderMarginTokens",
    "automaticResets",
    "dreamer",
    "secretGuard",
    "bootMaxChars",
];

/// The effective settings on dsh.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DshSettings {
    /// Core's settings (reminder margin, dreamer, secret guard, boot bound).
    pub core: Settings,
    /// The hard reserve in tokens.
    pub reserve_tokens: u64,
    /// Whether the hard reserve resets on its own.
    pub automatic_resets: bool,
}

impl Default for DshSettings {
    fn default() -> Self {
        Self {
            core: Settings::default(),
            reserve_tokens: BudgetPolicy::DEFAULT_RESERVE_TOKENS,
            automatic_resets: true,
        }
    }
}

/// Settings with the warnings their values produced.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResolvedDshSettings {
    /// The values to use.
    pub settings: DshSettings,
    /// One line per problem, each starting `notesoup: `.
    pub warnings: Vec<String>,
}

/// The dsh home: `$DSH_HOME`, else `~/.dsh`.
pub fn dsh_home(lookup: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let nonempty = |name: &str| lookup(name).filter(|v| !v.is_empty());
    nonempty("DSH_HOME")
        .map(PathBuf::from)
        .or_else(|| nonempty("HOME").map(|home| Path::new(&home).join(".dsh")))
}

/// The settings file: `<dsh home>/notesoup.json`.
pub fn settings_file(lookup: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    dsh_home(lookup).map(|home| home.join(SETTINGS_FILE))
}

/// The project settings file of a session whose cwd is `cwd`:
/// `<cwd>/.dsh/notesoup.json`.
pub fn project_file(cwd: &Path) -> PathBuf {
    cwd.join(".dsh").join(SETTINGS_FILE)
}

/// The credential guard for a session whose cwd is `cwd`, given the
/// sidecar's own (`user`: the dsh home's file under the row): the project's
/// file (layer 3) may turn it on, never off. Also the warnings: the project
/// file's problems, and a `false` there that was not applied. A value there
/// that is not a boolean is no project setting.
pub fn session_secret_guard(cwd: &Path, user: bool) -> (bool, Vec<String>) {
    let (record, mut warnings) = read_file(&project_file(cwd));
    let project: Map<String, Value> = record
        .get("secretGuard")
        .filter(|value| value.is_boolean())
        .map(|value| ("secretGuard".to_owned(), value.clone()))
        .into_iter()
        .collect();
    let user_record = Map::from_iter([("secretGuard".to_owned(), Value::Bool(user))]);
    let (merged, loosening) = settings::SettingsRecord::merge(
        Some(&user_record),
        Some(&project),
        ProjectTrust::Untrusted,
    );
    warnings.extend(loosening.iter().map(ToString::to_string));
    let guard = merged
        .get("secretGuard")
        .and_then(Value::as_bool)
        .unwrap_or(user);
    (guard, warnings)
}

/// The `notesoup` record of the settings file at `path`, with its warnings
/// (core's reading, the same on every host whose file is notesoup's own).
pub fn read_file(path: &Path) -> (Map<String, Value>, Vec<String>) {
    settings::SettingsRecord::read(path)
}

/// Merges the file's record and the row's `settings` (the row wins per key)
/// and validates the result.
pub fn resolve(file: &Map<String, Value>, row: &Value) -> ResolvedDshSettings {
    let mut warnings = Vec::new();
    // The row is the user's own profile: it may loosen the guard, and a
    // value of it that is not valid keeps the file's valid one.
    let record = match row {
        Value::Null => file.clone(),
        Value::Object(row) => {
            let (record, overrides) =
                settings::SettingsRecord::merge(Some(file), Some(row), ProjectTrust::Trusted);
            warnings.extend(overrides.iter().map(same_prefix));
            record
        }
        _ => {
            warnings.push(
                "notesoup: the row's settings must be an object; using the defaults.".to_owned(),
            );
            file.clone()
        }
    };
    let mut resolved = validate(&record);
    warnings.append(&mut resolved.warnings);
    resolved.warnings = warnings;
    resolved
}

/// Validates a merged record. Each problem warns once and falls back to the
/// default for that key.
pub fn validate(record: &Map<String, Value>) -> ResolvedDshSettings {
    let core = settings::ResolvedSettings::validate(record);
    let mut warnings: Vec<String> = core.warnings.iter().map(same_prefix).collect();
    let reserve_tokens = match record.get("reserveTokens") {
        None => BudgetPolicy::DEFAULT_RESERVE_TOKENS,
        Some(value) => match value.as_f64() {
            Some(raw) => {
                let clamped = ClampedReserve::of(raw, None);
                warnings.extend(clamped.warning.iter().map(same_prefix));
                clamped.tokens
            }
            None => {
                warnings.push(format!(
                    "notesoup: reserveTokens must be a positive integer (got {}); using the default reserve of {} tokens.",
                    shown(value),
                    BudgetPolicy::DEFAULT_RESERVE_TOKENS
                ));
                BudgetPolicy::DEFAULT_RESERVE_TOKENS
            }
        },
    };
    let automatic_resets = match record.get("automaticResets") {
        None => true,
        Some(Value::Bool(on)) => *on,
        Some(value) => {
            warnings.push(format!(
                "notesoup: automaticResets must be true or false (got {}); keeping automatic resets on.",
                shown(value)
            ));
            true
        }
    };
    for key in record.keys() {
        if !KNOWN_KEYS.contains(&key.as_str()) {
            warnings.push(format!(
                "notesoup: unknown setting {}; ignoring it (known: {}).",
                shown(&Value::String(key.clone())),
                KNOWN_KEYS.join(", ")
            ));
        }
    }
    ResolvedDshSettings {
        settings: DshSettings {
            core: core.settings,
            reserve_tokens,
            automatic_resets,
        },
        warnings,
    }
}

/// Core names its keys `notesoup.<key>` (the settings-file path on other
/// hosts); on dsh the key is written bare in either layer.
fn same_prefix(warning: &impl std::fmt::Display) -> String {
    let text = warning.to_string();
    match text.strip_prefix("notesoup: notesoup.") {
        Some(rest) => format!("notesoup: {rest}"),
        None => text,
    }
}

/// A value as JSON, cut to 60 characters (a warning repeats it).
fn shown(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 60 {
        let cut: String = text.chars().take(59).collect();
        format!("{cut}…")
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn record(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn wrong_types_warn_with_one_prefix_and_keep_defaults() {
        let resolved = validate(&record(json!({
            "automaticResets": "yes",
            "reserveTokens": "lots",
            "reminderMarginTokens": -1,
            "secretGuard": "off",
            "bootMaxChars": 10,
            "dreamer": "",
            "colour": 1,
        })));
        assert_eq!(resolved.settings, DshSettings::default());
        assert_eq!(resolved.warnings.len(), 7, "{:#?}", resolved.warnings);
        for warning in &resolved.warnings {
            assert!(warning.starts_with("notesoup: "), "{warning}");
            assert!(
                !warning.contains("notesoup.") || warning.contains("notesoup.json"),
                "{warning}"
            );
        }
        assert!(
            resolved
                .warnings
                .iter()
                .any(|w| w
                    .starts_with("notesoup: automaticResets must be true or false (got \"yes\")")),
            "{:#?}",
            resolved.warnings
        );
    }

    #[test]
    fn the_row_wins_per_key_over_the_file() {
        let file = record(
            json!({"dreamer": "deepseek-official/deepseek-v4-pro", "secretGuard": false, "bootMaxChars": 5000}),
        );
        let resolved = resolve(
            &file,
            &json!({"bootMaxChars": 6000, "automaticResets": false}),
        );
        assert!(resolved.warnings.is_empty(), "{:?}", resolved.warnings);
        let settings = resolved.settings;
        assert_eq!(
            settings.core.dreamer.as_deref(),
            Some("deepseek-official/deepseek-v4-pro")
        );
        assert!(!settings.core.secret_guard);
        assert_eq!(settings.core.boot_max_chars, 6000);
        assert!(!settings.automatic_resets);
        assert_eq!(resolve(&file, &json!([])).warnings.len(), 1);
        let no_row = resolve(&file, &Value::Null);
        assert!(no_row.warnings.is_empty(), "{:?}", no_row.warnings);
        assert_eq!(no_row.settings.core.boot_max_chars, 5000);
    }

    #[test]
    fn a_value_a_warning_repeats_is_cut_past_sixty_characters() {
        let exact = Value::String("x".repeat(58));
        assert_eq!(shown(&exact), exact.to_string(), "60 with its quotes");
        let longer = Value::String("é".repeat(59));
        assert_eq!(shown(&longer), format!("\"{}…", "é".repeat(58)));
    }

    #[test]
    fn an_invalid_row_value_keeps_the_file_s_valid_one() {
        let file = record(json!({"bootMaxChars": 5000}));
        let resolved = resolve(&file, &json!({"bootMaxChars": 3000}));
        assert_eq!(resolved.settings.core.boot_max_chars, 5000);
        assert_eq!(
            resolved.warnings,
            [
                "notesoup: bootMaxChars must be an integer of at least 4000; the overriding value is ignored and the valid one under it is used."
            ]
        );
        // With nothing valid under it, the default, as before.
        let alone = resolve(&Map::new(), &json!({"bootMaxChars": 3000}));
        assert_eq!(alone.settings.core.boot_max_chars, 10_000);
    }

    #[test]
    fn the_legacy_key_is_read_and_warned_about() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join(SETTINGS_FILE);
        std::fs::write(&path, r#"{"pi-context": {"bootMaxChars": 6000}}"#).expect("write");
        let (found, warnings) = read_file(&path);
        assert_eq!(found, record(json!({"bootMaxChars": 6000})));
        assert_eq!(
            warnings,
            [
                "notesoup: the settings key \"pi-context\" is now \"notesoup\"; rename it (the old key is still read for now)."
            ]
        );
    }

    #[test]
    fn the_file_is_optional_and_its_problems_warn() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join(SETTINGS_FILE);
        assert_eq!(read_file(&path), (Map::new(), Vec::new()));
        std::fs::write(&path, "{not json").expect("write");
        let (found, warnings) = read_file(&path);
        assert!(found.is_empty());
        assert!(warnings[0].starts_with("notesoup: "), "{warnings:?}");
        std::fs::write(&path, r#"{"notesoup": {"dreamer": "m"}, "other": 1}"#).expect("write");
        assert_eq!(read_file(&path).0, record(json!({"dreamer": "m"})));
        std::fs::write(&path, r#"{"notesoup": 3}"#).expect("write");
        assert_eq!(read_file(&path).1.len(), 1);
    }
}
