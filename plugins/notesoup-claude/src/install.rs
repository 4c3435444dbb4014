//! `notesoup install-plugin [--dir DIR]`: lays out the Claude Code
//! marketplace (the plugin and the optional reset mod, each with this very
//! binary in its `bin/`) in a stable place, so an install does not depend
//! on a build directory that `cargo clean` removes. The plugin files are
//! embedded in the binary; a test keeps them equal to the repository's.

use std::io;
use std::path::{Path, PathBuf};

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
/// `bin/notesoup`. Files are replaced through a temporary name, so a
/// running server keeps the binary it started with.
pub fn install(dir: &Path, binary: &Path) -> io::Result<()> {
    for (path, bytes) in FILES {
        write_replacing(&dir.join(path), bytes, false)?;
    }
    let exe = std::fs::read(binary)?;
    for path in BINARIES {
        write_replacing(&dir.join(path), &exe, true)?;
    }
    Ok(())
}

fn write_replacing(path: &Path, bytes: &[u8], executable: bool) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let parent = path
        .parent()
        .ok_or_else(|| io::Error::other("a marketplace file has no parent"))?;
    std::fs::create_dir_all(parent)?;
    let temp = parent.join(format!(".notesoup-install-{}.tmp", std::process::id()));
    std::fs::write(&temp, bytes)?;
    let mode = if executable { 0o755 } else { 0o644 };
    std::fs::set_permissions(&temp, std::fs::Permissions::from_mode(mode))?;
    std::fs::rename(&temp, path)
}
