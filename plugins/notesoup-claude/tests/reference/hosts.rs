//! The installed reference hosts: Claude Code, the Python MCP SDK and the
//! MCP Inspector.
//!
//! `cargo xtask claude-hosts` installs them and prints the variables to set;
//! without the variables the default install location is used when it
//! exists. A missing host fails the test with the command that installs it.

use std::path::PathBuf;

/// Pinned with the installer (`xtask/src/claude_hosts.rs`).
const CLAUDE_CODE_VERSION: &str = "2.1.332";
const MCP_PY_VERSION: &str = "2.3.0";
const INSPECTOR_VERSION: &str = "2.12.0";

const INSTALL: &str = "install the reference hosts with `eval \"$(cargo xtask claude-hosts)\"` (it sets NOTESOUP_CLAUDE, NOTESOUP_MCP_PYTHON and NOTESOUP_MCP_INSPECTOR)";

fn reference_dir() -> Option<PathBuf> {
    match std::env::var_os("NOTESOUP_REF_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => Some(PathBuf::from(dir)),
        None => Some(PathBuf::from(std::env::var_os("HOME")?).join(".cache/notesoup-ref")),
    }
}

/// The host at `$var`, or else at `<reference dir>/<install>/<inside>`.
fn find(var: &str, install: &str, inside: &str, what: &str) -> PathBuf {
    let default = reference_dir().map(|d| d.join(install).join(inside));
    if let Some(path) = std::env::var_os(var).filter(|p| !p.is_empty()) {
        let path = PathBuf::from(path);
        assert!(
            path.exists(),
            "{var}={} does not exist; {INSTALL}",
            path.display()
        );
        return path;
    }
    match default.filter(|p| p.exists()) {
        Some(path) => path,
        None => panic!("{what} is not installed and {var} is not set; {INSTALL}"),
    }
}

/// The `claude` launcher of Claude Code 2.1.332.
pub fn claude() -> PathBuf {
    find(
        "NOTESOUP_CLAUDE",
        &format!("claude-code-{CLAUDE_CODE_VERSION}"),
        "node_modules/.bin/claude",
        &format!("Claude Code {CLAUDE_CODE_VERSION}"),
    )
}

/// A Python interpreter that can `import mcp` (2.3.0).
pub fn mcp_python() -> PathBuf {
    find(
        "NOTESOUP_MCP_PYTHON",
        &format!("mcp-py-{MCP_PY_VERSION}"),
        "bin/python",
        &format!("the Python MCP SDK {MCP_PY_VERSION}"),
    )
}

/// The `mcp-inspector` launcher of the MCP Inspector 2.12.0.
pub fn mcp_inspector() -> PathBuf {
    find(
        "NOTESOUP_MCP_INSPECTOR",
        &format!("mcp-inspector-{INSPECTOR_VERSION}"),
        "node_modules/.bin/mcp-inspector",
        &format!("the MCP Inspector {INSPECTOR_VERSION}"),
    )
}

/// The interactive terminal test types into Claude Code's prompt after it
/// has started; other Claude Code processes starting alongside it on a small
/// machine can delay the prompt past that point. It runs alone: it takes
/// this lock for writing, every other reference test for reading.
static TERMINAL: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// Held by tests that may run alongside each other.
pub fn shared() -> std::sync::RwLockReadGuard<'static, ()> {
    TERMINAL
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Held by the one test that must run alone.
pub fn exclusive() -> std::sync::RwLockWriteGuard<'static, ()> {
    TERMINAL
        .write()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
