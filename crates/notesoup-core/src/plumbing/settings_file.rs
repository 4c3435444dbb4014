//! Reading the `notesoup` record of one JSON settings file that holds it
//! under its own key (Claude Code's `notesoup.json` files, dsh's): the
//! hosts whose files are notesoup's alone read them the same way and say
//! the same warnings.

use std::path::Path;

use serde_json::{Map, Value};

use super::small_file::{Links, read_small_text};
use crate::settings::SettingsRecord;
use crate::settings::{self, SETTINGS_KEY};

impl crate::settings::SettingsRecord {
    /// The `notesoup` record of the settings file at `path`, and the warnings:
    /// a missing file, or one without the key, is an empty record; a record
    /// under the legacy key is read, with a warning that names it; an
    /// unreadable one, one that is not a JSON object, or a record that is not
    /// an object is an empty record and one warning (the defaults apply).
    pub fn read(path: &Path) -> (Map<String, Value>, Vec<String>) {
        let text = match read_small_text(path, SettingsRecord::MAX_BYTES, Links::Follow) {
            Ok(Some(text)) => text,
            Ok(None) => return (Map::new(), Vec::new()),
            Err(error) => {
                return (
                    Map::new(),
                    vec![format!(
                        "notesoup: could not read {error}; using the defaults."
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
            Ok(Value::Object(file)) => match settings::record_entry(&file) {
                None => (Map::new(), Vec::new()),
                Some((Value::Object(record), legacy)) => (
                    record.clone(),
                    legacy.iter().map(ToString::to_string).collect(),
                ),
                Some(_) => problem(format!(
                    "the {SETTINGS_KEY} key of {} must be an object",
                    path.display()
                )),
            },
            Ok(_) => problem(format!("{} must hold a JSON object", path.display())),
            Err(error) => problem(format!("{} is not JSON ({error})", path.display())),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;

    /// What each kind of file gives: the record and the warnings.
    #[test]
    fn a_settings_file_gives_its_record_or_a_warning_and_the_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notesoup.json");
        let read = |text: &str| {
            std::fs::write(&path, text).unwrap();
            SettingsRecord::read(&path)
        };
        let shown = path.display();
        let record = json!({"dreamer": "model"}).as_object().unwrap().clone();
        assert_eq!(
            SettingsRecord::read(&dir.path().join("none")),
            (Map::new(), Vec::new())
        );
        assert_eq!(read("{}"), (Map::new(), Vec::new()));
        assert_eq!(
            read(r#"{"notesoup":{"dreamer":"model"}}"#),
            (record.clone(), Vec::new())
        );
        let (legacy, warnings) = read(r#"{"pi-context":{"dreamer":"model"}}"#);
        assert_eq!(legacy, record);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("pi-context"), "{warnings:?}");
        let defaults = |warning: String| (Map::new(), vec![warning]);
        assert_eq!(
            read(r#"{"notesoup":[]}"#),
            defaults(format!(
                "notesoup: the notesoup key of {shown} must be an object; using the defaults."
            ))
        );
        assert_eq!(
            read("[]"),
            defaults(format!(
                "notesoup: {shown} must hold a JSON object; using the defaults."
            ))
        );
        let (record, warnings) = read("{");
        assert!(record.is_empty());
        assert!(
            warnings.len() == 1
                && warnings[0].starts_with(&format!("notesoup: {shown} is not JSON (")),
            "{warnings:?}"
        );
        std::fs::remove_file(&path).unwrap();
        std::fs::create_dir(&path).unwrap();
        let (record, warnings) = SettingsRecord::read(&path);
        assert!(record.is_empty());
        assert!(
            warnings.len() == 1 && warnings[0].starts_with("notesoup: could not read "),
            "{warnings:?}"
        );
    }
}
