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

use std::path::{Path, PathBuf};

use notesoup_core::settings::{self, SETTINGS_KEY, Settings};
use serde_json::{Map, Value};

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

/// The two files, global first.
pub fn files(env: &HostEnv, project_dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::with_capacity(2);
    if let Some(dir) = &env.claude_dir {
        files.push(dir.join(SETTINGS_FILE));
    }
    files.push(project_dir.join(".claude").join(SETTINGS_FILE));
    files
}

/// The settings for `project_dir`. Missing files are empty records; an
/// unreadable file or value is a warning and the default.
pub fn load(env: &HostEnv, project_dir: &Path) -> ClaudeSettings {
    let mut record = Map::new();
    let mut warnings = Vec::new();
    for path in files(env, project_dir) {
        let (found, mut problems) = read_file(&path);
        record.extend(found);
        warnings.append(&mut problems);
    }
    let resolved = settings::validate(&record);
    warnings.extend(resolved.warnings.iter().map(ToString::to_string));
    ClaudeSettings {
        settings: resolved.settings,
        warnings,
    }
}

/// The `notesoup` record of the file at `path`.
pub fn read_file(path: &Path) -> (Map<String, Value>, Vec<String>) {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error)
            if matches!(
                error.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            return (Map::new(), Vec::new());
        }
        Err(error) => {
            return (
                Map::new(),
                vec![format!(
                    "notesoup: could not read {}: {error}; using the defaults.",
                    path.display()
                )],
            );
        }
    };
    let problem = |what: String| {
        (
            Map::new(),
            vec![format!("notesoup: {what}; using the defaults.")],
        )
    };
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(file)) => match file.get(SETTINGS_KEY) {
            None => (Map::new(), Vec::new()),
            Some(Value::Object(record)) => (record.clone(), Vec::new()),
            Some(_) => problem(format!(
                "the {SETTINGS_KEY} key of {} must be an object",
                path.display()
            )),
        },
        Ok(_) => problem(format!("{} must hold a JSON object", path.display())),
        Err(error) => problem(format!("{} is not JSON ({error})", path.display())),
    }
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
            r#"{"notesoup":{"bootMaxChars":12000,"dreamer":" sonnet "}}"#,
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
