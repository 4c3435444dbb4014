//! `notesoup install-plugin [--dir DIR]`: lays out the Claude Code
//! marketplace (the plugin and the optional reset mod, each with this very
//! binary in its `bin/`) in a stable place, so an install does not depend
//! on a build directory that `cargo clean` removes. The plugin files are
//! embedded in the binary; a test keeps them equal to the repository's.

use std::path::{Path, PathBuf};

use notesoup_core::install::{InstallError, InstallFile};

use crate::env::HostEnv;

/// Every file of the marketplace but the binaries: its path in the
/// marketplace and its bytes.
pub const FILES: [(&str, &[u8]); 14] = [
    (
        ".claude-plugin/marketplace.json",
        include_bytes!("../.claude-plugin/marketplace.json"),
    ),
    (
        "plugin/.claude-plugin/plugin.json",
        include_bytes!("../plugin/.claude-plugin/plugin.json"),
    ),
    ("plugin/.mcp.json", include_bytes!("../plugin/.mcp.json")),
    ("plugin/LICENSE", include_bytes!("../plugin/LICENSE")),
    ("plugin/README.md", include_bytes!("../plugin/README.md")),
    (
        "plugin/hooks/hooks.json",
        include_bytes!("../plugin/hooks/hooks.json"),
    ),
    (
        "plugin/playbook.md",
        include_bytes!("../plugin/playbook.md"),
    ),
    (
        "plugin/skills/dream/SKILL.md",
        include_bytes!("../plugin/skills/dream/SKILL.md"),
    ),
    (
        "plugin/skills/fresh-window/SKILL.md",
        include_bytes!("../plugin/skills/fresh-window/SKILL.md"),
    ),
    (
        "plugin/skills/memory/SKILL.md",
        include_bytes!("../plugin/skills/memory/SKILL.md"),
    ),
    (
        "mod/.claude-plugin/plugin.json",
        include_bytes!("../mod/.claude-plugin/plugin.json"),
    ),
    (
        "mod/hooks/hooks.json",
        include_bytes!("../mod/hooks/hooks.json"),
    ),
    (
        "mod/hooks/register.ts",
        include_bytes!("../mod/hooks/register.ts"),
    ),
    (
        "mod/tests/register.test.ts",
        include_bytes!("../mod/tests/register.test.ts"),
    ),
];

/// Where the binary is placed, in each plugin.
pub const BINARIES: [&str; 2] = ["plugin/bin/notesoup", "mod/bin/notesoup"];

/// The default place: `${XDG_DATA_HOME:-~/.local/share}/notesoup/claude-marketplace`.
pub fn default_dir(env: &HostEnv, xdg_data_home: Option<PathBuf>) -> Option<PathBuf> {
    let data = xdg_data_home
        .filter(|dir| dir.is_absolute())
        .or_else(|| Some(env.home.as_ref()?.join(".local/share")))?;
    Some(data.join("notesoup").join("claude-marketplace"))
}

/// Writes the marketplace under `dir` with `binary` as each plugin's
/// `bin/notesoup`, through core's installer: each file replaced through a
/// new temporary name (a running server keeps the binary it started with,
/// and a link planted at a file is replaced, never written through), and a
/// folder holding files notesoup did not write refused unless `force`.
pub fn install(dir: &Path, binary: &Path, force: bool) -> Result<(), InstallError> {
    let exe = std::fs::read(binary).map_err(|source| InstallError::Io {
        action: "reading",
        path: binary.to_path_buf(),
        source,
    })?;
    let files: Vec<InstallFile<'_>> = FILES
        .iter()
        .map(|&(path, bytes)| InstallFile {
            path,
            bytes,
            executable: false,
        })
        .chain(BINARIES.iter().map(|&path| InstallFile {
            path,
            bytes: &exe,
            executable: true,
        }))
        .collect();
    InstallFile::install(dir, &files, force)
}
