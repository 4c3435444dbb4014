//! Settings: the `notesoup` key, the global/project merge and validation.
//!
//! Hosts read the settings files (with the plumbing's bounded reader) and
//! say whether the project is trusted; this module takes the parsed JSON
//! records and returns the settings notesoup has, with one warning per
//! distinct problem.
//!
//! A project's own file comes with its repository: whoever controls the
//! repository wrote it. So unless the host trusts the project explicitly
//! (Pi's trusted projects), a project file may tighten the credential guard
//! (`secretGuard: true` over the user's `false`) but never loosen it: its
//! `secretGuard: false` is ignored with a warning. Only the user's own
//! settings, or a trusted project's, turn the guard off.

use std::collections::BTreeSet;
use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use typeshare::typeshare;

use crate::boot::{DEFAULT_BOOT_MAX_CHARS, MIN_BOOT_MAX_CHARS};
use crate::budget::DEFAULT_REMINDER_MARGIN_TOKENS;

/// The key of notesoup's record in a settings file (formerly `pi-context`).
pub(crate) const SETTINGS_KEY: &str = "notesoup";

/// The largest integer JavaScript represents exactly, `2^53 - 1`: the bound
/// of a "safe integer".
pub(crate) const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// The shape of the `notesoup` record in a settings file, for documentation
/// and schema generation. [`resolve`] reads raw JSON, so a wrong value is
/// reported rather than failing the whole record.
// The sentences above are also the generated schema's and TypeScript's
// description, so the link's target is given to rustdoc alone.
#[cfg_attr(doc, doc = "")]
#[cfg_attr(doc, doc = "[`resolve`]: crate::settings::ResolvedSettings::resolve")]
#[typeshare]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SettingsRecord {
    /// Tokens between the reserve and the reminder line: a positive safe
    /// integer, default 24576.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 9_007_199_254_740_991_u64))]
    #[typeshare(serialized_as = "Option<U53>")]
    pub reminder_margin_tokens: Option<u64>,
    /// The model pattern the dream runs on: a non-empty string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub dreamer: Option<String>,
    /// Whether note writes holding a credential are refused: a boolean,
    /// default true. Set it to false in your own settings (or a trusted
    /// project's) to store such notes anyway; a project's own file can only
    /// turn it on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_guard: Option<bool>,
    /// The bound of a whole boot in characters: an integer of at least 4000,
    /// default 10000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 4000, max = 9_007_199_254_740_991_u64))]
    #[typeshare(serialized_as = "Option<U53>")]
    pub boot_max_chars: Option<u64>,
}

/// The effective settings after the merge and validation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// The reminder margin in tokens (default `DEFAULT_REMINDER_MARGIN_TOKENS`).
    pub reminder_margin_tokens: u64,
    /// The dreamer model pattern, trimmed; `None` lets the host choose.
    pub dreamer: Option<String>,
    /// Whether the notes store refuses writes that hold a credential.
    pub secret_guard: bool,
    /// The bound of a whole boot in characters.
    pub boot_max_chars: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            reminder_margin_tokens: DEFAULT_REMINDER_MARGIN_TOKENS,
            dreamer: None,
            secret_guard: true,
            boot_max_chars: DEFAULT_BOOT_MAX_CHARS,
        }
    }
}

/// A problem with a settings value; the value is ignored and the default used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SettingsWarning {
    /// `reminderMarginTokens` is present but not a positive safe integer.
    InvalidReminderMargin,
    /// `dreamer` is present but not a non-empty string.
    InvalidDreamer,
    /// `secretGuard` is present but not a boolean.
    InvalidSecretGuard,
    /// `bootMaxChars` is present but not an integer of at least 4000.
    InvalidBootMaxChars,
    /// A settings file names the record `pi-context` (its old name).
    LegacyKey,
    /// An untrusted project's file sets `secretGuard: false`; ignored.
    ProjectCannotLoosenSecretGuard,
    /// The settings that take precedence (a project's, dsh's row) set this
    /// key to a value that is not valid over a valid one: the valid value
    /// under them is used, never the built-in default.
    InvalidOverride(&'static str),
}

/// What a valid value of a key is, as the warnings say it.
fn rule(key: &str) -> &'static str {
    match key {
        "reminderMarginTokens" => "must be a positive integer",
        "dreamer" => "must be a non-empty string",
        "secretGuard" => "must be true or false",
        "bootMaxChars" => "must be an integer of at least 4000",
        _ => "is not valid",
    }
}

/// The keys `validate` reads.
const CORE_KEYS: [&str; 4] = [
    "reminderMarginTokens",
    "dreamer",
    "secretGuard",
    "bootMaxChars",
];

impl fmt::Display for SettingsWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::InvalidReminderMargin => {
                "notesoup: notesoup.reminderMarginTokens must be a positive integer; using the default reminder margin."
            }
            Self::InvalidDreamer => {
                "notesoup: notesoup.dreamer must be a non-empty string; ignoring it."
            }
            Self::InvalidSecretGuard => {
                "notesoup: notesoup.secretGuard must be true or false; keeping the credential guard on."
            }
            Self::LegacyKey => {
                "notesoup: the settings key \"pi-context\" is now \"notesoup\"; rename it (the old key is still read for now)."
            }
            Self::InvalidBootMaxChars => {
                "notesoup: notesoup.bootMaxChars must be an integer of at least 4000; using the default of 10000."
            }
            Self::ProjectCannotLoosenSecretGuard => {
                "notesoup: a project's own settings cannot turn notesoup.secretGuard off; keeping the credential guard on (turn it off in your own settings)."
            }
            Self::InvalidOverride(key) => {
                return write!(
                    f,
                    "notesoup: notesoup.{key} {}; the overriding value is ignored and the valid one under it is used.",
                    rule(key)
                );
            }
        })
    }
}

/// Settings with the warnings their values produced, in field order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResolvedSettings {
    /// The values to use.
    pub settings: Settings,
    /// One per distinct problem.
    pub warnings: Vec<SettingsWarning>,
}

#[cfg(test)]
/// Whether a JSON value is a plain object (not null, an array or a scalar).
pub(crate) fn is_plain_object(value: &Value) -> bool {
    value.is_object()
}

/// The key notesoup's record had before it was renamed; still read, with a
/// warning, from a file that has no `notesoup` record.
pub(crate) const LEGACY_SETTINGS_KEY: &str = "pi-context";

/// The `notesoup` record of one parsed settings file (or, in a file without
/// one, its legacy `pi-context` record); a file or a record that is not a
/// plain object counts as `{}`.
pub(crate) fn notesoup_record(settings_file: &Value) -> Option<&Map<String, Value>> {
    match settings_file.get(SETTINGS_KEY) {
        Some(record) => record.as_object(),
        None => settings_file.get(LEGACY_SETTINGS_KEY)?.as_object(),
    }
}

/// The value a settings file (its top-level object) keeps notesoup's
/// record under: `notesoup`, else the legacy `pi-context`, which is read
/// with [`SettingsWarning::LegacyKey`], on every host alike.
pub(crate) fn record_entry(file: &Map<String, Value>) -> Option<(&Value, Option<SettingsWarning>)> {
    match file.get(SETTINGS_KEY) {
        Some(record) => Some((record, None)),
        None => file
            .get(LEGACY_SETTINGS_KEY)
            .map(|record| (record, Some(SettingsWarning::LegacyKey))),
    }
}

/// Whether a settings file still names its record by the legacy key.
fn uses_legacy_key(settings_file: &Value) -> bool {
    settings_file.get(SETTINGS_KEY).is_none() && settings_file.get(LEGACY_SETTINGS_KEY).is_some()
}

/// Whether a project's settings file may loosen the user's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProjectTrust {
    /// The host trusts the project explicitly (Pi's trusted projects): its
    /// file counts as the user's own.
    Trusted,
    /// A file that comes with the repository (`.claude/notesoup.json`,
    /// `.dsh/notesoup.json`): it may tighten the credential guard, never
    /// loosen it.
    Untrusted,
}

/// Whether `value` is a valid value of `key`.
fn is_valid(key: &str, value: &Value) -> bool {
    ResolvedSettings::validate(&Map::from_iter([(key.to_owned(), value.clone())]))
        .warnings
        .is_empty()
}

/// `{...global.notesoup, ...project.notesoup}` under `trust` (see
/// [`SettingsRecord::merge`]). Pass `None` for a file that is absent or not read
/// (a project the host does not trust at all).
pub(crate) fn merge(
    global: Option<&Value>,
    project: Option<&Value>,
    trust: ProjectTrust,
) -> (Map<String, Value>, Vec<SettingsWarning>) {
    SettingsRecord::merge(
        global.and_then(notesoup_record),
        project.and_then(notesoup_record),
        trust,
    )
}

/// `Number.isSafeInteger(v) && v > 0`: `24576` and `24576.0` pass; strings,
/// fractions, zero, negatives, `null` and anything above 2^53 - 1 do not.
fn positive_safe_integer(value: &Value) -> Option<u64> {
    let number = value.as_number()?;
    let integer = match number.as_u64() {
        Some(n) => n,
        None => {
            let float = number.as_f64()?;
            if float.fract() != 0.0 || !(1.0..=9_007_199_254_740_991.0).contains(&float) {
                return None;
            }
            // An integral float within the safe range converts exactly.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let n = float as u64;
            n
        }
    };
    (1..=MAX_SAFE_INTEGER).contains(&integer).then_some(integer)
}

/// Remembers which warnings were already shown, so each distinct warning is
/// shown once even when the settings are resolved live on every decision.
#[derive(Debug, Default, Clone)]
pub struct WarnOnce {
    shown: BTreeSet<String>,
}

impl WarnOnce {
    /// An empty memory.
    pub fn new() -> Self {
        Self::default()
    }

    /// The warnings not shown before, now marked as shown.
    pub fn fresh<W: fmt::Display>(&mut self, warnings: impl IntoIterator<Item = W>) -> Vec<String> {
        warnings
            .into_iter()
            .map(|w| w.to_string())
            .filter(|text| self.shown.insert(text.clone()))
            .collect()
    }
}

#[cfg(test)]
#[path = "settings_tests.rs"]
mod behaviour;

impl SettingsRecord {
    /// The project's `notesoup` record over the user's, per key: project values
    /// win, except that an untrusted project's `secretGuard: false` is ignored
    /// (with a warning when it would have turned the guard off), and a project
    /// value that is not valid never hides a valid user value: the user's is
    /// kept, with a warning ([`SettingsWarning::InvalidOverride`]), so an
    /// invalid value falls back to the setting under it, never to the built-in
    /// default. Keys notesoup's core does not read are merged as given.
    pub fn merge(
        user: Option<&Map<String, Value>>,
        project: Option<&Map<String, Value>>,
        trust: ProjectTrust,
    ) -> (Map<String, Value>, Vec<SettingsWarning>) {
        let mut merged = user.cloned().unwrap_or_default();
        let mut warnings = Vec::new();
        for (key, value) in project.into_iter().flatten() {
            if trust == ProjectTrust::Untrusted
                && key == "secretGuard"
                && *value == Value::Bool(false)
            {
                if merged.get(key) != Some(&Value::Bool(false)) {
                    warnings.push(SettingsWarning::ProjectCannotLoosenSecretGuard);
                }
                continue;
            }
            if let Some(known) = CORE_KEYS.into_iter().find(|known| known == key)
                && !is_valid(key, value)
                && merged.get(key).is_some_and(|under| is_valid(key, under))
            {
                warnings.push(SettingsWarning::InvalidOverride(known));
                continue;
            }
            merged.insert(key.clone(), value.clone());
        }
        (merged, warnings)
    }
}

impl ResolvedSettings {
    /// Merges the global and project settings files under `trust` and
    /// validates the result.
    pub fn resolve(
        global: Option<&Value>,
        project: Option<&Value>,
        trust: ProjectTrust,
    ) -> ResolvedSettings {
        let (merged, loosening) = merge(global, project, trust);
        let mut resolved = ResolvedSettings::validate(&merged);
        resolved.warnings.extend(loosening);
        if [global, project].into_iter().flatten().any(uses_legacy_key) {
            resolved.warnings.insert(0, SettingsWarning::LegacyKey);
        }
        resolved
    }

    /// Validates a merged `notesoup` record. Unknown keys are ignored.
    pub fn validate(record: &Map<String, Value>) -> ResolvedSettings {
        let mut resolved = ResolvedSettings::default();
        if let Some(value) = record.get("reminderMarginTokens") {
            match positive_safe_integer(value) {
                Some(margin) => resolved.settings.reminder_margin_tokens = margin,
                None => resolved
                    .warnings
                    .push(SettingsWarning::InvalidReminderMargin),
            }
        }
        if let Some(value) = record.get("dreamer") {
            match value.as_str().map(str::trim).filter(|s| !s.is_empty()) {
                Some(pattern) => resolved.settings.dreamer = Some(pattern.to_owned()),
                None => resolved.warnings.push(SettingsWarning::InvalidDreamer),
            }
        }
        if let Some(value) = record.get("secretGuard") {
            match value.as_bool() {
                Some(on) => resolved.settings.secret_guard = on,
                None => resolved.warnings.push(SettingsWarning::InvalidSecretGuard),
            }
        }
        if let Some(value) = record.get("bootMaxChars") {
            match positive_safe_integer(value)
                .filter(|&chars| chars >= MIN_BOOT_MAX_CHARS as u64)
                .and_then(|chars| usize::try_from(chars).ok())
            {
                Some(chars) => resolved.settings.boot_max_chars = chars,
                None => resolved.warnings.push(SettingsWarning::InvalidBootMaxChars),
            }
        }
        resolved
    }
}
