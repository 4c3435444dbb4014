//! The thin Cordis bundle, embedded in the binary and written out by
//! `notesoup-dsh bundle --out DIR` (and `install`).
//!
//! Next to the hand-written JS the binary writes `manifest.json`: its version,
//! the pinned dsh, the tool schemas and the prompt names, so the bundle and
//! the sidecar it spawns always agree.

use std::path::Path;

use notesoup_core::install::{InstallError, InstallFile};
use notesoup_core::tools::Tool;
use serde_json::json;

use crate::decode::{BOOT_SECTION, PINNED_DSH_VERSION};
use crate::dream_tools;
use crate::server::TEMPLATE_OPEN;
use crate::tools;
use notesoup_core::plumbing::LineRead;

/// How many bytes of session events the bundle sends in one request before
/// it sends the rest ahead in `session.sync` batches: well under the
/// sidecar's line cap, so a resumed long session still fits.
pub const SYNC_BATCH_BYTES: usize = LineRead::MAX_BYTES / 4;

/// The profile patch `dsh plugin add` applies: notesoup's row and its
/// compaction engine (which disables `compaction-basic`).
pub const ENGINE_PATCH: &str = include_str!("../bundle/cordis.patch.yml");
/// The profile patch without the engine (`--no-engine`).
pub const NO_ENGINE_PATCH: &str = include_str!("../bundle/cordis.no-engine.patch.yml");

/// The bundle's files but `cordis.patch.yml`, name and content.
pub const FILES: &[(&str, &str)] = &[
    ("package.json", include_str!("../bundle/package.json")),
    (
        "engine.patch.yml",
        include_str!("../bundle/engine.patch.yml"),
    ),
    ("index.js", include_str!("../bundle/index.js")),
    ("engine.js", include_str!("../bundle/engine.js")),
    ("dream.js", include_str!("../bundle/dream.js")),
    ("sidecar.js", include_str!("../bundle/sidecar.js")),
];

/// Whether the bundle's profile patch mounts notesoup's compaction engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// Mounted, `compaction-basic` disabled (the default): no summary ever.
    Mounted,
    /// Left out: dsh's summary compaction stays on.
    Left,
}

/// The generated `manifest.json`.
pub fn manifest() -> String {
    let value = json!({
        "version": env!("CARGO_PKG_VERSION"),
        "dsh": PINNED_DSH_VERSION,
        "bootSection": BOOT_SECTION,
        "templateOpen": TEMPLATE_OPEN,
        "budgetTool": Tool::GET_CONTEXT_REMAINING.name,
        "tools": tools::manifest(),
        "dreamTools": dream_tools::manifest(),
        "syncBatchBytes": SYNC_BATCH_BYTES,
    });
    format!("{value:#}\n")
}

/// Writes the bundle into `dir` (created when missing), with the engine.
pub fn write(dir: &Path) -> Result<(), InstallError> {
    write_with(dir, Engine::Mounted, false)
}

/// Writes the bundle into `dir` (created when missing) through core's
/// installer: never through a link, never over files notesoup did not
/// write unless `force`; `engine` picks its `cordis.patch.yml`.
pub fn write_with(dir: &Path, engine: Engine, force: bool) -> Result<(), InstallError> {
    let manifest = manifest();
    InstallFile::install(dir, &files(engine, &manifest), force)
}

/// Every file of the bundle: [`FILES`], the profile patch `engine` picks
/// and `manifest` (the text of [`manifest()`]).
fn files(engine: Engine, manifest: &str) -> Vec<InstallFile<'_>> {
    let patch = match engine {
        Engine::Mounted => ENGINE_PATCH,
        Engine::Left => NO_ENGINE_PATCH,
    };
    FILES
        .iter()
        .copied()
        .chain([("cordis.patch.yml", patch), ("manifest.json", manifest)])
        .map(|(path, text)| InstallFile {
            path,
            bytes: text.as_bytes(),
            executable: false,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    #[test]
    fn the_manifest_names_what_the_bundle_and_its_sidecar_share() {
        let manifest: Value = serde_json::from_str(&manifest()).expect("json");
        assert_eq!(manifest["version"], env!("CARGO_PKG_VERSION"));
        assert_eq!(manifest["dsh"], PINNED_DSH_VERSION);
        assert_eq!(manifest["bootSection"], BOOT_SECTION);
        assert_eq!(manifest["templateOpen"], TEMPLATE_OPEN);
        assert_eq!(manifest["budgetTool"], "get_context_remaining");
        assert_eq!(manifest["syncBatchBytes"], 4 * 1024 * 1024);
        assert_eq!(manifest["tools"], json!(tools::manifest()));
        assert_eq!(manifest["dreamTools"], json!(dream_tools::manifest()));
    }

    #[test]
    fn the_bundle_is_written_whole_with_the_engine_or_without() {
        let dir = tempfile::tempdir().expect("tempdir");
        let bundle = dir.path().join("bundle");
        write(&bundle).expect("written");
        let read = |name: &str| std::fs::read_to_string(bundle.join(name)).expect(name);
        for (name, text) in FILES {
            assert_eq!(read(name), *text, "{name}");
        }
        assert_eq!(read("manifest.json"), manifest());
        assert_eq!(read("cordis.patch.yml"), ENGINE_PATCH);
        write_with(&bundle, Engine::Left, false).expect("written again");
        assert_eq!(read("cordis.patch.yml"), NO_ENGINE_PATCH);
    }
}
