//! The shared adversarial corpora (`tests/adversarial/` at the workspace
//! root), read the same way by every binary's tests.

use std::path::Path;

use serde_json::Value;

/// The cases of `tests/adversarial/<name>`, one JSON object a line; the
/// first line, which says what the fields mean, is checked and left out.
pub fn corpus(name: &str) -> Vec<Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../adversarial")
        .join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    let mut lines = text.lines();
    let about: Value = serde_json::from_str(lines.next().unwrap_or_default())
        .unwrap_or_else(|error| panic!("{name}: the about line: {error}"));
    assert!(about["about"].is_string(), "{name}: no about line");
    lines
        .enumerate()
        .map(|(at, line)| {
            serde_json::from_str(line)
                .unwrap_or_else(|error| panic!("{name}: case {}: {error}", at + 1))
        })
        .collect()
}
