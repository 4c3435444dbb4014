//! notesoup's settings on Claude Code: core's `notesoup` record, from two
//! files, the project's winning per key.
//!
//! 1. `<Claude config dir>/notesoup.json` (`CLAUDE_CONFIG_DIR`, else
//!    `~/.claude`): every project.
//! 2. `<project>/.claude/notesoup.json`: one project.
//!
//! Each is a JSON object whose `notesoup` key is the record
//! (`{"notesoup": {"secretGuard": false}}`). They are files of notesoup's
//! own rather than keys in Claude Code's `settings.json`, which Claude Code
//! validates and owns.
//!
//! The project's file comes with its repository, so it may turn the
//! credential guard on but never off (core's [`ProjectTrust::Untrusted`]).
//! Each file is read with core's bounded reader: a FIFO, a device, a
//! directory or a file over [`SettingsRecord::MAX_BYTES`] under either name is one
//! warning and the defaults, never a wait or a read without end.
//!
//! [`SettingsRecord::MAX_BYTES`]: notesoup_core::settings::SettingsRecord::MAX_BYTES

use std::path::{Path, PathBuf};

use notesoup_core::settings::{self, ProjectTrust, Settings};

use crate::env::HostEnv;

/// The settings file's name, in the Claude config dir and in a project's
/// `.claude/`.
pub const SETTINGS_FILE: &str = "notesoup.json";

/// Settings with one warning line per problem, each starting `notesoup: `.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ClaudeSettings {
    /// The values to use.
    pub settings: Settings,
    /// What was wrong with the files or their values.
    pub warnings: Vec<String>,
}

/// The settings for `project_dir`. Missing files are empty records; an
/// unreadable file or value is a warning and the default.
pub fn load(env: &HostEnv, project_dir: &Path) -> ClaudeSettings {
    let mut warnings = Vec::new();
    let mut read = |path: Option<PathBuf>| {
        let (found, mut problems) = path.map(|path| read_file(&path)).unwrap_or_default();
        warnings.append(&mut problems);
        found
    };
    let [user, project] = files(env, project_dir);
    let user = read(user);
    let project = read(project);
    let (record, loosening) =
        settings::SettingsRecord::merge(Some(&user), Some(&project), ProjectTrust::Untrusted);
    let resolved = settings::ResolvedSettings::validate(&record);
    warnings.extend(
        resolved
            .warnings
            .iter()
            .chain(&loosening)
            .map(ToString::to_string),
    );
    ClaudeSettings {
        settings: resolved.settings,
        warnings,
    }
}

/// The settings files for `project_dir`, the user's first (none when the
/// Claude config dir is unknown), then the project's.
pub fn files(env: &HostEnv, project_dir: &Path) -> [Option<PathBuf>; 2] {
    [
        env.claude_dir.as_ref().map(|dir| dir.join(SETTINGS_FILE)),
        Some(project_dir.join(".claude").join(SETTINGS_FILE)),
    ]
}

/// The `notesoup` record of the settings file at `path`, with its warnings
/// (core's reading, the same on every host whose file is notesoup's own).
pub fn read_file(path: &Path) -> (serde_json::Map<String, serde_json::Value>, Vec<String>) {
    settings::SettingsRecord::read(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_project_wins_per_key_and_problems_warn() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("claude");
        let project = dir.path().join("proj");
        std::fs::create_dir_all(&config).unwrap();
        std::fs::create_dir_all(project.join(".claude")).unwrap();
        let env = HostEnv {
            claude_dir: Some(config.clone()),
            ..HostEnv::default()
        };
        assert_eq!(load(&env, &project), ClaudeSettings::default());
        std::fs::write(
            config.join(SETTINGS_FILE),
            r#"{"notesoup":{"secretGuard":false,"bootMaxChars":6000}}"#,
        )
        .unwrap();
        std::fs::write(
            project.join(".claude").join(SETTINGS_FILE),
            r#"{"notesoup":{"bootMaxChars":12000,"dreamer":" sonnet ","secretGuard":false}}"#,
        )
        .unwrap();
        let loaded = load(&env, &project);
        assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
        assert!(!loaded.settings.secret_guard);
        assert_eq!(loaded.settings.boot_max_chars, 12000);
        assert_eq!(loaded.settings.dreamer.as_deref(), Some("sonnet"));

        std::fs::write(project.join(".claude").join(SETTINGS_FILE), "{nope").unwrap();
        std::fs::write(
            config.join(SETTINGS_FILE),
            r#"{"notesoup":{"secretGuard":"no"}}"#,
        )
        .unwrap();
        let loaded = load(&env, &project);
        assert!(loaded.settings.secret_guard);
        assert_eq!(loaded.warnings.len(), 2, "{:?}", loaded.warnings);
        assert!(loaded.warnings[0].contains("is not JSON"));
        assert!(loaded.warnings[1].contains("secretGuard"));
    }
}
