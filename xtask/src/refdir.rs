//! Where the reference hosts live: `${NOTESOUP_REF_DIR:-$HOME/.cache/notesoup-ref}`.

use std::path::PathBuf;

use anyhow::{Context, Result};

/// The folder every reference-host installer (Pi SDK, Claude Code, the
/// Python MCP SDK, dsh) installs under; an empty variable counts as unset.
pub fn reference_dir() -> Result<PathBuf> {
    let nonempty = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(dir) = nonempty("NOTESOUP_REF_DIR") {
        return Ok(PathBuf::from(dir));
    }
    let home = nonempty("HOME").context(
        "neither NOTESOUP_REF_DIR nor HOME is set; set NOTESOUP_REF_DIR to choose where reference hosts go",
    )?;
    Ok(PathBuf::from(home).join(".cache").join("notesoup-ref"))
}
